"""The chart's README (deploy/helm/sessionledger/README.md), written from its values.yaml.

A key is documented by the ``# -- …`` comment directly above it (continued by the ``#`` lines after it),
as helm-docs reads them; its default is its value in values.yaml. Every key with a value on its own line
gets a row; a key whose value is an indented block only when it has a comment. `tests/test_helm_chart.py` checks the
README is what this script writes, so a new value without a line there fails the tests.

    .venv/bin/python tools/chart_readme.py          # rewrite the README
    .venv/bin/python tools/chart_readme.py --check  # exit 1 if it is out of date
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

CHART = Path(__file__).resolve().parents[1] / "deploy" / "helm" / "sessionledger"
README = CHART / "README.md"
_KEY = re.compile(r"^(?P<indent> *)(?P<key>[A-Za-z][A-Za-z0-9_]*):(?: |$)")

INTRO = """# Sessionledger Helm chart

<!-- Written by tools/chart_readme.py from values.yaml: edit those comments, then run the script. -->

Sessionledger's web (gunicorn), worker and beat (Celery), and its migrations as a hook Job, on Kubernetes.
PostgreSQL, Redis and the S3 bucket are external. Installing, the image, credentials, the database roles
and the install test: [docs/deployment.md](../../../docs/deployment.md#kubernetes).

```sh
helm upgrade --install ledger deploy/helm/sessionledger -n sessionledger --create-namespace \\
  --set siteUrl=https://ledger.example.com --set image.tag=0.1.0
helm test ledger -n sessionledger
```

`values.schema.json` refuses a misspelt or malformed value before anything is applied.

## Values

| Key | Default | Description |
|-----|---------|-------------|
"""


@dataclass(frozen=True)
class Row:
    key: str
    default: Any
    description: str


def rows(text: str) -> list[Row]:
    """Every documented key of values.yaml, in file order, with its default and its comment."""
    values = yaml.safe_load(text)
    found: list[Row] = []
    path: list[tuple[int, str]] = []
    comment: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("# --"):
            comment = [stripped[4:].strip()]
            continue
        if stripped.startswith("#") and comment:
            comment.append(stripped[1:].strip())
            continue
        match = _KEY.match(line)
        if not match:
            if not stripped.startswith("-"):  # list items keep the comment for nothing; others drop it
                comment = []
            continue
        indent = len(match["indent"])
        path = [(level, key) for level, key in path if level < indent] + [(indent, match["key"])]
        block = line.rstrip().endswith(":")
        if comment or not block:
            default = _lookup(values, [key for _, key in path])
            found.append(
                Row(
                    ".".join(key for _, key in path),
                    _BLOCK if block and isinstance(default, dict) else default,
                    " ".join(comment),
                )
            )
        comment = []
    return found


_BLOCK = object()  # a parent key: its children have their own rows


def _lookup(values: Any, keys: list[str]) -> Any:
    for key in keys:
        values = values[key]
    return values


def render(text: str) -> str:
    lines = [INTRO.rstrip("\n")]
    for row in rows(text):
        default = "" if row.default is _BLOCK else f"`{json.dumps(row.default, separators=(', ', ': '))}`"
        description = row.description.replace("|", "\\|")
        lines.append(f"| `{row.key}` | {default} | {description} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    wanted = render((CHART / "values.yaml").read_text())
    if "--check" in argv:
        if README.read_text() != wanted:
            print(f"{README} is out of date: run tools/chart_readme.py", file=sys.stderr)
            return 1
        return 0
    README.write_text(wanted)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
