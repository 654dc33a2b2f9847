"""Build the redactor's provider catalogues from pinned releases of gitleaks (MIT) and Kingfisher (Apache-2.0).

    .venv/bin/python tools/redaction_catalogue.py                      # download the pinned releases
    .venv/bin/python tools/redaction_catalogue.py --git PATH/gitleaks --kingfisher-git PATH/kingfisher

Reads `config/gitleaks.toml` at the pinned tag, checks its SHA-256, translates every rule's RE2 pattern
to Python (sessionledger.core.redaction.re2: each translation is tested), refuses a rule whose pattern
could backtrack without bound, and writes `client/sessionledger/core/redaction/catalogue/gitleaks.json`
(plus gitleaks' licence beside it). From Kingfisher's rules (`data/rules/*.yml`, one file per provider,
most in trufflehog's provider-keyword style) it takes only the providers' names, the file names, and
writes `catalogue/kingfisher-providers.json`: the names the provider-near-token rule looks behind.
`make redaction-catalogue` runs this and shows the diff. To move to a newer release, change the pins
below (tag, commit, digest) and review the diff.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import tarfile
import tomllib
import urllib.request
from io import BytesIO
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "client"))

from sessionledger.core.redaction.re2 import NESTING_MAX, TranslationError, nesting, translate  # noqa: E402

VERSION = "v8.30.1"
COMMIT = "83d9cd684c87d95d656c1458ef04895a7f1cbd8e"
SHA256 = "e163e53b9e7e8a8511e77271e2b323ed057759542a6d988258afe3a1fa329caf"
URL = "https://raw.githubusercontent.com/gitleaks/gitleaks/{commit}/{path}"
OUT = ROOT / "client" / "sessionledger" / "core" / "redaction" / "catalogue"

KINGFISHER_VERSION = "v1.10.0"
KINGFISHER_COMMIT = "ee7c0db3ef87575768f817820c24736249ffcdef"
# over the rule files' paths and bytes in path order (an archive's own bytes are not stable)
KINGFISHER_SHA256 = "7709a7cd5308c426fbed78c4904ab7a4c5f4527a43b826bd0e3dfe3483fb5927"
KINGFISHER_ARCHIVE = "https://codeload.github.com/mongodb/kingfisher/tar.gz/{commit}"
KINGFISHER_RULES = "data/rules/"
# a file name is the provider's name, sometimes with what the rule finds glued on (`calendlyapikey`,
# `telegrambottoken`, `pagerdutyapikey`, `zapierwebhook`) or a version (`twitter_v2`)
_KIND_SUFFIX = re.compile(
    r"(?:_v[0-9]+|[0-9]+)$|(?:api)?(?:key|token|accesstoken|bottoken|oauth|oauth2|basicauth|webhook|query|url)$"
)
# names that are English or code words too: a token after them is no provider's (`close(…)`, `react`)
NOT_PROVIDERS = {
    "alchemy": "English", "apollo": "English, and GraphQL's client", "autopilot": "English",
    "chatbot": "English", "cicero": "a name", "close": "a method in every language",
    "column": "English, SQL", "courier": "English", "credentials": "English",
    "debounce": "a function in every UI codebase", "fulcrum": "English", "generic": "English",
    "geocode": "a verb of every maps API", "hashes": "English", "holistic": "English",
    "honeycomb": "English", "humanity": "English", "hunter": "English", "impala": "English, and a SQL engine",
    "ionic": "English, and a UI framework", "linear": "English", "magnetic": "English",
    "moderation": "English", "netrc": "a file, ours elsewhere", "noticeable": "English",
    "paypal": "its client ids are public", "polygon": "English, geometry", "postgres": "a database",
    "privacy": "English", "privkey": "a file name", "psexec": "a command, ours elsewhere",
    "react": "a UI library", "replicate": "English; its prediction ids look random", "semaphore": "a primitive",
    "shortcut": "English", "snowflake": "English, and an id scheme", "spotify": "its track ids look random",
    "square": "English", "teletype": "English",
    "collect": "English", "dandelion": "English", "delighted": "English", "ditto": "English",
    "django": "a web framework", "enigma": "English", "eraser": "English", "float": "a type",
    "front": "English", "monday": "English", "nimble": "English, and a language", "notion": "English",
    "postman": "English, and a tool", "prefect": "English, and a library", "raven": "English, and Sentry's old client",
    "readme": "a file name", "refiner": "English", "segment": "English", "streak": "English",
    "virustotal": "its reports name file hashes", "etherscan": "its pages name transaction hashes",
    "bscscan": "its pages name transaction hashes", "ethplorer": "its pages name addresses",
}  # fmt: skip

# Rules our own rules_data.py covers with transcript-aware patterns (multi-line blocks, numbered Read
# output, JSON-escaped quotes); the catalogue's versions would only duplicate them, more slowly.
OWN = {
    "private-key": "rules_data private-key (PEM blocks across JSON strings and numbered lines)",
    "pkcs12-file": "a path rule: no pattern",
    "curl-auth-header": "rules_data curl/authorization rules (spans lines with `.*?`)",
    "curl-auth-user": "rules_data curl-user",
    "kubernetes-secret-yaml": "rules_data kubernetes-secret (a multi-line block)",
    "generic-api-key": "rules_data generic-secret and keyword-near-token (its stopword vetoes drop real secrets)",
}
# A semi-generic rule starts `[\w.-]{0,50}?` before its keyword (to report the whole name): it
# constrains nothing and costs a lazy retry at every position, so the build drops it.
_NAME_LEAD = re.compile(r"^(\(\?i\))?\[\\w\.-\]\{0,50\}\?")


def source(git: Path | None) -> tuple[bytes, bytes]:
    """(gitleaks.toml, LICENSE) of the pinned release, from a clone or GitHub."""
    if git is not None:
        show = ["git", "-C", str(git), "show"]
        toml = subprocess.run([*show, f"{COMMIT}:config/gitleaks.toml"], check=True, capture_output=True).stdout
        licence = subprocess.run([*show, f"{COMMIT}:LICENSE"], check=True, capture_output=True).stdout
        return toml, licence
    fetched = []
    for path in ("config/gitleaks.toml", "LICENSE"):
        with urllib.request.urlopen(URL.format(commit=COMMIT, path=path), timeout=60) as response:
            fetched.append(response.read())
    return fetched[0], fetched[1]


def build(toml: bytes) -> dict[str, Any]:
    config = tomllib.loads(toml.decode())
    rules: list[dict[str, Any]] = []
    skipped: dict[str, str] = {}
    for rule in config["rules"]:
        ident = rule["id"]
        if ident in OWN:
            skipped[ident] = OWN[ident]
            continue
        try:
            regex = translate(_NAME_LEAD.sub(r"\1", rule["regex"]))
            worst = nesting(regex)
            re.compile(regex.encode())
        except (TranslationError, re.error) as error:
            skipped[ident] = f"untranslatable: {error}"
            continue
        if worst > NESTING_MAX:
            skipped[ident] = f"nested repetitions up to {worst}x per position"
            continue
        allow: list[str] = []
        allow_match: list[str] = []
        stopwords: list[str] = []
        for allowlist in rule.get("allowlists", ()):
            if allowlist.get("paths") or allowlist.get("condition"):
                continue  # a path allowlist means nothing in a transcript
            target = allowlist.get("regexTarget", "secret")
            translated = [translate(r, json_text=False) for r in allowlist.get("regexes", ())]
            if target == "secret":
                allow += translated
            elif target == "match":
                allow_match += translated
            stopwords += [w.lower() for w in allowlist.get("stopwords", ())]
        rules.append(
            {
                "id": ident,
                "description": rule["description"],
                "regex": regex,
                "secret_group": rule.get("secretGroup", 0),
                "entropy": rule.get("entropy", 0.0),
                "keywords": sorted({k.lower() for k in rule.get("keywords", ())}),
                "allow": allow,
                "allow_match": allow_match,
                "stopwords": sorted(set(stopwords)),
            }
        )
    glob = config.get("allowlist", {})
    return {
        "source": "gitleaks config/gitleaks.toml (MIT, see LICENSE-gitleaks.txt)",
        "version": VERSION,
        "commit": COMMIT,
        "sha256": hashlib.sha256(toml).hexdigest(),
        "allow": [translate(r, json_text=False) for r in glob.get("regexes", ())],
        "stopwords": [w.lower() for w in glob.get("stopwords", ())],
        "skipped": skipped,
        "rules": rules,
    }


def kingfisher_source(git: Path | None) -> tuple[dict[str, bytes], bytes]:
    """({rule file path: its bytes}, LICENSE) of Kingfisher's pinned release: a clone's `git archive`
    of the pinned commit or GitHub's archive of it, read the same way."""
    if git is not None:
        command = ["git", f"--git-dir={git}", "archive", "--format=tar.gz", f"--prefix=kingfisher-{KINGFISHER_COMMIT}/"]
        command += [KINGFISHER_COMMIT, KINGFISHER_RULES, "LICENSE"]
        data = subprocess.run(command, check=True, capture_output=True).stdout
    else:
        with urllib.request.urlopen(KINGFISHER_ARCHIVE.format(commit=KINGFISHER_COMMIT), timeout=120) as response:
            data = response.read()
    files, licence = {}, b""
    with tarfile.open(fileobj=BytesIO(data), mode="r:gz") as archive:
        for member in archive.getmembers():
            path = member.name.split("/", 1)[-1]  # under the archive's `kingfisher-<commit>/`
            handle = archive.extractfile(member) if member.isfile() else None
            if handle is None:
                continue
            if path.startswith(KINGFISHER_RULES):
                files[path] = handle.read()
            elif path == "LICENSE":
                licence = handle.read()
    return files, licence


