"""Regression tests, one per leak found by replaying real sessions with planted secrets (docs/redaction.md).

Each test plants a secret the way it really reaches a Claude Code transcript and checks that no
copy of it survives anywhere in the redacted bytes, that every line is still JSON, and that the
lines around it are untouched. Fake secrets are generated at run time (no literal in this file).
"""

from __future__ import annotations

import base64
import json
import random
import string
import uuid
from typing import Any

import pytest

from sessionledger.core.redaction import Redactor
from sessionledger.core.redaction.examples import random_chars
from tests.client.transcript_builder import TranscriptBuilder

RNG = random.Random(15)
ALNUM = string.ascii_letters + string.digits
REDACTOR = Redactor()
PATH = "/home/dev/app/config/settings.env"


def rand(n: int, alphabet: str = ALNUM) -> str:
    """Random, with an upper, a lower and a digit when the alphabet has them (as real keys do)."""
    return random_chars(RNG, alphabet, n)


def password() -> str:
    return rand(10) + "!" + str(RNG.randrange(10, 99))


def pem(label: str = "RSA PRIVATE KEY") -> str:
    body = [rand(64, ALNUM + "+/") for _ in range(8)] + [rand(40, ALNUM + "+/") + "=="]
    return "\n".join([f"-----BEGIN {label}-----", *body, f"-----END {label}-----"])


def numbered(text: str, start: int = 1) -> str:
    """Claude Code's Read rendering: a right-aligned line number, `→`, the line."""
    return "\n".join(f"{n:>6}→{line}" for n, line in enumerate(text.split("\n"), start))


def read_result(text: str, *, file_copy: bool = True) -> bytes:
    """A Read tool call: the numbered tool_result text plus (normally) toolUseResult.file.content."""
    n = text.count("\n") + 1
    file: dict[str, Any] = {"filePath": PATH}
    if file_copy:
        file["content"] = text  # Claude Code's key order: the engine scans the numbered copy only
    file |= {"numLines": n, "startLine": 1, "totalLines": n}
    return (
        TranscriptBuilder()
        .prompt("check the config")
        .tool_call("Read", {"file_path": PATH}, result=numbered(text), tool_use_result={"type": "text", "file": file})
        .assistant_text("Read it.")
        .build()
    )


def bash(command: str, output: str = "") -> bytes:
    return TranscriptBuilder().tool_call("Bash", {"command": command}, result=output).build()


def prompt(text: str) -> bytes:
    return TranscriptBuilder().prompt(text).build()


def redact(data: bytes) -> Any:
    result = REDACTOR.redact_bytes(data)
    for line in result.data.splitlines():
        json.loads(line)  # every line is still JSON
    assert len(result.data.splitlines()) == len(data.splitlines())
    return result


def assert_gone(data: bytes, *secrets: str, kind: str | None = None) -> Any:
    result = redact(data)
    for secret in secrets:
        for piece in secret.split("\n"):
            if len(piece) >= 8 and "-----" not in piece:
                assert piece.encode() not in result.data, piece
                assert json.dumps(piece)[1:-1].encode() not in result.data, piece
    if kind is not None:
        assert result.counts.get(kind, 0) >= 1, result.counts
    return result


def assert_kept(result: Any, *texts: str) -> None:
    """Each of `texts` is still in the redacted transcript, as its JSON string holds it."""
    for text in texts:
        assert json.dumps(text)[1:-1].encode() in result.data, text


# --- private keys --------------------------------------------------------------------------------


def test_leak_private_key_read_with_line_numbers() -> None:
    """`     5→MIIEvQ…` defeated the PEM rule; only toolUseResult.file.content was redacted."""
    key = pem()
    result = assert_gone(read_result(f"# deploy key\n{key}\n"), key, kind="private_key")
    content = json.loads(result.data.splitlines()[2])["message"]["content"][0]["content"]
    assert content.startswith("     1→# deploy key\n     2→[REDACTED:private_key]")


def test_leak_private_key_read_with_line_numbers_only() -> None:
    """The numbered copy alone (no file.content to learn the key from) is redacted too."""
    key = pem("OPENSSH PRIVATE KEY")
    assert_gone(read_result(key, file_copy=False), key, kind="private_key")


def test_leak_private_key_in_edit_structured_patch() -> None:
    """An Edit result splits the key across structuredPatch strings, one per line."""
    key = pem("EC PRIVATE KEY")
    lines = key.split("\n")
    patch = [
        {
            "oldStart": 1,
            "oldLines": 1,
            "newStart": 1,
            "newLines": 1 + len(lines),
            "lines": [" # keys", *("+" + x for x in lines)],
        }
    ]
    tool_use_result = {
        "filePath": PATH,
        "oldString": "# keys\n",
        "newString": f"# keys\n{key}\n",
        "originalFile": "# keys\n",
        "structuredPatch": patch,
        "userModified": False,
        "replaceAll": False,
    }
    edit = {"file_path": PATH, "old_string": "# keys\n", "new_string": f"# keys\n{key}\n"}
    snippet = "The file has been updated. Here's the result of running `cat -n` on a snippet:\n" + numbered(
        f"# keys\n{key}"
    )
    data = TranscriptBuilder().tool_call("Edit", edit, result=snippet, tool_use_result=tool_use_result).build()

    result = assert_gone(data, key, kind="private_key")

    hunk = json.loads(result.data.splitlines()[1])["toolUseResult"]["structuredPatch"][0]["lines"]
    assert len(hunk) == 1 + len(lines)  # the hunk keeps its lines
    assert hunk[0] == " # keys" and all(x == "+[REDACTED:private_key]" for x in hunk[1:])


