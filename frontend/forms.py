"""The pages' query-string filters, named like the API's (so a page URL and an API URL agree).

Filters are GET forms: everything a reader narrows down to is in the URL and can be shared.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, cast

from django import forms
from django.utils.dateparse import parse_date, parse_datetime

from frontend.format import query_string
from projects.models import Role
from sessionledger.core.formats.base import ROLES
from sessionledger.core.listfilters import FILTER_NAMES, SESSION_FILTERS
from sessions_app.filters import PR_NUMBER, SessionFilter
from sessions_app.models import Kind, Status
from sessions_app.selectors import COMMIT_PREFIX

# The message roles (declared once, sessionledger.core.formats.base.ROLES) plus "thinking", which the
# page offers as a role of its own (it is role assistant, kind thinking).
ROLE_CHOICES = [(role, role.capitalize()) for role in ROLES]
ROLE_CHOICES.insert(ROLE_CHOICES.index(("system", "System")), ("thinking", "Thinking"))
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
        return parse_moment(super().to_python(value) or "", end_of_day=self.end_of_day)


# How the list page shows some filters (the fields themselves come from the shared declaration, see
# SessionListForm); a filter without an entry here is a plain text box.
FILTER_LOOKS: dict[str, dict[str, str]] = {
    "q": {"type": "search", "placeholder": "Words from prompts, replies, commands, outputs, commit messages"},
    "branch": {"list": "branch-names"},
    "commit": {"class": "mono", "size": "12", "placeholder": "abc1234"},
    "task": {"size": "10", "placeholder": "SL-42"},
    "files": {
        "class": "mono",
        "size": "16",
        "placeholder": "src/app.py",
        "title": "a path exactly as the session lists it",
    },
    "since": {"type": "date"},
    "until": {"type": "date"},
    "pr": {"size": "6", "inputmode": "numeric", "placeholder": "42"},
}
FILTER_LABELS = {"q": "Search", "files": "File", "since": "From", "until": "To", "pr": "Pull request"}


def _filter_field(name: str) -> forms.Field:
    """The list page's field for one of the API's list filters (sessionledger.core.listfilters)."""
    if name == "author":
        return forms.ChoiceField(required=False)
    if name in ("kind", "status"):
        choices = Kind.choices if name == "kind" else Status.choices
        return forms.ChoiceField(required=False, choices=[("", f"Any {name}"), *choices])
    if name in ("since", "until"):
        return MomentField(end_of_day=name == "until")
    api = SessionFilter.base_filters[name]  # its validation and length limit, as the API applies them
    return forms.CharField(required=False, max_length=api.extra.get("max_length") or 255)


@dataclass(frozen=True)
class FilterChip:
    """An active filter as the list shows it: its label and value, and the URL without it."""

    label: str
    value: str
    remove_url: str


class SessionListForm(forms.Form):
    """``/p/{project}/``: the API's session filters (declared once, ``sessionledger.core.listfilters``), and the
    keyset cursor. A filter added there appears here as a text box with no change to this page."""

    cursor = forms.CharField(required=False, max_length=200)
    limit = forms.IntegerField(required=False, min_value=1, max_value=200)

    def __init__(self, data: Any, *, authors: list[str]) -> None:
        super().__init__(data, auto_id="f-%s")
        for spec in SESSION_FILTERS:
            field = _filter_field(spec.name)
            field.label = FILTER_LABELS.get(spec.name, spec.name.capitalize())
            field.help_text = spec.help
            field.widget.attrs.update({"autocomplete": "off", **FILTER_LOOKS.get(spec.name, {})})
            if isinstance(field.widget, forms.TextInput) and "type" in FILTER_LOOKS.get(spec.name, {}):
                field.widget.input_type = FILTER_LOOKS[spec.name]["type"]
            self.fields[spec.name] = field
        given = (data.get("author") or "").strip()
        extra = [(given, given)] if given and given not in authors else []
        cast(forms.ChoiceField, self.fields["author"]).choices = [("", "Anyone"), *((a, a) for a in authors), *extra]

    def clean_commit(self) -> str:
        value = self.cleaned_data["commit"].strip().lower()
        if value and not COMMIT_PREFIX.match(value):
            raise forms.ValidationError("A commit is 7 to 40 hexadecimal characters.")
        return value

    def clean_pr(self) -> str:
        value = str(self.cleaned_data["pr"]).strip().lstrip("#")
        if value:
            PR_NUMBER(value)  # the API's check and message
        return value

    @property
    def filter_fields(self) -> list[forms.BoundField]:
        """The filters in their declared order; a field with an error points at its message."""
        bound = [self[name] for name in FILTER_NAMES]
        for field in bound:
            if field.errors:
                field.field.widget.attrs["aria-describedby"] = f"e-{field.name}"
        return bound

    def api_filters(self) -> dict[str, str]:
        """The valid filters as the API's ``SessionFilter`` reads them (invalid ones are dropped)."""
        data = getattr(self, "cleaned_data", {})
        out = {}
        for name in FILTER_NAMES:
            value = data.get(name)
            if isinstance(value, datetime):
                out[name] = value.isoformat()
            elif value and name != "q":  # the page searches with its snippets (frontend.views.sessions)
                out[name] = str(value).strip()
        return out

    def date_value(self, name: str) -> str:
        moment = getattr(self, "cleaned_data", {}).get(name)
        return moment.date().isoformat() if moment else ""

    @property
    def active(self) -> bool:
        return any(self.data.get(name) for name in self.fields if name not in ("cursor", "limit"))

    def chips(self) -> list[FilterChip]:
        """Each filter in the URL, removable on its own (the list starts again from its newest)."""
        found = []
        for name in FILTER_NAMES:
            value = str(self.data.get(name) or "").strip()
            if value:
                label = str(self.fields[name].label)
                found.append(FilterChip(label, value, query_string(self.data, **{name: None, "cursor": None})))
        return found


class MessageFilterForm(forms.Form):
    """The session page's per-message filters (role, time range, text) and page number."""

    role = forms.MultipleChoiceField(required=False, choices=ROLE_CHOICES)
    since = MomentField()
    until = MomentField()
    q = forms.CharField(required=False, max_length=200)
    page = forms.IntegerField(required=False, min_value=1)
    through = forms.IntegerField(required=False, min_value=1)  # later pages in one response (docs/ui.md)
    at = forms.RegexField(required=False, regex=r"^[0-9A-Za-z-]{1,64}\Z")  # a message's uuid or index
    also = forms.BooleanField(required=False)  # with `at`: the permalink found the message in several sessions

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
        cast(forms.ChoiceField, self.fields["who"]).choices = [("", "Anyone"), *((email, email) for email in readers)]

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
