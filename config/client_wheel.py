"""The server serves its own client: ``GET /client/sessionledger-<version>-py3-none-any.whl``
(docs/client.md "Install"), so ``pipx install <that URL>`` gets the client that matches this server.

The wheel is built into the image (Dockerfile) and by ``make install`` (Makefile), into
``CLIENT_DIST_DIR``. Every answer carries ``X-Sessionledger-Version``; the client warns when it differs
from its own version.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.http import FileResponse, Http404, HttpRequest, HttpResponse

from sessionledger.core.version import __version__

VERSION_HEADER = "X-Sessionledger-Version"


def wheel_name() -> str:
    return f"sessionledger-{__version__}-py3-none-any.whl"


def install_command() -> str:
    return f"pipx install {settings.SITE_URL}/client/{wheel_name()}"


def client_wheel(request: HttpRequest, filename: str) -> FileResponse:
    """This server's client wheel, to anyone (it is the published client); any other name is a 404."""
    path = settings.CLIENT_DIST_DIR / wheel_name()
    if filename != wheel_name() or not path.is_file():
        raise Http404("No such client wheel.")
    return FileResponse(path.open("rb"), as_attachment=True, filename=filename, content_type="application/zip")


def client_install(request: HttpRequest) -> dict[str, Any]:
    """Template context: the ``pipx install`` line of the device-login and settings pages."""
    return {"client_install_command": install_command()}


class VersionHeaderMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response[VERSION_HEADER] = __version__
        return response
