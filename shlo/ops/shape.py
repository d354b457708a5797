"""Shape ops: constant, iota, reshape, transpose, broadcast_in_dim, concatenate, slice, pad,
reverse, get_dimension_size (spec sections of the same names).

These ops only move data, so they work on every element type, quantized storage included
(registered with ``quantized_aware=True`` where the spec allows quantized operands).
Attributes are decoded and index arrays computed once in ``prepare``; ``run`` is a numpy call.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ..attributes import DenseElementsAttr, ints
from ..ir import Operation
from ..types import TensorType
from .registry import kernel

Run = Callable[..., Sequence[Any]]


def readonly(a: np.ndarray) -> np.ndarray:
    """A read-only view of ``a`` (kernels hand out constants that nobody may mutate)."""
    v = a.view()
    v.flags.writeable = False
    return v


def result_type(op: Operation, i: int = 0) -> TensorType:
    t = op.results[i].type
    assert isinstance(t, TensorType), f"{op.name}: result {i} is not a tensor"
    return t


# --- constant ----------------------------------------------------------------------------------


@kernel("stablehlo.constant", quantized_aware=True)
def constant(op: Operation, ctx: Any) -> Run:
    """Spec "constant": ``output = value``.

    The result is a read-only view of the attribute's array (for quantized results, its storage
    values), so no caller can mutate the program's constant.
    """
    value = op.attr("value")
    if not isinstance(value, DenseElementsAttr):
        raise TypeError(f"constant: `value` must be a dense elements attribute, got {value!r}")
    t = op.results[0].type
    a = np.asarray(value.array)
    if isinstance(t, TensorType):
        if a.dtype != t.dtype:
            a = a.astype(t.dtype)
        if t.is_static and a.shape != t.shape:
            a = np.broadcast_to(a, t.shape) if a.size == 1 else a.reshape(t.shape)
    out = (readonly(a),)

    def run() -> Sequence[Any]:
        return out

    return run


# --- iota --------------------------------------------------------------------------------------


def iota_array(shape: tuple[int, ...], iota_dimension: int, dtype: np.dtype) -> np.ndarray:
    """``output[i] = i[iota_dimension]`` as a read-only array of ``dtype``."""
    n = shape[iota_dimension]
    if dtype == np.bool_:
        line = np.arange(n) != 0
    else:
        line = np.arange(n, dtype=np.int64).astype(dtype)
    view = [1] * len(shape)
    view[iota_dimension] = n
    a = np.broadcast_to(line.reshape(view), shape)
    return readonly(np.ascontiguousarray(a))


@kernel("stablehlo.iota")
def iota(op: Operation, ctx: Any) -> Run:
    """Spec "iota": fills the result with increasing values along ``iota_dimension``."""
    t = result_type(op)
    dim = int(getattr(op.attr("iota_dimension"), "value", op.attr("iota_dimension")))
    if not t.is_static:
        raise TypeError("iota: the result type must be static (use dynamic_iota)")
    out = (iota_array(t.shape, dim, t.dtype),)  # type: ignore[arg-type]

    def run() -> Sequence[Any]:
        return out

    return run
