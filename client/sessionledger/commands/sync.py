"""`sessionledger sync`: upload the queue now, with progress.

Without `--wait`, every waiting segment is tried once (backoff timers are ignored: the user asked).
With `--wait`, transient failures are retried (honouring Retry-After) until the queue is empty or
nothing more can be sent now — logged out, rejected, no project, or the time is up — and the
command says which. Exit status 0 means the queue is empty.

While a background uploader holds the upload lock, plain `sync` does not wait for it: it says which
segment that uploader is sending and how far it got, and returns (`--wait` waits for it, up to
`--timeout`). A holder that died left no lock (`flock`), so `sync` simply takes over.
"""

from __future__ import annotations

import argparse

from sessionledger import queue
from sessionledger.commands.common import ProgressBar, short
from sessionledger.uploader import Mode, activity
from sessionledger.uploader import run as upload


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("sync", help="upload queued segments now")
    parser.add_argument("--wait", action="store_true", help="retry until the queue is empty or stuck")
    parser.add_argument("--timeout", type=float, default=300, help="with --wait: give up after this many seconds")
    parser.add_argument("--retry-rejected", action="store_true", help="also resend segments the server rejected")
    parser.set_defaults(func=run)


def run(options: argparse.Namespace) -> int:
    waiting = queue.entries()
    if not waiting:
        print("Queue is empty: nothing to upload.")
        return 0
    bar = ProgressBar(len(waiting))
    summary = upload(
        Mode.SYNC,
        wait=options.wait,
        retry_rejected=options.retry_rejected,
        timeout=options.timeout,
        progress=lambda entry, outcome: bar.step(f"{entry.describe()} {outcome}"),
    )
    bar.close()
    if summary.busy:
        doing = activity()
        if doing is None:  # it finished between our try and this look
            print("Another upload was in progress; run `sessionledger sync` again.")
        else:
            print(f"Not waiting: {doing.describe()}. It goes on by itself; `sessionledger sync --wait` waits for it.")
    return report(summary)


def report(summary: object) -> int:
    sent, duplicates = len(summary.sent), len(summary.duplicates)  # type: ignore[attr-defined]
    already = f", {duplicates} already there." if duplicates else "."
    print(f"Uploaded {sent} segment{'s' if sent != 1 else ''}{already}")
    left = queue.entries()
    if not left:
        print("Queue is empty.")
        return 0
    print(f"{len(left)} segment{'s' if len(left) != 1 else ''} still waiting — nothing more can be sent now:")
    for entry in left:
        status = entry.status()
        if entry.waiting_for_commit:
            print(f"  {entry.describe()}: {queue.AWAITING}")
            continue
        print(f"  {entry.describe()}: {status.get('state')} — {short(status.get('reason'), 120) or 'not tried yet'}")
    return 1
