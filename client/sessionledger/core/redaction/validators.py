"""Checks that tell a secret from code, prose and placeholders once a rule's regex has matched.

A rule's regex finds where a secret *can* be (`API_KEY=…`, `password is …`); the validator named in
the rules data looks at the value alone and vetoes names (`settings.API_KEY`, `getPassword`),
templates (`${TOKEN}`, `<your-key>`), dummies (`changeme`, `xxxxxxxx`), documented examples
(`…EXAMPLE`), paths and English words. Every function here is linear in its input.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections import Counter
from collections.abc import Callable
from itertools import pairwise

from .decoding import base64_text

# Random keys score 3.5-6 bits per character (hex 4.0, base62 ~5); "changeme" and "password"
# score 2.75, "xxxxxxxx" 0. Short values cannot reach it: log2(len) caps the entropy.
ENTROPY_THRESHOLD = 3.0
# People pick passwords: an 8-character one with two repeated characters scores ~2.5.
PASSWORD_ENTROPY = 2.5
MIN_SECRET_LENGTH = 8
_MIN_HEX_LENGTH = 20  # shorter hex strings are ids and short hashes (`"ApiKey": "48205d4ffd7feba3"`)
_MIN_DIGIT_KEY = 24  # digits alone are an id, a count or a time; past an int64's 19 and a few more, a key
_NAME_SWITCH_RATIO = 0.3  # random base62/hex switch class at ~40-60% of characters, names below 25%

_DUMMIES = frozenset(
    {
        "password",
        "passwd",
        "secret",
        "changeme",
        "changeit",
        "example",
        "redacted",
        "required",
        "optional",
        "undefined",
        "nullable",
        "username",
        "hunter2",
        "letmein",
        "00000000",
    }
)
# A whole value that is documentation rather than a credential: `your_api_key_here`, `<token>`,
# `insert-your-token`, `changeme`, `fake_password`. Only the *whole* value counts: a real password
# may hold any word (`SampleTeam#2024`, `example3wSS…`), so a word inside a value vetoes nothing.
_PLACEHOLDER_WHOLE_RE = re.compile(
    r"(?i)(?:(?:your|my|insert|replace|enter|put|add|set|the|an?|with|me|own|real|some|here|is)[_ .-]?){0,4}"
    r"(?:(?:api|access|secret|auth|bot|app|client|private|db|database|admin|user|service|personal)[_ .-]?){0,3}"
    r"(?:key|token|secret|password|passwd|pass|pwd|id|value|example|placeholder|dummy|fake|sample|test"
    r"|redacted|changeme|changeit|notreal|not[_ .-]?real|string|credentials?|here)"
    r"(?:[_ .-]?(?:key|token|secret|password|here|goes|value|example|placeholder|only|dummy|fake|sample"
    r"|test|[0-9]{1,4})){0,4}"
)
# Masks and fillers: `xxxxxxxx`, `********`, `sk_live_XXXXXXXX…`, `........`, `00000000`. Only
# filler characters count: base64 and base62 keys hold runs of `A` (every OpenSSH key body does).
_FILLER_RE = re.compile(r"([xX*.#?•_-])\1{5}|0{8}")
# Keyboard runs: eight letters or digits in sequence (`…abcdefghijklmnop…`, `…0123456789`), which
# a random key practically never holds (26**-7 per position) and a name in code never does. A value
# holding one is made up (`test_key_1234567890abcdefghij`, `secret12345678`), neither a name nor a
# template, and a made-up value under a credential name may be the key someone issued: it goes.
_RUNS = ("abcdefghijklmnopqrstuvwxyz", "qwertyuiop", "0123456789")
_SEQUENCES = (
    "0123456789",
    *(run[i : i + 8] for run in _RUNS for i in range(len(run) - 7)),
)
_SEQUENCE_RE = re.compile("|".join(_SEQUENCES))
_MIXED_WITH_DIGIT_RE = re.compile(r"(?=[^a-z]{0,256}[a-z])(?=[^A-Z]{0,256}[A-Z])(?=[^0-9]{0,256}[0-9]).{1,256}", re.S)
# The documented AWS example keys (AWS docs end every example key in `EXAMPLE`/`EXAMPLEKEY`).
# A 40-character secret key that ends in a word saying so (`…SAMPLEKEY`, `…TESTKEY`) is one made up
# after them; a scrambled word (`…EFUCDlEKEY`) is not.
_AWS_EXAMPLE_RE = re.compile(
    r"(?:AKIA|ASIA)[A-Z0-9]{9}EXAMPLE|[A-Za-z0-9/+]{30}EXAMPLEKEY|[A-Za-z0-9/+]{31}SAMPLEKEY"
    r"|[A-Za-z0-9/+]{32}DUMMYKEY|[A-Za-z0-9/+]{33}(?:TEST|FAKE)KEY"
)
# Whole-value templates: `${VAR}`, `$VAR`, `{{ var }}`, `$(cmd)`, `%(name)s`, `%VAR%`, `<value>`,
# `<%= x %>`, `{% x %}`, `@VAR@`, `{0}`, `%s`, an f-string's `{self.pw}`, `{get_pat(name)}`, `{cfg["pw"]}`;
# a password holding `$`, `{` or `}` elsewhere is no template.
_TEMPLATE_RE = re.compile(
    r"\$\{[^{}]{1,128}\}[^{}$]{0,16}|\{\{[^{}]{0,128}\}\}|\$\(.{0,256}|`.{0,256}"
    r"|%\([A-Za-z0-9_]{1,64}\)[sd]|%[A-Za-z_][A-Za-z0-9_]{0,63}%|<[^<>]{1,128}>|<%.{0,256}%>|\{%.{0,256}%\}"
    r"|@[A-Za-z_][A-Za-z0-9_]{0,63}@|\{[0-9A-Za-z_]{0,64}\}|%s|\*{1,}|#{1,}|\[REDACTED[^\]]{0,80}\]"
    r"|\{[A-Za-z_][A-Za-z0-9_]{0,63}(?:\.[A-Za-z_][A-Za-z0-9_]{0,63}){0,8}(?:\([^{}()]{0,128}\)|\[[^{}\[\]]{1,128}\])?\}",
    re.S,
)
# A shell, PHP or PowerShell variable: `$DB_PASSWORD`, `$db_pass`, `$dbPassword`, `$Password`,
# `$ESXiPass`, `$1`; `$xluWx2Mq…` (mixed case and digits at random) is a password that starts with `$`.
_VARIABLE_RE = re.compile(
    r"\$(?:[A-Z_][A-Z0-9_]{0,127}|[a-z_][a-z0-9_]{0,127}|[a-z]{1,32}(?:[A-Z][a-z]{1,32}){1,8}|[0-9]"
    r"|[A-Z]{1,4}[a-z]{1,32}(?:[A-Z]{1,4}[a-z]{1,32}){0,8})"
)
# Code built of names, not a secret: a path on a variable in capitals (`$BASE_URL/classroom/#/reset`;
# `$ecret/9Xk2` may be a password), a page anchor of words (`#add-password`), a Rails route's
# `controller#action` (`cms/sites/passwords#update`)
_NAMED_CODE_RE = re.compile(
    r"\$[A-Z_][A-Z0-9_]{1,127}/.{0,1024}|#[a-z]{2,32}(?:-[a-z]{2,32}){1,8}"
    r"|[a-z_]{2,32}(?:/[a-z_]{2,32}){1,8}#[a-z_]{2,32}",
    re.S,
)
# Interpolation inside a value (`postgres://${DB_USER}:${DB_PASS}@…`, `Bearer {{token}}`): a
# `${NAME}` or `{{ name }}` names a variable, whereas a password's `{` rarely opens an identifier.
_INTERPOLATION_RE = re.compile(
    r"\$\{[A-Za-z_][A-Za-z0-9_.:-]{0,127}\}|\{\{[ \t]{0,4}[A-Za-z_.][A-Za-z0-9_.]{0,127}[ \t]{0,4}\}\}"
)
# values that are data, not secrets: dates, times, versions, IP addresses
_NOT_A_SECRET_RE = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[T ][0-9:.]{5,15}(?:Z|[+-]\d{2}:?\d{2})?)?"  # a date, a timestamp
    r"|v?\d{1,4}(?:\.\d{1,6}){1,3}(?:[-+][A-Za-z0-9.]{1,20})?"  # a version
    r"|\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?"  # an IPv4 address
)
_EXPRESSION_RE = re.compile(r"\[-?\d{0,3}\]|\(\)|[,;]$")
# `password1`, `new_password2`, `mypass`: names, never values
_PASSWORD_WORD_RE = re.compile(r"(?i)(?:new|old|my|the|your|confirm)?[_-]?pass(?:word|wd)?[_-]?\d{0,3}")
_PATH_PREFIXES = ("/", "./", "../", "~/", "C:\\", "c:\\", "file:")
# base64 may start with `/` (one key in 64); a path never ends in its padding
_PADDED_BASE64_RE = re.compile(r"/[A-Za-z0-9+/]{14,4094}={1,2}")
_WORDLIKE_RE = re.compile(r"[A-Za-z_][A-Za-z_./:-]*")  # identifier, dotted name, path: no digit
_SEGMENTED_RE = re.compile(r"[A-Za-z0-9]+(?:[._:/-]+[A-Za-z0-9]+)*")
_HEX_RE = re.compile(r"[0-9a-fA-F]+")
_SNAKE_ATTRIBUTE_RE = re.compile(r"\.[a-z]{2,32}(?:_[a-z]{2,32}){1,8}(?:\(\))?$")
_DOTTED_RE = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*(?:(?:\.|::|->)[A-Za-z_$][A-Za-z0-9_$]*)+(?:\(\))?")
# `getPassword`, `HTTPServer`, `parseJSONBody`: words, and acronyms of 2–4 capitals
# before a word or at the end. Each run of capitals has one way to match (its last capital starts
# the next word, so the run is one capital or three and more): splitting it into acronyms
# backtracked exponentially on a long run of capitals that then failed (`keyABCDEFGHIJ…XYZ=`).
_CAMEL_RE = re.compile(
    r"[A-Za-z][a-z]{2,}+(?=[A-Z])(?:(?:[A-Z](?![A-Z])|[A-Z]{3,}+)[a-z]{2,}+)*+(?:[A-Z]{2,}+)?"
    r"|[a-z]{2,}+(?:[A-Z][a-z]{2,}+)++"
)
# DB_PASSWORD, REQUIRED; db_password, rc2_key_st, user-profile when their parts are words (a
# lower-case token with dashes, `qscgyygcsq-wdvvok7slk…`, is no name)
_CONSTANT_RE = re.compile(r"[A-Z]+|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_SNAKE_RE = re.compile(r"[a-z0-9]+(?:[_-][a-z0-9]+)+")
_VOWELS = frozenset("aeiou")
# words inside identifiers: `PrivateKey` → Private, Key; `HTTPServer` → HTTP, Server; `v2` → v
_WORD_SPLIT_RE = re.compile(r"[A-Z]{2,}(?![a-z])|[A-Z]?[a-z]+|[A-Z]")
_DIGIT_RUN_RE = re.compile(r"[0-9]+")
_HEXISH_RE = re.compile(r"[0-9a-fA-F]+(?:-[0-9a-fA-F]+)+")  # uuids and dashed hex: data, not names
_SHORT_WORDS = frozenset(
    [
        "key",
        "api",
        "id",
        "url",
        "uri",
        "get",
        "set",
        "new",
        "old",
        "max",
        "min",
        "num",
        "str",
        "int",
        "len",
        "val",
        "var",
        "tmp",
        "src",
        "dst",
        "cfg",
        "env",
        "app",
        "log",
        "err",
        "msg",
        "req",
        "res",
        "ctx",
        "obj",
        "arr",
        "buf",
        "pos",
        "end",
        "row",
        "col",
        "db",
        "io",
        "os",
        "fs",
        "ssl",
        "tls",
        "ssh",
        "rsa",
        "aes",
        "sha",
        "md",
        "jwt",
        "sso",
        "oid",
        "uid",
        "gid",
        "pid",
    ]
)
_CONSONANT_RUN_RE = re.compile(r"[b-df-hj-np-tv-xz]{4,}")


def shannon_entropy(text: str) -> float:
    """Bits per character of `text` (0.0 for ""): random secrets score high, words low."""
    if not text:
        return 0.0
    size = len(text)
    return -sum(n / size * math.log2(n / size) for n in Counter(text).values())


def placeholder(value: str) -> bool:
    """The whole value is a template, dummy, documented example, mask, marker left by an earlier
    pass, or plain data (a date, a version, an IP address, `password2`)."""
    if _TEMPLATE_RE.fullmatch(value) or _INTERPOLATION_RE.search(value) or _AWS_EXAMPLE_RE.fullmatch(value):
        return True
    if _NOT_A_SECRET_RE.fullmatch(value) or _PASSWORD_WORD_RE.fullmatch(value) or _VARIABLE_RE.fullmatch(value):
        return True
    if _NAMED_CODE_RE.fullmatch(value):  # apart from the variables: `$VAR/…` is no whole variable
        return True
    low = value.lower()
    if low in _DUMMIES or _FILLER_RE.search(value) is not None:
        return True
    # `mySecretPass1` is built of words, yet mixed case and a digit make it a password people pick:
    # only a word-built value in one case or with separators (`your_api_key_here`) is a template
    if _PLACEHOLDER_WHOLE_RE.fullmatch(value) and not _MIXED_WITH_DIGIT_RE.fullmatch(value):
        return _SEQUENCE_RE.search(value) is None
    return _masked(value)


def _masked(value: str) -> bool:
    """Mostly filler: `xxxx1234`, `sk_live_****abcd`, `EAAAAAAA…` (a masked or dummy key)."""
    if not value:
        return True
    if sum(value.count(c) for c in "xX*.•") * 2 >= len(value):
        return True
    # a character filling half the value shows at its start, a third, the middle or its end
    samples = {value[0], value[len(value) // 3], value[len(value) // 2], value[-1]}
    return any(value.count(c) * 2 >= len(value) for c in samples)


def _literal(value: str, minimum: int = MIN_SECRET_LENGTH) -> bool:
    """Long enough, no template, placeholder, path, URL or expression (`tokens[0]`, `get()`)."""
    if len(value) < minimum or placeholder(value) or "://" in value or _EXPRESSION_RE.search(value):
        return False
    return not value.startswith(_PATH_PREFIXES) or _PADDED_BASE64_RE.fullmatch(value) is not None


# A name holds short numbers (`s3`, `v2`, `2024`), not a run of six digits or more; and an
# alphabet run (`abcdef`, `xyz`) is filler someone typed into a made-up key, not a word of a name
_LONG_DIGIT_RUN_RE = re.compile(r"[0-9]{6}")
_ALPHABET_RUNS = frozenset(
    run[i:j]
    for run in ("abcdefghijklmnopqrstuvwxyz", "qwertyuiop")
    for i in range(len(run))
    for j in range(i + 3, len(run) + 1)
)


def _name_like(value: str) -> bool:
    """Identifier segments made of words: `fs.s3.consistent`, `PKCS7PrivateKeyTypes`,
    `ed25519.Ed25519PrivateKey`, `user-profile-v2`. Most of their letters sit in pronounceable
    words of four letters or more (or short common ones: `key`, `api`, `id`); a random key's
    letters mostly do not, whatever its case pattern."""
    if not _SEGMENTED_RE.fullmatch(value) or _LONG_DIGIT_RUN_RE.search(value):
        return False
    tokens = _WORD_SPLIT_RE.findall(value)
    letters = sum(len(t) for t in tokens)
    if letters == 0:
        return False
    in_words = sum(
        len(t)
        for t in tokens
        if ((len(t) >= 4 and _wordish(t)) or t.lower() in _SHORT_WORDS) and t.lower() not in _ALPHABET_RUNS
    )
    digit_runs = len(_DIGIT_RUN_RE.findall(value))  # names: `s3`, `v2`; random keys interleave digits
    # (a run of digits per 12 letters or more is random: `wdvnousa87acfxp9ioasrea4tbeasrfa`)
    return in_words >= 0.6 * letters and digit_runs <= max(2, letters // 12)


def _wordish(token: str) -> bool:
    """A word inside an identifier (`Types`, `SNAPSHOT`, `consistent`): a quarter of vowels
    (y counts) and no run of five consonants."""
    low = token.lower()
    vowels = sum(1 for c in low if c in "aeiouy")
    return vowels / len(low) >= 0.25 and re.search(r"[b-df-hj-np-tv-xz]{5,}", low) is None


def wordy(value: str) -> bool:
    """Pronounceable like an English word or identifier part (`required`, `stored`, `mysecretpassword`):
    enough vowels and no run of four consonants. Random letters rarely are."""
    letters = value.lower()
    if not letters.isalpha():
        return False
    vowels = sum(1 for c in letters if c in _VOWELS)
    return vowels / len(letters) >= 0.25 and _CONSONANT_RUN_RE.search(letters) is None


def identifier(value: str) -> bool:
    """Code rather than data: `settings.DB_PASSWORD`, `self.password`, `getPassword`, `DB_PASSWORD`,
    `db_password`, `PasswordField`, `os.environ.get`."""
    if _HEXISH_RE.fullmatch(value):
        return False
    value = value.lstrip("_+-!")  # `_PasswordType`, `+dollarToken`
    if _DOTTED_RE.fullmatch(value):
        # an attribute in snake_case words ends code, whatever the class before it (`XSalsa20.key_length`)
        if _SNAKE_ATTRIBUTE_RE.search(value):
            return True
        return _name_like(value.replace("$", "").replace("::", ".").replace("->", ".").removesuffix("()"))
    # a keyboard run is typed into a made-up value (`test_key_1234567890abcdefghij`,
    # `abcdefghijklmnopqrstuvwxyzABCDEF`, `ABCDEFGHIJKLMNOPQRSTUVWXYZ`), not a name
    typed = _SEQUENCE_RE.search(value.lower()) is not None
    if _CAMEL_RE.fullmatch(value) or _CONSTANT_RE.fullmatch(value):
        return not typed
    if _SNAKE_RE.fullmatch(value):
        if len(value) < 20 or not any(c.isdigit() for c in value):
            return True
        return not typed and _name_like(value)
    return not value.isalnum() and _name_like(value)


def _random_letters(value: str) -> bool:
    """Letters only, yet random: mixed case switching often, or unpronounceable."""
    if wordy(value) or identifier(value):
        return False
    return not _name_like(value) or not any(c in _VOWELS for c in value.lower())


def looks_secret(value: str, threshold: float = ENTROPY_THRESHOLD) -> bool:
    """Whether a value assigned to a `*_KEY`/`*_TOKEN`/`*_SECRET` name is a secret rather than code.

    Assignments in code mostly hold names (`get_token`, `settings.API_KEY`), templates
    (`${TOKEN}`, `<your key>`), dummies (`changeme`, `xxxx`) or paths, while a random key almost
    always has a digit and high per-character entropy. Letters-only keys (Hugging Face's) pass
    when they are long, random-looking and no word or identifier.
    """
    # (a `+` first is base64's, or a separator's before a name: `…]+/oauth2credentialprovider/`)
    if not _literal(value) or _name_like(value.lstrip("+/")) or identifier(value):
        return False
    if value.isdigit() and len(value) < _MIN_DIGIT_KEY:
        return False
    if len(value) < _MIN_HEX_LENGTH and _HEX_RE.fullmatch(value):
        return False
    if _WORDLIKE_RE.fullmatch(value):
        letters = value.replace("_", "").replace("-", "")
        if len(letters) < 16 or not letters.isalpha() or not _random_letters(letters):
            return False
        return shannon_entropy(value) >= max(threshold, 3.5)
    if _HEX_RE.fullmatch(value):
        threshold = min(threshold, hex_entropy_floor(len(value)))
    return shannon_entropy(value) >= threshold


def hex_entropy_floor(length: int) -> float:
    """The entropy below which a hex string of `length` characters is no longer random. A random one
    scores about 4 - 10.8/length bits (Miller-Madow: 16 symbols seen through few samples), 3.46 at
    20 characters, and one in six of those falls under 3.2: a bar made for longer and base62 keys
    left as many real hex keys in place. This one is 0.6 under the expectation; a repeated pattern
    (`deadbeefdeadbeef…`, 2.2) stays under it."""
    return 4.0 - 10.8 / length - 0.6


# A passphrase: capitalised words joined by one separator, with a digit or a symbol
# (`Sunny-Day-2024`, `Blue.Harbor.77`). `identifier` reads it as a name by its words, but code
# names its things in one case per word run (`user-profile-v2`, `DB_PASSWORD`, `getPassword`).
_PASSPHRASE_RE = re.compile(
    r"(?=[^0-9!@#$%^&*?]{0,128}+[0-9!@#$%^&*?])[A-Z][a-z]{1,15}+([-_.+])[A-Z0-9][a-z0-9]{0,15}+"
    r"(?:\1[A-Z0-9][a-z0-9]{0,15}+){0,6}+[!@#$%^&*?]{0,3}"
)


# what a sentence says a password is when it names no password: its state or a check's verdict
_PASSWORD_STATES = frozenset(
    (
        "none", "null", "nil", "true", "false", "empty", "blank", "unset", "missing", "hidden", "masked",
        "invalid", "incorrect", "wrong", "correct", "valid", "expired", "weak", "strong", "same", "different",
        "default", "random", "encrypted", "hashed", "stored", "ignored", "mandatory",
    )
)  # fmt: skip


def looks_password(value: str, threshold: float = PASSWORD_ENTROPY, *, words: bool = False) -> bool:
    """A password value next to a password-like name: people pick `Summer2024!`, `hunterxyz`,
    `BmCqPzWx`, `Sunny-Day-2024`; code holds `settings.DB_PASSWORD`, `getpass`, `PasswordField`,
    `required`. A pronounceable word (`whiteduke`) counts only with `words`."""
    if not _literal(value) or (identifier(value) and not _PASSPHRASE_RE.fullmatch(value)):
        return False
    if value.isalpha() and wordy(value) and not words:
        return False
    if value.isdigit() and len(set(value)) < 4:
        return False
    return shannon_entropy(value) >= threshold


def assigned_password(value: str) -> bool:
    """A value assigned to a password's name in a way code and prose do not write (`DB_PASSWORD=whiteduke`,
    `password: "goodspec"`): the name says what it is, so a word someone picked counts; a template,
    dummy, name in code or a state word (`required`, `hidden`) does not."""
    return value.lower() not in _PASSWORD_STATES and looks_password(value, words=True)


def strict_password(value: str) -> bool:
    """A password where a bare word is more likely code or English: a bare value assigned in code
    (`password = hunter`), prose ("the staging password is …"), `.netrc`'s `password …`.
    It needs a digit, a symbol, or random mixed-case letters."""
    if "/" in value or "\\" in value or not looks_password(value):
        return False
    upper, lower = any(c.isupper() for c in value), any(c.islower() for c in value)
    return any(c.isdigit() for c in value) or (upper and lower) or (upper and not value.isalpha())


def quoted_password(value: str) -> bool:
    """A password a sentence quotes ("the default password is 'blooberry'"): the quotes mark the
    value, so a word or a short one counts; not a template, dummy, name in code or a state word."""
    low = value.lower()
    if len(value) < 4 or placeholder(value) or low in _PASSWORD_STATES:  # (placeholder knows the dummies)
        return False
    return not identifier(value)


# OpenAI's keys carry base64 of "OpenAI" between their two random halves
_OPENAI_WATERMARK = "T3BlbkFJ"
_OPENAI_HALF = 20


def openai_key(value: str) -> bool:
    """An `sk-…` key: OpenAI's watermark between two halves of 20 or more marks one whatever the
    halves look like (`…abcdefghijklmnopqrstT3BlbkFJabcdefghijklmnopqrst`); another provider's
    `sk-` key has to look random."""
    if placeholder(value):
        return False
    head, watermark, rest = value.partition(_OPENAI_WATERMARK)
    if watermark and min(len(head.rsplit("-", 1)[-1]), len(rest)) >= _OPENAI_HALF:
        return True
    return random_token(value)


def random_token(value: str) -> bool:
    """Mixed case and a digit with high entropy, or a long hex string: tells an `sk-…` key from
    `sk-learn-estimator`."""
    if placeholder(value):
        return False
    body = value.split("-", 1)[1] if value.startswith("sk-") else value
    tail = body.rsplit("-", 1)[-1]
    if len(tail) >= 32 and _HEX_RE.fullmatch(tail):
        return True
    mixed = any(c.isdigit() for c in body) and any(c.islower() for c in body) and any(c.isupper() for c in body)
    return mixed and shannon_entropy(body) >= 3.5


# A masked key (`sk_live_****4242`, `ghp_••••…`): a mask filling half the value shows no secret.
_MASK_RUN_RE = re.compile(r"([*\u2022])\1{3,}")
# A value that is nothing but one filler character (`xxxxxxxx`, `XXXX-XXXX`, `________`).
# (possessive: a `-`, `_` or `.` after a first one of its kind matches both branches, and an
# ambiguous repetition tried every way on a run that then failed: `----…-!`)
_WHOLE_FILLER_RE = re.compile(r"([xX*\u2022.#?_-])(?:\1|[-_.]){5,}+")


def _masked_body(value: str) -> bool:
    return any(value.count(run.group(1)) * 2 >= len(value) for run in _MASK_RUN_RE.finditer(value))


def token(value: str) -> bool:
    """A provider token with a fixed prefix: a known prefix at the provider's length is a secret
    whatever its body looks like (`shippo_live_aaaa…`, `pgar_abcdefgh…1`, `AKCxxxxxxxxxx`,
    `sk-lf-0000…`: keys someone may have issued, or a scanner's sample of one), so only a whole
    value that is a template, dummy, documented example or filler, or a masked key (a `*` or `•`
    mask over half of it: the key is not there), is vetoed."""
    if _masked_body(value) or _WHOLE_FILLER_RE.fullmatch(value):
        return False
    if _TEMPLATE_RE.fullmatch(value) or _INTERPOLATION_RE.search(value) or _AWS_EXAMPLE_RE.fullmatch(value):
        return False
    if _VARIABLE_RE.fullmatch(value) or value.lower() in _DUMMIES:
        return False
    return not (_PLACEHOLDER_WHOLE_RE.fullmatch(value) and not _MIXED_WITH_DIGIT_RE.fullmatch(value))


def unworded_token(value: str) -> bool:
    """A token whose short prefix (`AP` + a hex digit) English and code also start: not when the
    value is built of words (`APDeveloperGuide`, `APEXCharts`)."""
    return token(value) and not _name_like(value) and not identifier(value)


def has_digit(value: str) -> bool:
    """Real Slack tokens carry numeric team/user ids; `xoxb-your-token-here` does not."""
    return token(value) and any(c.isdigit() for c in value)


_TAIL = 20  # the shortest body after a fixed prefix these tokens have (`GR1348941` + 20)


def unrepeated_token(value: str) -> bool:
    """A fixed-prefix token (`GR1348941…`, `SK…`) whose body someone filled in by hand repeats a
    unit of up to four characters to its end (`XXXX…`, `123123…`: its last 20 characters show it)
    or holds a run of six filler characters (`sha256~XXXXXXXXXX_PUT_YOUR_TOKEN_HERE…`), which a
    random body practically never does."""
    tail = value[-_TAIL:]
    if _FILLER_RE.search(value):
        return False
    return token(value) and not any(tail == (tail[:unit] * _TAIL)[:_TAIL] for unit in range(1, 5))


def spaced_app_password(value: str) -> bool:
    """Google's app password as it is shown, four groups of four letters (`qwhz kdpa mxvt rnbe`): random
    letters, not words (`just some text here`) nor a typed run (`abcd efgh ijkl mnop`)."""
    letters = value.replace(" ", "")
    return not wordy(letters) and _SEQUENCE_RE.search(letters.lower()) is None and not _masked(letters)


# Recovery phrases published as tools' defaults (Hardhat, Ganache) or BIP-39's test vectors: known to
# everyone, so no wallet's secret
_PUBLIC_MNEMONICS = frozenset(
    (
        "test test test test test test test test test test test junk",
        "candy maple cake sugar pudding cream honey rich smooth crumble sweet treat",
        "myth like bonus scare over problem client lizard pioneer submit female collect",
    )
)


# English function words that are no BIP-39 word: two of them make a phrase prose ("the list of
# words you wrote down")
_PROSE_WORDS = frozenset(
    (
        *("the", "and", "you", "your", "with", "that", "this", "have", "from", "they", "them", "then", "their"),
        *("there", "were", "been", "into", "which", "what", "when", "would", "could", "should", "not", "but", "for"),
        *("are", "was", "its", "our", "his", "her", "she", "does", "did", "who", "why", "how"),
    )
)


def mnemonic(value: str) -> bool:
    """A BIP-39 recovery phrase: 12, 15, 18, 21 or 24 words, most of them different (the list
    repeats a word rarely; prose does often), not a tool's published default or a test vector."""
    words = value.split()
    if len(words) not in (12, 15, 18, 21, 24) or value in _PUBLIC_MNEMONICS:
        return False
    return len(set(words)) >= len(words) - 2 and len(set(words) & _PROSE_WORDS) <= 1


_URL_DUMMIES = frozenset(
    ("pass", "pw", "pwd", "secret", "x", "guest", "admin", "root", "test", "user", "demo", "postgres")
)


def url_password(value: str) -> bool:
    """`postgres://u:${DB_PASSWORD}@h`, `:%(pw)s@`, `:****@`, `user:pass@` are examples."""
    if placeholder(value):
        return False
    if value.lower() in _DUMMIES or value.lower() in _URL_DUMMIES:
        return False
    if re.fullmatch(r"[A-Z]+(?:_[A-Z0-9]+)*|\d{1,5}", value):  # `user:DB_PASSWORD@`, a port
        return False
    return value.strip("*xX.") != ""


def pem_body(value: str) -> bool:
    """A key has a body; a bare header (`startswith("-----BEGIN RSA PRIVATE KEY-----")`) is code."""
    body = re.sub(r"-----[A-Z0-9 ]+-----|\\[nrt]|\\u2192|\\\\|→|[^A-Za-z0-9+/]", "", value)
    return len(body) >= 64 and not placeholder(body)


def _unbase64(text: str, altchars: bytes | None = None, *, validate: bool = False) -> bytes | None:
    """`text` decoded as base64, its missing padding restored; None when it does not decode."""
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4), altchars=altchars, validate=validate)
    except (binascii.Error, ValueError):
        return None


