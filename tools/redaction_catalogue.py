"""Build the redactor's provider catalogue from gitleaks' default rules (MIT) of a pinned release.

    .venv/bin/python tools/redaction_catalogue.py                      # download the pinned release
    .venv/bin/python tools/redaction_catalogue.py --git PATH/gitleaks  # or read it from a local clone

Reads `config/gitleaks.toml` at the pinned tag, checks its SHA-256, translates every rule's RE2 pattern
to Python (sessionledger.core.redaction.re2: each translation is tested), refuses a rule whose pattern
could backtrack without bound, and writes `client/sessionledger/core/redaction/catalogue/gitleaks.json`
(plus gitleaks' licence beside it). `make redaction-catalogue` runs this and shows the diff. To move to
a newer release, change the pin below (tag, commit, digest) and review the diff.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import tomllib
import urllib.request
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--git", type=Path, help="a local gitleaks clone holding the pinned commit")
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
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
