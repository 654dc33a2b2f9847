"""Every redaction rule against its own true- and false-positive examples (docs/redaction.md).

The examples live next to each rule in the rules data (client/sessionledger/core/redaction/rules_data.py)
as templates, so this file and the data hold no real-shaped literal token: `«…»` marks a secret that
must become `[REDACTED:<kind>]` with everything around it kept byte for byte; a false positive
must come back unchanged. Each rule is also checked as plain text and inside a JSONL line, and
every regex is checked to be linear: bounded quantifiers only, and adversarial inputs of 200 KB
handled in well under a second.
"""

from __future__ import annotations

import json
import random
import re

import pytest

from sessionledger.core.redaction import RULE_SPECS, Redactor, RuleSpec
from sessionledger.core.redaction.examples import expand
from sessionledger.core.redaction.rules import FRAGMENTS
from sessionledger.core.redaction.validators import VALIDATORS
from tests.client.transcript_builder import TranscriptBuilder

REDACTOR = Redactor()
SPECS = {spec.rule.name: spec for spec in RULE_SPECS}
TPS = [(name, i) for name, spec in SPECS.items() for i in range(len(spec.tp))]
FPS = [(name, i) for name, spec in SPECS.items() for i in range(len(spec.fp))]


def _example(spec: RuleSpec, template: str, salt: int) -> tuple[str, tuple[str, ...]]:
    example = expand(template, random.Random(f"{spec.rule.name}-{salt}"))
    return example.text, example.secrets


def _expected(text: str, secrets: tuple[str, ...], kind: str) -> str:
    for secret in secrets:
        text = text.replace(secret, f"[REDACTED:{kind}]")
    return text


def test_every_rule_documents_itself_with_examples() -> None:
    assert len(RULE_SPECS) >= 80
    for spec in RULE_SPECS:
        assert spec.description and spec.source, spec.rule.name
        assert spec.tp and spec.fp, f"{spec.rule.name} needs true- and false-positive examples"
        assert spec.category, spec.rule.name
        for template in spec.tp:
            assert "«" in template, f"{spec.rule.name}: a true positive marks its secret"


@pytest.mark.parametrize(("name", "i"), TPS, ids=[f"{n}-tp{i}" for n, i in TPS])
def test_true_positive_is_redacted_as_text(name: str, i: int) -> None:
    spec = SPECS[name]
    text, secrets = _example(spec, spec.tp[i], i)

    out, counts = REDACTOR.redact_text(text)

    assert out == _expected(text, secrets, spec.rule.kind)
    assert counts.get(spec.rule.kind, 0) >= len(secrets)


@pytest.mark.parametrize(("name", "i"), TPS, ids=[f"{n}-tp{i}" for n, i in TPS])
def test_true_positive_is_redacted_in_a_transcript_line(name: str, i: int) -> None:
    """In Bash output the secret sits twice in one escaped JSON line (content and toolUseResult)."""
    spec = SPECS[name]
    text, secrets = _example(spec, spec.tp[i], i)
    line = TranscriptBuilder().tool_result("toolu_01AbCdEf", text).build()

    result = REDACTOR.redact_bytes(line)

    record = json.loads(result.data)
    assert record["toolUseResult"]["stdout"] == _expected(text, secrets, spec.rule.kind)
    assert record["message"]["content"][0]["content"] == _expected(text, secrets, spec.rule.kind)
    assert result.changed_lines == [0]


@pytest.mark.parametrize(("name", "i"), TPS, ids=[f"{n}-tp{i}" for n, i in TPS])
def test_true_positive_is_redacted_on_a_later_line_and_after_a_colour_code(name: str, i: int) -> None:
    """In a JSON string a line's first letter follows the `n` of `\\n`, and coloured output puts the
    `m` of `\\u001b[32m` before it: neither is a letter of the text a rule's word boundary may see."""
    spec = SPECS[name]
    text, secrets = _example(spec, spec.tp[i], i)
    for shown in (f"look at this:\n{text}\nthanks", f"\x1b[32m{text}\x1b[0m", f"\x1b[1;33m{text}"):
        line = TranscriptBuilder().tool_result("toolu_01AbCdEf", shown).build()

        record = json.loads(REDACTOR.redact_bytes(line).data)

        assert record["toolUseResult"]["stdout"] == _expected(shown, secrets, spec.rule.kind), repr(shown[:16])


@pytest.mark.parametrize(("name", "i"), FPS, ids=[f"{n}-fp{i}" for n, i in FPS])
def test_false_positive_is_left_alone(name: str, i: int) -> None:
    spec = SPECS[name]
    text, _ = _example(spec, spec.fp[i], i)
    line = TranscriptBuilder().tool_result("toolu_01AbCdEf", text).build()

    assert REDACTOR.redact_text(text) == (text, {})
    assert REDACTOR.redact_bytes(line).data == line