def test_leak_private_key_base64_in_kubeconfig() -> None:
    encoded = base64.b64encode(pem().encode() + b"\n").decode()
    assert_gone(
        read_result(f"users:\n- name: admin\n  user:\n    client-key-data: {encoded}"), encoded, kind="private_key"
    )


# --- CLI flags and environment -------------------------------------------------------------------


def test_leak_pgpassword() -> None:
    secret = password()
    assert_gone(bash(f"PGPASSWORD={secret} psql -h db.internal -U app -c 'select 1'"), secret, kind="password")


def test_leak_mysql_p_flag() -> None:
    secret = password()
    assert_gone(bash(f"mysql -u root -p{secret} -h db.internal app < schema.sql"), secret, kind="password")


def test_leak_password_flag() -> None:
    secret, other = password(), password()
    data = bash(f"./manage.py createsuperuser --password {secret} && keytool -storepass {other} -list")
    assert_gone(data, secret, other, kind="password")


def test_leak_curl_user() -> None:
    secret = password()
    assert_gone(bash(f"curl -u admin:{secret} https://jenkins.internal/api/json"), secret, kind="password")


# --- config files --------------------------------------------------------------------------------


def test_leak_netrc_line() -> None:
    secret = password()
    assert_gone(
        read_result(f"machine api.heroku.com\n  login me@acme.io\n  password {secret}\n"), secret, kind="password"
    )


def test_leak_pgpass_line() -> None:
    first, second = password(), password()
    text = f"db.internal:5432:app:app_user:{first}\n*:*:*:postgres:{second}"
    assert_gone(bash("cat ~/.pgpass", text), first, second, kind="password")


def test_leak_xml_cleartextpassword() -> None:
    secret = password()
    text = (
        "<packageSourceCredentials>\n  <acme>\n"
        f'    <add key="ClearTextPassword" value="{secret}" />\n'
        "  </acme>\n</packageSourceCredentials>"
    )
    assert_gone(read_result(text), secret, kind="password")


def test_leak_camelcase_assignment() -> None:
    secret = rand(32)
    assert_gone(prompt(f"const fooApiKey = '{secret}';"), secret, kind="generic_secret")


def test_leak_url_password_with_hash_and_at() -> None:
    """`redis://:dB2y@qL9#4J@host` was cut at the first `@`, leaving `qL9#4J`."""
    secret = "dB2y@qL9#4J" + rand(6)
    result = assert_gone(
        bash("env | grep REDIS", f"REDIS_URL=redis://:{secret}@cache.internal:6379/0"), secret, kind="url_password"
    )
    assert b"redis://:[REDACTED:url_password]@cache.internal:6379/0" in result.data
    assert b"qL9" not in result.data and b"#4J" not in result.data


def test_leak_npm_authtoken() -> None:
    token = "npm_" + rand(36)
    legacy = "4f1c0a9e-" + rand(4, "0123456789abcdef") + "-4d2b-9c1e-" + rand(12, "0123456789abcdef")
    text = f"//registry.npmjs.org/:_authToken={token}\n//npm.pkg.github.com/:_authToken={legacy}"
    assert_gone(read_result(text), token, legacy, kind="npm")


def test_leak_docker_pat() -> None:
    token = "dckr_pat_" + rand(27, ALNUM + "_-")
    assert_gone(bash(f"echo {token} | docker login -u acme --password-stdin"), token, kind="registry")


def test_leak_docker_config_auth() -> None:
    auth = base64.b64encode(f"acme:{password()}".encode()).decode()
    text = json.dumps({"auths": {"https://index.docker.io/v1/": {"auth": auth}}}, indent=2)
    assert_gone(read_result(text), auth, kind="docker_auth")


def test_leak_docker_config_auth_holding_a_json_key_file() -> None:
    # Google's registries take a service account's key file as the password of user `_json_key`:
    # the decoded auth spans lines
    key_file = json.dumps({"type": "service_account", "private_key_id": rand(40, "0123456789abcdef")}, indent=2)
    auth = base64.b64encode(f"_json_key:{key_file}".encode()).decode()
    text = json.dumps({"auths": {"https://gcr.io": {"auth": auth}}}, indent=2)
    assert_gone(read_result(text), auth, kind="docker_auth")


def test_leak_discord_webhook() -> None:
    secret = rand(68, ALNUM + "_-")
    url = f"https://discord.com/api/webhooks/{RNG.randrange(10**17, 10**18)}/{secret}"
    assert_gone(prompt(f"post the release notes to {url}"), secret, kind="discord_webhook")


def test_leak_sidekiq_licence_user_and_password_both_go() -> None:
    # the gem server's user is half of the licence, unlike a URL's user name elsewhere
    pair = f"{rand(8, '0123456789abcdef')}:{rand(8, '0123456789abcdef')}"
    gemfile = f'source "https://{pair}@enterprise.contribsys.com/" do\n  gem "sidekiq-ent"\nend'
    user = pair.split(":")[0]
    assert_gone(read_result(gemfile), pair, user, kind="registry")
    assert_gone(prompt(f"ran bundle config --local gems.contribsys.com {pair}"), pair, user, kind="registry")


