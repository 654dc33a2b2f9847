"""How accurately a commit's added lines are attributed to the agent or to a human, and to which
tool call (docs/attribution.md "How a line is attributed").

    .venv/bin/python bench/bench_attribution.py [--sessions 40] [--seed 7]

Sessions are replayed into real git repositories: an agent's Write, Edit, MultiEdit and
`replace_all` rename calls (written into a transcript by the tests' `TranscriptBuilder`, and
applied to the files), its `mv` and `git mv` shell calls, and between them a human's edits
(lines inserted, agent lines changed, a file of their own, a file renamed by hand). Each commit
is attributed exactly as the client does at capture (`attribution_capture.record_for_commit` on
the conversation from its start: the diff, the parser, the matching, the Agent Trace record),
and every added line is scored against the ground truth kept while replaying: who put that line
there (the tool call's uuid, or the human). The three real Claude Code transcripts, when present
(`tests/realfixtures.py`), are replayed the same way: their own file-writing calls, then a
human's edits, then a commit.

AI-written lines are the positives: precision is the share of lines credited to the agent that
the agent wrote, recall the share of the agent's lines credited to it, `step_accuracy` the share
of correctly credited lines credited to the right tool call. Identical lines are
interchangeable (git decides which of two blank lines is the new one), so a line whose twin was
added is judged by the twin's author. `by` splits the figures by source (synthetic, real), by
what wrote the line (Write, Edit, MultiEdit, rename, human; `moved`: a line of a file moved in
that commit, which git shows whole) and by shape: `recognisable` lines, and the trivial ones
attribution can only place by their neighbours, `blank` and `short` (`}`, `end`, …). Prints one
JSON object; targets: precision ≥ 0.98, recall ≥ 0.99.
"""

from __future__ import annotations

import argparse
import difflib
import itertools
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "client"))
sys.path.insert(0, str(ROOT))

from sessionledger.attribution_capture import commit_diff, record_for_commit  # noqa: E402
from sessionledger.core import attribution, formats  # noqa: E402
from tests.client.transcript_builder import TranscriptBuilder  # noqa: E402

TARGETS = {"precision": 0.98, "recall": 0.99}
IDENTITY = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com"}
IDENTITY.update(GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@example.com")
WORDS = ["total", "price", "order", "item", "user", "account", "cache", "retry", "limit", "window", "batch"]
WORDS += ["token", "report", "invoice"]


@dataclass
class Owner:
    """Who put a line where it is: a tool call (its message uuid) or the human (None)."""

    step: str | None
    operation: str  # Write, Edit, MultiEdit, rename (replace_all), human


HUMAN = Owner(None, "human")


@dataclass
class Tally:
    true_ai: int = 0
    false_ai: int = 0
    missed_ai: int = 0
    true_human: int = 0
    right_step: int = 0

    def add(self, truth: Owner, predicted: str | None) -> None:
        if truth.step is None:
            self.true_human += predicted is None
            self.false_ai += predicted is not None
        elif predicted is None:
            self.missed_ai += 1
        else:
            self.true_ai += 1
            self.right_step += predicted == truth.step

    def figures(self) -> dict[str, Any]:
        credited, written = self.true_ai + self.false_ai, self.true_ai + self.missed_ai
        return {
            "lines": credited + self.missed_ai + self.true_human,
            "ai_lines": written,
            "human_lines": self.false_ai + self.true_human,
            "precision": round(self.true_ai / credited, 4) if credited else None,
            "recall": round(self.true_ai / written, 4) if written else None,
            "step_accuracy": round(self.right_step / self.true_ai, 4) if self.true_ai else None,
            "false_ai": self.false_ai,
            "missed_ai": self.missed_ai,
        }


@dataclass
class Scores:
    tallies: dict[str, Tally] = field(default_factory=dict)
    mistakes: list[dict[str, Any]] = field(default_factory=list)
    commits: int = 0

    def tally(self, name: str) -> Tally:
        return self.tallies.setdefault(name, Tally())


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **IDENTITY}
    done = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True)
    return done.stdout


