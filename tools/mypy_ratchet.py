"""`mypy --strict` as a ratchet: no package may gain strict errors, and the core has none.

`make lint` runs plain mypy (which must pass) and then this script, which runs mypy again with
`--strict` over the same files ([tool.mypy] in pyproject.toml), counts the errors per package and
compares the counts with tools/mypy_strict_baseline.txt. It fails when a count rises, when the
core (`sessionledger.core`) has any, and when a count falls below its baseline line: lower that
line (`python tools/mypy_ratchet.py --update` lowers every count that fell and raises none), so
that the next regression cannot hide in the slack.

    .venv/bin/python tools/mypy_ratchet.py [--update]

The strict run keeps its own cache (.mypy_cache/strict), so a second run is incremental.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "tools" / "mypy_strict_baseline.txt"
CACHE_DIR = ".mypy_cache/strict"
# Path prefix -> package, most specific first: a file counts for the first prefix it starts with.
PACKAGES: tuple[tuple[str, str], ...] = (
    ("client/sessionledger/core/redaction/", "sessionledger.core.redaction"),
    ("client/sessionledger/core/", "sessionledger.core"),
    ("client/sessionledger/", "sessionledger"),
    ("config/", "config"),
    ("projects/", "projects"),
    ("sessions_app/", "sessions_app"),
    ("governance/", "governance"),
    ("integrations/", "integrations"),
    ("frontend/", "frontend"),
)
MUST_BE_ZERO = frozenset({"sessionledger.core"})
OTHER = "other"  # an error in a file outside these packages (it has no allowance)
_ERROR = re.compile(r"^(?P<path>[^:\n]{1,500}):\d+(?::\d+)?: error: ")


def package_of(path: str) -> str:
    normal = path.replace("\\", "/")
    return next((name for prefix, name in PACKAGES if normal.startswith(prefix)), OTHER)


def count_errors(output: str) -> tuple[Counter[str], dict[str, list[str]]]:
    """Errors per package in mypy's output, and the error lines themselves."""
    counts: Counter[str] = Counter()
    lines: dict[str, list[str]] = {}
    for line in output.splitlines():
        match = _ERROR.match(line)
        if match:
            package = package_of(match.group("path"))
            counts[package] += 1
            lines.setdefault(package, []).append(line)
    return counts, lines


def read_baseline(path: Path = BASELINE) -> dict[str, int]:
    """`package count` per line; `#` starts a comment."""
    baseline: dict[str, int] = {}
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        name, _, count = line.rpartition(" ")
        if not name.strip() or not count.isdigit():
            raise SystemExit(f"{path}:{number}: expected 'package count', got {raw!r}")
        baseline[name.strip()] = int(count)
    return baseline


def write_baseline(baseline: dict[str, int], path: Path = BASELINE) -> None:
    header = path.read_text(encoding="utf-8").split("\n\n", 1)[0] if path.exists() else ""
    body = "".join(f"{name} {baseline[name]}\n" for _, name in PACKAGES if name in baseline)
    path.write_text(f"{header}\n\n{body}" if header else body, encoding="utf-8")


def allowance(name: str, baseline: dict[str, int]) -> int:
    return 0 if name in MUST_BE_ZERO else baseline.get(name, 0)


def compare(counts: Counter[str], baseline: dict[str, int]) -> tuple[list[str], list[str], dict[str, int]]:
    """(rises, falls, the baseline lowered to the counts that fell); a core error is a rise."""
    rises: list[str] = []
    falls: list[str] = []
    lowered = dict(baseline)
    for name in [*(name for _, name in PACKAGES), OTHER]:
        found, allowed = counts.get(name, 0), allowance(name, baseline)
        if found > allowed:
            rises.append(name)
        elif found < allowed:
            falls.append(name)
            lowered[name] = found
    return rises, falls, lowered


def run_mypy() -> str:
    command = [sys.executable, "-m", "mypy", "--strict", "--cache-dir", CACHE_DIR, "--no-error-summary"]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    if result.returncode not in (0, 1):  # 2: mypy itself failed (bad configuration, crash)
        sys.stderr.write(result.stdout + result.stderr)
        raise SystemExit(f"mypy --strict failed to run (exit {result.returncode})")
    return result.stdout


def report(counts: Counter[str], baseline: dict[str, int], rises: list[str], falls: list[str]) -> str:
    out = []
    for name in rises:
        why = "the core must have none" if name in MUST_BE_ZERO else f"the baseline allows {baseline.get(name, 0)}"
        out.append(f"{name}: {counts[name]} mypy --strict errors, {why}: fix the new ones")
    for name in falls:
        out.append(
            f"{name}: {counts.get(name, 0)} mypy --strict errors, the baseline still allows {baseline[name]}: "
            f"lower its line in {BASELINE.relative_to(ROOT)} (`{Path(__file__).name} --update` does)"
        )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="mypy --strict as a ratchet over the server and the client.")
    parser.add_argument("--update", action="store_true", help="lower the baseline's counts that fell (never raise)")
    options = parser.parse_args(argv)
    counts, lines = count_errors(run_mypy())
    baseline = read_baseline()
    rises, falls, lowered = compare(counts, baseline)
    if options.update and falls:
        write_baseline(lowered)
        print(f"lowered {', '.join(falls)} in {BASELINE.relative_to(ROOT)}")
        falls = []
    for name in rises:
        print("".join(f"{line}\n" for line in lines[name]), end="")
    if rises or falls:
        print(report(counts, baseline, rises, falls))
        return 1
    print("mypy --strict: " + ", ".join(f"{name} {counts.get(name, 0)}" for _, name in PACKAGES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