def test_leak_discord_bot_token_with_characters_before_its_id() -> None:
    token = "AT" + "MTk4NjIyNDgzNDcxOTI1MjQ4" + "." + rand(6, ALNUM + "_-") + "." + rand(38, ALNUM + "_-")
    assert_gone(prompt(f"the bot token is {token}"), token, kind="discord")


def test_leak_credential_pair_in_prose_and_a_base64_value_with_a_slash() -> None:
    pw = password()
    assert_gone(prompt(f"the staging creds are admin / {pw}, same as prod"), pw, kind="password")
    # a `/` inside base64 is no user / password pair: the whole value goes, not the part after it
    value = rand(20, ALNUM + "+") + "/" + rand(23, ALNUM + "+") + "="
    assert_gone(prompt(f"brandmark credentials: {value}"), value, *value.split("/"))


def test_leak_password_with_an_ampersand_and_short_password_names() -> None:
    first, second = rand(6), rand(6)
    pw = f"{first}&{second}"
    for text in (f"db password: {pw}", f"DB_PASSWORD={pw}", f"pw: {pw}", f"door_passcode: {pw}"):
        assert_gone(read_result(text), pw, kind="password")


def test_leak_openvpn_static_key_read_from_a_file() -> None:
    lines = [rand(32, "0123456789abcdef") for _ in range(16)]
    key = "\n".join(["-----BEGIN OpenVPN Static key V1-----", *lines, "-----END OpenVPN Static key V1-----"])
    assert_gone(read_result(f"#\n# 2048 bit OpenVPN static key\n#\n{key}\n"), *lines, kind="private_key")


def test_leak_alibaba_access_key_id() -> None:
    key = "LTAI" + rand(20)
    assert_gone(read_result(f"ALIBABA_CLOUD_ACCESS_KEY_ID={key}\nREGION=cn-hangzhou"), key, kind="alibaba")


def test_leak_huggingface_token_in_bearer_header() -> None:
    token = "hf_" + rand(34, string.ascii_letters)
    command = f'curl https://api-inference.huggingface.co/models/gpt2 -H "Authorization: Bearer {token}"'
    assert_gone(bash(command), token, kind="huggingface")


@pytest.mark.parametrize(
    ("name", "value", "kind"),
    [
        ("NEW_RELIC_LICENSE_KEY", lambda: rand(40, "0123456789abcdef"), "generic_secret"),
        ("NEW_RELIC_API_KEY", lambda: "NRAK-" + rand(27, string.ascii_uppercase + string.digits), "newrelic"),
        ("EASYPOST_API_KEY", lambda: "EZAK" + rand(54), "shipping"),
        ("EASYPOST_TEST_API_KEY", lambda: "EZTK" + rand(54), "generic_secret"),
    ],
    ids=["newrelic-license", "newrelic-user", "easypost", "easypost-test"],
)
def test_leak_provider_key_in_env_file(name: str, value: Any, kind: str) -> None:
    secret = value()
    assert_gone(read_result(f"APP_NAME=shop\n{name}={secret}\nLOG_LEVEL=info"), secret, kind=kind)


# --- prose and weak passwords --------------------------------------------------------------------


def test_leak_password_in_prose() -> None:
    secret = "El2h" + rand(8)
    assert_gone(prompt(f"the staging password is {secret}, please rotate it after the deploy"), secret, kind="password")


def test_leak_letters_only_password() -> None:
    secret = "BmCqPzWxLkTr"
    assert_gone(read_result(f"DB_HOST=db.internal\nDB_PASSWORD={secret}\n"), secret, kind="password")


def test_leak_eight_character_password() -> None:
    secret = "xK9#mQ2z"
    assert_gone(read_result(f"db:\n  user: app\n  password: {secret}\n"), secret, kind="password")


# --- every copy ----------------------------------------------------------------------------------


def test_leak_every_copy_of_a_recognised_secret() -> None:
    """Recognised once (next to its name), the value goes everywhere: message.content,
    toolUseResult, stdout, a structuredPatch hunk, and a later message quoting it bare."""
    secret = rand(40)
    env = f"SERVICE_TOKEN={secret}"
    patch = [{"oldStart": 1, "oldLines": 0, "newStart": 1, "newLines": 1, "lines": [f"+{env}"]}]
    b = TranscriptBuilder().prompt("set the token up")
    b.tool_call("Bash", {"command": "cat .env"}, result=env)
    b.tool_call(
        "Edit",
        {"file_path": PATH, "old_string": "", "new_string": env},
        result="updated",
        tool_use_result={"filePath": PATH, "newString": env, "structuredPatch": patch},
    )
    b.assistant_text(f"The service will authenticate with {secret} from now on.")
    data = b.build()

    result = assert_gone(data, secret, kind="generic_secret")

    assert result.data.count(b"[REDACTED:generic_secret]") >= 6
    assert b"The service will authenticate with [REDACTED:generic_secret] from now on." in result.data


def test_unrelated_lines_stay_byte_identical() -> None:
    secret = password()
    data = prompt("hello") + bash(f"PGPASSWORD={secret} psql") + prompt("bye")
    result = redact(data)
    before, after = data.splitlines(), result.data.splitlines()
    assert [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b] == result.changed_lines
    assert before[0] == after[0] and before[-1] == after[-1]


