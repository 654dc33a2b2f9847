"""How long the PostToolUse hook keeps Claude Code waiting, and the git post-commit hook keeps
`git commit` waiting, against a bare interpreter start.

The hook runs after every Bash call, so its no-op path (HEAD did not move) must cost about as
much as starting Python (target ≤ 1.3× `python -c pass`), and so must a commit capture, whatever
the turn's size (target ≤ 1.3× at 0.05, 5 and 20 MB deltas): the hook only reads HEAD, writes the
queue intent (offsets) and the state durably and detaches the uploader, which slims, redacts,
attributes and gzips afterwards. The capture path imports no `typing`, `re` (`shlex`),
`collections` or `json`: together they were most of what a capture added to an interpreter start;
nor `datetime` or `zlib`, nor, for a Claude Code transcript, any agent adapter or the version module,
in either hook: the post-commit hook asks each agent's layout module (`core/<agent>_layout.py`)
for the active sessions (tests/client/test_hook_contract.py). What is left is about one module per
step that must happen before the hook returns (some 25, ~0.1–0.15 ms each, three of them C
extensions loaded from files in a python.org/pyenv build: `_json`, `fcntl`, `binascii`), three
fsyncs (the intent, the queue directory, the state: ~0.6–0.9 ms of CPU together), the observation of
HEAD (written in place: a temporary file and a rename cost ~0.25 ms more) and the fork of the uploader.
The no-op path reads its payload with `sessionledger.fastjson` (the C codec `json` is built on)
rather than `json`, whose import brings `re` and `enum`: `hook_noop_json_cost_ratio` is the no-op
hook with `json` imported over the same hook without, the figure that keeps that trick
(docs/design.md §10: a trick earns 20 %).

The post-commit hook (`init --git-hook`, run as git runs it: `sh .git/hooks/post-commit` in the
working tree) has the same two targets: no active agent session (it lists the agents' folders and
returns), and an active Claude Code session with a fresh delta of each size (it queues a checkpoint).
It used to import every agent adapter to find the active sessions: 1.47–1.50× against the
PostToolUse capture's 1.34–1.36× (CPU, `--runs 11`, a venv with only the client, load 3.5–7).
Without them, the two run back to back on a shared 2-core machine (CPU ratios at 0.05 / 5 / 20 MB):

    --runs 21, mean of 3 rounds, load 2.5–10   before             after
      post-commit                              1.35 / 1.36 / 1.34  1.27 / 1.27 / 1.24
      PostToolUse                              1.26 / 1.25 / 1.27  1.22 / 1.23 / 1.27
    --runs 41, load 3–7
      post-commit                              1.41 / 1.38 / 1.38  1.29 / 1.31 / 1.29
      PostToolUse                              1.33 / 1.27 / 1.27  1.32 / 1.34 / 1.22
    --runs 21, load 1–2
      post-commit                              1.32 / 1.32 / 1.34  1.20 / 1.17 / 1.21
      PostToolUse                              1.18 / 1.23 / 1.19  1.19 / 1.18 / 1.16

A round's figure moves by about ±0.05 with the load (10–20 captures per size): on a quiet machine
both captures are below the 1.3 target; under a load of 3–7 they sit at it, not clearly below.

    .venv/bin/python bench/bench_hook.py [--runs 21] [--mb 0.05 5 20] [--python /path/to/venv/bin/python]

Each capture is timed against `python -c pass` run just before it (wall and CPU: CPU is what other
load on a shared machine disturbs least); the medians of both ratios are printed per delta size
under `commit_capture`. The 5 MB size (else the first) also fills the flat keys (`hook_commit_*`,
`post_commit_capture_*`) that `scaling_table.py` reads.

The hook is timed **as installed**: `sessionledger init` runs in the sandbox repository and the
PostToolUse command it wrote is run the way Claude Code runs it, `sh -c "<command>"`, against
`sh -c "<python> -c pass"`. For comparison the same no-op is timed through the forms `init` no longer
writes: the console script (pip's wrapper imports `re`) and `python -m sessionledger`.

`--python` measures another installation of the client (e.g. a `pipx install ./client`, whose
interpreter starts faster than this editable development venv).

Prints one JSON object. The baseline is the same interpreter (`sys.executable -c pass`, same
site-packages start-up) and, for reference, `python3 -c pass` from PATH. The client package is
byte-compiled first, as pip/pipx do on install (environments with PYTHONDONTWRITEBYTECODE would
otherwise measure the compiler on every run).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SESSION = "5d1c0c8e-3f6a-4b7e-9a51-2b8f0d4c6e17"


CPU: list[float] = []  # CPU milliseconds (user + system) of each timed run, in order


def timed(
    command: list[str], *, stdin: bytes = b"", env: dict[str, str] | None = None, cwd: Path | None = None
) -> float:
    """Wall milliseconds until the process exits; its CPU time goes to `CPU` (less sensitive to
    other load on the machine than wall time)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(
        command, input=stdin, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    wall = (time.perf_counter() - started) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
    return wall


def paired_ms(runs: int, baseline: list[str], command: list[str], **kwargs: object) -> tuple[float, ...]:
    """Medians (wall, then CPU) of the baseline and the command, run alternately so that load on
    the machine affects both alike."""
    timed(baseline)
    timed(command, **kwargs)  # warm the page cache
    base, measured, base_cpu, cpu = [], [], [], []
    for _ in range(runs):
        base.append(timed(baseline))
        base_cpu.append(CPU[-1])
        measured.append(timed(command, **kwargs))
        cpu.append(CPU[-1])
    return statistics.median(base), statistics.median(measured), statistics.median(base_cpu), statistics.median(cpu)


def line(kind: str, **fields: object) -> bytes:
    record = {
        "type": kind,
        "sessionId": SESSION,
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
        **fields,
    }
    return json.dumps(record, separators=(",", ":")).encode() + b"\n"


def turn_bytes(megabytes: float) -> bytes:
    """A turn of ~`megabytes`: a prompt, then Bash calls whose outputs are long logs."""
    out = [line("user", message={"role": "user", "content": "run the whole test suite and fix what fails"})]
    size, i = 0, 0
    output = "".join(f"tests/test_mod{n}.py::test_case_{n} PASSED [{n % 100:3d}%]\n" for n in range(600))
    while size < megabytes * 1024 * 1024:
        use = {"type": "tool_use", "id": f"toolu_{i}", "name": "Bash", "input": {"command": "pytest -v"}}
        out.append(line("assistant", message={"role": "assistant", "content": [use]}))
        result = {"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": output}
        out.append(line("user", message={"role": "user", "content": [result]}, toolUseResult={"stdout": output}))
        size += len(out[-1]) + len(out[-2])
        i += 1
    return b"".join(out)


class Sandbox:
    """A HOME with a git repository, a transcript, and the environment a hook sees."""

    def __init__(self, root: Path) -> None:
        self.repo = root / "repo"
        self.repo.mkdir()
        self.transcript = root / "home" / ".claude" / "projects" / "-repo" / f"{SESSION}.jsonl"
        self.transcript.parent.mkdir(parents=True)
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("SESSIONLEDGER_")},
            "HOME": str(root / "home"),
            "XDG_CONFIG_HOME": str(root / "home" / ".config"),
            "XDG_STATE_HOME": str(root / "home" / ".state"),
            "GIT_AUTHOR_NAME": "Bench",
            "GIT_AUTHOR_EMAIL": "bench@example.com",
            "GIT_COMMITTER_NAME": "Bench",
            "GIT_COMMITTER_EMAIL": "bench@example.com",
        }
        self.git("init", "-q", "-b", "main")
        self.git("commit", "-q", "--allow-empty", "-m", "start")
        self.transcript.write_bytes(line("user", message={"role": "user", "content": "hello"}))

    def git(self, *args: str) -> None:
        subprocess.run(["git", *args], cwd=self.repo, env=self.env, check=True, capture_output=True)

    def payload(self, command: str) -> bytes:
        return json.dumps(
            {
                "session_id": SESSION,
                "transcript_path": str(self.transcript),
                "cwd": str(self.repo),
                "hook_event_name": "PostToolUse",
                "tool_name": "Bash",
                "tool_input": {"command": command},
                "tool_response": {"stdout": "", "stderr": "", "interrupted": False, "isImage": False},
                "tool_use_id": "toolu_bench",
            }
        ).encode()

    def queue_settled(self, timeout: float = 300) -> float:
        """Seconds until every queued segment is prepared and no uploader holds its lock: the
        detached work of the last capture, which must not compete with the next measurement."""
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "client"))
        from sessionledger.fsutil import is_locked

        state = Path(self.env["XDG_STATE_HOME"]) / "sessionledger"
        started = time.perf_counter()
        while time.perf_counter() - started < timeout:
            entries = [e for e in (state / "queue").iterdir() if (e / "intent.json").exists()]
            if all((e / "local.json").exists() for e in entries) and not is_locked(str(state / "uploader.lock")):
                break
            time.sleep(0.01)
        return time.perf_counter() - started


