"""The pages' query-string filters, named like the API's (so a page URL and an API URL agree).

Filters are GET forms: everything a reader narrows down to is in the URL and can be shared.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from django import forms
from django.utils.dateparse import parse_date, parse_datetime

from projects.models import Role
from sessions_app.models import Kind, Status
from sessions_app.selectors import COMMIT_PREFIX

ROLE_CHOICES = [
    ("user", "User"),
    ("assistant", "Assistant"),
    ("tool", "Tool"),
    ("thinking", "Thinking"),
    ("system", "System"),
]
ALL_ROLES = [value for value, _ in ROLE_CHOICES]


def parse_moment(value: str, *, end_of_day: bool = False) -> datetime | None:
    """ISO 8601 date or date-time; no zone means UTC. A bare date ends at midnight when ``end_of_day``."""
    value = (value or "").strip().replace(" ", "T")
    if not value:
        return None
    try:
        day = parse_date(value) if "T" not in value else None
        moment = parse_datetime(value.replace("Z", "+00:00")) if day is None else None
    except ValueError:  # well-formed but impossible, e.g. month 13
        day = moment = None
    if day is not None:
        moment = datetime.combine(_end(day) if end_of_day else day, time.min)
        moment -= timedelta(microseconds=1) if end_of_day else timedelta(0)
    if moment is None:
        raise forms.ValidationError("Use a date (2026-02-12) or a date and time (2026-02-12T10:30).")
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _end(day: date) -> date:
    return day + timedelta(days=1)


class MomentField(forms.CharField):
    def __init__(self, *, end_of_day: bool = False, **kwargs: Any) -> None:
        self.end_of_day = end_of_day
        super().__init__(required=False, **kwargs)

    def to_python(self, value: Any) -> datetime | None:  # type: ignore[override]
        return parse_moment(super().to_python(value), end_of_day=self.end_of_day)


class SessionListForm(forms.Form):
    """``/p/{project}/``: the API's session filters, plus the keyset cursor."""

    q = forms.CharField(required=False, max_length=200, label="Search")
    branch = forms.CharField(required=False, max_length=255)
    author = forms.ChoiceField(required=False)
    commit = forms.CharField(required=False, max_length=40)
    task = forms.CharField(required=False, max_length=100)
    files = forms.CharField(required=False, max_length=1024, label="File")
    kind = forms.ChoiceField(required=False, choices=[("", "Any kind"), *Kind.choices])
    status = forms.ChoiceField(required=False, choices=[("", "Any status"), *Status.choices])
    since = MomentField(label="From")
    until = MomentField(end_of_day=True, label="To")
    cursor = forms.CharField(required=False, max_length=200)
    limit = forms.IntegerField(required=False, min_value=1, max_value=200)

    def __init__(self, data: Any, *, authors: list[str]) -> None:
        super().__init__(data)
        given = (data.get("author") or "").strip()
        extra = [(given, given)] if given and given not in authors else []
        self.fields["author"].choices = [("", "Anyone"), *((a, a) for a in authors), *extra]

    def clean_commit(self) -> str:
        value = self.cleaned_data["commit"].strip().lower()
        if value and not COMMIT_PREFIX.match(value):
            raise forms.ValidationError("A commit is 7 to 40 hexadecimal characters.")
        return value

    def api_filters(self) -> dict[str, str]:
        """The valid filters as the API's ``SessionFilter`` reads them (invalid ones are dropped)."""
        data = getattr(self, "cleaned_data", {})
        out = {
            name: str(data[name]).strip()
            for name in ("branch", "author", "commit", "task", "files", "kind", "status")
            if data.get(name)
        }
        out.update({name: data[name].isoformat() for name in ("since", "until") if data.get(name)})
        return out

    def date_value(self, name: str) -> str:
        moment = getattr(self, "cleaned_data", {}).get(name)
        return moment.date().isoformat() if moment else ""

    @property
    def active(self) -> bool:
        return any(self.data.get(name) for name in self.fields if name not in ("cursor", "limit"))


class MessageFilterForm(forms.Form):
    """The session page's per-message filters (role, time range, text) and page number."""

    role = forms.MultipleChoiceField(required=False, choices=ROLE_CHOICES)
    since = MomentField()
    until = MomentField()
    q = forms.CharField(required=False, max_length=200)
    page = forms.IntegerField(required=False, min_value=1)
    at = forms.RegexField(required=False, regex=r"^[0-9A-Za-z-]{1,64}\Z")  # a message's uuid or index

    def value(self, name: str) -> Any:
        return getattr(self, "cleaned_data", {}).get(name)

    @property
    def roles(self) -> list[str]:
        return self.value("role") or ALL_ROLES

    @property
    def narrowed(self) -> bool:
        return set(self.roles) != set(ALL_ROLES) or any(self.value(n) for n in ("since", "until", "q"))

    @property
    def since_value(self) -> str:
        return self.local_value("since")

    @property
    def until_value(self) -> str:
        return self.local_value("until")

    def local_value(self, name: str) -> str:
        """A ``datetime-local`` input value (UTC) for ``since``/``until``."""
        moment = self.value(name)
        return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S") if moment else ""


class AccessLogForm(forms.Form):
    """The access log's filters: one reader (by email), a date range (days, UTC)."""

    who = forms.ChoiceField(required=False, label="Reader", widget=forms.Select(attrs={"id": "a-who"}))
    since = MomentField(label="From")
    until = MomentField(end_of_day=True, label="To")

    def __init__(self, data: Any, *, readers: list[str]) -> None:
        super().__init__(data)
        self.fields["who"].choices = [("", "Anyone"), *((email, email) for email in readers)]

    def value(self, name: str) -> Any:
        return getattr(self, "cleaned_data", {}).get(name)

    @property
    def active(self) -> bool:
        return any(self.value(name) for name in ("who", "since", "until"))

    def params(self) -> dict[str, str]:
        """The filters as the page links keep them (the cursor is added per link)."""
        return {name: self.data.get(name, "") for name in ("who", "since", "until") if self.value(name)}


class InvitationForm(forms.Form):
    email = forms.EmailField()
    role = forms.ChoiceField(choices=Role.choices, initial=Role.MEMBER)


class TokenForm(forms.Form):
    name = forms.CharField(max_length=100)
    scopes = forms.MultipleChoiceField(
        choices=[("read", "read"), ("write", "write")], initial=["read", "write"], widget=forms.CheckboxSelectMultiple
    )
    expires_days = forms.IntegerField(required=False, min_value=1, max_value=3650, label="Expires after (days)")


class RetentionForm(forms.Form):
    retention_days = forms.IntegerField(required=False, min_value=1, max_value=36500, label="Keep sessions for (days)")
