"""Attribution's matching on its own: every tool that writes files, the commit's diff as git
prints it (odd paths, notebooks, deletions), the short-line rule, and hostile input."""

from __future__ import annotations

import json
import subprocess
from functools import partial
from pathlib import Path

from sessionledger.attribution_capture import commit_diff, line_counts, record_for_commit
from sessionledger.core import attribution, attribution_record
from tests.client.attribution_helpers import validate_agent_trace
from tests.client.transcript_builder import TranscriptBuilder
from tests.work import assert_linear


def repo_with(tmp_path: Path, files: dict[str, str]) -> tuple[Path, str]:
    repo = tmp_path / "r"
    repo.mkdir()
    run = lambda *a: subprocess.run(["git", *a], cwd=repo, check=True, capture_output=True)  # noqa: E731
    run("init", "-q", "-b", "main")
    run("config", "user.email", "t@example.com")
    run("config", "user.name", "t")
    (repo / "keep.txt").write_text("x\n")
    run("add", "-A")
    run("commit", "-q", "-m", "init")
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    (repo / "keep.txt").unlink()
    run("add", "-A")
    run("commit", "-q", "-m", "work")
    sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    return repo, sha


def owners_of(record: dict, path: str) -> dict[int, str]:
    """line → step uuid or "human"."""
    found = {}
    for entry in record["files"]:
        if entry["path"] == path:
            for conversation in entry["conversations"]:
                who = attribution_record.step_of(conversation) or "human"
                for span in conversation["ranges"]:
                    found.update(dict.fromkeys(range(span["start_line"], span["end_line"] + 1), who))
    return found


def test_every_file_writing_tool_is_recognised(tmp_path) -> None:
    notebook = {"cells": [{"cell_type": "code", "source": ["import numpy as np\n", "values = np.ones(3)\n"]}]}
    repo, sha = repo_with(
        tmp_path,
        {
            "multi.py": "alpha = 'first edit'\nbeta = 'second edit'\n",
            "notes.ipynb": json.dumps(notebook, indent=1) + "\n",
            "script.sh": "echo written by a heredoc\nexit 0\n",
            "failed.py": "this_call_failed = True\n",
        },
    )
    b = TranscriptBuilder(cwd=str(repo)).prompt("do it all")
    b.tool_call(
        "MultiEdit",
        {
            "file_path": f"{repo}/multi.py",
            "edits": [
                {"old_string": "", "new_string": "alpha = 'first edit'"},
                {"old_string": "b", "new_string": "beta = 'second edit'"},
            ],
        },
    )
    b.tool_call(
        "NotebookEdit",
        {"notebook_path": f"{repo}/notes.ipynb", "new_source": "import numpy as np\nvalues = np.ones(3)"},
    )
    b.tool_call("Bash", {"command": f"cat > {repo}/script.sh <<'EOF'\necho written by a heredoc\nexit 0\nEOF"})
    b.tool_call("Write", {"file_path": f"{repo}/failed.py", "content": "this_call_failed = True\n"}, is_error=True)
    record = record_for_commit(str(repo), sha, {"transcript": b.build()}, agent="claude-code")

    validate_agent_trace(record)
    steps = record["metadata"]["dev.sessionledger"]["steps"]
    tools = {path: {steps[s]["tool"] for s in owners_of(record, path).values() if s != "human"} for path in
             ("multi.py", "notes.ipynb", "script.sh", "failed.py")}  # fmt: skip
    assert tools == {
        "multi.py": {"MultiEdit"},
        "notes.ipynb": {"NotebookEdit"},
        "script.sh": {"Bash"},
        "failed.py": set(),
    }
    notebook_lines = (repo / "notes.ipynb").read_text().splitlines()
    by_agent = [notebook_lines[n - 1].strip() for n, who in owners_of(record, "notes.ipynb").items() if who != "human"]
    assert by_agent == ['"import numpy as np\\n",', '"values = np.ones(3)\\n"']
    assert record["metadata"]["dev.sessionledger"]["line_counts"]["multi.py"] == 2


