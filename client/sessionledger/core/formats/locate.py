"""Where Codex CLI and Gemini CLI keep their sessions, and which belong to a repository.

Read-only and standard library only; the Codex and Gemini adapters (`sessionledger.agents`) use
it for import, restore and, once a session is active, the post-commit hook. Every file read is
bounded.

- Codex: `$CODEX_HOME` (default `~/.codex`) `/sessions/YYYY/MM/DD/rollout-<local time>-<id>.jsonl`
  (flat `sessions/rollout-*.jsonl` before the date folders). The first line names the session's
  `cwd`, so a repository's sessions are the rollouts whose cwd is the repository or inside it.
- Gemini: `$GEMINI_CLI_HOME` (default the home folder) `/.gemini/tmp/<project>/chats/`, where
  `<project>` is the SHA-256 of the project root up to v0.28 and, from v0.29, a short name kept
  in `~/.gemini/projects.json` (with a `.project_root` marker file in the folder).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_FIRST_LINE_LIMIT = 8 * 1024 * 1024  # Codex's first line carries the whole system prompt
_MARKER_LIMIT = 64 * 1024
_MAX_DAYS = 3660


@dataclass(frozen=True)
class SessionFile:
    path: Path
    session_id: str
    cwd: str
    mtime: float


# --- Codex ------------------------------------------------------------------------------


def codex_home(env: Mapping[str, str] | None = None) -> Path:
    value = (os.environ if env is None else env).get("CODEX_HOME")
    return Path(value) if value else Path.home() / ".codex"


def codex_sessions(repo: str, *, home: Path | None = None, days: int = 30) -> list[SessionFile]:
    """Rollouts of the last `days` date folders whose cwd is `repo` or inside it, newest first."""
    root = (home or codex_home()) / "sessions"
    found = []
    for path in _rollouts(root, max(1, min(days, _MAX_DAYS))):
        meta = codex_meta(path)
        if meta is None:
            continue
        session_id, cwd = meta
        if _inside(cwd, repo):
            found.append(SessionFile(path, session_id, cwd, _mtime(path)))
    return sorted(found, key=lambda s: s.mtime, reverse=True)


def _rollouts(root: Path, days: int) -> list[Path]:
    dated = sorted(_children(root, lambda p: p.is_dir() and p.name.isdigit()), reverse=True)
    folders: list[Path] = []
    for year in dated:
        for month in sorted(_children(year, Path.is_dir), reverse=True):
            folders.extend(sorted(_children(month, Path.is_dir), reverse=True))
    files = [p for folder in folders[:days] for p in _children(folder, _is_rollout)]
    return files + _children(root, _is_rollout)  # the flat layout of early 2025


def _is_rollout(path: Path) -> bool:
    return path.name.startswith("rollout-") and path.name.endswith(".jsonl") and path.is_file()


def codex_meta(path: Path) -> tuple[str, str] | None:
    """(session id, cwd) from a rollout's first line, or None when it has none."""
    rec = _first_line(path)
    payload = rec.get("payload") if isinstance(rec, dict) and rec.get("type") == "session_meta" else rec
    if not isinstance(payload, dict):
        return None
    session_id, cwd = payload.get("id"), payload.get("cwd")
    if not isinstance(session_id, str) or not isinstance(cwd, str):
        return None
    return session_id, cwd


def _first_line(path: Path) -> dict[str, Any] | None:
    try:
        with path.open("rb") as handle:
            data = handle.readline(_FIRST_LINE_LIMIT)
    except OSError:
        return None
    try:
        rec = json.loads(data.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return None
    return rec if isinstance(rec, dict) else None


# --- Gemini -----------------------------------------------------------------------------


def gemini_dir(env: Mapping[str, str] | None = None) -> Path:
    value = (os.environ if env is None else env).get("GEMINI_CLI_HOME")
    return (Path(value) if value else Path.home()) / ".gemini"


def project_hash(root: str) -> str:
    """Gemini CLI's `projectHash`: SHA-256 of the project root path as given."""
    return hashlib.sha256(root.encode("utf-8", "surrogateescape")).hexdigest()


def gemini_project_dirs(root: str, *, gemini: Path | None = None) -> list[Path]:
    """The `tmp/<project>` folders that may hold `root`'s chats (registry, marker, hash)."""
    base = gemini or gemini_dir()
    tmp = base / "tmp"
    names = [_registry_name(base / "projects.json", root), *_marker_names(tmp, root), project_hash(root)]
    seen: dict[Path, None] = {}
    for name in names:
        if name and "/" not in name and name not in (".", ".."):
            folder = tmp / name
            if folder.is_dir():
                seen[folder] = None
    return list(seen)


def _registry_name(path: Path, root: str) -> str | None:
    try:
        data = json.loads(path.read_bytes()[:_FIRST_LINE_LIMIT].decode("utf-8", "replace"))
    except (OSError, ValueError, RecursionError):
        return None
    projects = data.get("projects") if isinstance(data, dict) else None
    name = projects.get(os.path.abspath(root)) if isinstance(projects, dict) else None
    return name if isinstance(name, str) else None


def _marker_names(tmp: Path, root: str) -> list[str]:
    wanted = os.path.abspath(root)
    names = []
    for folder in _children(tmp, Path.is_dir):
        try:
            owner = (folder / ".project_root").read_bytes()[:_MARKER_LIMIT].decode("utf-8", "replace").strip()
        except OSError:
            continue
        if owner == wanted:
            names.append(folder.name)
    return names


def gemini_sessions(root: str, *, gemini: Path | None = None) -> list[SessionFile]:
    """Main-agent chat recordings of project `root`, newest first (sub-agent chats excluded)."""
    found = []
    for folder in gemini_project_dirs(root, gemini=gemini):
        for path in _children(folder / "chats", _is_chat):
            session_id = gemini_session_id(path)
            if session_id:
                found.append(SessionFile(path, session_id, root, _mtime(path)))
    return sorted(found, key=lambda s: s.mtime, reverse=True)


def _is_chat(path: Path) -> bool:
    name = path.name
    return name.startswith("session-") and (name.endswith(".jsonl") or name.endswith(".json")) and path.is_file()


def gemini_session_id(path: Path) -> str | None:
    if path.name.endswith(".jsonl"):
        rec = _first_line(path)
        value = rec.get("sessionId") if isinstance(rec, dict) else None
        return value if isinstance(value, str) else None
    try:
        doc = json.loads(path.read_bytes()[:_FIRST_LINE_LIMIT].decode("utf-8", "replace"))
    except (OSError, ValueError, RecursionError):
        return None
    value = doc.get("sessionId") if isinstance(doc, dict) else None
    return value if isinstance(value, str) else None


# --- shared -----------------------------------------------------------------------------


def _children(folder: Path, keep: Callable[[Path], bool]) -> list[Path]:
    try:
        return [p for p in folder.iterdir() if keep(p)]
    except OSError:
        return []


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _inside(cwd: str, repo: str) -> bool:
    cwd, repo = os.path.normpath(cwd), os.path.normpath(repo)
    return cwd == repo or cwd.startswith(repo.rstrip(os.sep) + os.sep)