class Replay:
    """A real repository, the agent's transcript, and who wrote each line of each file."""

    def __init__(self, repo: Path, source: str, builder: TranscriptBuilder | None = None) -> None:
        self.repo, self.source = repo, source
        repo.mkdir(parents=True)
        git(repo, "init", "-q", "-b", "main")
        (repo / "README.md").write_text("# app\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "Initial commit")
        self.builder = builder or TranscriptBuilder(str(uuid.uuid4()), cwd=str(repo), step_seconds=2)
        self.owners: dict[str, list[Owner]] = {}
        self.fresh: dict[str, list[bool]] = {}  # lines put there since the last commit
        self.moved: set[str] = set()  # files moved since the last commit (their lines are scored as "moved")
        self.transcript: bytes | None = None  # a real transcript's bytes instead of the builder's

    # --- the working tree, with its ground truth ----------------------------------------------

    def text(self, path: str) -> str:
        target = self.repo / path
        return target.read_text() if target.exists() else ""

    def put(self, path: str, new: str, owner: Owner) -> None:
        """Write `path` whole; lines that were not there before are `owner`'s (a Write)."""
        old_lines, new_lines = self.text(path).splitlines(), new.splitlines()
        old_owners = self.owners.get(path, [HUMAN] * len(old_lines))
        old_fresh = self.fresh.get(path, [True] * len(old_lines))
        owners: list[Owner] = []
        fresh: list[bool] = []
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False).get_opcodes():
            if tag == "equal":
                owners += old_owners[i1:i2]
                fresh += old_fresh[i1:i2]
            else:
                owners += [owner] * (j2 - j1)
                fresh += [True] * (j2 - j1)
        self._store(path, new, owners, fresh)

    def splice(self, path: str, at: int, length: int, segment: str, owner: Owner) -> None:
        """Replace `length` characters at `at` by `segment`: exactly the lines that change are
        `owner`'s (no diff guesses which of two identical lines moved)."""
        old = self.text(path)
        removed = old[at : at + length]
        while removed and segment and removed[0] == segment[0]:
            at, removed, segment = at + 1, removed[1:], segment[1:]
        while removed and segment and removed[-1] == segment[-1]:
            removed, segment = removed[:-1], segment[:-1]
        new = old[:at] + segment + old[at + len(removed) :]
        spans, start = [], 0
        for line in new.splitlines(keepends=True):
            spans.append((start, start + len(line.rstrip("\r\n"))))
            start += len(line)
        before = sum(1 for s, e in spans if e < at or (e == at and s < at))
        after = sum(1 for s, _ in spans if s >= at + len(segment))
        changed = len(spans) - before - after
        old_owners = self.owners.get(path, [])
        old_fresh = self.fresh.get(path, [])
        tail = len(old_owners) - after
        owners = old_owners[:before] + [owner] * changed + old_owners[tail:]
        fresh = old_fresh[:before] + [True] * changed + old_fresh[tail:]
        self._store(path, new, owners, fresh)

    def replace(self, path: str, old: str, new: str, owner: Owner, *, every: bool = False) -> None:
        """`old` → `new` once (or at every occurrence, last first), as the Edit tool does."""
        text = self.text(path)
        spots = [i for i in range(len(text)) if text.startswith(old, i)] if every else [text.index(old)]
        for at in reversed(spots):
            self.splice(path, at, len(old), new, owner)

    def _store(self, path: str, text: str, owners: list[Owner], fresh: list[bool]) -> None:
        assert len(owners) == len(text.splitlines()), path
        target = self.repo / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        self.owners[path], self.fresh[path] = owners, fresh

    def rename(self, source: str, target: str, command: str | None) -> None:
        """Move a file: by the agent's shell call (`command`), or by hand (`git mv` outside it)."""
        if command is not None:
            self.tool("Bash", {"command": command, "description": "Move the file"}, "")
        if command is None or command.startswith("git mv"):
            git(self.repo, "mv", source, target)
        else:
            os.replace(self.repo / source, self.repo / target)
        self.owners[target], self.fresh[target] = self.owners.pop(source), self.fresh.pop(source)
        self.moved.add(target)

    # --- the agent -----------------------------------------------------------------------------

    def tool(self, name: str, arguments: dict[str, Any], result: str = "ok") -> str:
        self.builder.new_response().tool_call(name, arguments, result=result)
        return str(self.builder.lines[-2]["uuid"])  # type: ignore[index]

    def agent_write(self, path: str, content: str) -> None:
        step = self.tool("Write", {"file_path": str(self.repo / path), "content": content}, f"Wrote {path}")
        self.put(path, content, Owner(step, "Write"))

    def agent_edit(self, path: str, old: str, new: str, *, replace_all: bool = False) -> None:
        text = self.text(path)
        assert replace_all or text.count(old) == 1, (path, old)
        arguments: dict[str, Any] = {"file_path": str(self.repo / path), "old_string": old, "new_string": new}
        if replace_all:
            arguments["replace_all"] = True
        step = self.tool("Edit", arguments, "The file has been updated.")
        self.replace(path, old, new, Owner(step, "rename" if replace_all else "Edit"), every=replace_all)

    def agent_multi_edit(self, path: str, pairs: list[tuple[str, str]]) -> None:
        edits = [{"old_string": old, "new_string": new} for old, new in pairs]
        step = self.tool("MultiEdit", {"file_path": str(self.repo / path), "edits": edits}, "Applied edits.")
        for old, new in pairs:
            assert self.text(path).count(old) == 1, (path, old)
            self.replace(path, old, new, Owner(step, "MultiEdit"))

    # --- commits and scoring -------------------------------------------------------------------

    def commit(self, scores: Scores, message: str) -> None:
        git(self.repo, "add", "-A")
        git(self.repo, "commit", "-q", "-m", message)
        if self.transcript is None:
            self.tool("Bash", {"command": f"git add -A && git commit -m '{message}'"}, "[main 1a2b3c4] " + message)
        sha = git(self.repo, "rev-parse", "HEAD").strip()
        raw = self.transcript if self.transcript is not None else self.builder.build()
        record = record_for_commit(str(self.repo), sha, {"transcript": raw}, agent="claude-code") or {"files": []}
        credited = credits(record)
        for path, lines in attribution.added_lines(commit_diff(str(self.repo), sha)).items():
            for line in lines:
                truth = self.truth(path, line.number)
                predicted = credited.get((path, line.number))
                self.score(scores, path, line, truth, predicted)
        scores.commits += 1
        self.fresh = {path: [False] * len(owners) for path, owners in self.owners.items()}
        self.moved = set()

    def truth(self, path: str, number: int) -> Owner:
        """The author of line `number`; for a line that was there before, its fresh twin's."""
        owners, fresh = self.owners[path], self.fresh[path]
        index = number - 1
        if fresh[index] or path in self.moved:  # a moved file is added whole: every line is itself
            return owners[index]
        lines = self.text(path).splitlines()
        twins = [i for i, ok in enumerate(fresh) if ok and lines[i] == lines[index]]
        return owners[min(twins, key=lambda i: abs(i - index))] if twins else owners[index]

    def score(self, scores: Scores, path: str, line: Any, truth: Owner, predicted: str | None) -> None:
        category = "moved" if path in self.moved else truth.operation
        shape = ("blank" if not line.text.strip() else "short") if line.trivial else "recognisable"
        kinds = ["all", self.source, category, shape]
        for name in kinds:
            scores.tally(name).add(truth, predicted)
        wrong = (truth.step is None) != (predicted is None) or (predicted is not None and predicted != truth.step)
        if wrong and len(scores.mistakes) < 12:
            scores.mistakes.append(
                {
                    "source": self.source,
                    "path": path,
                    "line": line.text[:80],
                    "written_by": truth.operation,
                    "credited_to": "human" if predicted is None else "ai",
                    "right_step": predicted == truth.step,
                }
            )


