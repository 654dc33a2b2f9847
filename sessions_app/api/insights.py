"""Insights for retrospectives (JSON, or one chart as CSV) and the content-access audit log."""

from __future__ import annotations

import uuid
from typing import Any

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from projects.access import ADMIN_ONLY, READ_ONLY, ProjectAPIView
from sessions_app import insights
from sessions_app.api.common import OffsetPagination, offset_page
from sessions_app.csv_export import csv_response as insights_csv  # one writer for the page and the API
from sessions_app.models import AccessLog
from sessions_app.throttles import QueryThrottle


class InsightsQuery(serializers.Serializer):
    since = serializers.DateTimeField(required=False)
    until = serializers.DateTimeField(required=False)
    branch = serializers.CharField(required=False, allow_blank=True, default="")
    export = serializers.ChoiceField(
        choices=sorted(insights.CHARTS), required=False, help_text="return this chart's numbers as CSV"
    )


class InsightsView(ProjectAPIView):
    required_roles = READ_ONLY
    throttle_classes = [QueryThrottle]

    @extend_schema(
        parameters=[InsightsQuery],
        responses={(200, "application/json"): OpenApiTypes.OBJECT, (200, "text/csv"): OpenApiTypes.STR},
    )
    def get(self, request: Request, project: str) -> Response | HttpResponse:
        query = InsightsQuery(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        data = dict(query.validated_data)
        export = data.pop("export", None)
        period = insights.Period(**data)
        if export:
            return insights_csv(
                insights.chart(project=self.project, period=period, name=export), f"{self.project.slug}-{export}"
            )
        return Response(insights.insights(project=self.project, period=period))


class AccessLogSerializer(serializers.ModelSerializer):
    user: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(slug_field="email", read_only=True)

    class Meta:
        model = AccessLog
        fields = ["id", "session_id", "user", "at", "hour", "count", "via", "ip", "user_agent"]


class AccessLogView(ProjectAPIView):
    """Who read which session's content (admins)."""

    required_roles = ADMIN_ONLY

    @extend_schema(
        parameters=[OpenApiParameter("session", str), OpenApiParameter("offset", int), OpenApiParameter("limit", int)],
        responses={200: offset_page("AccessLogPage", AccessLogSerializer(many=True))},
    )
    def get(self, request: Request, project: str) -> Response:
        entries = AccessLog.objects.filter(project=self.project).select_related("user")
        if session := request.query_params.get("session"):
            entries = entries.filter(session_id=session) if _is_uuid(session) else entries.none()
        paginator = OffsetPagination()
        page: list[Any] = paginator.paginate_queryset(entries, request, view=self) or []
        return paginator.get_paginated_response(AccessLogSerializer(page, many=True).data)


def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True
