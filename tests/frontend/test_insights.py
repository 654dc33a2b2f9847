"""The insights page: charts drawn from hand-counted numbers, CSV exports, access, query count."""

from __future__ import annotations

import csv
import html
import io
import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django_scopes import scopes_disabled

from integrations.models import PullRequest
from sessions_app.insights import CHARTS, Period
from sessions_app.models import Attribution, Session
from tests.client.transcript_builder import TranscriptBuilder
from tests.factories import make_member
from tests.integrations.records import pull_request
from tests.uploads import commit_hash

MONDAY = datetime(2026, 3, 2, 10, tzinfo=UTC)


def turns(n: int, *, errors: int = 0, tool: str = "Bash") -> bytes:
    """``n`` turns of prompt, one ``tool`` call and a reply; the first ``errors`` calls fail."""
    builder = TranscriptBuilder()
    for i in range(n):
        builder.prompt(f"step {i}").tool_call(tool, {"command": "make"}, result="ok", is_error=i < errors)
        builder.assistant_text("ok").turn_end()
    return builder.build()


def at(session: Session, when: datetime) -> Session:
    with scopes_disabled():
        Session.objects.filter(pk=session.pk).update(created_at=when, captured_at=when)
    return session


def seed_sessions(world, ingest) -> None:
    """Three authors over three weeks, and another project's session beside. Hand-counted:

    week of Mar 2:  alice 2 sessions (1 + 3 turns)
    week of Mar 9:  alice 1 (1 turn, task SL-2 complete), mallory 2 (5 turns; 2 turns, task SL-1 rejected)
    week of Mar 16: dora 1 (2 turns, Read)
    commits by turns: 1 → 1, 2–3 → 2, 4–7 → 1; Bash 12 calls, 3 failed; Read 2 calls
    branches: feat/x 3 sessions, 10 turns; main 3 sessions, 4 turns
    """
    dora = make_member(world.project, "member", email="dora@example.com")
    specs = [
        (world.admin, turns(1), MONDAY, {"feature_branch": "main"}),
        (world.admin, turns(3, errors=1), MONDAY + timedelta(days=1), {"feature_branch": "feat/x"}),
        (world.member, turns(5, errors=2), MONDAY + timedelta(days=8), {"feature_branch": "feat/x"}),
        (world.member, turns(2), MONDAY + timedelta(days=9),
         {"feature_branch": "feat/x", "kind": "task", "task_id": "SL-1", "status": "rejected"}),
        (world.admin, turns(1), MONDAY + timedelta(days=9),
         {"feature_branch": "main", "kind": "task", "task_id": "SL-2", "status": "complete"}),
        (dora, turns(2, tool="Read"), MONDAY + timedelta(days=14), {"feature_branch": "main"}),
    ]  # fmt: skip
    made = [
        at(ingest(world.project, author, raw=raw, seed=f"insights-{n}", **metadata), when)
        for n, (author, raw, when, metadata) in enumerate(specs)
    ]
    other = ingest(world.other_project, world.other_admin, raw=turns(9, tool="SecretTool"), seed="other")
    # Attribution (agent's lines / added lines): alice Mar 2 7/10 and 3/10, mallory Mar 9 1/4.
    for session, added, ai in ((made[0], 10, 7), (made[1], 10, 3), (made[2], 4, 1), (other, 50, 50)):
        attributed(session, added, ai)
    # A pull request holding alice's first commit, merged on Mar 3.
    merged = pull_request(world.project, number=5, commits=[made[0].commit_hash or ""])
    with scopes_disabled():
        PullRequest.objects.filter(pk=merged.pk).update(merged=True, state="merged", merged_at=MONDAY + timedelta(1))


def attributed(session: Session, added: int, ai: int) -> None:
    with scopes_disabled():
        Attribution.objects.create(
            project_id=session.project_id, session=session, record={"files": []}, added_lines=added, ai_lines=ai
        )


def svg_texts(page: str, chart: str) -> list[str]:
    """Every text a chart's SVG prints, in order, unescaped."""
    match = re.search(rf'<svg class="chart chart-{chart}".*?</svg>', page, re.S)
    assert match, f"no {chart} chart on the page"
    return [
        html.unescape(re.sub(r"<title>.*?</title>", "", t)) for t in re.findall(r"<text[^>]*>(.*?)</text>", match[0])
    ]


