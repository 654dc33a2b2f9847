"""The session list's filters, declared once for every caller.

The API (``sessions_app.filters.SessionFilter`` implements each one and refuses to start when the
two disagree), the project page's filter form (built from that FilterSet), ``sessionledger list``
(one option per filter) and the MCP server all take their names and help from here. Adding a
filter: a ``ListFilter`` here, its implementation in the FilterSet; the form, the page and the
command follow.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ListFilter:
    name: str
    help: str
    repeatable: bool = False  # ``?files=a&files=b`` means any of them


SESSION_FILTERS: tuple[ListFilter, ...] = (
    ListFilter("q", "full-text search over prompts, replies, commit messages, tool commands and outputs"),
    ListFilter("branch", "feature branch, exactly"),
    ListFilter("author", "author's e-mail or user id"),
    ListFilter("commit", "commit hash or prefix (7 to 40 hex characters)"),
    ListFilter("task", "task id, exactly"),
    ListFilter("kind", "checkpoint, task, clear, end or manual"),
    ListFilter("status", "processing, complete, rejected, abandoned or failed"),
    ListFilter("since", "captured at or after (ISO 8601 date or date-time; the session's date)"),
    ListFilter("until", "captured at or before (ISO 8601 date or date-time)"),
    ListFilter(
        "files", "a path the session touched, as listed in files_touched; repeat for any of several", repeatable=True
    ),
    ListFilter("pr", "pull request number: the sessions behind the commits it holds or held"),
)
FILTER_NAMES: tuple[str, ...] = tuple(f.name for f in SESSION_FILTERS)
HELP: dict[str, str] = {f.name: f.help for f in SESSION_FILTERS}
