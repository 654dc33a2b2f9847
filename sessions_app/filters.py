from __future__ import annotations

from typing import Any

import django_filters
from django.db.models import Q, QuerySet

from sessions_app.models import Kind, Session, Status
from sessions_app.selectors import commit_prefix, session_files, session_search
from sessions_app.serializers import MAX_PATH_CHARS
from sessions_app.validation import MAX_QUERY_CHARS, author_value

MAX_FILE_FILTERS = 20


def _all_values(data: Any, name: str, value: str) -> list[str]:
    """Every ``name=`` of the query string (django-filter hands the method the last one only)."""
    values = data.getlist(name) if hasattr(data, "getlist") else [value]
    return [str(item).strip()[:MAX_PATH_CHARS] for item in values]


class SessionFilter(django_filters.FilterSet):
    """The list filters of docs/design.md §4; the page's filter form uses the same names."""

    branch = django_filters.CharFilter(field_name="feature_branch")
    author = django_filters.CharFilter(method="filter_author", help_text="e-mail or user id", validators=[author_value])
    commit = django_filters.CharFilter(method="filter_commit", help_text="7 to 40 hex characters (prefix)")
    task = django_filters.CharFilter(field_name="task_id")
    kind = django_filters.ChoiceFilter(choices=Kind.choices)
    status = django_filters.ChoiceFilter(choices=Status.choices)
    since = django_filters.IsoDateTimeFilter(
        field_name="captured_at", lookup_expr="gte", help_text="captured at or after (the session's date)"
    )
    until = django_filters.IsoDateTimeFilter(
        field_name="captured_at", lookup_expr="lte", help_text="captured at or before (the session's date)"
    )
    files = django_filters.CharFilter(
        method="filter_files",
        help_text="a path the session touched, exactly as listed in files_touched; repeat for any of several",
        max_length=MAX_PATH_CHARS,
    )
    q = django_filters.CharFilter(
        method="filter_text", help_text="full text over prompts, replies, commit messages", max_length=MAX_QUERY_CHARS
    )

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

    def filter_text(self, queryset: QuerySet[Session], name: str, value: str) -> QuerySet[Session]:
        return session_search(queryset, value) if value.strip() else queryset
