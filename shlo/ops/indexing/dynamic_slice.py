"""dynamic_slice and dynamic_update_slice (spec sections of the same names): a slice of static
size at start indices known at run time, clamped so that it fits.

The start indices are scalars: they are read as Python ints and the data moves with one basic
(view) index, which keeps these kernels cheap inside loops.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ...attributes import ints_attr
from ...errors import Diagnostics
from ...ir import Operation
from ...registry import QUANTIZED_STORAGE, Kernel, define, inference, kernel, verifier
from ...syntax.directives import (
    ATTRDICT, COMMA, OPERAND, OPERANDS, OPERANDS_COMMA, declarative, named, types,
)
from ...types import TensorType, Type
from .. import _constraints as _c
from .._arrays import result_type

if TYPE_CHECKING:  # pragma: no cover
    from ...interpreter.evaluator import PrepareContext

__all__ = ["dynamic_slice", "dynamic_slice_array", "dynamic_update_slice"]

_INDEX_SCALAR = _c.TC(_c.I, rank=0)


def _clamped_starts(start_indices: Sequence[Any], shape: Sequence[int],
                    sizes: Sequence[int]) -> list[int]:
    """``clamp(0, start_indices, shape - sizes)`` as Python ints."""
    return [min(max(int(np.asarray(s)), 0), n - k)
            for s, n, k in zip(start_indices, shape, sizes)]


def _check_start_indices(op: Operation, diag: Diagnostics, label: str,
                         start_indices: Sequence[Any]) -> bool:
    """The start indices share one type (dynamic_slice C3, dynamic_update_slice C5)."""
    if any(not _c.same_type(start_indices[0], t) for t in start_indices[1:]):
        diag.error(op, label, f"start indices must have same element type: "
                              f"{_c.types_str(start_indices)}")
        return False
    return True


# --- dynamic_slice (spec "dynamic_slice") --------------------------------------------------------

define("stablehlo.dynamic_slice", spec="dynamic_slice",
       summary="a slice of static size at run-time start indices",
       traits={QUANTIZED_STORAGE},
       syntax=declarative(OPERAND, COMMA, OPERANDS_COMMA,
                          *named("sizes", "slice_sizes", "i64list"), ATTRDICT,
                          types("functional")))


def dynamic_slice_array(operand: np.ndarray, start_indices: Sequence[Any],
                        slice_sizes: Sequence[int]) -> np.ndarray:
    """Spec "dynamic_slice": the slice at the clamped start indices (a view)."""
    operand = np.asarray(operand)
    starts = _clamped_starts(start_indices, operand.shape, slice_sizes)
    return operand[tuple(slice(s, s + k) for s, k in zip(starts, slice_sizes))]


@kernel("stablehlo.dynamic_slice", quantized_aware=True)
def dynamic_slice(op: Operation, ctx: PrepareContext) -> Kernel:
    """Spec "dynamic_slice": ``adjusted_start_indices = clamp(0, start_indices, shape - sizes)``."""
    slice_sizes = ints_attr(op, "slice_sizes")
    t = op.operands[0].type
    if isinstance(t, TensorType) and t.is_static and t.rank:
        direct = _static_slicer(t.shape, slice_sizes)
    else:
        def direct(operand: np.ndarray, *start_indices: np.ndarray) -> np.ndarray:
            return dynamic_slice_array(operand, start_indices, slice_sizes)

    def run(operand: np.ndarray, *start_indices: np.ndarray) -> Sequence[Any]:
        return (direct(operand, *start_indices),)

    run.direct = direct  # type: ignore[attr-defined]
    return run


def _static_index(shape: Sequence[int], sizes: Sequence[int]) -> Any:
    """``index(start_indices)``: the basic index of the clamped slice of ``sizes`` in an
    operand of static ``shape``. The clamping bounds are known, dimensions taken whole need no
    index, and one moving dimension (a row of a scan) needs no loop."""
    fixed = [slice(None) if k == n else None for n, k in zip(shape, sizes)]
    moving = [(d, n - k, k) for d, (n, k) in enumerate(zip(shape, sizes)) if k != n]
    if not moving:
        whole = tuple(fixed)
        return lambda start_indices: whole
    if len(moving) == 1:
        (d, hi, k), = moving

        def one(start_indices: Sequence[Any]) -> tuple[slice, ...]:
            s = int(start_indices[d])
            s = 0 if s < 0 else hi if s > hi else s
            index = fixed.copy()
            index[d] = slice(s, s + k)
            return tuple(index)

        return one

    def index(start_indices: Sequence[Any]) -> tuple[slice, ...]:
        index = fixed.copy()
        for d, hi, k in moving:
            s = int(start_indices[d])
            s = 0 if s < 0 else hi if s > hi else s
            index[d] = slice(s, s + k)
        return tuple(index)

    return index


def _static_slicer(shape: Sequence[int], sizes: Sequence[int]) -> Any:
    """``dynamic_slice_array`` for an operand of static ``shape`` (a view)."""
    index = _static_index(shape, sizes)
    return lambda operand, *start_indices: operand[index(start_indices)]


@inference("stablehlo.dynamic_slice")
def _infer_dynamic_slice(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """(C2) `size(start_indices) = size(slice_sizes) = rank(operand)`; (C3) the start indices
    share one type; (C4) `0 <= slice_sizes <= shape(operand)`; (C1, C5) the result is
    `tensor<slice_sizes x element_type(operand)>`."""
    sizes = ints_attr(op, "slice_sizes", None)
    if sizes is None or not op.operands or not isinstance(op.operands[0].type, TensorType):
        return None
    operand = op.operands[0].type
    starts = [v.type for v in op.operands[1:]]
    if len(sizes) != len(starts):
        diag.error(op, "C2", f"has mismatched number of slice sizes ({len(sizes)}) and number of "
                             f"start indices ({len(starts)})")
        return None
    if operand.shape is not None and len(starts) != len(operand.shape):
        diag.error(op, "C2", f"has mismatched number of start indices ({len(starts)}) and the "
                             f"rank of operand ({len(operand.shape)})")
        return None
    if not _check_start_indices(op, diag, "C3", starts):
        return None
    for i, s in enumerate(sizes):
        if s < 0:
            diag.error(op, "C4", f"has negative size index to dynamic slice: {s}")
            return None
        n = operand.shape[i] if operand.shape is not None else None
        if n is not None and s > n:
            diag.error(op, "C4", f"has slice size {s} greater than dimension size {n} in "
                                 f"dimension {i} of operand")
            return None
    return [TensorType(tuple(sizes), operand.element_type)]


@verifier("stablehlo.dynamic_slice")
def _verify_dynamic_slice(op: Operation, diag: Diagnostics) -> None:
    """(C1) element types agree; (C2) `size(start_indices) = size(slice_sizes) =
    rank(operand)`; (C3) the start indices share one type; (C4) `0 <= slice_sizes <=
    shape(operand)`; (C5) `shape(result) = slice_sizes`."""
    if not _c.signature(op, diag, [_c.TENSOR, (_INDEX_SCALAR, "*")], [_c.TENSOR],
                        attrs={"slice_sizes": "ints"}):
        return
    inferred = _infer_dynamic_slice(op, diag)
    if inferred is not None:
        _c.check_inferred(op, diag, "C1, C5", inferred)


# --- dynamic_update_slice (spec "dynamic_update_slice") ------------------------------------------

define("stablehlo.dynamic_update_slice", spec="dynamic_update_slice",
       summary="the operand with a slice replaced at run-time start indices",
       traits={QUANTIZED_STORAGE},
       syntax=declarative(OPERANDS, ATTRDICT, types("functional")))


@kernel("stablehlo.dynamic_update_slice", quantized_aware=True)
def dynamic_update_slice(op: Operation, ctx: PrepareContext) -> Kernel:
    """Spec "dynamic_update_slice": writes ``update`` at the clamped start indices (a copy).

    ``inplace`` = ``(fresh, write)`` lets prepared loops update a buffer they own in place
    (``interpreter.emitter.Emitter._in_place`` proves the old value dead): ``fresh(x)`` is the owned
    copy, ``write(buffer, update, *start_indices)`` writes into it and returns it."""
    dtype = result_type(op).dtype

    def fresh(operand: Any) -> np.ndarray:
        return np.array(operand, dtype=dtype, copy=True)

    def write(result: np.ndarray, update: Any, *start_indices: Any) -> np.ndarray:
        update = np.asarray(update)
        starts = _clamped_starts(start_indices, result.shape, update.shape)
        result[tuple(slice(s, s + k) for s, k in zip(starts, update.shape))] = update
        return result

    t, u = op.operands[0].type, op.operands[1].type
    if isinstance(t, TensorType) and isinstance(u, TensorType) and t.is_static and \
            u.is_static and t.rank:
        index = _static_index(t.shape, u.shape)

        def write(result: np.ndarray, update: Any, *start_indices: Any) -> np.ndarray:  # noqa
            result[index(start_indices)] = update
            return result

    def direct(operand: Any, update: Any, *start_indices: Any) -> np.ndarray:
        return write(fresh(operand), update, *start_indices)

    def run(operand: np.ndarray, update: np.ndarray, *start_indices: np.ndarray
            ) -> Sequence[Any]:
        return (direct(operand, update, *start_indices),)

    run.direct = direct  # type: ignore[attr-defined]
    run.inplace = (fresh, write)  # type: ignore[attr-defined]
    return run


@inference("stablehlo.dynamic_update_slice")
def _infer_dynamic_update_slice(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """(C2) `element_type(update) = element_type(operand)`; (C3) `rank(update) =
    rank(operand)`; (C4) `size(start_indices) = rank(operand)`; (C5) the start indices share one
    type; (C6) `0 <= shape(update) <= shape(operand)`; (C1) `type(result) = type(operand)`."""
    if len(op.operands) < 2:
        return None
    operand, update = op.operands[0].type, op.operands[1].type
    if not isinstance(operand, TensorType) or not isinstance(update, TensorType):
        return None
    starts = [v.type for v in op.operands[2:]]
    if not _c.compatible_element_types(operand.element_type, update.element_type):
        diag.error(op, "C2", f"expects update and operand to have the same element type: "
                             f"{_c.types_str([update, operand])}")
        return None
    if operand.shape is not None and update.shape is not None and \
            len(update.shape) != len(operand.shape):
        diag.error(op, "C3", f"update rank does not match operand rank: {len(update.shape)} vs "
                             f"{len(operand.shape)}.")
        return None
    if operand.shape is not None and len(starts) != len(operand.shape):
        diag.error(op, "C4", f"expects number of start_indices to match operand rank: "
                             f"{len(starts)} vs {len(operand.shape)}.")
        return None
    if not _check_start_indices(op, diag, "C5", starts):
        return None
    if operand.shape is not None and update.shape is not None:
        for i, (u, n) in enumerate(zip(update.shape, operand.shape)):
            if u is not None and n is not None and not 0 <= u <= n:
                diag.error(op, "C6", f"expects size at dimension {i} of update to be in range "
                                     f"[0, {n}]. Got: {u}.")
                return None
    return [operand]


@verifier("stablehlo.dynamic_update_slice")
def _verify_dynamic_update_slice(op: Operation, diag: Diagnostics) -> None:
    """(C1) `type(operand) = type(result)`; (C2) element types agree; (C3) `rank(update) =
    rank(operand)`; (C4) `size(start_indices) = rank(operand)`; (C5) the start indices share one
    type; (C6) `0 <= shape(update) <= shape(operand)`."""
    if not _c.signature(op, diag, [_c.TENSOR, _c.TENSOR, (_INDEX_SCALAR, "*")], [_c.TENSOR]):
        return
    inferred = _infer_dynamic_update_slice(op, diag)
    if inferred is not None:
        _c.check_inferred(op, diag, "C1", inferred)
