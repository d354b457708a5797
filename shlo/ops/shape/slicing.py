"""slice, pad and concatenate (spec sections of the same names): cut, pad and join tensors whose
bounds are attributes.

slice returns a strided numpy view; pad builds the result with one strided assignment into a
buffer holding the positive padding; concatenate is one ``np.concatenate``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ...attributes import DenseArrayAttr, int_attr, ints_attr
from ...errors import Diagnostics
from ...ir import Operation
from ...registry import QUANTIZED_STORAGE, Kernel, define, inference, kernel, verifier
from ...syntax.directives import (
    ATTRDICT, COMMA, I64, OPERAND, OPERANDS_COMMA, Format, check_attr_kind, declarative, named,
    parse_attrdict, types, types_functional,
)
from ...types import TensorType, Type
from .. import _constraints as _c
from .._arrays import as_dtype, result_type

if TYPE_CHECKING:  # pragma: no cover
    from ...interpreter.evaluator import PrepareContext
    from ...syntax.parser import Parser
    from ...syntax.printer import Printer

__all__ = ["slice_", "pad", "pad_array", "concatenate"]

# --- slice (spec "slice") ------------------------------------------------------------------------


def _parse_slice(p: Parser, name: str, nres: int, start: int) -> Operation:
    """`stablehlo.slice %x [0:4, 1:7:2] : (...) -> ...`: `start:limit[:stride]` per dimension."""
    operand = p.operand()
    p.expect("[")
    st: list[int] = []
    lim: list[int] = []
    strd: list[int] = []
    if p.v != "]":
        while True:
            st.append(p.integer())
            p.expect(":")
            lim.append(p.integer())
            if p.accept(":"):
                strd.append(p.integer())
            else:
                strd.append(1)
            if not p.accept(","):
                break
    p.expect("]")
    props = {"start_indices": DenseArrayAttr(I64, tuple(st)),
             "limit_indices": DenseArrayAttr(I64, tuple(lim)),
             "strides": DenseArrayAttr(I64, tuple(strd))}
    attrs: dict[str, Any] = {}
    parse_attrdict(p, name, props, attrs)
    p.expect(":")
    res = types_functional(p, [operand])
    return Operation(name, [operand], res, props, attrs)


def _print_slice(pr: Printer, op: Operation) -> str | None:
    names = ("start_indices", "limit_indices", "strides")
    vals = [op.attr(n) for n in names]
    if any(not check_attr_kind(v, "i64list") for v in vals) or len(op.operands) != 1 \
            or op.regions:
        return None
    s, l_, t = (v.values for v in vals)
    if not len(s) == len(l_) == len(t):
        return None
    parts = [f"{a}:{b}" + (f":{c}" if c != 1 else "") for a, b, c in zip(s, l_, t)]
    d = pr.attr_dict(op, set(names))
    return (f" {pr.val(op.operands[0])} [{', '.join(parts)}]{d} : "
            f"{pr.functional([op.operands[0].type], op.result_types)}")


define("stablehlo.slice", spec="slice", summary="a strided slice with static bounds",
       traits={QUANTIZED_STORAGE},
       syntax=Format(_parse_slice, _print_slice,
                     frozenset({"start_indices", "limit_indices", "strides"})))


@kernel("stablehlo.slice", quantized_aware=True)
def slice_(op: Operation, ctx: PrepareContext) -> Kernel:
    """Spec "slice": ``result[i] = operand[start_indices + i * strides]``."""
    start = ints_attr(op, "start_indices")
    limit = ints_attr(op, "limit_indices")
    strides = ints_attr(op, "strides", (1,) * len(start))
    index = tuple(slice(s, e, st) for s, e, st in zip(start, limit, strides))

    def run(operand: np.ndarray) -> Sequence[Any]:
        return (np.asarray(operand)[index],)

    return run


@inference("stablehlo.slice")
def _infer_slice(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """(C2) the index lists have `rank(operand)` entries; (C3) `0 <= start_indices <=
    limit_indices <= shape(operand)` (the bound of a `?` dimension caps its limit); (C4)
    `0 < strides`; (C5) `shape(result) = ceil((limit_indices - start_indices) / strides)`, also
    where the operand's dimension is `?` (as upstream's inferSliceOp: the limits fix it)."""
    operand = op.operands[0].type if op.operands else None
    start = ints_attr(op, "start_indices", None)
    limit = ints_attr(op, "limit_indices", None)
    strides = ints_attr(op, "strides", None)
    if not isinstance(operand, TensorType) or operand.shape is None or None in (start, limit,
                                                                                 strides):
        return None
    rank = len(operand.shape)
    for name, v in (("start_indices", start), ("limit_indices", limit), ("strides", strides)):
        if len(v) != rank:
            diag.error(op, "C2", f"the number of elements in {name} ({len(v)}) does not match the"
                                 f" rank of the operand ({rank})")
            return None
    shape = []
    for d in range(rank):
        s, e, st, n = start[d], limit[d], strides[d], operand.shape[d]
        if s < 0:
            diag.error(op, "C3", f"negative start index {s} in dimension {d}")
            return None
        if n is not None and e > n:
            diag.error(op, "C3", f"limit index {e} is larger than dimension size {n} in "
                                 f"dimension {d}")
            return None
        bound = (_c.bounds_of(operand) or (None,) * rank)[d] if n is None else None
        if bound is not None and e > bound:
            diag.error(op, "C3", f"limit index {e} is larger than dimension bound {bound} in "
                                 f"dimension {d}")
            return None
        if s > e:
            diag.error(op, "C3", f"start index {s} is larger than limit index {e} in dimension "
                                 f"{d}")
            return None
        if st <= 0:
            diag.error(op, "C4", f"stride must be positive but got {st} in dimension {d}")
            return None
        shape.append(-(-(e - s) // st))
    return [TensorType(tuple(shape), operand.element_type)]


@verifier("stablehlo.slice")
def _verify_slice(op: Operation, diag: Diagnostics) -> None:
    """(C1) element types agree; (C2) index lists have `rank(operand)` entries;
    (C3) `0 <= start_indices <= limit_indices <= shape(operand)`; (C4) `0 < strides`;
    (C5) `shape(result) = ceil((limit_indices - start_indices) / strides)`."""
    if not _c.signature(op, diag, [_c.TENSOR], [_c.TENSOR],
                        attrs={"start_indices": "ints", "limit_indices": "ints",
                               "strides": "ints"}):
        return
    inferred = _infer_slice(op, diag)
    if inferred is not None:
        _c.check_inferred(op, diag, "C1, C5", inferred)


# --- pad (spec "pad") ----------------------------------------------------------------------------

define("stablehlo.pad", spec="pad", summary="edge and interior padding",
       traits={QUANTIZED_STORAGE},
       syntax=declarative(OPERAND, COMMA, OPERAND, COMMA,
                          *named("low", "edge_padding_low", "i64list"), COMMA,
                          *named("high", "edge_padding_high", "i64list"), COMMA,
                          *named("interior", "interior_padding", "i64list"), ATTRDICT,
                          types("functional")))


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
def pad(op: Operation, ctx: PrepareContext) -> Kernel:
    """Spec "pad": ``edge_padding_low``, ``edge_padding_high``, ``interior_padding``."""
    low = ints_attr(op, "edge_padding_low")
    high = ints_attr(op, "edge_padding_high")
    interior = ints_attr(op, "interior_padding", (0,) * len(low))
    dtype = result_type(op).dtype

    def run(operand: np.ndarray, padding_value: np.ndarray) -> Sequence[Any]:
        return (pad_array(as_dtype(operand, dtype), padding_value, low, high, interior),)

    return run


@inference("stablehlo.pad")
def _infer_pad(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """(C1) `element_type(operand) = element_type(padding_value)`; (C2) the padding lists have
    `rank(operand)` entries; (C3) `0 <= interior_padding`; (C4) `shape(result) = shape(operand)
    + edge_padding_low + max(shape(operand) - 1, 0) * interior_padding + edge_padding_high`
    (non-negative; `?` where the operand's dimension is `?`)."""
    if len(op.operands) != 2:
        return None
    operand, pad_value = op.operands[0].type, op.operands[1].type
    if not isinstance(operand, TensorType) or not isinstance(pad_value, TensorType):
        return None
    if not _c.compatible_element_types(operand.element_type, pad_value.element_type):
        diag.error(op, "C1", "expects operand and padding_value to have the same element type: "
                             + _c.types_str([operand, pad_value]))
        return None
    low = ints_attr(op, "edge_padding_low", None)
    high = ints_attr(op, "edge_padding_high", None)
    interior = ints_attr(op, "interior_padding", None)
    if operand.shape is None or None in (low, high, interior):
        return None
    rank = len(operand.shape)
    for name, v in (("edge_padding_low", low), ("edge_padding_high", high),
                    ("interior_padding", interior)):
        if len(v) != rank:
            diag.error(op, "C2", f"{name} length ({len(v)}) must match operand rank ({rank})")
            return None
    for d, p in enumerate(interior):
        if p < 0:
            diag.error(op, "C3", f"Interior padding cannot be negative: {p} in dimension {d}")
            return None
    shape = []
    bounds = _c.bounds_of(operand) or (None,) * rank
    for d, n in enumerate(operand.shape):
        if n is None:
            b = bounds[d] if d < len(bounds) else None
            if b is not None and b + low[d] + high[d] + max(b - 1, 0) * interior[d] < 0:
                diag.error(op, "C4", f"Padding result in negative bound for dimension {d}")
                return None
            shape.append(None)
            continue
        size = n + low[d] + high[d] + max(n - 1, 0) * interior[d]
        wrapped = (size + (1 << 63)) % (1 << 64) - (1 << 63)  # (upstream's int64 arithmetic)
        if size < 0 or wrapped < 0:
            diag.error(op, "C4", f"Padding result in negative size for dimension {d}: "
                                 f"{wrapped}")
            return None
        if size != wrapped:
            diag.error(op, "C4", f"Padding result in size {size} for dimension {d}, more than "
                                 "a 64-bit size holds")
            return None
        shape.append(size)
    return [TensorType(tuple(shape), operand.element_type)]


@verifier("stablehlo.pad")
def _verify_pad(op: Operation, diag: Diagnostics) -> None:
    """(C1) element types agree; (C2) the padding sizes equal `rank(operand)`;
    (C3) `0 <= interior_padding`; (C4) the result shape."""
    if not _c.signature(op, diag, [_c.TENSOR, _c.TC(_c.F | _c.B | _c.I | _c.C | _c.Q, rank=0)],
                        [_c.TENSOR], attrs={"edge_padding_low": "ints",
                                            "edge_padding_high": "ints",
                                            "interior_padding": "ints"}):
        return
    inferred = _infer_pad(op, diag)
    if inferred is not None:
        _c.check_inferred(op, diag, "C4", inferred)


# --- concatenate (spec "concatenate") ------------------------------------------------------------

define("stablehlo.concatenate", spec="concatenate", summary="joins tensors along a dimension",
       traits={QUANTIZED_STORAGE},
       syntax=declarative(OPERANDS_COMMA, *named("dim", "dimension", "i64"), ATTRDICT,
                          types("functional")))


@kernel("stablehlo.concatenate", quantized_aware=True)
def concatenate(op: Operation, ctx: PrepareContext) -> Kernel:
    """Spec "concatenate": joins ``inputs`` along ``dimension`` in argument order."""
    dimension = int_attr(op, "dimension")
    dtype = result_type(op).dtype

    def run(*inputs: np.ndarray) -> Sequence[Any]:
        return (np.concatenate([as_dtype(x, dtype) for x in inputs], axis=dimension),)

    return run


def _dstr(d: int | None) -> str:
    return "?" if d is None else str(d)


@inference("stablehlo.concatenate")
def _infer_concatenate(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """(C1) same element types; (C2) same shapes except along `dimension`; (C3) at least one
    input; (C4) `0 <= dimension < rank(inputs[0])`; (C5-C6) the result's element type is the
    inputs', its size along `dimension` their sum (`?` if any is `?`)."""
    dim = int_attr(op, "dimension", None)
    types = [v.type for v in op.operands]
    if dim is None or not all(isinstance(t, TensorType) for t in types):
        return None
    if not types:
        diag.error(op, "C3", "expected 1 or more operands, but found 0")
        return None
    if dim < 0:
        diag.error(op, "C4", f"attribute 'dimension' failed to satisfy constraint: 64-bit "
                             f"signless integer attribute whose value is non-negative (got {dim})")
        return None
    first = types[0]
    for i, t in enumerate(types[1:], 1):
        if not _c.compatible_element_types(first.element_type, t.element_type):
            diag.error(op, "C1", f"requires the same element type for all operands: operand "
                                 f"(0) is {_c.types_str([first])}, operand ({i}) is "
                                 f"{_c.types_str([t])}")
            return None
    ranked = [(i, t) for i, t in enumerate(types) if t.shape is not None]
    if not ranked:
        return None
    i0, t0 = ranked[0]
    rank = len(t0.shape)
    if rank == 0:
        diag.error(op, "C4", "rank-0 values cannot be concatenated")
        return None
    if dim >= rank:
        diag.error(op, "C4", f"dimension {dim} is out-of-bounds for input rank {rank}")
        return None
    for i, t in ranked[1:]:
        if len(t.shape) != rank:
            diag.error(op, "C2", f"operands ({i0}) and ({i}) do not match rank")
            return None
        for d in range(rank):
            if d != dim and not _c.compatible_dims(t0.shape[d], t.shape[d]):
                diag.error(op, "C2", f"shapes of operand ({i0}) and ({i}) are not compatible at "
                                     f"non-concat index {d}: "
                                     f"({', '.join(map(_dstr, t0.shape))}) != "
                                     f"({', '.join(map(_dstr, t.shape))})")
                return None
    shape: list[int | None] = []
    for d in range(rank):
        if d == dim:
            sizes = [t.shape[d] for _, t in ranked]
            shape.append(None if len(ranked) != len(types) or None in sizes else sum(sizes))
        else:
            known = [t.shape[d] for _, t in ranked if t.shape[d] is not None]
            shape.append(known[0] if known else None)
    return [TensorType(tuple(shape), first.element_type)]


@verifier("stablehlo.concatenate")
def _verify_concatenate(op: Operation, diag: Diagnostics) -> None:
    """(C1) same element types; (C2) same shapes except along `dimension`; (C3) at least one
    input; (C4) `0 <= dimension < rank(inputs[0])`; (C5-C6) the result type."""
    if not _c.signature(op, diag, [(_c.TENSOR, "*")], [_c.TENSOR],
                        attrs={"dimension": "int"}):
        return
    inferred = _infer_concatenate(op, diag)
    if inferred is not None:
        _c.check_inferred(op, diag, "C5, C6", inferred)
        # Upstream's SameOperandsAndResultElementType: quantized parameters too (scales and
        # zero points, which the compatibility above lets differ).
        ets = [v.type.element_type for v in (*op.operands, *op.results)]
        if any(e != ets[0] for e in ets[1:]):
            diag.error(op, "C1, C5", "requires the same element type for all operands and "
                                     "results")