def test_an_edits_anchor_context_is_not_credited_to_it() -> None:
    assert attribution.inserted("a\nb\n", "a\nNEW\nb\n") == ["NEW"]
    assert attribution.inserted("", "x\ny") == ["x", "y"]
    assert attribution.inserted("same", "same") == []


def test_the_diff_parser_handles_odd_paths_deletions_and_missing_newlines(tmp_path) -> None:
    repo, sha = repo_with(tmp_path, {"dir/with space.py": "a = 1\nb = 2", "tab\there.txt": "t\n", "é.md": "accent\n"})
    added = attribution.added_lines(commit_diff(str(repo), sha))
    assert {path: [(ln.number, ln.text) for ln in lines] for path, lines in added.items()} == {
        "dir/with space.py": [(1, "a = 1"), (2, "b = 2")],
        "tab\there.txt": [(1, "t")],
        "é.md": [(1, "accent")],
    }  # keep.txt was deleted: nothing added there
    assert line_counts(str(repo), sha, ["dir/with space.py", "é.md", "gone.txt"]) == {"dir/with space.py": 2, "é.md": 1}


def test_a_closing_brace_goes_to_the_call_beside_it_not_to_any_call_that_wrote_one() -> None:
    lines = [attribution.Line.of(n, t) for n, t in enumerate(["int f() {", "  return 1;", "}", "", "}"], start=1)]
    step = attribution.Step("s1", "Write", "/r/a.c", ["int f() {", "  return 1;", "}"], 0)
    [owners] = attribution.attribute({"a.c": lines}, [step]).values()
    assert [o.uuid if o else None for o in owners] == ["s1", "s1", "s1", None, None]


def test_a_closing_brace_goes_with_the_block_it_closes_whoever_wrote_the_lines_beside_it() -> None:
    text = ["int f() {", "  return 1;  // reviewed", "}", "", "int g() {", "  return 2;", "}", "", "int h() {", "}"]
    lines = [attribution.Line.of(n, t) for n, t in enumerate(text, start=1)]
    step = attribution.Step("s1", "Write", "/r/a.c", ["int f() {", "  return 1;", "}", "", "int h() {", "}"], 0)
    [owners] = attribution.attribute({"a.c": lines}, [step]).values()
    # f's brace is the agent's though the human changed the line above it; g (the human's
    # function) keeps its brace; the blank line before h goes with h, the later code.
    assert [o.uuid if o else None for o in owners] == ["s1", None, "s1", "s1", None, None, None, "s1", "s1", "s1"]


def _hostile_command(n: int) -> str:
    return "x" + " <<A > f" * n + "\n" + "y\n" * n  # one long line of heredoc markers, then n lines


def _hostile_diff(n: int) -> str:
    return f"+++ b/f\n@@ -0,0 +1,{n} @@\n" + "+" + "(" * 2 * n + "\n" + "+}\n" * (n - 1)


def _hostile_nesting(n: int) -> dict[str, list[attribution.Line]]:
    """Ever deeper blocks, then their closing braces: every block open at once."""
    text = [" " * i + f"v{i} = {{" for i in range(n)] + [" " * i + "}" for i in reversed(range(n))]
    return {"f": [attribution.Line.of(number, line) for number, line in enumerate(text, start=1)]}


