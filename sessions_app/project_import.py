"""Restoring a project's export into this deployment (docs/export-format.md "Importing").

``project_import`` reads an archive written by ``sessions_app.export``: it refuses a format newer than
this code reads, then verifies every file against the manifest's SHA-256 (and that nothing unlisted
rides along) before it writes anything. Blobs are uploaded first, under the new project's id; the
rows then go in one transaction, and if anything fails the uploaded blobs are deleted, so a refused
or broken import leaves nothing behind.

Ids: the project always gets a new id (its blobs live under a prefix no one has used); a session keeps
its id when this deployment has no session with it, else gets a new one, and every reference to it
(previous segment, attribution, share link, access log) follows. People are matched by e-mail
address, case-insensitively; no account is created. A member is restored only onto an account whose
address is verified here; the others, and pending invitations (their tokens were secrets of the
old deployment), are listed in the result for an admin to invite again. A session whose author has
no account here keeps no author, as after an account's deletion. A share link keeps its hash, so its
URL opens the session here, unless this deployment already holds that hash (the archive was imported
here before, or comes from here): then it is skipped and counted.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import uuid
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, models, transaction
from django.db.models import Model

from projects import audit_trail
from projects.addresses import address_verified
from projects.errors import DomainError
from projects.models import AuditEvent, Membership, Project, Role, User
from projects.scoping import unscoped
from sessions_app import blobs
from sessions_app.archive import CHUNK, MANIFEST
from sessions_app.export import AUDIT_FIELDS, FORMAT, FORMAT_VERSION, SESSION_COLUMNS
from sessions_app.models import AccessLog, Attribution, CommitLink, Session, ShareLink

BATCH = 500
DATE = models.DateTimeField()  # parses the archive's ISO dates
MANIFEST_LIMIT = 64 << 20
SLUG = re.compile(r"[-a-zA-Z0-9_]{1,64}")
SHA256 = re.compile(r"[0-9a-f]{64}")
# Restored through SQL after the insert: an upload time Django would set to now, a derived tsvector.
_LATER = ("created_at", "search_vector")
_SESSION_FIELDS = tuple(name for name in SESSION_COLUMNS if name not in (*_LATER, "id"))


class ArchiveRefused(DomainError):
    def __init__(self, message: str) -> None:
        super().__init__("invalid", message)


@dataclass
class Imported:
    project: Project
    sessions: int = 0
    blobs: int = 0
    members: int = 0
    attributions: int = 0
    share_links: int = 0
    share_links_skipped: int = 0
    commit_links: int = 0
    access_log: int = 0
    audit_events: int = 0
    sessions_renumbered: int = 0
    repo_dropped: str = ""
    members_not_restored: list[str] = field(default_factory=list)  # "address (role): why"
    invitations_not_restored: list[str] = field(default_factory=list)
    authors_unknown: list[str] = field(default_factory=list)


def manifest_verified(archive: zipfile.ZipFile) -> dict[str, Any]:
    """The archive's manifest, once its format is one this code reads and every file matches it."""
    manifest = _manifest(archive)
    _files_verified(archive, manifest)
    return manifest


