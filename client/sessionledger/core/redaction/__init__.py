"""Secret redaction for transcripts: the rules (data), the engine, and the validators.

Public API:

- `Redactor()` / `Redactor.from_config(cfg)`: `redact_bytes(jsonl)`, `redact_plain(bytes)`,
  `redact_text(str)`, `kinds`;
- `RedactionResult(data, counts, changed_lines)`;
- `Rule`, `DEFAULT_RULES`, `RULE_SPECS` (rules with their documentation and examples);
- `looks_secret`, `looks_password`, `shannon_entropy`, `ENTROPY_THRESHOLD`, `MIN_SECRET_LENGTH`.

See docs/redaction.md for what is redacted, how fast, and how it is measured.
"""

from __future__ import annotations

from functools import lru_cache

from . import catalogue
from .engine import RedactionResult, Redactor
from .rules import Rule, RuleSpec, load_specs
from .rules_data import RULES_TOML
from .validators import ENTROPY_THRESHOLD, MIN_SECRET_LENGTH, looks_password, looks_secret, shannon_entropy

__all__ = [
    "DEFAULT_RULES",
    "ENTROPY_THRESHOLD",
    "MIN_SECRET_LENGTH",
    "RULE_SPECS",
    "RedactionResult",
    "Redactor",
    "Rule",
    "RuleSpec",
    "default_redactor",
    "looks_password",
    "looks_secret",
    "shannon_entropy",
]

RULE_SPECS: tuple[RuleSpec, ...] = load_specs(RULES_TOML)
# our own rules first (transcript-aware, they win overlaps), then gitleaks' catalogue (catalogue.py)
DEFAULT_RULES: tuple[Rule, ...] = (
    tuple(catalogue.with_provider_words(spec.rule) for spec in RULE_SPECS) + catalogue.rules()
)


@lru_cache(maxsize=1)
def default_redactor() -> Redactor:
    """One shared Redactor with the default rules (compiling them and the scans costs a few hundred
    milliseconds: bench/bench_redact.py's `build_cpu_seconds`)."""
    return Redactor()
