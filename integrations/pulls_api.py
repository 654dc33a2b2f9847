"""``/api/v1/projects/{project}/pulls`` and ``…/pulls/{number}``: a project's pull requests, and one
with its commits, conversations, AI share and cost — what the PR page shows, for ``sessionledger pr``
(docs/api.md). Read like every project endpoint: members and their tokens, read-only ones included."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from django.conf import settings
from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from integrations.models import PullRequest
from integrations.selectors import PullRequestConversation, pull_request_get, pull_request_review, pull_requests_list
from projects.access import READ_ONLY, ProjectAPIView
from sessions_app.api.common import result_list
from sessions_app.serializers import SessionSerializer, session_representation, session_row
from sessions_app.throttles import QueryThrottle

MAX_LISTED = 50


class PullRequestSerializer(serializers.Serializer[Any]):
    number = serializers.IntegerField()
    title = serializers.CharField()
    author = serializers.CharField()
    state = serializers.ChoiceField(PullRequest.State.choices)
    merged = serializers.BooleanField()
    repository = serializers.CharField(help_text="owner/name on the forge")
    base_ref = serializers.CharField()
    head_ref = serializers.CharField()
    head_sha = serializers.CharField()
    updated_at = serializers.DateTimeField()
    url = serializers.URLField()
    web_url = serializers.URLField(help_text="the PR page")


class ModelLinesSerializer(serializers.Serializer[Any]):
    agent = serializers.CharField()
    model = serializers.CharField()
    lines = serializers.IntegerField()


class AiShareSerializer(serializers.Serializer[Any]):
    added_lines = serializers.IntegerField()
    ai_lines = serializers.IntegerField()
    human_lines = serializers.IntegerField()
    unknown_lines = serializers.IntegerField(help_text="neither: mixed or unknown contributors, unattributed commits")
    ai_share = serializers.FloatField(help_text="ai_lines / added_lines, 0 when nothing was added")
    records = serializers.IntegerField(help_text="attribution records summed")
    unattributed_commits = serializers.IntegerField(help_text="commits with sessions but no record")
    commits_without_session = serializers.IntegerField()
    by_model = ModelLinesSerializer(many=True)


class UsageSerializer(serializers.Serializer[Any]):
    input_tokens = serializers.IntegerField()
    output_tokens = serializers.IntegerField()
    cache_write_tokens = serializers.IntegerField()
    cache_read_tokens = serializers.IntegerField()
    cost_usd = serializers.FloatField(help_text="estimated from the price table")
    unpriced_tokens = serializers.IntegerField(help_text="of models the price table lacks (no cost counted)")


class PullRequestCommitSerializer(serializers.Serializer[Any]):
    sha = serializers.CharField()
    still_in_pr = serializers.BooleanField(help_text="false: a force push removed it")
    sessions = serializers.ListField(child=serializers.UUIDField())


class CommitRefSerializer(serializers.Serializer[Any]):
    sha = serializers.CharField()
    still_in_pr = serializers.BooleanField()


class ConversationSerializer(serializers.Serializer[Any]):
    agent_session_id = serializers.CharField(help_text="empty for a session recording none")
    title = serializers.CharField()
    web_url = serializers.URLField(help_text="the whole conversation (or the session)")
    commits = CommitRefSerializer(many=True)
    sessions = SessionSerializer(many=True)


class PullRequestDetailSerializer(PullRequestSerializer):
    ai_share = AiShareSerializer()
    usage = UsageSerializer()
    commits = PullRequestCommitSerializer(many=True)
    conversations = ConversationSerializer(many=True)


def summary(pr: PullRequest) -> dict[str, Any]:
    slug, site = pr.project.slug, settings.SITE_URL
    return {
        "number": pr.number,
        "title": pr.title,
        "author": pr.author,
        "state": pr.state,
        "merged": pr.merged,
        "repository": pr.binding.full_name,
        "base_ref": pr.base_ref,
        "head_ref": pr.head_ref,
        "head_sha": pr.head_sha,
        "updated_at": serializers.DateTimeField().to_representation(pr.updated_at),
        "url": f"{site}/api/v1/projects/{slug}/pulls/{pr.number}",
        "web_url": f"{site}/p/{slug}/pr/{pr.number}",
    }


def _conversation(found: PullRequestConversation, slug: str) -> dict[str, Any]:
    first = found.first
    page = f"/s/{first.pk}/conversation" if found.agent_session_id else f"/s/{first.pk}"
    return {
        "agent_session_id": found.agent_session_id,
        "title": first.headline,
        "web_url": f"{settings.SITE_URL}/p/{slug}{page}",
        "commits": [{"sha": sha, "still_in_pr": held} for sha, held in found.commits],
        "sessions": [session_representation(session_row(s), slug) for s in found.sessions],
    }


class ListQuery(serializers.Serializer[Any]):
    head = serializers.CharField(required=False, max_length=255, help_text="the PR's head branch, exactly")
    state = serializers.ChoiceField(PullRequest.State.choices, required=False)


class PullRequestsView(ProjectAPIView):
    required_roles = READ_ONLY
    throttle_classes = [QueryThrottle]

    @extend_schema(
        parameters=[ListQuery],
        responses={200: result_list("PullRequests", PullRequestSerializer(many=True))},
    )
    def get(self, request: Request, project: str) -> Response:
        """The project's pull requests (at most 50), open ones first, then the most recently updated;
        ``head`` finds a branch's (``sessionledger pr`` asks for the current branch's)."""
        query = ListQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        found = pull_requests_list(project=self.project, **query.validated_data)[:MAX_LISTED]
        return Response({"results": [summary(pr) for pr in found]})


class PullRequestDetailView(ProjectAPIView):
    required_roles = READ_ONLY
    throttle_classes = [QueryThrottle]

    @extend_schema(
        parameters=[OpenApiParameter("number", int, OpenApiParameter.PATH)],
        responses={200: PullRequestDetailSerializer},
    )
    def get(self, request: Request, project: str, number: int) -> Response:
        """One pull request with its commits (those a force push removed marked), the conversations
        behind them (one per agent session), the AI share of its added lines and its sessions' cost."""
        pr = pull_request_get(project=self.project, number=number)
        if pr is None:
            raise Http404
        review = pull_request_review(pr=pr)
        lines, usage = review.lines, review.usage
        tally = lines.summary.lines
        data = summary(pr)
        data["ai_share"] = {
            "added_lines": tally.added,
            "ai_lines": tally.ai,
            "human_lines": tally.human,
            "unknown_lines": tally.unknown,
            "ai_share": round(tally.ai / tally.added, 4) if tally.added else 0.0,
            "records": lines.summary.records,
            "unattributed_commits": lines.unattributed_commits,
            "commits_without_session": lines.commits_without_session,
            "by_model": [{"agent": a, "model": m, "lines": n} for a, m, n in lines.summary.model_rows()],
        }
        data["usage"] = {**asdict(usage), "cost_usd": round(usage.cost_usd, 4)}
        data["commits"] = [
            {"sha": c.sha, "still_in_pr": c.still_in_pr, "sessions": [str(s.pk) for s in c.sessions]}
            for c in review.commits
        ]
        data["conversations"] = [_conversation(c, self.project.slug) for c in review.conversations]
        return Response(data)
