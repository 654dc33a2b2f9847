"""Recall, precision and throughput of the redactor (`Redactor().redact_bytes`).

Recall: a corpus built from public secret-scanner test material (bench/redaction_corpus.py records
each sample's source) is placed the ten ways a secret reaches a Claude Code transcript (prompt,
assistant text, thinking, Bash command/output, Read output, Edit input/result, Write input/result);
a secret counts as redacted only when no piece of it survives in any copy (numbered Read text,
`toolUseResult`, `structuredPatch`, …). Precision: scanners' false-positive examples must come
back unchanged, the text around each secret must survive, the real transcripts in
../shared/fixtures/transcripts must come back byte-identical, and no line may stop being JSON.

Speed (targets, CPU time on one core: >= 80 MB/s on transcripts, >= 20 MB/s on the secret-dense
corpus; redaction runs on every captured segment in the detached uploader):
~20 MB of synthetic Claude Code 2.1.x lines whose text is real code (the Python standard library
as Read/Bash outputs), prose, git/pytest output with SHAs and uuids, thinking blocks with
signatures, and a few fake secrets; with a path, that JSONL file repeated up to the size. Wall
time is the best of `--repeat` runs; CPU time is reported too because this machine is shared
(the load average is printed).

    .venv/bin/python bench/bench_redact.py [transcript.jsonl] [--mb 20] [--repeat 5] [--misses 20]

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import sysconfig
import time
import uuid
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "client"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import redaction_corpus as corpus
import redaction_outside as outside
from redaction_heldout import HELD_OUT, HeldOut

from sessionledger.core.redaction import RULE_SPECS, Redactor

_DEFAULT_FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "transcripts"
FIXTURES = Path(os.environ.get("SESSIONLEDGER_FIXTURES") or _DEFAULT_FIXTURES)
# corpus categories by report bucket; every other category is a provider token
BUCKETS = {
    "private_key": "private_key",
    "generic": "generic",
    "password": "generic",
    "url": "generic",
    "auth": "generic",
}

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


def throughput(redactor: Redactor, data: bytes, repeat: int) -> dict[str, Any]:
    """Best wall time and best CPU time over `repeat` runs."""
    best_wall = best_cpu = float("inf")
    result = None
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        result = redactor.redact_bytes(data)
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    assert result is not None
    return {
        "bytes": len(data),
        "lines": data.count(b"\n"),
        "seconds": round(best_wall, 4),
        "mb_per_s": round(len(data) / best_wall / 1e6, 1),
        "cpu_seconds": round(best_cpu, 4),
        "mb_per_cpu_s": round(len(data) / max(best_cpu, 1e-9) / 1e6, 1),
        "redactions": result.total,
        "by_kind": result.counts,
        "changed_lines": len(result.changed_lines),
    }


def _ratio(hit: int, total: int) -> float:
    return round(100.0 * hit / total, 2) if total else 100.0


def recall(redactor: Redactor, misses_shown: int) -> dict[str, Any]:
    """Run every corpus case; recall by placement, kind and category; over-redaction; invalid JSON."""
    by: dict[str, dict[str, list[int]]] = {k: defaultdict(lambda: [0, 0]) for k in ("placement", "kind", "category")}
    total = [0, 0]
    context_pieces = [0, 0]  # [kept, total]
    invalid = 0
    misses: list[dict[str, str]] = []
    sources: set[str] = set()
    corpus_bytes: list[bytes] = []
    for case in corpus.cases():
        sources.add(case.sample.source)
        corpus_bytes.append(case.data)
        result = redactor.redact_bytes(case.data)
        for line in result.data.splitlines():
            try:
                json.loads(line)
            except ValueError:
                invalid += 1
        output = "\n".join(corpus.strings(result.data))
        for secret in case.example.secrets:
            ok = not corpus.leaked(secret, output, case.example.text)
            for key, value in (
                ("placement", case.placement),
                ("kind", case.sample.kind),
                ("category", case.sample.category),
            ):
                by[key][value][0] += ok
                by[key][value][1] += 1
            total[0] += ok
            total[1] += 1
            if not ok and len(misses) < misses_shown:
                misses.append({"kind": case.sample.kind, "placement": case.placement, "text": case.example.text[:160]})
        kept, pieces = _context_kept(case.example, output)
        context_pieces[0] += kept
        context_pieces[1] += pieces
    strict = {
        f"{category}/{placement}": _ratio(*_cell(redactor, category, placement))
        for category in corpus.STRICT_CATEGORIES
        for placement in corpus.PLACEMENTS
    }
    negatives = _negatives(redactor)
    return {
        "secrets": total[1],
        "samples": len(corpus.samples()),
        "kinds": len(by["kind"]),
        "sources": len(sources),
        "recall_percent": _ratio(*total),
        "by_placement": {k: _ratio(*v) for k, v in sorted(by["placement"].items())},
        "by_category": {k: _ratio(*v) for k, v in sorted(by["category"].items())},
        "by_kind": {k: _ratio(*v) for k, v in sorted(by["kind"].items())},
        "strict_categories_min_percent": min(strict.values()),
        "strict_cells_below_100": {k: v for k, v in strict.items() if v < 100},
        "context_kept_percent": _ratio(*context_pieces),
        "false_positive_samples_changed": negatives,
        "invalid_json_lines": invalid,
        "misses": misses,
        "corpus_bytes": b"".join(corpus_bytes),
    }


def _source_key(source: str) -> str:
    """The material a sample was derived from: a scanner's test suite, or one document."""
    material = source.split("; context:")[0]
    for scanner in ("gitleaks", "detect-secrets"):
        if scanner in material:
            return scanner
    return material.split(":")[0].strip().lower()