def test_hostile_commands_and_lines_stay_linear() -> None:
    # Work, not time (tests/work.py): lines run and C calls made at n and 2n grow ~2x, not ~4x.
    assert_linear(lambda n: partial(attribution.heredoc_writes, _hostile_command(n)), 2_000, c_calls=True)
    assert_linear(lambda n: partial(attribution.added_lines, _hostile_diff(n)), 2_000, c_calls=True)
    step = attribution.Step("s", "Write", "f", ["}"], 0)
    assert_linear(lambda n: partial(attribution.attribute, _hostile_nesting(n), [step]), 1_000, c_calls=True)
    # The full size, where only a regex scanning a whole long line (one C call) could still hang.
    [(target, body)] = attribution.heredoc_writes(_hostile_command(20_000))
    assert target == "f" and body == ["y"] * 20_000 + [""]  # an unclosed heredoc takes the rest
    assert len(attribution.added_lines(_hostile_diff(50_000))["f"]) == 50_000
    assert attribution.heredoc_writes("cat <<'EOF' > /tmp/out.txt\nhello\nEOF\n") == [("/tmp/out.txt", ["hello"])]


def test_why_and_blame_print_no_terminal_control_sequences() -> None:
    from sessionledger.commands.blame import _format
    from sessionledger.commands.why import render

    evil = "\x1b]0;owned\x07\x1b[2J\x9b31m"
    answer = {
        "found": True,
        "contributor": "ai",
        "model": f"anthropic/{evil}",
        "step": {"ref": f"t1·{evil}"},
        "url": f"https://x/{evil}",
        "prompt": {"text": f"do it {evil}"},
        "tool_call": {"name": evil, "input": {"new_string": evil}},
    }
    out = render(answer, "a" * 40, "f.py:1", "x = 1") + _format(
        {"commit": "a" * 40, "contributor": "ai", "model": evil, "step": evil, "line": 1, "text": "x"}
    )
    assert not any(ch in out for ch in "\x1b\x07\x9b")
    assert "do it ]0;owned" in out


def test_a_sub_agents_edits_are_attributed_to_its_own_step_and_model(tmp_path) -> None:
    repo, sha = repo_with(tmp_path, {"lib.py": "def helper():\n    return 'from the sub-agent'\n"})
    main = TranscriptBuilder(cwd=str(repo)).prompt("delegate the helper")
    sub = main.subagent("a1b2c3").user("write lib.py")
    sub.tool_call(
        "Write", {"file_path": f"{repo}/lib.py", "content": "def helper():\n    return 'from the sub-agent'\n"}
    )
    main.task("helper", "write lib.py", agent_id="a1b2c3")

    record = record_for_commit(str(repo), sha, {"transcript": main.build(), "a1b2c3": sub.build()}, agent="claude-code")

    [conversation] = [c for f in record["files"] for c in f["conversations"]]
    assert conversation["contributor"] == {"type": "ai", "model_id": "anthropic/claude-haiku-4-5"}
    assert conversation["ranges"] == [
        {"start_line": 1, "end_line": 2, "content_hash": conversation["ranges"][0]["content_hash"]}
    ]
    step = record["metadata"]["dev.sessionledger"]["steps"][attribution_record.step_of(conversation)]
    assert step["tool"] == "Write"


# --- moves and partial-line edits ---------------------------------------------------------------


