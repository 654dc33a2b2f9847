"""A development corpus read, at bench time, from other secret scanners' own test material.

Nothing here is shipped or committed: the samples are read from local clones (read-only git directories)
of gitleaks (MIT: `cmd/generate/config/rules/*.go`, their literal `tps`/`fps` and the
`GenerateSampleSecrets(id, prefix + NewSecret(...))` samples, regenerated with random values of the same
alphabet and length), trufflehog (AGPL: the `input`/`want` pairs of `pkg/detectors/*/*_test.go`, used
only as test material), detect-secrets (Apache-2.0: `tests/plugins/*_test.py`'s `(payload,
should_flag)` cases), Nosey Parker (Apache-2.0: the `examples` of its builtin rules in the `secret`
category, the secret their pattern's last group captures), Kingfisher (Apache-2.0: the `examples` of its
rules, in Nosey Parker's format, whose name says credential), secretlint (MIT: its rules' snapshot
cases, `ng.*` inputs with the credentials their `output.json` reports, `ok.*` inputs as negatives) and
trivy (Apache-2.0: its secret scanner's test cases run with the builtin rules, each input file with the
values its expected findings mask). bench_redact.py places each sample the ten ways the held-out bench
does and reports recall per source and per placement; the scanners' false-positive examples are the
negatives (not Nosey Parker's `negative_examples`: they say only that one rule must not fire there, and
most hold another kind of secret). Set GITLEAKS_GIT / TRUFFLEHOG_GIT / DETECT_SECRETS_GIT /
NOSEYPARKER_GIT / KINGFISHER_GIT / SECRETLINT_GIT / TRIVY_GIT to a clone's git directory (the defaults
are the mirrors of this machine); a missing clone is skipped.
"""

from __future__ import annotations

import ast
import itertools
import json
import os
import random
import re
import string
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import yaml

_MIRRORS = "/work/.mirror"
SOURCES = {
    "gitleaks": os.environ.get("GITLEAKS_GIT", f"{_MIRRORS}/gitleaks+gitleaks/repo"),
    "trufflehog": os.environ.get("TRUFFLEHOG_GIT", f"{_MIRRORS}/trufflesecurity+trufflehog/repo"),
    "detect-secrets": os.environ.get("DETECT_SECRETS_GIT", f"{_MIRRORS}/Yelp+detect-secrets/repo"),
    "noseyparker": os.environ.get("NOSEYPARKER_GIT", f"{_MIRRORS}/praetorian-inc+noseyparker/repo"),
    "kingfisher": os.environ.get("KINGFISHER_GIT", f"{_MIRRORS}/mongodb+kingfisher/repo"),
    "secretlint": os.environ.get("SECRETLINT_GIT", f"{_MIRRORS}/secretlint+secretlint/repo"),
    "trivy": os.environ.get("TRIVY_GIT", f"{_MIRRORS}/aquasecurity+trivy/repo"),
}
_PER_DETECTOR = 2  # trufflehog cases kept per detector (the first ones that name their secret)


@dataclass(frozen=True)
class Outside:
    source: str  # gitleaks, trufflehog, detect-secrets, noseyparker, kingfisher, secretlint, trivy
    kind: str  # the rule, detector or plugin it tests
    text: str
    secrets: tuple[str, ...]  # empty: a negative (the scanner's false-positive example)


def _git(repo: str, *args: str) -> str:
    return subprocess.run(["git", f"--git-dir={repo}", *args], capture_output=True, text=True, check=True).stdout


def _files(repo: str, under: str, suffix: str) -> list[str]:
    return [p for p in _git(repo, "ls-tree", "-r", "--name-only", "HEAD", under).splitlines() if p.endswith(suffix)]


def _show(repo: str, path: str) -> str:
    return _git(repo, "show", f"HEAD:{path}")


# --- gitleaks -------------------------------------------------------------------------------------

_GO_STRING = re.compile(r'`([^`]*)`|"((?:[^"\\\n]|\\.)*)"')
_GO_STRING_LITERAL = r'`[^`]*`|"(?:[^"\\\n]|\\.)*"'  # the same without groups, to sit inside a pattern
_ALPHABETS = {
    "AlphaNumeric": string.ascii_lowercase + string.digits,
    "AlphaNumericExtended": string.ascii_lowercase + string.digits + "=_-",
    "AlphaNumericExtendedShort": string.ascii_lowercase + string.digits + "_-",
    "AlphaNumericExtendedLong": string.ascii_lowercase + string.digits + "=_-.",
    "Hex": "0123456789abcdef",
    "Numeric": string.digits,
}
_NEW_SECRET = re.compile(r'secrets\.NewSecret\(utils\.(\w+)\("(\d+)"\)\)')
_SAMPLE_CALL = re.compile(r'utils\.GenerateSampleSecrets?\(\s*"([^"]+)",((?:[^()]|\((?:[^()]|\([^()]*\))*\))+)\)')
_RULE_ID = re.compile(r'RuleID:\s*"([^"]+)"')


