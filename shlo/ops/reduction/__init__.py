"""Reduction-family ops, a module per structured op (spec sections of the same names): reduce,
reduce_window, select_and_scatter, map, sort.

Every region is evaluated over whole arrays (ARCHITECTURE.md principle 3); the machinery lives
in :mod:`shlo.ops._regions` (bodies, reductions, the single-op ufunc table, the reducer check)
and the window arithmetic in :mod:`shlo.ops._windows`. Implementation-defined choices are
written in docs/semantics/reduction.md.
"""

from . import map, reduce, reduce_window, select_and_scatter, sort  # noqa: F401  (the registry)
from .._regions import reduce_with_body
# the fast-path recognisers and the sort algorithms, by the names the tests use
from .reduce import _projected_body  # noqa: F401
from .sort import _analyze, _merge_sort_order, _stable_argsort  # noqa: F401

__all__ = ["reduce_with_body"]
