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
from ..registry import kernel

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
    # A 0-d constant of numpy's own types is a numpy scalar (immutable): scalar arithmetic on
    # numpy scalars is ~10x faster than on 0-d arrays, which matters in scalar `while` loops.
    out = (a[()] if a.ndim == 0 and a.dtype.isbuiltin == 1 else readonly(a),)

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
    operand_shape = static_shape(op.operands[0].type)
    if shape is not None and operand_shape is not None:
        # Everything but the data is static: the reshape to broadcast is decided here.
        order = sorted(range(len(bd)), key=lambda d: bd[d])
        transpose = order if order != list(range(len(order))) else None
        view = [1] * len(shape)
        for k, d in enumerate(order):
            view[bd[d]] = operand_shape[d]
        view_t = tuple(view)
        broadcast_to, ndarray = np.broadcast_to, np.ndarray
        # The view is built directly from a read-only buffer of the (contiguous) operand with
        # zero strides on the new dimensions: 3-4x cheaper than np.broadcast_to (which goes
        # through nditer), and JAX exports are full of broadcasts.
        direct = dtype.isbuiltin == 1 and 0 not in shape  # numpy's own types: buffers
        expanded = tuple(v == 1 and n != 1 for v, n in zip(view_t, shape))

        def run(operand: np.ndarray) -> Sequence[Any]:
            a = np.asarray(operand)
            if a.dtype != dtype:
                a = a.astype(dtype)
            if transpose is not None:
                a = a.transpose(transpose)
            a = a.reshape(view_t)
            if direct and a.flags.c_contiguous:
                strides = tuple(0 if e else st for e, st in zip(expanded, a.strides))
                return (ndarray(shape, dtype, memoryview(a).toreadonly(), 0, strides),)
            return (broadcast_to(a, shape),)
    elif shape is not None:
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


# --- constraints (spec "Ops" section, C1..Cn) ---------------------------------------------------
# The verifiers of the shape ops (shlo/verifier.py calls them through the registry).

from typing import Any  # noqa: E402

from ..ir import Operation  # noqa: E402
from ..types import QuantizedType as _QuantizedType, TensorType as _TensorType  # noqa: E402
from . import _constraints as _c  # noqa: E402
from ..registry import verifier  # noqa: E402

_STATIC_QA = _c.TC(_c.F | _c.B | _c.I | _c.C | _c.Q | _c.QA, static=True,
                   description="statically shaped or single bounded dimension tensor of "
                               "4/6/8/16/32/64-bit float or bool or 2/4/8/16/32/64-bit integer "
                               "or complex type with 32/64-bit float elements or per-tensor "
                               "integer quantized or per-axis integer quantized values")


_STATIC_CONSTANT = _c.TC(_c.F | _c.B | _c.I | _c.C | _c.Q | _c.QA, static=True)
_STATIC_IOTA = _c.TC(_c.I | _c.F | _c.C | _c.Q, static=True)


@verifier("stablehlo.constant")
def _verify_constant(op: Operation, diag: Any) -> None:
    """(C1) `type(value) = type(output)` (for a quantized output, the literal holds storage
    values); the output is statically shaped."""
    if not _c.signature(op, diag, [], [_STATIC_CONSTANT], attrs={"value": "any"}):
        return
    value = op.attr("value")
    out = op.results[0].type
    vt = getattr(value, "type", None)
    if not isinstance(vt, _TensorType) or _c.same_type(vt, out):
        return
    oe = out.element_type
    if isinstance(oe, _QuantizedType) and vt.shape == out.shape and \
            _c.same_element_type(vt.element_type, oe.storage_type):
        return
    diag.error(op, "C1", f"inferred type(s) {_c.types_str([vt])} are incompatible with return "
                         f"type(s) of operation {_c.types_str([out])}")


@verifier("stablehlo.iota")
def _verify_iota(op: Operation, diag: Any) -> None:
    """(C1) `0 <= iota_dimension < rank(output)`."""
    if not _c.signature(op, diag, [], [_STATIC_IOTA], attrs={"iota_dimension": "int"}):
        return
    d = _c.int_attr(op, "iota_dimension")
    shape = op.results[0].type.shape
    if d < 0:
        diag.error(op, "C1", f"attribute 'iota_dimension' failed to satisfy constraint: 64-bit "
                             f"signless integer attribute whose value is non-negative (got {d})")
    elif not shape:
        diag.error(op, "C1", "does not support scalars")
    elif d >= len(shape):
        diag.error(op, "C1", f"iota dimension cannot go beyond the output rank: iota_dimension "
                             f"= {d}, rank = {len(shape)}")


