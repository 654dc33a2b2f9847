"""Staff's view of the audit stream (docs/security.md "Audit trail"): per chain, what is pending, the
last delivery and the last error. Not staff: 404."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from governance.streaming import status
from projects.access import StaffAPIView


class AuditStreamView(StaffAPIView):
    @extend_schema(
        responses=inline_serializer(
            "AuditStreamStatus",
            {"sink": serializers.CharField(), "chains": serializers.ListField(child=serializers.DictField())},
        )
    )
    def get(self, request: Request) -> Response:
        sink = settings.SESSIONLEDGER_AUDIT_SINK
        # The scheme and host only: a webhook URL may carry a token in its path or query.
        shown = sink.split("://", 1)[0] + "://" + sink.split("://", 1)[1].split("/", 1)[0] if "://" in sink else sink
        return Response({"sink": shown, "chains": status()})
