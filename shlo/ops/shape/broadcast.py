"""broadcast_in_dim (spec "broadcast_in_dim") and broadcast (not in HLO): expand an operand's
dimensions into a larger result.

The result of a static broadcast is a read-only view with zero strides on the new dimensions
(no copy). :func:`check_broadcast_in_dim` is shared with dynamic_broadcast_in_dim.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ...attributes import ints_attr
from ...errors import Diagnostics
from ...ir import Operation
from ...registry import QUANTIZED_STORAGE, Kernel, define, inference, kernel, verifier
from ...syntax.directives import ATTRDICT, COMMA, OPERAND, declarative, named, types
from ...types import QuantizedType, TensorType, Type
from .. import _constraints as _c
from .._arrays import as_dtype, result_type, static_shape

if TYPE_CHECKING:  # pragma: no cover
    from ...interpreter.evaluator import PrepareContext

__all__ = ["broadcast_in_dim", "broadcast", "broadcast_in_dim_array", "check_broadcast_in_dim",
           "STATIC_QA"]

STATIC_QA = _c.TC(_c.F | _c.B | _c.I | _c.C | _c.Q | _c.QA, static=True,
                  description="statically shaped or single bounded dimension tensor of "
                              "4/6/8/16/32/64-bit float or bool or 2/4/8/16/32/64-bit integer "
                              "or complex type with 32/64-bit float elements or per-tensor "
                              "integer quantized or per-axis integer quantized values")
"""The result type constraint of broadcast_in_dim and reshape (upstream's
`HLO_StaticShapeTensorPerAxisQuantizedTensor`)."""

# --- broadcast_in_dim (spec "broadcast_in_dim") --------------------------------------------------

define("stablehlo.broadcast_in_dim", spec="broadcast_in_dim",
       summary="expands the operand's dimensions into the result's",
       traits={QUANTIZED_STORAGE},
       syntax=declarative(OPERAND, COMMA, *named("dims", "broadcast_dimensions", "i64list"),
                          ATTRDICT, types("functional")))


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
def broadcast_in_dim(op: Operation, ctx: PrepareContext) -> Kernel:
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


def check_broadcast_in_dim(op: Operation, diag: Diagnostics, operand: Any, result: Any,
                           broadcast_dimensions: Sequence[int]) -> bool:
    """broadcast_in_dim (C1-C6), shared with dynamic_broadcast_in_dim: the result shape is free
    (the result type gives it), so the constraints relate the written result to the operand."""
    if operand.shape is None or result.shape is None:
        return True
    dims = broadcast_dimensions
    r, rr = len(operand.shape), len(result.shape)
    if len(dims) != r:
        diag.error(op, "C2", f"broadcast_dimensions size ({len(dims)}) does not match operand "
                             f"rank ({r})")
        return False
    ok = True
    for d in dims:
        if not 0 <= d < rr:
            diag.error(op, "C3", f"broadcast_dimensions contains invalid value {d} for result "
                                 f"with rank {rr}")
            return False
    if not _c.is_unique(dims):
        diag.error(op, "C4", f"broadcast_dimensions should not have duplicates: "
                             f"{_c.dims_str(dims)}")
        return False
    for i, d in enumerate(dims):
        a, b = operand.shape[i], result.shape[d]
        if a is not None and a != 1 and b is not None and a != b:
            how = "is not compatible with" if op.name.endswith("dynamic_broadcast_in_dim") \
                else "is not equal to 1 or"
            diag.error(op, "C5", f"size of operand dimension {i} ({a}) {how} size of result "
                                 f"dimension {d} ({b})")
            ok = False
    if not ok:
        return False
    a, b = operand.element_type, result.element_type
    if isinstance(a, QuantizedType) and a.quantization_dimension is not None and \
            isinstance(b, QuantizedType) and b.quantization_dimension is not None:
        if (a.storage_type, a.min, a.max, a.expressed_type) != \
                (b.storage_type, b.min, b.max, b.expressed_type):
            diag.error(op, "C1", "expects operand and result to have the same quantized storage "
                                 "and expressed types: " + _c.types_str([operand, result]))
            return False
        qa, qb = a.quantization_dimension, b.quantization_dimension
        if qa < r and qb != dims[qa]:
            diag.error(op, "C6", f"result quantization_dimension {qb} not same as "
                                 f"broadcast_dimensions[{qa}] = {dims[qa]}")
            return False
        if qa < r and operand.shape[qa] == 1:
            for i in range(len(b.scales)):
                if b.scales[i] != a.scales[0]:
                    diag.error(op, "C6", f"mismatch result scale {i} ({b.scales[i]:e}) and "
                                         f"operand scale 0 ({a.scales[0]:e})")
                    return False
                if b.zero_points[i] != a.zero_points[0]:
                    diag.error(op, "C6", f"mismatch result zero_point {i} "
                                         f"({b.zero_points[i]}) and operand zero_point 0 "
                                         f"({a.zero_points[0]})")
                    return False
        return True
    return _c.per_tensor_same_quant(op, diag, "C1", operand, result)


@verifier("stablehlo.broadcast_in_dim")
def _verify_broadcast_in_dim(op: Operation, diag: Diagnostics) -> None:
    """(C1) element types agree (per-axis parameters may differ); (C2) `size(
    broadcast_dimensions) = rank(operand)`; (C3) `0 <= broadcast_dimensions < rank(result)`;
    (C4) unique; (C5) each operand dimension is 1 or the result's; (C6) per-axis quantization
    follows the broadcast dimension."""
    if not _c.signature(op, diag, [_c.TENSOR_QA], [STATIC_QA],
                        attrs={"broadcast_dimensions": "ints"}):
        return
    check_broadcast_in_dim(op, diag, op.operands[0].type, op.results[0].type,
                           ints_attr(op, "broadcast_dimensions", None))


# --- broadcast (not in HLO) ----------------------------------------------------------------------

define("stablehlo.broadcast", summary="prepends dimensions to the operand (not in HLO)",
       traits={QUANTIZED_STORAGE},
       syntax=declarative(OPERAND, COMMA, *named("sizes", "broadcast_sizes", "i64list"),
                          ATTRDICT, types("functional")))


@kernel("stablehlo.broadcast", quantized_aware=True)
def broadcast(op: Operation, ctx: PrepareContext) -> Kernel:
    """`broadcast` (not in HLO): prepends ``broadcast_sizes`` dimensions to the operand."""
    sizes = ints_attr(op, "broadcast_sizes")

    def run(operand: np.ndarray) -> Sequence[Any]:
        operand = np.asarray(operand)
        return (np.broadcast_to(operand, tuple(sizes) + operand.shape),)

    return run


@inference("stablehlo.broadcast")
def _infer_broadcast(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """`shape(result) = broadcast_sizes + shape(operand)`, the operand's element type."""
    sizes = ints_attr(op, "broadcast_sizes", None)
    t = op.operands[0].type if op.operands else None
    if sizes is None or not isinstance(t, TensorType) or t.shape is None:
        return None
    if any(s < 0 for s in sizes):
        diag.error(op, "C1", f"Broadcast with negative dimension size "
                             f"{next(s for s in sizes if s < 0)}")
        return None
    return [TensorType(tuple(sizes) + tuple(t.shape), t.element_type)]


@verifier("stablehlo.broadcast")
def _verify_broadcast(op: Operation, diag: Diagnostics) -> None:
    """`broadcast` (beyond the seed spec): the result shape is `broadcast_sizes` followed by the
    operand's shape, with the operand's element type."""
    if not _c.signature(op, diag, [_c.TENSOR], [_c.TENSOR_QA],
                        attrs={"broadcast_sizes": "ints"}):
        return
    inferred = _infer_broadcast(op, diag)
    if inferred is not None:
        _c.check_inferred(op, diag, "C1", inferred)
