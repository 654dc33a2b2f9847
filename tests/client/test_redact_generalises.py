"""Secrets in shapes nobody tuned the rules to: default OpenSSH keys, passwords holding words or
shell characters, provider tokens in URLs and CLI flags, structured files (Kubernetes Secrets).

Like test_redact_leaks.py, each test plants a generated secret the way it reaches a transcript and
checks that no copy survives, that every line is still JSON, and that placeholders stay as they are.
"""

from __future__ import annotations

import base64
import json
import random
import string
import uuid

import pytest

from sessionledger.core.redaction.examples import random_chars
from tests.client.test_redact_leaks import PATH, REDACTOR, assert_gone, bash, numbered, prompt, read_result, redact
from tests.client.transcript_builder import TranscriptBuilder

RNG = random.Random(41)
ALNUM = string.ascii_letters + string.digits


def rand(n: int, alphabet: str = ALNUM) -> str:
    return random_chars(RNG, alphabet, n)


def openssh_key() -> str:
    """What `ssh-keygen -t ed25519 -N ''` writes: the unencrypted header is full of `AAAA` runs."""
    header = b"openssh-key-v1\0\0\0\0\x04none\0\0\0\x04none\0\0\0\0\0\0\0\x01\0\0\0\x33\0\0\0\x0bssh-ed25519\0\0\0 "
    body = base64.b64encode(header + RNG.randbytes(300)).decode()
    lines = [body[i : i + 70] for i in range(0, len(body), 70)]
    return "\n".join(["-----BEGIN OPENSSH PRIVATE KEY-----", *lines, "-----END OPENSSH PRIVATE KEY-----"])


# --- vetoes apply to whole placeholders only ---------------------------------------------------


def test_unencrypted_openssh_key_is_redacted() -> None:
    key = openssh_key()
    assert_gone(read_result(f"# id_ed25519\n{key}\n"), key, kind="private_key")


@pytest.mark.parametrize(
    "secret",
    [
        lambda: "SampleTeam#2024",
        lambda: "example" + rand(20),
        lambda: "FakeNews" + rand(6) + "!",
        lambda: "$" + rand(20),
    ],
    ids=["sample", "example-prefix", "fake", "dollar-start"],
)
def test_password_holding_a_placeholder_word_is_redacted(secret: object) -> None:
    value = secret()  # type: ignore[operator]
    assert_gone(read_result(f"APP=shop\nDB_PASSWORD={value}\nLOG_LEVEL=info"), value, kind="password")


@pytest.mark.parametrize(
    "template",
    ["DB_PASSWORD={}", "  password: {}", "the password for prod is {}", "log in as admin with the password {}!"],
    ids=["env", "yaml", "prose", "prose-no-connector"],
)
@pytest.mark.parametrize("words", [("Sunny", "Day"), ("Blue", "Harbor", "Lane")], ids=["two-words", "three-words"])
def test_a_passphrase_of_capitalised_words_and_a_digit_is_a_password(template: str, words: tuple[str, ...]) -> None:
    # docs/redaction.md: code names things in one case per word run; a passphrase capitalises its words
    value = "-".join(words) + f"-{RNG.randrange(10, 10_000)}"
    assert_gone(prompt(template.format(value)), value, kind="password")


@pytest.mark.parametrize(
    "template",
    ["DB_PASSWORD={}", "REACT_APP_AUTH_PASSWORD={}", '{{"user": "app", "password": "{}"}}', "$password = '{}';"],
    ids=["env", "env-prefixed", "json", "php"],
)
@pytest.mark.parametrize("value", ["whiteduke", "goodspec", "bluemoonriver"])
def test_a_word_someone_picked_is_a_password_where_it_is_assigned(template: str, value: str) -> None:
    """An upper-case password name's `=` or a quoted value says what the word is; leaving a real
    password costs more than masking a made-up one (docs/redaction.md)."""
    assert_gone(read_result(template.format(value)), value, kind="password")


@pytest.mark.parametrize(
    "line",
    [
        "password = user-profile-v2",
        "password: Content-Type",
        "PASSWORD_FORM = Password-Reset-Form",
        # a state word, and a bare word where code and prose write one
        "PASSWORD=required",
        "password: 'hidden'",
        "PASSWORD=encrypted",
        "password = whiteduke",
        "Single pass: characters",
    ],
)
def test_a_name_or_word_under_a_password_name_that_is_no_password_is_left(line: str) -> None:
    data = read_result(f"# settings\n{line}\n")
    assert redact(data).data == data


@pytest.mark.parametrize(
    "line",
    [
        "DB_PASSWORD=<your-password>",
        "API_TOKEN=${API_TOKEN}",
        "DB_PASSWORD=$DB_PASSWORD",
        "DB_PASSWORD=changeme",
        "API_TOKEN=xxxxxxxxxxxxxxxxxxxx",
        "API_TOKEN=your_api_token_here",
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "url = postgres://app:${DB_PASSWORD}@db:5432/app",
    ],
)
def test_whole_placeholder_is_left_alone(line: str) -> None:
    data = read_result(f"# settings\n{line}\n")
    assert redact(data).data == data


# --- equivalent encodings --------------------------------------------------------------------------


def test_password_in_json_unicode_escapes_is_redacted() -> None:
    plain = rand(24)
    escaped = "".join(f"\\u{ord(c):04x}" if i % 3 == 0 else c for i, c in enumerate(plain))
    result = assert_gone(bash("cat config.json", f'{{"api_token": "{escaped}"}}'), escaped)
    assert plain[1:3] + "\\\\u" not in result.data.decode()
    assert b"cat config.json" in result.data