@pytest.fixture
def seeded(world, ingest):
    seed_sessions(world, ingest)
    return world


def test_the_charts_print_the_hand_counted_numbers(seeded, client) -> None:
    client.force_login(seeded.viewer)
    response = client.get(f"/p/{seeded.project.slug}/insights")
    assert response.status_code == 200
    page = response.content.decode()

    weeks = svg_texts(page, "sessions_per_author_week")
    assert [t for t in weeks if t.startswith(("Mar", "20"))] == ["Mar 2", "2026", "Mar 9", "Mar 16"]
    authors = svg_texts(page, "labels")  # the row labels, drawn beside the grid
    assert authors == ["all sessions", "alice@example.com", "mallory@example.com", "dora@example.com"]
    alice = _row(weeks, authors, "alice@example.com")
    assert alice == ["2", "4", "1", "1", "3 sessions", "5 turns"]
    assert _row(weeks, authors, "mallory@example.com") == ["2", "7", "2 sessions", "7 turns"]
    assert _row(weeks, authors, "dora@example.com") == ["1", "2", "1 session", "2 turns"]

    assert svg_texts(page, "turns_per_commit") == [
        *("0", "0 turns"),  # no commit made without a prompt of its own here
        *("1", "1 turn", "4 msgs avg"),  # four messages a turn: prompt, call, result, reply
        *("2", "2–3 turns", "10 msgs avg"),
        *("1", "4–7 turns", "20 msgs avg"),
        *("0", "8–15 turns", "0", "16+ turns"),
    ]

    assert svg_texts(page, "tool_usage") == ["Bash", "12 calls · 3 failed (25%)", "Read", "2 calls · no errors"]
    assert svg_texts(page, "task_outcomes") == ["complete", "1 · 50%", "rejected", "1 · 50%", "abandoned", "0 · 0%"]
    assert svg_texts(page, "busiest_branches") == ["feat/x", "3 sessions · 10 turns", "main", "3 sessions · 4 turns"]
    assert "SecretTool" not in page and "bob@example.com" not in page
    tiles = re.findall(r'<span class="tile-value">([^<]*)</span>', page)
    assert tiles[:4] == ["6", "14", "4", "2"]  # sessions, turns, commits, task sessions


def test_the_agents_share_of_added_lines_per_author_and_week(seeded, client, api_as) -> None:
    client.force_login(seeded.viewer)
    page = client.get(f"/p/{seeded.project.slug}/insights").content.decode()
    texts = svg_texts(page, "ai_share_per_author_week")
    assert texts[:5] == ["team", "Mar 2", "50%", "Mar 9", "25%"]  # the team's share each week
    alice = texts.index("alice@example.com")
    assert texts[alice + 1 : alice + 5] == ["50%", "20", "50% by the agent", "20 added lines"]
    mallory = texts.index("mallory@example.com")
    assert texts[mallory + 1 : mallory + 5] == ["25%", "4", "25% by the agent", "4 added lines"]
    exported = api_as(seeded.viewer).get(
        f"/api/v1/projects/{seeded.project.slug}/insights", {"export": "ai_share_per_author_week"}
    )
    rows = list(csv.DictReader(io.StringIO(exported.content.decode())))
    assert [(r["week"], r["author"], r["added_lines"], r["ai_lines"], r["ai_share"]) for r in rows] == [
        ("2026-03-02", "alice@example.com", "20", "10", "0.5"),
        ("2026-03-09", "mallory@example.com", "4", "1", "0.25"),
    ]


def test_the_agents_share_goes_by_when_the_work_happened_not_when_it_was_uploaded(seeded, api_as) -> None:
    with scopes_disabled():  # an offline queue or `import` uploads everything today
        Session.objects.filter(project=seeded.project).update(created_at=datetime.now(UTC))
    exported = api_as(seeded.viewer).get(
        f"/api/v1/projects/{seeded.project.slug}/insights", {"export": "ai_share_per_author_week"}
    )
    weeks = [row["week"] for row in csv.DictReader(io.StringIO(exported.content.decode()))]
    assert weeks == ["2026-03-02", "2026-03-09"]


