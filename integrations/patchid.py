"""``git patch-id --stable`` of a commit, computed from the per-file diffs a forge's API returns.

The forges give each file's hunks without git's header lines, so the header ``git diff`` would print
is rebuilt (``diff --git``, the mode line of a new or deleted file, ``---``/``+++``); the rest is git's
algorithm (``builtin/patch-id.c``): per file, SHA-1 of every header and hunk line with all whitespace
removed, hunk headers and ``index`` lines and ``\\ No newline`` markers left out; the files' digests are
summed as 20-byte little-endian numbers, so their order does not matter. File modes are not in the
forges' answers: a new or deleted file is taken as ``100644``, as most are. Both sides of a match go
through this same function, so a mode it cannot see only makes a commit unmatched, never mismatched.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

DEFAULT_MODE = "100644"


@dataclass(frozen=True)
class FileDiff:
    old_path: str  # "" for a new file
    new_path: str  # "" for a deleted file
    patch: str  # the hunks, from the first "@@" on; "" for a binary file or one too large to show
    old_mode: str = DEFAULT_MODE
    new_mode: str = DEFAULT_MODE


def _squeeze(line: str) -> bytes:
    return "".join(line.split()).encode()


def _file_digest(diff: FileDiff) -> bytes:
    old, new = diff.old_path or diff.new_path, diff.new_path or diff.old_path
    digest = hashlib.sha1(usedforsecurity=False)
    digest.update(_squeeze(f"diff --git a/{old} b/{new}"))
    if not diff.old_path:
        digest.update(_squeeze(f"new file mode {diff.new_mode}"))
    elif not diff.new_path:
        digest.update(_squeeze(f"deleted file mode {diff.old_mode}"))
    elif diff.old_path != diff.new_path:
        digest.update(_squeeze(f"rename from {old}"))
        digest.update(_squeeze(f"rename to {new}"))
    digest.update(_squeeze(f"--- a/{old}" if diff.old_path else "--- /dev/null"))
    digest.update(_squeeze(f"+++ b/{new}" if diff.new_path else "+++ /dev/null"))
    for line in diff.patch.splitlines():
        if line.startswith("@@") or (line.startswith("\\ ") and len(line) > 11):
            continue
        digest.update(_squeeze(line))
    return digest.digest()


def patch_id(files: list[FileDiff]) -> str:
    """The commit's stable patch id (40 hex), or "" for a commit that changes no text (nothing to match)."""
    if not any(f.patch for f in files):
        return ""
    total = 0
    for diff in files:
        total += int.from_bytes(_file_digest(diff), "little")
    return (total % (1 << 160)).to_bytes(20, "little").hex()