def test_a_basic_authorization_value_that_does_not_decode_to_a_login_is_redacted() -> None:
    """Only a credential follows `Authorization: Basic`: a made-up value (random base64, not
    `user:password`) goes as a real one does; `username:password` in base64 is a template and stays."""
    made_up = rand(40, ALNUM + "+/") + "="
    template = base64.b64encode(b"username:password").decode()
    data = bash(
        "curl -s https://api.example.com/v1/items",
        f'request headers: {{"Authorization": "Basic {made_up}"}}\nexample: Authorization: Basic {template}',
    )

    result = assert_gone(data, made_up, kind="basic_auth")

    assert template.encode() in result.data


def test_a_token_given_to_git_as_the_urls_user_is_redacted() -> None:
    """`git clone https://<token>@github.com/…`: git takes a personal access token as the user; a
    Sentry DSN's key (32 hex, public by design) and a plain user name stay."""
    token = rand(40)
    dsn_key = rand(32, "0123456789abcdef")
    data = bash(
        f"git clone https://{token}@github.com/acme/app.git",
        f"Cloning into 'app'...\nSENTRY_DSN=https://{dsn_key}@o450000.ingest.sentry.io/5000000\nssh://git@github.com/acme/app",
    )

    result = assert_gone(data, token, kind="url_password")

    assert dsn_key.encode() in result.data and b"ssh://git@github.com/acme/app" in result.data


def test_a_personal_access_token_named_by_its_acronym_is_redacted() -> None:
    """`PAT` names a personal access token (GitHub, Azure DevOps, GitLab); `PATH` and `PATCH` are no
    credential words."""
    pat = rand(52, string.ascii_lowercase + "234567")
    data = prompt(f"the build fails since I rotated it; my new PAT is {pat}") + bash(
        "env | grep PATH", "PATH=/usr/local/bin:/usr/bin:/opt/tool2/bin"
    )

    result = assert_gone(data, pat)

    assert b"PATH=/usr/local/bin:/usr/bin:/opt/tool2/bin" in result.data


def test_passphrases_given_to_encrypting_commands_are_redacted() -> None:
    """zip, 7z, gpg, openssl and smbclient take a password as a flag; `ssh-keygen -p` takes the old
    and the new one in one command, and both go."""
    secrets = [password() for _ in range(7)]
    commands = [
        f"zip -r -P {secrets[0]} backup.zip data/",
        f"7z a -p{secrets[1]} -mhe=on secrets.7z .env",
        f"gpg --batch --passphrase '{secrets[2]}' -d vault.gpg > vault",
        f"openssl enc -aes-256-cbc -salt -k {secrets[3]} -in db.sql -out db.sql.enc",
        f"smbclient //fs01/share -U admin%{secrets[4]} -c ls",
        f"ssh-keygen -p -P {secrets[5]} -N {secrets[6]} -f ~/.ssh/deploy",
    ]
    data = b"".join(bash(command) for command in commands) + bash("ssh-keygen -t ed25519 -N '' -f ~/.ssh/id")

    result = assert_gone(data, *secrets, kind="password")

    assert b"ssh-keygen -t ed25519 -N '' -f ~/.ssh/id" in result.data


def test_an_api_key_given_to_curl_as_a_password_without_a_user_is_redacted() -> None:
    key = rand(32)
    result = assert_gone(bash(f"curl -s -u :{key} https://api.example.com/v1/items"), key, kind="password")

    assert b"curl -s -u :[REDACTED:password] https://api.example.com/v1/items" in result.data


def test_a_password_in_an_xml_element_with_a_short_name_is_redacted() -> None:
    """`<db_pass>`, `<passphrase>`, `<adminPwd>` hold passwords; `<render_pass>shadow` is a render pass."""
    secrets = [password() for _ in range(3)]
    xml = (
        f"<config>\n  <db_pass>{secrets[0]}</db_pass>\n  <passphrase>{secrets[1]}</passphrase>\n"
        f"  <adminPwd>{secrets[2]}</adminPwd>\n  <render_pass>shadow</render_pass>\n</config>"
    )
    result = assert_gone(bash("cat config.xml", xml), *secrets, kind="password")

    assert b"<render_pass>shadow</render_pass>" in result.data


def test_a_redis_password_and_a_wifi_passphrase_in_their_config_files_are_redacted() -> None:
    """redis.conf's `requirepass` and wpa_supplicant's `psk`; redis.conf's own example, `foobared`,
    stays."""
    redis_pw, wifi_psk = rand(24), password()
    redis_conf = f"# requirepass foobared\nrequirepass {redis_pw}\nport 6379"
    wpa = f'network={{\n  ssid="office"\n  psk="{wifi_psk}"\n}}'
    data = bash("cat /etc/redis/redis.conf", redis_conf) + bash("cat /etc/wpa_supplicant.conf", wpa)

    result = assert_gone(data, redis_pw, wifi_psk, kind="password")

    assert b"# requirepass foobared" in result.data


def test_a_token_beside_a_providers_name_the_catalogue_does_not_list_is_redacted() -> None:
    """PagerDuty, Pipedrive, Upstash… name their keys in their own docs, not in gitleaks' catalogue:
    the name beside a token vouches for it as a listed provider's does; a package pin stays."""
    routing, pipedrive = rand(32, "0123456789abcdef"), rand(40, "0123456789abcdef")
    data = prompt(f"pagerduty: {routing}\nand the pipedrive one we use in prod is {pipedrive}") + bash(
        "pip install posthog==3.1.0 pinecone-client==3.0.0"
    )

    result = assert_gone(data, routing, pipedrive, kind="generic_secret")

    assert b"pip install posthog==3.1.0 pinecone-client==3.0.0" in result.data


