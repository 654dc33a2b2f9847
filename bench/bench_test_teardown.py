"""What the suite pays after each transactional test: Django's flush against tests/emptying.py.

    .venv/bin/python bench/bench_test_teardown.py [--repeat 15]

A test that runs outside a rolled-back transaction (``transactional_db``, ``live_server``: the client's,
browser and end-to-end tests, about 480 of them) leaves rows that must go before the next test. Django's
``TransactionTestCase`` runs ``flush``: a TRUNCATE of every table, then ``post_migrate``, which writes every
content type and permission back (and, with two database logins, grants the runtime login its rights
again). tests/emptying.py deletes the rows of the tables that hold any instead. Each round here seeds the
same small world a test leaves (two projects, their members and tokens, two stored sessions with their
insights rows) in a database of its own, then empties it one way or the other, the two taking turns.

Prints one JSON object: the median and best milliseconds per way and the saving per test.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

# A database of its own: flushing the shared bench database would throw away the other benches' seeds.
os.environ.setdefault("SESSIONLEDGER_BENCH_DB", "sessionledger_bench_teardown")

from djangobench import setup, stored_session  # after the line above: it reads the name at import


def seed() -> list[str]:
    """The rows a typical transactional test leaves; the blob keys its sessions wrote."""
    from projects.models import Role
    from tests.factories import ProjectFactory, make_member, make_token

    keys: list[str] = []
    for name in ("acme", "globex"):
        project = ProjectFactory(slug=f"bench-{name}")
        admin = make_member(project, Role.ADMIN)
        make_member(project, Role.MEMBER)
        make_token(admin)
        session = stored_session(project, admin, b'{"type":"user","message":{"content":"hello"}}\n')
        keys += [key for key in (session.raw_storage_key, session.content_storage_key) if key]
    return keys


def timed(empty: Callable[[], None]) -> float:
    started = time.perf_counter()
    empty()
    return (time.perf_counter() - started) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    setup()
    from django.core.management import call_command

    from sessions_app import blobs
    from tests.emptying import empty_tables

    ways: dict[str, Callable[[], None]] = {
        # what TransactionTestCase's teardown runs (no available_apps: post_migrate is not inhibited)
        "django_flush": lambda: call_command("flush", interactive=False, verbosity=0, allow_cascade=False),
        "delete_rows": lambda: empty_tables("default"),
    }
    times: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(args.repeat):
        for name, empty in ways.items():  # taking turns: a shared machine's load drifts
            keys = seed()
            times[name].append(timed(empty))
            blobs.delete(*keys)
    result: dict[str, Any] = {"load_average": list(os.getloadavg()), "repeat": args.repeat}
    for name, taken in times.items():
        result[name] = {"median_ms": round(statistics.median(taken), 1), "best_ms": round(min(taken), 1)}
    flush, delete = (statistics.median(times[name]) for name in ways)
    result["saved_per_test_ms"] = round(flush - delete, 1)
    result["saved_fraction"] = round(1 - delete / flush, 3)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