def _manifest(archive: zipfile.ZipFile) -> dict[str, Any]:
    """manifest.json, if its format is one this code reads."""
    if MANIFEST not in archive.namelist():
        raise ArchiveRefused(
            "The archive has no manifest.json: it is not a Sessionledger project export, or one from before "
            "format version 2, which cannot be imported (export the project again)."
        )
    if archive.getinfo(MANIFEST).file_size > MANIFEST_LIMIT:
        raise ArchiveRefused("manifest.json is too large; refused.")
    try:
        manifest = json.loads(archive.read(MANIFEST))
    except ValueError as exc:
        raise ArchiveRefused(f"manifest.json is not JSON: {exc}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ArchiveRefused(f"manifest.json does not describe a {FORMAT} archive.")
    version = manifest.get("format_version")
    if not isinstance(version, int) or version < 2:
        raise ArchiveRefused(f"Unknown archive format version {version!r}.")
    if version > FORMAT_VERSION:
        raise ArchiveRefused(
            f"The archive is format version {version}, newer than this Sessionledger reads (up to "
            f"{FORMAT_VERSION}); upgrade this deployment to at least {manifest.get('product_version')} first."
        )
    return manifest


def _files_verified(archive: zipfile.ZipFile, manifest: dict[str, Any]) -> None:
    """Every file listed, none unlisted or twice, each matching its SHA-256: before anything is written."""
    names = archive.namelist()
    if len(names) != len(set(names)):
        raise ArchiveRefused("The archive holds a file name twice; refused.")
    files = manifest.get("files")
    if not isinstance(files, dict):
        raise ArchiveRefused("manifest.json lists no files.")
    unlisted = sorted(set(names) - set(files) - {MANIFEST})
    missing = sorted(set(files) - set(names))
    if unlisted or missing:
        raise ArchiveRefused(
            f"The archive does not match its manifest: unlisted {unlisted[:5]}, missing {missing[:5]}."
        )
    for name, entry in files.items():
        expected = entry.get("sha256") if isinstance(entry, dict) else None
        if not isinstance(expected, str) or not SHA256.fullmatch(expected):
            raise ArchiveRefused(f"manifest.json gives no SHA-256 for {name}.")
        digest = hashlib.sha256()
        with archive.open(name) as member:
            while chunk := member.read(CHUNK):
                digest.update(chunk)
        if digest.hexdigest() != expected:
            raise ArchiveRefused(f"{name} does not match its SHA-256 in manifest.json: the archive was altered.")


def _lines(archive: zipfile.ZipFile, name: str) -> Iterator[dict[str, Any]]:
    with archive.open(name) as member:
        for line in member:
            if line.strip():
                yield json.loads(line)


def _document(archive: zipfile.ZipFile, name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(archive.read(name))
    return data


class _People:
    """Accounts by address, looked up once each; the addresses without one are remembered."""

    def __init__(self) -> None:
        self.known: dict[str, User | None] = {}

    def __call__(self, email: str | None) -> User | None:
        if not email:
            return None
        key = email.lower()
        if key not in self.known:
            self.known[key] = User.objects.filter(email__iexact=email).first()
        return self.known[key]

    def missing(self) -> list[str]:
        return sorted(email for email, user in self.known.items() if user is None)


def _fields(model: type[Model], row: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    """``row``'s values for ``names`` (attnames), each parsed the way its model field reads it."""
    by_attname = {f.attname: f for f in model._meta.concrete_fields}
    return {name: by_attname[name].to_python(row[name]) for name in names if name in row}


def _session_ids(archive: zipfile.ZipFile) -> dict[str, uuid.UUID]:
    """Old id → id here: the same when it is free in this deployment."""
    mapping: dict[str, uuid.UUID] = {}
    batch: list[str] = []

    def flush() -> None:
        wanted = [uuid.UUID(old) for old in batch]
        taken = set(Session.objects.filter(pk__in=wanted).values_list("pk", flat=True))
        mapping.update({old: uuid.uuid4() if want in taken else want for old, want in zip(batch, wanted, strict=True)})
        batch.clear()

    for row in _lines(archive, "session_rows.jsonl"):
        batch.append(row["id"])
        if len(batch) >= BATCH:
            flush()
    flush()
    return mapping


def _blobs_upload(
    archive: zipfile.ZipFile,
    files: dict[str, Any],
    project_id: uuid.UUID,
    ids: dict[str, uuid.UUID],
    uploaded: list[str],
) -> None:
    for row in _lines(archive, "session_rows.jsonl"):
        new = ids[row["id"]]
        names = row["files"]
        pairs = [(names["raw"], blobs.raw_key(project_id, new)), (names["content"], blobs.content_key(project_id, new))]
        pairs += [(name, blobs.subagent_key(project_id, new, index)) for index, name in enumerate(names["parts"])]
        for name, key in pairs:
            if name in files:  # a part storage had lost was not exported; the row keeps its (dangling) key
                with archive.open(name) as member:
                    blobs.put(key, member)
                uploaded.append(key)


def _session(row: dict[str, Any], project: Project, ids: dict[str, uuid.UUID], people: _People) -> Session:
    new = ids[row["id"]]
    values = _fields(Session, row, _SESSION_FIELDS)
    previous = row.get("previous_id")
    values["previous_id"] = ids.get(previous) if previous else None  # a segment not in the archive: none
    values["raw_storage_key"] = blobs.raw_key(project.pk, new)
    values["content_storage_key"] = blobs.content_key(project.pk, new) if row["content_storage_key"] else ""
    values["subagents"] = [
        {**part, "key": blobs.subagent_key(project.pk, new, index)} for index, part in enumerate(row["subagents"])
    ]
    return Session(id=new, project=project, author=people(row["author_email"]), **values)


def _sessions_insert(archive: zipfile.ZipFile, project: Project, ids: dict[str, uuid.UUID], people: _People) -> int:
    count = 0
    batch: list[tuple[Session, Any, Any]] = []

    def flush() -> None:
        Session.objects.bulk_create([session for session, _, _ in batch], batch_size=BATCH)
        with connection.cursor() as cursor:
            cursor.executemany(
                "UPDATE sessions_app_session SET created_at = %s, search_vector = %s::tsvector WHERE id = %s",
                [(created, vector, session.pk) for session, created, vector in batch],
            )
        batch.clear()

    for row in _lines(archive, "session_rows.jsonl"):
        session = _session(row, project, ids, people)
        created = DATE.to_python(row["created_at"])
        batch.append((session, created, row.get("search_vector")))
        count += 1
        if len(batch) >= BATCH:
            flush()
    if batch:
        flush()
    return count


def _inserted(model: type[Model], pairs: Iterator[tuple[Any, Any]]) -> int:
    """Insert (object, created_at) pairs ``BATCH`` at a time, so memory holds one batch; a created_at of
    None leaves the model's own date. Returns how many."""
    count = 0
    while batch := list(itertools.islice(pairs, BATCH)):
        objects = [obj for obj, _ in batch]
        model._default_manager.bulk_create(objects)
        dated = [(obj, when) for obj, when in batch if when is not None]
        if dated:  # bulk_create stamped ``auto_now_add`` dates with now: put the archive's back
            for obj, when in dated:
                obj.created_at = DATE.to_python(when)
            model._default_manager.bulk_update([obj for obj, _ in dated], ["created_at"])
        count += len(batch)
    return count


def _members(archive: zipfile.ZipFile, project: Project, people: _People, result: Imported) -> None:
    def restored() -> Iterator[tuple[Membership, Any]]:
        for row in _lines(archive, "members.jsonl"):
            email, role = row["email"], row["role"]
            if role not in Role.values:
                raise ArchiveRefused(f"members.jsonl gives {email} an unknown role {role!r}.")
            user = people(email)
            why = (
                "no account here"
                if user is None
                else "account inactive"
                if not user.is_active
                else ""
                if address_verified(user=user, email=email)
                else "address unverified"
            )
            if why:
                result.members_not_restored.append(f"{email} ({role}): {why}")
                continue
            yield Membership(project=project, user=user, role=role), row["created_at"]

    result.members = _inserted(Membership, restored())
    result.invitations_not_restored = [
        f"{row['email']} ({row['role']})" for row in _lines(archive, "invitations.jsonl")
    ]


def _shares(
    archive: zipfile.ZipFile, project: Project, ids: dict[str, uuid.UUID], people: _People, result: Imported
) -> Iterator[tuple[ShareLink, Any]]:
    for row in _lines(archive, "share_links.jsonl"):
        if ShareLink.objects.filter(token_hash=row["token_hash"]).exists():
            result.share_links_skipped += 1
            continue
        share_id = uuid.UUID(row["id"])
        if ShareLink.objects.filter(pk=share_id).exists():
            share_id = uuid.uuid4()
        values = _fields(ShareLink, row, ("token_hash", "expires_at", "revoked_at"))
        share = ShareLink(
            id=share_id, project=project, session_id=ids[row["session"]], created_by=people(row["created_by"]), **values
        )
        yield share, row["created_at"]


def _records(
    archive: zipfile.ZipFile, project: Project, ids: dict[str, uuid.UUID], people: _People, result: Imported
) -> None:
    result.attributions = _inserted(
        Attribution,
        (
            (
                Attribution(
                    project=project,
                    session_id=ids[row["session_id"]],
                    **_fields(Attribution, row, ("record", "error", "added_lines", "ai_lines")),
                ),
                row["created_at"],
            )
            for row in _lines(archive, "attributions.jsonl")
        ),
    )
    result.share_links = _inserted(ShareLink, _shares(archive, project, ids, people, result))
    result.commit_links = _inserted(
        CommitLink,
        (
            (
                CommitLink(
                    project=project,
                    created_by=people(row["created_by"]),
                    **_fields(CommitLink, row, ("old_hash", "new_hash")),
                ),
                row["created_at"],
            )
            for row in _lines(archive, "commit_links.jsonl")
        ),
    )
    result.access_log = _inserted(
        AccessLog,
        (
            (
                AccessLog(
                    project=project,
                    # a read of a session deleted before the export keeps its old id, as it did there
                    session_id=ids.get(row["session_id"], uuid.UUID(row["session_id"])),
                    user=people(row["user__email"]),
                    **_fields(AccessLog, row, ("at", "hour", "count", "via", "ip", "user_agent")),
                ),
                None,
            )
            for row in _lines(archive, "access_log.jsonl")
        ),
    )
    result.audit_events = _inserted(
        AuditEvent,
        (
            (
                AuditEvent(
                    project_id=project.pk,
                    actor_id=actor.pk if (actor := people(row["actor_email"])) else None,
                    **_fields(AuditEvent, row, AUDIT_FIELDS),
                ),
                None,
            )
            for row in _lines(archive, "audit.jsonl")
        ),
    )


def project_import(path: Path | str, *, slug: str | None = None) -> Imported:
    """Restore the archive at ``path`` as a new project (``slug``, default the archive's). All or nothing."""
    with zipfile.ZipFile(path) as archive:
        manifest = manifest_verified(archive)
        settings = _document(archive, "project.json")
        slug = slug or settings["slug"]
        if not isinstance(slug, str) or not SLUG.fullmatch(slug):
            raise ArchiveRefused(f"{slug!r} is not a project slug (up to 64 letters, digits, - and _).")
        with unscoped():
            if Project.objects.filter(slug=slug).exists():
                raise ArchiveRefused(f"A project {slug!r} exists already; choose another with --slug.")
            repo = settings.get("repo")
            repo_taken = bool(repo) and Project.objects.filter(repo=repo).exists()
            project = Project(
                id=uuid.uuid4(),
                slug=slug,
                name=settings["name"],
                repo=None if repo_taken else repo,
                retention_days=settings["retention_days"],
                sharing_enabled=settings["sharing_enabled"],
                archived_at=DATE.to_python(settings["archived_at"]),
            )
            result = Imported(project=project, repo_dropped=str(repo) if repo_taken else "")
            ids = _session_ids(archive)
            result.sessions_renumbered = sum(str(new) != old for old, new in ids.items())
            uploaded: list[str] = []
            try:
                _blobs_upload(archive, manifest["files"], project.pk, ids, uploaded)
                result.blobs = len(uploaded)
                _rows_restored(archive, manifest, project, settings, ids, result)
            except BaseException:
                blobs.delete(*uploaded)
                raise
    return result


def _rows_restored(
    archive: zipfile.ZipFile,
    manifest: dict[str, Any],
    project: Project,
    settings: dict[str, Any],
    ids: dict[str, uuid.UUID],
    result: Imported,
) -> None:
    """Every row, in one transaction; a row that does not hold together refuses the whole archive."""
    people = _People()
    try:
        with transaction.atomic():
            project.save()
            Project.objects.filter(pk=project.pk).update(created_at=DATE.to_python(settings["created_at"]))
            result.sessions = _sessions_insert(archive, project, ids, people)
            _members(archive, project, people, result)
            _records(archive, project, ids, people, result)
            result.authors_unknown = people.missing()
            audit_trail.record(
                kind=audit_trail.PROJECT_IMPORTED,
                project=project,
                target=project.slug,
                detail={
                    "from": manifest["project"]["slug"],
                    "exported_at": manifest["exported_at"],
                    "product_version": manifest["product_version"],
                    "sessions": result.sessions,
                },
            )
    except (KeyError, TypeError, ValueError, ValidationError, IntegrityError) as exc:
        raise ArchiveRefused(
            f"The archive's rows do not hold together ({type(exc).__name__}: {exc}); nothing was imported."
        ) from exc
