"""Deployment staff's endpoints: offboarding and erasing a person (docs/security.md "Offboarding",
"Erasure"). A caller who is not staff — or holds a token restricted to one project — gets 404, as if
the endpoint did not exist."""

from __future__ import annotations

from dataclasses import asdict, fields
from typing import Any

from django.http import StreamingHttpResponse
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import exceptions, serializers
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from governance.erasure import user_erase
from governance.groups import mapping_create, mapping_delete
from governance.models import GroupMapping
from governance.offboarding import Offboarded, user_deactivate
from governance.person_export import person_download
from projects.access import StaffAPIView
from projects.errors import DomainError
from projects.models import Project, Role
from projects.scoping import unscoped
from sessions_app.api.export import ZipRenderer


class UserDeactivateView(StaffAPIView):
    @extend_schema(
        request=None,
        responses=inline_serializer(
            "Offboarded",
            {name: serializers.IntegerField() for name in (field.name for field in fields(Offboarded))},
        ),
        description="Deactivate the user and end every access they have (staff).",
    )
    def post(self, request: Request, user_id: int) -> Response:
        user = self.target(user_id)
        return Response(asdict(user_deactivate(user=user)))


class UserEraseView(StaffAPIView):
    @extend_schema(
        request=None,
        responses=inline_serializer(
            "Erased", {"sessions": serializers.IntegerField(), "access_log_rows": serializers.IntegerField()}
        ),
        description="Erase the person: their sessions, prompts, attribution, tokens, access-log rows, account (staff).",
    )
    def post(self, request: Request, user_id: int) -> Response:
        return Response(asdict(user_erase(user=self.target(user_id))))


class GroupMappingSerializer(serializers.Serializer[Any]):  # one mapping or a list of them
    id = serializers.IntegerField(read_only=True)
    match_on = serializers.ChoiceField(choices=GroupMapping.MatchOn.choices, default=GroupMapping.MatchOn.DISPLAY_NAME)
    group = serializers.CharField(max_length=255)
    project = serializers.SlugRelatedField(slug_field="slug", queryset=Project.objects.all())
    role = serializers.ChoiceField(choices=Role.choices, default=Role.MEMBER)


class GroupMappingsView(StaffAPIView):
    """Which identity provider group grants which project role (docs/identity.md "Groups")."""

    @extend_schema(responses=GroupMappingSerializer(many=True), description="List the group mappings (staff).")
    def get(self, request: Request) -> Response:
        with unscoped():
            mappings = GroupMapping.objects.select_related("project").order_by("pk")
            return Response(GroupMappingSerializer(mappings, many=True).data)

    @extend_schema(
        request=GroupMappingSerializer,
        responses={201: GroupMappingSerializer},
        description="Map a group to a project role; members get it at once (staff).",
    )
    def post(self, request: Request) -> Response:
        serializer = GroupMappingSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        if GroupMapping.objects.filter(
            match_on=data["match_on"], group=data["group"], project=data["project"]
        ).exists():
            raise DomainError("exists", "This group is already mapped to this project.", field="group", status_code=409)
        mapping = mapping_create(**data)
        return Response(GroupMappingSerializer(mapping).data, status=201)


class GroupMappingView(StaffAPIView):
    @extend_schema(request=None, responses={204: None}, description="Remove a group mapping (staff).")
    def delete(self, request: Request, mapping_id: int) -> Response:
        with unscoped():
            mapping = GroupMapping.objects.filter(pk=mapping_id).select_related("project").first()
        if mapping is None:
            raise exceptions.NotFound("No such group mapping.")
        mapping_delete(mapping=mapping)
        return Response(status=204)


class UserExportView(StaffAPIView):
    renderer_classes = [JSONRenderer, ZipRenderer]

    @extend_schema(
        responses={
            (200, "application/zip"): OpenApiResponse(description="the person's export (docs/export-format.md)")
        },
        description="Everything kept about the person, as a zip, for their access request (staff).",
    )
    def get(self, request: Request, user_id: int) -> StreamingHttpResponse:
        return person_download(self.target(user_id))

    def handle_exception(self, exc: Exception) -> Response:
        # a refusal (404 to non-staff) is JSON even when ``?format=zip`` chose the zip renderer, which writes nothing
        self.request.accepted_renderer, self.request.accepted_media_type = JSONRenderer(), "application/json"
        return super().handle_exception(exc)