class Paired:
    """Captures timed each against the `python -c pass` run just before it: medians of the
    figures and of the pair-by-pair ratios (a drift in the machine's speed moves both alike)."""

    def __init__(self) -> None:
        self.base_ms: list[float] = []
        self.base_cpu: list[float] = []
        self.hook_ms: list[float] = []
        self.hook_cpu: list[float] = []
        self.detached_s: list[float] = []

    def run(self, python: str, command: list[str], **kwargs: object) -> None:
        self.base_ms.append(timed(baseline(python)))
        self.base_cpu.append(CPU[-1])
        self.hook_ms.append(timed(command, **kwargs))  # type: ignore[arg-type]
        self.hook_cpu.append(CPU[-1])

    def report(self) -> dict[str, float]:
        def median(values: list[float]) -> float:
            return round(statistics.median(values), 2)

        return {
            "python_c_pass_ms": median(self.base_ms),
            "capture_ms": median(self.hook_ms),
            "ratio": median([h / b for h, b in zip(self.hook_ms, self.base_ms, strict=True)]),
            "python_c_pass_cpu_ms": median(self.base_cpu),
            "capture_cpu_ms": median(self.hook_cpu),
            "cpu_ratio": median([h / max(b, 0.1) for h, b in zip(self.hook_cpu, self.base_cpu, strict=True)]),
            "detached_prepare_s": median(self.detached_s) if self.detached_s else 0.0,
        }