def _base64_text(value: str) -> str:
    """`value` decoded as base64 to UTF-8 text; "" when it is neither."""
    try:
        return (_unbase64(value, validate=True) or b"").decode("utf-8")
    except UnicodeDecodeError:
        return ""


def basic_credentials(value: str) -> bool:
    """Base64 of `user:password` (HTTP Basic, Docker `config.json` "auth", npm `_auth`); an empty
    password (`browser:`) still logs the user in, and a password may span lines (a key file:
    Google's registries take user `_json_key` and a service account's JSON key)."""
    return _login(_base64_text(value))


def _login(decoded: str) -> bool:
    """A decoded `user:password`: a printable user, and a password that is no template."""
    user, sep, password = decoded.partition(":")
    if password and placeholder(password):
        return False
    return bool(sep and user) and user.isprintable() and password.replace("\n", "").replace("\r", "").isprintable()


def basic_header(value: str) -> bool:
    """An `Authorization: Basic` value: `user:password` in base64 (the login check decides one
    that decodes so), or any other token of credential shape: nothing but a credential follows that
    header, so a value that does not decode (made up, or a server's own scheme) goes too."""
    decoded = _base64_text(value)
    if ":" in decoded:
        return _login(decoded)
    if "base64" in value.lower() or "encoded" in value.lower():  # a docs' stand-in (`base64string`)
        return False
    return len(value) >= 12 and any(c.isdigit() or c in "+/=" for c in value) and unworded_token(value)


