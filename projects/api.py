"""REST endpoints for projects, members, invitations and tokens (thin: services do the work)."""

from __future__ import annotations

from django.conf import settings
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import exceptions, generics, permissions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from projects import device, limits, selectors, services
from projects.access import ADMIN_ONLY, READ_ONLY, ProjectAPIView, TokenScopePermission, acting_user
from projects.errors import DomainError
from projects.models import ApiToken, Invitation, Membership, Project, Role, Scope, User
from projects.serializers import (
    ApiTokenCreatedSerializer,
    ApiTokenCreateSerializer,
    ApiTokenSerializer,
    InvitationCreateSerializer,
    InvitationSerializer,
    MembershipCreateSerializer,
    MembershipSerializer,
    MembershipUpdateSerializer,
    ProjectCreateSerializer,
    ProjectSerializer,
    ProjectUpdateSerializer,
)


def _token(request: Request) -> ApiToken | None:
    return request.auth if isinstance(request.auth, ApiToken) else None


class ProjectListView(generics.ListAPIView):
    serializer_class = ProjectSerializer
    pagination_class = None
    permission_classes = [permissions.IsAuthenticated, TokenScopePermission]

    @extend_schema(parameters=[OpenApiParameter("repo", str, description="git remote in any form")])
    def get(self, request: Request, *args: object, **kwargs: object) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        return selectors.project_list(
            user=acting_user(self.request), repo=self.request.query_params.get("repo"), token=_token(self.request)
        )

    @extend_schema(
        request=ProjectCreateSerializer,
        responses={201: ProjectSerializer},
        description="Create a project (site staff, with a token not restricted to a project).",
    )
    def post(self, request: Request) -> Response:
        user, token = acting_user(request), _token(request)
        if not user.is_staff or (token is not None and token.project_id is not None):
            raise exceptions.PermissionDenied("Creating projects needs a staff account.")
        data = _validated(ProjectCreateSerializer, request)
        admin = user
        if data["admin"]:
            admin = User.objects.filter(email__iexact=data["admin"]).first()  # type: ignore[assignment]
            if admin is None:
                raise DomainError("not_found", f"No user with e-mail {data['admin']}.", field="admin", status_code=404)
        project = services.project_create(slug=data["slug"], name=data["name"], repo=data["repo"], admin=admin)
        return Response(ProjectSerializer(project).data, status=status.HTTP_201_CREATED)


