"""The session list's filters are declared once (sessionledger.core.listfilters): the API implements each,
documents it with the same words, and the list page and ``sessionledger list`` offer each."""

from __future__ import annotations

import argparse

import pytest
from django.test import RequestFactory

from frontend.forms import SessionListForm
from sessionledger.commands import listing
from sessionledger.core.listfilters import FILTER_NAMES, HELP, SESSION_FILTERS
from sessions_app import filters
from sessions_app.filters import SessionFilter


def test_the_api_implements_exactly_the_declared_filters_with_their_help() -> None:
    assert set(SessionFilter.base_filters) == set(FILTER_NAMES)
    assert {name: f.extra["help_text"] for name, f in SessionFilter.base_filters.items()} == HELP


def test_a_filter_declared_but_not_implemented_stops_the_server_at_start_up(monkeypatch) -> None:
    monkeypatch.setattr(filters, "FILTER_NAMES", (*FILTER_NAMES, "model"))
    with pytest.raises(Exception, match="not implemented: \\['model'\\]"):
        filters._declared_once()


def test_the_list_page_offers_every_filter_in_the_declared_order() -> None:
    form = SessionListForm(RequestFactory().get("/").GET, authors=["a@example.com"])
    assert [field.name for field in form.filter_fields] == list(FILTER_NAMES)
    assert all(field.help_text == HELP[field.name] for field in form.filter_fields)


def test_the_list_page_passes_every_filter_to_the_api() -> None:
    given = {"branch": "main", "author": "a@example.com", "commit": "abcdef1", "task": "SL-1", "kind": "task"}
    given |= {
        "status": "complete",
        "since": "2026-02-01",
        "until": "2026-02-12",
        "files": "src/app.py",
        "q": "x",
        "pr": "7",
    }
    assert set(given) == set(FILTER_NAMES)  # this test names every filter
    form = SessionListForm(given, authors=["a@example.com"])
    assert form.is_valid(), form.errors
    assert set(form.api_filters()) == set(FILTER_NAMES) - {"q"}  # q: the page searches with snippets


def test_the_cli_has_an_option_per_filter() -> None:
    parser = argparse.ArgumentParser()
    listing.register(parser.add_subparsers())
    options = parser.parse_args(["list", *(f"--{f.name}=v" for f in SESSION_FILTERS)])
    assert all(getattr(options, name) in ("v", ["v"]) for name in FILTER_NAMES)
