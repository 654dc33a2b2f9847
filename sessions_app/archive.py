"""Writing a zip archive to an unseekable stream, with a manifest of what it holds (docs/export-format.md).

``ArchiveWriter`` is shared by the project export (``sessions_app.export``) and the per-person export
(``governance.person_export``): each file is written while it is read — JSON lines from a row
iterator, a stored blob chunk by chunk — and every chunk is yielded as soon as it is zipped, so memory
holds one chunk, and per file its directory entry and checksum (about 1.7 KB), whatever the size of
the data. Every file's SHA-256 and size are summed as it is written and go into ``manifest.json``,
the last file. Entries carry real dates (the old export's were all 1980-01-01).
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from collections.abc import Generator, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import IO, Any, TypedDict

from django.core.serializers.json import DjangoJSONEncoder

from sessionledger.core.version import __version__
from sessions_app import blobs

CHUNK = 1 << 20
MANIFEST = "manifest.json"


class FileEntry(TypedDict):
    sha256: str
    bytes: int


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


class ArchiveEncoder(DjangoJSONEncoder):
    """Dates to the microsecond: Django's encoder keeps milliseconds, and an import must restore them as they were."""

    def default(self, o: Any) -> Any:
        if isinstance(o, datetime):
            return o.isoformat()
        return super().default(o)


def json_line(row: Mapping[str, Any]) -> bytes:
    return json.dumps(row, cls=ArchiveEncoder, ensure_ascii=False).encode() + b"\n"


def _zip_time(when: datetime) -> tuple[int, int, int, int, int, int]:
    at = when.astimezone(UTC)
    return (max(at.year, 1980), at.month, at.day, at.hour, at.minute, at.second)


@dataclass
class _Member:
    info: zipfile.ZipInfo
    digest: Any
    size: int = 0


class ArchiveWriter:
    """A zip written as it is streamed. Use the generators with ``yield from``; each yields bytes."""

    def __init__(self, *, now: datetime) -> None:
        self.now = now
        self.pipe = _Pipe()
        self.zip = zipfile.ZipFile(self.pipe, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True)
        self.files: dict[str, FileEntry] = {}

    def _info(self, name: str, when: datetime | None, *, deflate: bool) -> zipfile.ZipInfo:
        info = zipfile.ZipInfo(name, date_time=_zip_time(when or self.now))
        # stored parts are gzip already: deflating them again costs CPU for nothing
        info.compress_type = zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED
        info.external_attr = 0o644 << 16
        return info

    def _write(self, info: zipfile.ZipInfo, chunks: Iterable[bytes]) -> Iterator[bytes]:
        digest, size = hashlib.sha256(), 0
        with self.zip.open(info, mode="w", force_zip64=True) as member:
            for chunk in chunks:
                digest.update(chunk)
                size += len(chunk)
                member.write(chunk)
                yield self.pipe.take()
        self.files[info.filename] = {"sha256": digest.hexdigest(), "bytes": size}

    def lines(
        self, name: str, rows: Iterable[Mapping[str, Any]], *, when: datetime | None = None
    ) -> Generator[bytes, None, int]:
        """A JSON-lines file, a row a line; returns the number of rows."""
        count = 0

        def encoded() -> Iterator[bytes]:
            nonlocal count
            for row in rows:
                count += 1
                yield json_line(row)

        yield from self._write(self._info(name, when, deflate=True), encoded())
        return count

    def document(self, name: str, data: dict[str, Any]) -> Iterator[bytes]:
        body = json.dumps(data, cls=ArchiveEncoder, ensure_ascii=False, indent=2).encode()
        yield from self._write(self._info(name, None, deflate=True), [body])

    def blob(self, name: str, key: str, *, when: datetime | None = None) -> Generator[bytes, None, bool]:
        """A stored blob copied as it is; returns False (and writes nothing) when storage has none.
        Storage failing on the way raises ``StorageUnavailable``: the stream is cut, never finished as
        if whole (docs/security.md "Export")."""
        try:
            stream = blobs.open_stream(key)
        except FileNotFoundError:  # blobs.BlobMissing: the bucket answered it has no such blob
            return False
        with stream:
            yield from self._write(self._info(name, when, deflate=False), iter(lambda: _read(stream, key), b""))
        return True

    def finish(self, manifest: dict[str, Any]) -> Iterator[bytes]:
        """``manifest.json`` last (it holds every other file's checksum), then the zip's directory."""
        body = {
            **manifest,
            "product_version": __version__,
            "exported_at": self.now,
            "files": dict(sorted(self.files.items())),
        }
        data = json.dumps(body, cls=ArchiveEncoder, ensure_ascii=False, indent=2).encode()
        with self.zip.open(self._info(MANIFEST, None, deflate=True), mode="w", force_zip64=True) as member:
            member.write(data)
        self.zip.close()
        yield self.pipe.take()


def _read(stream: IO[bytes], key: str) -> bytes:
    try:
        return stream.read(CHUNK)
    except blobs.STORAGE_ERRORS as exc:
        raise blobs.StorageUnavailable(f"export cut: cannot read {key}: {exc}") from exc
