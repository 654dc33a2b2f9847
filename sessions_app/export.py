"""A whole project as one zip, streamed (docs/export-format.md, docs/security.md "Export").

Every part of the project: its settings (``project.json``), members and roles by e-mail, pending
invitations (without their tokens), share links (the token's hash only), commit relinks, attribution
records, every session's full row (``session_rows.jsonl``, what ``manage.py import_project`` restores)
and its stored parts as they are in the bucket (``sessions/<id>/raw.jsonl.gz``, ``content.json.gz``
and the sub-agent and tool-output parts, gzip, so the zip stores them without compressing again), the
access log and the project's audit trail; ``sessions.jsonl`` (every session as the API shows it, a
line each) stays for readers of the first format. ``manifest.json``, last, names the format version
and holds each file's SHA-256. Written to an unseekable stream (``sessions_app.archive``), so memory
holds one chunk at a time, and per file its directory entry and checksum (about 1.7 KB,
bench/bench_export.py). ``download`` is the one way out, for the API and the settings page alike, and
records a ``project.exported`` audit event.

The bucket down: ``download`` asks the bucket before the answer starts, so an outage is a 503 (JSON for
the API, a page for the browser), never a 200. Should the bucket fail once the zip is streaming, the
stream is cut (no final chunk, no zip directory), never finished as if whole. A part the bucket does
not have (deleted behind our back) is listed in ``missing.jsonl``.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from typing import Any

from django.db.models import QuerySet
from django.http import StreamingHttpResponse
from django.utils import timezone

from projects import audit_trail
from projects.models import AuditEvent, Invitation, Membership, Project
from projects.scoping import project_scope
from sessions_app import blobs
from sessions_app.archive import ArchiveWriter
from sessions_app.models import AccessLog, Attribution, CommitLink, Session, ShareLink
from sessions_app.serializers import ROW_COLUMNS, session_representation

FORMAT = "sessionledger-project"
FORMAT_VERSION = 2  # 1: the first export (sessions.jsonl and raw parts, no manifest); see docs/export-format.md
ROWS = 500

# Every column of a session but its tenant and its author (written as an e-mail address instead).
SESSION_COLUMNS = tuple(
    field.attname for field in Session._meta.concrete_fields if field.attname not in ("project_id", "author_id")
)
BLOB_COLUMNS = ("id", "raw_storage_key", "content_storage_key", "subagents", "created_at")
AUDIT_FIELDS = ("at", "project_slug", "actor_email", "kind", "target", "detail", "via", "ip", "user_agent")
PROJECT_FIELDS = ("id", "slug", "name", "repo", "retention_days", "sharing_enabled", "created_at", "archived_at")


def _safe(label: object) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in str(label))[:80]


def session_files(session_id: object, subagents: list[dict[str, Any]] | None) -> dict[str, Any]:
    """Where a session's stored parts sit in the zip: ``raw``, ``content`` and ``parts`` (by index)."""
    base = f"sessions/{session_id}"
    parts = []
    for index, part in enumerate(subagents or []):
        label = part.get("agent_id") or part.get("name") or str(index)
        kind = "tool-results" if part.get("kind") == "tool_result" else "subagents"
        parts.append(f"{base}/{kind}/{index:04d}-{_safe(label)}.jsonl.gz")
    return {"raw": f"{base}/raw.jsonl.gz", "content": f"{base}/content.json.gz", "parts": parts}


def _session_rows(sessions: Any) -> Iterator[dict[str, Any]]:
    for row in sessions.values(*SESSION_COLUMNS, "author__email").iterator(chunk_size=ROWS):
        row["author_email"] = row.pop("author__email")
        row["files"] = session_files(row["id"], row["subagents"])
        for key in ("raw_storage_key", "content_storage_key"):
            row[key] = bool(row[key])  # the bucket's keys name this deployment's ids: only whether there is one
        row["subagents"] = [{k: v for k, v in part.items() if k != "key"} for part in row["subagents"] or []]
        yield row


def _email(user: Any) -> str | None:
    return user.email if user is not None else None


