"""The AI context digest endpoint (docs/design.md §6)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from projects.access import READ_ONLY, ProjectAPIView
from sessions_app import context
from sessions_app.throttles import QueryThrottle


class ContextQuery(serializers.Serializer):
    branch = serializers.CharField(required=False, allow_blank=True, default="")
    files = serializers.ListField(child=serializers.CharField(), required=False, default=list)
    budget = serializers.IntegerField(
        required=False, min_value=200, max_value=context.MAX_BUDGET, default=context.DEFAULT_BUDGET
    )
    prompts = serializers.BooleanField(
        required=False,
        default=False,
        help_text="true: the full digest, with teammates' prompts; false (the default): titles, commits, files",
    )


class ContextView(ProjectAPIView):
    """The AI digest of docs/design.md §6: relevant prior sessions within a character budget."""

    required_roles = READ_ONLY
    throttle_classes = [QueryThrottle]

    @extend_schema(
        parameters=[ContextQuery],
        responses={
            200: inline_serializer(
                "Context",
                {
                    "text": serializers.CharField(),
                    "length": serializers.IntegerField(),
                    "budget": serializers.IntegerField(),
                    "sessions": serializers.ListField(child=serializers.DictField()),
                },
            ),
        },
    )
    def get(self, request: Request, project: str) -> Response:
        files = [f for value in request.query_params.getlist("files") for f in value.split(",") if f]
        query = ContextQuery(data={**request.query_params.dict(), "files": files})
        query.is_valid(raise_exception=True)
        digest = context.context_digest(project=self.project, **query.validated_data)
        return Response(
            {
                "text": digest.text,
                "length": len(digest.text),
                "budget": digest.budget,
                "sessions": context.digest_sessions(digest),
            }
        )