def cli_password(value: str) -> bool:
    """A password given to a command (`mysql -pS3cret`, `curl -u admin:pw`): any non-template value."""
    return len(value) >= 3 and not placeholder(value) and not value.startswith("-") and value.lower() not in _DUMMIES


def aws_secret(value: str) -> bool:
    """40 base64 characters of an AWS secret access key: not the documented `…EXAMPLEKEY`."""
    return not placeholder(value) and shannon_entropy(value) >= 3.5


def b64_private_key(value: str) -> bool:
    """Base64 whose decoded text is a PEM *private* key (not a certificate or public key)."""
    head = _unbase64(value[:64])
    return head is not None and b"PRIVATE KEY" in head


def _content_start(der: bytes, at: int) -> int:
    """Where the content of the DER element at `at` starts: after its tag and its length (1 to 5 bytes)."""
    return at + 2 + (der[at + 1] & 0x7F if der[at + 1] & 0x80 else 0)


def der_private_key(value: str) -> bool:
    """Base64 of a DER private key: a SEQUENCE whose first member is the version, `INTEGER 0` (PKCS#1
    RSA, PKCS#8) or `INTEGER 1` (SEC1 EC). A certificate or public key starts with another SEQUENCE."""
    der = _unbase64(value[:16]) or b""
    if len(der) < 5 or der[0] != 0x30:
        return False
    header = _content_start(der, 0)
    return der[header : header + 3] in (b"\x02\x01\x00", b"\x02\x01\x01")


