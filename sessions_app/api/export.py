"""``/api/v1/projects/{project}/export`` (admins): the whole project as a zip, streamed
(``sessions_app.export``). POST answers 202 with the download's URL; GET downloads it. The zip is
made while it is sent, so it is ready at once and never stored."""

from __future__ import annotations

from django.conf import settings
from django.http import StreamingHttpResponse
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from projects.access import ADMIN_ONLY, ProjectAPIView
from sessions_app.export import download


class ZipRenderer(BaseRenderer):
    media_type = "application/zip"
    format = "zip"
    charset = None

    def render(self, data: object, accepted_media_type: str | None = None, renderer_context: object = None) -> bytes:
        return b""


class ProjectExportView(ProjectAPIView):
    required_roles = ADMIN_ONLY
    renderer_classes = [JSONRenderer, ZipRenderer]

    def get_renderers(self) -> list[BaseRenderer]:
        """``?format=zip`` is for the download; the POST answers JSON only."""
        if self.request.method == "GET":
            return super().get_renderers()
        return [JSONRenderer()]

    @extend_schema(
        request=None,
        responses={202: inline_serializer("ExportStarted", {"url": serializers.URLField()})},
        description="Ask for the project's export; the answer's URL downloads it (admins).",
    )
    def post(self, request: Request, project: str) -> Response:
        url = f"{settings.SITE_URL}/api/v1/projects/{self.project.slug}/export"
        return Response({"url": url}, status=status.HTTP_202_ACCEPTED)

    @extend_schema(
        responses={(200, "application/zip"): OpenApiResponse(description="sessions.jsonl and every stored part")}
    )
    def get(self, request: Request, project: str) -> StreamingHttpResponse:
        return download(self.project)
