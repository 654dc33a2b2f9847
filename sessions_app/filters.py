from __future__ import annotations

from collections.abc import Callable
from typing import Any

import django_filters
from django.core.exceptions import ImproperlyConfigured
from django.core.validators import RegexValidator
from django.db.models import Q, QuerySet

from sessionledger.core.listfilters import FILTER_NAMES, HELP
from sessions_app.models import Kind, Session, Status
from sessions_app.selectors import commit_prefix, session_files, session_search
from sessions_app.serializers import MAX_PATH_CHARS
from sessions_app.validation import MAX_QUERY_CHARS, author_value

MAX_FILE_FILTERS = 20
PR_NUMBER = RegexValidator(r"^[1-9][0-9]{0,8}\Z", "A pull request number is a positive whole number.")

PullRequestNarrowing = Callable[[QuerySet[Session], int], QuerySet[Session]]
# Pull requests belong to ``integrations``, a layer above this one: it installs how a PR number narrows
# the sessions when its app loads (``install_pull_request_filter``), so this module never imports it.
_pull_request_narrowing: list[PullRequestNarrowing] = []


def install_pull_request_filter(narrow: PullRequestNarrowing) -> None:
    _pull_request_narrowing[:] = [narrow]


def _all_values(data: Any, name: str, value: str) -> list[str]:
    """Every ``name=`` of the query string (django-filter hands the method the last one only)."""
    values = data.getlist(name) if hasattr(data, "getlist") else [value]
    return [str(item).strip()[:MAX_PATH_CHARS] for item in values]


class SessionFilter(django_filters.FilterSet):
    """How each list filter of ``sessionledger.core.listfilters`` (names and help, declared once) narrows the
    sessions; the list page's form and ``sessionledger list`` are built from the same declaration."""

    branch = django_filters.CharFilter(field_name="feature_branch")
    author = django_filters.CharFilter(method="filter_author", validators=[author_value])
    commit = django_filters.CharFilter(method="filter_commit")
    task = django_filters.CharFilter(field_name="task_id")
    kind = django_filters.ChoiceFilter(choices=Kind.choices)
    status = django_filters.ChoiceFilter(choices=Status.choices)
    since = django_filters.IsoDateTimeFilter(field_name="captured_at", lookup_expr="gte")
    until = django_filters.IsoDateTimeFilter(field_name="captured_at", lookup_expr="lte")
    files = django_filters.CharFilter(method="filter_files", max_length=MAX_PATH_CHARS)
    q = django_filters.CharFilter(method="filter_text", max_length=MAX_QUERY_CHARS)
    pr = django_filters.CharFilter(method="filter_pr", validators=[PR_NUMBER], max_length=9)

    class Meta:
        model = Session
        fields: list[str] = []

    def filter_author(self, queryset: QuerySet[Session], name: str, value: str) -> QuerySet[Session]:
        return queryset.filter(Q(author_id=int(value)) if value.isdigit() else Q(author__email__iexact=value))

    def filter_commit(self, queryset: QuerySet[Session], name: str, value: str) -> QuerySet[Session]:
        return queryset.filter(commit_hash__hexprefix=commit_prefix(value))

    def filter_files(self, queryset: QuerySet[Session], name: str, value: str) -> QuerySet[Session]:
        paths = [path for path in _all_values(self.data, name, value)[:MAX_FILE_FILTERS] if path]
        return session_files(queryset, paths) if paths else queryset

    def filter_pr(self, queryset: QuerySet[Session], name: str, value: str) -> QuerySet[Session]:
        if not _pull_request_narrowing:  # no forge integration loaded: no session is behind a PR
            return queryset.none()
        return _pull_request_narrowing[0](queryset, int(value))

    def filter_text(self, queryset: QuerySet[Session], name: str, value: str) -> QuerySet[Session]:
        return session_search(queryset, value) if value.strip() else queryset


def _declared_once() -> None:
    """A filter declared but not implemented here (or the reverse) is an error at start-up, not a
    parameter the API silently ignores."""
    declared, implemented = set(FILTER_NAMES), set(SessionFilter.base_filters)
    if declared != implemented:
        raise ImproperlyConfigured(
            "list filters declared (sessionledger.core.listfilters) but not implemented: "
            f"{sorted(declared - implemented)}"
            f", implemented but not declared: {sorted(implemented - declared)}"
        )
    for name, spec in HELP.items():
        SessionFilter.base_filters[name].extra["help_text"] = spec  # the API documentation says what the CLI says


_declared_once()
