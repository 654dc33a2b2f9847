"""Administrative events (docs/security.md "Audit trail"): a project's for its admins, every project's
for staff. Filters ``actor`` (e-mail), ``kind``, ``since``, ``until``; ``?format=csv|jsonl`` streams the
whole filtered trail as a download."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.http import HttpResponseBase
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import permissions, serializers
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from governance.audit import event_row, events_filtered, export_response, trail_read_record
from projects.access import ADMIN_ONLY, IsStaff, ProjectAPIView, TokenScopePermission
from projects.audit_trail import KINDS
from projects.models import AuditEvent, Project
from projects.scoping import unscoped
from sessions_app.api.common import OffsetPagination, offset_page


class _Download(BaseRenderer):
    """Lets ``?format=csv|jsonl`` pass content negotiation; the view streams the body itself."""

    charset = "utf-8"

    def render(self, data: Any, accepted_media_type: str | None = None, renderer_context: Any = None) -> bytes:
        return b""


class CsvRenderer(_Download):
    media_type = "text/csv"
    format = "csv"


class JsonlRenderer(_Download):
    media_type = "application/jsonl"
    format = "jsonl"


class AuditFilters(serializers.Serializer[Any]):
    actor = serializers.CharField(required=False, allow_blank=True, default="", max_length=254)
    kind = serializers.ChoiceField(choices=KINDS, required=False, allow_blank=True, default="")
    since = serializers.DateTimeField(required=False, allow_null=True, default=None)
    until = serializers.DateTimeField(required=False, allow_null=True, default=None)
    project = serializers.SlugField(required=False, allow_blank=True, default="", max_length=64)


class AuditEventSerializer(serializers.Serializer[Any]):
    at = serializers.DateTimeField()
    project_slug = serializers.CharField()
    actor_email = serializers.CharField(help_text="empty: the system or an anonymous visitor")
    kind = serializers.ChoiceField(choices=KINDS)
    target = serializers.CharField()
    detail = serializers.DictField()
    via = serializers.CharField()
    ip = serializers.IPAddressField(allow_null=True)
    user_agent = serializers.CharField()

    def to_representation(self, instance: AuditEvent) -> dict[str, Any]:
        return event_row(instance)


AUDIT_RESPONSES = {
    (200, "application/json"): offset_page("AuditEventPage", AuditEventSerializer(many=True)),
    (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="?format=csv: the filtered trail"),
    (200, "application/jsonl"): OpenApiResponse(OpenApiTypes.STR, description="?format=jsonl: one event a line"),
}


FILTER_PARAMETERS = [
    OpenApiParameter("actor", str, description="who: an e-mail address"),
    OpenApiParameter("kind", str, enum=list(KINDS)),
    OpenApiParameter("since", str, description="ISO 8601"),
    OpenApiParameter("until", str, description="ISO 8601"),
    OpenApiParameter("format", str, enum=["csv", "jsonl"], description="download the filtered trail"),
    OpenApiParameter("offset", int),
    OpenApiParameter("limit", int),
]


RENDERERS = [JSONRenderer, CsvRenderer, JsonlRenderer]


class AuditListMixin:
    def handle_exception(self, exc: Exception) -> Response:
        """A refusal is JSON like every other API error, also when ``?format=csv|jsonl`` asked for a download."""
        request: Request = self.request  # type: ignore[attr-defined]
        request.accepted_renderer, request.accepted_media_type = JSONRenderer(), JSONRenderer.media_type
        response: Response = super().handle_exception(exc)  # type: ignore[misc]
        return response

    def audited_project(self) -> Project | None:
        """The project whose trail is read (its admins see the read in it); ``None``: the deployment's."""
        return None

    def answer(self, request: Request, events: QuerySet[AuditEvent], filename: str) -> HttpResponseBase:
        filters = AuditFilters(data=request.query_params)
        filters.is_valid(raise_exception=True)
        data = filters.validated_data
        if data["project"]:
            events = events.filter(project_slug=data["project"])
        events = events_filtered(
            events, actor=data["actor"], kind=data["kind"], since=data["since"], until=data["until"]
        )
        fmt = request.query_params.get("format", "")
        download = fmt if fmt in ("csv", "jsonl") else ""
        trail_read_record(request, project=self.audited_project(), filters=data, fmt=download)
        if download:
            return export_response(events, fmt, filename)
        paginator = OffsetPagination()
        page = paginator.paginate_queryset(events, request, view=self) or []  # type: ignore[arg-type]
        return paginator.get_paginated_response(AuditEventSerializer(page, many=True).data)


class ProjectAuditView(AuditListMixin, ProjectAPIView):
    """The project's administrative events (admins). Row-level security shows only this project's."""

    required_roles = ADMIN_ONLY
    renderer_classes = RENDERERS

    def audited_project(self) -> Project | None:
        return self.project

    @extend_schema(parameters=FILTER_PARAMETERS, responses=AUDIT_RESPONSES)
    def get(self, request: Request, project: str) -> HttpResponseBase:
        events = AuditEvent.objects.filter(project_id=self.project.pk)
        return self.answer(request, events, f"audit-{self.project.slug}")


class AuditView(AuditListMixin, APIView):
    """Every administrative event of the deployment (staff), ``project`` filters by slug."""

    permission_classes = [permissions.IsAuthenticated, IsStaff, TokenScopePermission]
    renderer_classes = RENDERERS

    @extend_schema(
        parameters=[*FILTER_PARAMETERS, OpenApiParameter("project", str)],
        responses=AUDIT_RESPONSES,
    )
    def get(self, request: Request) -> HttpResponseBase:
        with unscoped():
            return self.answer(request, AuditEvent.objects.all(), "audit")
