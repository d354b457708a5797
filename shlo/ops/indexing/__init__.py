"""Indexing ops (spec sections of the same names), each with its kernel, type inference and
constraints in one place:

* :mod:`.gather` -- gather (and torch_index_select, not in HLO)
* :mod:`.scatter` -- scatter
* :mod:`.dynamic_slice` -- dynamic_slice, dynamic_update_slice
* :mod:`._indices` -- what gather and scatter share: index arrays, dimension-list checks

Gather and scatter are computed without per-element loops: the spec's index formulas
(``full_start_index + full_batching_index + full_offset_index``) are evaluated for all result
(or update) elements at once as broadcast integer arrays, one per operand dimension, and the data
moves with a single numpy fancy index (gather) or a few vectorized assignments (scatter).
See docs/semantics/shape_indexing.md for the implementation-defined choices. slice (static
bounds) is a shape op (:mod:`shlo.ops.shape`); dynamic_gather is in :mod:`shlo.ops.dynamic`.
"""

from .._lazy import package_getattr

__all__ = ["GatherDimensionNumbers", "ScatterDimensionNumbers", "gather_array", "scatter_arrays",
           "scatter_targets", "to_index", "dynamic_slice_array", "UpdateComputation",
           "occurrence_rank", "infer_gather_shape"]

# The modules are imported when first used (the registry imports an op's module when the op is
# first looked up: shlo/ops/_index.py).
__getattr__ = package_getattr(__name__, {
    "to_index": "._indices", "dynamic_slice_array": ".dynamic_slice",
    "GatherDimensionNumbers": ".gather", "gather_array": ".gather",
    "infer_gather_shape": ".gather", "ScatterDimensionNumbers": ".scatter",
    "UpdateComputation": ".scatter", "occurrence_rank": ".scatter", "scatter_arrays": ".scatter",
    "scatter_targets": ".scatter"})
