# ruff: noqa: E501  (data: one regex or example per line reads better than a wrapped one)
"""A redaction corpus built from public secret-scanner test material, in every transcript placement.

Each sample is a text holding one or more secrets (`«…»` marks them, see
sessionledger.core.redaction.examples), a kind, a category and the public source its shape comes from.
Token shapes follow the true-positive generators of gitleaks (MIT, cmd/generate/config/rules/*.go)
and the plugin tests of detect-secrets (Apache-2.0, tests/plugins/*_test.py, test_data/*); the
contexts a token is written in follow gitleaks' `GenerateSampleSecrets` (MIT,
cmd/generate/config/utils/generate.go); keyword forms (passwords in CLI flags, config files, prose)
follow detect-secrets' KeywordDetector tests and the tools' own documentation. Values are random
(seeded), never copied: a generated value matches no account.

`placements(text)` renders a text the ten ways a secret reaches a Claude Code transcript: the
prompt, assistant text, a thinking block, a Bash command, Bash output, a Read result (line-numbered
`     5→` copy plus `toolUseResult.file.content`), an Edit's input, an Edit's result (numbered
snippet, `oldString`/`newString`, `structuredPatch` one string per line), a Write's input and a
Write's result.
"""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from redaction_samples import (  # noqa: F401  (bench_redact reads them as corpus.*)
    CONTEXTS_SOURCE,
    DETECT_SECRETS,
    GITLEAKS,
    KEYWORD_SAMPLES,
    KEYWORD_TOKENS,
    NEGATIVES,
    PLACEMENTS,
    SESSION,
    STRICT_CATEGORIES,
    TOKEN_CONTEXTS,
    TOKENS,
    Sample,
)

from sessionledger.core.redaction.examples import Example, expand


def samples() -> list[Sample]:
    """Every corpus sample: each provider token in each context, then the keyword forms."""
    out: list[Sample] = []
    for kind, category, token, source in TOKENS:
        ident = kind.split("_")[0]
        for context in TOKEN_CONTEXTS:
            text = context.replace("{i}", ident).replace("{I}", ident.upper()).replace("{s}", "«" + token + "»")
            out.append(Sample(kind, category, text, f"{source}; context: {CONTEXTS_SOURCE}"))
    for ident, value in KEYWORD_TOKENS:
        source = f"{GITLEAKS.format(ident)}; context: {CONTEXTS_SOURCE}"
        for context in TOKEN_CONTEXTS[:8]:  # named contexts only: no prefix, so prose cannot tell
            text = context.replace("{i}", ident).replace("{I}", ident.upper()).replace("{s}", "«" + value + "»")
            out.append(Sample(ident, "saas", text, source))
    out += [Sample(kind, category, template, source) for kind, category, template, source in KEYWORD_SAMPLES]
    return out


# --- placements --------------------------------------------------------------------------------


class _Lines:
    """Claude Code 2.1.x JSONL lines with deterministic ids."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def _id(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def _envelope(self, kind: str, **extra: Any) -> dict[str, Any]:
        return {
            "parentUuid": self._id(),
            "isSidechain": False,
            "userType": "external",
            "cwd": "/home/dev/app",
            "sessionId": SESSION,
            "version": "2.1.39",
            "gitBranch": "main",
            "type": kind,
            **extra,
            "uuid": self._id(),
            "timestamp": "2026-02-10T21:00:00.000Z",
        }

    def prompt(self, text: str) -> dict[str, Any]:
        return self._envelope("user", message={"role": "user", "content": text}, permissionMode="default")

    def assistant(self, block: dict[str, Any]) -> dict[str, Any]:
        message = {
            "model": "claude-opus-4-6",
            "id": f"msg_01{self.rng.getrandbits(100):025x}",
            "type": "message",
            "role": "assistant",
            "content": [block],
            "stop_reason": None,
            "usage": {"input_tokens": 3, "output_tokens": 27},
        }
        return self._envelope("assistant", message=message, requestId=f"req_011{self.rng.getrandbits(90):022x}")

    def tool_use(self, name: str, tool_input: dict[str, Any]) -> tuple[dict[str, Any], str]:
        tool_id = f"toolu_01{self.rng.getrandbits(100):025x}"
        return self.assistant({"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}), tool_id

    def tool_result(self, tool_id: str, content: str, result: Any) -> dict[str, Any]:
        block = {"tool_use_id": tool_id, "type": "tool_result", "content": content, "is_error": False}
        return self._envelope("user", message={"role": "user", "content": [block]}, toolUseResult=result)


def numbered(text: str, start: int = 1) -> str:
    """Claude Code's Read/`cat -n` rendering: a right-aligned line number, `→`, the line."""
    return "\n".join(f"{n:>6}→{line}" for n, line in enumerate(text.split("\n"), start))