def kingfisher_digest(files: dict[str, bytes]) -> str:
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(path.encode() + b"\0" + files[path] + b"\0")
    return digest.hexdigest()


def build_kingfisher(files: dict[str, bytes]) -> dict[str, Any]:
    """The provider names Kingfisher's rule files are named after: alphabetic, five letters or more
    once a glued-on kind is cut (`calendlyapikey` → `calendly`), and no English or code word."""
    names: set[str] = set()
    for path in files:
        if not path.endswith(".yml"):
            continue
        stem = path.removeprefix(KINGFISHER_RULES).removesuffix(".yml")
        name = _KIND_SUFFIX.sub("", stem)
        if name.isalpha() and name.isascii() and len(name) >= 5 and name not in NOT_PROVIDERS:
            names.add(name)
    return {
        "source": "Kingfisher data/rules/*.yml file names (Apache-2.0, see LICENSE-kingfisher.txt)",
        "version": KINGFISHER_VERSION,
        "commit": KINGFISHER_COMMIT,
        "sha256": kingfisher_digest(files),
        "not_providers": dict(sorted(NOT_PROVIDERS.items())),
        "providers": sorted(names),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--git", type=Path, help="a local gitleaks clone holding the pinned commit")
    parser.add_argument("--kingfisher-git", type=Path, help="a Kingfisher git directory holding its pinned commit")
    args = parser.parse_args(argv)
    toml, licence = source(args.git)
    digest = hashlib.sha256(toml).hexdigest()
    if digest != SHA256:
        print(f"gitleaks.toml at {VERSION} has SHA-256 {digest}, the pin says {SHA256}", file=sys.stderr)
        return 1
    catalogue = build(toml)
    OUT.mkdir(exist_ok=True)
    (OUT / "gitleaks.json").write_text(json.dumps(catalogue, indent=1, ensure_ascii=True) + "\n")
    (OUT / "LICENSE-gitleaks.txt").write_bytes(licence)
    print(f"{len(catalogue['rules'])} rules from gitleaks {VERSION}, {len(catalogue['skipped'])} skipped")
    for ident, why in catalogue["skipped"].items():
        print(f"  skipped {ident}: {why}")
    files, kf_licence = kingfisher_source(args.kingfisher_git)
    digest = kingfisher_digest(files)
    if digest != KINGFISHER_SHA256:
        pin = f"the pin says {KINGFISHER_SHA256}"
        print(f"Kingfisher's rules at {KINGFISHER_VERSION} have SHA-256 {digest}, {pin}", file=sys.stderr)
        return 1
    providers = build_kingfisher(files)
    (OUT / "kingfisher-providers.json").write_text(json.dumps(providers, indent=1, ensure_ascii=True) + "\n")
    (OUT / "LICENSE-kingfisher.txt").write_bytes(kf_licence)
    print(f"{len(providers['providers'])} provider names from Kingfisher {KINGFISHER_VERSION}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
