"""Who may touch a project: membership lookup and the base API view.

Roles required per HTTP method are class attributes (data, not ``if``s in handlers). A user who
is not a member — or whose token is restricted to another project — gets 404, exactly like a
project that does not exist.
"""

from __future__ import annotations

from typing import Any, ClassVar, cast

from django.db import connection
from django.db.models import Model
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


def _columns(model: type[Model], alias: str) -> str:
    return ", ".join(f'{alias}."{field.column}"' for field in model._meta.concrete_fields)


def _instance(model: type[Model], values: tuple[Any, ...]) -> Model | None:
    """A model instance from one row's slice of its columns (None for the NULLs of an outer join)."""
    fields = model._meta.concrete_fields
    if values[fields.index(model._meta.pk)] is None:
        return None
    converted = [
        field.from_db_value(value, None, connection) if hasattr(field, "from_db_value") else value
        for field, value in zip(fields, values, strict=True)
    ]
    return model.from_db(connection.alias, [field.attname for field in fields], converted)


_MODELS = ((Project, "p"), (ApiToken, "t"), (User, "u"), (Membership, "m"))
_ACCESS_SQL = f"""
    SELECT {", ".join(_columns(model, alias) for model, alias in _MODELS)}
    FROM (SELECT 1) AS one
    LEFT JOIN {Project._meta.db_table} p ON p.slug = %s
    LEFT JOIN {ApiToken._meta.db_table} t ON t.secret_hash = %s
    LEFT JOIN {User._meta.db_table} u ON u.id = t.user_id
    LEFT JOIN {Membership._meta.db_table} m ON m.project_id = p.id AND m.user_id = u.id"""


def project_and_caller(slug: str, secret_hash: str) -> tuple[Project | None, ApiToken | None, Membership | None]:
    """The project named ``slug``, the API token whose secret hashes to ``secret_hash`` (its user joined)
    and that user's membership in the project — one statement instead of three, each part None when absent.

    Read as the connecting role before the project's scope opens, like the project alone would be: the
    membership is joined on the project's id, so it can only be this project's. Nothing is decided here:
    authentication still checks the token (revoked, expired, user disabled) and ``initial`` the membership,
    the token's project restriction, the role and the scopes."""
    with connection.cursor() as cursor:
        cursor.execute(_ACCESS_SQL, [slug, secret_hash])
        row = cursor.fetchone()
    parts, start = [], 0
    for model, _alias in _MODELS:
        width = len(model._meta.concrete_fields)
        parts.append(_instance(model, row[start : start + width]))
        start += width
    project, token, user, membership = cast(
        tuple[Project | None, ApiToken | None, User | None, Membership | None], tuple(parts)
    )
    if token is not None and user is not None:
        token.user = user
    if membership is not None and project is not None and user is not None:
        membership.project, membership.user = project, user
    return project, token, membership


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

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        slug = kwargs.get("project", "")
        secret = bearer_secret(request)
        self.prefetched_membership: Membership | None = None
        if secret:
            project, token, self.prefetched_membership = project_and_caller(slug, hash_secret(secret))
            setattr(request, PREFETCHED, (hash_secret(secret), token))
        else:
            project = Project.objects.filter(slug=slug).first()
        self.project = project  # type: ignore[assignment]
        if project is None:
            return super().dispatch(request, *args, **kwargs)
        with project_scope(project):
            return super().dispatch(request, *args, **kwargs)

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        token = request.auth if isinstance(request.auth, ApiToken) else None
        membership = self._caller_membership(request.user, token)
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

    def _caller_membership(self, user: Any, token: ApiToken | None) -> Membership | None:
        prefetched = self.prefetched_membership
        if prefetched is None or token is None or prefetched.user_id != getattr(user, "pk", None):
            return membership_for(project=self.project, user=user, token=token)
        if token.project_id is not None and token.project_id != self.project.pk:
            return None  # a token restricted to another project (membership_for's rule)
        return prefetched
