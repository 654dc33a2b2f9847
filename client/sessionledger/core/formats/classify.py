"""Which user lines are real prompts (docs/claude-code.md §1.8), and how their text reads.

Shared by the message builder (parse) and the byte-level turn finder (cut/fork), so that a
"turn" means the same thing to the worker, the API and the client. The text is hostile and can
be megabytes long: every scan here is linear (`str.find`, or a regex of fixed alternatives).
"""

from __future__ import annotations

import re
from typing import Any

Record = dict[str, Any]

# Text a user line starts with when the user did not type it as a prompt -> message subtype.
NOT_PROMPT_PREFIXES: tuple[tuple[str, str], ...] = (
    ("<local-command-stdout>", "command_output"),
    ("<local-command-stderr>", "command_output"),
    ("<local-command-caveat>", "caveat"),
    ("Caveat:", "caveat"),
    ("<bash-stdout>", "bash_output"),
    ("<bash-stderr>", "bash_output"),
    ("[Request interrupted", "interrupt"),
    ("<task-notification>", "task_notification"),
    ("Stop hook feedback:", "hook_feedback"),
)

# Wrappers Claude Code puts around machine-written user text; the text inside is what matters.
_WRAPPER_TAGS = re.compile(r"</?(?:local-command-(?:stdout|stderr|caveat)|bash-(?:stdout|stderr)|task-notification)>")


def user_content(rec: Record) -> Any:
    """`message.content` of a user line (a string, a list of blocks, or None)."""
    message = rec.get("message")
    return message.get("content") if isinstance(message, dict) else None


def has_tool_result(content: Any) -> bool:
    if not isinstance(content, list):
        return False
    return any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)


def block_text(content: Any) -> str:
    """Plain text of a content value: the string itself, or its text blocks joined."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    texts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
    return "\n\n".join(t for t in texts if isinstance(t, str))


def not_prompt_label(text: str) -> str | None:
    """The subtype for machine-written user text, or None when it reads like typed input."""
    head = text.lstrip()[:32]
    for prefix, label in NOT_PROMPT_PREFIXES:
        if head.startswith(prefix):
            return label
    return None


def is_prompt_record(rec: Record) -> bool:
    """A real prompt: starts a turn. Must agree with the message builder's `kind: prompt`."""
    if rec.get("type") != "user" or rec.get("isSidechain") is True:
        return False
    if rec.get("isMeta") is True or rec.get("isCompactSummary") is True:
        return False
    content = user_content(rec)
    if not isinstance(content, (str, list)) or has_tool_result(content):
        return False
    text = block_text(content)
    if not text.strip():
        return _has_non_text_block(content)
    return not_prompt_label(text) is None


def _has_non_text_block(content: Any) -> bool:
    """An image-only (or document-only) prompt is still a prompt."""
    if not isinstance(content, list):
        return False
    return any(isinstance(b, dict) and b.get("type") not in (None, "text") for b in content)


def tag_value(text: str, tag: str) -> str | None:
    """Inner text of the first `<tag>…</tag>`, or None.

    Two `str.find`s: a lazy `<tag>(.*?)</tag>` regex rescans the rest of the text from every
    `<tag>` when no closing tag follows: quadratic on a flood of `<command-name>`.
    """
    opening = f"<{tag}>"
    start = text.find(opening)
    if start < 0:
        return None
    start += len(opening)
    end = text.find(f"</{tag}>", start)
    return None if end < 0 else text[start:end]


def slash_command(text: str) -> tuple[str, str] | None:
    """(`/name`, args) when the text is a typed slash command envelope, else None."""
    if not text.lstrip().startswith("<command-"):
        return None
    name = tag_value(text, "command-name")
    if not name:
        return None
    name = name.strip()
    args = (tag_value(text, "command-args") or "").strip()
    return (name if name.startswith("/") else f"/{name}"), args


def render_prompt(text: str) -> tuple[str, dict[str, Any]]:
    """How a prompt reads to a person, plus marker keys for the message.

    `<command-name>/compact</command-name>…<command-args>x</command-args>` reads "/compact x";
    `<bash-input>ls</bash-input>` reads "!ls" (what the user typed in bash mode).
    """
    command = slash_command(text)
    if command:
        name, args = command
        return (f"{name} {args}" if args else name), {"command": name}
    bash = tag_value(text, "bash-input") if text.lstrip().startswith("<bash-input>") else None
    if bash is not None:
        return f"!{bash}", {"bash": True}
    return text, {}


def strip_wrappers(text: str) -> str:
    """`<bash-stdout>ok</bash-stdout><bash-stderr></bash-stderr>` -> `ok`."""
    return _WRAPPER_TAGS.sub("", text).strip()