def bench_commits(box: Sandbox, python: str, hook: list[str], runs: int, megabytes: float) -> dict[str, float]:
    """The PostToolUse hook after a commit with a fresh `megabytes` delta (until it exits), paired
    with `python -c pass`, and the detached work that follows (until the segment is prepared)."""
    delta = turn_bytes(megabytes)
    paired = Paired()
    for n in range(runs):
        with box.transcript.open("ab") as handle:
            handle.write(delta)
        box.git("commit", "-q", "--allow-empty", "-m", f"commit {n}")
        paired.run(python, hook, stdin=box.payload(f"git commit -m 'commit {n}'"), env=box.env)
        paired.detached_s.append(box.queue_settled())
    return paired.report()


def bench_json_cost(box: Sandbox, python: str, runs: int) -> dict[str, float]:
    """Medians of the no-op hook as the installed script starts it, paired with the same hook after
    `import json`: what reading the payload with the standard `json` would add."""
    launch = "from sessionledger.cli import main; main()"
    hook = [python, "-c", launch, "hook", "post-tool-use"]
    with_json = [python, "-c", f"import json; {launch}", "hook", "post-tool-use"]
    payload = box.payload("ls -la")
    timed(hook, stdin=payload, env=box.env)
    fast, plain, fast_cpu, plain_cpu = [], [], [], []
    for _ in range(runs):
        fast.append(timed(hook, stdin=payload, env=box.env))
        fast_cpu.append(CPU[-1])
        plain.append(timed(with_json, stdin=payload, env=box.env))
        plain_cpu.append(CPU[-1])
    return {
        "hook_noop_with_json_ms": round(statistics.median(plain), 1),
        "hook_noop_json_cost_ratio": round(statistics.median(plain) / statistics.median(fast), 2),
        "hook_noop_json_cost_cpu_ratio": round(statistics.median(plain_cpu) / statistics.median(fast_cpu), 2),
    }