def _go_unquote(match: re.Match[str]) -> str:
    raw, quoted = match.group(1), match.group(2)
    if raw is not None:
        return raw
    try:
        value: str = ast.literal_eval('"' + quoted + '"')
    except (SyntaxError, ValueError):
        return quoted
    return value


def _generated(expr: str, rng: random.Random) -> str | None:
    """`"glpat-" + secrets.NewSecret(utils.AlphaNumeric("20"))` with a random value, or None."""
    out = []
    for part in (p.strip() for p in expr.split("+")):
        literal = _GO_STRING.fullmatch(part)
        generated = _NEW_SECRET.fullmatch(part)
        if literal is not None:
            out.append(_go_unquote(literal))
        elif generated is not None and generated.group(1) in _ALPHABETS:
            alphabet = _ALPHABETS[generated.group(1)]
            out.append("".join(rng.choice(alphabet) for _ in range(int(generated.group(2)))))
        elif part == "secrets.NewSecret(utils.Hex8_4_4_4_12())":
            out.append(str(_uuid(rng)))
        else:
            return None
    return "".join(out)


def _uuid(rng: random.Random) -> str:
    h = "".join(rng.choice("0123456789abcdef") for _ in range(32))
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _block(source: str, name: str) -> list[str]:
    """The string literals of `name := []string{ … }` (comments dropped)."""
    start = source.find(f"{name} := []string{{")
    if start < 0:
        return []
    depth, i = 0, source.index("{", start)
    end = i
    while end < len(source):
        depth += {"{": 1, "}": -1}.get(source[end], 0)
        if depth == 0:
            break
        end += 1
    body = re.sub(r"^\s*//.*$", "", source[i + 1 : end], flags=re.M)
    # whole elements only: a literal between `{`/`,` and `,`/`}` (not part of a concatenation or call)
    return [
        _go_unquote(m)
        for m in _GO_STRING.finditer(body)
        if body[: m.start()].rstrip()[-1:] in ("", ",") and body[m.end() :].lstrip()[:1] in ("", ",")
    ]


def _secret_of(line: str) -> str | None:
    """The value in a scanner's one-line example: its longest run of token characters holding a
    digit (else the longest), not a URL or path."""
    runs = [r.strip(".") for r in re.findall(r"[A-Za-z0-9+/_.~$!@#%^&*-]{8,}={0,2}", line) if "//" not in r]
    runs = [r for r in runs if not r.startswith("/")]
    return max(runs, key=lambda r: (any(c.isdigit() for c in r), len(r))) if runs else None


def _gitleaks(repo: str, rng: random.Random) -> list[Outside]:
    out: list[Outside] = []
    for path in _files(repo, "cmd/generate/config/rules", ".go"):
        source = _show(repo, path)
        for function in re.split(r"\nfunc ", source)[1:]:
            found = _RULE_ID.search(function)
            if found is None:
                continue
            kind = found.group(1)
            for call in _SAMPLE_CALL.finditer(function):
                secret = _generated(call.group(2).strip(), rng)
                if secret:
                    ident = call.group(1)
                    for text in (
                        f'{ident}_api_token = "{secret}"',
                        f"{ident.upper().replace('-', '_')}_SECRET={secret}",
                        f"the {ident} token they gave us is {secret}, please rotate it",
                    ):
                        out.append(Outside("gitleaks", kind, text, (secret,)))
            for text in _block(function, "tps"):
                secret = _secret_of(text)
                if secret:
                    out.append(Outside("gitleaks", kind, text, (secret,)))
            out += [Outside("gitleaks", kind, t, ()) for t in _block(function, "fps") if len(t.strip()) >= 8]
    return out


# --- trufflehog -----------------------------------------------------------------------------------

_CASE = re.compile(
    r"\{\s*name:\s*\"([^\"]*)\",\s*input:\s*(`[^`]*`|\"(?:[^\"\\]|\\.)*\"),\s*want:\s*\[\]string\{([^}]*)\}"
)