def _patch(old: str, new: str, start: int) -> list[dict[str, Any]]:
    old_lines, new_lines = old.split("\n"), new.split("\n")
    lines = [" # settings", *("-" + line for line in old_lines), *("+" + line for line in new_lines)]
    return [
        {
            "oldStart": start,
            "oldLines": len(old_lines) + 1,
            "newStart": start,
            "newLines": len(new_lines) + 1,
            "lines": lines,
        }
    ]


PATH = "/home/dev/app/config/settings.env"
_Records = list[dict[str, Any]]


def _prompt(lines: _Lines, text: str) -> _Records:
    return [lines.prompt(f"use this and retry:\n{text}\nthanks")]


def _assistant_text(lines: _Lines, text: str) -> _Records:
    return [lines.assistant({"type": "text", "text": f"I found this in the config:\n\n{text}\n\nI'll use it."})]


def _thinking(lines: _Lines, text: str) -> _Records:
    block = {
        "type": "thinking",
        "thinking": f"The user pasted:\n{text}\nI should use it.",
        "signature": "Eq" + "A" * 40,
    }
    return [lines.assistant(block)]


def _bash_command(lines: _Lines, text: str) -> _Records:
    use, tool_id = lines.tool_use(
        "Bash", {"command": f"cat > {PATH} <<'EOF'\n{text}\nEOF", "description": "Write config"}
    )
    return [use, lines.tool_result(tool_id, "", {"stdout": "", "stderr": "", "interrupted": False, "isImage": False})]


def _bash_output(lines: _Lines, text: str) -> _Records:
    use, tool_id = lines.tool_use("Bash", {"command": f"cat {PATH}", "description": "Show config"})
    return [
        use,
        lines.tool_result(tool_id, text, {"stdout": text, "stderr": "", "interrupted": False, "isImage": False}),
    ]


def _read_output(lines: _Lines, text: str) -> _Records:
    use, tool_id = lines.tool_use("Read", {"file_path": PATH})
    n = text.count("\n") + 1
    file = {"filePath": PATH, "content": text, "numLines": n, "startLine": 1, "totalLines": n}
    return [use, lines.tool_result(tool_id, numbered(text), {"type": "text", "file": file})]


def _edit_input(lines: _Lines, text: str) -> _Records:
    edit = {
        "file_path": PATH,
        "old_string": "# settings\n",
        "new_string": f"# settings\n{text}\n",
        "replace_all": False,
    }
    use, tool_id = lines.tool_use("Edit", edit)
    return [use, lines.tool_result(tool_id, f"The file {PATH} has been updated.", {"filePath": PATH})]


def _edit_result(lines: _Lines, text: str) -> _Records:
    old = "PLACEHOLDER=1"
    use, tool_id = lines.tool_use(
        "Edit", {"file_path": PATH, "old_string": old, "new_string": text, "replace_all": False}
    )
    snippet = numbered(f"# settings\n{text}\n")
    content = f"The file {PATH} has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\n{snippet}"
    result = {
        "filePath": PATH,
        "oldString": old,
        "newString": text,
        "originalFile": f"# settings\n{old}\n",
        "structuredPatch": _patch(old, text, 1),
        "userModified": False,
        "replaceAll": False,
    }
    return [use, lines.tool_result(tool_id, content, result)]


