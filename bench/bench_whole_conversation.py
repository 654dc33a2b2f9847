"""CPU time of the whole-conversation page's reading against one session page of the same bytes.

    .venv/bin/python bench/bench_whole_conversation.py [--turns 25] [--output-lines 420] [--segments 5] [--repeat 10]

The page bench's session (``bench_session_page.transcript``; the defaults give ~3.5 MB) is cut into
``--segments`` segments at line boundaries (as commits cut a real one, mid-turn) and each parsed to its own
content document. ``single`` reads page 1 of the uncut document as the session page does;
``whole`` joins the segment documents, reads page 1 with the commit boundaries and builds the overview
(``frontend.session_page.whole``), which the whole-conversation page does per request. Decoding the stored documents
is left out of both (the page cache keeps them).

Prints one JSON object (best and median of N).
"""

from __future__ import annotations

import argparse
import json
import sys

from bench_session_page import timed, transcript
from djangobench import setup


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--turns", type=int, default=25)
    parser.add_argument("--output-lines", type=int, default=420)
    parser.add_argument("--segments", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args(argv)
    setup()
    from frontend.forms import MessageFilterForm
    from frontend.session_page import whole
    from frontend.session_page.markdown import render_memo
    from frontend.session_page.reading import read
    from frontend.session_page.render import Where
    from sessionledger.core.formats import parse_transcript
    from sessions_app.models import Kind, Session

    raw = transcript(args.turns, args.output_lines)
    lines = raw.splitlines(keepends=True)
    size = -(-len(lines) // args.segments)
    chunks = [b"".join(lines[i : i + size]) for i in range(0, len(lines), size)]
    documents = [
        (
            Session(kind=Kind.CHECKPOINT, commit_hash=f"{n:040x}", commit_message=f"Commit {n}"),
            parse_transcript(chunk).to_document(),
        )
        for n, chunk in enumerate(chunks, start=1)
    ]
    uncut = parse_transcript(raw).to_document()
    form = MessageFilterForm({})
    form.is_valid()
    where = Where("/p/bench/s/session", "bench")

    def single() -> None:
        render_memo.cache_clear()
        read(uncut, form, where=where, params={})

    def joined() -> None:
        render_memo.cache_clear()
        document, segments = whole.join(documents)
        links = {segment.number: ("/p/bench/s/session", "/p/bench/c/sha") for segment in segments}
        read(document, form, where=where, params={}, write=whole.BoundaryWriter(segments, links))
        whole.overview_html(whole.overview(document, segments), {})

    figures = {
        "raw_bytes": len(raw),
        "messages": len(uncut["messages"]),
        "segments": len(documents),
        "single": timed(args.repeat, single),
        "whole": timed(args.repeat, joined),
    }
    json.dump(figures, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