B64URL = ALNUM + "-_"


def test_the_private_members_of_a_json_web_key_are_redacted_and_its_public_ones_kept() -> None:
    """RSA (`d`, the primes and their exponents), EC and OKP (`d`) JWKs, in the RFC's member order and
    sorted, pretty-printed and on one line: every private member goes, `n`, `x` and `y` stay."""
    rsa = {"kty": "RSA", "n": rand(342, B64URL), "e": "AQAB", "d": rand(342, B64URL)}
    rsa |= {name: rand(171, B64URL) for name in ("p", "q", "dp", "dq", "qi")}
    ec = {"kty": "EC", "crv": "P-256", "x": rand(43, B64URL), "y": rand(43, B64URL), "d": rand(43, B64URL)}
    okp = {"kty": "OKP", "crv": "Ed25519", "x": rand(43, B64URL), "d": rand(43, B64URL)}
    shown = [json.dumps(rsa), json.dumps(rsa, indent=2, sort_keys=True), json.dumps(ec, indent=2)]
    shown += [json.dumps(ec, sort_keys=True), json.dumps(okp), json.dumps(okp, sort_keys=True)]
    data = b"".join(bash(f"cat key{i}.jwk", text) for i, text in enumerate(shown))
    private = [rsa[name] for name in ("d", "p", "q", "dp", "dq", "qi")] + [ec["d"], okp["d"]]

    result = assert_gone(data, *private, kind="private_key")

    assert all(value.encode() in result.data for value in (rsa["n"], ec["x"], ec["y"], okp["x"]))


def test_a_private_key_as_base64_der_without_pem_lines_is_redacted() -> None:
    """`openssl … -outform DER | base64` gives one run with no `-----BEGIN`: PKCS#8, PKCS#1 and SEC1
    keys go; a public key (SubjectPublicKeyInfo) in the same form stays."""
    pkcs8 = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ" + rand(1500, ALNUM + "+/")
    pkcs1 = "MIIEpAIBAAKCAQEA" + rand(1500, ALNUM + "+/")
    sec1 = "MHcCAQEEI" + rand(150, ALNUM + "+/")
    public = "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA" + rand(300, ALNUM + "+/") + "IDAQAB"
    data = prompt(f"the signing key is {pkcs8}") + bash(f"echo {pkcs1} | base64 -d > k.der", sec1) + prompt(public)

    result = assert_gone(data, pkcs8, pkcs1, sec1, kind="private_key")

    assert public.encode() in result.data


def test_a_twilio_api_key_sid_and_a_gitlab_runner_registration_token_standing_alone_are_redacted() -> None:
    """Their prefixes name them with no word around (`SK` + 32 hex, `GR1348941` + 20 or more); a body
    filled in by hand (`XXXX…`, `123123…`) stays."""
    sid = "SK" + rand(32, "0123456789abcdef")
    runner = "GR1348941" + rand(20, ALNUM + "_-")
    filled = ["GR1348941XXXXXXXXXXXXXXXXXXXX", "GR134894112312312312312312312", "SK" + "0" * 32]
    data = bash("twilio api:core:keys:list", f"{sid}\n") + prompt(runner) + prompt(" ".join(filled))

    result = assert_gone(data, sid, runner)

    assert all(value.encode() in result.data for value in filled)


def test_a_webex_bot_token_whose_org_part_is_not_hex_is_redacted() -> None:
    """A made-up Webex bot token keeps the real one's shape (64, `_`, four, `_`, 8-4-4-4-12) with any
    letters and digits in the UUID's place: the shape alone names it."""
    lower = string.ascii_lowercase + string.digits
    uuid_shaped = "-".join(rand(n, lower) for n in (8, 4, 4, 4, 12))
    bot = f"{rand(64, lower)}_qwer_{uuid_shaped}"

    assert_gone(prompt(f'webexbot = "{bot}"'), bot, kind="webex")


def test_a_made_up_value_with_a_keyboard_run_under_a_credential_name_is_redacted() -> None:
    """`test_key_1234567890abcdefghij` is made of words and runs typed in by hand: a made-up key someone
    may have issued, so it goes like any other; so does `secret12345678` as a password. A code name
    without a run (`user_profile_v2`) and a whole template (`your_api_key_here`) stay."""
    made_up = ["test_key_1234567890abcdefghij", "fake-api-key-0123456789abcdef", "secret12345678"]
    kept = ["CACHE_KEY=user_profile_v2", "API_KEY=your_api_key_here"]
    data = prompt(f"API_KEY={made_up[0]}\nSTRIPE_TOKEN: {made_up[1]}\ndb_password = '{made_up[2]}'\n" + "\n".join(kept))

    result = assert_gone(data, *made_up)

    assert all(text.encode() in result.data for text in kept)


