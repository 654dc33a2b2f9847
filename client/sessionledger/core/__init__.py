"""The code the server and the client share (docs/design.md, "The core"): transcript formats,
redaction, line attribution, list filters and remote names.

Standard library only, and it imports nothing else of `sessionledger`: the server depends on
this package and on no other part of the client, and `make lint` (import-linter) holds both
rules.
"""