def credits(record: dict[str, Any]) -> dict[tuple[str, int], str | None]:
    """(path, line) → the step the record credits it to (None: the human)."""
    found: dict[tuple[str, int], str | None] = {}
    for entry in record.get("files") or []:
        for conversation in entry.get("conversations") or []:
            ai = conversation.get("contributor", {}).get("type") == "ai"
            step = conversation.get("dev.sessionledger.step") if ai else None
            for span in conversation.get("ranges") or []:
                for number in range(span["start_line"], span["end_line"] + 1):
                    found[(entry["path"], number)] = step
    return found


# --- synthetic sessions ------------------------------------------------------------------------


class Code:
    """Plausible source: Python functions and JavaScript functions (whose `}` lines are trivial)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng, self.count = rng, 0

    def name(self) -> str:
        self.count += 1
        return f"{self.rng.choice(WORDS)}_{self.rng.choice(WORDS)}_{self.count}"

    def python(self, name: str | None = None) -> str:
        name = name or self.name()
        k, word = self.rng.randint(2, 99), self.rng.choice(WORDS)
        body = [f"def {name}(value):", f'    """Return the {word} for {name}."""']
        if self.rng.random() < 0.5:
            body += ["    if value is None:", "        return 0"]
        body += [f"    {name}_result = value * {k} + {len(name)}", f"    return {name}_result", "", ""]
        return "\n".join(body) + "\n"

    def javascript(self, name: str | None = None) -> str:
        name = name or self.name().replace("_", "")
        k = self.rng.randint(2, 99)
        return (
            f"export function {name}(input) {{\n  const scaled = input * {k};\n"
            f"  if (scaled > {k * 10}) {{\n    return {name}Limit;\n  }}\n  return scaled + {k};\n}}\n\n"
        )

    def module(self, language: str, functions: int) -> str:
        make = self.python if language == "py" else self.javascript
        header = "import math\n\n\n" if language == "py" else "'use strict';\n\n"
        return header + "".join(make() for _ in range(functions))

    def human_lines(self, language: str) -> str:
        """A human's addition: a small function of their own, commented."""
        word, n = self.rng.choice(WORDS), self.rng.randint(100, 999)
        if language == "py":
            return (
                f"def audit_{word}_{n}(entry):\n    # checked by hand against ticket {n}\n    return entry.{word}\n\n\n"
            )
        body = f"  // checked by hand, ticket {n}\n  return entry.{word};\n"
        return f"export function audit{word}{n}(entry) {{\n{body}}}\n\n"