def install_git_hook(box: Sandbox, python: str) -> list[str]:
    """`init --git-hook`'s post-commit script in the sandbox repository; the command git runs."""
    install = f"githook.install({str(box.repo)!r}, hookinstall.client_command())"
    code = f"from sessionledger import githook, hookinstall; {install}"
    subprocess.run([python, "-c", code], check=True, env=box.env)
    return ["sh", str(box.repo / ".git" / "hooks" / "post-commit")]


def bench_post_commit(box: Sandbox, python: str, runs: int, sizes: list[float]) -> dict[str, object]:
    """Medians: the post-commit hook with no active session (paired with `python -c pass`), and
    after a commit with a fresh delta of each size in an active Claude Code session."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "client"))
    from sessionledger.core.claude_layout import encode_project_dir

    hook = install_git_hook(box, python)
    # where Claude Code keeps this repository's sessions: what the post-commit hook looks at
    transcript = Path(box.env["HOME"]) / ".claude" / "projects" / encode_project_dir(str(box.repo)) / "active.jsonl"
    transcript.parent.mkdir(parents=True, exist_ok=True)
    transcript.write_bytes(box.transcript.read_bytes())
    idle = time.time() - 3 * 3600  # older than the active window: the no-op path
    os.utime(transcript, (idle, idle))
    box.git("commit", "-q", "--allow-empty", "-m", "no session")
    base, noop, base_cpu, noop_cpu = paired_ms(runs, baseline(python), hook, env=box.env, cwd=box.repo)
    by_size: dict[str, dict[str, float]] = {}
    captures = 0
    for megabytes in sizes:
        delta = turn_bytes(megabytes)
        paired = Paired()
        for n in range(runs):
            with transcript.open("ab") as handle:
                handle.write(delta)
            os.rename(box.repo / ".git" / "hooks" / "post-commit", box.repo / ".git" / "hooks" / "off")
            box.git("commit", "-q", "--allow-empty", "-m", f"by hand {megabytes} {n}")  # the hook is timed alone
            os.rename(box.repo / ".git" / "hooks" / "off", box.repo / ".git" / "hooks" / "post-commit")
            paired.run(python, hook, env=box.env, cwd=box.repo)
            paired.detached_s.append(box.queue_settled())
            captures += 1
        by_size[str(megabytes)] = paired.report()
    queued = list((Path(box.env["XDG_STATE_HOME"]) / "sessionledger" / "queue").glob("*/intent.json"))
    assert sum(b"active.jsonl" in p.read_bytes() for p in queued) == captures, "the hook captured nothing"
    first = by_size[str(5.0 if 5.0 in sizes else sizes[0])]  # as `hook_commit_*`
    return {
        "post_commit_noop_ms": round(noop, 1),
        "post_commit_noop_ratio": round(noop / base, 2),
        "post_commit_noop_cpu_ratio": round(noop_cpu / base_cpu, 2),
        "post_commit_capture_ms": first["capture_ms"],
        "post_commit_capture_ratio": first["ratio"],
        "post_commit_capture_cpu_ratio": first["cpu_ratio"],
        "by_size": by_size,
    }


def installed_hook(box: Sandbox, python: str) -> list[str]:
    """`sessionledger init` in the sandbox repository; the PostToolUse command it wrote, run as
    Claude Code runs it."""
    subprocess.run([python, "-m", "sessionledger", "init"], cwd=box.repo, env=box.env, check=True, capture_output=True)
    settings = json.loads((box.repo / ".claude" / "settings.local.json").read_text())
    return ["sh", "-c", settings["hooks"]["PostToolUse"][0]["hooks"][0]["command"]]


def baseline(python: str) -> list[str]:
    return ["sh", "-c", f"{shlex.quote(python)} -c pass"]


def older_forms(python: str) -> dict[str, list[str]]:
    """The commands `init` wrote before the launcher, for comparison."""
    forms = {"python_m": f"{shlex.quote(python)} -m sessionledger hook post-tool-use"}
    script = Path(python).parent / "sessionledger"
    if script.exists():
        forms["console_script"] = f"{shlex.quote(str(script))} hook post-tool-use"
    return {name: ["sh", "-c", command] for name, command in forms.items()}


def byte_compile_client(python: str) -> None:
    code = (
        "import compileall, os, sessionledger; compileall.compile_dir(os.path.dirname(sessionledger.__file__), quiet=1)"
    )
    subprocess.run([python, "-c", code], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--mb", type=float, nargs="+", default=[0.05, 5.0, 20.0], help="delta sizes of the captures")
    parser.add_argument("--python", default=sys.executable, help="interpreter with the client installed")
    options = parser.parse_args()
    python = options.python
    byte_compile_client(python)
    root = Path(tempfile.mkdtemp(prefix="bench-hook-"))
    try:
        box = Sandbox(root)
        hook = installed_hook(box, python)
        timed(hook, stdin=box.payload("ls"), env=box.env)  # first sight of the repository
        base, noop, base_cpu, noop_cpu = paired_ms(
            options.runs, baseline(python), hook, stdin=box.payload("ls -la"), env=box.env
        )
        older = {}
        for name, command in older_forms(python).items():
            form_base, form_ms, _, _ = paired_ms(
                options.runs, baseline(python), command, stdin=box.payload("ls"), env=box.env
            )
            older[f"{name}_noop_ratio"] = round(form_ms / form_base, 2)
        json_cost = bench_json_cost(box, python, options.runs)
        python3 = shutil.which("python3")
        python3_ms = statistics.median(timed([python3, "-c", "pass"]) for _ in range(5)) if python3 else None
        commits = {str(mb): bench_commits(box, python, hook, max(5, options.runs // 2), mb) for mb in options.mb}
        post_commit = bench_post_commit(box, python, max(5, options.runs // 2), options.mb)
        shown = 5.0 if 5.0 in options.mb else options.mb[0]  # the size the flat keys (and the doc's table) show
    finally:
        shutil.rmtree(root, ignore_errors=True)
    result = {
        "python": python,
        "hook_command": hook[-1],
        "runs": options.runs,
        "python_c_pass_ms": round(base, 1),
        "python_c_pass_cpu_ms": round(base_cpu, 1),
        "python3_on_path_c_pass_ms": round(python3_ms, 1) if python3_ms else None,
        "hook_noop_ms": round(noop, 1),
        "hook_noop_ratio": round(noop / base, 2),
        "hook_noop_cpu_ratio": round(noop_cpu / base_cpu, 2),
        **older,
        **json_cost,
        "hook_commit_delta_mb": shown,
        "hook_commit_ms": commits[str(shown)]["capture_ms"],
        "hook_commit_ratio": commits[str(shown)]["ratio"],
        "hook_commit_cpu_ratio": commits[str(shown)]["cpu_ratio"],
        "detached_prepare_s": commits[str(shown)]["detached_prepare_s"],
        **{key: value for key, value in post_commit.items() if key != "by_size"},
        "commit_capture": {
            "post_tool_use": commits,
            "post_commit": post_commit["by_size"],
        },
        "targets": {
            "hook_noop_ratio": 1.3,
            "hook_commit_ratio": 1.3,
            "post_commit_noop_ratio": 1.3,
            "post_commit_capture_ratio": 1.3,
            "commit_capture.*.*.ratio": 1.3,
        },
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