_PKCS7_DATA = bytes.fromhex("06092a864886f70d010701")  # the OID 1.2.840.113549.1.7.1


def pkcs12(value: str) -> bool:
    """Base64 of a PKCS#12 file (`.pfx`, `.p12`): a SEQUENCE of version `INTEGER 3` whose authSafe
    is pkcs7-data. It holds a private key, in the clear or under a password someone chose."""
    der = _unbase64(value[:32]) or b""
    if len(der) < 22 or der[0] != 0x30:
        return False
    at = _content_start(der, 0)
    if der[at : at + 4] != b"\x02\x01\x03\x30":
        return False
    at = _content_start(der, at + 3)
    return der[at : at + len(_PKCS7_DATA)] == _PKCS7_DATA


def discord_bot(value: str) -> bool:
    """Three dotted parts of a Discord bot token's lengths. Its first part is the base64 of the bot's
    numeric id (`MTk4…`); a token someone made up or mangled (`AT` before it) keeps only the shape:
    then a digit and no part that reads as a name (`app_settings_module.config.pool_size_total2`)."""
    if not has_digit(value):
        return False
    parts = value.split(".")
    decoded = _unbase64(parts[0], altchars=b"-_") or b""
    if decoded.isdigit() and 15 <= len(decoded) <= 21:
        return True
    return not any(_name_like(part) for part in parts)


