"""Send a big segment in parts that survive a cut link (docs/client.md "Slow links").

The request body (the same multipart form a one-request upload sends) is written once into the
queue entry (`upload.body`, its size and SHA-256 in `upload.json`), so every attempt, in this
run or the next, sends the same bytes. The server keeps the parts (docs/api.md "Resumable
uploads"): each attempt asks which have arrived and sends only the others, then asks the server
to join them. Every step may be repeated: a part sent twice, or a finish asked twice, changes
nothing. A cut after progress is retried at once; a cut without progress goes back to the
uploader's backoff with a message that says how far the upload got.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from collections.abc import Callable, Iterable
from typing import Any, TypedDict

from sessionledger.api import ApiError, Client
from sessionledger.fastjson import dumps, loads
from sessionledger.fsutil import atomic_write

BODY_FILE = "upload.body"
RECORD_FILE = "upload.json"
# Cuts in a row that stored nothing before the uploader backs off (a cut can strike one part twice).
STALLS = 2


class Record(TypedDict):
    """`upload.json`: the body written for the parts, and how much of it the server holds."""

    size: int
    sha256: str
    content_type: str
    received_bytes: int


Progress = Callable[[int, int], None]  # (bytes the server holds or that are on their way, size)


def sent_of(sent: int, total: int) -> str:
    """`sent 1.2 of 4.6 MB` (`sent 312 of 840 KB` for a body under a megabyte): how far a body got."""
    if total < 1_000_000:
        return f"sent {sent / 1e3:.0f} of {total / 1e3:.0f} KB"
    return f"sent {sent / 1e6:.1f} of {total / 1e6:.1f} MB"


def discard(entry_dir: str) -> None:
    """Forget the body (the segment is prepared again: other bytes, another upload)."""
    for name in (BODY_FILE, RECORD_FILE):
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(entry_dir, name))


def read_record(entry_dir: str) -> Record | None:
    try:
        with open(os.path.join(entry_dir, RECORD_FILE), encoding="utf-8") as handle:
            data = loads(handle.read())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("size"), int):
        return None
    return Record(
        size=data["size"],
        sha256=str(data.get("sha256") or ""),
        content_type=str(data.get("content_type") or ""),
        received_bytes=int(data.get("received_bytes") or 0),
    )


def _write_record(entry_dir: str, record: Record) -> None:
    atomic_write(os.path.join(entry_dir, RECORD_FILE), dumps(record).encode())


def materialise(entry_dir: str, chunks: Iterable[bytes], content_type: str) -> Record:
    """The body written into the entry, once: a later attempt reuses it (same boundary, same bytes)."""
    record = read_record(entry_dir)
    path = os.path.join(entry_dir, BODY_FILE)
    if record is not None and os.path.exists(path) and os.path.getsize(path) == record["size"]:
        return record
    digest, size = hashlib.sha256(), 0
    with open(path + ".tmp", "wb") as handle:
        for chunk in chunks:
            digest.update(chunk)
            handle.write(chunk)
            size += len(chunk)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(path + ".tmp", path)
    record = Record(size=size, sha256=digest.hexdigest(), content_type=content_type, received_bytes=0)
    _write_record(entry_dir, record)
    return record


def send(client: Client, slug: str, entry_dir: str, record: Record, key: str, progress: Progress) -> tuple[int, Any]:
    """Upload the materialised body in parts and finish it; (status, reply) like one POST."""
    base = f"/projects/{slug}/uploads"
    stalls, held, began, renewed = 0, -1, False, False
    while True:
        try:
            _, state = client.send_json(
                base,
                {"size": record["size"], "sha256": record["sha256"], "content_type": record["content_type"]},
                {"Idempotency-Key": key},
            )
            _note(entry_dir, record, state, progress)
            began = True
            _send_missing(client, f"{base}/{state['id']}", entry_dir, record, state, progress)
            return client.send_json(f"{base}/{state['id']}/finish", None)
        except ApiError as exc:
            got = record["received_bytes"]
            if exc.code == "checksum_mismatch":  # our copy is not what was declared: build it again
                discard(entry_dir)
                raise ApiError(0, exc.code, f"{exc.message} (the body is rebuilt for the next attempt)") from None
            if exc.status == 404 and began and not renewed:  # the server let an old upload go: begin anew
                renewed = True
                continue
            if not exc.transient:
                raise
            stalls = 0 if got > held else stalls + 1
            held = got
            left = None if client.until is None else client.until - time.monotonic()
            if stalls < STALLS and exc.retry_after is None and (left is None or left > 1):
                continue  # the link came back: resume where the server stopped (a server that
                # asked for a pause, 429 or 503 with Retry-After, gets it from the uploader's backoff)
            raise ApiError(
                exc.status,
                exc.code,
                f"{sent_of(got, record['size'])}, resuming ({exc.message})",
                retry_after=exc.retry_after,
            ) from None


def _send_missing(
    client: Client, url: str, entry_dir: str, record: Record, state: dict[str, Any], progress: Progress
) -> None:
    have, part_size = set(state.get("received") or []), int(state["part_size"])
    with open(os.path.join(entry_dir, BODY_FILE), "rb") as body:
        for index in range(int(state["parts"])):
            if index in have:
                continue  # stored already: never sent again
            body.seek(index * part_size)
            data = body.read(part_size)
            progress(record["received_bytes"] + len(data), record["size"])
            state = client.put_bytes(f"{url}/parts/{index}", data)
            _note(entry_dir, record, state, progress)


def _note(entry_dir: str, record: Record, state: Any, progress: Progress) -> None:
    """Remember how much the server holds (for `status`) and report it."""
    if not isinstance(state, dict) or not isinstance(state.get("received_bytes"), int):
        raise ApiError(0, "unexpected", "the server's answer about the upload's parts is not one")
    record["received_bytes"] = state["received_bytes"]
    with contextlib.suppress(OSError):  # `status` reads it; the upload does not depend on it
        _write_record(entry_dir, record)
    progress(record["received_bytes"], record["size"])
