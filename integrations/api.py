"""Staff's API for bindings: ``/api/v1/forge-installations`` and ``/api/v1/forge-bindings``. Only
deployment staff bind a repository to a project (anyone else gets 404, ``projects.access.IsStaff``)."""

from __future__ import annotations

from django.db import IntegrityError
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, serializers
from rest_framework.request import Request
from rest_framework.response import Response

from integrations.models import ForgeInstallation, RepositoryBinding
from projects.access import StaffAPIView
from projects.audit_trail import record
from projects.models import Project
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