def social_token(value: str) -> bool:
    """Twitter bearer tokens start with 21 `A`s (a run that would otherwise look like a dummy)."""
    return not placeholder(value.lstrip("A")) and shannon_entropy(value.lstrip("A")) >= 3.5


def header_token(value: str) -> bool:
    """A token in an auth header: random, hex ones of 12 characters and more included (a header
    names its value a credential, so a short hex token there is one)."""
    if not _literal(value, 12) or identifier(value) or _name_like(value):
        return False
    return shannon_entropy(value) >= 3.0


def url_token_user(value: str) -> bool:
    """A URL's user that is a token (`https://<token>@github.com/…`: git takes a personal access token
    as the user): random, or a long hex or base32 PAT; not a name, nor the 32 hex of a Sentry DSN's
    key (public by design)."""
    if (len(value) == 32 and _HEX_RE.fullmatch(value)) or identifier(value) or _name_like(value):
        return False
    return random_token(value) or azure_devops_pat(value)


def azure_devops_pat(value: str) -> bool:
    """52 characters of lower-case base32 (a digit among them) or 84 with `AZDO`: not a word run."""
    return not placeholder(value) and any(c.isdigit() for c in value) and shannon_entropy(value) >= 3.5


def k8s_data_value(value: str) -> bool:
    """A Secret's `data` value is base64 of its content: decodable, and no plain word (`frontend`)."""
    if placeholder(value) or (value.isalpha() and wordy(value)) or identifier(value):
        return False
    try:
        decoded = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    return len(decoded) >= 4