@verifier("stablehlo.broadcast_in_dim")
def _verify_broadcast_in_dim(op: Operation, diag: Any) -> None:
    """(C1) element types agree (per-axis parameters may differ); (C2) `size(
    broadcast_dimensions) = rank(operand)`; (C3) `0 <= broadcast_dimensions < rank(result)`;
    (C4) unique; (C5) each operand dimension is 1 or the result's; (C6) per-axis quantization
    follows the broadcast dimension."""
    if not _c.signature(op, diag, [_c.TENSOR_QA], [_STATIC_QA],
                        attrs={"broadcast_dimensions": "ints"}):
        return
    _c.check_broadcast_in_dim(op, diag, op.operands[0].type, op.results[0].type,
                              _c.ints_attr(op, "broadcast_dimensions"))


@verifier("stablehlo.broadcast")
def _verify_broadcast(op: Operation, diag: Any) -> None:
    """`broadcast` (beyond the seed spec): the result shape is `broadcast_sizes` followed by the
    operand's shape, with the operand's element type."""
    if not _c.signature(op, diag, [_c.TENSOR], [_c.TENSOR_QA],
                        attrs={"broadcast_sizes": "ints"}):
        return
    sizes = _c.ints_attr(op, "broadcast_sizes")
    t = op.operands[0].type
    if any(s < 0 for s in sizes):
        diag.error(op, "C1", f"broadcast_sizes must be non-negative, got {_c.dims_str(sizes)}")
        return
    _c.check_inferred(op, diag, "C1", [_TensorType(tuple(sizes) + tuple(t.shape),
                                                   t.element_type)])


@verifier("stablehlo.concatenate")
def _verify_concatenate(op: Operation, diag: Any) -> None:
    """(C1) same element types; (C2) same shapes except along `dimension`; (C3) at least one
    input; (C4) `0 <= dimension < rank(inputs[0])`; (C5-C6) the result type."""
    if not _c.signature(op, diag, [(_c.TENSOR, "*")], [_c.TENSOR],
                        attrs={"dimension": "int"}):
        return
    dim = _c.int_attr(op, "dimension")
    types = [v.type for v in op.operands]
    if not types:
        diag.error(op, "C3", "expected 1 or more operands, but found 0")
        return
    if dim < 0:
        diag.error(op, "C4", f"attribute 'dimension' failed to satisfy constraint: 64-bit "
                             f"signless integer attribute whose value is non-negative (got {dim})")
        return
    first = types[0]
    for i, t in enumerate(types[1:], 1):
        if not _c.compatible_element_types(first.element_type, t.element_type):
            diag.error(op, "C1", f"requires the same element type for all operands: operand "
                                 f"(0) is {_c.types_str([first])}, operand ({i}) is "
                                 f"{_c.types_str([t])}")
            return
    ranked = [(i, t) for i, t in enumerate(types) if t.shape is not None]
    if not ranked:
        return
    i0, t0 = ranked[0]
    rank = len(t0.shape)
    if rank == 0:
        diag.error(op, "C4", "rank-0 values cannot be concatenated")
        return
    if dim >= rank:
        diag.error(op, "C4", f"dimension {dim} is out-of-bounds for input rank {rank}")
        return
    for i, t in ranked[1:]:
        if len(t.shape) != rank:
            diag.error(op, "C2", f"operands ({i0}) and ({i}) do not match rank")
            return
        for d in range(rank):
            if d != dim and not _c.compatible_dims(t0.shape[d], t.shape[d]):
                diag.error(op, "C2", f"shapes of operand ({i0}) and ({i}) are not compatible at "
                                     f"non-concat index {d}: "
                                     f"({', '.join(map(_dstr, t0.shape))}) != "
                                     f"({', '.join(map(_dstr, t.shape))})")
                return
    shape = []
    for d in range(rank):
        if d == dim:
            sizes = [t.shape[d] for _, t in ranked]
            shape.append(None if len(ranked) != len(types) or None in sizes else sum(sizes))
        else:
            known = [t.shape[d] for _, t in ranked if t.shape[d] is not None]
            shape.append(known[0] if known else None)
    _c.check_inferred(op, diag, "C5, C6", [_TensorType(tuple(shape), first.element_type)])


def _dstr(d: Any) -> str:
    return "?" if d is None else str(d)