def test_a_uuid_right_after_a_strong_credential_word_is_redacted_and_a_cache_key_stays() -> None:
    """Many providers issue UUIDs as keys. Named by `webhook secret`, `apikey` or `master key` with only
    a space between, a UUID is the credential; after a plain `key` or `token` (a cache, idempotency,
    partition or page key) it is an id and stays."""
    secrets = [str(uuid.uuid4()) for _ in range(4)]
    ids = [str(uuid.uuid4()) for _ in range(4)]
    data = prompt(
        f"the webhook secret {secrets[0]} signs them; apikey {secrets[1]}\n"
        f"Master-Key {secrets[2]} and the signing secrets {secrets[3]}\n"
        f"idempotency key {ids[0]}, cache key {ids[1]}, next page token {ids[2]}, secret id {ids[3]}"
    )

    result = assert_gone(data, *secrets, kind="generic_secret")

    assert_kept(result, *ids)


def test_htpasswd_with_its_flags_apart_loses_the_password_and_keeps_the_file() -> None:
    """`htpasswd -b -c FILE USER PW`: the flags may come as separate clusters, in any order, `-C 12`
    with its cost; a user never starts with `-`, so the file name is not taken for the password."""
    first, second = rand(10, ALNUM) + "#1", rand(12, ALNUM) + "!"
    data = bash("htpasswd -b -c .htpasswd admin " + first, "Adding password for user admin\n")
    data += bash("htpasswd -B -C 12 -b /etc/nginx/.htpasswd ops " + second, "Updating password for user ops\n")

    result = assert_gone(data, first, second, kind="password")

    assert_kept(result, "-c .htpasswd admin")


def test_a_password_given_to_an_openldap_tool_is_redacted() -> None:
    """`ldapsearch … -w PW` (and ldapmodify, ldapadd, …) takes the bind password on the command line;
    `-W` asks for it and a variable names it."""
    password = rand(10, ALNUM) + "!x"
    kept = 'ldapsearch -x -D cn=admin,dc=corp -W -b dc=corp; ldapwhoami -x -w "$LDAP_PASSWORD"'
    data = bash(f"ldapsearch -x -H ldap://dc01 -D cn=admin,dc=corp -w {password} -b dc=corp", "# 1 entry\n")
    data += bash(kept, "")

    result = assert_gone(data, password, kind="password")

    assert_kept(result, kept)


def test_a_password_or_key_given_to_a_setter_is_redacted() -> None:
    """`ds.setPassword("…")`, `.withPassword("…")`, `client.setApiKey("…")`: a literal handed to a
    setter is the credential; an environment lookup or a template handed over stays."""
    password, key = rand(10, ALNUM) + "#9", rand(32, ALNUM)
    kept = 'ds.setPassword(System.getenv("DB_PASSWORD")); req.setToken("<your-token-here>");'
    data = prompt(f'ds.setPassword("{password}");\nclient.setApiKey("{key}");\n{kept}')

    result = assert_gone(data, password, key)

    assert_kept(result, kept)


def test_a_database_users_password_in_sql_is_redacted() -> None:
    """`CREATE USER … IDENTIFIED BY 'PW'` (MySQL, MariaDB, Oracle; upper or lower case, with a plugin
    named), in a command and in a file the agent wrote; a variable, a bind parameter and prose stay."""
    first, second = rand(10, ALNUM) + "#1", rand(12, ALNUM) + "!x"
    kept = "ALTER USER app IDENTIFIED BY :new_password; -- users are identified by their email"
    data = bash(f"mysql -e \"CREATE USER 'app'@'%' IDENTIFIED BY '{first}'\"", "")
    data += prompt(f"alter user 'root'@'localhost' identified with caching_sha2_password by '{second}';\n{kept}")

    result = assert_gone(data, first, second, kind="password")

    assert_kept(result, kept)


def test_a_google_app_password_with_its_spaces_is_redacted_whole() -> None:
    """Google shows an app password as four groups of four letters, and people paste it so: its
    spaces ended every password rule's value, so all of it stayed. Words and a typed run stay."""
    # (fixed: one random draw in 15 reads as words, `wordy`, and would stay)
    first, second = "qwhz kdpa mxvt rnbe", "tbzk wrqm hfpx dnvc"
    kept = "password: just some text here; EMAIL_HOST_PASSWORD = 'abcd efgh ijkl mnop'"
    data = prompt(f"EMAIL_HOST_PASSWORD = '{first}'\nmy gmail app password is {second}, use it\n{kept}")

    result = assert_gone(data, first, second, kind="password")

    assert_kept(result, kept)


def test_an_entra_id_client_secret_standing_alone_is_redacted() -> None:
    """A Microsoft Entra ID (Azure AD) client secret has its own shape (three characters, a digit,
    `Q~`, 31 to 34 more): it goes pasted in prose or printed by `az ad app credential reset`, with
    no name before it."""
    secret = rand(3) + "8Q~" + rand(34, ALNUM + "_~.-")
    output = f'{{\n  "appId": "{uuid.uuid4()}",\n  "password": "{secret}"\n}}\n'
    data = bash("az ad app credential reset --id $APP_ID", output) + prompt(f"the new one is {secret}")

    assert_gone(data, secret, kind="azure")


def test_an_artifactory_reference_token_and_an_openshift_token_standing_alone_are_redacted() -> None:
    """Their prefixes name them (`cmVmdGtu`, base64 of `reftkn`; `sha256~`), so they go with no word
    around: printed by `oc whoami -t`, pasted in prose. A layer digest `sha256:…` stays."""
    reference = "cmVmdGtu" + rand(56)
    openshift = "sha256~" + rand(43, ALNUM + "_-")
    digest = "sha256:" + rand(64, "0123456789abcdef")
    data = bash("oc whoami -t", openshift + "\n") + prompt(f"the reference token is {reference}; image {digest}")

    result = assert_gone(data, reference, openshift)

    assert_kept(result, digest)


