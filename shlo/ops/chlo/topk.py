"""chlo.top_k: the k largest entries along the last dimension, and their indices."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ...attributes import int_attr
from ...dtypes import bit_width, sub_byte_int, uint_of_size
from ...errors import Diagnostics, ExecutionError
from ...ir import Operation
from ...registry import Kernel, define, inference, kernel, verifier
from ...syntax.directives import ATTRDICT, COMMA, OPERAND, declarative, named, p_, types
from ...types import TensorType, Type, element_type
from .. import _constraints as _c
from ._common import ANY, result_type

if TYPE_CHECKING:  # pragma: no cover
    from ...interpreter.evaluator import PrepareContext

__all__ = ["top_k"]

define("chlo.top_k", summary="ChloOps.td",
       syntax=declarative(p_("("), OPERAND, COMMA, *named("k", "k", "i64"), p_(")"), ATTRDICT,
                          types("chlo_unary")))


def _descending_key(x: np.ndarray) -> np.ndarray:
    """Integer keys whose ascending order is ``x``'s descending total order.

    Floats use the total order of the lowering's TOTALORDER compare: -NaN < -inf < ... < -0 <
    +0 < ... < +inf < +NaN (by bit pattern), so a positive NaN comes first.
    """
    dtype = x.dtype
    if dtype == np.bool_:
        return ~x.astype(np.int8)
    sub_byte = sub_byte_int(dtype)
    if dtype.kind == "u" or (sub_byte is not None and not sub_byte[1]):
        return ~x.astype(np.uint64)
    if dtype.kind == "i" or sub_byte is not None:
        return ~x.astype(np.int64)
    storage, width = uint_of_size(dtype.itemsize), bit_width(dtype)
    if width == 64:
        signed = np.ascontiguousarray(x).view(np.int64)
        negative = signed < 0
        mag = signed & np.int64(0x7FFFFFFFFFFFFFFF)
    else:
        bits = np.ascontiguousarray(x).view(storage).astype(np.int64)
        negative = ((bits >> (width - 1)) & 1).astype(bool)
        mag = bits & ((1 << (width - 1)) - 1)
    total = np.where(negative, -mag - 1, mag)  # increasing in the float total order
    return ~total


def top_k(x: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` largest entries along the last dimension, largest first; ties keep the lower
    index first (a stable descending sort)."""
    x = np.asarray(x)
    n = x.shape[-1]
    k = min(k, n)
    order = np.argsort(_descending_key(x), axis=-1, kind="stable")[..., :k]
    return np.take_along_axis(x, order, axis=-1), order


@kernel("chlo.top_k")
def top_k_op(op: Operation, ctx: PrepareContext) -> Kernel:
    """`chlo.top_k(operand, k)`: values and i32 indices of the k largest along the last dim."""
    k = int_attr(op, "k", None)
    if k is None:
        raise ExecutionError("chlo.top_k: missing attribute `k`", op.location)
    idx_dtype = result_type(op, 1).dtype

    def run(x: Any) -> Sequence[Any]:
        values, indices = top_k(x, k)
        return values, indices.astype(idx_dtype)

    return run


_I32 = element_type("i32")


@inference("chlo.top_k")
def _infer_top_k(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """Values of the operand's element type and i32 indices, both of the operand's shape with
    the last dimension `k`; `k` is at most the last dimension (C1)."""
    operand = op.operands[0].type
    k = int_attr(op, "k", None)
    if not isinstance(operand, TensorType) or operand.shape is None or k is None:
        return None
    if not operand.shape:
        diag.error(op, "C1", "operand's rank must be at least 1")
        return None
    last = operand.shape[-1]
    if last is not None and last < k:
        diag.error(op, "C1", f"operand's last dimension must be at least {k}, got {last}")
        return None
    shape = tuple(operand.shape[:-1]) + (_c.size_of(k),)
    return [TensorType(shape, operand.element_type), TensorType(shape, _I32)]


@verifier("chlo.top_k")
def _verify_chlo_top_k(op: Operation, diag: Diagnostics) -> None:
    """`chlo.top_k`: (C1) see the inference; (C2) the results have the inferred types."""
    if not _c.signature(op, diag, [_c.TC(_c.F | _c.B | _c.I, ranked=False)],
                        [ANY, _c.TC(_c.I, ranked=False)], attrs={"k": "int"}):
        return
    inferred = _infer_top_k(op, diag)
    if inferred is not None:
        _c.check_inferred(op, diag, "C2", inferred)
