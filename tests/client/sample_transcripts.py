"""A Claude Code session that uses every line type (docs/claude-code.md §1.2), built with
`TranscriptBuilder`: the one sample the format, slimming and page tests share."""

from __future__ import annotations

from tests.client.transcript_builder import TranscriptBuilder, image_block

AGENT_ID = "a2898e3"


def every_line_type() -> tuple[bytes, dict[str, bytes]]:
    """A three-turn session using every line type, plus one sub-agent file.

    Returns (main transcript bytes, {agent id: sub-agent bytes}), ready for
    `parse_transcript(raw, subagents=...)` or an upload in end-to-end tests.
    """
    b = TranscriptBuilder()
    b.file_history_snapshot().progress("hook_progress", hookEvent="SessionStart", advance=True)
    b.attachment(
        "hook_additional_context",
        hookName="SessionStart:startup",
        hookEvent="SessionStart",
        content=["Past sessions: none"],
    )
    b.prompt("Add a --verbose flag to the CLI", images=[image_block(size=12 * 1024)])
    b.thinking("The flag belongs in cli.py.").assistant_text("I'll look at the CLI first.")
    b.parallel_tools(
        [("Read", {"file_path": "/work/app/cli.py"}, "def main(): ..."), ("Grep", {"pattern": "argparse"}, "cli.py:1")]
    )
    b.new_response().tool_call(
        "Edit",
        {"file_path": "/work/app/cli.py", "old_string": "a", "new_string": "b"},
        result="The file was updated.",
        hook=True,
    )
    b.new_response().tool_call("Bash", {"command": "pytest -q"}, result="1 failed", is_error=True)
    b.new_response().task(
        "Check docs", "Find where flags are documented", agent_id=AGENT_ID, result="README.md documents flags."
    )
    b.new_response().assistant_text("Added --verbose; one test still fails.")
    b.turn_end().queue_operation("enqueue", "also update docs").queue_operation("remove")
    b.slash_command("compact", "keep the CLI details", stdout="Compacted")
    b.compact("The user asked for a --verbose flag.", trigger="manual")
    b.file_history_snapshot().prompt("Now update the README")
    b.tool_call("Write", {"file_path": "/work/app/README.md", "content": "# App"}, result="File created.")
    b.system("api_error", "API Error: overloaded", level="error")
    b.interrupt(for_tool_use=True).task_notification().hook_feedback()
    b.attachment("queued_command", prompt="and the changelog")
    b.bash_command("git status", stdout="clean")
    b.assistant_text("README updated.").turn_end()
    b.summary("Add verbose flag").bookkeeping("custom-title", customTitle="verbose flag").bookkeeping(
        "pr-link", url="https://example.com/pr/1"
    )
    b.attachment("hook_success", advance=False, hookName="Stop").broken()
    sub = b.subagent(AGENT_ID)
    sub.user("Find where flags are documented").tool_call("Grep", {"pattern": "--"}, result="README.md:3")
    sub.assistant_text("README.md documents flags.")
    return b.build(), {AGENT_ID: sub.build()}