def _trufflehog(repo: str) -> list[Outside]:
    out: list[Outside] = []
    for path in _files(repo, "pkg/detectors", "_test.go"):
        if "integration" in path:
            continue
        detector = path.split("/")[2]
        kept = 0
        for case in _CASE.finditer(_show(repo, path)):
            text = _go_unquote(_GO_STRING.fullmatch(case.group(2)))  # type: ignore[arg-type]
            wants = [_go_unquote(m) for m in _GO_STRING.finditer(case.group(3))]
            # a detector's `want` may join several values (`id:secret`); keep those standing in the text
            secrets = tuple(w for w in wants if w and w in text and len(w) >= 8)
            if not secrets or kept >= _PER_DETECTOR:
                continue
            kept += 1
            out.append(Outside("trufflehog", detector, re.sub(r"(?m)^[ \t]+", "", text).strip(), secrets))
    return out


# --- detect-secrets -------------------------------------------------------------------------------


def _parametrized(tree: ast.AST) -> list[dict[str, object]]:
    """The rows of every `pytest.mark.parametrize("…, should_flag", [...])` in a test module."""
    rows: list[dict[str, object]] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "parametrize"):
            continue
        if len(node.args) < 2 or not isinstance(node.args[0], ast.Constant):
            continue
        names = [n.strip() for n in str(node.args[0].value).split(",")]
        try:
            values = ast.literal_eval(node.args[1])
        except ValueError:
            continue
        if "should_flag" in names:
            rows += [
                dict(zip(names, row, strict=True))
                for row in values
                if isinstance(row, tuple) and len(row) == len(names)
            ]
    return rows


def _detect_secrets(repo: str) -> list[Outside]:
    out: list[Outside] = []
    for path in _files(repo, "tests/plugins", "_test.py"):
        plugin = path.rsplit("/", 1)[1].removesuffix("_test.py")
        for row in _parametrized(ast.parse(_show(repo, path))):
            payload = next((v for k, v in row.items() if k != "should_flag" and isinstance(v, str)), None)
            secret = _secret_of(payload) if payload and row["should_flag"] else None
            if payload and row["should_flag"] and secret:
                out.append(Outside("detect-secrets", plugin, payload, (secret,)))
            elif payload and not row["should_flag"]:
                out.append(Outside("detect-secrets", plugin, payload, ()))
    return out


# --- Nosey Parker --------------------------------------------------------------------------------

_NP_RULES = "crates/noseyparker/data/default/builtin/rules"
_HOST = re.compile(r"[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+(?::[0-9]{1,5})?/?|localhost(?::[0-9]{1,5})?")


def _rule_examples(source: str, repo: str, under: str, keep: Callable[[dict[str, Any]], bool]) -> list[Outside]:
    """Each kept rule's examples with the value its pattern's last group captures, not a URL or host
    name (a pattern in Rust's dialect Python does not compile, or an example it does not match, is
    skipped): Nosey Parker's rule format, which Kingfisher's rules share."""
    out: list[Outside] = []
    for path in _files(repo, under, ".yml"):
        for rule in (yaml.safe_load(_show(repo, path)) or {}).get("rules") or []:
            if not keep(rule):
                continue
            try:
                pattern = re.compile(rule["pattern"])
            except re.error:
                continue
            for text in rule.get("examples") or []:
                found = pattern.search(text)
                # the last group that is no URL or host name (a connection string's host comes last)
                groups = [g for g in found.groups() if g and not _HOST.fullmatch(g) and "://" not in g] if found else []
                secret = groups[-1] if groups else None
                if secret:
                    out.append(Outside(source, rule["id"], text, (secret,)))
    return out


def _noseyparker(repo: str) -> list[Outside]:
    """The examples of Nosey Parker's rules in the `secret` category: the others find identifiers
    (hosts, account ids, bucket names)."""
    return _rule_examples("noseyparker", repo, _NP_RULES, lambda rule: "secret" in (rule.get("categories") or []))


# --- Kingfisher ----------------------------------------------------------------------------------

_KF_RULES = "data/rules"
# Kingfisher's rules carry no category: a rule whose name says credential is kept, not one that
# names an identifier (`Azure Storage Account Name`, `Facebook App ID`, `Snowflake Username`)
_KF_CREDENTIAL = re.compile(r"(?i)key|token|secret|passw|credential|\bpat\b|private|webhook|auth|connection|dsn|jwt")
_KF_IDENTIFIER = re.compile(
    r"(?i)(?<!access key )\b(?:id|identifier|username|email|name|url|host|domain|org|organization)$"
)


def _credential_rule(rule: dict[str, Any]) -> bool:
    name = str(rule.get("name", ""))
    return _KF_CREDENTIAL.search(name) is not None and _KF_IDENTIFIER.search(name) is None