# --- linear regexes ------------------------------------------------------------------------------


def unbounded_quantifiers(pattern: str) -> list[str]:
    """`*` and `+` quantifiers outside character classes (possessive `{m,n}+` is bounded)."""
    found, i = [], 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            i += 2
            continue
        if char == "[":
            j = i + 1
            j += pattern[j] == "^"
            j += pattern[j] == "]"
            while pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            i = j + 1
            continue
        if char in "*+" and not (char == "+" and pattern[i - 1] in "}*+?"):
            found.append(pattern[max(0, i - 24) : i + 1])
        i += 1
    return found


@pytest.mark.parametrize("name", sorted(SPECS))
def test_rule_quantifiers_are_bounded(name: str) -> None:
    rule = SPECS[name].rule
    for pattern in (rule.pattern, *rule.anchors, *rule.lower_anchors, rule.follow, rule.name_pattern, rule.then):
        assert unbounded_quantifiers(pattern) == [], pattern[:80]


def test_fragments_are_bounded() -> None:
    for name, fragment in FRAGMENTS.items():
        assert unbounded_quantifiers(fragment) == [], name


ADVERSARIAL = [
    "a" * 200_000,
    "A" * 200_000,
    "_" * 200_000,
    "-" * 200_000,
    "." * 200_000,
    "=" * 200_000,
    "~" * 200_000,
    "key=" * 50_000,
    "api_key_" * 25_000 + "=x",
    "password " * 22_000,
    "password is " * 16_000,
    "-p" * 100_000,
    "-----BEGIN RSA PRIVATE KEY-----" + "A" * 200_000,
    "-----BEGIN RSA PRIVATE KEY-----\n" + "     1→AAAA\n" * 20_000,
    "ghp_" + "a" * 200_000,
    "sk-" * 66_000,
    "eyJ" + "a" * 100_000 + ".eyJ" + "b" * 100_000,
    "https://" + "u" * 100_000 + ":" + "p@" * 50_000,
    "redis://:" + "@#" * 100_000,
    '"auth": "' + "QQ" * 100_000,
    "AKIA" * 50_000,
    "xoxb-" + "1-" * 100_000,
    "<password>" + " " * 200_000,
    "Authorization: Bearer " + "a." * 100_000,
    "curl -u " + "a:" * 100_000,
    "mysql -p" + "x" * 200_000,
    "# ~/.pgpass\n" + "h:5432:d:u:" * 20_000,
    "\\n" * 100_000,
    "kind: Secret\nstringData:\n" + "  k: v1234567\n" * 16_000,
    'token: "' + "Ab3dEf9h\\\n    " * 14_000,
    "ENV=" + "QUJDPTEyMw" * 20_000,
    # a provider prefix repeated (each one a catalogue rule's anchor), a credential word before
    # long token runs, word after word, digits after `=`: the keyword-near-token rule's worst cases
    "sk-" * 66_000 + "proj-",
    "dckr_pat_" * 22_000,
    "glpat-" * 33_000,
    "key " + "a1" * 100_000,
    "token: " * 30_000,
    "key=1" * 40_000,
    "secret " + ("x1" * 7 + " ") * 13_000,
    "credential " + "a." * 100_000,
    # a bare value's `&` checks for a query parameter after it; a braced XML value looks for a token run
    "DB_PASSWORD=" + "a&" * 100_000,
    "<secret>{" + "a " * 100_000,
    "AP1" * 66_000,
    # a provider's name repeated, before a long token run, before gaps that never reach a token
    "hubspot" * 28_000,
    "dropbox " + "a1" * 100_000,
    "mapbox: " * 25_000,
    'HubSpotAPI("' * 16_000,
    "shopify " + "ab " * 66_000,
    # a name of key words that ends as no secret's name, a different one per line (each tried in
    # full); a word, then capitals that no split into acronyms ends (an identifier check's worst case)
    "".join(
        f"SECRET_{a}{b}{c}{'KEY' * 38}=Ym9va21hcmsgZ\n"
        for a in "ABCDEFGHIJKL"
        for b in "ABCDEFGHIJKL"
        for c in "ABCDEFGHIJ"
    ),
    ("app_SECRET=examplevalidkey" + "ABCDEFGHIJKLMNOPQRSTUVWXYZ" * 3 + "S=\n") * 2_000,
    # password hashes: a format's prefix repeated, a salt that never ends, a Kerberos hash's long body
    "$2b$12$" * 28_000,
    "$6$" + "a" * 200_000,
    "$krb5asrep$23$" + "ab:" * 66_000,
    "pbkdf2:sha256:600000$" * 9_000,
    # a token before its word: every credential word a hit, each with the most word starts before it
    "a is the key " * 15_000,
    "a is the password " * 11_000,
    # a password's `=` inside, each followed by more; a user / password pair that never ends;
    # wp-config's aligned call, repeated
    "password=a=!" * 16_000,
    "creds are a / " * 14_000,
    "define( 'AUTH_SALT',        '" * 6_000,
    # a connector, then a code block that never holds a value; a password word before `to`
    "the key is:\n\n```\n" * 12_000,
    "password to " * 16_000,
    # a password's name before three groups of four letters, never the fourth
    "pass abcd abcd abcd " * 10_000,
    # a key block of string literals and quote marks that never ends; an SSH2 header repeated
    "-----BEGIN PRIVATE KEY-----\n" + '"\\n"\n "' * 40_000,
    '"-----BEGIN RSA PRIVATE KEY-----" +\n"' + 'AAAA" +\n"' * 20_000,
    "LS0tLS1CRUdJTi" * 15_000,
    "the password for a for b is '" * 8_000,
    'password is "' + "abcd" * 50_000,
    "key: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQ" + "A" * 200_000 + "!",
    "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----" * 5_000,
    # account commands: each hit with the most word starts before it, a user that never ends
    "echo a:b chpasswd " * 11_000,
    "htpasswd -b a " * 14_000,
    "passwd -" * 25_000,
    "htpasswd" + " -c -C 12" * 22_000,
    "rabbitmqctl add_user " * 9_000,
    # a command's flags that never give a passphrase; a user that never reaches its `%`
    "zip a -x b " * 18_000,
    "ssh-keygen -p -N " * 12_000,
    "smbclient -U " + "a" * 200_000,
    "ldapsearch -w " * 14_000,
    # SQL's `IDENTIFIED BY` with no value, after words each of which could start the statement; `WITH` a
    # plugin name that never ends
    # an Entra ID client secret's `<digit>Q~` where each could start one
    "1Q~" * 60_000,
    "sha256~" * 30_000,
    # a recovery phrase's name repeated, and one word short of the shortest phrase each time
    "mnemonic " * 25_000,
    ("seed phrase: " + "abc " * 11 + "1 ") * 3_000,
    "cmVmdGtu" * 25_000,
    "identified by " * 14_000,
    "to to to to to to to to identified by " * 6_000,
    "IDENTIFIED WITH " + "a" * 200_000,
    # setters that never get a closing quote; a strong credential word with no UUID after it
    'setPassword("' * 15_000,
    'setApiKey("' + "a" * 200_000,
    "webhook secret " * 13_000,
    # an XML element named like a password that never closes; a URL user that never reaches a host
    "<db_pass>" * 22_000,
    "https://" + "a" * 200_000 + "@",
    # a directive or key name repeated with no value; a passphrase that never ends
    "requirepass " * 16_000,
    "wpa_psk=" * 25_000,
    'psk="' + "a" * 200_000,
    # JSON Web Keys: a `d` that never ends; curves and key types before a `d` that never comes; a `d`
    # too plain to be a key before each `p` or `OKP` (every anchor finds a `d` to try)
    '"p":"a","d":"' + "a" * 200_000,
    '{"crv": "P-256", ' * 11_000,
    '{"kty":"OKP",' * 14_000,
    ('"d":"' + "a" * 60 + '","p":"') * 3_000,
    ('"d":"' + "a" * 60 + '","kty":"OKP"') * 2_500,
    '"d":"' + "a" * 60 + '","kty":"OKP"' * 12_000,
    # a DER key's anchors repeated in one base64 run, and each after a word break
    "M" + "AgEAAoI" * 28_000,
    " MAQEEI" * 28_000,
    # a PuTTY key whose MAC line never holds a MAC; a word after a colour code, again and again
    "PuTTY-User-Key-File-3: " + "Private-MAC: x\n" * 14_000,
    "\x1b[1;33mhtpasswd -b " * 14_000,
    "\x1b[32mx is the api key " * 10_000,
    ("a1" * 60 + " as the sentry api key ") * 1_400,
    ("a1" * 60 + " as the stripe webhook secret ") * 1_300,
    ("sha256:" + "a1" * 60 + " is the signing key ") * 1_200,
    "the secret below\n\n```" * 12_000,
    # short provider prefixes run together, each followed by a body one character too long
    ("as-" + "a1" * 11) * 7_000,
    ("ser." + "a1" * 11 + "b") * 6_000,
    # a secret's name then its sibling `value` field, again and again, the value never long enough
    '- name: DB_PASSWORD\n  value: "x"\n' * 6_000,
    ('"name": "' + "a_" * 50 + 'secret", "value": ') * 1_500,
    '- name: API_TOKEN\n  value: "x"\n' * 6_000,
    ('"name": "' + "a_" * 50 + 'key", "value": ') * 1_500,
    ("a_key" + "\\n" * 30 + " --value") * 2_000,
    # an element's secret name, then blanks and no value element, again and again
    ("<key>api_key</key>" + "\\n" * 40) * 1_500,
    '<entry key="password">' * 9_000,
    ("<key>" + "a" * 64 + "key</key><string>" + "x" * 7) * 1_500,
    # a command's credential flag or connect string, the value never ending as it must
    "curl --oauth2-bearer " * 9_000,
    ("http -a " + "a" * 120 + ":") * 1_500,
    ("sqlplus -s -l " + "a" * 30 + "/" + "b" * 128) * 1_200,
    ("\nCONNECT a/" + "b" * 127 + " ") * 1_400,
    ('x.login("' + "a" * 127 + '", "' + "b" * 5) * 1_200,
    "@tcp(" * 40_000,
    # a secret variable's expansion with a default that never closes
    # a declared secret's block, its default never quoted
    ('variable "db_password" {' + " " * 290 + 'default = "x') * 600,
    ('"DBPassword": {"Default": ' * 6_000),
    "${DB_PASSWORD:-" * 14_000,
    ("${A_TOKEN:-" + "b" * 250 + " ") * 750,
    ("a:" + "b!" * 100 + "@tcp(") * 900,
    "password ,\n" + " " * 20 + "--" * 40_000,
    "echo " + "secret set " * 20_000,
    ("echo '" + "a1" * 200 + "' | gh secret set ") * 500,
    # a secret store's command with flags and no body, and a body one character short
    ("gh secret set " + "A_" * 60 + " --repo " + "a" * 200 + " --env x ") * 300,
    ("gh secret set X -b " + "a1b" * 2 + "c ") * 4_000,
    "doppler secrets set " * 20_000,
    # Read line numbers between a credential word or a JSON member and what follows
    "token is:\n     1→\n     2→```\n" * 8_000,
    ('"dp": "' + "a" * 60 + '",\n     2→  ') * 2_500,
    "<apiToken>\n     1→ \n     2→ " * 7_000,
    # a provider's key word before a UUID's head again and again; base64's `+` and `/` after a
    # credential word, with no padding to end them
    ("heroku key " + "7d26dc47-bbcf-") * 10_000,
    "the secret to (" * 14_000,
    "api key " + "+" * 200_000,
    "secret " + "/A" * 100_000,
    # a credential word inside a token's prefix, again and again, and after a run of short segments
    "acme_live_" * 20_000,
    "a-" * 100_000 + "token-" + "A1b2" * 10,
    # a URL's path of short segments, and one of webhook segments, each a token too short
    "https://h" + "/a" * 100_000 + "/webhook/" + "A1b2" * 10,
    ("https://h" + "/webhook/" + "A1" * 9 + "!") * 8_000,
    # tokens, each put somewhere, before one phrase that names a credential
    "x7Kp2mQ9vLz4wR8s to the " * 8_000 + "as the api key",
    "0123456789abcdef into " * 9_000 + "as the api key",
    # a header's colon right before a scheme word never followed by its blank
    ("Authorization:" + "\\" * 8 + '"Bearer') * 8_000,
    # a password's verb phrase again and again, each value a character short
    "my pw is the password was changed to pass2wd " * 4_000,
    # a catch hook's account number one digit too long, again and again
    ("://hooks.zapier.com/hooks/catch/" + "9" * 13) * 4_000,
    # a passphrase flag whose value is always a flag
    ("--encryption-passphrase " + "-" * 3) * 8_000,
    # a digest's label after a credential word, each digest too short
    ("passkey.html,sha256=" + "A1b2" * 3) * 6_000,
    # crates.io's prefix before 32 lower-case letters, none a digit
    ("cio" + "ab" * 16) * 5_000,
    # Together's prefix before a body one character too short
    ("tgp_v1_" + "-" * 39 + " ") * 4_000,
    # a bearer token's `!` (a Salesforce session id) before a tail one character too short, and none
    ("Authorization: Bearer " + "a1" * 8 + "!" + "b2c" * 2 + "!" * 3_000 + "\n") * 20,
    # Yandex's prefix before a body of underscores and dashes that never ends
    " y0_" + "_-a1" * 50_000,
    # Klaviyo's prefix, six characters and `_`, before hex one character too short
    ("pk_abc123_" + "ab12" * 8 + "a ") * 4_000,
    # `appid=` before hex one character too short
    ("&appid=" + "a1" * 15 + "f&") * 4_000,
    # a scheme word, then a token that never ends in a quote or a line's end
    ("Authorization: Scheme " + "a1._" * 1_100 + "#") * 40,
    # the scanner's login before hex one character too short
    ("-Dsonar.login=" + "a1" * 19 + "a ") * 4_000,
    # a Facebook token's body one character too long
    ("EAAB" + "a1" * 200 + "b") * 500,
    # an XML key's member that never closes, and one key of more members than RSA has
    ("<RSAKeyValue>\\n<Modulus>" + "A" * 1_400) * 140,
    "<RSAKeyValue>" + "<P>AQAB</P>" * 18_000,
    # a PKCS#12 file's start again and again in one base64 run, and each after a word break
    "MIIJogIBAzCCCVgGCSqGSIb3DQEHAaCC" * 6_000,
    ("x MIIJogIBAzCCCVgGCSqGSIb3DQEHAaCC" + "A1" * 20 + "!") * 2_500,
    # a German password's 'für' clause that never reaches its verb, and a value one character short
    ("das Passwort für " + "den " * 5) * 8_000,
    ("Passwort lautet Xk9#abc ") * 8_000,
    # an OpenAI key's prefix with no watermark after it, a GitHub app token's parts that never make a
    # JWT, SAS parameters that never reach `sig=`, an Azure signature whose 76 characters before it
    # are never a key
    "sk-" * 66_000,
    ("ghs_1_" + "a." * 14 + " ") * 5_000,
    ("ghs_1_" + "a" * 40 + ".b") * 5_000,
    "sv=2024-01-01" + "&a=b" * 50_000,
    ("A" * 76 + "ACOG") * 2_500,
]