def _cited_by_kind() -> dict[str, str]:
    cited: dict[str, list[str]] = defaultdict(list)
    for spec in RULE_SPECS:
        cited[spec.rule.kind].append(spec.source.lower())
    return {kind: " ".join(sources) for kind, sources in cited.items()}


def _held_out_cases(seed: int = 20261126) -> Iterator[tuple[HeldOut, str, Any, bytes]]:
    """(sample, placement, example, data) for every held-out sample in every placement."""
    rng = random.Random(seed)
    for sample in HELD_OUT:
        example = sample.make(rng)
        for name in corpus.PLACEMENTS:
            yield sample, name, example, corpus.dump(corpus.placement(name, example.text, rng))


def generalisation(redactor: Redactor, misses_shown: int) -> dict[str, Any]:
    """Recall on own-source samples (a rule of the sample's kind cites the material the sample was
    derived from) against held-out ones (no rule of its kind cites it), over the corpus and
    redaction_heldout.py, by bucket: private keys, provider tokens, generic (passwords, assignments,
    URLs, headers). A held-out sample whose source a rule now cites counts as own-source."""
    cited = _cited_by_kind()
    tally: dict[str, dict[str, list[int]]] = {
        "own_source": defaultdict(lambda: [0, 0]),
        "held_out": defaultdict(lambda: [0, 0]),
    }
    misses: list[dict[str, str]] = []

    def score(split: str, bucket: str, example: Any, data: bytes, kind: str, placement: str) -> None:
        output = "\n".join(corpus.strings(redactor.redact_bytes(data).data))
        for secret in example.secrets:
            ok = not corpus.leaked(secret, output, example.text)
            for key in (bucket, "all"):
                tally[split][key][0] += ok
                tally[split][key][1] += 1
            if not ok and split == "held_out" and len(misses) < misses_shown:
                misses.append({"kind": kind, "placement": placement, "text": example.text[:160]})

    for case in corpus.cases():
        sample = case.sample
        split = "own_source" if _source_key(sample.source) in cited.get(sample.kind, "") else "held_out"
        bucket = BUCKETS.get(sample.category, "provider")
        score(split, bucket, case.example, case.data, sample.kind, case.placement)
    for sample, placement, example, data in _held_out_cases():
        split = "own_source" if _source_key(sample.source) in cited.get(sample.kind, "") else "held_out"
        score(split, sample.category, example, data, sample.kind, placement)
    out: dict[str, Any] = {
        split: {key: {"recall_percent": _ratio(*v), "secrets": v[1]} for key, v in sorted(t.items())}
        for split, t in tally.items()
    }
    out["held_out_misses"] = misses
    return out


_CELLS: dict[tuple[str, str], list[int]] = {}


def _cell(redactor: Redactor, category: str, placement: str) -> tuple[int, int]:
    """(redacted, total) secrets of one category in one placement."""
    if not _CELLS:
        for case in corpus.cases():
            if case.sample.category not in corpus.STRICT_CATEGORIES:
                continue
            output = "\n".join(corpus.strings(redactor.redact_bytes(case.data).data))
            cell = _CELLS.setdefault((case.sample.category, case.placement), [0, 0])
            for secret in case.example.secrets:
                cell[0] += not corpus.leaked(secret, output, case.example.text)
                cell[1] += 1
    hit, n = _CELLS.get((category, placement), [0, 0])
    return hit, n


def _context_kept(example: Any, output: str) -> tuple[int, int]:
    """How many pieces (>= 6 characters) of the text around the secrets survive."""
    text = example.text
    for secret in example.secrets:
        text = text.replace(secret, "\0")
    pieces = [p.strip() for chunk in text.split("\0") for p in chunk.split("\n") if len(p.strip()) >= 6]
    return sum(1 for p in pieces if p in output), len(pieces)


def _negatives(redactor: Redactor) -> dict[str, Any]:
    rng = random.Random(7)
    changed, total, examples = 0, 0, []
    for text, _source in corpus.NEGATIVES:
        for name in corpus.PLACEMENTS:
            data = corpus.dump(corpus.placement(name, text, rng))
            total += 1
            if redactor.redact_bytes(data).data != data:
                changed += 1
                if len(examples) < 5:
                    examples.append(f"{name}: {text[:80]}")
    return {"changed": changed, "total": total, "examples": examples}