def _kingfisher(repo: str) -> list[Outside]:
    """The examples of Kingfisher's rules (Nosey Parker's format; trufflehog's provider-keyword
    detectors among them) whose name says credential."""
    return _rule_examples("kingfisher", repo, _KF_RULES, _credential_rule)


# --- secretlint ----------------------------------------------------------------------------------

_SL_RULES = "packages/@secretlint"
# rules that find no credential (a home directory, a .env file being there) or test the tool itself
_SL_NOT_CREDENTIALS = ("no-homedir", "no-dotenv", "filter-comments", "example", "pattern", "preset-")
# findings that name an identifier, not a credential
_SL_IDENTIFIER = re.compile(r"(?i)(?:tenant|client|account)_?id$")
_USERINFO_PASSWORD = re.compile(r"://[^:/@\s]*:(\S+)@")  # up to the last `@`: a password may hold one


def _secretlint_secret(text: str, finding: dict[str, Any]) -> str | None:
    """The credential a finding reports in its `data` (its `range` is not always the value's): a
    URL's password, not the user and host around it, which a redactor keeps."""
    if _SL_IDENTIFIER.search(str(finding.get("messageId", ""))):
        return None
    for name, value in (finding.get("data") or {}).items():
        if name not in ("PATTERN_NAME", "typeName", "FILE_NAME", "PATH") and isinstance(value, str) and value in text:
            userinfo = _USERINFO_PASSWORD.search(value)
            return userinfo.group(1) if userinfo else value
    return None


def _secretlint(repo: str) -> list[Outside]:
    """secretlint's rule snapshots: `<rule>/test/snapshots/<ng|ok>.<case>/input*`. A case run with
    options of its own (`.secretlintrc.json`: an allow list, a rule switched off) and a binary input
    (a .p12 file) are left out; an `ng` case's secrets are the credentials its output.json reports."""
    cases: dict[str, list[str]] = {}
    for path in _git(repo, "ls-tree", "-r", "--name-only", "HEAD", _SL_RULES).splitlines():
        parts = path.split("/")
        if len(parts) == 7 and parts[2].startswith("secretlint-rule-") and parts[3:5] == ["test", "snapshots"]:
            cases.setdefault("/".join(parts[:6]), []).append(parts[6])
    out: list[Outside] = []
    for case, names in sorted(cases.items()):
        rule, verdict = case.split("/")[2].removeprefix("secretlint-rule-"), case.split("/")[5].split(".")[0]
        inputs = [n for n in names if n.startswith("input")]
        if rule.startswith(_SL_NOT_CREDENTIALS) or ".secretlintrc.json" in names or len(inputs) != 1:
            continue
        try:
            text = _show(repo, f"{case}/{inputs[0]}")
        except UnicodeDecodeError:
            continue
        if verdict == "ok":
            out.append(Outside("secretlint", rule, text, ()))
        elif verdict == "ng" and "output.json" in names:
            found = json.loads(_show(repo, f"{case}/output.json")).get("messages") or []
            secrets = tuple(dict.fromkeys(filter(None, (_secretlint_secret(text, m) for m in found))))
            if secrets:
                out.append(Outside("secretlint", rule, text, secrets))
    return out


# --- trivy ---------------------------------------------------------------------------------------

_TRIVY_TESTS = "pkg/fanal/secret/scanner_test.go"
_TRIVY_RULES = "pkg/fanal/secret/builtin-rules.go"
_TRIVY_FINDING = re.compile(r"(\w+)\s*:=\s*types\.SecretFinding\{")
_TRIVY_CASE = re.compile(r"(?m)^\t\t\{\n\t\t\tname:")
# a field's value: a literal, a constant, or a literal and a mask (`"AccountKey=" + strings.Repeat("*", 88)`)
_TRIVY_FIELD = re.compile(rf'(RuleID|Match):\s*({_GO_STRING_LITERAL}|\w+)(?:\s*\+\s*strings\.Repeat\("\*", (\d+)\))?')
_TRIVY_CONSTANT = re.compile(rf"(?m)^\s*(\w+)\s*:?=\s*({_GO_STRING_LITERAL})\s*$")
# a finding a helper builds: `openAIFinding("openai-project-api-key", "…", "CRITICAL", 56)`, a mask of 56
_TRIVY_HELPER = re.compile(r'(\w+)\s*:=\s*\w+Finding\("([a-z0-9-]+)"[^)\n]*?(\d+)\)')
_TRIVY_PATH = re.compile(r'(configPath|inputFilePath):\s*filepath\.Join\("testdata", "([^"]+)"\)')
_TRIVY_BUILTIN = ("skip-test.yaml", "config.yaml")  # the builtin rules (config.yaml adds a custom one)


