"""The session's "Files" view: per file, the ranges the agent wrote (linking to the message of
the call that wrote them, with the step's prompt) and those a human did."""

from __future__ import annotations

import json

from django_scopes import scopes_disabled

from sessionledger.core import attribution, attribution_record
from sessions_app.models import AccessLog
from tests.client.transcript_builder import TranscriptBuilder

PATH = "src/<b>app</b>.py"


def transcript() -> tuple[bytes, str, str]:
    builder = TranscriptBuilder().prompt("Write the <i>parser</i> please")
    prompt = builder.last_uuid
    builder.tool_call("Write", {"file_path": f"/repo/{PATH}", "content": "a = 1\nb = 2\n"})
    step = next(json.loads(line)["uuid"] for line in builder.build().splitlines() if b'"tool_use"' in line)
    return builder.assistant_text("Done.").turn_end().build(), prompt, step


def test_the_files_view_links_each_agent_range_to_its_message(world, ingest, api_as, client) -> None:
    raw, prompt, step_uuid = transcript()
    session = ingest(world.project, world.member, raw=raw, seed="files", files_touched=[PATH])
    lines = {PATH: [attribution.Line.of(n, t) for n, t in ((1, "a = 1"), (2, "b = 2"), (3, "c = 3"))]}
    step = attribution.Step(step_uuid, "Write", f"/repo/{PATH}", ["a = 1", "b = 2"], 0, 0, "claude-opus-4-6", prompt)
    record = attribution_record.build_record(
        revision=session.commit_hash,
        added=lines,
        owners=attribution.attribute(lines, [step]),
        line_counts={PATH: 3},
        agent="claude-code",
        base_url="http://testserver",
        project=world.project.slug,
    )
    url = f"/api/v1/projects/{world.project.slug}/sessions/{session.pk}/attribution"
    assert api_as(world.member).post(url, record, format="json").status_code == 201
    client.force_login(world.viewer)

    page = client.get(f"/p/{world.project.slug}/s/{session.pk}/files")

    assert page.status_code == 200
    html = page.content.decode()
    assert "The agent wrote <strong>2</strong> of the <strong>3</strong> lines" in html
    assert "src/&lt;b&gt;app&lt;/b&gt;.py" in html and "<b>app</b>" not in html
    assert f'<a href="/p/{world.project.slug}/m/{step_uuid}">1–2</a>' in html  # relative: survives a SITE_URL change
    assert "anthropic/claude-opus-4-6" in html and "turn 1 · Write" in html
    assert "Write the &lt;i&gt;parser&lt;/i&gt; please" in html
    assert '<tr class="by-human">' in html
    with scopes_disabled():
        assert AccessLog.objects.filter(session_id=session.pk, via="web").count() == 1
    assert "Files: who wrote which lines" in client.get(f"/p/{world.project.slug}/s/{session.pk}").content.decode()


def test_a_session_without_attribution_says_so(world, ingest, client) -> None:
    session = ingest(world.project, world.member, "No record here", seed="none")
    client.force_login(world.member)
    page = client.get(f"/p/{world.project.slug}/s/{session.pk}/files")
    assert page.status_code == 200 and "No attribution for this session" in page.content.decode()
