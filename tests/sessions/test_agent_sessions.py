"""Agent sessions stitched from segments (for fork and restore) and commit relinks."""

from __future__ import annotations

from tests.client.transcript_builder import TranscriptBuilder
from tests.uploads import commit_hash

AGENT = "5d1c0c8e-3f6a-4b7e-9a51-2b8f0d4c6e17"


def _three_turns() -> tuple[bytes, list[int]]:
    builder = TranscriptBuilder(AGENT)
    cuts = []
    for n in range(3):
        builder.prompt(f"turn {n + 1}").tool_call("Bash", {"command": f"echo {n}"}, result=str(n))
        builder.assistant_text(f"finished {n + 1}").turn_end()
        cuts.append(len(builder.build()))
    return builder.build(), cuts


def _upload_segments(world, ingest, raw: bytes, bounds: list[tuple[int, int]]) -> list:
    return [
        ingest(
            world.project,
            world.member,
            raw=raw[start:end],
            seed=f"seg{start}",
            start_offset=start,
            end_offset=end,
            agent_session_id=AGENT,
        )
        for start, end in bounds
    ]


def test_two_and_three_segments_stitch_back_to_the_original_bytes(world, ingest, api_as) -> None:
    raw, cuts = _three_turns()
    _upload_segments(world, ingest, raw, [(0, cuts[0]), (cuts[0], cuts[1]), (cuts[1], cuts[2])])
    client = api_as(world.viewer)
    url = f"/api/v1/projects/{world.project.slug}/agent-sessions/{AGENT}"
    listing = client.get(url).json()
    assert [s["first_turn"] for s in listing["segments"]] == [1, 2, 3] and listing["gaps"] == []
    assert listing["segments"][1]["prompts"] == ["turn 2"]
    assert client.get(f"{url}/transcript").content == raw
    assert client.get(f"{url}/transcript?until_turn=2").content == raw[: cuts[1]]


def test_a_gap_between_segments_is_reported_not_papered_over(world, ingest, api_as) -> None:
    raw, cuts = _three_turns()
    _upload_segments(world, ingest, raw, [(0, cuts[0]), (cuts[1], cuts[2])])
    client = api_as(world.viewer)
    url = f"/api/v1/projects/{world.project.slug}/agent-sessions/{AGENT}"
    assert client.get(url).json()["gaps"] == [
        {"after": client.get(url).json()["segments"][0]["id"], "expected_start": cuts[0], "actual_start": cuts[1]}
    ]
    refused = client.get(f"{url}/transcript")
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "gap"
    assert client.get(f"{url}/transcript?allow_gaps=1").status_code == 200


def test_an_unknown_agent_session_is_a_404(world, api_as) -> None:
    url = f"/api/v1/projects/{world.project.slug}/agent-sessions/nope"
    assert api_as(world.viewer).get(url).status_code == 404


def test_a_relinked_commit_resolves_to_the_old_commits_sessions(world, ingest, api_as) -> None:
    session = ingest(world.project, world.member, "before the rebase")
    new = commit_hash("after-rebase")
    client = api_as(world.member)
    url = f"/api/v1/projects/{world.project.slug}/commits"
    assert client.get(f"{url}/{new[:8]}").json()["results"] == []
    linked = client.post(f"{url}/relink", {"pairs": [{"old": session.commit_hash, "new": new}]}, format="json")
    assert linked.json() == {"linked": 1}
    assert [s["id"] for s in client.get(f"{url}/{new[:8]}").json()["results"]] == [str(session.pk)]
    again = client.post(f"{url}/relink", {"pairs": [{"old": session.commit_hash, "new": new}]}, format="json")
    assert again.json() == {"linked": 0}


def test_a_viewer_cannot_relink(world, api_as) -> None:
    pairs = {"pairs": [{"old": commit_hash("a"), "new": commit_hash("b")}]}
    response = api_as(world.viewer).post(f"/api/v1/projects/{world.project.slug}/commits/relink", pairs, format="json")
    assert response.status_code == 403


def test_a_task_overlay_is_not_stitched_twice(world, ingest, api_as) -> None:
    raw, cuts = _three_turns()
    _upload_segments(world, ingest, raw, [(0, cuts[0]), (cuts[0], cuts[2])])
    ingest(
        world.project,
        world.member,
        raw=raw[cuts[0] : cuts[1]],
        seed="task",
        kind="task",
        task_id="SL-7",
        status="complete",
        start_offset=cuts[0],
        end_offset=cuts[1],
        agent_session_id=AGENT,
    )
    client = api_as(world.viewer)
    url = f"/api/v1/projects/{world.project.slug}/agent-sessions/{AGENT}"
    assert [s["kind"] for s in client.get(url).json()["segments"]] == ["checkpoint", "checkpoint"]
    assert client.get(f"{url}/transcript").content == raw


def test_each_segment_says_how_many_transcript_bytes_it_holds_without_its_subagents(world, api_as) -> None:
    from tests.uploads import metadata_for, upload

    raw, cuts = _three_turns()
    client = api_as(world.member)
    for start, end in [(0, cuts[0]), (cuts[0], cuts[2])]:
        meta = metadata_for(
            raw[start:end],
            commit_hash=commit_hash(f"s{start}"),
            start_offset=start,
            end_offset=end,
            agent_session_id=AGENT,
            subagents=[{"agent_id": "a1", "start_offset": 0, "end_offset": 40}],
        )
        response = upload(client, world.project.slug, raw[start:end], meta, subagents={"a1": b"x" * 40})
        assert response.status_code == 202, response.content
    listing = client.get(f"/api/v1/projects/{world.project.slug}/agent-sessions/{AGENT}").json()
    assert [s["transcript_bytes"] for s in listing["segments"]] == [cuts[0], cuts[2] - cuts[0]]
    assert [s["raw_size_bytes"] for s in listing["segments"]] == [cuts[0] + 40, cuts[2] - cuts[0] + 40]