def _go_literal(text: str, constants: dict[str, str]) -> str:
    """A Go string literal's value, or the value of the constant `text` names."""
    literal = _GO_STRING.fullmatch(text)
    return _go_unquote(literal) if literal else constants.get(text, "")


def _trivy_fields(block: str, constants: dict[str, str]) -> list[tuple[str, str]]:
    """(rule id, match) of each finding spelt in `block`, in order."""
    fields = [
        (name, _go_literal(value, constants) + "*" * int(mask or 0))
        for name, value, mask in _TRIVY_FIELD.findall(block)
    ]
    rules = [v for n, v in fields if n == "RuleID"]
    matches = [v for n, v in fields if n == "Match"]
    return list(zip(rules, matches, strict=False))


def _trivy_secrets(content: str, match: str) -> list[str]:
    """The values a finding masks: its `Match` is the line with the secret as `*`s (or, unmasked,
    the secret itself); a quote the mask took in is no part of it."""
    if "*" not in match:
        return [match] if match and match in content else []
    parts = re.split(r"(\*+)", match)
    pattern = "".join(f"(.{{{len(p)}}})" if p.startswith("*") else re.escape(p) for p in parts if p)
    found = re.search(pattern, content)
    return [g.strip().strip("\"'") for g in found.groups() if g.strip()] if found else []


def _trivy(repo: str) -> list[Outside]:
    """trivy's secret scanner tests (Apache-2.0): each case run with the builtin rules, its input
    file and the values its expected findings mask (a custom rule's findings left out); a case that
    expects no finding is a negative."""
    tests = _show(repo, _TRIVY_TESTS)
    builtin = set(re.findall(r'ID:\s*"([a-z0-9-]+)"', _show(repo, _TRIVY_RULES)))
    constants = {name: _go_literal(value, {}) for name, value in _TRIVY_CONSTANT.findall(tests)}
    constants |= {name: "*" * int(n) for name, n in re.findall(r'(\w+) := strings\.Repeat\("\*", (\d+)\)', tests)}
    named: dict[str, list[tuple[str, str]]] = {}
    for found in _TRIVY_FINDING.finditer(tests):
        end = tests.find("\n\t}\n", found.end())
        named[found.group(1)] = _trivy_fields(tests[found.end() : end], constants)
    for name, rule, length in _TRIVY_HELPER.findall(tests):
        named[name] = [(rule, "*" * int(length))]
    out: list[Outside] = []
    starts = [m.start() for m in _TRIVY_CASE.finditer(tests)] + [len(tests)]
    for start, end in itertools.pairwise(starts):
        case = tests[start:end]
        paths = dict(_TRIVY_PATH.findall(case))
        if paths.get("configPath") not in _TRIVY_BUILTIN or "inputFilePath" not in paths:
            continue
        try:
            content = _show(repo, f"pkg/fanal/secret/testdata/{paths['inputFilePath']}")
        except (subprocess.CalledProcessError, UnicodeDecodeError):
            continue
        findings = _trivy_fields(case, constants)
        findings += [finding for name in re.findall(r"\w+", case) for finding in named.get(name, [])]
        secrets = tuple(
            dict.fromkeys(s for rule, match in findings if rule in builtin for s in _trivy_secrets(content, match))
        )
        if secrets:
            out.append(Outside("trivy", paths["inputFilePath"], content, secrets))
        elif re.search(r"want:\s*types\.Secret\{\}", case) and paths["configPath"] == "skip-test.yaml":
            out.append(Outside("trivy", paths["inputFilePath"], content, ()))
    return out


@lru_cache(maxsize=1)
def samples(seed: int = 20261129) -> tuple[Outside, ...]:
    """Every sample from the clones that exist, in a fixed order."""
    rng = random.Random(seed)
    out: list[Outside] = []
    for source, repo in SOURCES.items():
        if not os.path.isdir(repo):
            continue
        if source == "gitleaks":
            out += _gitleaks(repo, rng)
        elif source == "trufflehog":
            out += _trufflehog(repo)
        elif source == "noseyparker":
            out += _noseyparker(repo)
        elif source == "kingfisher":
            out += _kingfisher(repo)
        elif source == "secretlint":
            out += _secretlint(repo)
        elif source == "trivy":
            out += _trivy(repo)
        else:
            out += _detect_secrets(repo)
    return tuple(out)
