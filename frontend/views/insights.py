"""``/p/{project}/insights`` (charts for retrospectives) and ``/p/{project}/insights.csv?chart=…``.

Both read ``sessions_app.insights`` — the API's numbers — for a period and branch given in the
URL, so a retrospective's view can be shared as a link; the CSV is exactly the API's export.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.urls import reverse
from django.views import View
from django.views.generic import TemplateView

from frontend import attribution_charts, insight_charts
from frontend.access import PAGE_READ, ProjectPageMixin
from frontend.forms import MomentField
from sessions_app import insights, selectors
from sessions_app.api.insights import insights_csv

PRESETS = (("Last 4 weeks", 4), ("Last 12 weeks", 12), ("Last 12 months", 52))


class InsightsForm(forms.Form):
    since = MomentField(label="From")
    until = MomentField(end_of_day=True, label="To")
    branch = forms.CharField(required=False, max_length=255)

    def period(self) -> insights.Period:
        """The valid filters as a period (an invalid one is left out, and reported by the form)."""
        data = getattr(self, "cleaned_data", {})
        return insights.Period(since=data.get("since"), until=data.get("until"), branch=data.get("branch") or "")

    def date_value(self, name: str) -> str:
        moment = getattr(self, "cleaned_data", {}).get(name)
        return moment.astimezone(UTC).date().isoformat() if moment else ""

    def params(self) -> dict[str, str]:
        """The filters as typed, for links that keep them (CSV, presets)."""
        return {name: self.data[name] for name in ("since", "until", "branch") if self.data.get(name)}


def _describe(period: insights.Period) -> str:
    since = period.since.astimezone(UTC).date().isoformat() if period.since else ""
    until = period.until.astimezone(UTC).date().isoformat() if period.until else ""
    span = f"{since or 'the start'} to {until or 'today'}" if since or until else "All time"
    return f"{span} · {'branch ' + period.branch if period.branch else 'all branches'}"


def _api_url(slug: str, period: insights.Period) -> str:
    query = {"since": period.since, "until": period.until, "branch": period.branch}
    encoded = urlencode({k: v.isoformat() if isinstance(v, datetime) else v for k, v in query.items() if v})
    return f"/api/v1/projects/{slug}/insights" + (f"?{encoded}" if encoded else "")


class InsightsView(ProjectPageMixin, TemplateView):
    """Six aggregate queries whatever the project's size (see ``sessions_app.insights``)."""

    required_roles = PAGE_READ
    nav = "insights"
    template_name = "frontend/insights.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        form = InsightsForm(self.request.GET)
        form.is_valid()
        period = form.period()
        data = insights.insights(project=self.project, period=period)
        cards = [
            *insight_charts.cards(data, period, branch_url=lambda name: self._url({**form.params(), "branch": name})),
            attribution_charts.ai_share(data.get("ai_share_per_author_week") or [], period),
            attribution_charts.merged_pull_requests(
                data.get("merged_pull_requests") or [],
                lambda number: reverse("pull-request", kwargs={"project": self.project.slug, "number": number}),
            ),
        ]
        for card in cards:
            card.csv_url = self._url({**form.params(), "chart": card.name}, name="insights-csv")
        return super().get_context_data(
            form=form,
            since_value=form.date_value("since"),
            until_value=form.date_value("until"),
            period_text=_describe(period),
            summary=insight_charts.summary(data),
            cards=cards,
            presets=self._presets(form),
            branches=selectors.session_branches(project=self.project),
            api_url=_api_url(self.project.slug, period),
            **kwargs,
        )

    def _url(self, params: dict[str, str], name: str = "insights") -> str:
        url = reverse(name, kwargs={"project": self.project.slug})
        return f"{url}?{urlencode(params)}" if params else url

    def _presets(self, form: InsightsForm) -> list[tuple[str, str, bool]]:
        """(label, url, current): whole weeks back from this one, keeping the branch."""
        this_week = insight_charts.monday(datetime.now(UTC))
        kept = {"branch": form.data["branch"]} if form.data.get("branch") else {}
        chosen = (form.data.get("since", ""), form.data.get("until", ""))
        links = []
        for label, weeks in PRESETS:
            since = (this_week - timedelta(weeks=weeks - 1)).isoformat()
            links.append((label, self._url({"since": since, **kept}), chosen == (since, "")))
        links.append(("All time", self._url(kept), chosen == ("", "")))
        return links


class InsightsCsvView(ProjectPageMixin, View):
    """One chart's rows as CSV: the same writer, columns and numbers as the API's ``?export=``."""

    required_roles = PAGE_READ

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        name = request.GET.get("chart", "")
        if name not in insights.CHARTS:
            return HttpResponseBadRequest(f"Choose a chart: {', '.join(insights.CHARTS)}.", content_type="text/plain")
        form = InsightsForm(request.GET)
        if not form.is_valid():
            errors = "; ".join(f"{field}: {' '.join(str(m) for m in e)}" for field, e in form.errors.items())
            return HttpResponseBadRequest(errors, content_type="text/plain")
        rows = insights.chart(project=self.project, period=form.period(), name=name)
        return insights_csv(rows, f"{self.project.slug}-{name}")
