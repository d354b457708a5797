"""Reduction-family ops, a module per structured op (spec sections of the same names): reduce,
reduce_window, select_and_scatter, map, sort.

Every region is evaluated over whole arrays (ARCHITECTURE.md principle 3); the machinery lives
in :mod:`shlo.ops._regions` (bodies, reductions, the single-op ufunc table, the reducer check)
and the window arithmetic in :mod:`shlo.ops._windows`. Implementation-defined choices are
written in docs/semantics/reduction.md.
"""

from .._lazy import package_getattr

__all__ = ["reduce_with_body"]

# The modules are imported when first used (the registry imports an op's module when the op is
# first looked up: shlo/ops/_index.py). The fast-path recognisers and the sort algorithms go by
# the names the tests use.
__getattr__ = package_getattr(__name__, {
    "reduce_with_body": ".._regions", "_projected_body": ".reduce", "_analyze": ".sort",
    "_merge_sort_order": ".sort", "_stable_argsort": ".sort"})