def test_slack_webhook_with_escaped_slashes_is_redacted() -> None:
    secret = rand(24)
    hook = f"T{rand(10, string.ascii_uppercase + string.digits)}\\/B{rand(10)}\\/{secret}"
    output = f'{{"ok":true,"url":"https:\\/\\/hooks.slack.com\\/services\\/{hook}"}}'
    result = assert_gone(bash("gh api repos/acme/app/hooks", output), secret, kind="slack_webhook")
    assert b"hooks.slack.com" in result.data


def test_percent_encoded_url_password_is_redacted() -> None:
    secret = rand(8) + "%40" + rand(8)
    assert_gone(prompt(f"DATABASE_URL=postgres://app:{secret}@db.internal:5432/app"), secret, kind="url_password")


def test_html_entity_in_a_password_is_redacted() -> None:
    secret = rand(10) + "&amp;" + rand(6)
    assert_gone(prompt(f'<input type="password" name="password" value="{secret}">'), secret)


def test_escape_without_a_secret_leaves_the_line_alone() -> None:
    data = bash("curl 'https://x.io/a%20b?q=caf%C3%A9'", '{"path":"a\\/b","name":"\\u0041lice"}')
    assert redact(data).data == data


# --- provider formats and contexts ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        (
            lambda: f"curl https://api.telegram.org/bot{{}}/getMe|{RNG.randrange(10**8, 10**10)}:AA{rand(33)}",
            "telegram",
        ),
        (lambda: "AZURE_DEVOPS_EXT_PAT={}|" + rand(45, string.ascii_lowercase) + "2345672", "azure_devops"),
        (lambda: "vault login {}|s." + rand(24), "vault"),
        (lambda: "BUNDLE_GEMS__CONTRIBSYS__COM=user:{}|" + rand(24), "registry"),
        (lambda: "token {}|ya29." + rand(30, string.ascii_lowercase + string.digits) + rand(80), "google_oauth"),
        (lambda: "sqlcmd -S db -U sa -P {} -Q 'select 1'|" + rand(12) + "!", "password"),
        (lambda: "redis-cli -h cache -a {} ping|" + rand(12) + "!", "password"),
        (lambda: "mysqlsh --uri root:{}@db.internal:3306|" + rand(12) + "!", "password"),
        (lambda: "curl -H 'X-Auth-Token: {}' https://api.internal|" + rand(16, "0123456789abcdef"), "generic_secret"),
        (lambda: "set SESSION_SECRET to {} in staging|" + rand(24), "generic_secret"),
    ],
    ids=[
        "telegram-url",
        "azure-devops",
        "vault-legacy",
        "bundler",
        "ya29-late-caps",
        "sqlcmd",
        "redis-cli",
        "mysqlsh-uri",
        "hex-auth-header",
        "prose-set-to",
    ],
)
def test_provider_format_or_context_is_redacted(make: object, kind: str) -> None:
    template, secret = make().split("|")  # type: ignore[operator]
    assert_gone(bash(template.format(secret)), secret, kind=kind)


def test_kubernetes_secret_data_values_are_redacted() -> None:
    values = [base64.b64encode(rand(24).encode()).decode() for _ in range(3)]
    manifest = (
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\n  namespace: production\ntype: Opaque\ndata:\n"
        f"  api-token: {values[0]}\n  webhook: {values[1]}\n  .dockerconfigjson: {values[2]}\n"
    )
    result = assert_gone(read_result(manifest), *values, kind="k8s_secret")
    assert b"namespace: production" in result.data


def test_every_kubernetes_secret_string_data_value_is_redacted() -> None:
    values = [rand(17) + "!", rand(13) + "#" + rand(5), rand(21)]  # plain text, not base64
    manifest = (
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\nstringData:\n"
        f"  connection: {values[0]}\n  region: eu\n  upstream: '{values[1]}'\n  signing: \"{values[2]}\"\n"
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: frontend-settings\n"
    )
    result = assert_gone(read_result(manifest), *values, kind="k8s_secret")
    assert b"region: eu" in result.data and b"name: frontend-settings" in result.data


def test_quoted_password_holding_braces_is_redacted() -> None:
    secret = rand(5) + "{" + rand(4) + "}" + rand(5)
    assert_gone(read_result(f'APP=shop\nDB_PASSWORD="{secret}"\n'), secret, kind="password")


@pytest.mark.parametrize(("outer", "inner"), [('"', "'"), ('"', "`"), ("'", '"'), ("'", "`")])
def test_quoted_secret_holding_the_other_quotes_is_redacted(outer: str, inner: str) -> None:
    """A generated secret draws from every symbol: the quotes it is not written in are its own."""
    secret = rand(3) + inner + rand(2) + "}/" + rand(4) + inner + rand(6)
    assert_gone(read_result(f"oauth:\n  jwtsecret: {outer}{secret}{outer}\n"), secret)


# --- backslashes, quotes and folded lines inside a value ------------------------------------------


def test_password_holding_an_escaped_quote_is_cut_nowhere() -> None:
    head, tail = rand(6), rand(8)
    result = assert_gone(bash("cat settings.py", f'password = "{head}\\"{tail}"'), kind="password")
    assert head.encode() not in result.data and tail.encode() not in result.data


