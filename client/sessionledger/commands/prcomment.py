"""`pr-links --gh --update`: keep one comment per pull request, edited on every push.

The comment is found by its first line (the `pr-links` header) among the PR's comments through
`gh api` (the GitHub CLI resolves `{owner}/{repo}` from the checkout); none yet → a new one.
"""

from __future__ import annotations

import json
import subprocess

from sessionledger.commands.common import CommandError


def _gh(gh: str, args: list[str], root: str, body: str | None = None) -> str:
    result = subprocess.run([gh, *args], input=body, text=True, capture_output=True, cwd=root, check=False)
    if result.returncode != 0:
        reason = (result.stderr or result.stdout).strip().splitlines()
        raise CommandError(f"gh {args[0]} failed: {reason[-1] if reason else f'exit {result.returncode}'}")
    return result.stdout


def _number(gh: str, pr: str | None, root: str) -> str:
    if pr and pr.isdigit():
        return pr
    out = _gh(gh, ["pr", "view", *([pr] if pr else []), "--json", "number", "--jq", ".number"], root)
    if not out.strip().isdigit():
        raise CommandError("cannot tell the pull request's number: give --pr N")
    return out.strip()


def update(gh: str, pr: str | None, markdown: str, root: str, header: str) -> int:
    number = _number(gh, pr, root)
    listed = _gh(gh, ["api", "--paginate", f"repos/{{owner}}/{{repo}}/issues/{number}/comments"], root)
    ours = [c for c in _comments(listed) if str(c.get("body") or "").startswith(header)]
    if ours:
        comment = ours[-1]["id"]
        patch = ["api", "-X", "PATCH", f"repos/{{owner}}/{{repo}}/issues/comments/{comment}", "-F", "body=@-"]
        _gh(gh, patch, root, markdown)
        print(f"Updated the comment on pull request #{number}.")
        return 0
    out = _gh(gh, ["pr", "comment", number, "--body-file", "-"], root, markdown)
    print(out.strip() or f"Posted the comment on pull request #{number}.")
    return 0


def _comments(listed: str) -> list[dict]:
    """`gh api --paginate` prints one JSON array per page, back to back."""
    decoder, found, position = json.JSONDecoder(), [], 0
    text = listed.strip()
    while position < len(text):
        try:
            page, position = decoder.raw_decode(text, position)
        except ValueError:
            raise CommandError("gh api answered something that is not the list of comments") from None
        found += [c for c in page if isinstance(c, dict)] if isinstance(page, list) else []
        while position < len(text) and text[position].isspace():
            position += 1
    return found
