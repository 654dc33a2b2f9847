"""``…/sessions/{id}/shares``: create (members), list, and revoke read-only share links."""

from __future__ import annotations

from typing import Any

from django.http import Http404
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from config.parsers import BoundedJSONParser
from projects.access import READ_ONLY, acting_user
from projects.models import Role
from sessions_app import shares
from sessions_app.api.common import SessionObjectView
from sessions_app.models import ShareLink


class ShareCreate(serializers.Serializer):
    days = serializers.IntegerField(min_value=1, max_value=shares.MAX_DAYS, help_text="lifetime, at most 30 days")


class ShareLinkSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    session = serializers.UUIDField()
    created_by = serializers.EmailField(allow_null=True)
    created_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField()
    revoked_at = serializers.DateTimeField(allow_null=True)
    active = serializers.BooleanField()


ShareCreated = inline_serializer(
    "ShareLinkCreated",
    {
        "link": ShareLinkSerializer(),
        "url": serializers.URLField(help_text="shown once: only a hash of the token is kept"),
    },
)


def share_representation(link: ShareLink) -> dict[str, Any]:
    return {
        "id": str(link.pk),
        "session": str(link.session_id),
        "created_by": link.created_by.email if link.created_by else None,
        "created_at": link.created_at,
        "expires_at": link.expires_at,
        "revoked_at": link.revoked_at,
        "active": shares.is_active(link) and link.project.sharing_enabled,
    }


class SessionSharesView(SessionObjectView):
    required_roles = {**READ_ONLY, "POST": Role.MEMBER}
    parser_classes = [BoundedJSONParser]

    @extend_schema(responses={200: inline_serializer("ShareLinkList", {"results": ShareLinkSerializer(many=True)})})
    def get(self, request: Request, project: str, session_id: str) -> Response:
        session = self.get_session(session_id)
        links = shares.share_list(project=self.project, session=session)
        return Response({"results": [share_representation(link) for link in links]})

    @extend_schema(request=ShareCreate, responses={201: ShareCreated})
    def post(self, request: Request, project: str, session_id: str) -> Response:
        session = self.get_session(session_id)
        query = ShareCreate(data=request.data)
        query.is_valid(raise_exception=True)
        made = shares.share_create(session=session, user=acting_user(request), days=query.validated_data["days"])
        return Response({"link": share_representation(made.link), "url": made.url}, status=status.HTTP_201_CREATED)


class SessionShareView(SessionObjectView):
    required_roles = {**READ_ONLY, "DELETE": Role.MEMBER}

    @extend_schema(responses={204: None})
    def delete(self, request: Request, project: str, session_id: str, share_id: str) -> Response:
        session = self.get_session(session_id)
        link = shares.share_get(project=self.project, link_id=share_id)
        if link is None or link.session_id != session.pk:
            raise Http404
        shares.share_revoke(link=link)
        return Response(status=status.HTTP_204_NO_CONTENT)