def synthetic_session(root: Path, index: int, seed: int, scores: Scores) -> None:
    rng = random.Random(seed * 1000 + index)
    code = Code(rng)
    replay = Replay(root / f"s{index}", "synthetic")
    language = rng.choice(["py", "js"])
    first, second = f"src/app_{index}.{language}", f"src/util_{index}.{language}"

    replay.builder.prompt("Add the first modules")
    replay.agent_write(first, code.module(language, rng.randint(3, 6)))
    replay.agent_write(second, code.module(language, rng.randint(2, 4)))
    human_insert(replay, rng, code, first, language)
    human_change(replay, rng, first)
    replay.commit(scores, "Add the first modules")

    replay.builder.prompt("Extend them and rename a helper")
    agent_insert(replay, rng, code, first, language)
    agent_change(replay, rng, second)
    agent_rename(replay, rng, first)
    if rng.random() < 0.5:
        agent_multi(replay, rng, code, second, language)
    human_insert(replay, rng, code, second, language)
    replay.put(f"notes_{index}.md", f"# Notes {index}\n\nRelease checklist reviewed by hand.\n", HUMAN)
    replay.commit(scores, "Extend the modules")

    replay.builder.prompt("Move the modules where they belong")
    moved = first.replace("src/", "lib/")
    (replay.repo / "lib").mkdir(exist_ok=True)
    replay.rename(first, moved, rng.choice([f"mv {first} {moved}", f"git mv {first} {moved}"]))
    agent_insert(replay, rng, code, moved, language)
    third = f"src/extra_{index}.{language}"
    replay.agent_write(third, code.module(language, 2))
    final = f"lib/extra_{index}.{language}"
    replay.rename(third, final, f"mv {third} {final}")  # moved before it was ever committed
    human_insert(replay, rng, code, moved, language)
    if rng.random() < 0.5:
        replay.rename(second, f"lib/util_{index}.{language}", None)  # by hand: git sees the rename
    replay.commit(scores, "Move the modules")


