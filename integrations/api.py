"""Staff's API for bindings: ``/api/v1/forge-installations`` and ``/api/v1/forge-bindings``. Only
deployment staff bind a repository to a project (anyone else gets 404, ``projects.access.IsStaff``).
A project's admins choose what its PR comments may say: ``/api/v1/projects/{project}/forge-comment``."""

from __future__ import annotations

from django.db import IntegrityError
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, serializers
from rest_framework.request import Request
from rest_framework.response import Response

from integrations.models import ForgeCommentSettings, ForgeInstallation, RepositoryBinding
from projects.access import READ_MEMBER_WRITE, ProjectAPIView, StaffAPIView
from projects.audit_trail import record
from projects.models import Project, Role
from projects.scoping import unscoped


class InstallationSerializer(serializers.ModelSerializer[ForgeInstallation]):
    class Meta:
        model = ForgeInstallation
        fields = ["id", "forge", "external_id", "account", "suspended", "deleted", "created_at"]


class BindingSerializer(serializers.ModelSerializer[RepositoryBinding]):
    project = serializers.SlugRelatedField(slug_field="slug", queryset=Project.objects.all())

    class Meta:
        model = RepositoryBinding
        fields = ["id", "installation", "repository_id", "full_name", "project", "created_at"]


class InstallationsView(StaffAPIView):
    @extend_schema(responses=InstallationSerializer(many=True))
    def get(self, request: Request) -> Response:
        return Response(InstallationSerializer(ForgeInstallation.objects.order_by("id"), many=True).data)


class BindingsView(StaffAPIView):
    @extend_schema(responses=BindingSerializer(many=True))
    def get(self, request: Request) -> Response:
        bindings = RepositoryBinding.objects.select_related("project").order_by("id")
        return Response(BindingSerializer(bindings, many=True).data)

    @extend_schema(request=BindingSerializer, responses={201: BindingSerializer})
    def post(self, request: Request) -> Response:
        with unscoped():
            serializer = BindingSerializer(data=request.data)
            serializer.is_valid(raise_exception=True)
            try:
                binding = serializer.save()
            except IntegrityError:
                raise exceptions.ValidationError({"repository_id": "This repository is already bound."}) from None
        record(request, kind="forge.binding_created", project=binding.project, target=binding.full_name)
        return Response(BindingSerializer(binding).data, status=201)


class BindingView(StaffAPIView):
    @extend_schema(responses={204: None})
    def delete(self, request: Request, binding_id: int) -> Response:
        binding = RepositoryBinding.objects.select_related("project").filter(pk=binding_id).first()
        if binding is None:
            raise exceptions.NotFound()
        binding.delete()
        record(request, kind="forge.binding_deleted", project=binding.project, target=binding.full_name)
        return Response(status=204)


class CommentSettingsSerializer(serializers.Serializer[ForgeCommentSettings]):
    show_titles_and_prompts = serializers.BooleanField(
        help_text="Put conversations' titles and prompt excerpts in the PR comment, which everyone with access "
        "to the repository reads, project members or not (default false: counts and links only)."
    )


class CommentSettingsView(ProjectAPIView):
    """What this project's PR comments may say (docs/forges.md#the-pr-comment); admins change it."""

    required_roles = {**READ_MEMBER_WRITE, "PUT": Role.ADMIN}

    def _current(self) -> bool:
        return bool(ForgeCommentSettings.objects.filter(project=self.project, show_titles_and_prompts=True).exists())

    @extend_schema(responses=CommentSettingsSerializer)
    def get(self, request: Request, project: str) -> Response:
        return Response({"show_titles_and_prompts": self._current()})

    @extend_schema(request=CommentSettingsSerializer, responses=CommentSettingsSerializer)
    def put(self, request: Request, project: str) -> Response:
        body = CommentSettingsSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        show = bool(body.validated_data["show_titles_and_prompts"])
        if show != self._current():
            ForgeCommentSettings.objects.update_or_create(
                project=self.project, defaults={"show_titles_and_prompts": show}
            )
            record(
                request,
                kind="forge.comment_settings_changed",
                project=self.project,
                target=f"titles_and_prompts={show}",
            )
        return Response({"show_titles_and_prompts": show})