@pytest.mark.parametrize("template", ['password = "{}"', 'const apiToken = "{}";'], ids=["password", "token"])
def test_escaped_quote_inside_a_value_in_a_plain_file_is_cut_nowhere(template: str) -> None:
    head, tail = rand(6), rand(12)
    text = 'print("done \\"ok\\"")\n' + template.format(f'{head}\\"{tail}') + "\n"
    result = REDACTOR.redact_plain(text.encode())
    assert head.encode() not in result.data and tail.encode() not in result.data
    assert result.data.startswith(b'print("done \\"ok\\"")\n') and result.changed_lines == [1]


def test_cli_password_holding_a_backslash_and_dollar_is_cut_nowhere() -> None:
    head, tail = rand(6), rand(6) + "$" + rand(3)
    result = assert_gone(bash(f"mysql -u root --password='{head}\\{tail}' app"), kind="password")
    assert head.encode() not in result.data and tail.encode() not in result.data


def test_bash_ansi_c_quoted_password_is_redacted() -> None:
    secret = rand(16)
    result = assert_gone(bash(f"export DB_PASSWORD=$'{secret}\\n'"), secret, kind="password")
    assert b"export DB_PASSWORD=$'" in result.data


@pytest.mark.parametrize("place", [lambda t: bash("cat .gitlab-ci.yml", t), read_result], ids=["bash", "read"])
def test_token_folded_over_two_yaml_lines_is_redacted(place: object) -> None:
    token = "glpat-" + rand(20)
    data = place(f'ci:\n  token: "{token[:14]}\\\n    {token[14:]}"\n  stage: build')  # type: ignore[operator]
    result = assert_gone(data, token[:14], token[14:], kind="gitlab")
    assert b"stage: build" in result.data


def test_token_folded_over_two_lines_in_an_edit_result_is_redacted() -> None:
    """The Edit result's hunk holds each half in its own string; the first half alone looks like a
    generic value, and its second half must go with it."""
    token = "glpat-" + rand(20)
    text = f'ci:\n  token: "{token[:14]}\\\n    {token[14:]}"\n  stage: build'
    hunk = [
        {
            "oldStart": 1,
            "oldLines": 1,
            "newStart": 1,
            "newLines": 4,
            "lines": ["-x", *("+" + x for x in text.split("\n"))],
        }
    ]
    tool_use_result = {"filePath": PATH, "oldString": "x", "newString": text, "structuredPatch": hunk}
    edit = {"file_path": PATH, "old_string": "x", "new_string": text}
    data = TranscriptBuilder().tool_call("Edit", edit, result=numbered(text), tool_use_result=tool_use_result).build()
    result = assert_gone(data, token[:14], token[14:])
    lines = json.loads(result.data.splitlines()[1])["toolUseResult"]["structuredPatch"][0]["lines"]
    assert len(lines) == 5 and lines[-1] == "+  stage: build"


def test_json_private_key_string_is_no_quoted_password() -> None:
    body = base64.b64encode(RNG.randbytes(120)).decode()
    document = f'{{"private_key": "-----BEGIN PRIVATE KEY-----\\n{body}\\n-----END PRIVATE KEY-----\\n"}}'
    result = assert_gone(bash("cat sa.json", document), body, kind="private_key")
    assert "generic_secret" not in result.counts


def test_shell_continuation_without_a_secret_leaves_the_line_alone() -> None:
    data = bash("docker run \\\n    --rm -it \\\n    ghcr.io/acme/app:latest")
    assert redact(data).data == data


@pytest.mark.parametrize(
    "shape",
    ["echo {} | base64 -d > .env", "ENV_FILE_B64={}", "DOTENV={}", "env_file: {}"],
    ids=["piped", "named", "any-name", "yaml"],
)
def test_base64_encoded_env_file_is_redacted_whole(shape: str) -> None:
    env = f"DB_PASSWORD={rand(10)}!{rand(3)}\nSTRIPE_KEY=sk_live_{rand(24)}\nLOG_LEVEL=info\n"
    blob = base64.b64encode(env.encode()).decode()
    result = assert_gone(bash(shape.format(blob)), blob)
    assert shape.split("{}")[0].encode() in result.data


def test_base64_config_without_a_secret_is_left_alone() -> None:
    blob = base64.b64encode(b"LOG_LEVEL=info\nPORT=8080\nREGION=eu-west-1\nFEATURES=search,export\n").decode()
    data = bash(f"APP_CONFIG={blob}")
    assert redact(data).data == data


def test_base64_image_near_its_name_is_left_alone() -> None:
    image = base64.b64encode(bytes(range(256)) * 4).decode()
    data = read_result(f'<img src="data:image/png;base64,{image}">\n')
    assert redact(data).data == data


# --- structure, provider names and known prefixes in any context ---------------------------------