def function_ends(text: str) -> list[str]:
    """The agent's function endings in `text` (each unique): where an edit inserts after."""
    lines = text.splitlines()
    ends = [f"{a}\n{b}" for a, b in itertools.pairwise(lines) if a.startswith("  return scaled") and b == "}"]
    ends += [line for line in lines if line.startswith("    return ") and line.endswith("_result")]
    return [end for end in ends if text.count(end + "\n") == 1]


def human_insert(replay: Replay, rng: random.Random, code: Code, path: str, language: str) -> None:
    """A function of the human's own, between two functions (or at the end)."""
    text = replay.text(path)
    starts = [i for i, line in enumerate(text.splitlines(keepends=True)) if line.startswith(("def ", "export "))]
    lines = text.splitlines(keepends=True)
    spot = rng.choice([*starts[1:], len(lines)])
    replay.splice(path, len("".join(lines[:spot])), 0, code.human_lines(language), HUMAN)


def human_change(replay: Replay, rng: random.Random, path: str) -> None:
    """The human changes a line the agent wrote."""
    text = replay.text(path)
    ends = function_ends(text)
    if not ends:
        return
    anchor = rng.choice(ends).split("\n")[0]
    comment = "  # reviewed" if path.endswith(".py") else "  // reviewed"
    replay.replace(path, anchor + "\n", anchor + comment + "\n", HUMAN)


def agent_insert(replay: Replay, rng: random.Random, code: Code, path: str, language: str) -> None:
    ends = function_ends(replay.text(path))
    if not ends:
        return
    anchor = rng.choice(ends)
    addition = code.python() if language == "py" else code.javascript()
    gap = "\n\n\n" if language == "py" else "\n\n"
    replay.agent_edit(path, anchor, anchor + gap + addition.rstrip("\n"))


def agent_change(replay: Replay, rng: random.Random, path: str) -> None:
    ends = function_ends(replay.text(path))
    if not ends:
        return
    anchor = rng.choice(ends).split("\n")[0]
    replay.agent_edit(path, anchor, anchor.replace("return ", "return int(", 1).rstrip(";") + ")")


def agent_rename(replay: Replay, rng: random.Random, path: str) -> None:
    """A `replace_all` Edit renaming an identifier used on several lines (inside them)."""
    text = replay.text(path)
    names = [word for word in WORDS if text.count(word) >= 2]
    if names:
        word = rng.choice(names)
        replay.agent_edit(path, word, word + "_v2", replace_all=True)


def agent_multi(replay: Replay, rng: random.Random, code: Code, path: str, language: str) -> None:
    anchors = function_ends(replay.text(path))
    if not anchors:
        return
    chosen = rng.sample(anchors, min(2, len(anchors)))
    extra = code.python() if language == "py" else code.javascript()
    gap = "\n\n\n" if language == "py" else "\n\n"
    pairs = [(chosen[0], chosen[0] + gap + extra.rstrip("\n"))]
    pairs += [(anchor, anchor.replace("return ", "return abs(", 1).replace(";", ");", 1)) for anchor in chosen[1:]]
    replay.agent_multi_edit(path, pairs)


# --- the real transcripts ----------------------------------------------------------------------


