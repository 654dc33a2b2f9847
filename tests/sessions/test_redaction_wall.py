"""The server's second wall (docs/redaction.md): an upload from a client that did not redact
still yields a title, summary, digest, content document, search vector, snippets and commit
message without the secrets the rules recognise, and the session page says what the server found."""

from __future__ import annotations

import gzip
import json
import random
import string

from django_scopes import scopes_disabled

from projects.scoping import project_scope
from sessions_app import blobs, selectors
from sessions_app.models import Session
from sessions_app.processing import session_process, session_reprocess
from tests.client.transcript_builder import TranscriptBuilder
from tests.uploads import commit_hash, gz_file, metadata_for

RNG = random.Random(1515)


def _token() -> str:
    return "gh" + "p_" + "".join(RNG.choice(string.ascii_letters + string.digits) for _ in range(33)) + "Q7z"


def _password() -> str:
    return "".join(RNG.choice(string.ascii_letters) for _ in range(9)) + "#4" + RNG.choice(string.digits)


def _unredacted_upload(world, ingest, token: str, password: str) -> Session:
    """What an old client sends: the transcript and commit message exactly as written."""
    raw = (
        TranscriptBuilder()
        .prompt(f"deploy the billing service with GITHUB_TOKEN={token} please")
        .tool_call("Bash", {"command": f"PGPASSWORD={password} psql -h db -c 'select 1'"}, result="1 row")
        .assistant_text(f"Deployed billing; I used {token} for the registry.")
        .turn_end()
        .build()
    )
    message = f"Deploy billing service\n\nregistry token was {token}"
    return ingest(world.project, world.member, raw=raw, commit_message=message)


def test_derived_fields_hold_no_secret_from_an_unredacted_upload(world, ingest, api_as) -> None:
    token, password = _token(), _password()
    session = _unredacted_upload(world, ingest, token, password)

    derived = [session.title, session.summary, json.dumps(session.digest), session.commit_message]
    document = json.dumps(blobs.load_json_gz(session.content_storage_key))
    for text in [*derived, document]:
        assert token not in text and password not in text
    assert "deploy the billing service with GITHUB_TOKEN=[REDACTED:github] please" in session.summary
    assert session.commit_message == "Deploy billing service\n\nregistry token was [REDACTED:github]"
    assert session.server_redaction == {"github": 3, "password": 1}  # prompt, reply, commit message
    detail = api_as(world.viewer).get(f"/api/v1/projects/{world.project.slug}/sessions/{session.pk}").json()
    assert detail["server_redaction"] == {"github": 3, "password": 1}


def test_the_raw_download_and_the_stitched_transcript_hold_no_secret_the_wall_found(world, ingest, api_as) -> None:
    token, password = _token(), _password()
    session = _unredacted_upload(world, ingest, token, password)
    client = api_as(world.viewer)
    base = f"/api/v1/projects/{world.project.slug}"

    raw = client.get(f"{base}/sessions/{session.pk}/raw")
    assert raw.status_code == 200
    text = gzip.decompress(b"".join(raw.streaming_content) if raw.streaming else raw.content).decode()
    stitched = client.get(f"{base}/agent-sessions/{session.agent_session_id}/transcript").content.decode()
    for body in (text, stitched):
        assert token not in body and password not in body and "[REDACTED:github]" in body


def test_search_and_snippets_never_show_a_secret(world, ingest, api_as) -> None:
    token, password = _token(), _password()
    session = _unredacted_upload(world, ingest, token, password)
    client = api_as(world.viewer)
    url = f"/api/v1/projects/{world.project.slug}/sessions"

    assert client.get(url, {"q": token}).json()["results"] == []
    assert [s["id"] for s in client.get(url, {"q": "billing"}).json()["results"]] == [str(session.pk)]
    with project_scope(world.project):
        found = list(selectors.session_list_with_snippets(Session.objects.filter(pk=session.pk), "registry"))
    assert found and token not in found[0].snippet and "REDACTED" in found[0].snippet

    messages = client.get(f"{url}/{session.pk}/messages")
    assert messages.status_code == 200 and token not in messages.content.decode()


