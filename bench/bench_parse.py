"""Parse throughput of sessionledger.core.formats against the floor of merely decoding the JSON.

    .venv/bin/python bench/bench_parse.py [transcript.jsonl[.gz]] [--size MB] [--repeat N]

Without a path it generates a realistic ~3 MB Claude Code transcript (thinking, parallel tool
calls with sibling results, hook and agent progress lines, long tool outputs, a compaction).
Both timings start from the gzip bytes the worker reads from object storage:

- floor:  gzip.decompress + json.loads of every line
- parse:  gzip.decompress + parse_transcript

Prints one JSON object; best of N runs.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

try:
    from sessionledger.core.formats import parse_transcript
except ImportError:  # a checkout where the client is not pip-installed yet
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "client"))
    from sessionledger.core.formats import parse_transcript

WORDS = ("the", "a", "to", "of", "fix", "test", "file", "error", "def", "return", "value", "import", "data")


class Generator:
    """Writes lines the way Claude Code 2.1.x does, chained through parentUuid."""

    def __init__(self, seed: int = 1) -> None:
        self.rng = random.Random(seed)
        self.session = str(uuid.UUID(int=self.rng.getrandbits(128)))
        self.tip: str | None = None
        self.clock = 1_770_000_000.0
        self.lines: list[str] = []
        self.size = 0

    def text(self, words: int) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(words))

    def new_id(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128)))

    def emit(self, kind: str, parent: Any = "tip", advance: bool = True, **fields: Any) -> str:
        self.clock += self.rng.random() * 3
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(self.clock)) + ".000Z"
        line_id = self.new_id()
        line = {
            "parentUuid": self.tip if parent == "tip" else parent, "isSidechain": False, "userType": "external",
            "cwd": "/home/dev/app", "sessionId": self.session, "version": "2.1.39", "gitBranch": "main",
            "type": kind, **fields, "uuid": line_id, "timestamp": stamp,
        }  # fmt: skip
        self.write(line)
        if advance:
            self.tip = line_id
        return line_id

    def write(self, line: dict[str, Any]) -> None:
        text = json.dumps(line, separators=(",", ":"))
        self.lines.append(text)
        self.size += len(text) + 1

    def assistant(self, block: dict[str, Any], msg_id: str, parent: Any = "tip") -> str:
        usage = {"input_tokens": 3, "cache_read_input_tokens": 40000, "output_tokens": self.rng.randint(10, 900)}
        message = {"model": "claude-opus-4-6", "id": msg_id, "type": "message", "role": "assistant",
                   "content": [block], "stop_reason": None, "usage": usage}  # fmt: skip
        return self.emit("assistant", parent, message=message, requestId="req_" + msg_id[4:])

    def turn(self) -> None:
        self.write({"type": "file-history-snapshot", "messageId": self.new_id(), "snapshot": {}})
        content = self.text(self.rng.randint(10, 80))
        self.emit("user", message={"role": "user", "content": content}, permissionMode="default")
        for _ in range(self.rng.randint(4, 10)):
            self.step()
        self.emit("system", subtype="stop_hook_summary", hookCount=1, hookInfos=[], hookErrors=[])
        self.emit("system", subtype="turn_duration", durationMs=self.rng.randint(1000, 90000))

    def step(self) -> None:
        msg_id = "msg_" + self.new_id().replace("-", "")
        self.assistant(
            {"type": "thinking", "thinking": self.text(self.rng.randint(50, 400)), "signature": "E" * 300}, msg_id
        )
        self.assistant({"type": "text", "text": self.text(self.rng.randint(10, 120))}, msg_id)
        calls = [self.call(msg_id) for _ in range(self.rng.randint(1, 3))]
        for use_uuid, tool_id, name in calls:
            self.result(use_uuid, tool_id, name)

    def call(self, msg_id: str) -> tuple[str, str, str]:
        name = self.rng.choice(["Read", "Bash", "Grep", "Edit", "Task"])
        tool_id = "toolu_" + self.new_id().replace("-", "")[:24]
        block = {"type": "tool_use", "id": tool_id, "name": name, "input": {"file_path": "/home/dev/app/x.py"}}
        use_uuid = self.assistant(block, msg_id)
        for hook in range(2):
            data = {"type": "hook_progress", "hookEvent": "PreToolUse", "hookName": f"PreToolUse:{name}", "n": hook}
            self.emit("progress", advance=False, data=data, toolUseID=tool_id, parentToolUseID=tool_id)
        if name == "Task":
            self.agent_progress(tool_id)
        return use_uuid, tool_id, name

    def agent_progress(self, tool_id: str) -> None:
        for _ in range(self.rng.randint(5, 15)):
            inner = {
                "type": "assistant",
                "message": {"role": "assistant", "content": [{"type": "text", "text": self.text(150)}]},
            }
            data = {"type": "agent_progress", "agentId": "a1b2c3d", "message": inner, "prompt": self.text(60)}
            self.emit("progress", advance=False, data=data, toolUseID="agent_" + tool_id, parentToolUseID=tool_id)

    def result(self, use_uuid: str, tool_id: str, name: str) -> None:
        size = self.rng.choice([40, 200, 1500, 6000, 20000])
        output = "\n".join(f"{n:6}\u2192{self.text(8)}" for n in range(size // 50 + 1))
        block = {"tool_use_id": tool_id, "type": "tool_result", "content": output, "is_error": self.rng.random() < 0.05}
        self.emit("user", parent=use_uuid, message={"role": "user", "content": [block]},
                  toolUseResult={"stdout": output, "stderr": ""}, sourceToolAssistantUUID=use_uuid)  # fmt: skip

    def compact(self) -> None:
        self.emit("system", parent=None, subtype="compact_boundary", content="Conversation compacted",
                  logicalParentUuid=self.tip, compactMetadata={"trigger": "auto", "preTokens": 170000})  # fmt: skip
        summary = "This session is being continued from a previous conversation. " + self.text(600)
        self.emit("user", message={"role": "user", "content": summary}, isCompactSummary=True)


def synthetic(target_bytes: int, seed: int = 1) -> bytes:
    gen = Generator(seed)
    compacted = False
    while gen.size < target_bytes:
        gen.turn()
        if not compacted and gen.size > target_bytes // 2:
            gen.compact()
            compacted = True
    return ("\n".join(gen.lines) + "\n").encode()


def best_of(repeat: int, work: Callable[[], object]) -> float:
    timings = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        timings.append(time.perf_counter() - start)
    return min(timings)


def best_of_each(repeat: int, *works: Callable[[], object]) -> list[float]:
    """Best time of each job, runs interleaved so machine load drifts hit them alike."""
    best = [float("inf")] * len(works)
    for _ in range(repeat):
        for i, work in enumerate(works):
            start = time.perf_counter()
            work()
            best[i] = min(best[i], time.perf_counter() - start)
    return best


def floor(gz: bytes) -> list[Any]:
    return [json.loads(line) for line in gzip.decompress(gz).split(b"\n") if line]


def load(path: str | None, size_mb: float) -> bytes:
    if path is None:
        return synthetic(int(size_mb * 1024 * 1024))
    data = Path(path).read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def main(argv: Iterator[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", nargs="?", help="a transcript (.jsonl or gzip); default: synthetic")
    parser.add_argument("--size", type=float, default=3.0, help="synthetic size in MB (default 3)")
    parser.add_argument("--repeat", type=int, default=15, help="runs per timing; the best is reported")
    args = parser.parse_args(list(argv) if argv is not None else None)
    raw = load(args.path, args.size)
    gz = gzip.compress(raw, 6)
    parsed = parse_transcript(raw)
    floor_s, parse_s = best_of_each(args.repeat, lambda: floor(gz), lambda: parse_transcript(gzip.decompress(gz)))
    report = {
        "bytes": len(raw), "gz_bytes": len(gz), "lines": raw.count(b"\n"),
        "messages": parsed.message_count, "turns": parsed.turn_count,
        "floor_s": round(floor_s, 4), "parse_s": round(parse_s, 4), "ratio": round(parse_s / floor_s, 2),
        "mb_per_s": round(len(raw) / parse_s / 1e6, 1),
    }  # fmt: skip
    print(json.dumps(report))


if __name__ == "__main__":
    main()