def real_session(root: Path, path: Path, scores: Scores) -> dict[str, Any]:
    """Replay a real transcript's own file writes, then a human's edits, and commit."""
    raw = path.read_bytes()
    replay = Replay(root / path.stem, "real")
    replay.transcript = raw
    parsed = formats.parse_transcript(raw, agent="claude-code")
    failed = {m["tool"]["id"] for m in parsed.messages if m.get("kind") == "tool_result" and m["tool"].get("is_error")}
    cwd = next((str(m) for m in _cwds(raw)), "")
    applied = skipped = 0
    for message in parsed.messages:
        tool = message.get("tool") or {}
        if message.get("kind") != "tool_use" or tool.get("id") in failed:
            continue
        done = apply_real(replay, cwd, str(tool.get("name")), tool.get("input") or {}, str(message.get("uuid")))
        applied, skipped = applied + (done is True), skipped + (done is False)
    written = sorted(replay.owners)
    for name in written:
        text = replay.text(name)
        middle = text.count("\n") // 2
        lines = text.splitlines(keepends=True)
        note = "Reviewed with the on-call engineer; keep the rollout behind a flag.\n"
        replay.splice(name, len("".join(lines[:middle])), 0, note, HUMAN)
    replay.put(f"HUMAN_{path.stem}.md", "Checklist written by hand before the release.\n", HUMAN)
    replay.commit(scores, "Commit the session's work")
    return {"file": path.name, "writes_replayed": applied, "writes_not_reproduced": skipped}


def _cwds(raw: bytes) -> list[str]:
    for line in raw.splitlines():
        try:
            value = json.loads(line).get("cwd")
        except (ValueError, AttributeError):
            continue
        if isinstance(value, str) and value:
            return [value]
    return []


def apply_real(replay: Replay, cwd: str, name: str, arguments: dict[str, Any], step: str) -> bool | None:
    """Apply one real call to the replay repository; None: it writes no file."""
    target = str(arguments.get("file_path") or "")
    if name not in ("Write", "Edit", "MultiEdit") or not target:
        return None
    relative = target[len(cwd) + 1 :] if cwd and target.startswith(cwd + "/") else os.path.basename(target)
    text = replay.text(relative)
    if name == "Write":
        replay.put(relative, str(arguments.get("content") or ""), Owner(step, "Write"))
        return True
    pairs = [arguments] if name == "Edit" else list(arguments.get("edits") or [])
    edits = [
        (str(p.get("old_string") or ""), str(p.get("new_string") or ""), bool(p.get("replace_all"))) for p in pairs
    ]
    for old, new, every in edits:
        if not old or old not in text:
            return False  # the file it edited is not part of the transcript
        text = text.replace(old, new) if every else text.replace(old, new, 1)
    for old, new, every in edits:
        replay.replace(relative, old, new, Owner(step, name), every=every)
    return True


# --- main --------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=40, help="synthetic sessions (3 commits each)")
    parser.add_argument("--seed", type=int, default=7)
    options = parser.parse_args()
    from tests.realfixtures import REAL_TRANSCRIPTS, available

    started, scores = time.perf_counter(), Scores()
    root = Path(tempfile.mkdtemp(prefix="bench-attribution-"))
    try:
        for index in range(options.sessions):
            synthetic_session(root, index, options.seed, scores)
        real = [real_session(root, p, scores) for p in sorted(REAL_TRANSCRIPTS.glob("*.jsonl"))] if available() else []
    finally:
        shutil.rmtree(root, ignore_errors=True)
    figures = {name: tally.figures() for name, tally in sorted(scores.tallies.items())}
    overall = figures.pop("all")
    report = {
        **overall,
        "sessions": options.sessions + len(real),
        "commits": scores.commits,
        "by": figures,
        "real_transcripts": real or "absent (tests/realfixtures.py)",
        "mistakes": scores.mistakes,
        "operations": dict(Counter(m["written_by"] for m in scores.mistakes)),
        "targets": TARGETS,
        "meets_targets": bool(
            overall["precision"] is not None
            and overall["precision"] >= TARGETS["precision"]
            and (overall["recall"] or 0) >= TARGETS["recall"]
        ),
        "seconds": round(time.perf_counter() - started, 1),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
