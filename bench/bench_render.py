"""CPU time of writing the markup of a session page, without the request around it.

    .venv/bin/python bench/bench_render.py [--turns 25] [--output-lines 330] [--repeat 40]

The page bench's session (``bench_session_page.transcript``) is parsed and grouped into pages once;
then page 1 is presented (Markdown, tool views, highlighting: ``frontend.session_page.present``) and its cards
written (``frontend.session_page.render``), ``--repeat`` times. ``cards`` times writing the cards alone;
``present_and_cards`` both, the Markdown memo cleared each time as for a page nobody has rendered.
The page benches carry the database, storage and middleware too, and on a shared machine their
noise hides a few milliseconds; this one isolates the markup step they contain, to compare the
ways of writing it (docs/design.md: templates). ``*_cpu`` are the same steps in this process's CPU
time, which a busy machine inflates far less than the wall clock: compare two trees with them.

Prints one JSON object (best and median of N).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable

from bench_session_page import timed, transcript
from djangobench import setup


def cpu_timed(repeat: int, work: Callable[[], object]) -> dict[str, float]:
    """``timed`` in CPU time (``time.process_time``): another process's load does not count."""
    work()
    timings = []
    for _ in range(repeat):
        start = time.process_time()
        work()
        timings.append(time.process_time() - start)
    return {"best_ms": round(min(timings) * 1000, 2), "median_ms": round(statistics.median(timings) * 1000, 2)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--turns", type=int, default=25)
    parser.add_argument("--output-lines", type=int, default=330)
    parser.add_argument("--repeat", type=int, default=40)
    args = parser.parse_args(argv)
    setup()
    from frontend.session_page.conversation import build_cards, paginate
    from frontend.session_page.markdown import render_memo
    from frontend.session_page.present import present
    from frontend.session_page.render import Where, cards_html
    from sessionledger.core.formats import parse_transcript

    messages = parse_transcript(transcript(args.turns, args.output_lines)).to_document()["messages"]
    paged = paginate(build_cards(messages))
    where = Where("/p/bench/s/session", "bench")
    cards = paged.page(1)
    present(cards, "")

    def present_and_cards() -> None:
        render_memo.cache_clear()
        page = paged.page(1)
        present(page, "")
        cards_html(page, where)

    figures = {
        "messages": len(messages),
        "page_cards": len(cards),
        "html_bytes": len(cards_html(cards, where)),
        "cards": timed(args.repeat, lambda: cards_html(cards, where)),
        "present_and_cards": timed(args.repeat, present_and_cards),
        "cards_cpu": cpu_timed(args.repeat, lambda: cards_html(cards, where)),
        "present_and_cards_cpu": cpu_timed(args.repeat, present_and_cards),
    }
    json.dump(figures, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
