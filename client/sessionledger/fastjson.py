"""JSON on the hook's path without importing `json`.

`import json` pulls in `re` and `enum` (json.decoder and json.encoder compile patterns at import).
The hook runs after every Bash call, so it uses the C scanner and encoder that `json` itself is
built on (`_json.make_scanner`, `_json.make_encoder`), falling back to `json` on an interpreter
that lacks them; bench/bench_hook.py prints what this saves the no-op hook
(`hook_noop_json_cost_ratio`). Nothing else touches `_json`: callers use `loads` and `dumps`.
Output is compact, key-sorted and ASCII-only (lone surrogates in paths survive).
"""

from __future__ import annotations

_WHITESPACE = " \t\n\r"


class _Context:
    """The attributes `_json.make_scanner` reads from `json.JSONDecoder`."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int

    @staticmethod
    def parse_constant(name: str) -> float:
        return float(name.replace("Infinity", "inf"))


def _refuse(value: object) -> object:
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def _c_codec() -> tuple[object, object] | tuple[None, None]:
    try:
        import _json
    except ImportError:
        return None, None
    scanner = _json.make_scanner(_Context())  # type: ignore[arg-type]  # reads a decoder's attributes
    # (markers, default, encoder, indent, key_separator, item_separator, sort_keys, skipkeys, allow_nan)
    encoder = _json.make_encoder({}, _refuse, _json.encode_basestring_ascii, None, ":", ",", True, False, True)
    return scanner, encoder


_SCAN, _ENCODE = _c_codec()


def dumps(value: object) -> str:
    """Compact JSON with sorted keys (equal data → equal text)."""
    if _ENCODE is None:
        import json

        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    return "".join(_ENCODE(value, 0))  # type: ignore[operator]


def loads(text: str) -> object:
    """Decode one JSON document; ValueError when it is not exactly one."""
    if _SCAN is None:
        import json

        return json.loads(text)
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = _SCAN(text, start)  # type: ignore[operator]
    except StopIteration:
        raise ValueError("not JSON") from None
    if text[end:].strip(_WHITESPACE):
        raise ValueError("extra data after JSON")
    return value
