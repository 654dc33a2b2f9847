"""A hex prefix as an index range, usable under row-level security (docs/scaling.md "Search").

``commit_hash__startswith`` compiles to ``LIKE 'p%'``, and ``LIKE`` is not leakproof: under the
``tenant_isolation`` policy PostgreSQL may not evaluate it before the policy, so it cannot be an
index condition and every row of the project is read. The same prefix as two bounds with the
``varchar_pattern_ops`` comparison operators (``~>=~``, ``~<~``: byte order, leakproof) walks
the ``(project, commit_hash)`` index. Values are lowercase hex, so every string starting with
``p`` lies in ``[p, p || 'g')``.
"""

from __future__ import annotations

from typing import Any

from django.db.models import CharField, Lookup

PAST_HEX = "g"  # sorts after every hex digit in byte order


@CharField.register_lookup
class HexPrefix(Lookup):
    lookup_name = "hexprefix"

    def as_sql(self, compiler: Any, connection: Any) -> Any:
        lhs, lhs_params = self.process_lhs(compiler, connection)
        rhs, rhs_params = self.process_rhs(compiler, connection)
        upper = [f"{value}{PAST_HEX}" for value in rhs_params]
        return f"({lhs} ~>=~ {rhs} AND {lhs} ~<~ {rhs})", [*lhs_params, *rhs_params, *lhs_params, *upper]


@CharField.register_lookup
class AnyOf(Lookup):
    """``= ANY(array)``: with ``ArraySubquery``, an array computed once (an InitPlan) that can be an
    index condition, where ``IN (subquery)`` beside an ``OR`` makes PostgreSQL scan the table."""

    lookup_name = "any_of"

    def as_sql(self, compiler: Any, connection: Any) -> Any:
        lhs, lhs_params = self.process_lhs(compiler, connection)
        rhs, rhs_params = self.process_rhs(compiler, connection)
        return f"{lhs} = ANY({rhs})", [*lhs_params, *rhs_params]