@verifier("stablehlo.pad")
def _verify_pad(op: Operation, diag: Any) -> None:
    """(C1) element types agree; (C2) the padding sizes equal `rank(operand)`;
    (C3) `0 <= interior_padding`; (C4) the result shape."""
    if not _c.signature(op, diag, [_c.TENSOR, _c.TC(_c.F | _c.B | _c.I | _c.C | _c.Q, rank=0)],
                        [_c.TENSOR], attrs={"edge_padding_low": "ints",
                                            "edge_padding_high": "ints",
                                            "interior_padding": "ints"}):
        return
    operand, pad_value = op.operands[0].type, op.operands[1].type
    if not _c.compatible_element_types(operand.element_type, pad_value.element_type):
        diag.error(op, "C1", "expects operand and padding_value to have the same element type: "
                             + _c.types_str([operand, pad_value]))
        return
    low = _c.ints_attr(op, "edge_padding_low")
    high = _c.ints_attr(op, "edge_padding_high")
    interior = _c.ints_attr(op, "interior_padding")
    if operand.shape is None:
        return
    rank = len(operand.shape)
    for name, v in (("edge_padding_low", low), ("edge_padding_high", high),
                    ("interior_padding", interior)):
        if len(v) != rank:
            diag.error(op, "C2", f"{name} length ({len(v)}) must match operand rank ({rank})")
            return
    for d, p in enumerate(interior):
        if p < 0:
            diag.error(op, "C3", f"Interior padding cannot be negative: {p} in dimension {d}")
            return
    shape = []
    bounds = _c.bounds_of(operand) or (None,) * rank
    for d, n in enumerate(operand.shape):
        if n is None:
            b = bounds[d] if d < len(bounds) else None
            if b is not None and b + low[d] + high[d] + max(b - 1, 0) * interior[d] < 0:
                diag.error(op, "C4", f"Padding result in negative bound for dimension {d}")
                return
            shape.append(None)
            continue
        size = n + low[d] + high[d] + max(n - 1, 0) * interior[d]
        if size < 0:
            diag.error(op, "C4", f"Padding result in negative size for dimension {d}: {size}")
            return
        shape.append(size)
    _c.check_inferred(op, diag, "C4", [_TensorType(tuple(shape), operand.element_type)])


@verifier("stablehlo.reshape")
def _verify_reshape(op: Operation, diag: Any) -> None:
    """(C1) element types agree (per-axis quantization may move); (C2) `size(operand) =
    size(result)`; (C3) per-axis quantization keeps the sizes around its dimension."""
    if not _c.signature(op, diag, [_c.TENSOR_QA], [_STATIC_QA]):
        return
    operand, result = op.operands[0].type, op.results[0].type
    if operand.is_static and result.is_static and operand.num_elements != result.num_elements:
        diag.error(op, "C2", f"number of output elements ({result.num_elements}) doesn't match "
                             f"expected number of elements ({operand.num_elements})")
        return
    a, b = operand.element_type, result.element_type
    if isinstance(a, _QuantizedType) and a.quantization_dimension is not None and \
            isinstance(b, _QuantizedType) and b.quantization_dimension is not None:
        if not _c.quant_params_equal(a, b):
            diag.error(op, "C1", "expect same quantization scales and zero_points")
            return
        if operand.is_static and result.is_static:
            qa, qb = a.quantization_dimension, b.quantization_dimension
            if qa < len(operand.shape) and qb < len(result.shape):
                def prod(xs: Any) -> int:
                    p = 1
                    for x in xs:
                        p *= x
                    return p
                if operand.shape[qa] != result.shape[qb] or \
                        prod(operand.shape[:qa]) != prod(result.shape[:qb]):
                    diag.error(op, "C3", f"expect same quantization dimension size and the "
                                         f"same product of the dimensions before it: operand "
                                         f"quantization_dimension {qa}, result "
                                         f"quantization_dimension {qb}")
        return
    _c.per_tensor_same_quant(op, diag, "C1", operand, result)


@verifier("stablehlo.reverse")
def _verify_reverse(op: Operation, diag: Any) -> None:
    """(C1) `type(operand) = type(result)`; (C2) `is_unique(dimensions)`;
    (C3) `0 <= dimensions < rank(result)`."""
    if not _c.signature(op, diag, [_c.TENSOR], [_c.TENSOR], attrs={"dimensions": "ints"}):
        return
    dims = _c.ints_attr(op, "dimensions")
    if not _c.is_unique(dims):
        diag.error(op, "C2", f"dimensions should be unique. Got: {', '.join(map(str, dims))}")
        return
    rank = _c.rank_of(op.results[0].type)
    for d in dims:
        if d < 0:
            diag.error(op, "C3", f"all dimensions should be non-negative. Got dimension: {d}.")
            return
        if rank is not None and d >= rank:
            diag.error(op, "C3", f"all dimensions should be between [0, {rank}). Got dimension: "
                                 f"{d}.")
            return
    _c.compatible_all(op, diag, "C1")


