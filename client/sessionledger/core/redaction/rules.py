"""The redaction rules: a `Rule` type and the loader of the rules data (`rules_data.RULES_TOML`).

Rules are data so that they can be reviewed, diffed against gitleaks' and tested one by one
(tests/client/test_redact_rules.py runs every rule's true- and false-positive examples). A rule
names how the engine finds where it can match (see engine.py):

- `prefixes`: literal starts of a provider token (`ghp_`, `AKIA`, `sk-ant-`); `follow` is a regex
  for what must follow a prefix (a cheap pre-filter, the full `regex` decides);
- `anchors` / `lower_anchors`: regexes starting with a literal, found in the raw / ASCII-lowercased
  bytes; the match may start up to `lead_max` characters of class `lead` before its anchor;
  `lead_gap`: a class of bytes right before the anchor that a match never starts in (the
  separator between a name and its `=`): the run of `lead` is looked for before them;
- `near`: lower-case words one of which must occur earlier on the same line (`curl` before `-u`);
- `context`: lower-case words; the rule runs only on a line holding one and the `window` lines
  after it (a `.pgpass` line has no keyword of its own, but `cat ~/.pgpass` or its path is near);
- `name`: a pattern the regex's `name` group must fully match (`<<NAME>>` captures a whole
  variable name cheaply; `<<SECRET_NAME>>` / `<<PW_NAME>>` then say whether it names a secret).

Patterns are matched on UTF-8 bytes of escaped JSONL (a secret sits in a JSON string literal, so
`\\n` is two characters) as well as on plain text. `<<NAME>>` in a regex is replaced by the shared
fragment of that name (`FRAGMENTS`), so the rules data stays short and consistent.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .validators import CREDENTIAL_PREFIX, VALIDATORS

# --- shared regex fragments ---------------------------------------------------------------------
# Before a token: not inside a longer word or base64 run, except right after a JSON escape
# (`\n`, `\t`, `\u0007`: that `n` is no letter of the text) or an ANSI colour code (`\u001b[32m`).
# a token starts after a non-token byte, a JSON escape or an ANSI colour code; after a URL path's
# `/` too when its prefix ends in `_` (`/keys/pri_…`): standard base64 has no `_`, base64url no `/`,
# so that is no piece of a base64 blob (a `-` prefix after `/` is more often a file: `/srv/api-<uuid>`).
# A colour code's `m` only after its `[` or `;` and digits: a digest's `…37mAP0SF…` starts no token;
# nor does a digest after its algorithm's label (a wheel's RECORD: `…,sha256=AP58970HW1…,1410`, an
# image's `SHA256:AP1Ay…`, a go.sum line's `h1:P6bY…=`)
_DIGEST_LABELS = ("sha1", "sha224", "sha256", "sha384", "sha512", "md5", "h1")
_NOT_DIGEST = "".join(f"(?<!(?i:{label})[=:])" for label in _DIGEST_LABELS)  # one width per lookbehind
_START = (
    _NOT_DIGEST + r"(?:(?<![A-Za-z0-9_+/-])|(?<=\\[nrtbf])|(?<=\\u[0-9a-fA-F]{4})|(?<=[\[;][0-9]m)|(?<=[\[;][0-9]{2}m)"
    r"|(?<=[A-Za-z0-9_.~-]/)(?=[A-Za-z0-9]{1,16}_))"
)
_END = r"(?![A-Za-z0-9_+/-])"
# an optional quote, backslash-escaped once or more inside JSON; `$'…'` is bash's ANSI-C quoting
_QUOTE = r"""(?:\$?\\{0,8}["'`])?"""
# `name = v`, `name := v`, `name ?= v`, `name: str = v`, `"name": "v"`, `'name' => v`, a subscript
# assigned (`config['name'] = v`, `os.environ["NAME"] = v`), YAML
# `name: v`, comparisons with a quoted value (`key == "v"`). A bare `name:v`
# without quote or space is an ARN or URL part: `arn:aws:secretsmanager:…:secret:db-*`.
_SEP = (
    r"""(?:\\{0,8}["'`]\]?[ \t]{0,8}(?:=>|:{1,3}=|\?=|=(?!=)|:(?!:))"""
    r"|[ \t]{0,8}(?::[ \t]{0,8}(?:str|string|String)[ \t]{0,8}|(?<=[ \t])(?:str|string|String)[ \t]{0,8})?"
    r"(?:=>|:{1,3}=|\?=|\.=|=(?!=))"
    r"|[ \t]{0,8}:(?!:)(?=[ \t])"
    r"""|\\{0,8}["'`]?[ \t]{0,8}(?:===?|!==?)(?=[ \t]{0,8}\\{0,8}["'`]))[ \t]{0,8}""" + _QUOTE
)
_VALUE_END = r"""(?=[\s"'`\\,;)}\]&|<]|$)"""
# A name and a value as the first two quoted arguments of a call: `define('DB_PASSWORD', 'v')`,
# `System.setProperty("API_TOKEN", "v")`, `os.environ.setdefault("SECRET_KEY", "v")`; wp-config.php
# aligns its values with up to 16 spaces after the comma.
_CALL_OPEN = r"""\([ \t]{0,4}\\{0,8}["']"""
_CALL_SEP = r"""\\{0,8}["'][ \t]{0,4},[ \t]{0,16}\\{0,8}["']"""
_CALL_VALUE = r"""(?P<secret>[^"'\\\s]{8,4096})(?=\\{0,8}["'])"""
# A quoted value may hold any character but its quote (Django keys have `&`, `%`, `(`); a bare
# value stops at shell/code punctuation, so `os.environ["KEY"]` and `get_token()` never match.
# A backslash inside the value (`S!B\*d`, `pa\"ss`) is part of it: in JSONL, the escaped pair
# `\\` (and, in double quotes, `\\\"`; in single quotes a `"`, `\"`). A `\n` inside the text stays a
# line break (a PEM key in a JSON document is no password); `$'…\n'` may end in one.
_QUOTED_VALUE = (
    r"""(?P<secret>(?<=")(?:[^"\\\s]|\\\\(?:\\"|(?![nrtu\\])))"""
    r"""{8,4096}+(?=\\{0,8}")"""
    r"""|(?<=')(?:[^'\\\s]|\\\\(?![nrtu\\])|\\"){8,4096}+(?=(?:\\\\[nrt]){0,2}\\{0,8}')"""
    r"""|(?<=`)[^`\\\s]{8,4096}+(?=`))"""
)
# `=` only as base64 padding: a run like `key=key=key=…` must not be one 4 KB "value" per `key`.
# A `&` inside a value is part of it (`Tr0ub4dor&3x` in a .env or YAML file), not when it starts
# the next query parameter (`?password=…&user=…`) or a shell's `&&`.
_BARE_CHAR = r"""(?:[^\s"'`\\<>{}()\[\],;|&=]|&(?![&\s]|[A-Za-z0-9_.-]{1,64}=))"""
_BARE = r"""(?<!["'`])""" + _BARE_CHAR + r"""{8,4096}+={0,3}""" + _VALUE_END
# A password (BVALUE: the password rules only) may also hold up to three `=` inside (`Ot2G=PSy7`),
# none starting the next `name=`: at most 4 × 64 characters from an anchor, so `a=!a=!…` stays linear.
_BARE_WITH_EQUALS = (
    r"""(?<!["'`])(?=\S{8})"""
    + _BARE_CHAR
    + r"""{1,64}+(?:=(?![=\s]|[A-Za-z0-9_.-]{1,64}=)"""
    + _BARE_CHAR
    + r"""{1,64}+){1,3}={0,2}"""
    + _VALUE_END
)
_BARE_VALUE = f"(?P<secret>{_BARE}|{_BARE_WITH_EQUALS})"
_ANY_VALUE = _QUOTED_VALUE[:-1] + "|" + _BARE + ")"  # one `secret` group, quoted or bare
# What may stand right before a word that is no letter of it: a JSON escape (`\n`: its `n`), `\u0007`,
# or an ANSI colour code (`\u001b[32m`, `[0m`, `[1;33m`: its `m`; the code's own `[` is none), as a word
# boundary's alternative
AFTER_ESCAPE = r"(?:(?<=\\[nrtbf])|(?<=\\u[0-9a-fA-F]{4})(?<!\\u001b)|(?<=[\[;][0-9]m)|(?<=[\[;][0-9]{2}m))"
_NAME_START = r"(?:(?<![A-Za-z0-9])|" + AFTER_ESCAPE + ")"
_SEGMENTS = r"(?:[A-Za-z0-9]{1,64}[_.-]){0,16}"
# Credential words strong enough that a bare UUID right after one is the credential ("the webhook
# secret <uuid>", "apikey <uuid>"), unlike a plain `key`/`token` (a cache, idempotency or page key):
# lookbehinds of one width each (sre's rule), checked where the word ends
_STRONG_PREFIXES = (
    *("api", "access", "auth", "private", "client", "bot", "app", "master", "signing", "bearer"),
    *("hmac", "webhook", "deploy", "connection", "encryption", "admin"),
)
_STRONG_WORDS = sorted(
    {"secret", "secrets"}
    | {
        f"{prefix}{sep}{word}{plural}"
        for prefix in _STRONG_PREFIXES
        for sep in ("", " ", "_", "-")
        for word in ("key", "token", "secret")
        for plural in ("", "s")
    }
)


def _behind_one_of(words: list[str]) -> str:
    by_width: dict[int, list[str]] = {}
    for word in words:
        by_width.setdefault(len(word), []).append(re.escape(word))
    return "(?:" + "|".join(f"(?<=(?i:{'|'.join(group)}))" for _, group in sorted(by_width.items())) + ")"


# Words that make a key's name a name of something else: its id, name, URL or path (`key_id`)
_ID_WORDS = ("id", "Id", "ID", "name", "Name", "NAME", "url", "Url", "URL", "uri", "Uri", "URI", "path", "Path", "PATH")
# Words that name the token right after them an id (`zone id <hex>`, `account <hex>`): one
# lookbehind per word and separator, as a lookbehind has a fixed width
_NOT_AFTER_ID_WORD = "".join(
    f"(?<!(?i:{word}){re.escape(sep)})"
    for word in ("id", "ids", "account", "zone", "workspace", "tenant", "org")
    for sep in (" ", ": ", "=", ":", " = ")
)
# A name may go on after its keyword (`mySecretString`, `password2`, `API_KEY_PROD`), but not into
# a word that makes it a non-secret (`token_url`, `password_hash`, `secret_length`, `key_id`).
_DENIED_SUFFIX = "".join(
    f"(?<!{w})"
    for w in (
        *_ID_WORDS,
        "file",
        "File",
        "FILE",
        "type",
        "Type",
        "TYPE",
        "length",
        "Length",
        "LENGTH",
        "size",
        "Size",
        "SIZE",
        "endpoint",
        "Endpoint",
        "ENDPOINT",
        "version",
        "Version",
        "VERSION",
        "header",
        "Header",
        "HEADER",
        "field",
        "Field",
        "FIELD",
        "count",
        "Count",
        "COUNT",
        "expiry",
        "Expiry",
        "expires",
        "Expires",
        "EXPIRES",
        "ttl",
        "Ttl",
        "TTL",
        "prefix",
        "Prefix",
        "PREFIX",
        "hash",
        "Hash",
        "HASH",
        "hashed",
        "Hashed",
        "HASHED",
        "arn",
        "Arn",
        "ARN",
        "ref",
        "Ref",
        "REF",
        "reset",
        "Reset",
        "RESET",
        "hint",
        "Hint",
        "HINT",
        "policy",
        "Policy",
        "POLICY",
        "pattern",
        "Pattern",
        "PATTERN",
        "regex",
        "Regex",
        "REGEX",
        "label",
        "Label",
        "LABEL",
        "prompt",
        "Prompt",
        "PROMPT",
        "timeout",
        "Timeout",
        "TIMEOUT",
        "input",
        "Input",
        "INPUT",
        "min",
        "Min",
        "MIN",
        "max",
        "Max",
        "MAX",
        "env",
        "Env",
        "ENV",
        "var",
        "Var",
        "VAR",
        "store",
        "Store",
        "STORE",
        "manager",
        "Manager",
        "MANAGER",
        "provider",
        "Provider",
        "PROVIDER",
        "type_",
        "s_dir",
        "used",
        "Used",
        "USED",
        "date",
        "Date",
        "DATE",
        "time",
        "Time",
        "TIME",
        "age",
        "Age",
        "AGE",
        "changed",
        "Changed",
        "CHANGED",
        "enabled",
        "Enabled",
        "ENABLED",
        "required",
        "Required",
        "REQUIRED",
        "format",
        "Format",
        "FORMAT",
        "less",
        "lessFn",
        "strength",
        "Strength",
        "STRENGTH",
        "validator",
        "Validator",
        "VALIDATOR",
    )
)
# (possessive: each piece takes its whole run, so the pieces have one split; an optional separator
# let a 100-character run be split every way: up to 0.6 s for one 128-character name that failed)
_SUFFIX = r"(?:[_.-]?+[A-Za-z0-9]{1,24}+){0,4}+"
# Tokens that are no credentials: pagination (`nextPageToken`, `NextToken`, `ContinuationToken`),
# idempotency and concurrency (`ClientToken`, `ChangeToken`), parser and paginator tokens.
_NOT_SECRET_TOKENS = "".join(
    f"(?<!{w})"
    for w in (
        "age",
        "AGE_",
        "age_",
        "ation",
        "Sync",
        "sync",
        "Cursor",
        "cursor",
        "Next",
        "next",
        "NEXT_",
        "next_",
        "Change",
        "change",
        "CHANGE_",
        "Idempotency",
        "idempotency",
        "Client",
        "client",
        "CLIENT_",
        "client_",
        "input_",
        "output_",
        "Start",
        "start",
        "Resume",
        "resume",
        "Continue",
        "continue",
        "Request",
        "request",
        "Cancel",
        "cancel",
        "Cancellation",
        "Skip",
        "skip",
        "Csrf",
        "csrf",
        "CSRF_",
        "csrf_",
        "csrf-",
        "xsrf",
        "Xsrf",
        "xsrf_",
        "xsrf-",
        "XSRF_",
        "Public",  # a public token is meant to be seen (`publicToken`, `PUBLIC_TOKEN`: Mapbox's `pk.`)
        "public",
        "PUBLIC_",
        "public_",
    )
)
_SHORT_SUFFIX = (
    r"(?:[_-]?(?:[0-9]{1,3}|[vV][0-9]{1,2}|[Pp]rod|PROD|[Ll]ive|LIVE|[Tt]est|TEST|[Dd]ev|DEV|[Ss]taging|STAGING"
    r"|[Vv]alue|VALUE|[Ss]tr|[Ss]tring|STRING))?"
)
# Names holding password: `DB_PASSWORD`, `PGPASSWORD`, `dbPassword`, `spring.datasource.password`,
# `_password`, `MYSQL_PWD`, `db_pw`, `passphrase`, `passcode`, `password2`; not `bypass`, `compass`,
# `passes`, `sshpass`, `password_hash`, `PASSWORD_RESET_TIMEOUT`.
_PW_NAME = (
    r"[_.-]{0,4}" + _SEGMENTS + r"(?:[A-Za-z0-9]{0,64}(?:PASSWORD|PASSWD|PASSPHRASE|PASSCODE|Password|Passwd"
    r"|Passphrase|Passcode|password|passwd|passphrase|passcode)"
    + _SUFFIX
    + r"|(?:PASS|PWD|PW|Pass|Pwd|Pw|pass|pwd|pw|[a-z0-9]{1,64}(?:Pass|Pwd|Pw))"
    + _SHORT_SUFFIX
    + r")"
    + _DENIED_SUFFIX
)
_KEY_QUALIFIER = (
    r"(?:api|secret|private|access|auth|client|signing|encryption|encrypt|master|license|app|service"
    r"|consumer|webhook|admin|account|deploy|ssh|hmac|jwt|session|cookie|storage|bot|integration"
    r"|personal|shared|subscription|server|write|read|publishable|instrumentation|ingest|sdk|user|dev)"
)
_UPPER_KEY_EXCLUDED = "".join(
    f"(?<!{w}_)"
    for w in (
        "PUBLIC",
        "PUB",
        "PRIMARY",
        "FOREIGN",
        "SORT",
        "PARTITION",
        "CACHE",
        "HASH",
        "RANGE",
        "IDEMPOTENCY",
        "LOOKUP",
        "ROW",
        "OBJECT",
        "S3",
        "ITEM",
        "MAP",
        "GROUP",
        "INDEX",
        "SSH_HOST",
        "HOST",
        "GPG",
        "SIGNING_KEY_ID",
    )
)
# The same names in camelCase, before a bare `Key` (`cacheKey`, `PartitionKey`, `publicKey`)
_CAMEL_KEY_WORDS = (
    *("public", "pub", "primary", "foreign", "sort", "partition", "cache", "hash", "range", "idempotency"),
    *("lookup", "row", "object", "s3", "item", "map", "group", "index", "host", "gpg", "hot", "routing", "dedup"),
)
_CAMEL_KEY_EXCLUDED = "".join(f"(?<!{w})" for word in _CAMEL_KEY_WORDS for w in (word, word.capitalize()))
# Names of keys, tokens and secrets: `API_KEY`, `stripe_api_key`, `fooApiKey`, `x-api-key`,
# `clientSecret`, `GITHUB_TOKEN`, `_authToken`, `credentials`, `SECRET_KEY_BASE`, `mySecretString`.
# Not: `cache_key`, `PUBLIC_KEY`, `nextPageToken`, `UserSecretsId`, `tokens`, `token_url`.
_SECRET_NAME = (
    r"[_.-]{0,4}"
    + _SEGMENTS
    + r"(?:[A-Za-z0-9]{0,64}(?:SECRET|Secret|secret|CREDENTIALS?|Credentials?|credentials?|creds|CREDS)"
    + r"(?!(?i:ar(?:y|ies|iat)))"  # a secretary is a person
    + _SUFFIX
    + r"|[A-Za-z0-9]{0,64}"
    + _NOT_SECRET_TOKENS
    + r"(?:TOKEN|Token|token)"
    + _SHORT_SUFFIX
    + r"|(?i:"
    + _KEY_QUALIFIER
    + r")[_.-]?(?:KEY|Key|key)(?:_?(?:BASE|base))?"
    + _SHORT_SUFFIX
    + r"|[A-Za-z0-9]{0,64}(?:Api|API|Secret|Private|Access|Auth|Client|Signing|Encryption|Master|License"
    r"|Account|Webhook|Admin|Session|Storage|Subscription|Service|App|Consumer)(?:Key|KEY)"
    + _SHORT_SUFFIX
    + r"|[a-z0-9]{0,64}(?:api|secret|private|access)key"
    + _SHORT_SUFFIX
    + r"|(?:[A-Z0-9]{1,64}_){1,16}"
    + _UPPER_KEY_EXCLUDED
    + r"KEY"
    + _SHORT_SUFFIX
    # a provider's name glued to a credential word in capitals (`scrapingantKEY`, `ciceroPRIVATEKEY`)
    + r"|[a-z]{4,64}(?:API|PRIVATE|SECRET|ACCESS)?(?:KEY|TOKEN)"
    + _SHORT_SUFFIX
    + r")"
    + _DENIED_SUFFIX
)
_UPPER_NAME = r"[A-Z0-9_]{0,64}(?:PASSWORD|PASSWD|PASSPHRASE|PASSCODE|_PASS|PWD|PW)" + _SHORT_SUFFIX + _DENIED_SUFFIX
# A variable/key name, captured whole (possessive: no backtracking into it); the rule's `name`
# pattern then decides whether it names a secret (fullmatch on this group).
_NAME = r"(?:(?<![A-Za-z0-9_.-])|" + AFTER_ESCAPE + r")(?P<name>[A-Za-z0-9_.-]{1,128}+)"
# What may sit between lines of a multi-line secret in a transcript: JSON escapes, real newlines,
# Claude Code's Read line numbers (`     5→`), and a structuredPatch hunk's next line (`","+`: a
# string starting with a diff marker; `","is_error":` is JSON structure, not a hunk).
_LINE_BREAKS = r"""\\[nrt]|\\\\|\\u2192|→|\r|\n|\\{0,8}"[ \t]{0,4},[ \t]{0,4}\\{0,8}"(?=[+ -])"""
_BREAK = f"(?:{_LINE_BREAKS})"
# Inside a key block, also what code and Markdown put around its lines: a string literal closed at the
# line's end (`"MIIE…\n"` then `+`, `,` or nothing) and the next one opened after the indent or at
# the line's start (`" +` then `"b3Bl…`), and a quote's `> ` after a line break.
_KEY_BREAK = (
    f"(?:{_LINE_BREAKS}"
    + r"""|\\{0,8}"[ \t]{0,4}[+,]?(?=[ \t]{0,4}(?:\\[nr]|[\r\n]))"""
    + r"""|(?:(?<=[ \t\n])|(?<=\\n))\\{0,8}"(?=[A-Za-z0-9+/-])"""
    + r"""|(?:(?<=\n)|(?<=\\n)|(?<=→)|(?<=\\u2192))>)"""
)
_LINE_START = r"""(?:^|(?<=\\n)|(?<=\n)|(?<=→)|(?<=\\t)|(?<=\t)|(?<=")|(?<=\\u2192))"""

# A Read result's line number (`     5→`) after its padding: Claude Code numbers every line of a file it
# shows, so what a rule reads on the next line sits behind one (padded to six columns: a space before it)
_READ_NUMBER = r"(?<=[ \t\n])[0-9]{1,9}(?:→|\\u2192)"
_NL = r"(?:(?:\\n|\n)(?:[ \t]{0,8}" + _READ_NUMBER + ")?)"
_JSON_QUOTE = r'\\{0,3}"'
_JSON_SPACE = r"(?:[ \t\n]|\\[nrt]|" + _READ_NUMBER + "){0,16}"

# Between a secret's name and its sibling value field: `", "value": "` (ECS, a `{"Key": …, "Value": …}` pair),
# `\n    value: ` (Kubernetes env, maybe after a Read line number), `,ParameterValue=` (CloudFormation),
# ` --value ` (a CLI's `--name … --value …`), .NET's `" serializeAs="String"><value>`
_NV_GAP = (
    # (a class first: most names are followed by `=`, `:` or a word, and stop at it)
    r"""(?=[\\"',\n \t])(?:\\{0,8}["'])?(?:[ \t]{0,4},[ \t]{0,4}(?:(?:\\r)?""" + _NL + r"""[ \t]{0,24})?"""
    r"""|[ \t]{0,4}(?:\\r)?""" + _NL + r"""[ \t]{0,24}(?:-[ \t]{1,4})?|[ \t]{1,4}--"""
    r"""|(?<=["'])[ \t]{1,4}(?:(?i:serializeas)=\\{0,8}["'](?i:string)\\{0,8}["']><)?)"""
    r"""(?:\\{0,8}["'])?(?i:parameter)?(?i:value)(?:\\{0,8}["'])?(?:[ \t]{0,4}[:=][ \t]{0,4}|(?<=-value)[ \t]{1,4}|>)"""
)

# how that gap starts: the scans' cheap gate for it (the rule's regex reads the rest)
_NV_NEXT = r"""(?:\\{0,8}["'])?(?:[ \t]{0,4},|[ \t]{0,4}(?:\\r)?(?:\\n|\n)|[ \t]{1,4}(?:--|(?i:serializeas|value)))"""

# The gate after a key's or a token's name, names code writes everywhere (`cache_key,`, `key = …`):
# only a gap that a sibling field's `value` follows starts so (`\",` then `\"value\"`, a line break
# then `value:`, ` --value`, `,ParameterValue=`); the class first, so a scan's table of the bytes
# after the name can tell which hits to try it at
_NV_VALUE_NEAR = (
    r"""(?=[\\"',\n \t])"""
    r"""(?=\\{0,8}["'](?:[ \t]{0,4},|[ \t]{1,4}serializeas)|(?:\\r)?\\n|\r?\n|[ \t]{1,4}--value|,parametervalue)"""
)

FRAGMENTS: dict[str, str] = {
    "START": _START,
    "NOT_DIGEST": _NOT_DIGEST,
    "DIGEST_LABEL": "(?i:" + "|".join(_DIGEST_LABELS) + ")[=:]",
    "END": _END,
    "Q": _QUOTE,
    "SEP": _SEP,
    "VEND": _VALUE_END,
    "NOTKEY": _CAMEL_KEY_EXCLUDED,  # before a camelCase `Key`: not a credential's name
    "NOTTOKEN": _NOT_SECRET_TOKENS,  # before `Token`: pagination, idempotency, CSRF tokens
    # a name's last word that makes its value no secret: a key's id, name, URL or path (`kms_key_id`)
    "ID_WORD": "(?:" + "|".join(_ID_WORDS) + ")(?![A-Za-z0-9])",
    "NOT_AFTER_ID_WORD": _NOT_AFTER_ID_WORD,
    "STRONG_WORD_BEHIND": _behind_one_of(_STRONG_WORDS),
    "CREDENTIAL_PREFIX": CREDENTIAL_PREFIX,
    "QVALUE": _QUOTED_VALUE,
    "BVALUE": _BARE_VALUE,
    "VALUE": _ANY_VALUE,
    "AFTER_ESCAPE": AFTER_ESCAPE,
    "NAME_START": _NAME_START,
    "NAME": _NAME,
    "PW_NAME": _PW_NAME,
    "UPPER_PW_NAME": _UPPER_NAME,
    "SECRET_NAME": _SECRET_NAME,
    "BREAK": _BREAK,
    "KEY_BREAK": _KEY_BREAK,
    # a value in prose ends before a sentence's punctuation, its closing quote and a blank
    # (or an ANSI code: `\u001b[0m` resets the colour after it; or HTML's closing tag or line break:
    # `<td>the password is …</td>`)
    "PROSE_END": r"""(?<![.,;:!?)])""" + _QUOTE + r"""(?=[.,;:!?)]{0,3}(?:\s|$|\\[nrt"]|\\u001b|</|<br|["'`]))""",
    # JSON inside JSON (a JWK in a transcript line): a quote maybe escaped, whitespace maybe escaped,
    # what lies between a member's name and its string value, between that value and the next name,
    # and a JWK member's value (base64url of a key part)
    "JQ": _JSON_QUOTE,
    "JS": _JSON_SPACE,
    "JKV": _JSON_QUOTE + _JSON_SPACE + ":" + _JSON_SPACE + _JSON_QUOTE,
    "JNEXT": _JSON_QUOTE + _JSON_SPACE + "," + _JSON_SPACE + _JSON_QUOTE,
    "JB64": r"[A-Za-z0-9_-]{40,1400}(?![A-Za-z0-9_-])",
    # a JWK member named `p` (after `d`, or `dp` sorted) or `okp`'s, up to its closing quote: the
    # quote or backslash after `p` first, the name behind it (a `p` scan alternative that starts with a
    # lookbehind is tried at every `p` of the text; one that starts with a byte, where that byte follows)
    "JWK_P": r"""p(?:"(?<=[\\"d]p")|\\(?<=[\\"d]p\\)\\{0,2}")""",
    "JWK_OKP": r"""p(?:"(?<=okp")|\\(?<=okp\\)\\{0,2}")""",
    # a command's arguments before a flag, on its own line (not past a pipe, `;`, `&` or an escaped
    # newline in a JSON line)
    "CMD_ARGS": r"(?:(?:[^\n\\|;&]|\\[^nr]){0,200}?[ \t])?",
    "CALL_OPEN": _CALL_OPEN,
    "CALL_SEP": _CALL_SEP,
    "CALL_VALUE": _CALL_VALUE,
    "LINE_START": _LINE_START,
    "READ_NUMBER": _READ_NUMBER,
    # a line break in a text, and the next line's number when it is a Read result
    "NL": _NL,
    "NV_GAP": _NV_GAP,
    "NV_NEXT": _NV_NEXT,
    "NV_VALUE_NEAR": _NV_VALUE_NEAR,
    # what follows a provider prefix, for the scans' pre-filter (the rule's regex decides):
    # a mixed-case random run (P(no upper or no lower in 25 random base62 chars) < 1e-5), so
    # kebab-case, CONSTANT_CASE, UUIDs and hex hashes after `-`, `_`, `.` are skipped cheaply
    # (possessive `{0,24}+`: a failed test costs one pass over at most 24 characters, no backtracking)
    # … or lower case with a digit (a provider's prefix at its length is a token whatever its body:
    # `ghs_` + 36 lower-case characters), which kebab-case and snake_case names have not; or 16
    # lower-case letters, no separator (a made-up body, `ghp_exampleexample…`; not `ghp_xxxx…`)
    "B62": r"(?:(?=[a-z0-9_-]{0,24}+[A-Z])(?=[A-Z0-9_-]{0,24}+[a-z])|(?=[a-z_-]{0,24}+[0-9])"
    r"|(?!x{8})(?=[a-z]{16}))[A-Za-z0-9_-]{16}",
    "B64M": r"(?:(?=[a-z0-9+/_=-]{0,24}+[A-Z])(?=[A-Z0-9+/_=-]{0,24}+[a-z])|(?=[a-z+/_=-]{0,24}+[0-9]))"
    r"[A-Za-z0-9+/_=-]{16}",
    # after an anchor's separator: at least 8 characters of a value, no template (`$X`, `${X}`, `<x>`)
    # (a quoted value may hold braces and brackets: `"S9n9a{v9SJ}jAA3L"`)
    # (and backslashes: `S!B\*d`, `pa\"ss`; `$'…'` is bash's ANSI-C quoting)
    # (a quoted value's first 8 may hold the other quotes: a generated `"7`D'}/vYR)T;W…"`)
    "VALA": r"""[ \t]{0,8}(?:\$?\\{0,8}(?:"(?![%{<*])(?:[^\s"\\]|\\\\(?:\\")?){8}"""
    r"""|'(?![%{<*])(?:[^\s'\\]|\\\\(?:\\")?|\\"){8}|`(?![%{<*])(?:[^\s`\\]|\\\\(?:\\")?){8})"""
    r"""|(?![%{<*])(?:[^\s"'`\\<>{}()\[\],;|&]|&(?![&\s])){8})""",
    # anchor tails: an optional quote, then `:`, `=` or `!` (`key=`, `"token":`, `secret !=`)
    "SEPA": r"""(?:\\{0,8}["'`]\]?)?(?:[ \t]{1,4}str(?:ing)?)?[ \t]{0,8}(?:[:=!?.]{1,3}>?|,)""",
    # a git object's words: a hex run after (or, looking back, before) one is a git SHA, not a key
    "GIT_WORDS": r"(?i)(?<![a-z])(?:commit|sha1?|git|rev|revision|hash|head|merge|checkout|tree|blob|ref|rebase"
    r"|cherry-pick|parent)(?![a-z])",
    # a UUID and nothing more of a token after it
    "UUID": r"[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}(?![A-Za-z0-9-])",
    # after a credential word (lowercased bytes): a token of 15+ characters holding a digit starts
    # within 48 bytes, so the scan passes over `key` in code (`key=None`, `self._key`) in C; the
    # gap ends at the next JSON member (`,"`): `"output_tokens":27,"requestId":"req_…"` is no pair
    # (or right after `=`: `Key=<token>`, where a gap could not start a token after a token character);
    # a run longer than a token (`key=1key=1…`) fails here, in one possessive pass; the digit is looked
    # for in the first 64 characters (a random token without one there: about 1 in 100,000); it may
    # start with `_` (`_wpb=0h6x…`: a token's own alphabet, a name's `_x` is a name), `+` or, padded, `/` (base64)
    # (first, in one possessive pass: a digit within the 48 + 64 bytes where one must be, on the line;
    # before that, the plain run up to the first digit or escape in one class repeat, cheaper a byte
    # than the alternation: 768 of the 8,372 `key`s before a non-letter in the bench's 20 MB of
    # transcripts have that digit)
    # Or 16+ letters and nothing else right after the separator (`:= "Bearer yvxp…"`; the validator
    # wants them random, mixed case): tried once per word, not at every gap position (that cost 1.5 %
    # of the transcripts)
    "NEARTOK": r"(?=(?=[^\\\n0-9]{0,112}+(?:[0-9]|\\[^nr]))(?=(?:[^\\\n0-9]|\\[^nr]){0,112}+[0-9])"
    r"(?:(?<==)|(?:[^\\\n,]|,(?![ \t]{0,4}\\{0,8}\")|\\[^nr\\]){0,48}?(?<![a-z0-9+/=_.~-]))"
    r"(?=[a-z+/=_.~-]{0,63}+[0-9])(?:[a-z0-9_]|\+(?=[a-z0-9])|/(?=[a-z0-9+/]{14,510}+=))[a-z0-9+/=_.~-]{11,511}+(?![a-z0-9+/=_~-])"
    r"|[^a-z0-9\n]{1,12}+(?:bearer[ \t]{1,4}+)?[a-z]{16,64}+(?![a-z0-9+/=_~-]))",
}
_FRAGMENT_RE = re.compile(r"<<([A-Z0-9_]+)>>")
_KIND_RE = re.compile(r"[A-Za-z0-9_.-]{1,64}")


@dataclass(frozen=True)
class Rule:
    """One kind of secret.

    `pattern` is matched against the escaped JSONL line (or plain text); `group` (index or name) is
    the span that is replaced; `validator`, given that span's text, may veto a match. The other
    fields say where the engine looks for matches (module docstring). A rule without `prefixes`,
    anchors or `context` is its own anchor when its pattern means the same on bytes and text
    (ASCII literals and positive classes); otherwise it is searched on decoded text.
    """

    kind: str
    pattern: str
    group: int | str = 0
    validator: Callable[[str], bool] | None = field(default=None, compare=False)
    anchors: tuple[str, ...] = ()
    lower_anchors: tuple[str, ...] = ()
    lead: str = ""
    prefixes: tuple[str, ...] = ()
    follow: str = ""
    near: tuple[str, ...] = ()
    context: tuple[str, ...] = ()
    window: int = 4
    lead_max: int = 128
    lead_gap: str = ""
    multiline: bool = False
    id: str = ""
    name_pattern: str = ""  # fullmatch on the `name` group: a match whose name fails is no secret
    then: str = ""  # matched again and again right after a match: a block's later entries (their `secret`)
    # a candidate followed within this many bytes by a span an earlier rule accepted is not tried:
    # that word's value is found (a catch-all near every `key` would otherwise redo the work)
    yields: int = 0
    # a regex searched in the _VETO_BACK bytes before the secret: a hit there makes it no secret
    # (a hex string after `commit` is a git SHA, whatever word came before it)
    veto_before: str = ""
    # … and one whose hit there lets `relaxed` decide instead of `validator` (a provider's name
    # before `token … is` vouches for a shorter or digits-only value); `{providers}` in it stands
    # for the catalogue's provider names (catalogue.with_provider_words)
    relax_before: str = ""
    relaxed: Callable[[str], bool] | None = None

    @property
    def name(self) -> str:
        return self.id or self.kind


@dataclass(frozen=True)
class RuleSpec:
    """A rule plus what documents it: description, category, source, and examples (templates)."""

    rule: Rule
    description: str
    category: str
    source: str
    tp: tuple[str, ...]
    fp: tuple[str, ...]


def expand_fragments(pattern: str) -> str:
    """Replace every `<<NAME>>` by its fragment; an unknown name raises ValueError."""

    def sub(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in FRAGMENTS:
            raise ValueError(f"unknown fragment <<{name}>>")
        return FRAGMENTS[name]

    return _FRAGMENT_RE.sub(sub, pattern)


def load_specs(text: str) -> tuple[RuleSpec, ...]:
    """Parse the rules data (TOML with one `[[rule]]` table per rule)."""
    data = tomllib.loads(text)
    specs = tuple(_spec(entry) for entry in data.get("rule", ()))
    ids = [s.rule.name for s in specs]
    duplicates = {i for i in ids if ids.count(i) > 1}
    if duplicates:
        raise ValueError(f"duplicate rule ids: {sorted(duplicates)}")
    return specs


def _spec(entry: Mapping[str, Any]) -> RuleSpec:
    rule_id = str(entry["id"])
    kind = str(entry.get("kind", rule_id))
    if not _KIND_RE.fullmatch(kind):
        raise ValueError(f"rule {rule_id!r}: bad kind {kind!r}")
    pattern = expand_fragments(str(entry["regex"]))
    validator_name = entry.get("validator")
    if validator_name is not None and validator_name not in VALIDATORS:
        raise ValueError(f"rule {rule_id!r}: unknown validator {validator_name!r}")
    group = entry.get("group", "secret" if "(?P<secret>" in pattern else 0)
    rule = Rule(
        kind=kind,
        pattern=pattern,
        group=group,
        validator=VALIDATORS[validator_name] if validator_name else None,
        anchors=tuple(expand_fragments(a) for a in entry.get("anchors", ())),
        lower_anchors=tuple(expand_fragments(a) for a in entry.get("lower_anchors", ())),
        lead=str(entry.get("lead", "")),
        prefixes=tuple(entry.get("prefixes", ())),
        follow=expand_fragments(str(entry.get("follow", ""))),
        near=tuple(w.lower() for w in entry.get("near", ())),
        context=tuple(w.lower() for w in entry.get("context", ())),
        window=int(entry.get("window", 4)),
        lead_max=int(entry.get("lead_max", 128)),
        lead_gap=str(entry.get("lead_gap", "")),
        multiline=bool(entry.get("multiline", False)),
        id=rule_id,
        name_pattern=expand_fragments(str(entry.get("name", ""))),
        then=expand_fragments(str(entry.get("then", ""))),
        yields=int(entry.get("yields", 0)),
        veto_before=expand_fragments(str(entry.get("veto_before", ""))),
        relax_before=str(entry.get("relax_before", "")),
        relaxed=VALIDATORS[str(entry["relaxed"])] if "relaxed" in entry else None,
    )
    return RuleSpec(
        rule=rule,
        description=str(entry.get("description", "")),
        category=str(entry.get("category", "generic")),
        source=str(entry.get("source", "")),
        tp=tuple(entry.get("tp", ())),
        fp=tuple(entry.get("fp", ())),
    )
