"""`why`: for one line of a commit, the step that wrote it and the conversation around it.

One request answers it (the client waits on it interactively): the records of the commit, or
the transcript fallback when none was uploaded, then the session's content document for the
prompt, the assistant's words before and after the call, and the call itself.
"""

from __future__ import annotations

from typing import Any

from projects.models import Project
from sessionledger.core import attribution
from sessionledger.core.attribution_lookup import Hit, find
from sessions_app import selectors as session_selectors
from sessions_app.attribution import selectors
from sessions_app.attribution.selectors import MAX_EARLIER_SEGMENTS
from sessions_app.models import Session

MAX_TEXT = 4000
MAX_INPUT_STRING = 2000


def why(
    *, project: Project, sha: str, path: str, line: int, line_hash: str, added: list[attribution.Line] | None
) -> tuple[dict[str, Any], Session | None]:
    """The explanation, and the session whose content it quotes (for the access log)."""
    records = selectors.records_for_commit(project=project, sha=sha)
    hit, source = find(records, path, line, line_hash, sha), "record"
    sessions: list[Session] = []
    if hit is None and added:
        sessions = selectors.commit_sessions(project=project, sha=sha)
        if sessions:
            record = selectors.matched_record(project=project, sha=sha, added={path: added}, sessions=sessions)
            hit, source = find([record], path, line, line_hash, sha), "transcript"
    if hit is None:
        return {"found": False, "contributor": "unknown", "path": path, "line": line, "records": len(records)}, None
    answer = _basics(hit, source)
    if hit.contributor != "ai" or not hit.session:
        return answer, None
    found = session_selectors.session_get(project=project, session_id=hit.session)
    session, messages = _segment_with(found, hit.step) if found is not None else (None, [])
    if session is None:
        return answer, None
    answer["session"] = {"id": str(session.pk), "title": session.title, "web_url": _web(session)}
    answer.update(step_context(messages, hit.step))
    return answer, session


def _segment_with(session: Session, uuid: str) -> tuple[Session, list[dict[str, Any]]]:
    """The segment whose messages hold the step: the session itself, or an earlier segment of
    its conversation (the client attributes from the conversation's start)."""
    current: Session | None = session
    for _ in range(MAX_EARLIER_SEGMENTS + 1):
        if current is None:
            break
        messages = (session_selectors.session_document(session=current) or {}).get("messages") or []
        if any(m.get("uuid") == uuid for m in messages):
            return current, messages
        current = current.previous
    return session, []


def _web(session: Session) -> str:
    from sessions_app.links import session_web_url

    return session_web_url(session)


def _basics(hit: Hit, source: str) -> dict[str, Any]:
    return {
        "found": True,
        "contributor": hit.contributor,
        "path": hit.path,
        "line": hit.line,
        "revision": hit.revision,
        "source": source,
        "model": hit.model,
        "step": {"uuid": hit.step, "turn": hit.turn, "tool": hit.tool, "ref": hit.short_step} if hit.step else None,
        "url": hit.url,
    }


def step_context(messages: list[dict[str, Any]], uuid: str) -> dict[str, Any]:
    """The prompt of the call's turn, the assistant's text before and after it, and the call."""
    index = next((i for i, m in enumerate(messages) if m.get("uuid") == uuid), None)
    if index is None:
        return {"prompt": None, "before": None, "after": None, "tool_call": None}
    call = messages[index]
    turn = call.get("turn")
    same_turn = [m for m in messages if m.get("turn") == turn]
    prompt = next((m for m in same_turn if m.get("kind") == "prompt"), None)
    before = next((m for m in reversed(messages[:index]) if _said(m, turn)), None)
    after = next((m for m in messages[index + 1 :] if _said(m, turn)), None)
    tool = call.get("tool") or {}
    return {
        "prompt": _text(prompt),
        "before": _text(before),
        "after": _text(after),
        "tool_call": {"name": tool.get("name"), "input": _shorten(tool.get("input"))},
    }


def _said(message: dict[str, Any], turn: Any) -> bool:
    return message.get("turn") == turn and message.get("role") == "assistant" and message.get("kind") == "text"


def _text(message: dict[str, Any] | None) -> dict[str, Any] | None:
    if message is None:
        return None
    content = str(message.get("content") or "")
    return {"uuid": message.get("uuid"), "timestamp": message.get("timestamp"), "text": content[:MAX_TEXT]}


def _shorten(value: Any, depth: int = 0) -> Any:
    if isinstance(value, str):
        return value if len(value) <= MAX_INPUT_STRING else value[:MAX_INPUT_STRING] + "…"
    if depth > 4:
        return None
    if isinstance(value, dict):
        return {str(k): _shorten(v, depth + 1) for k, v in list(value.items())[:50]}
    if isinstance(value, list):
        return [_shorten(v, depth + 1) for v in value[:50]]
    return value