def _write_input(lines: _Lines, text: str) -> _Records:
    use, tool_id = lines.tool_use("Write", {"file_path": PATH, "content": f"{text}\n"})
    return [
        use,
        lines.tool_result(tool_id, f"File created successfully at: {PATH}", {"type": "create", "filePath": PATH}),
    ]


def _write_result(lines: _Lines, text: str) -> _Records:
    use, tool_id = lines.tool_use("Write", {"file_path": PATH, "content": f"{text}\n"})
    result = {
        "type": "update",
        "filePath": PATH,
        "content": f"{text}\n",
        "structuredPatch": _patch("PLACEHOLDER=1", text, 1),
        "originalFile": "# settings\nPLACEHOLDER=1\n",
    }
    return [use, lines.tool_result(tool_id, f"The file {PATH} has been updated.", result)]


_BUILDERS: dict[str, Callable[[_Lines, str], _Records]] = {
    "prompt": _prompt,
    "assistant_text": _assistant_text,
    "thinking": _thinking,
    "bash_command": _bash_command,
    "bash_output": _bash_output,
    "read_output": _read_output,
    "edit_input": _edit_input,
    "edit_result": _edit_result,
    "write_input": _write_input,
    "write_result": _write_result,
}
assert tuple(_BUILDERS) == PLACEMENTS


def placement(name: str, text: str, rng: random.Random) -> _Records:
    """The transcript lines that carry `text` in placement `name`."""
    return _BUILDERS[name](_Lines(rng), text)


def dump(records: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")).encode() + b"\n" for r in records)


@dataclass(frozen=True)
class Case:
    sample: Sample
    placement: str
    example: Example
    data: bytes


def cases(seed: int = 20260210, only: Callable[[Sample], bool] | None = None) -> Iterator[Case]:
    """Every sample in every placement (values drawn from one seeded generator)."""
    rng = random.Random(seed)
    for sample in samples():
        if only is not None and not only(sample):
            continue
        example = expand(sample.template, rng)
        for name in PLACEMENTS:
            yield Case(sample, name, example, dump(placement(name, example.text, rng)))


def strings(data: bytes) -> list[str]:
    """Every string value of every JSON line (the text a reader of the transcript sees)."""
    out: list[str] = []
    for line in data.splitlines():
        stack: list[Any] = [json.loads(line)]
        while stack:
            node = stack.pop()
            if isinstance(node, str):
                out.append(node)
            elif isinstance(node, dict):
                stack.extend(node.values())
            elif isinstance(node, list):
                stack.extend(node)
    return out


def material(secret: str) -> list[str]:
    """The parts of a secret that must not survive: every line of a multi-line secret (PEM
    headers excepted), otherwise the whole value."""
    if "\n" not in secret and "\\n" not in secret:
        return [secret]
    parts = secret.replace("\\n", "\n").split("\n")
    return [p for p in parts if len(p) >= 8 and "-----" not in p]


def leaked(secret: str, output: str, text: str) -> bool:
    """Whether any piece of `secret` (found in the sample `text`) survives in the `output` strings.

    A piece is any 8-character window of the secret's material (the whole value when shorter)
    that does not also occur in the sample's own text outside the secret and is not one character
    repeated (an OpenSSH body's `AAAAAAAA` also fills the placements' dummy thinking signature, and
    tells nothing about the key); and a secret cut short
    (a redactor stopping early at `@` or `#`) leaks its head or tail next to the text around it.
    """
    pos = text.find(secret)
    context = text[:pos] + "\0" + text[pos + len(secret) :] if pos >= 0 else ""
    for part in material(secret):
        width = min(8, len(part))
        for i in range(len(part) - width + 1):
            window = part[i : i + width]
            if window in output and window not in context and window.count(window[0]) < width:
                return True
    if pos >= 0 and "\n" not in secret:
        before, after = text[max(0, pos - 3) : pos], text[pos + len(secret) : pos + len(secret) + 3]
        if after and secret[-3:] + after in output and secret[-3:] + after not in context:
            return True
        if before and before + secret[:3] in output and before + secret[:3] not in context:
            return True
    return False