def _b64url_json(obj: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")


def _jwts() -> list[str]:
    two_parts = f"{_b64url_json({'typ': 'JWT', 'alg': 'HS256'})}.{_b64url_json({'name': 'Joe', 'status': 'staff'})}"
    unsigned = f"{_b64url_json({'alg': 'none'})}.{_b64url_json({'sub': 'user-42', 'admin': True})}."
    opaque = f"{_b64url_json({'alg': 'PS384', 'typ': 'JWT', 'kid': 'Lx1F'})}.{rand(60, ALNUM)}.{rand(43, ALNUM)}"
    return [two_parts, unsigned, opaque]


@pytest.mark.parametrize("token", _jwts(), ids=["two-parts", "unsigned", "opaque-payload"])
def test_jwt_is_found_by_its_header_whatever_follows(token: str) -> None:
    assert_gone(prompt(f"the session cookie was {token} when it failed"), token.rstrip("."), kind="jwt")


def test_jwt_on_a_written_files_patch_line_goes_whole() -> None:
    """A patch line's `+` is no token start, so a rule may find only the payload there (it holds
    `typ` too); the copy of the whole token recognised in the Write input replaces it."""
    payload = _b64url_json({"typ": "Bearer", "sub": "svc-7", "azp": "tokendelme"})
    token = f"{_b64url_json({'alg': 'PS384', 'typ': 'JWT'})}.{payload}.{rand(86, ALNUM + '-_')}"
    patch = [{"oldStart": 1, "oldLines": 0, "newStart": 1, "newLines": 1, "lines": [f"+{token}"]}]
    data = (
        TranscriptBuilder()
        .tool_call(
            "Write",
            {"file_path": "/w/token.txt", "content": token},
            result="File created successfully at: /w/token.txt",
            tool_use_result={"type": "create", "filePath": "/w/token.txt", "content": token, "structuredPatch": patch},
        )
        .build()
    )
    assert_gone(data, token, kind="jwt")


def test_base64url_json_without_alg_or_typ_is_no_jwt() -> None:
    text = f"cursor {_b64url_json({'page': 2, 'size': 50})}.{_b64url_json({'after': 'row-381'})} for the next call"
    assert redact(prompt(text)).data == prompt(text)


@pytest.mark.parametrize(
    "template",
    [
        "the {provider} token they gave us is {value}, please rotate it",
        "{PROVIDER}_SECRET={value}",
        '{provider}_api_token = "{value}"',
    ],
    ids=["prose", "env", "code"],
)
@pytest.mark.parametrize(
    ("provider", "value"),
    [("asana", "digits16"), ("discord", "digits18"), ("dropbox", "lowalnum15"), ("sendbird", "hex40")],
)
def test_provider_name_vouches_for_a_short_or_digit_only_token(template: str, provider: str, value: str) -> None:
    alphabet, n = {
        "digits16": (string.digits, 16),
        "digits18": (string.digits, 18),
        "lowalnum15": (string.ascii_lowercase + string.digits, 14),
        "hex40": ("0123456789abcdef", 40),
    }[value]
    secret = rand(n - 1, alphabet) + "7"
    text = template.format(provider=provider, PROVIDER=provider.upper(), value=secret)
    assert_gone(prompt(text), secret, kind="generic_secret")


@pytest.mark.parametrize(
    "text",
    [
        "the build key is 20260129120000 for the nightly",
        "the token of commit 3f786850e387550fdab836ed7e6dc881de23001b was reverted",
        "cache key 1706745600123456 expired",
    ],
)
def test_digits_or_a_git_sha_without_a_provider_name_are_left_alone(text: str) -> None:
    assert redact(prompt(text)).data == prompt(text)


@pytest.mark.parametrize(
    "make",
    [
        lambda: "sgp_" + rand(40, "0123456789abcdef"),
        lambda: "npm_" + rand(36, string.ascii_lowercase + string.digits),
        lambda: "hvs." + rand(95, ALNUM),
        lambda: "sdk-" + "-".join(rand(n, string.ascii_lowercase + string.digits) for n in (8, 4, 4, 4, 12)),
    ],
    ids=["sourcegraph", "npm", "vault", "launchdarkly-alnum"],
)
def test_known_prefix_at_its_length_is_redacted_in_prose(make: object) -> None:
    token = make()  # type: ignore[operator]
    assert_gone(prompt(f"I pasted {token} into the chat by mistake"), token)


def test_a_key_line_above_a_secret_line_keeps_its_own_value() -> None:
    first, second = "endr+" + rand(16), "endr+" + rand(16)
    text = f"endorlabs_key = '{first}'\nendorlabs_secret = '{second}'"
    assert_gone(read_result(text), first, second)


def test_long_token_after_a_credential_word_is_redacted() -> None:
    token = "yb" + rand(300, ALNUM + "+/=")
    assert_gone(bash("tail app.log", f"[DEBUG] Using Key = {token}\n[INFO] done"), token)


@pytest.mark.parametrize(
    "make",
    [
        lambda: "shippo_live_" + "a" * 40,
        lambda: "shippo_test_" + "0123456789abcdef" * 2 + "abcdef01",
        lambda: "npm_" + "abcdefghijklmnopqrstuvwxyz" + "0123456789",
    ],
    ids=["repeated-letter", "made-up-hex", "alphabet-run"],
)
def test_known_prefix_with_a_made_up_body_is_redacted(make: object) -> None:
    # docs/redaction.md: a known prefix at the provider's length is a secret whatever its body looks like
    token = make()  # type: ignore[operator]
    assert_gone(bash("tail app.log", f"[DEBUG] token={token}\n[INFO] done"), token)


@pytest.mark.parametrize(
    "token",
    [
        "AKIAXXXXXXXXXXXXXXXX",
        "glc_111111111111111111111111111111111111111111=",
        "AKCxxxxxxxxxx",
        "ACxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "sk-lf-00000000-0000-0000-0000-000000000000",
        "spu-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    ],
    ids=["upper-x-body", "digit-filler", "artifactory-x-body", "twilio-x-body", "zero-uuid-body", "one-letter-body"],
)
def test_known_prefix_with_a_filler_body_is_redacted(token: str) -> None:
    # docs/redaction.md: only a whole template is vetoed; a provider prefix makes a value no template
    assert_gone(bash("tail app.log", f"[DEBUG] API_KEY={token}\n[INFO] done"), token)


@pytest.mark.parametrize(
    "text",
    [
        "export GITHUB_TOKEN=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "the key looks like sk_live_****************************4242",
        "API_KEY=<your-api-key>",
        "see APDeveloperGuide and APEXCharts, APAC2024 results",
    ],
    ids=["whole-x-filler", "display-mask", "template", "ap-words"],
)
def test_whole_filler_mask_or_template_is_left_alone(text: str) -> None:
    assert redact(prompt(text)).data == prompt(text)


@pytest.mark.parametrize(
    ("credential", "benign"),
    [
        ('solarwindsKey := "{value}"', 'cacheKey := "{value}"'),
        ("bitfinexSecret = '{value}'", 'const publicKey = "{value}"'),
        ('bannerBearToken := "Bearer {value}"', 'nextPageToken = "{value}"'),
    ],
    ids=["go-key", "python-secret", "bearer-in-literal"],
)
def test_camel_case_credential_word_is_a_credential_word(credential: str, benign: str) -> None:
    # docs/redaction.md: the last word of a camelCase name counts, not `publicKey`, `cacheKey`, `nextPageToken`
    value = rand(40) + "7"
    assert_gone(read_result(credential.format(value=value)), value)
    assert redact(prompt(benign.format(value=value))).data == prompt(benign.format(value=value))


# --- a random value assigned to any name -----------------------------------------------------------


@pytest.mark.parametrize(
    "template",
    ['apiMetrics := "{}"', "SHEET_ID = '{}'", "export DEPLOY_HOOK={}", 'client = Client(app="{}")'],
    ids=["go", "python", "env", "argument"],
)
def test_random_value_assigned_to_any_name_is_redacted(template: str) -> None:
    secret = rand(12, string.ascii_lowercase) + rand(8, string.digits) + rand(12, string.ascii_uppercase)
    secret = "".join(RNG.sample(secret, len(secret)))
    assert_gone(read_result(template.format(secret) + "\n"), secret, kind="generic_secret")


@pytest.mark.parametrize(
    "line",
    [
        'EXPECTED_SHA = "3f786850e387550fdab836ed7e6dc881de23001b"',  # a hex digest
        'integrity="sha512-3zG9v0Q8Vt0wX2Y1Z4b5c6d7e8f9g0h1i2j3k4l5m6"',  # a lock file's hash
        "job_id = '5d1c0c8e-3f6a-4b7e-9a51-2b8f0d4c6e17'",  # a UUID under a plain name
        "stream=9b0ac37f-d19e-4254-9079-f47e9a389eEX",  # an id built on a UUID
        "const keyStr = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'",  # an alphabet
        "var n = _sliceInstanceProperty2(_context9)",  # a call
        "layout = src/components/UserProfile2/index.tsx",  # a path
        'public_key = "9Cnzj4p4WGeKLs1Pt8QuKUpRKfFLfRYC9AIKjbJTWit"',  # a public key
        "https://example.com/?utm_id=AbCdEf0123456789GhIjKl",  # a query parameter
    ],
    ids=["hex-digest", "integrity", "uuid", "uuid-id", "alphabet", "call", "path", "public-key", "query"],
)
def test_assigned_value_of_no_credential_shape_is_left_alone(line: str) -> None:
    data = read_result(f"# settings\n{line}\n")
    assert redact(data).data == data


@pytest.mark.parametrize(
    "line",
    [
        'apiMetrics := "{value}"',
        "token is {value}",
    ],
    ids=["go-assignment", "prose-token"],
)
def test_a_line_after_a_json_newline_is_searched_like_the_first(line: str) -> None:
    # in a transcript a line starts after the two bytes `\n`: the `n` is no letter of the name
    value = rand(32) + "7"
    text = "use this and retry:\nfunc x() {\n" + line.format(value=value) + "\n}"
    assert_gone(prompt(text), value)


@pytest.mark.parametrize(
    "text",
    ["DB_PASSWORD={pw}", "  password: {pw}\n  host: db"],
    ids=["env", "yaml"],
)
def test_a_password_holding_an_ampersand_is_redacted_whole(text: str) -> None:
    pw = "Tr0ub4dor&3x" + rand(4)
    assert pw[9:].encode() not in redact(prompt(text.format(pw=pw))).data


def test_an_ampersand_that_starts_a_query_parameter_ends_the_password() -> None:
    text = "GET https://x.io/login?password=Tr0ub4dor3x&user=bobby-tables"
    assert b"user=bobby-tables" in redact(prompt(text)).data


def test_a_jenkins_credentials_secret_in_braces_is_redacted() -> None:
    value = rand(30) + "%" + rand(4)  # the whole value goes, not only its token-looking part
    text = (
        "<com.cloudbees.plugins.credentials.impl.StringCredentialsImpl>\n<scope>GLOBAL</scope>\n"
        f"<secret>{{acme AQAAABAAA {value}}}</secret>\n</com.cloudbees.plugins.credentials.impl.StringCredentialsImpl>"
    )
    assert value[-5:].encode() not in redact(bash("cat credentials.xml", text)).data


def test_a_marker_does_not_spell_the_prefix_it_replaced() -> None:
    cookie = "_gitlab_session=" + rand(32, string.ascii_lowercase + string.digits)
    data = redact(prompt(f"the gitlab cookie is {cookie}, please rotate it")).data
    assert b"gitlab_session" not in data


@pytest.mark.parametrize(
    "text",
    [
        "export API_KEY={v}",
        'SECRET_KEY = "{v}"',
        "  access_token: {v}",
        "the api token is {v}, rotate it",
    ],
    ids=["env", "code", "yaml", "prose"],
)
@pytest.mark.parametrize(
    "value",
    [
        "1234567890abcdef1234",
        "abcdef1234567890abcdef",
        "test_key_1234567890abcdef",
        "EXAMPLEaccessTOKEN1234567890",
        "aBcDeFgHiJkLmNoPqRsTuVwX",
        "abcdefghijklmnopqrstuvwxyz0123456789",
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ",
        "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
    ],
    ids=[
        "digit-run-hex",
        "alphabet-run",
        "test-word",
        "example-word",
        "whole-alphabet-run",
        "letter-and-digit-runs",
        "alphabet-in-both-cases",
        "capital-alphabet",
    ],
)
def test_a_made_up_value_under_a_credential_name_is_redacted(text: str, value: str) -> None:
    # docs/redaction.md: an alphabet or digit run someone typed makes a value made up, not a name
    assert_gone(prompt(text.format(v=value)), value)


@pytest.mark.parametrize(
    "text",
    ['cache_key = "user_profile_settings_v2"', 'token = "your-token-here"', "API_KEY=release-2024-build"],
    ids=["identifier", "placeholder", "words-and-year"],
)
def test_a_name_or_placeholder_under_a_credential_name_is_left(text: str) -> None:
    assert redact(prompt(text)).data == prompt(text)


# --- a provider's name and no credential word ------------------------------------------------------


@pytest.mark.parametrize(
    "template",
    [
        "sourcegraph: {token}",
        'const client = new DropboxClient("{token}");',
        "the mapbox one we use in prod is {token}, rotate it",
        "[DEBUG] shopify {token}",
        'hs = HubSpotAPI("{uuid}")',
        "STRIPE = '{uuid}'",
        # names found at a `c`, with no `p`, `ke`, `auth` or `zure` in them
        "the slack one: {token}",
        "the launchdarkly one we use in prod is {token}",
        "databricks {token}",
        "cloudflare = '{uuid}'",
    ],
    ids=["yaml", "call", "prose", "log", "call-uuid", "assigned-uuid", "c-yaml", "c-prose", "c-log", "c-uuid"],
)
def test_a_token_after_a_provider_name_is_redacted(template: str) -> None:
    token = rand(30, string.ascii_lowercase + string.digits) + "7"
    uuid = "-".join(rand(n, "0123456789abcdef") for n in (8, 4, 4, 4, 12))
    secret = token if "{token}" in template else uuid
    assert_gone(prompt(template.format(token=token, uuid=uuid)), secret, kind="generic_secret")


@pytest.mark.parametrize(
    "text",
    [
        "the dropbox sync at 2024-10-25T21:34:56Z failed",
        "hubspot commit 3f786850e387550fdab836ed7e6dc881de23001b",
        "npm i mapbox-gl@3.972.10 and then node_modules/mapbox-gl/dist/mapbox-gl.js",
        "the stripe webhook for session 5d1c0c8e-3f6a-4b7e-9a51-2b8f0d4c6e17 is the id",
        "the openai client lives in src/integrations/openai/client_v2.py",
        "pip install dropbox==12.0.2 shopify_python_api==12.7.0",
        "slack thread https://example.slack.com/archives/C04ABCD1234/p1706745600123456",
        "npm i discord.js@14.14.1 then node_modules/discord.js/src/client/Client.js",
    ],
    ids=["timestamp", "git-sha", "version-path", "uuid-in-prose", "path", "pins", "c-link", "c-package"],
)
def test_a_provider_name_before_no_credential_is_left_alone(text: str) -> None:
    data = prompt(text)
    assert redact(data).data == data


def assert_left(text: str) -> None:
    """`text` in a prompt comes back byte-identical."""
    data = prompt(text)
    assert redact(data).data == data


# --- token shapes near a credential word -----------------------------------------------------------

LOWALNUM = string.ascii_lowercase + string.digits


@pytest.mark.parametrize(
    "template",
    ["FASTLY_SECRET={}", "the fastly token they gave us is {}, please rotate it", "api_key: {}"],
    ids=["env", "prose", "yaml"],
)
def test_a_token_starting_with_an_underscore_or_holding_equals_is_redacted(template: str) -> None:
    # docs/redaction.md: a token of a provider's own alphabet may start with `_` and hold `=`
    value = f"_{rand(3, string.ascii_lowercase)}={rand(8, LOWALNUM)}_{rand(5, LOWALNUM)}={rand(5, LOWALNUM)}7"
    assert_gone(prompt(template.format(value)), value, kind="generic_secret")


@pytest.mark.parametrize(
    "template",
    ["beeboleAuth := {}", 'headers = {{"X-Auth": "{}"}}', "auth: {}"],
    ids=["go-camel", "header-map", "yaml"],
)
def test_a_token_after_an_auth_word_is_redacted(template: str) -> None:
    value = rand(39, LOWALNUM) + "7"
    assert_gone(read_result(template.format(value) + "\n"), value, kind="generic_secret")


@pytest.mark.parametrize(
    "template",
    ['bannerBearToken := "Bearer {}"', 'headers = {{"X-Api-Key": "{}"}}', "SERVICE_SECRET={}"],
    ids=["bearer-in-literal", "header-map", "env"],
)
def test_a_letters_only_random_token_after_a_credential_word_is_redacted(template: str) -> None:
    value = "".join(RNG.sample(rand(12, string.ascii_lowercase) + rand(12, string.ascii_uppercase), 24))
    assert_gone(read_result(template.format(value) + "\n"), value, kind="generic_secret")


@pytest.mark.parametrize(
    "text",
    [
        "secret_key = _load_secret_key_v2()",  # a private call
        "token = getSecretFromEnvironmentConfig()",  # a camelCase name
        "the token responsibilities are listed under misconfiguration",  # long English words
        "the auth middleware lives at src/auth/v2/handler_v3.ts",  # a path after `auth`
        "OAuth author: Jane Doe <jane@example.com> 2024-10-25T21:34:56Z",  # not the word `auth`
    ],
    ids=["call", "camel", "english", "path", "oauth-author"],
)
def test_names_words_and_fillers_after_a_credential_word_are_left(text: str) -> None:
    assert_left(text)


# --- a signature at a fixed place names the provider -----------------------------------------------

B64 = string.ascii_letters + string.digits + "+/"


@pytest.mark.parametrize(
    ("make", "template"),
    [
        (lambda: rand(42, B64) + "+ACRB" + rand(5), "## Save pass:\n\n{}\n"),
        (lambda: rand(42, B64) + "+ACRA" + rand(5), '"secrets":[{{"name":"registry-password","value":"{}"}}]'),
        (lambda: rand(76, B64) + "ACDbC" + rand(5, B64) + "==", "the cosmos one is {}, rotate it"),
        (lambda: rand(33, B64) + "+AEhD" + rand(5, B64) + "=", "EVENTS={}"),
        (lambda: rand(44) + "AzFu" + rand(5) + "w==", "curl -H 'x-functions-key: {}' https://example.net"),
    ],
    ids=["acr-prose", "acr-json", "cosmos", "event-hubs", "function"],
)
def test_an_azure_key_with_its_service_signature_is_redacted(make: object, template: str) -> None:
    # docs/redaction.md: Azure's identifiable keys carry a signature at a fixed place
    value = make()  # type: ignore[operator]
    assert_gone(prompt(template.format(value)), value)


def test_a_signature_inside_a_longer_base64_blob_is_left() -> None:
    assert_left("blob: " + rand(60, B64) + "+ACRB" + rand(60, B64))


def test_a_dotted_entra_refresh_token_is_redacted_whole() -> None:
    value = f"1.A{rand(52, ALNUM + '_-')}.1.AgAB{rand(200, ALNUM + '_-')}"
    assert_gone(prompt(f"body: grant_type=refresh_token&refresh_token={value}"), value, kind="saas_token")


# --- credential words run together, short password words in prose ---------------------------------


@pytest.mark.parametrize(
    "template",
    ["apikey {}", "APIKEY: {}", "the accesstoken is {}", "clientsecret={}"],
    ids=["lower", "upper-yaml", "prose", "assigned"],
)
def test_a_compound_credential_word_in_one_case_is_a_credential_word(template: str) -> None:
    value = rand(24) + "7"
    assert_gone(prompt(template.format(value)), value, kind="generic_secret")


@pytest.mark.parametrize(
    "template",
    [
        '"kms_key_id": "{uuid}",',
        '"key_vault_name": "{lower}",',
        "apiKeyId: {token}",
        'publicToken = "{token}"',
        "PUBLIC_TOKEN={token}",
        "csrf-token={token}==",
    ],
    ids=["key-id-uuid", "key-name", "camel-key-id", "camel-public-token", "public-token", "csrf-token"],
)
def test_an_id_name_public_or_csrf_token_after_a_credential_word_is_left(template: str) -> None:
    # docs/redaction.md: a key's id or name is no secret, nor is a token meant to be public or a CSRF nonce
    token = rand(20, string.ascii_letters) + rand(4, string.digits) + rand(20)
    assert_left(
        template.format(
            uuid=str(uuid.UUID(int=RNG.getrandbits(128), version=4)),
            lower=rand(6, string.ascii_lowercase) + "21" + rand(6, string.ascii_lowercase) + "24021",
            token=token,
        )
    )


@pytest.mark.parametrize(
    "template",
    ["zonkaTOKEN {}", "acmeSECRET: {}", 'const fooKEY = "{}"'],
    ids=["prose", "yaml", "code"],
)
def test_an_upper_case_credential_word_after_a_lower_case_name_is_a_credential_word(template: str) -> None:
    # docs/redaction.md: a provider nobody listed, its name run together with the word in capitals
    value = rand(24) + "7"
    assert_gone(prompt(template.format(value)), value, kind="generic_secret")


@pytest.mark.parametrize(
    "text",
    ["publicapikey {}", "cachekey {}"],
    ids=["public", "cache"],
)
def test_a_compound_of_no_credential_word_is_left(text: str) -> None:
    assert_left(text.format(rand(24) + "7"))


def test_a_short_pass_word_in_prose_names_a_password() -> None:
    value = "Xk9#" + rand(8)
    assert_gone(prompt(f"the db pass is {value}, same as staging"), value, kind="password")
    assert_left("the second pass is significantly faster")


# --- a user and password passed to an auth call ----------------------------------------------------


@pytest.mark.parametrize(
    "template",
    [
        'requests.get(url, auth=("admin", "{}"))',
        'session.auth = HTTPBasicAuth("deploy", "{}")',
        'var cred = new NetworkCredential("svc", "{}", "CORP");',
        'client.authenticate("root", "{}")',
    ],
    ids=["requests-tuple", "basic-auth", "network-credential", "authenticate"],
)
def test_a_password_passed_with_its_user_to_an_auth_call_is_redacted(template: str) -> None:
    value = rand(10) + "9!"
    assert_gone(read_result(template.format(value) + "\n"), value, kind="password")


@pytest.mark.parametrize(
    "text",
    ['auth=("admin", "changeme")', 'authorize("read", "writeAll")', 'Credentials("user", "PasswordField")'],
    ids=["dummy", "not-a-credential", "identifier"],
)
def test_an_auth_call_without_a_password_is_left(text: str) -> None:
    assert_left(text)


def test_a_password_after_is_and_a_colon_in_prose_is_redacted() -> None:
    value = "Summer" + rand(4, string.digits) + "x"
    assert_gone(prompt(f"the password is: {value} for now"), value, kind="password")
    assert_left("the password is: required for login")


# --- a password piped into a command's stdin -------------------------------------------------------


@pytest.mark.parametrize(
    "template",
    [
        "echo '{}' | sudo -S apt-get update",
        "echo {} | docker login -u acme --password-stdin registry.example.com",
        'echo -n "{}" | podman login --password-stdin quay.io',
    ],
    ids=["sudo", "docker", "podman"],
)
def test_a_password_echoed_into_a_login_is_redacted(template: str) -> None:
    value = rand(10) + "#7"
    assert_gone(bash(template.format(value)), value, kind="password")


@pytest.mark.parametrize(
    "text",
    ['echo "$REGISTRY_PASSWORD" | docker login -u acme --password-stdin', "ls -S | head", "echo done | sudo -S true"],
    ids=["variable", "not-sudo", "word"],
)
def test_a_variable_or_word_piped_into_a_login_is_left(text: str) -> None:
    assert_left(text)


# --- password hashes ---------------------------------------------------------------------------------

CRYPT = "./" + string.digits + string.ascii_uppercase + string.ascii_lowercase


def _shadow_and_htpasswd() -> tuple[str, list[str]]:
    hashes = [
        f"$6${rand(16, CRYPT)}${rand(86, CRYPT)}",  # sha512-crypt
        f"$y$j9T${rand(22, CRYPT)}${rand(43, CRYPT)}",  # yescrypt, Debian's default
        f"$apr1${rand(8, CRYPT)}${rand(22, CRYPT)}",  # Apache htpasswd
        f"$2y$10${rand(53, CRYPT)}",  # bcrypt
    ]
    lines = [f"root:{hashes[0]}:19700:0:99999:7:::", f"deploy:{hashes[1]}:19701::::::"]
    return "\n".join([*lines, f"admin:{hashes[2]}", f"ci:{hashes[3]}"]), hashes


@pytest.mark.parametrize("place", [read_result, lambda text: bash("sudo cat /etc/shadow", text)], ids=["read", "bash"])
def test_password_hashes_in_shadow_and_htpasswd_files_are_redacted(place: object) -> None:
    # docs/redaction.md: a password hash is crackable where it is stored, so it goes like a password
    text, hashes = _shadow_and_htpasswd()
    result = assert_gone(place(text), *hashes, kind="password_hash")  # type: ignore[operator]
    assert b"root:[REDACTED:password_hash]:19700:0:99999:7:::" in result.data


def test_a_django_or_werkzeug_password_hash_is_redacted() -> None:
    django = f"pbkdf2_sha256$870000${rand(22)}${base64.b64encode(RNG.randbytes(32)).decode()}"
    werkzeug = f"scrypt:32768:8:1${rand(16)}${rand(128, '0123456789abcdef')}"
    assert_gone(prompt(f"the fixture user has password {django!r} and the flask one {werkzeug}"), django, werkzeug)


@pytest.mark.parametrize(
    "text",
    ["echo $2 $1 and $6", "costs $2b a year, $5 a seat", "the prefix $2b$12$ starts a bcrypt hash", "$6$rounds=5000$"],
    ids=["shell-arguments", "prices", "prefix-alone", "rounds-alone"],
)
def test_a_dollar_without_a_whole_hash_is_left(text: str) -> None:
    assert_left(text)


# --- a token or password before its word -----------------------------------------------------------


@pytest.mark.parametrize(
    "template",
    ["{} is the api key for staging", "please use `{}` as the token from now on", "ok so {} is our secret, keep it"],
    ids=["is-the-api-key", "as-the-token", "is-our-secret"],
)
@pytest.mark.parametrize("place", [prompt, read_result], ids=["prompt", "read"])
def test_a_token_named_right_after_it_is_redacted(template: str, place: object) -> None:
    # docs/redaction.md: `is`/`as`, an article and the credential word right after a token name it
    value = rand(28) + "7"
    assert_gone(place(template.format(value)), value, kind="generic_secret")  # type: ignore[operator]


@pytest.mark.parametrize(
    "template", ["{} is the password for the staging box", "try `{}` as your password"], ids=["is-the", "as-your"]
)
def test_a_password_named_right_after_it_is_redacted(template: str) -> None:
    value = "Xk9#" + rand(10)
    assert_gone(prompt(template.format(value)), value, kind="password")
    assert_left("something is the password field")


@pytest.mark.parametrize(
    "text",
    [
        "this is the key point of the design",
        "3f786850e387550fdab836ed7e6dc881de23001b is the commit the token came from",
        "{uuid} is the key of the row",
    ],
    ids=["english", "git-sha", "uuid"],
)
def test_a_word_or_an_id_before_a_credential_word_is_left(text: str) -> None:
    assert_left(text.format(uuid=uuid.UUID(int=RNG.getrandbits(128), version=4)))