def _row(texts: list[str], authors: list[str], author: str) -> list[str]:
    """An author's cells (sessions, turns per week with one) and row totals, from the grid's texts:
    each row ends with its "N turns"; the first follows the head, whose last text is a week's label."""
    ends = [i for i, text in enumerate(texts) if text.endswith(" turns")]
    row = authors.index(author) - 1  # after "all sessions"
    start = ends[row - 1] + 1 if row else ends[0] - 1
    while not row and texts[start - 1].isdigit():
        start -= 1
    return texts[start : ends[row] + 1]


def test_each_csv_export_holds_its_charts_numbers(seeded, client, api_as) -> None:
    client.force_login(seeded.viewer)
    api = api_as(seeded.viewer).get(f"/api/v1/projects/{seeded.project.slug}/insights").json()
    page = client.get(f"/p/{seeded.project.slug}/insights").content.decode()
    for name in CHARTS:
        link = html.unescape(re.search(rf'href="([^"]*insights\.csv\?chart={name}[^"]*)"', page)[1])
        response = client.get(link)
        assert response["Content-Type"].startswith("text/csv")
        assert response["Content-Disposition"] == f'attachment; filename="{seeded.project.slug}-{name}.csv"'
        rows = list(csv.DictReader(io.StringIO(response.content.decode())))
        assert rows == [{key: str(value) for key, value in row.items()} for row in api[name]], name


def test_a_period_and_a_branch_narrow_the_page_its_exports_and_the_api_link(seeded, client, api_as) -> None:
    client.force_login(seeded.viewer)
    base = f"/p/{seeded.project.slug}/insights"
    page = client.get(f"{base}?since=2026-03-09&until=2026-03-15&branch=feat/x").content.decode()
    assert svg_texts(page, "busiest_branches") == ["feat/x", "2 sessions · 7 turns"]
    assert svg_texts(page, "tool_usage") == ["Bash", "7 calls · 2 failed (29%)"]
    assert "2026-03-09 to 2026-03-15 · branch feat/x" in page
    csv_link = html.unescape(re.search(r'href="([^"]*chart=tool_usage[^"]*)"', page)[1])
    assert "since=2026-03-09" in csv_link and "branch=feat%2Fx" in csv_link
    assert client.get(csv_link).content.decode().splitlines()[1] == "Bash,7,2,0.2857"
    api_link = html.unescape(re.search(r'href="(/api/v1/projects/[^"]*)"', page)[1])
    assert api_as(seeded.viewer).get(api_link).json()["size"]["sessions"] == 2


def test_an_invalid_date_is_reported_and_left_out(seeded, client) -> None:
    client.force_login(seeded.viewer)
    response = client.get(f"/p/{seeded.project.slug}/insights?since=someday")
    assert response.status_code == 200
    assert "Use a date (2026-02-12)" in response.content.decode()
    assert re.findall(r'<span class="tile-value">([^<]*)</span>', response.content.decode())[0] == "6"


def test_an_unknown_chart_is_a_400(world, client) -> None:
    client.force_login(world.viewer)
    response = client.get(f"/p/{world.project.slug}/insights.csv?chart=passwords")
    assert response.status_code == 400 and b"tool_usage" in response.content


def test_an_empty_project_says_so_instead_of_drawing(world, client) -> None:
    client.force_login(world.admin)
    page = client.get(f"/p/{world.project.slug}/insights").content.decode()
    assert '<svg class="chart' not in page
    assert "No sessions in this period." in page and "No task sessions in this period." in page


@pytest.mark.parametrize("role", ["viewer", "member", "admin"])
def test_every_member_down_to_viewers_can_read_insights(world, client, role) -> None:
    client.force_login(world.user(role))
    assert client.get(f"/p/{world.project.slug}/insights").status_code == 200
    assert client.get(f"/p/{world.project.slug}/insights.csv?chart=tool_usage").status_code == 200


@pytest.mark.parametrize("path", ["insights", "insights.csv?chart=tool_usage"])
def test_an_outsider_gets_404_and_anonymous_is_sent_to_log_in(seeded, client, path) -> None:
    client.force_login(seeded.outsider)
    assert client.get(f"/p/{seeded.project.slug}/{path}").status_code == 404
    client.logout()
    assert client.get(f"/p/{seeded.project.slug}/{path}").status_code == 302


