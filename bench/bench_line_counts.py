"""How long the uploader takes to count the lines of a big commit's files (attribution's
``line_counts``), against asking git for each blob as ``commit:path``.

git resolves each ``commit:path`` by walking the trees again, so a commit of many files in one
directory costs a time quadratic in the directory's size; ``line_counts`` asks for the blobs by the
ids the commit's raw diff names. Both ways must count the same lines (checked here).

    .venv/bin/python bench/bench_line_counts.py [--files 10040]

Prints one JSON object (seconds, best of three for ``line_counts``, one run of the old way).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

from sessionledger import attribution_capture, gitmeta


def _by_path(repo: str, sha: str, paths: list[str]) -> dict[str, int]:
    """The former way: one ``git cat-file --batch`` of ``sha:path`` lines."""
    return attribution_capture.batch_line_counts(repo, {path: f"{sha}:{path}" for path in paths})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=10_040)
    args = parser.parse_args()
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com"}
    env |= {"GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.com"}
    with tempfile.TemporaryDirectory() as folder:
        repo = Path(folder)
        subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
        (repo / "gen").mkdir()
        paths = [f"gen/f{n:05}.txt" for n in range(args.files)]
        for n, path in enumerate(paths):
            (repo / path).write_text("line\n" * (1 + n % 3))
        subprocess.run(["git", "add", "-A"], cwd=repo, check=True, env=env)
        subprocess.run(["git", "commit", "-q", "-m", "generated"], cwd=repo, check=True, env=env)
        sha = gitmeta.git(str(repo), "rev-parse", "HEAD").strip()
        timings = []
        for _ in range(3):
            started = time.perf_counter()
            counts = attribution_capture.line_counts(str(repo), sha, paths)
            timings.append(time.perf_counter() - started)
        started = time.perf_counter()
        former = _by_path(str(repo), sha, paths)
        by_path = time.perf_counter() - started
    assert counts == former and len(counts) == args.files
    print(
        json.dumps(
            {
                "files": args.files,
                "line_counts_seconds": round(min(timings), 3),
                "by_path_seconds": round(by_path, 3),
            }
        )
    )


if __name__ == "__main__":
    main()
