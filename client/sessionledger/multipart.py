"""A `multipart/form-data` body built by hand and streamed from files (no requests, no email).

The queued gzip parts can be megabytes: they are read in 64 KiB pieces while sending, never
held in memory together. The length is known up front so the request carries Content-Length
(the server refuses an oversized body before reading it).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

CHUNK = 65536


class Part:
    """A form field: inline bytes, or a file streamed from `path`."""

    def __init__(
        self,
        name: str,
        *,
        data: bytes | None = None,
        path: str | None = None,
        filename: str = "",
        content_type: str = "application/octet-stream",
    ) -> None:
        self.name, self.data, self.path = name, data, path
        self.filename, self.content_type = filename, content_type

    def header(self, boundary: str) -> bytes:
        disposition = f'form-data; name="{_quote(self.name)}"'
        if self.filename:
            disposition += f'; filename="{_quote(self.filename)}"'
        return (
            f"--{boundary}\r\nContent-Disposition: {disposition}\r\nContent-Type: {self.content_type}\r\n\r\n"
        ).encode()

    def size(self) -> int:
        return len(self.data) if self.data is not None else os.path.getsize(self.path or "")

    def chunks(self) -> Iterator[bytes]:
        if self.data is not None:
            yield self.data
            return
        with open(self.path or "", "rb") as handle:
            while piece := handle.read(CHUNK):
                yield piece


class Body:
    """Iterate it to stream the body; `len()` is its exact size."""

    def __init__(self, parts: list[Part]) -> None:
        self.parts = parts
        self.boundary = "sessionledger-" + os.urandom(12).hex()

    @property
    def content_type(self) -> str:
        return f"multipart/form-data; boundary={self.boundary}"

    def __len__(self) -> int:
        framing = sum(len(p.header(self.boundary)) + p.size() + 2 for p in self.parts)
        return framing + len(self._closing())

    def __iter__(self) -> Iterator[bytes]:
        for part in self.parts:
            yield part.header(self.boundary)
            yield from part.chunks()
            yield b"\r\n"
        yield self._closing()

    def _closing(self) -> bytes:
        return f"--{self.boundary}--\r\n".encode()


def _quote(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', "%22").replace("\r", "%0D").replace("\n", "%0A")