# (a UUID reaches the rule only in key/value form, `holidayapi_key: <uuid>`: its regex sees to that)
# (a 40-hex git SHA is benign only in a git context: the rule's `veto_before` looks for that)
_BENIGN_NEAR_RE = re.compile(r"sha[0-9]{1,3}[-:].{1,200}", re.S)


_UUID_RE = re.compile(r"[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}")


# After a credential word in a path or a lock file: a version (`credential-provider@3.972.10/…`) or a
# path with a word for a directory (`…/node_modules/`), which random base64 never spells.
_PATH_OR_VERSION_RE = re.compile(r"\d{1,4}\.\d{1,4}\.\d{1,4}(?![0-9])|[^/]{0,200}/[a-z_-]{5,}/")


def near_token(value: str) -> bool:
    """A token near a credential word (no name or format says more): random, with letters and
    digits both, and no benign shape (a git SHA, an integrity hash); a UUID in key/value form; a
    letters-only token (`Bearer yvxp…`) when mixed case and random (`looks_secret` asks that of letters)."""
    if _UUID_RE.fullmatch(value):
        return not placeholder(value)
    if len(value) < 16 or _BENIGN_NEAR_RE.fullmatch(value) or _PATH_OR_VERSION_RE.match(value):
        return False
    if not looks_secret(value, 3.2):
        return False
    if value.isalpha():
        return not value.islower() and not value.isupper()
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


