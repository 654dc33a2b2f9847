"""Repository names as the server and the client both key them: host and path of a git remote."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

_SCP_REMOTE = re.compile(r"^(?:[\w.-]+@)?(?P<host>[\w.-]+):(?P<path>[^/].*)$")


def normalise_remote(remote: str) -> str:
    """`git@github.com:acme/api.git` / `https://github.com/acme/api` → `github.com/acme/api`.

    The server keys a project's repository by it; the client keys its remote → project cache by it.
    """
    text = remote.strip()
    parsed = urlsplit(text)
    if parsed.scheme and parsed.hostname:
        host, path = parsed.hostname, parsed.path
    elif match := _SCP_REMOTE.match(text):
        host, path = match["host"], match["path"]
    else:
        host, _, path = text.partition("/")
    return f"{host.lower()}/{path.strip('/').removesuffix('.git')}"