def fixtures(redactor: Redactor) -> dict[str, Any]:
    """The real transcripts must come back byte-identical."""
    if not FIXTURES.is_dir():
        return {"skipped": "no fixtures"}
    files = sorted(FIXTURES.glob("*.jsonl"))
    changed = 0
    for path in files:
        data = path.read_bytes()
        changed += len(redactor.redact_bytes(data).changed_lines)
    return {"files": len(files), "changed_lines": changed}


def adversarial(redactor: Redactor) -> dict[str, Any]:
    """CPU seconds of the worst repetitions for each rule family (tests/client/test_redact_rules.py's
    ADVERSARIAL, ~200 KB each): the slowest of them, which a backtracking rule would turn into minutes."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.client.test_redact_rules import ADVERSARIAL

    timings = []
    for text in ADVERSARIAL:
        line = json.dumps({"type": "user", "message": {"content": text}}).encode()
        started = time.process_time()
        redactor.redact_bytes(line)
        redactor.redact_text(text)
        timings.append(time.process_time() - started)
    return {
        "inputs": len(timings),
        "slowest_ms": round(max(timings) * 1000, 1),
        "total_ms": round(sum(timings) * 1000, 1),
    }


def outside_material(redactor: Redactor, misses_shown: int) -> dict[str, Any]:
    """Recall on the development corpus read from other scanners' test material (redaction_outside.py),
    each sample in the ten placements: by source, by placement, by source and placement; and how
    many of their false-positive examples come back altered."""
    rng = random.Random(20261129)
    by: dict[str, dict[str, list[int]]] = {k: defaultdict(lambda: [0, 0]) for k in ("source", "placement", "cell")}
    negatives: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    misses: list[dict[str, str]] = []
    negative_examples: list[str] = []
    for sample in outside.samples():
        for name in corpus.PLACEMENTS:
            data = corpus.dump(corpus.placement(name, sample.text, rng))
            result = redactor.redact_bytes(data)
            if not sample.secrets:
                negatives[sample.source][0] += result.data != data
                negatives[sample.source][1] += 1
                if result.data != data and len(negative_examples) < misses_shown:
                    negative_examples.append(f"{sample.source}/{sample.kind}/{name}: {sample.text[:100]}")
                continue
            output = "\n".join(corpus.strings(result.data))
            ok = all(not corpus.leaked(secret, output, sample.text) for secret in sample.secrets)
            for key, value in (("source", sample.source), ("placement", name), ("cell", f"{sample.source}/{name}")):
                by[key][value][0] += ok
                by[key][value][1] += 1
            if not ok and len(misses) < misses_shown:
                miss = {"source": sample.source, "kind": sample.kind, "placement": name, "text": sample.text[:160]}
                misses.append(miss)
    total = [sum(v[0] for v in by["source"].values()), sum(v[1] for v in by["source"].values())]
    return {
        "samples": len(outside.samples()),
        "recall_percent": _ratio(*total),
        "by_source": {k: {"recall_percent": _ratio(*v), "secrets": v[1]} for k, v in sorted(by["source"].items())},
        "by_placement": {k: _ratio(*v) for k, v in sorted(by["placement"].items())},
        "by_source_placement": {k: _ratio(*v) for k, v in sorted(by["cell"].items())},
        "negatives_altered": {k: {"changed": v[0], "total": v[1]} for k, v in sorted(negatives.items())},
        "negatives_altered_examples": negative_examples,
        "misses": misses,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path)
    parser.add_argument("--mb", type=float, default=20.0)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--misses", type=int, default=20, help="how many missed secrets to list")
    parser.add_argument("--no-corpus", action="store_true", help="throughput only")
    args = parser.parse_args(argv)
    size = int(args.mb * 1_000_000)
    data = from_file(args.path, size) if args.path else synthetic(size)
    started = time.process_time()
    redactor = Redactor()  # once per uploader run: every rule's regexes and the merged scans compiled
    built = time.process_time() - started
    report: dict[str, Any] = {"load_average": [round(x, 2) for x in os.getloadavg()], "cpus": os.cpu_count()}
    report["build_cpu_seconds"] = round(built, 3)
    report["throughput"] = throughput(redactor, data, args.repeat)
    report["fixtures"] = fixtures(redactor)
    report["adversarial"] = adversarial(redactor)
    if not args.no_corpus:
        measured = recall(redactor, args.misses)
        corpus_data = measured.pop("corpus_bytes")
        report["corpus"] = measured
        report["generalisation"] = generalisation(redactor, args.misses)
        report["outside_material"] = outside_material(redactor, args.misses)
        report["corpus_throughput"] = {
            k: v for k, v in throughput(redactor, corpus_data, max(1, args.repeat // 2)).items() if k != "by_kind"
        }
    report["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