# a version anywhere in a value (`shopify_python_api==12.7.0`, `sdk-2.14.1-linux`): a package pin or
# a build name, never a key
_VERSION_ANYWHERE_RE = re.compile(r"(?<![0-9])[0-9]{1,4}\.[0-9]{1,4}\.[0-9]{1,4}(?![0-9])|==")


def provider_near_token(value: str) -> bool:
    """A token a provider's name alone vouches for (no credential word): `near_token`'s shape and
    no version or pin inside (`pip install dropbox==12.0.2 shopify_python_api==12.7.0`)."""
    return near_token(value) and _VERSION_ANYWHERE_RE.search(value) is None


def provider_token(value: str) -> bool:
    """A token a provider's name just before vouches for ("the asana token is 7406935959437412"):
    12+ characters, letters and digits or 14+ digits that are no run, random, no name or path."""
    if len(value) < 12 or placeholder(value) or _PATH_OR_VERSION_RE.match(value):
        return False
    if value.isdigit():
        return len(value) >= 14 and len(set(value)) >= 5
    if not (any(c.isdigit() for c in value) and any(c.isalpha() for c in value)):
        return False
    # (no word test: a short random token often reads as syllables, `qujz89axox0207`)
    return not identifier(value) and shannon_entropy(value) >= 3.0


