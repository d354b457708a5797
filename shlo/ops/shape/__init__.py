"""Shape ops (spec sections of the same names), each with its syntax, kernel, type inference and
constraints in one section:

* :mod:`.constant` -- constant, iota
* :mod:`.broadcast` -- broadcast_in_dim, broadcast (not in HLO)
* :mod:`.layout` -- reshape, reverse, transpose, get_dimension_size
* :mod:`.slicing` -- slice, pad, concatenate

These ops only move data, so they work on every element type, quantized storage included
(registered with ``quantized_aware=True`` where the spec allows quantized operands).
Attributes are decoded and index arrays computed once in ``prepare``; ``run`` is a numpy call.
Their dynamic-shape counterparts (dynamic_iota, dynamic_reshape, ...) are in
:mod:`shlo.ops.dynamic`, the indexing ops (gather, dynamic_slice, ...) in
:mod:`shlo.ops.indexing`.
"""

from .._lazy import package_getattr

__all__ = ["broadcast_in_dim_array", "check_broadcast_in_dim", "iota_array", "pad_array",
           "reshape_target"]

# The modules are imported when first used (the registry imports an op's module when the op is
# first looked up: shlo/ops/_index.py).
__getattr__ = package_getattr(__name__, {
    "broadcast_in_dim_array": ".broadcast", "check_broadcast_in_dim": ".broadcast",
    "iota_array": ".constant", "reshape_target": ".layout", "pad_array": ".slicing"})
