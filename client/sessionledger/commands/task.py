"""`sessionledger task start ID` / `task finish ID --status complete|rejected|abandoned`."""

from __future__ import annotations

import argparse
import os

from sessionledger import tasks
from sessionledger.commands.capture import add_transcript_options, find_transcript, upload_now


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("task", help="mark where a task starts, capture it when it finishes")
    actions = parser.add_subparsers(title="actions", metavar="<action>", required=True)
    start = actions.add_parser("start", help="mark the current point of the conversation as the task's start")
    start.add_argument("task_id")
    add_transcript_options(start)
    start.set_defaults(func=run_start)
    finish = actions.add_parser("finish", help="capture the task's conversation with its final status")
    finish.add_argument("task_id")
    finish.add_argument("--status", choices=tasks.STATUSES, required=True)
    add_transcript_options(finish)
    finish.add_argument("--no-upload", action="store_true", help="only queue it; the next sync uploads it")
    finish.set_defaults(func=run_finish)


def run_start(options: argparse.Namespace) -> int:
    transcript = find_transcript(options)
    mark = tasks.mark_start(options.task_id, transcript, os.getcwd())
    print(f"Task {options.task_id} starts at byte {mark['offset']} of {transcript}.")
    return 0


def run_finish(options: argparse.Namespace) -> int:
    transcript = find_transcript(options)
    entry = tasks.finish(options.task_id, options.status, transcript, os.getcwd())
    if entry is None:
        print(f"Nothing to capture for task {options.task_id}.")
        return 0
    print(f"Captured task {options.task_id} ({options.status}).")
    return 0 if options.no_upload else upload_now(entry)
