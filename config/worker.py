"""The Celery worker's own behaviour around the broker (docs/deployment.md "Probes", docs/scaling.md).

- Liveness from a local file, not a broker round-trip: the main process touches
  ``SESSIONLEDGER_WORKER_HEARTBEAT_FILE`` every ``HEARTBEAT_SECONDS`` from a thread, for as long as its
  main thread runs, so a Redis outage (the worker waiting to reconnect) does not fail the probe, and a
  worker whose main thread ended or whose process is gone does. ``python -m config.worker`` is the probe:
  exit 0 while the file is fresh.
- On every connection to the broker (the first and each after an outage) the worker sends
  ``sessions.republish``: what was uploaded while the broker was down is queued within seconds of its
  return, not at the next periodic sweep.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from pathlib import Path
from typing import Any

from celery import bootsteps

logger = logging.getLogger(__name__)
HEARTBEAT_SECONDS = 5.0
STALE_AFTER_SECONDS = 6 * HEARTBEAT_SECONDS  # the probe's verdict; several missed beats, not one slow one


def _beat(path: Path, stop: threading.Event) -> None:
    main = threading.main_thread()
    while main.is_alive() and not stop.is_set():
        try:
            path.touch()
        except OSError as exc:
            logger.warning("worker heartbeat not written to %s: %s", path, exc)
        stop.wait(HEARTBEAT_SECONDS)


def start_heartbeat(**_: Any) -> threading.Event:
    """``worker_init`` (the main worker process, before it connects): start touching the file."""
    from django.conf import settings

    path = Path(settings.SESSIONLEDGER_WORKER_HEARTBEAT_FILE)
    path.parent.mkdir(parents=True, exist_ok=True)
    stop = threading.Event()
    threading.Thread(target=_beat, args=(path, stop), name="heartbeat", daemon=True).start()
    return stop


def alive(path: Path, now: float | None = None) -> bool:
    try:
        age = (time.time() if now is None else now) - path.stat().st_mtime
    except OSError:
        return False
    return age < STALE_AFTER_SECONDS


class Republish(bootsteps.StartStopStep):  # type: ignore[misc,unused-ignore]  # celery: no hints
    """A consumer step: started each time the consumer has (re)connected to the broker."""

    requires = {"celery.worker.consumer.tasks:Tasks"}

    def start(self, c: Any) -> None:
        try:
            c.app.send_task("sessions.republish", priority=0)
        except Exception as exc:  # the broker left again: the next connection sends it
            logger.warning("republish not sent: %s", exc)


def connect(app: Any) -> None:
    from celery import signals

    signals.worker_init.connect(start_heartbeat, weak=False)
    app.steps["consumer"].add(Republish)


def main() -> int:
    from config.variables import load_or_exit

    path = Path(load_or_exit()["SESSIONLEDGER_WORKER_HEARTBEAT_FILE"])
    if alive(path):
        return 0
    print(f"sessionledger worker: no heartbeat in {path} for {STALE_AFTER_SECONDS:.0f} s", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
