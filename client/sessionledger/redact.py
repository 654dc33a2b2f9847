"""Historical import path of the redactor; the implementation lives in `sessionledger.redaction`."""

from sessionledger.redaction import (
    DEFAULT_RULES,
    ENTROPY_THRESHOLD,
    MIN_SECRET_LENGTH,
    RULE_SPECS,
    RedactionResult,
    Redactor,
    Rule,
    default_redactor,
    looks_password,
    looks_secret,
    shannon_entropy,
)

__all__ = [
    "DEFAULT_RULES",
    "ENTROPY_THRESHOLD",
    "MIN_SECRET_LENGTH",
    "RULE_SPECS",
    "RedactionResult",
    "Redactor",
    "Rule",
    "default_redactor",
    "looks_password",
    "looks_secret",
    "shannon_entropy",
]
