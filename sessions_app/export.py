"""A whole project as one zip, streamed (docs/security.md "Export"): ``sessions.jsonl`` (every
session's metadata as the API shows it, a line each) and, per session, its stored parts as they are
in the bucket (``sessions/<id>/raw.jsonl.gz`` and the sub-agent and tool-output parts, gzip, so the
zip stores them without compressing again). Written to an unseekable stream, so memory holds one
chunk at a time and the zip's directory (about 1 KB a file, bench/bench_export.py), whatever the size
of the stored parts. ``download`` is the one way out, for the API and
the settings page alike, and records a ``project.exported`` audit event.

The bucket down (docs/security.md "Export"): ``download`` asks the bucket before the answer starts, so
an outage is a 503 (JSON for the API, a page for the browser), never a 200. Should the bucket fail once
the zip is streaming, the stream is cut (the server ends the connection without the final chunk, so a
client reports an incomplete download and the zip has no directory), never finished as if whole. A part
the bucket does not have (deleted behind our back) is listed in ``missing.jsonl`` at the end of the zip.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator
from typing import IO, Any

from django.core.serializers.json import DjangoJSONEncoder
from django.http import StreamingHttpResponse

from projects import audit_trail
from projects.models import Project
from projects.scoping import project_scope
from sessions_app import blobs
from sessions_app.models import Session
from sessions_app.serializers import ROW_COLUMNS, session_representation

CHUNK = 1 << 20
ROWS = 500


class _Pipe:
    """An unseekable file object that hands out what was written since the last ``take``."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.written = 0

    def write(self, data: bytes) -> int:
        self.parts.append(bytes(data))
        self.written += len(data)
        return len(data)

    def tell(self) -> int:
        return self.written

    def flush(self) -> None:
        return None

    def close(self) -> None:
        return None

    def take(self) -> bytes:
        data, self.parts = b"".join(self.parts), []
        return data


def _parts(session: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(name in the zip, blob key) of a session's stored parts."""
    base = f"sessions/{session['id']}"
    yield f"{base}/raw.jsonl.gz", session["raw_storage_key"]
    for index, part in enumerate(session["subagents"] or []):
        label = part.get("agent_id") or part.get("name") or str(index)
        kind = "tool-results" if part.get("kind") == "tool_result" else "subagents"
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in str(label))[:80]
        yield f"{base}/{kind}/{index:04d}-{safe}.jsonl.gz", part["key"]


def project_zip(project: Project) -> Iterator[bytes]:
    """The project's zip, chunk by chunk. Call inside the project's scope."""
    pipe = _Pipe()
    sessions = Session.objects.filter(project=project).order_by("captured_at", "id")
    with zipfile.ZipFile(pipe, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
        with archive.open("sessions.jsonl", mode="w", force_zip64=True) as meta:
            for row in sessions.values(*ROW_COLUMNS).iterator(chunk_size=ROWS):
                line = json.dumps(session_representation(row, project.slug), cls=DjangoJSONEncoder)
                meta.write(line.encode() + b"\n")
                yield pipe.take()
        missing: list[dict[str, str]] = []
        for session in sessions.values("id", "raw_storage_key", "subagents").iterator(chunk_size=ROWS):
            for name, key in _parts(session):
                try:
                    stream = blobs.open_stream(key)
                except blobs.BlobMissing:
                    missing.append({"session": str(session["id"]), "part": name})
                    continue
                with stream, archive.open(name, mode="w", force_zip64=True) as member:
                    while chunk := _read(stream, key):
                        member.write(chunk)
                        yield pipe.take()
        if missing:
            archive.writestr("missing.jsonl", "".join(json.dumps(entry) + "\n" for entry in missing))
    yield pipe.take()


def _read(stream: IO[bytes], key: str) -> bytes:
    try:
        return stream.read(CHUNK)
    except blobs.STORAGE_ERRORS as exc:
        raise blobs.StorageUnavailable(f"export cut: cannot read {key}: {exc}") from exc


def _stream(project: Project) -> Iterator[bytes]:
    """The zip, read inside the project's scope (the view's scope has ended when streaming starts)."""
    with project_scope(project):
        yield from project_zip(project)


def download(project: Project) -> StreamingHttpResponse:
    """The project's zip as a streamed attachment; the audit trail records who took it."""
    first = Session.objects.filter(project=project).values_list("raw_storage_key", flat=True).first()
    if first is not None:
        blobs.check_reachable(first)  # a 503 now rather than a 200 cut short
    audit_trail.record(kind="project.exported", project=project, target=project.slug)
    response = StreamingHttpResponse(_stream(project), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{project.slug}-export.zip"'
    return response
