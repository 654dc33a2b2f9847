"""`sessionledger why FILE:LINE`: the conversation behind one line — the prompt that caused the
edit, the assistant's words around the tool call, the call itself, and the message's URL.

One `git blame` of that line, one diff of its file in its commit, one request
(`POST …/commits/{sha}/why`, which falls back to the stored transcript when the commit has no
attribution record): fast enough to ask from an editor (docs/attribution.md).
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from typing import Any

from sessionledger.api import ApiError
from sessionledger.commands.blame import UNCOMMITTED, added_rows, blame, repo_root
from sessionledger.commands.common import (
    CommandError,
    api_error,
    client,
    load_config,
    print_json,
    project_for_cwd,
    terminal_safe,
)
from sessionledger.core import attribution

WIDTH = 100


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("why", help="the prompt, words and tool call behind one line")
    parser.add_argument("target", metavar="FILE:LINE")
    parser.add_argument("--json", action="store_true", help="the server's answer as JSON")
    parser.add_argument("--project", help="project slug (default: from the git remote)")
    parser.set_defaults(func=run)


def run(options: argparse.Namespace) -> int:
    path, number = _target(options.target)
    root = repo_root()
    lines = blame(root, path, f"{number},{number}")
    if not lines:
        raise CommandError(f"{path} has no line {number}")
    line = lines[0]
    if line.commit == UNCOMMITTED:
        print(f"{path}:{number} is not committed yet.")
        return 0
    config = load_config()
    api = client(config)
    slug = project_for_cwd(config, api, options.project)
    question = {
        "path": line.path,
        "line": line.orig_line,
        "hash": attribution.line_hash(line.text, line.path),
        "added": added_rows(root, line.commit, line.path),
    }
    try:
        answer = api.post_json(f"/projects/{slug}/commits/{line.commit}/why", question)
    except ApiError as exc:
        raise api_error(exc) from None
    if options.json:
        print_json(answer)
    else:
        sys.stdout.write(render(answer, line.commit, f"{path}:{number}", line.text))
    return 0


def _target(text: str) -> tuple[str, int]:
    path, _, number = text.rpartition(":")
    if not path or not number.isdigit() or int(number) < 1:
        raise CommandError("give FILE:LINE, e.g. src/app.py:42")
    return path, int(number)


def render(answer: dict[str, Any], commit: str, where: str, text: str) -> str:
    out = [f"{where}  (commit {commit[:10]})", f"    {text.strip()[:WIDTH]}", ""]
    contributor = answer.get("contributor")
    if not answer.get("found"):
        out.append("No session of this commit wrote it that Sessionledger knows of.")
        return "\n".join(out) + "\n"
    if contributor != "ai":
        out.append("Written by a human: no tool call of the commit's sessions wrote this line.")
        return "\n".join(out) + "\n"
    step = answer.get("step") or {}
    out.append(f"Written by the agent ({answer.get('model') or 'model unknown'}), step {step.get('ref', '')}")
    out.append(f"Message: {answer.get('url') or '(no URL)'}")
    if answer.get("source") == "transcript":
        out.append("(matched against the stored transcript: this commit has no attribution record)")
    out += _quote("Prompt", answer.get("prompt"))
    out += _quote("Assistant, before", answer.get("before"))
    out += _tool_call(answer.get("tool_call"))
    out += _quote("Assistant, after", answer.get("after"))
    return terminal_safe("\n".join(out)) + "\n"


def _quote(title: str, message: Any) -> list[str]:
    if not isinstance(message, dict) or not message.get("text"):
        return []
    body = str(message["text"]).strip()
    if len(body) > 1200:
        body = body[:1200] + " …"
    return ["", f"{title}:", textwrap.indent(body, "  ")]


def _tool_call(call: Any) -> list[str]:
    if not isinstance(call, dict):
        return []
    arguments = found if isinstance(found := call.get("input"), dict) else {}
    shown = json.dumps(arguments, ensure_ascii=False, indent=2)
    if len(shown) > 1500:
        shown = shown[:1500] + "\n  …"
    return ["", f"Tool call: {call.get('name')}", textwrap.indent(shown, "  ")]
