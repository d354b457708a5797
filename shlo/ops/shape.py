"""Shape ops: constant, iota, reshape, transpose, broadcast_in_dim, concatenate, slice, pad,
reverse, get_dimension_size (spec sections of the same names).

These ops only move data, so they work on every element type, quantized storage included
(registered with ``quantized_aware=True`` where the spec allows quantized operands).
Attributes are decoded and index arrays computed once in ``prepare``; ``run`` is a numpy call.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ..attributes import DenseElementsAttr, int_or_none, ints
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


# --- helpers -----------------------------------------------------------------------------------


def int_attr(op: Operation, name: str, default: int | None = None) -> int:
    """An integer attribute of ``op`` (IntegerAttr or plain int); ``default`` when absent."""
    v = int_or_none(op.attr(name))
    if v is None:
        if default is None:
            raise TypeError(f"{op.name}: missing attribute `{name}`")
        return default
    return v


def ints_attr(op: Operation, name: str, default: tuple[int, ...] | None = None) -> tuple[int, ...]:
    """An integer-list attribute of ``op`` in any spelling; ``default`` when absent."""
    v = ints(op.attr(name), default)
    if v is None:
        raise TypeError(f"{op.name}: missing attribute `{name}`")
    return v


def static_shape(t: Any) -> tuple[int, ...] | None:
    """The shape of tensor type ``t`` when fully static, else None."""
    if isinstance(t, TensorType) and t.is_static:
        return t.shape  # type: ignore[return-value]
    return None


def as_dtype(x: Any, dtype: np.dtype) -> np.ndarray:
    """``x`` as an array of exactly ``dtype`` (no copy when it already is)."""
    a = np.asarray(x)
    return a if a.dtype == dtype else a.astype(dtype)


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
    dim = int_attr(op, "iota_dimension")
    if not t.is_static:
        raise TypeError("iota: the result type must be static (use dynamic_iota)")
    out = (iota_array(t.shape, dim, t.dtype),)  # type: ignore[arg-type]

    def run() -> Sequence[Any]:
        return out

    return run


# --- broadcast_in_dim --------------------------------------------------------------------------


def broadcast_in_dim_array(operand: np.ndarray, broadcast_dimensions: Sequence[int],
                           shape: Sequence[int]) -> np.ndarray:
    """``result[i] = operand[j]`` with ``j[d] = dim(operand, d) == 1 ? 0 : i[bd[d]]``.

    Returns a read-only broadcast view (no copy).
    """
    operand = np.asarray(operand)
    order = sorted(range(len(broadcast_dimensions)), key=lambda d: broadcast_dimensions[d])
    if order != list(range(len(order))):  # not increasing: transpose into the result's order
        operand = operand.transpose(order)
    view = [1] * len(shape)
    for k, d in enumerate(order):
        view[broadcast_dimensions[d]] = operand.shape[k]
    return np.broadcast_to(operand.reshape(view), tuple(shape))


def _broadcast_result_shape(result_shape: Sequence[int | None], broadcast_dimensions:
                            Sequence[int], operand_shape: Sequence[int]) -> tuple[int, ...]:
    """Resolve `?` result dims from the operand (a dynamic dim maps to an operand dim)."""
    out = list(result_shape)
    for d, r in enumerate(broadcast_dimensions):
        if out[r] is None:
            out[r] = operand_shape[d]
    if any(d is None for d in out):
        raise ValueError(f"cannot infer the result shape {result_shape} from the operand")
    return tuple(out)  # type: ignore[arg-type]


@kernel("stablehlo.broadcast_in_dim", quantized_aware=True)
def broadcast_in_dim(op: Operation, ctx: Any) -> Run:
    """Spec "broadcast_in_dim": expands the operand's dimensions into the result's."""
    t = result_type(op)
    bd = ints_attr(op, "broadcast_dimensions")
    dtype = t.dtype
    shape = static_shape(t)
    if shape is not None:
        def run(operand: np.ndarray) -> Sequence[Any]:
            return (broadcast_in_dim_array(as_dtype(operand, dtype), bd, shape),)
    else:
        def run(operand: np.ndarray) -> Sequence[Any]:
            operand = as_dtype(operand, dtype)
            s = _broadcast_result_shape(t.shape, bd, operand.shape)  # type: ignore[arg-type]
            return (broadcast_in_dim_array(operand, bd, s),)
    return run


@kernel("stablehlo.broadcast", quantized_aware=True)
def broadcast(op: Operation, ctx: Any) -> Run:
    """`broadcast` (not in HLO): prepends ``broadcast_sizes`` dimensions to the operand."""
    sizes = ints_attr(op, "broadcast_sizes")

    def run(operand: np.ndarray) -> Sequence[Any]:
        operand = np.asarray(operand)
        return (np.broadcast_to(operand, tuple(sizes) + operand.shape),)

    return run


# --- concatenate -------------------------------------------------------------------------------


@kernel("stablehlo.concatenate", quantized_aware=True)
def concatenate(op: Operation, ctx: Any) -> Run:
    """Spec "concatenate": joins ``inputs`` along ``dimension`` in argument order."""
    dimension = int_attr(op, "dimension")
    dtype = result_type(op).dtype

    def run(*inputs: np.ndarray) -> Sequence[Any]:
        return (np.concatenate([as_dtype(x, dtype) for x in inputs], axis=dimension),)

    return run


# --- pad ---------------------------------------------------------------------------------------


def pad_array(operand: np.ndarray, padding_value: Any, edge_padding_low: Sequence[int],
              edge_padding_high: Sequence[int], interior_padding: Sequence[int]) -> np.ndarray:
    """Spec "pad": edge padding (negative values remove elements) and interior padding.

    The operand is placed with strided assignment into a buffer holding the positive padding,
    then the negative edges are cut off with a slice.
    """
    operand = np.asarray(operand)
    buf_shape, place, crop = [], [], []
    for n, lo, hi, it in zip(operand.shape, edge_padding_low, edge_padding_high,
                             interior_padding):
        core = n + (n - 1) * it if n > 0 else 0
        size = max(lo, 0) + core + max(hi, 0)
        buf_shape.append(size)
        place.append(slice(max(lo, 0), max(lo, 0) + core, it + 1))
        crop.append(slice(max(-lo, 0), size - max(-hi, 0)))
    buf = np.full(buf_shape, np.asarray(padding_value, dtype=operand.dtype), dtype=operand.dtype)
    buf[tuple(place)] = operand
    return buf[tuple(crop)]


@kernel("stablehlo.pad", quantized_aware=True)
def pad(op: Operation, ctx: Any) -> Run:
    """Spec "pad": ``edge_padding_low``, ``edge_padding_high``, ``interior_padding``."""
    low = ints_attr(op, "edge_padding_low")
    high = ints_attr(op, "edge_padding_high")
    interior = ints_attr(op, "interior_padding", (0,) * len(low))
    dtype = result_type(op).dtype

    def run(operand: np.ndarray, padding_value: np.ndarray) -> Sequence[Any]:
        return (pad_array(as_dtype(operand, dtype), padding_value, low, high, interior),)

    return run


# --- reshape -----------------------------------------------------------------------------------


def reshape_target(shape: Sequence[int | None], size: int) -> tuple[int, ...]:
    """A concrete shape from ``shape`` with at most one `?` resolved against ``size``."""
    if shape.count(None) > 1:
        raise ValueError(f"cannot reshape {size} elements to a shape with several `?`")
    return tuple(-1 if d is None else d for d in shape)


@kernel("stablehlo.reshape", quantized_aware=True)
def reshape(op: Operation, ctx: Any) -> Run:
    """Spec "reshape": same elements in row-major order, new shape."""
    t = result_type(op)
    dtype = t.dtype
    shape = t.shape

    def run(operand: np.ndarray) -> Sequence[Any]:
        operand = as_dtype(operand, dtype)
        return (operand.reshape(reshape_target(shape, operand.size)),)  # type: ignore[arg-type]

    return run


# --- reverse -----------------------------------------------------------------------------------


@kernel("stablehlo.reverse", quantized_aware=True)
def reverse(op: Operation, ctx: Any) -> Run:
    """Spec "reverse": reverses the order of elements along ``dimensions``."""
    dims = ints_attr(op, "dimensions")
    index = None
    t = op.operands[0].type
    rank = t.rank if isinstance(t, TensorType) and t.shape is not None else None
    if rank is not None:
        index = tuple(slice(None, None, -1) if d in dims else slice(None) for d in range(rank))

    def run(operand: np.ndarray) -> Sequence[Any]:
        operand = np.asarray(operand)
        if index is not None:
            return (operand[index],)
        return (np.flip(operand, axis=dims),)

    return run


# --- slice -------------------------------------------------------------------------------------


@kernel("stablehlo.slice", quantized_aware=True)
def slice_(op: Operation, ctx: Any) -> Run:
    """Spec "slice": ``result[i] = operand[start_indices + i * strides]``."""
    start = ints_attr(op, "start_indices")
    limit = ints_attr(op, "limit_indices")
    strides = ints_attr(op, "strides", (1,) * len(start))
    index = tuple(slice(s, l, st) for s, l, st in zip(start, limit, strides))

    def run(operand: np.ndarray) -> Sequence[Any]:
        return (np.asarray(operand)[index],)

    return run


# --- transpose ---------------------------------------------------------------------------------


@kernel("stablehlo.transpose", quantized_aware=True)
def transpose(op: Operation, ctx: Any) -> Run:
    """Spec "transpose": ``result[i] = operand[j]`` with ``j[permutation[d]] = i[d]``."""
    permutation = ints_attr(op, "permutation")

    def run(operand: np.ndarray) -> Sequence[Any]:
        return (np.asarray(operand).transpose(permutation),)

    return run


# --- get_dimension_size ------------------------------------------------------------------------


@kernel("stablehlo.get_dimension_size", quantized_aware=True)
def get_dimension_size(op: Operation, ctx: Any) -> Run:
    """Spec "get_dimension_size": ``result = dim(operand, dimension)`` (the run-time size)."""
    dimension = int_attr(op, "dimension")
    dtype = result_type(op).dtype

    def run(operand: np.ndarray) -> Sequence[Any]:
        return (np.asarray(np.shape(operand)[dimension], dtype=dtype),)

    return run
