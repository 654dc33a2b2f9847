"""Who may touch a project: membership lookup and the base API view.

Roles required per HTTP method are class attributes (data, not ``if``s in handlers). A user who
is not a member — or whose token is restricted to another project — gets 404, exactly like a
project that does not exist.
"""

from __future__ import annotations

from typing import Any, ClassVar

from django.db.models import FilteredRelation, Q
from django.http import HttpRequest, HttpResponseBase
from rest_framework import exceptions, permissions
from rest_framework.request import Request
from rest_framework.views import APIView

from projects.auth import PREFETCHED, bearer_secret
from projects.models import ApiToken, Membership, Project, Role, Scope, User, role_at_least
from projects.scoping import project_scope, unscoped
from projects.tokens import hash_secret

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

READ_MEMBER_WRITE: dict[str, str] = {
    "GET": Role.VIEWER,
    "HEAD": Role.VIEWER,
    "OPTIONS": Role.VIEWER,
    "POST": Role.MEMBER,
    "PUT": Role.MEMBER,
    "PATCH": Role.MEMBER,
    "DELETE": Role.ADMIN,
}
ADMIN_ONLY: dict[str, str] = dict.fromkeys(READ_MEMBER_WRITE, Role.ADMIN)
READ_ONLY: dict[str, str] = {m: Role.VIEWER for m in SAFE_METHODS}


def acting_user(request: HttpRequest | Request) -> User:
    """The signed-in user of a request that passed authentication.

    Views reach this only behind a login or token check; an anonymous request here is a wiring
    error, refused rather than acted on.
    """
    user = request.user
    if not isinstance(user, User):
        raise exceptions.NotAuthenticated()
    return user


def membership_for(*, project: Project | None, user: Any, token: ApiToken | None = None) -> Membership | None:
    """The user's membership in the project, or None when they must not see it at all."""
    if project is None or not getattr(user, "is_authenticated", False):
        return None
    if token is not None and token.project_id is not None and token.project_id != project.pk:
        return None
    with unscoped():
        return Membership.objects.filter(project=project, user=user).first()


def caller_by_token(slug: str, secret_hash: str) -> Membership | None:
    """The membership in project ``slug`` of the user whose API token hashes to ``secret_hash``, with its
    project, user and that token (``membership.token``): one statement for what every request with a token
    reads first, where three would do it one by one.

    None when any part is missing; the view then reads them one by one, so every refusal keeps its own
    answer. Nothing is decided here: authentication still checks the token (revoked, expired, user
    disabled) and ``initial`` the token's project restriction, the role and the scopes. Read before the
    project's scope opens, like the project alone: the membership is this project's by the join."""
    with unscoped():
        caller: Membership | None = (
            Membership.objects.annotate(
                token=FilteredRelation("user__api_tokens", condition=Q(user__api_tokens__secret_hash=secret_hash))
            )
            .filter(project__slug=slug, token__isnull=False)
            .select_related("project", "user", "token")
            .order_by()
            .first()
        )
    return caller


def token_allows(token: ApiToken | None, method: str) -> bool:
    if token is None:
        return True
    needed = Scope.READ if method in SAFE_METHODS else Scope.WRITE
    return needed in (token.scopes or [])


class TokenScopePermission(permissions.BasePermission):
    """Outside a project (e.g. ``/api/v1/tokens``) a read-only token still must not write."""

    message = "This token lacks the scope for this request."

    def has_permission(self, request: Request, view: APIView) -> bool:
        token = request.auth if isinstance(request.auth, ApiToken) else None
        return token_allows(token, request.method or "GET")


class ProjectAPIView(APIView):
    """Base of every ``/api/v1/projects/{project}/…`` view: resolves, checks, scopes."""

    required_roles: ClassVar[dict[str, str]] = READ_MEMBER_WRITE
    # Methods that only read although they are not GET (a question too large for a query string,
    # e.g. a commit's line hashes): a read-only token may use them.
    read_methods: ClassVar[frozenset[str]] = frozenset()
    project: Project
    membership: Membership
    caller: Membership | None  # read with the project when the request has a token (caller_by_token)

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        slug = kwargs.get("project", "")
        secret = bearer_secret(request)
        self.caller = caller_by_token(slug, hash_secret(secret)) if secret else None
        if self.caller is not None:
            token = self.caller.token  # type: ignore[attr-defined]  # the FilteredRelation above
            token.user = self.caller.user
            setattr(request, PREFETCHED, token)
            self.project = self.caller.project
        else:
            self.project = Project.objects.filter(slug=slug).first()  # type: ignore[assignment]
        if self.project is None:
            return super().dispatch(request, *args, **kwargs)
        with project_scope(self.project):
            return super().dispatch(request, *args, **kwargs)

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        token = request.auth if isinstance(request.auth, ApiToken) else None
        if self.caller is not None and token is self.caller.token:  # type: ignore[attr-defined]
            restricted = token.project_id is not None and token.project_id != self.project.pk
            membership: Membership | None = None if restricted else self.caller
        else:
            membership = membership_for(project=self.project, user=request.user, token=token)
        if membership is None:
            raise exceptions.NotFound("No such project.")
        self.membership = membership
        method = request.method or "GET"
        if not hasattr(self, method.lower()):
            raise exceptions.MethodNotAllowed(method)
        required = self.required_roles.get(method)
        if required is None or not role_at_least(membership.role, required):
            raise exceptions.PermissionDenied(f"This needs the {required or 'admin'} role in this project.")
        if not token_allows(token, "GET" if method in self.read_methods else method):
            raise exceptions.PermissionDenied("This token lacks the scope for this request.")


class IsStaff(permissions.BasePermission):
    """Deployment staff only, with a token not restricted to one project; anyone else gets 404."""

    def has_permission(self, request: Request, view: APIView) -> bool:
        token = request.auth if isinstance(request.auth, ApiToken) else None
        if not getattr(request.user, "is_staff", False) or (token is not None and token.project_id is not None):
            raise exceptions.NotFound()
        return True


class StaffAPIView(APIView):
    permission_classes = [permissions.IsAuthenticated, IsStaff, TokenScopePermission]

    def target(self, user_id: int) -> User:
        with unscoped():
            user = User.objects.filter(pk=user_id).first()
        if user is None:
            raise exceptions.NotFound("No such user.")
        return user
