"""Throughput of `Redactor().redact_bytes` on realistic transcript JSONL.

Redaction runs on every captured segment before upload, in a detached process after each commit,
so it must be cheap: target >= 50 MB/s. Without a path argument the bench builds ~20 MB of
synthetic Claude Code 2.1.x lines whose text is real code (the Python standard library's own
sources as Read/Bash outputs), prose, git/pytest output with SHAs and uuids, thinking blocks with
signatures, and a few fake secrets. With a path, that JSONL file is repeated up to the size.

    .venv/bin/python bench/bench_redact.py [transcript.jsonl] [--mb 20] [--repeat 5]

Prints one JSON object: {"bytes", "seconds", "mb_per_s", "redactions", "changed_lines", ...}.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import sysconfig
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "client"))

from sessionledger.redact import Redactor

SESSION = "5d1c0c8e-3f6a-4b7e-9a51-2b8f0d4c6e17"
PROSE = (
    "I'll look at how the request handler validates the session before touching the database. "
    "The failing test suggests the token refresh happens after the cache lookup, so the stale key "
    "is returned. Let me read the module and then run the focused test again. "
)


def _dump(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def _envelope(rng: random.Random, kind: str, **extra: Any) -> dict[str, Any]:
    return {
        "parentUuid": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/dev/projects/app",
        "sessionId": SESSION,
        "version": "2.1.39",
        "gitBranch": "main",
        "type": kind,
        **extra,
        "uuid": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
        "timestamp": "2026-02-10T21:00:00.000Z",
    }


def _assistant(rng: random.Random, block: dict[str, Any]) -> bytes:
    message = {
        "model": "claude-opus-4-6",
        "id": f"msg_01{rng.getrandbits(100):025x}",
        "type": "message",
        "role": "assistant",
        "content": [block],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 3,
            "cache_creation_input_tokens": 812,
            "cache_read_input_tokens": 40211,
            "output_tokens": 27,
            "service_tier": "standard",
        },
    }
    return _dump(_envelope(rng, "assistant", message=message, requestId=f"req_011{rng.getrandbits(90):022x}"))


def _tool_result(rng: random.Random, text: str, result: dict[str, Any]) -> bytes:
    tool_id = f"toolu_01{rng.getrandbits(100):025x}"
    block = {"tool_use_id": tool_id, "type": "tool_result", "content": text, "is_error": False}
    message = {"role": "user", "content": [block]}
    return _dump(_envelope(rng, "user", message=message, toolUseResult=result))


def _sources() -> Iterator[tuple[str, str]]:
    """Real Python code, deterministic order: the interpreter's own standard library."""
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py")):
        yield str(path), path.read_text(encoding="utf-8", errors="replace")


def _fake_secrets(rng: random.Random) -> list[str]:
    """A few secrets in the shapes they leak in (built at runtime: no literal in the repo)."""
    alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

    def pick(n: int, alphabet: str = alnum) -> str:
        return "".join(rng.choice(alphabet) for _ in range(n))

    return [
        "export GITHUB_TOKEN=" + "gh" + "p_" + pick(36),
        "AWS_ACCESS_KEY_ID=" + "AK" + "IA" + pick(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"),
        'DATABASE_URL="postgres://app:' + pick(20) + '@db.internal:5432/app"',
        "curl -H 'Authorization: Bearer " + pick(40) + "' https://api.example.com",
        "OPENAI_API_KEY=" + "s" + "k-proj-" + pick(64),
    ]


def synthetic(size: int, seed: int = 7) -> bytes:
    """About `size` bytes of transcript lines mixing code, prose, shell output and a few secrets."""
    rng = random.Random(seed)
    secrets = _fake_secrets(rng)
    out: list[bytes] = []
    total = 0
    sources = _sources()
    n = 0
    while total < size:
        try:
            path, code = next(sources)
        except StopIteration:
            sources = _sources()
            continue
        code = code[:60_000]
        n += 1
        lines = [
            _assistant(rng, {"type": "thinking", "thinking": PROSE * 3, "signature": _signature(rng)}),
            _assistant(
                rng,
                {
                    "type": "tool_use",
                    "id": f"toolu_01{n:024d}",
                    "name": "Read",
                    "input": {"file_path": path},
                    "caller": {"type": "direct"},
                },
            ),
            _tool_result(
                rng,
                code,
                {
                    "type": "text",
                    "file": {"filePath": path, "content": code, "numLines": code.count("\n"), "startLine": 1},
                },
            ),
            _assistant(rng, {"type": "text", "text": PROSE * 2}),
            _tool_result(rng, _git_log(rng), {"stdout": _git_log(rng), "stderr": "", "interrupted": False}),
        ]
        if n % 40 == 0:
            secret = secrets[(n // 40) % len(secrets)]
            lines.append(_tool_result(rng, secret, {"stdout": secret, "stderr": "", "interrupted": False}))
        for line in lines:
            out.append(line)
            total += len(line)
    return b"".join(out)


def _signature(rng: random.Random) -> str:
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    return "Eq" + "".join(rng.choice(alphabet) for _ in range(600)) + "=="


def _git_log(rng: random.Random) -> str:
    rows = [f"{rng.getrandbits(160):040x} fix: handle session {uuid.UUID(int=rng.getrandbits(128))}" for _ in range(20)]
    return "\n".join(rows) + "\n===== 214 passed, 3 skipped in 4.21s =====\n"


def from_file(path: Path, size: int) -> bytes:
    raw = path.read_bytes()
    if not raw.endswith(b"\n"):
        raw += b"\n"
    return raw * max(1, size // max(1, len(raw)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path)
    parser.add_argument("--mb", type=float, default=20.0)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    size = int(args.mb * 1_000_000)
    data = from_file(args.path, size) if args.path else synthetic(size)
    redactor = Redactor()
    best, result = float("inf"), None
    for _ in range(args.repeat):
        started = time.perf_counter()
        result = redactor.redact_bytes(data)
        best = min(best, time.perf_counter() - started)
    assert result is not None
    report = {
        "bytes": len(data),
        "lines": data.count(b"\n"),
        "seconds": round(best, 4),
        "mb_per_s": round(len(data) / best / 1e6, 1),
        "redactions": result.total,
        "by_kind": result.counts,
        "changed_lines": len(result.changed_lines),
    }
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
