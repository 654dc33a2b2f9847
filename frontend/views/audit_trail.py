"""``/p/{project}/audit``: the project's administrative events for its admins (docs/security.md
"Audit trail"), filtered by who, what and when, newest first, with CSV and JSONL downloads of the
filtered trail. Row-level security shows the page only this project's events."""

from __future__ import annotations

from functools import cached_property
from typing import Any

from django import forms
from django.http import HttpRequest, HttpResponseBase
from django.views.generic import TemplateView

from frontend.access import ProjectPageMixin
from frontend.forms import MomentField
from governance.audit import events_filtered, export_response, trail_read_record
from projects.audit_trail import KINDS
from projects.models import AuditEvent, Role

PAGE_SIZE = 200
FILTERS = ("actor", "kind", "since", "until")


class AuditFilterForm(forms.Form):
    actor = forms.CharField(required=False, max_length=254, label="Who", widget=forms.TextInput(attrs={"id": "au-who"}))
    kind = forms.ChoiceField(
        required=False,
        label="What",
        choices=[("", "Any event"), *((kind, kind) for kind in KINDS)],
        widget=forms.Select(attrs={"id": "au-kind"}),
    )
    since = MomentField(label="From")
    until = MomentField(end_of_day=True, label="To")

    def value(self, name: str) -> Any:
        return getattr(self, "cleaned_data", {}).get(name) or None

    def params(self) -> dict[str, str]:
        return {name: self.data.get(name, "") for name in FILTERS if self.value(name)}


class ProjectAuditView(ProjectPageMixin, TemplateView):
    required_roles = {"GET": Role.ADMIN, "HEAD": Role.ADMIN}
    nav = "audit"
    template_name = "frontend/audit_trail.html"

    @cached_property
    def form(self) -> AuditFilterForm:
        form = AuditFilterForm(self.request.GET)
        form.is_valid()
        return form

    def events(self) -> Any:
        form = self.form
        return events_filtered(
            AuditEvent.objects.filter(project_id=self.project.pk),
            actor=form.value("actor") or "",
            kind=form.value("kind") or "",
            since=form.value("since"),
            until=form.value("until"),
        )

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:  # type: ignore[override]
        fmt = request.GET.get("format", "")
        download = fmt if fmt in ("csv", "jsonl") else ""
        trail_read_record(request, project=self.project, filters=self.form.params(), fmt=download)
        if download:
            return export_response(self.events(), fmt, f"audit-{self.project.slug}")
        return super().get(request, *args, **kwargs)

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        events = list(self.events()[: PAGE_SIZE + 1])
        return super().get_context_data(
            form=self.form,
            filters=self.form.params(),
            events=events[:PAGE_SIZE],
            more=len(events) > PAGE_SIZE,
            **kwargs,
        )
