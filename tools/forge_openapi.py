"""Extract the GitHub REST operations ``integrations/`` calls from GitHub's published OpenAPI description.

    npm pack @octokit/openapi@23.0.2      # in a scratch directory: the package carries api.github.com's
    .venv/bin/python tools/forge_openapi.py PATH/octokit-openapi-23.0.2.tgz

(``make forge-openapi NPM_TGZ=PATH`` runs this.) Writes ``tests/fixtures/github_openapi/operations.json``:
for each operation below, its parameters and request body schema (``$ref``s already resolved in the
package's ``deref`` file), not its responses — the suite validates the requests the app sends. The
package is MIT licensed (its LICENSE is copied beside the fixture). To move to a newer package, change
``PACKAGE`` and review the diff.
"""

from __future__ import annotations

import argparse
import json
import sys
import tarfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "fixtures" / "github_openapi"
PACKAGE = "@octokit/openapi@23.0.2"
DESCRIPTION = "package/generated/api.github.com.deref.json"

# (method, path template) of every call integrations/forges/github.py makes.
OPERATIONS = [
    ("post", "/app/installations/{installation_id}/access_tokens"),
    ("get", "/repos/{owner}/{repo}/pulls/{pull_number}/commits"),
    ("get", "/repos/{owner}/{repo}/compare/{basehead}"),
    ("get", "/repos/{owner}/{repo}/commits/{ref}"),
    ("get", "/repos/{owner}/{repo}/issues/{issue_number}/comments"),
    ("post", "/repos/{owner}/{repo}/issues/{issue_number}/comments"),
    ("patch", "/repos/{owner}/{repo}/issues/comments/{comment_id}"),
    ("post", "/repos/{owner}/{repo}/check-runs"),
    ("patch", "/repos/{owner}/{repo}/check-runs/{check_run_id}"),
]


def extract(description: dict[str, Any]) -> dict[str, Any]:
    operations: dict[str, Any] = {}
    for method, template in OPERATIONS:
        operation = description["paths"][template][method]
        body = (operation.get("requestBody") or {}).get("content", {}).get("application/json", {})
        operations[f"{method.upper()} {template}"] = {
            "operationId": operation["operationId"],
            "parameters": [
                {"name": p["name"], "in": p["in"], "required": bool(p.get("required")), "schema": p.get("schema", {})}
                for p in operation.get("parameters", [])
            ],
            "requestBody": body.get("schema"),
            "requestBodyRequired": bool((operation.get("requestBody") or {}).get("required")),
        }
    return {
        "source": f"npm {PACKAGE}, {DESCRIPTION.removeprefix('package/')}",
        "openapi": description["openapi"],
        "version": description["info"]["version"],
        "operations": operations,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tarball", type=Path, help=f"the file `npm pack {PACKAGE}` wrote")
    args = parser.parse_args(argv)
    with tarfile.open(args.tarball) as archive:
        description = json.load(archive.extractfile(DESCRIPTION))  # type: ignore[arg-type]
        licence = archive.extractfile("package/LICENSE").read()  # type: ignore[union-attr]
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "operations.json").write_text(json.dumps(extract(description), indent=1, sort_keys=True) + "\n")
    (OUT / "LICENSE").write_bytes(licence)
    print(f"wrote {OUT / 'operations.json'} ({len(OPERATIONS)} operations)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