def test_a_wallet_recovery_phrase_is_redacted_and_a_published_test_phrase_stays() -> None:
    """A BIP-39 phrase (12 to 24 words) after `MNEMONIC=`, `seed phrase:` or 'my recovery phrase is'
    derives every key of its wallet. Hardhat's published `test test … junk` and prose stay."""
    phrase = "ocean brisk cradle vivid lumber orbit famous twelve glide mercy bacon velvet"
    longer = phrase + " tiger exact garden focus river pulse mango cliff hazard siren dove wheat"
    kept = 'MNEMONIC="test test test test test test test test test test test junk"'
    prose = "the seed phrase is the list of words you wrote down when you made the wallet"
    data = prompt(f'MNEMONIC="{phrase}"\n{kept}\n{prose}')
    data += bash("cat wallet.txt", f"Secret Recovery Phrase: {longer}\n")

    result = assert_gone(data, phrase, longer, kind="private_key")

    assert_kept(result, kept, prose)


def test_secrets_starting_a_later_line_or_a_coloured_one_are_redacted() -> None:
    """In a JSON string a later line's first letter follows the `n` of `\\n`, and coloured output puts
    the `m` of `\\u001b[32m` before it. Rules that wanted no letter before their first word read both
    as one: a Discord token, a private key as base64 DER, `htpasswd`, `echo user:pw | chpasswd` and a
    recovery phrase stayed when they started a later line of a prompt or a written file, and
    `requirepass` or a token before 'is the api key' after a colour code."""
    discord = "MTk4NjIyNDgzNDcxOTI1MjQ4." + rand(6) + "." + rand(27, ALNUM + "_-")
    der = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ" + rand(1500, ALNUM + "+/")
    first, second, third, fourth = password(), password(), password(), rand(32)
    phrase = "ocean brisk cradle vivid lumber orbit famous twelve glide mercy bacon velvet"
    script = f"#!/bin/sh\nhtpasswd -bc /etc/nginx/.htpasswd admin {first}\necho deploy:{second} | chpasswd\n"
    data = prompt(f"use this bot token:\n{discord}\nand this key:\n{der}\nseed:\nmnemonic: {phrase}\nthanks")
    data += TranscriptBuilder().tool_call("Write", {"file_path": "/home/dev/app/setup.sh", "content": script}).build()
    coloured = f"\x1b[1;33mrequirepass {third}\x1b[0m\n\x1b[32m{fourth} is the api key for staging\x1b[0m\n"
    data += bash("cat notes.txt", coloured)

    result = assert_gone(data, discord, der, first, second, phrase, third, fourth)

    assert_kept(result, "use this bot token:\n", "\nthanks", "#!/bin/sh\nhtpasswd -bc", "\x1b[1;33mrequirepass ")


def test_secrets_a_line_after_their_name_in_a_read_file_are_redacted() -> None:
    """Claude Code numbers every line of a file it shows (`     5→`), and the numbered copy is the one
    scanned: a token on the line after 'token is:' (in a code fence or not), an XML element's value
    on its own line, a JWK's second member and a password first on its line stayed in both copies."""
    token, element, pw = rand(32), rand(32), password()
    dp, dq = rand(86, ALNUM + "_-"), rand(86, ALNUM + "_-")
    text = (
        f"The new API token is:\n\n```\n{token}\n```\n<apiToken>\n    {element}\n</apiToken>\n"
        f'{{"dp": "{dp}",\n  "dq": "{dq}"}}\n{pw} is the password for the staging box\n'
    )

    result = assert_gone(read_result(text), token, element, dp, dq, pw)

    assert_kept(result, "The new API token is:", "<apiToken>", "is the password for the staging box")


def test_tokens_first_on_a_read_line_of_an_ascii_escaped_transcript_are_redacted() -> None:
    """A transcript written with non-ASCII escaped holds a Read line's arrow as `\\u2192`, whose last
    digit sits right before the line's first token: a Telegram bot token, a Sourcegraph token
    (through the gitleaks catalogue's translated `\\b`) and a Webex bot token stayed there."""
    telegram = f"{RNG.randrange(10**9, 10**10)}:AA{rand(33, ALNUM + '_-')}"
    sourcegraph = "sgp_local_" + rand(40, "0123456789abcdef")
    webex = rand(64, "abcdefghijklmnopqrstuvwxyz0123456789") + "_PF84_" + str(uuid.UUID(int=RNG.getrandbits(128)))
    lines = read_result(f"{telegram}\n{sourcegraph}\n{webex}\n").splitlines()
    data = b"".join(json.dumps(json.loads(line), separators=(",", ":")).encode() + b"\n" for line in lines)
    assert b"\\u2192" in data

    result = assert_gone(data, telegram, sourcegraph, webex)

    assert_kept(result, "     1\u2192[REDACTED:")


