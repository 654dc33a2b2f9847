"""The attribution of a checkpoint's commit, computed while the segment is prepared.

`prepare` calls `write_for_entry` with the segment's transcript bytes *before* redaction (the
record holds line numbers, hashes, uuids and model names, never text, so nothing leaks; and a
redacted `new_string` would no longer match the line it wrote). The record waits in the queue
entry as `attribution.json` without URLs; `part_for_upload` adds the message permalinks once the
project is known and attaches it to the upload as the `attribution` part (docs/attribution.md).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from sessionledger import gitmeta, log
from sessionledger.core import attribution, attribution_record
from sessionledger.intent import Intent

FILE = "attribution.json"
MAX_DIFF_BYTES = 20 * 1024 * 1024  # a bigger commit (a vendored tree) is not attributed
MAX_HISTORY_BYTES = 64 * 1024 * 1024  # a longer conversation is attributed from the segment alone


def commit_diff(repo: str, sha: str, *paths: str) -> str:
    """The commit's diff against its first parent (the root commit against nothing)."""
    limit = ("--", *paths) if paths else ()
    return gitmeta.git(
        repo,
        "diff-tree",
        "-p",
        "-U0",
        "--root",
        "-m",
        "--first-parent",
        "--no-renames",
        "--no-ext-diff",
        "--src-prefix=a/",
        "--dst-prefix=b/",
        sha,
        *limit,
    )


def renames(repo: str, sha: str) -> dict[str, str]:
    """Files git finds renamed by the commit (against its first parent): new path → old path."""
    out = gitmeta.git(
        repo, "diff-tree", "-r", "-M", "--root", "-m", "--first-parent", "--name-status", "-z", "--no-commit-id", sha
    )
    fields = out.split("\0")
    found, index = {}, 0
    while index < len(fields):
        status = fields[index]
        if status[:1] in ("R", "C") and index + 2 < len(fields):
            found[fields[index + 2]] = fields[index + 1]
            index += 3
        elif status:
            index += 2
        else:
            index += 1  # the trailing empty field
    return found


def line_counts(repo: str, sha: str, paths: list[str]) -> dict[str, int]:
    """Each file's number of lines at the commit (one `git cat-file --batch` for all).

    The blobs are asked for by id, read from the commit's raw diff: asking for ``sha:path`` makes
    git walk the trees again for each path, quadratic in a directory's size (a commit of 10,000
    files in one directory took 10 s; by id, a fraction of a second)."""
    if not paths:
        return {}
    blobs = _new_blobs(repo, sha)
    return batch_line_counts(repo, {path: blobs[path] for path in paths if path in blobs})


def batch_line_counts(repo: str, objects: dict[str, str]) -> dict[str, int]:
    """Lines of each object named as `git cat-file --batch` takes it (an id, or `sha:path`), by key."""
    request = "".join(f"{name}\n" for name in objects.values()).encode()
    out = gitmeta._run(repo, ("cat-file", "--batch"), request).stdout if objects else b""
    counts, position = {}, 0
    for path in objects:
        end = out.find(b"\n", position)
        header = out[position:end].split(b" ")
        position = end + 1
        if len(header) != 3 or header[1] != b"blob":
            continue
        size = int(header[2])
        data = out[position : position + size]
        position += size + 1
        counts[path] = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    return counts


def _new_blobs(repo: str, sha: str) -> dict[str, str]:
    """Path → object id at the commit of every path its diff against its first parent changes."""
    out = gitmeta._run(
        repo,
        ("diff-tree", "-r", "--root", "-m", "--first-parent", "--no-renames", "--no-commit-id", "--raw", "-z", sha),
        None,
    ).stdout
    fields = out.split(b"\0")
    found: dict[str, str] = {}
    for meta, path in zip(fields[0::2], fields[1::2], strict=False):
        parts = meta.split(b" ")  # b":100644 100644 <old id> <new id> M"
        if len(parts) == 5:
            found[path.decode("utf-8", "replace")] = parts[3].decode("ascii", "replace")
    return found