@verifier("stablehlo.slice")
def _verify_slice(op: Operation, diag: Any) -> None:
    """(C1) element types agree; (C2) index lists have `rank(operand)` entries;
    (C3) `0 <= start_indices <= limit_indices <= shape(operand)`; (C4) `0 < strides`;
    (C5) `shape(result) = ceil((limit_indices - start_indices) / strides)`."""
    if not _c.signature(op, diag, [_c.TENSOR], [_c.TENSOR],
                        attrs={"start_indices": "ints", "limit_indices": "ints",
                               "strides": "ints"}):
        return
    operand = op.operands[0].type
    start = _c.ints_attr(op, "start_indices")
    limit = _c.ints_attr(op, "limit_indices")
    strides = _c.ints_attr(op, "strides")
    if operand.shape is None:
        return
    rank = len(operand.shape)
    for name, v in (("start_indices", start), ("limit_indices", limit), ("strides", strides)):
        if len(v) != rank:
            diag.error(op, "C2", f"the number of elements in {name} ({len(v)}) does not match the"
                                 f" rank of the operand ({rank})")
            return
    shape = []
    for d in range(rank):
        s, l, st, n = start[d], limit[d], strides[d], operand.shape[d]
        if s < 0:
            diag.error(op, "C3", f"negative start index {s} in dimension {d}")
            return
        if n is not None and l > n:
            diag.error(op, "C3", f"limit index {l} is larger than dimension size {n} in "
                                 f"dimension {d}")
            return
        bound = (_c.bounds_of(operand) or (None,) * rank)[d] if n is None else None
        if bound is not None and l > bound:
            diag.error(op, "C3", f"limit index {l} is larger than dimension bound {bound} in "
                                 f"dimension {d}")
            return
        if s > l:
            diag.error(op, "C3", f"start index {s} is larger than limit index {l} in dimension "
                                 f"{d}")
            return
        if st <= 0:
            diag.error(op, "C4", f"stride must be positive but got {st} in dimension {d}")
            return
        shape.append(-(-(l - s) // st) if n is not None else None)
    _c.check_inferred(op, diag, "C1, C5", [_TensorType(tuple(shape), operand.element_type)])


@verifier("stablehlo.transpose")
def _verify_transpose(op: Operation, diag: Any) -> None:
    """(C1) element types agree (per-axis quantization may move); (C2) `permutation` is a
    permutation of `range(rank(operand))`; (C3) `shape(result) = dim(operand, permutation...)`;
    (C4) per-axis quantization follows the permutation."""
    if not _c.signature(op, diag, [_c.TENSOR_QA], [_c.TENSOR_QA],
                        attrs={"permutation": "ints"}):
        return
    operand, result = op.operands[0].type, op.results[0].type
    perm = _c.ints_attr(op, "permutation")
    if operand.shape is None:
        return
    rank = len(operand.shape)
    if len(perm) != rank:
        diag.error(op, "C2", f"TransposeOp operand rank {rank} does not match permutation size "
                             f"{len(perm)}")
        return
    if sorted(perm) != list(range(rank)):
        diag.error(op, "C2", f"attribute permutation must be a permutation of "
                             f"[{', '.join(map(str, range(rank)))}] but got "
                             f"{', '.join(map(str, perm))}")
        return
    a, b = operand.element_type, result.element_type
    shape = tuple(operand.shape[p] for p in perm)
    if isinstance(a, _QuantizedType) and a.quantization_dimension is not None and \
            isinstance(b, _QuantizedType) and b.quantization_dimension is not None:
        if not _c.quant_params_equal(a, b):
            diag.error(op, "C1", "expect same quantization scales and zero_points")
            return
        qb = b.quantization_dimension
        if qb < rank and a.quantization_dimension != perm[qb]:
            diag.error(op, "C4", f"operand quantization_dimension {a.quantization_dimension} is "
                                 f"not same as permutation[{qb}] = {perm[qb]}")
            return
        if result.shape is not None and not _c.compatible_shapes(shape, result.shape):
            _c.check_inferred(op, diag, "C3", [_TensorType(shape, b)])
        return
    if not _c.per_tensor_same_quant(op, diag, "C1", operand, result):
        return
    _c.check_inferred(op, diag, "C3", [_TensorType(shape, b)])


@verifier("stablehlo.get_dimension_size")
def _verify_get_dimension_size(op: Operation, diag: Any) -> None:
    """(C1) `0 <= dimension < rank(operand)`; the result is a 0-dimensional tensor of i32."""
    if not _c.signature(op, diag, [_c.TENSOR_QA],
                        [_c.TC(only=frozenset({"i32"}), description="ranked tensor of 32-bit "
                                                                   "signless integer values")],
                        attrs={"dimension": "int"}):
        return
    d = _c.int_attr(op, "dimension")
    rank = _c.rank_of(op.operands[0].type)
    if d < 0:
        diag.error(op, "C1", f"attribute 'dimension' failed to satisfy constraint: 64-bit "
                             f"signless integer attribute whose value is non-negative (got {d})")
    elif rank is not None and d >= rank:
        diag.error(op, "C1", f"requires dimension attribute in range [0, {rank}); found ({d})")
    else:
        _c.check_inferred(op, diag, "C1", [_TensorType((), op.results[0].type.element_type)])