# a value assigned to a name that no credential word marks: only a clearly random one
ASSIGNED_ENTROPY = 3.7

# a UUID, or an id built on one (`9b0ac37f-d19e-4254-9079-f47e9a389eEX`, a build or log stream id)
_UUID_HEAD_RE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-")


def assigned_random(value: str) -> bool:
    """A value assigned to any name is a secret only by its shape: 20+ characters with upper and
    lower case and digits, random (no name, path, UUID or integrity hash) and high in entropy."""
    body = value.rstrip("=")
    if not 20 <= len(body) <= 128 or _UUID_HEAD_RE.match(body) or _BENIGN_NEAR_RE.fullmatch(body):
        return False
    if _PATH_OR_VERSION_RE.match(body) or body.count("/") > 2:
        return False
    if not (any(c.isdigit() for c in body) and any(c.islower() for c in body) and any(c.isupper() for c in body)):
        return False
    if _spelled_alphabet(body):
        return False
    return looks_secret(body, ASSIGNED_ENTROPY) and not _base64_of_words(value)


def _spelled_alphabet(value: str) -> bool:
    """An alphabet spelled out (`ABC…xyz0123456789`): a constant of code or a made-up name, not a key."""
    return sum(ord(b) - ord(a) == 1 for a, b in pairwise(value)) * 2 >= len(value)


# A token's own prefix that names a credential (`acme_live_`, `foo_pat_`, `svc-token-`): up to three
# short segments, then the word (rules.py's CREDENTIAL_PREFIX fragment is this pattern)
CREDENTIAL_PREFIX = (
    r"(?:[a-z0-9]{1,12}[_-]){0,3}?"
    r"(?:keys?|secret|sk|pat|token|apikey|live|auth|access|creds?|bearer|refresh|signing|private|priv|pass|pwd)[_-]"
)
_CREDENTIAL_PREFIX_RE = re.compile(CREDENTIAL_PREFIX)


def random_body(value: str) -> bool:
    """A random token in a place that names a credential (after `acme_live_`, `/webhooks/`): no
    UUID (`key_<uuid>`, `/keys/<uuid>` name a resource), no alphabet spelled out (`task-sk-abcdefghij…`),
    no base64 of text (`bedrock-api-key-YmVkcm9jay5…`, a name encoded: random bytes never decode to
    it), and `near_token`'s shape."""
    if _UUID_HEAD_RE.match(value) or _spelled_alphabet(value) or base64_text(value.encode()) is not None:
        return False
    return near_token(value)


def prefixed_random(value: str) -> bool:
    """A token whose prefix holds a credential word: its body after that word a `random_body`."""
    prefix = _CREDENTIAL_PREFIX_RE.match(value)
    return random_body(value[prefix.end() :] if prefix else value)


def _base64_of_words(value: str) -> bool:
    """Base64 of words and lines (a config shipped as one string): the base64 decoding searches it."""
    decoded = base64_text(value.encode())
    return decoded is not None and any(c in decoded for c in b" \n=")


def jwt(value: str) -> bool:
    """A JSON Web Token: its header decodes to a JSON object naming `alg` or `typ` (RFC 7515); a
    three-part token with a JSON payload (`eyJ`) passes as before whatever its header says."""
    if placeholder(value):
        return False
    parts = value.split(".")
    if len(parts) == 3 and parts[1].startswith("eyJ") and len(parts[1]) >= 8:
        return True
    try:
        header = json.loads(_unbase64(parts[0], altchars=b"-_") or b"")
    except ValueError:
        return False
    return isinstance(header, dict) and ("alg" in header or "typ" in header)


VALIDATORS: dict[str, Callable[[str], bool]] = {
    "jwt": jwt,
    "prefixed_random": prefixed_random,
    "random_body": random_body,
    "provider_token": provider_token,
    "near_token": near_token,
    "provider_near_token": provider_near_token,
    "assigned_random": assigned_random,
    "header_token": header_token,
    "azure_devops_pat": azure_devops_pat,
    "k8s_data_value": k8s_data_value,
    "b64_private_key": b64_private_key,
    "discord_bot": discord_bot,
    "social_token": social_token,
    "secret": looks_secret,
    "password": looks_password,
    "assigned_password": assigned_password,
    "strict_password": strict_password,
    "quoted_password": quoted_password,
    "random_token": random_token,
    "openai_key": openai_key,
    "token": token,
    "unworded_token": unworded_token,
    "has_digit": has_digit,
    "unrepeated_token": unrepeated_token,
    "spaced_app_password": spaced_app_password,
    "mnemonic": mnemonic,
    "url_password": url_password,
    "pem_body": pem_body,
    "basic_credentials": basic_credentials,
    "basic_header": basic_header,
    "der_private_key": der_private_key,
    "pkcs12": pkcs12,
    "url_token_user": url_token_user,
    "cli_password": cli_password,
    "aws_secret": aws_secret,
}