def test_a_redacted_upload_gives_the_wall_nothing_to_do(world, ingest) -> None:
    raw = TranscriptBuilder().prompt("deploy with GITHUB_TOKEN=[REDACTED:github]").assistant_text("ok").build()
    session = ingest(world.project, world.member, raw=raw)
    assert session.server_redaction == {}
    assert session.commit_message == "Add session capture\n\nDetails."


def test_reprocessing_keeps_the_counts_instead_of_adding_to_them(world, ingest) -> None:
    session = _unredacted_upload(world, ingest, _token(), _password())
    with project_scope(world.project):
        session_reprocess(session=session)
        again = Session.objects.get(pk=session.pk)
    assert again.server_redaction == session.server_redaction


def test_the_session_page_shows_what_the_server_redacted(world, ingest, client) -> None:
    session = _unredacted_upload(world, ingest, _token(), _password())
    client.force_login(world.viewer)

    html = client.get(f"/p/{world.project.slug}/s/{session.pk}").content.decode()

    assert "Redacted on server" in html
    assert "github × 3" in html and "password × 1" in html


def test_no_server_line_on_the_page_when_the_client_redacted_everything(world, ingest, client) -> None:
    session = ingest(world.project, world.member)
    with scopes_disabled():
        assert Session.objects.get(pk=session.pk).server_redaction == {}
    client.force_login(world.viewer)
    assert "Redacted on server" not in client.get(f"/p/{world.project.slug}/s/{session.pk}").content.decode()


def test_a_persisted_tool_output_is_redacted_before_it_joins_the_document(world, api_as) -> None:
    """A large tool output uploaded as its own part (tool-results/<name>) goes through the wall too."""
    token = _token()
    saved = "/home/dev/.claude/projects/app/5d1c0c8e/tool-results/toolu_01Big.txt"
    preview = (
        f"<persisted-output>\nOutput too large (80KB). Full output saved to: {saved}\n\n"
        "Preview (first 2KB):\nok\n</persisted-output>"
    )
    b = TranscriptBuilder().prompt("build it")
    b.tool_use("Bash", {"command": "make build"}, tool_id="toolu_01Big")
    b.tool_result(
        "toolu_01Big", preview, tool_use_result={"stdout": preview, "stderr": "", "persistedOutputPath": saved}
    )
    raw = b.assistant_text("Built.").turn_end().build()
    output = ("compiling...\n" * 200 + f"export GITHUB_TOKEN={token}\n").encode()
    body = {
        "metadata": json.dumps(metadata_for(raw, commit_hash=commit_hash("persisted"))),
        "transcript": gz_file(raw, "transcript.jsonl.gz"),
        "tool_result": [gz_file(output, "toolu_01Big.txt.gz")],
    }
    response = api_as(world.member).post(f"/api/v1/projects/{world.project.slug}/sessions", body, format="multipart")
    assert response.status_code == 202, response.content
    with scopes_disabled():
        session = Session.objects.select_related("project", "author").get(pk=response.json()["id"])
    with project_scope(world.project):
        session_process(session=session)
        session = Session.objects.get(pk=session.pk)

    document = json.dumps(blobs.load_json_gz(session.content_storage_key))
    assert token not in document and "GITHUB_TOKEN=[REDACTED:github]" in document
    assert session.server_redaction == {"github": 1}


def test_admins_see_how_many_secrets_the_server_caught(world, ingest, client) -> None:
    _unredacted_upload(world, ingest, _token(), _password())

    client.force_login(world.admin)
    html = client.get(f"/p/{world.project.slug}/settings/").content.decode()
    assert "The server redacted <strong>4 secrets</strong> in 1 session" in html
    client.force_login(world.other_admin)
    html = client.get(f"/p/{world.other_project.slug}/settings/").content.decode()
    assert "The server has found no secret that a client missed." in html