def project_zip(project: Project) -> Iterator[bytes]:
    """The project's zip, chunk by chunk. Call inside the project's scope."""
    writer = ArchiveWriter(now=timezone.now())
    counts: dict[str, int] = {}
    sessions = Session.objects.filter(project=project).order_by("captured_at", "id")
    yield from writer.document("project.json", {name: getattr(project, name) for name in PROJECT_FIELDS})
    api_rows = (session_representation(row, project.slug) for row in sessions.values(*ROW_COLUMNS).iterator(ROWS))
    counts["sessions"] = yield from writer.lines("sessions.jsonl", api_rows)
    yield from writer.lines("session_rows.jsonl", _session_rows(sessions))
    members = Membership.objects.filter(project=project).select_related("user").order_by("created_at", "pk")
    counts["members"] = yield from writer.lines(
        "members.jsonl", ({"email": m.user.email, "role": m.role, "created_at": m.created_at} for m in members)
    )
    pending = Invitation.objects.filter(
        project=project, accepted_at__isnull=True, revoked_at__isnull=True, expires_at__gt=writer.now
    ).select_related("invited_by")
    counts["invitations"] = yield from writer.lines(
        "invitations.jsonl",
        (
            {
                "email": i.email,
                "role": i.role,
                "invited_by": _email(i.invited_by),
                "created_at": i.created_at,
                "expires_at": i.expires_at,
            }
            for i in pending.order_by("created_at", "pk")
        ),
    )
    shares = ShareLink.objects.filter(project=project).select_related("created_by").order_by("created_at", "pk")
    counts["share_links"] = yield from writer.lines(
        "share_links.jsonl",
        (
            {
                "id": s.pk,
                "session": s.session_id,
                "token_hash": s.token_hash,
                "created_by": _email(s.created_by),
                "created_at": s.created_at,
                "expires_at": s.expires_at,
                "revoked_at": s.revoked_at,
            }
            for s in shares.iterator(ROWS)
        ),
    )
    links = CommitLink.objects.filter(project=project).select_related("created_by").order_by("created_at", "pk")
    counts["commit_links"] = yield from writer.lines(
        "commit_links.jsonl",
        (
            {
                "old_hash": c.old_hash,
                "new_hash": c.new_hash,
                "created_by": _email(c.created_by),
                "created_at": c.created_at,
            }
            for c in links.iterator(ROWS)
        ),
    )
    attributions = Attribution.objects.filter(project=project).order_by("created_at", "pk")
    counts["attributions"] = yield from writer.lines(
        "attributions.jsonl",
        attributions.values("session_id", "record", "error", "added_lines", "ai_lines", "created_at").iterator(ROWS),
    )
    reads = AccessLog.objects.filter(project=project).order_by("hour", "pk")
    counts["access_log"] = yield from writer.lines(
        "access_log.jsonl",
        reads.values("session_id", "user__email", "at", "hour", "count", "via", "ip", "user_agent").iterator(ROWS),
    )
    events = AuditEvent.objects.filter(project_id=project.pk).order_by("at", "pk")
    counts["audit_events"] = yield from writer.lines(
        "audit.jsonl",
        events.values(*AUDIT_FIELDS).iterator(ROWS),
    )
    missing: list[dict[str, str]] = []
    counts["blobs"] = yield from session_blobs(writer, sessions, missing)
    if missing:  # deleted behind our back: said in the archive, not silently left out
        counts["missing"] = yield from writer.lines("missing.jsonl", iter(missing))
    yield from writer.finish(
        {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "project": {"slug": project.slug, "name": project.name, "id": project.pk},
            "counts": counts,
        }
    )


def session_blobs(
    writer: ArchiveWriter, sessions: QuerySet[Session], missing: list[dict[str, str]] | None = None
) -> Generator[bytes, None, int]:
    """Every stored part of these sessions, at ``session_files``' names; returns how many were written.
    A part the bucket has lost is left out (the manifest lists what is there) and added to ``missing``."""
    written = 0
    for session in sessions.values(*BLOB_COLUMNS).iterator(ROWS):
        names = session_files(session["id"], session["subagents"])
        pairs = [(names["raw"], session["raw_storage_key"]), (names["content"], session["content_storage_key"])]
        pairs += [(name, part["key"]) for name, part in zip(names["parts"], session["subagents"] or [], strict=True)]
        for name, key in pairs:
            if not key:
                continue
            if (yield from writer.blob(name, key, when=session["created_at"])):
                written += 1
            elif missing is not None:
                missing.append({"session": str(session["id"]), "part": name})
    return written


def _stream(project: Project) -> Iterator[bytes]:
    """The zip, read inside the project's scope (the view's scope has ended when streaming starts)."""
    with project_scope(project):
        yield from project_zip(project)


def download(project: Project) -> StreamingHttpResponse:
    """The project's zip as a streamed attachment; the audit trail records who took it. The bucket is
    asked first: an outage is a 503 now rather than a 200 cut short."""
    first = Session.objects.filter(project=project).values_list("raw_storage_key", flat=True).first()
    if first is not None:
        blobs.check_reachable(first)
    audit_trail.record(kind="project.exported", project=project, target=project.slug)
    response = StreamingHttpResponse(_stream(project), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{project.slug}-export.zip"'
    return response
