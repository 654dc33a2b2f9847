"""The session page: how a session's conversation becomes HTML, for the session page, the shared
page and the whole conversation of an agent session (docs/ui.md). A request walks these modules in
this order:

1. ``load`` — the content document, from the cache or the bucket (``document_load``), and the active
   filters as link parameters (``filter_params``).
2. ``page_cache`` — a page already rendered, or the filter's layout kept from an earlier request, so
   that a request costs its page, not the session.
3. ``reading`` — the filters applied, the layout (which messages show, their pages, turns, steps)
   and one page's cards; ``conversation`` groups messages into cards and cuts pages; ``steps`` outlines
   the work (edit bursts, commands, sub-agents).
4. ``present`` — each card's text made ready: Markdown (``markdown``), tool calls and their results
   (``tools``), search hits marked.
5. ``render`` — the cards and panels as HTML through the Jinja2 macros (``frontend.templating``).
6. ``whole`` — the conversation of an agent session stitched across its segments, with the commit
   boundaries between them, built on the steps above.
"""
