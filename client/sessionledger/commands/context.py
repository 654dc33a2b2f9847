"""`sessionledger context`: the digest the SessionStart hook gives the assistant (docs/design.md §6), for
the current branch and the files in play, printed for a person (or a script: `--json`)."""

from __future__ import annotations

import argparse
import os

from sessionledger.api import ApiError
from sessionledger.commands.common import api_error, client, load_config, print_json, project_for_cwd, terminal_safe


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("context", help="print the AI context digest for this branch and the files in play")
    parser.add_argument("--project", help="project slug (default: from the git remote)")
    parser.add_argument("--branch", help="default: the checked-out branch")
    parser.add_argument("--files", help="comma-separated paths (default: uncommitted files and the last commits')")
    parser.add_argument("--budget", type=int, help="characters (default: the `context_budget` setting)")
    parser.add_argument(
        "--prompts",
        action=argparse.BooleanOptionalAction,
        help="include teammates' prompts (default: the `context_prompts` setting)",
    )
    parser.add_argument("--json", action="store_true", help="print the API's JSON")
    parser.set_defaults(func=run)


def run(options: argparse.Namespace) -> int:
    from sessionledger import context

    config = load_config()
    api = client(config)
    slug = project_for_cwd(config, api, options.project)
    cwd = os.getcwd()
    branch = options.branch if options.branch is not None else context.current_branch(cwd)
    files = [f for f in options.files.split(",") if f] if options.files is not None else context.files_in_play(cwd)
    budget = options.budget if options.budget is not None else int(config["context_budget"])
    try:
        prompts = options.prompts if options.prompts is not None else bool(config["context_prompts"])
        digest = context.fetch(api, slug, branch=branch, files=files, budget=budget, prompts=prompts)
    except ApiError as exc:
        raise api_error(exc) from None
    if options.json:
        print_json(digest)
    elif digest.get("sessions"):
        print(terminal_safe(str(digest.get("text", ""))).rstrip("\n"))
    else:
        print(f"No earlier sessions in {slug} to show.")
    return 0
