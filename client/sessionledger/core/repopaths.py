"""Paths in `files_touched`: relative to the repository root, never absolute (docs/client.md
"files_touched").

An absolute path says where one developer keeps the repository (`/Users/<name>/…`): it leaks that
layout to the server and matches no other developer's `files=` filter. So the client makes every
path relative to the repository root; a file outside the repository is kept as
`<outside>/<basename>` (that the session touched something there, not where). The server applies
`normalise` to what older clients sent.
"""

from __future__ import annotations

import ntpath
import os

OUTSIDE = "<outside>"


def is_absolute(path: str) -> bool:
    """POSIX, home-relative, or Windows (`C:\\`, `C:/`, `\\\\server`) absolute paths."""
    return path.startswith(("/", "~", "\\")) or (len(path) > 2 and path[1] == ":" and path[2] in "/\\")


def outside(path: str) -> str:
    name = ntpath.basename(path.rstrip("/\\")) or "?"
    return f"{OUTSIDE}/{name}"


def relative(path: str, root: str, cwd: str | None = None) -> str:
    """`path` (absolute, or relative to `cwd`, else to `root`) relative to the repository `root`."""
    if not path:
        return path
    base = cwd or root
    full = path if os.path.isabs(path) else os.path.join(base, path)
    for candidate, top in ((os.path.normpath(full), os.path.normpath(root)), _real(full, root)):
        rel = os.path.relpath(candidate, top) if candidate.startswith(top.rstrip(os.sep) + os.sep) else None
        if rel:
            return rel.replace(os.sep, "/")
    return outside(path)


def _real(path: str, root: str) -> tuple[str, str]:
    """Both sides with symlinks resolved (`/var` is `/private/var` on macOS)."""
    return os.path.realpath(path), os.path.realpath(root)


def normalise(paths: list[str]) -> list[str]:
    """Relative paths as they are; an absolute path that ends with one of them is that file (a
    tool call's path beside the commit's); any other absolute path becomes `<outside>/<name>`."""
    relatives = {p.replace("\\", "/").removeprefix("./") for p in paths if not is_absolute(p)}
    kept: dict[str, None] = {}
    for path in paths:
        if not is_absolute(path):
            kept[path] = None
            continue
        words = path.replace("\\", "/").split("/")
        if not any("/".join(words[i:]) in relatives for i in range(1, len(words))):
            kept[outside(path)] = None
    return list(kept)