def record_for_commit(
    repo: str,
    sha: str,
    transcripts: Mapping[str, bytes],
    *,
    agent: str,
    base_url: str = "",
    project: str = "",
) -> dict[str, Any] | None:
    """The Agent Trace record of `sha` given the segment's transcript bytes (main first)."""
    from sessionledger import __version__
    from sessionledger.core import formats

    diff = commit_diff(repo, sha)
    if len(diff) > MAX_DIFF_BYTES:
        log.warning(f"commit {sha[:10]}: diff too large to attribute")
        return None
    added = attribution.added_lines(diff)
    items = list(transcripts.items())
    parsed = formats.parse_transcript(items[0][1], agent=agent, subagents=dict(items[1:]))
    steps = attribution.steps_from_messages(parsed.messages)
    moves = attribution.moves_from_messages(parsed.messages)
    owners = attribution.attribute(added, steps, root=_root(repo), moves=moves, renamed=renames(repo, sha))
    return attribution_record.build_record(
        revision=sha,
        added=added,
        owners=owners,
        line_counts=line_counts(repo, sha, list(added)),
        agent=agent,
        tool_version=__version__,
        base_url=base_url,
        project=project,
    )


def _root(repo: str) -> str:
    try:
        return os.path.realpath(gitmeta.git(repo, "rev-parse", "--show-toplevel").strip())
    except gitmeta.GitError:
        return ""


def write_for_entry(entry: Any, intent: Intent, transcripts: Mapping[str, bytes]) -> None:
    """Write `attribution.json` into the queue entry for a checkpoint; never fails the segment."""
    sha, repo = intent.commit_hash, intent.repo
    if not attributed(intent) or not sha or not repo or not os.path.isdir(repo):
        return
    transcripts = {**transcripts, **_history(intent)}
    try:
        record = record_for_commit(repo, sha, transcripts, agent=intent.agent or "claude-code")
    except (gitmeta.GitError, ValueError, OSError) as exc:
        log.warning(f"attribution of {str(sha)[:10]} unavailable: {exc}")
        return
    if record is not None:
        from sessionledger.fsutil import atomic_write

        atomic_write(entry.file(FILE), json.dumps(record, separators=(",", ":")).encode())


def attributed(intent: Intent) -> bool:
    """A checkpoint, or an `end` linked to a commit no hook captured (`checkpoint.claim_unseen_commit`):
    the segments whose commit gets its attribution record and commit facts."""
    return intent.kind == "checkpoint" or intent.attribute_commit


def _history(intent: Intent) -> dict[str, bytes]:
    """The conversation from its start to the segment's end, main and sub-agents.

    An edit made before the previous commit whose lines are only committed now (the file was
    left out of that commit) is in an earlier segment: reading from byte 0 still finds it. The
    transcript is only read, never sent; on any trouble the segment alone is used.
    """
    from sessionledger import transcripts

    wanted = [("transcript", intent.transcript, intent.end_offset)]
    wanted += [(s.agent_id, s.path, s.end_offset) for s in intent.subagents]
    found: dict[str, bytes] = {}
    for name, path, end in wanted:
        if not name or not isinstance(path, str) or not isinstance(end, int) or not 0 < end <= MAX_HISTORY_BYTES:
            continue
        try:
            found[str(name)] = transcripts.read_range(path, 0, end)
        except (OSError, transcripts.TranscriptShrunk):
            continue
    return found


def part_for_upload(entry: Any, server: str, project: str) -> Any:
    """The `attribution` multipart part (with message URLs), or None when there is no record."""
    path = entry.file(FILE)
    if not os.path.isfile(path):
        return None
    from sessionledger.multipart import Part

    with open(path, "rb") as handle:
        record = json.load(handle)
    data = json.dumps(attribution_record.with_urls(record, server, project), separators=(",", ":")).encode()
    return Part("attribution", data=data, filename=FILE, content_type="application/json")