class ProjectDetailView(ProjectAPIView):
    """Read (members), rename, retention and archive (admins); DELETE is added by
    ``sessions_app.api.projects``, which can reach the sessions' blobs."""

    required_roles = {**READ_ONLY, "PATCH": Role.ADMIN, "DELETE": Role.ADMIN}

    @extend_schema(responses=ProjectSerializer)
    def get(self, request: Request, project: str) -> Response:
        return Response(ProjectSerializer(self.project).data)

    @extend_schema(request=ProjectUpdateSerializer, responses=ProjectSerializer)
    def patch(self, request: Request, project: str) -> Response:
        serializer = ProjectUpdateSerializer(self.project, data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        changes = dict(serializer.validated_data)
        archived = changes.pop("archived", None)
        updated = services.project_update(project=self.project, **changes)
        if archived is not None:
            updated = services.project_archive(project=updated, archived=archived)
        return Response(ProjectSerializer(updated).data)


class MemberListView(ProjectAPIView):
    required_roles = ADMIN_ONLY

    @extend_schema(responses=MembershipSerializer(many=True))
    def get(self, request: Request, project: str) -> Response:
        return Response(MembershipSerializer(selectors.membership_list(project=self.project), many=True).data)

    @extend_schema(
        request=MembershipCreateSerializer,
        responses={202: InvitationSerializer},
        description=(
            "Adding someone by e-mail invites them: the answer is the same invitation whether or not the address "
            "has an account, and they join once they accept it with that address verified (docs/security.md)."
        ),
    )
    def post(self, request: Request, project: str) -> Response:
        _spend_invitation(request)
        data = _validated(MembershipCreateSerializer, request)
        invitation = services.invitation_create(
            project=self.project, email=data["email"], role=data["role"], invited_by=acting_user(request)
        )
        return Response(InvitationSerializer(invitation).data, status=status.HTTP_202_ACCEPTED)


class MemberDetailView(ProjectAPIView):
    required_roles = ADMIN_ONLY

    def _membership(self, member_id: int) -> Membership:
        return get_object_or_404(Membership.objects.select_related("user", "project"), pk=member_id)

    @extend_schema(responses=MembershipSerializer)
    def get(self, request: Request, project: str, member_id: int) -> Response:
        return Response(MembershipSerializer(self._membership(member_id)).data)

    @extend_schema(request=MembershipUpdateSerializer, responses=MembershipSerializer)
    def patch(self, request: Request, project: str, member_id: int) -> Response:
        membership = self._membership(member_id)  # a foreign or missing id is a 404 whatever the body says
        data = _validated(MembershipUpdateSerializer, request)
        membership = services.membership_change_role(membership=membership, role=data["role"])
        return Response(MembershipSerializer(membership).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, project: str, member_id: int) -> Response:
        services.membership_remove(membership=self._membership(member_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


def _spend_invitation(request: Request) -> None:
    limits.spend(scope="invite", rate_setting="SESSIONLEDGER_INVITE_RATE", idents=[f"user:{request.user.pk}"])


class InvitationListView(ProjectAPIView):
    required_roles = ADMIN_ONLY

    @extend_schema(responses=InvitationSerializer(many=True))
    def get(self, request: Request, project: str) -> Response:
        return Response(InvitationSerializer(selectors.invitation_list(project=self.project), many=True).data)

    @extend_schema(request=InvitationCreateSerializer, responses={201: InvitationSerializer})
    def post(self, request: Request, project: str) -> Response:
        _spend_invitation(request)
        data = _validated(InvitationCreateSerializer, request)
        invitation = services.invitation_create(
            project=self.project, email=data["email"], role=data["role"], invited_by=acting_user(request)
        )
        return Response(InvitationSerializer(invitation).data, status=status.HTTP_201_CREATED)


class InvitationDetailView(ProjectAPIView):
    required_roles = ADMIN_ONLY

    @extend_schema(responses=InvitationSerializer)
    def get(self, request: Request, project: str, invitation_id: int) -> Response:
        return Response(InvitationSerializer(get_object_or_404(Invitation, pk=invitation_id)).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, project: str, invitation_id: int) -> Response:
        services.invitation_revoke(invitation=get_object_or_404(Invitation, pk=invitation_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


def _token_project(request: Request, slug: str | None) -> Project | None:
    """The project a new token is restricted to; a restricted caller mints only restricted tokens."""
    caller = _token(request)
    mine = selectors.project_list(user=acting_user(request), token=caller)
    if not slug and (caller is None or caller.project_id is None):
        return None
    project = mine.filter(slug=slug).first() if slug else mine.first()
    if project is None:
        raise DomainError("not_found", "No such project.", field="project", status_code=404)
    return project


class TokenListView(APIView):
    permission_classes = [permissions.IsAuthenticated, TokenScopePermission]

    @extend_schema(responses=ApiTokenSerializer(many=True))
    def get(self, request: Request) -> Response:
        tokens = selectors.token_list(user=acting_user(request), token=_token(request))
        return Response(ApiTokenSerializer(tokens, many=True).data)

    @extend_schema(request=ApiTokenCreateSerializer, responses={201: ApiTokenCreatedSerializer})
    def post(self, request: Request) -> Response:
        limits.spend(
            scope="token-mint", rate_setting="SESSIONLEDGER_TOKEN_MINT_RATE", idents=[f"user:{request.user.pk}"]
        )
        data = _validated(ApiTokenCreateSerializer, request)
        token, secret = services.token_mint(
            user=acting_user(request),
            parent=_token(request),
            name=data["name"],
            project=_token_project(request, data.get("project")),
            scopes=data.get("scopes"),
            expires_days=data.get("expires_days"),
        )
        token.secret = secret  # type: ignore[attr-defined]
        return Response(ApiTokenCreatedSerializer(token).data, status=status.HTTP_201_CREATED)


class TokenDetailView(APIView):
    permission_classes = [permissions.IsAuthenticated, TokenScopePermission]

    @extend_schema(responses={204: None})
    def delete(self, request: Request, token_id: int) -> Response:
        tokens = selectors.token_list(user=acting_user(request), token=_token(request))
        services.token_revoke(token=get_object_or_404(tokens, pk=token_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


def _validated(serializer_class: type, request: Request) -> dict:
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


class DeviceStartRequest(serializers.Serializer):
    client_name = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=200, help_text="shown, as unverified, when approving"
    )
    project = serializers.SlugField(
        required=False, allow_blank=True, default="", max_length=64, help_text="restrict the token to this project"
    )
    scopes = serializers.ListField(
        child=serializers.ChoiceField(choices=Scope.choices),
        required=False,
        allow_empty=False,
        default=lambda: [scope.value for scope in services.DEFAULT_SCOPES],
    )


class DeviceTokenRequest(serializers.Serializer):
    device_code = serializers.CharField(max_length=100)


class DeviceStartView(APIView):
    """Start a device login; anonymous by design (the user approves in the browser by typing the code)."""

    authentication_classes: list = []
    permission_classes: list = []

    @extend_schema(
        request=DeviceStartRequest,
        responses={
            201: inline_serializer(
                "DeviceStartResponse",
                {
                    "device_code": serializers.CharField(),
                    "user_code": serializers.CharField(),
                    "verification_uri": serializers.URLField(),
                    "interval": serializers.IntegerField(),
                    "expires_in": serializers.IntegerField(),
                },
            )
        },
    )
    def post(self, request: Request) -> Response:
        address = limits.client_address(request)
        limits.spend(scope="device-start", rate_setting="SESSIONLEDGER_DEVICE_START_RATE", idents=[f"ip:{address}"])
        data = _validated(DeviceStartRequest, request)
        started = device.device_start(
            client_name=data["client_name"],
            project=data["project"],
            scopes=data["scopes"],
            requester=device.Requester(ip=address, user_agent=request.headers.get("User-Agent", "")),
        )
        return Response(
            {
                "device_code": started.device_code,
                "user_code": started.user_code,
                "verification_uri": f"{settings.SITE_URL}/device",
                "interval": device.POLL_INTERVAL_SECONDS,
                "expires_in": started.expires_in,
            },
            status=status.HTTP_201_CREATED,
        )


class DeviceTokenView(APIView):
    """Poll a device login: 428 ``authorization_pending`` until approved, then the token once."""

    authentication_classes: list = []
    permission_classes: list = []

    @extend_schema(
        request=DeviceTokenRequest,
        responses={200: inline_serializer("DeviceTokenResponse", {"token": serializers.CharField()})},
    )
    def post(self, request: Request) -> Response:
        address = limits.client_address(request)
        limits.spend(scope="device-poll", rate_setting="SESSIONLEDGER_DEVICE_POLL_RATE", idents=[f"ip:{address}"])
        code = _validated(DeviceTokenRequest, request)["device_code"]
        return Response({"token": device.device_poll(device_code=code)})