def test_the_page_costs_the_same_queries_at_twice_the_sessions(seeded, ingest, client) -> None:
    client.force_login(seeded.viewer)
    url = f"/p/{seeded.project.slug}/insights?since=2026-03-01T12:00&until=2026-03-30T12:00"  # partial days too

    def queries() -> int:
        statements: list[str] = []  # counted at the cursor: the test client resets Django's query log

        def count(execute, sql, params, many, context):
            statements.append(sql)
            return execute(sql, params, many, context)

        with connection.execute_wrapper(count):
            assert client.get(url).status_code == 200
        return len([sql for sql in statements if "sessions_app_" in sql])

    before = queries()
    for n in range(6):
        at(
            ingest(seeded.project, seeded.member, raw=turns(2, tool=f"Tool{n}"), seed=f"more-{n}"),
            MONDAY + timedelta(days=n),
        )
    # the nine aggregates of sessions_app.insights, the branch picker, and the merged pull requests'
    # relinks, sessions, records and tokens (integrations.insights: four reads, whatever the PRs)
    assert queries() == before == 14


def _prompts_in(raw: bytes) -> int:
    """Human prompts of a segment, counted from its lines: string-content user lines not meta or sidechain."""
    count = 0
    for line in raw.splitlines():
        rec = json.loads(line)
        content = rec.get("message", {}).get("content")
        if rec["type"] == "user" and isinstance(content, str) and not rec.get("isMeta") and not rec.get("isSidechain"):
            count += 1
    return count


def test_commits_an_agent_made_alone_and_amended_commits_count_once(world, ingest) -> None:
    # One agent session, four commits: the first after a prompt, the rest made on its own; the last
    # amends the third. Then another session: two prompts, one commit.
    b = TranscriptBuilder(session_id="a1e2b3c4-0000-4000-8000-000000000001")
    b.prompt("Implement the whole plan, committing as you go")
    cuts = []
    for n in range(4):
        b.tool_call("Bash", {"command": f"git commit -m step{n}"}, result="[main] step")
        b.assistant_text(f"committed step {n}")
        cuts.append(len(b.build()))
    whole = b.build()
    starts = [0, *cuts[:-1]]
    segments = [whole[start:end] for start, end in zip(starts, cuts, strict=True)]
    other = TranscriptBuilder(session_id="a1e2b3c4-0000-4000-8000-000000000002")
    other.prompt("fix the bug").assistant_text("ok").prompt("and test it").assistant_text("done")
    lines = {0: (10, 6), 1: (4, 4), 2: (8, 8), 3: (9, 9), 4: (5, 1)}  # segment -> (added, by the agent)
    uploads = [
        (raw, {"agent_session_id": "a1e2b3c4-0000-4000-8000-000000000001", "start_offset": start, "end_offset": end})
        for raw, start, end in zip(segments, starts, cuts, strict=True)
    ]
    uploads.append((other.build(), {"agent_session_id": "a1e2b3c4-0000-4000-8000-000000000002"}))
    amends = {3: 2}  # segment 3's commit amends segment 2's
    for n, (raw, offsets) in enumerate(uploads):
        extra = {"amends": commit_hash(f"alone-{amends[n]}")} if n in amends else {}
        session = ingest(world.project, world.admin, raw=raw, seed=f"alone-{n}", **offsets, **extra)
        at(session, MONDAY)
        attributed(session, *lines[n])

    # the recount, from the uploads themselves
    turns_of = [_prompts_in(raw) for raw, _ in uploads]
    counted = [n for n in range(len(uploads)) if n not in amends.values()]
    expected_buckets: dict[str, int] = {}
    for t in turns_of:
        label = {0: "0", 1: "1"}.get(t, "2–3" if 2 <= t <= 3 else "more")
        expected_buckets[label] = expected_buckets.get(label, 0) + 1
    with scopes_disabled():
        buckets = {r["turns"]: r["commits"] for r in CHARTS["turns_per_commit"](world.project, Period())}
        share = CHARTS["ai_share_per_author_week"](world.project, Period())
    assert turns_of == [1, 0, 0, 0, 2]  # the shape this test means to build
    assert {k: v for k, v in buckets.items() if v} == expected_buckets
    assert sum(buckets.values()) == len(uploads)  # every commit has its session, prompt or not
    [row] = share
    assert (row["added_lines"], row["ai_lines"]) == (
        sum(lines[n][0] for n in counted),
        sum(lines[n][1] for n in counted),
    )