def test_a_password_in_prose_inside_html_is_redacted_and_its_tags_kept() -> None:
    """A wiki page or a mail pasted as HTML: the prose rules' value ran on into `</td>`, so 'set the
    password to X and log in again</td>' read `again</td>` as the password (refused) and kept X."""
    first, second = password(), password()
    html = f"<tr><td>set the password to {first} and log in again</td></tr>\n<p>The staging password is {second}</p>"

    result = assert_gone(prompt(html), first, second, kind="password")

    assert_kept(result, "and log in again</td></tr>", "[REDACTED:password]</p>")


def test_a_token_named_after_it_with_a_provider_word_between_is_redacted() -> None:
    """'use <token> as the sentry api key', '<token> is the new access token': a word between the
    article and the credential word (a provider, 'new', 'prod') hid the name from the rule."""
    first, second = rand(32, "0123456789abcdef"), rand(24, string.ascii_lowercase + string.digits)
    kept = "STRIPE_SECRET_KEY is the stripe secret key"
    data = prompt(f"use {first} as the sentry api key\n{second} is the new access token\n{kept}")

    result = assert_gone(data, first, second, kind="generic_secret")

    assert_kept(result, kept, "as the sentry api key")


def test_a_token_named_after_it_by_what_it_signs_or_a_value_on_the_line_below_is_redacted() -> None:
    """'add <token> as the stripe webhook secret', '<token> is our bot token' and 'the plaid secret
    below' then the value on its own line: the word saying which credential it is (webhook, bot,
    signing, license) hid the name, and 'below' was no way to introduce a value."""
    webhook, bot, below = rand(32), rand(40, ALNUM + "_-"), rand(30)
    kept = "sha256:" + rand(64, "0123456789abcdef") + " is the signing key"
    data = prompt(f"add {webhook} as the stripe webhook secret\n{bot} is our bot token\n{kept}\n")
    data += prompt(f"I pasted the plaid secret below\n{below}\nthe key here is to cache it")

    result = assert_gone(data, webhook, bot, below, kind="generic_secret")

    assert_kept(result, kept, "as the stripe webhook secret", "the key here is to cache it")


def test_sandbox_gpu_and_feature_flag_keys_are_redacted_by_their_prefix_alone() -> None:
    """E2B, RunPod, Modal and Statsig keys pasted bare into a shell session: their prefixes are in
    no catalogue and no credential word stands near them."""
    e2b, runpod = "e2b_" + rand(40, "0123456789abcdef"), "rpa_" + rand(40, string.ascii_uppercase + string.digits)
    modal, statsig = "as-" + rand(22), "secret-" + rand(43)
    output = f"{e2b}\n{runpod}\n--token-id ak-{rand(22)} --token-secret {modal}\n{statsig}\n"
    kept = "kubectl get secret-store-csi-driver-provider-aws-installation-guide"

    result = assert_gone(bash("cat ~/.config/keys.txt", output + kept), e2b, runpod, modal, statsig, kind="saas_token")

    assert_kept(result, kept, "--token-secret [REDACTED:")


def test_a_password_in_a_kubernetes_or_ecs_env_entry_is_redacted_and_a_secret_reference_kept() -> None:
    """A Deployment read from disk names the variable in `name:` and gives its value on the next line
    (behind a Read line number); an ECS task definition does the same in JSON. Neither value stood
    after its name, so no assignment rule saw it."""
    k8s, ecs = f"Xk9#{rand(12)}", rand(32)
    manifest = (
        "env:\n"
        "  - name: DB_PASSWORD\n"
        f'    value: "{k8s}"\n'
        "  - name: SESSION_SECRET\n"
        "    valueFrom:\n"
        "      secretKeyRef:\n"
        "        name: app\n"
    )
    task = json.dumps({"environment": [{"name": "JWT_SECRET", "value": ecs}, {"name": "PORT", "value": "8080"}]})

    result = assert_gone(read_result(manifest) + bash("cat task.json", task), k8s, ecs, kind="generic_secret")

    assert_kept(result, "- name: SESSION_SECRET", "valueFrom:", '{"name": "PORT", "value": "8080"}')


def test_a_value_piped_into_a_secret_store_command_is_redacted() -> None:
    """An agent that sets a repository or Worker secret pipes the value into the command, which reads
    it from stdin: nothing names the value where it stands."""
    github, wrangler = rand(40), f"Xk9#{rand(12)}"
    command = f'echo "{github}" | gh secret set NPM_TOKEN && '
    command += f'printf "%s" "{wrangler}" | npx wrangler secret put DB_PASSWORD'
    kept = 'echo "$NPM_TOKEN" | gh secret set NPM_TOKEN'

    result = assert_gone(bash(command) + bash(kept), github, wrangler, kind="generic_secret")

    assert_kept(result, kept, "| gh secret set NPM_TOKEN &&")


def test_a_value_given_to_a_secret_store_command_is_redacted() -> None:
    """The same commands take the value as an argument too (`gh secret set NAME --body …`, after any
    other flag; `doppler secrets set NAME …`), a password's symbols and all."""
    github, doppler = f"Xk9&{rand(14)}!", rand(32)
    command = f"gh secret set DB_PASSWORD --repo acme/api --body '{github}' && "
    command += f"doppler secrets set STRIPE_SECRET {doppler}"
    kept = 'gh secret set NPM_TOKEN --body "$NPM_TOKEN" && gh secret set ENV_FILE --body-file .env.production'

    result = assert_gone(bash(command) + bash(kept), github, doppler, kind="generic_secret")

    assert_kept(result, kept, "gh secret set DB_PASSWORD --repo acme/api --body")