def git_in(repo: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t"}
    done = subprocess.run(
        ["git", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
        env={**env, "GIT_COMMITTER_EMAIL": "t@example.com", "PATH": "/usr/bin:/bin"},
    )
    return done.stdout.strip()


MODULE = "def load(path):\n    with open(path) as handle:\n        return handle.read()\n"


def test_a_file_the_agent_wrote_then_moved_in_a_shell_call_keeps_its_lines(tmp_path) -> None:
    repo, sha = repo_with(tmp_path, {"lib/loader.py": MODULE, "lib/extra.py": "EXTRA = 'moved too'\n"})
    b = TranscriptBuilder(cwd=str(repo)).prompt("write a loader, then move it into lib/")
    b.tool_call("Write", {"file_path": f"{repo}/loader.py", "content": MODULE})
    b.tool_call("Write", {"file_path": f"{repo}/extra.py", "content": "EXTRA = 'moved too'\n"})
    b.tool_call("Bash", {"command": f"mkdir -p lib && git mv loader.py lib/loader.py && cd {repo} && mv extra.py lib"})

    record = record_for_commit(str(repo), sha, {"transcript": b.build()}, agent="claude-code")

    steps = record["metadata"]["dev.sessionledger"]["steps"]
    assert {steps[s]["tool"] for s in owners_of(record, "lib/loader.py").values()} == {"Write"}
    assert len(owners_of(record, "lib/loader.py")) == 3
    assert set(owners_of(record, "lib/extra.py").values()) != {"human"}
    assert record["metadata"]["dev.sessionledger"]["human_lines"] == 0


def test_a_move_that_failed_moves_no_attribution(tmp_path) -> None:
    repo, sha = repo_with(tmp_path, {"lib/loader.py": MODULE})
    b = TranscriptBuilder(cwd=str(repo)).prompt("write a loader")
    b.tool_call("Write", {"file_path": f"{repo}/loader.py", "content": MODULE})
    b.tool_call("Bash", {"command": "mv loader.py lib/loader.py"}, is_error=True, result="No such file")

    record = record_for_commit(str(repo), sha, {"transcript": b.build()}, agent="claude-code")

    assert set(owners_of(record, "lib/loader.py").values()) == {"human"}


def test_a_rename_git_detects_keeps_the_lines_of_the_old_name(tmp_path) -> None:
    """Written and committed under one name; renamed by hand (no call says so) with one line changed."""
    repo, _ = repo_with(tmp_path, {"loader.py": MODULE + "\n\ndef size(path):\n    return len(load(path))\n"})
    b = TranscriptBuilder(cwd=str(repo)).prompt("write a loader")
    b.tool_call("Write", {"file_path": f"{repo}/loader.py", "content": (repo / "loader.py").read_text()})
    git_in(repo, "mv", "loader.py", "reading.py")
    text = (repo / "reading.py").read_text().replace("return len(load(path))", "return len(load(path)) or None")
    (repo / "reading.py").write_text(text)
    git_in(repo, "commit", "-qam", "rename")
    sha = git_in(repo, "rev-parse", "HEAD")

    record = record_for_commit(str(repo), sha, {"transcript": b.build()}, agent="claude-code")

    owners = owners_of(record, "reading.py")
    assert owners[7] == "human"  # the line changed by hand after the rename
    assert [n for n, who in owners.items() if who == "human"] == [7]


def test_a_replace_all_rename_inside_lines_credits_the_edit(tmp_path) -> None:
    before = "def compute_total(values):\n    return sum(values)\n\nresult = compute_total([1, 2])\n"
    after = before.replace("compute_total", "compute_sum")
    repo, sha = repo_with(tmp_path, {"calc.py": after + "print('a human line')\n"})
    b = TranscriptBuilder(cwd=str(repo)).prompt("rename compute_total to compute_sum")
    b.tool_call("Write", {"file_path": f"{repo}/calc.py", "content": before})
    b.tool_call(
        "Edit",
        {
            "file_path": f"{repo}/calc.py",
            "old_string": "compute_total",
            "new_string": "compute_sum",
            "replace_all": True,
        },
    )

    record = record_for_commit(str(repo), sha, {"transcript": b.build()}, agent="claude-code")

    owners = owners_of(record, "calc.py")
    steps = record["metadata"]["dev.sessionledger"]["steps"]
    assert steps[owners[1]]["tool"] == steps[owners[4]]["tool"] == "Edit"
    assert steps[owners[2]]["tool"] == "Write" and owners[5] == "human"


def test_shell_moves_are_read_as_the_shell_reads_them() -> None:
    assert attribution.shell_moves("mv -f a.py 'b c.py' && git mv x y/") == [("a.py", "b c.py"), ("x", "y/x")]
    assert attribution.shell_moves("mv a b dir; echo mv\nmv 'unbalanced") == [("a", "dir/a"), ("b", "dir/b")]
    assert attribution.shell_moves("git commit -m 'mv a b'") == []