# Values that a check with an ambiguous repetition would try every way, each ending so that no way
# matches: one filler character's run (`-` matches both `\1` and `[-_.]`), capitals after a word,
# a name of key words, a template's braces.
HOSTILE_VALUES = [
    *(filler * 64 + "!" for filler in "-_.x*#"),
    "examplevalidkey" + "ABCDEFGHIJKLMNOPQRSTUVWXYZ" * 3 + "S=",
    "SECRET_" + "KEY" * 38 + "=",
    "${" + "{" * 256,
    "a-word" * 64 + "!",
]


@pytest.mark.parametrize("name", sorted(VALIDATORS))
def test_every_value_check_returns_on_hostile_values(name: str) -> None:
    """A backtracking check would not return in minutes (the suite's timeout fails it)."""
    for value in HOSTILE_VALUES:
        assert VALIDATORS[name](value) in (True, False)


@pytest.mark.parametrize("text", ADVERSARIAL, ids=[f"adversarial-{i}" for i in range(len(ADVERSARIAL))])
def test_adversarial_input_is_redacted_whole(text: str) -> None:
    """200 KB of the worst repetition for each rule family comes back as a whole JSON line and text.
    How long it takes (a backtracking regex would take minutes; the linear ones milliseconds) is
    bench/bench_redact.py's `adversarial` figure, not a test's."""
    line = json.dumps({"type": "user", "message": {"content": text}}).encode()
    assert json.loads(REDACTOR.redact_bytes(line).data)["type"] == "user"
    redacted, _ = REDACTOR.redact_text(text)
    assert isinstance(redacted, str) and redacted


def test_the_rules_share_the_sixteen_documented_scans() -> None:
    """Every scan is a pass over each buffer: an anchor that starts a scan of its own, or joins one
    and shortens its literal (an `a…` anchor beside `auth` would make it stop at every `a`), costs
    every byte. docs/redaction.md "Speed" names these."""
    raw = {"_", "-", ".", "A", "://", "=", "$", "~", "SK", "GR1348941", "azure"}
    lowered = {"p", "ke", "c", "auth", "fied"}
    assert sorted(REDACTOR.scans) == sorted([*((k, False) for k in raw), *((k, True) for k in lowered)])


def test_anchors_start_with_a_literal() -> None:
    """The scans are merged by leading literal; a rule whose anchor starts with a class or group
    would force a slow scan of every byte."""
    for spec in RULE_SPECS:
        for anchor in (*spec.rule.anchors, *spec.rule.lower_anchors):
            assert re.match(r"\\[^A-Za-z0-9]|[^\\\[(.*+?{|^$]", anchor), (spec.rule.name, anchor)
