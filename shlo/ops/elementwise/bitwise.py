"""Element-wise logic and bit manipulation: and, count_leading_zeros, not, or, popcnt,
shift_left, shift_right_arithmetic, shift_right_logical, xor (spec order).

Logical for i1, bitwise for integers (the two's complement bits of the type's width; the
sub-byte integers are computed in int8/uint8 and cast back).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ...dtypes import int_of_size
from ...ir import Operation
from ...registry import COMMUTATIVE, Kernel, kernel
from .. import _constraints as _c
from .._numeric import IntInfo, int_info
from ._common import binary_op, on_wide, one, operand_et, unary_op, unsupported

if TYPE_CHECKING:  # pragma: no cover
    from ...interpreter.evaluator import PrepareContext

__all__: list[str] = []


def _bitwise(op: Operation, ufunc: np.ufunc) -> Kernel:
    et = operand_et(op)
    if et.is_bool:
        return one(ufunc)
    if et.is_integer:
        info = int_info(et)
        if info.native:
            return one(ufunc)
        return one(on_wide(ufunc, info))
    raise unsupported(op, et)


def _unsigned_bits(x: Any, info: IntInfo) -> np.ndarray:
    """The ``width`` low bits of integers as a native unsigned array."""
    u = np.asarray(x).astype(info.wide).view(info.unsigned)
    return u if info.native else np.bitwise_and(u, info.mask)


# --- and (spec "and") -----------------------------------------------------------------------------

binary_op("and", _c.PRED_INT_TENSOR, COMMUTATIVE, result=_c.TENSOR)


@kernel("stablehlo.and")
def and_(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: and. Logical for i1, bitwise for integers."""
    return _bitwise(op, np.bitwise_and)


# --- count_leading_zeros (spec "count_leading_zeros") ---------------------------------------------

unary_op("count_leading_zeros", _c.INT_TENSOR)


def _clz(u: np.ndarray, width: int) -> np.ndarray:
    """Leading zeros of the ``width``-bit unsigned values ``u`` (binary search on the bits)."""
    n = np.full(u.shape, width, np.int64)
    for s in (32, 16, 8, 4, 2, 1):
        if s < width:
            hi = np.right_shift(u, s)
            nz = hi != 0
            n = np.where(nz, n - s, n)
            u = np.where(nz, hi, u)
    return n - (u != 0)


@kernel("stablehlo.count_leading_zeros")
def count_leading_zeros(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: count_leading_zeros."""
    et = operand_et(op)
    if not et.is_integer:
        raise unsupported(op, et)
    info = int_info(et)
    rdt = info.dtype
    return one(lambda x: _clz(_unsigned_bits(x, info), info.width).astype(rdt))


# --- not (spec "not") -----------------------------------------------------------------------------

unary_op("not", _c.PRED_INT_TENSOR)


@kernel("stablehlo.not")
def not_(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: not. Logical for i1, bitwise for integers."""
    et = operand_et(op)
    if et.is_bool:
        return one(np.logical_not)
    if et.is_integer:
        info = int_info(et)
        if info.native:
            return one(np.invert)
        return one(on_wide(np.invert, info))
    raise unsupported(op, et)


# --- or (spec "or") -------------------------------------------------------------------------------

binary_op("or", _c.PRED_INT_TENSOR, COMMUTATIVE, result=_c.TENSOR)


@kernel("stablehlo.or")
def or_(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: or. Logical for i1, bitwise for integers."""
    return _bitwise(op, np.bitwise_or)


# --- popcnt (spec "popcnt") -----------------------------------------------------------------------

unary_op("popcnt", _c.INT_TENSOR)


@kernel("stablehlo.popcnt")
def popcnt(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: popcnt (bits of the two's complement representation)."""
    et = operand_et(op)
    if not et.is_integer:
        raise unsupported(op, et)
    info = int_info(et)
    rdt = info.dtype
    if info.native and not info.signed:
        return one(lambda x: np.bitwise_count(x).astype(rdt))
    return one(lambda x: np.bitwise_count(_unsigned_bits(x, info)).astype(rdt))


# --- shift_left, shift_right_arithmetic, shift_right_logical (spec "shift_left", ...) -------------

binary_op("shift_left", _c.INT_TENSOR)
binary_op("shift_right_arithmetic", _c.INT_TENSOR)
binary_op("shift_right_logical", _c.INT_TENSOR)


def _uniform(y: np.ndarray) -> Any:
    """The one value of ``y`` when every element is that value by construction (0-d, or a
    broadcast: all strides 0, as a splat ``broadcast_in_dim`` gives), else None."""
    if y.size and not any(y.strides):
        return y.reshape(-1)[0] if y.ndim else y[()]
    return None


def _shift(op: Operation, kind: str) -> Kernel:
    """Shifts; an amount outside [0, width) (rhs read as unsigned) gives 0, or the sign fill
    for shift_right_arithmetic, as the upstream interpreter (LLVM APInt). One numpy pass when
    the amount is one splat value (threefry's rotations: ~5x faster on 38.6M elements), and no
    select when no amount is out of range."""
    et = operand_et(op)
    if not et.is_integer:
        raise unsupported(op, et)
    info = int_info(et)
    width, wide, unsigned = info.width, info.wide, info.unsigned
    signed_dt = int_of_size(wide.itemsize)
    mask = info.mask

    def outside(y: Any) -> Any:
        return np.logical_or(np.less(y, 0), np.greater_equal(y, width)) if info.signed \
            else np.greater_equal(y, width)

    def apply(shift: Callable[[Any, Any], Any], v: Any, y: Any, fill: Callable[[Any], Any],
              amount_dt: np.dtype) -> Any:
        """``shift(v, amount)``, ``fill(v)`` where the amount is out of range."""
        y = np.asarray(y, wide)
        one_amount = _uniform(y)
        if one_amount is not None:
            if bool(outside(one_amount)):
                return np.broadcast_to(fill(v), np.broadcast_shapes(np.shape(v), y.shape)).copy()
            return shift(v, amount_dt.type(one_amount))
        out = outside(y)
        if not out.any():
            return shift(v, y.view(amount_dt))
        r = shift(v, np.where(out, wide.type(0), y).view(amount_dt))
        return np.where(out, fill(v), r)

    if kind == "left":
        def left(x: Any, y: Any) -> Any:
            u = np.asarray(x, wide).view(unsigned)
            return apply(np.left_shift, u, y, lambda v: unsigned.type(0), unsigned).view(wide)

        return one(on_wide(left, info))

    if kind == "logical":
        def logical(x: Any, y: Any) -> Any:
            u = np.asarray(x, wide).view(unsigned)
            if not info.native:
                u = np.bitwise_and(u, unsigned.type(mask))
            return apply(np.right_shift, u, y, lambda v: unsigned.type(0), unsigned).view(wide)

        return one(on_wide(logical, info))

    # arithmetic: shift the bits as a signed number of `width` bits (also for unsigned types,
    # as APInt::ashr does)
    def arithmetic(x: Any, y: Any) -> Any:
        v = np.asarray(x, wide).view(signed_dt)
        if not info.native and not info.signed:  # sign-extend the low `width` bits
            sign = 1 << (width - 1)
            v = np.subtract(np.bitwise_xor(np.asarray(x, wide), sign).view(signed_dt),
                            signed_dt.type(sign))
        return apply(np.right_shift, v, y, sign_fill, signed_dt).view(wide)

    def sign_fill(v: Any) -> Any:
        return np.where(np.less(v, 0), signed_dt.type(-1), signed_dt.type(0))

    return one(on_wide(arithmetic, info))


@kernel("stablehlo.shift_left")
def shift_left(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: shift_left."""
    return _shift(op, "left")


@kernel("stablehlo.shift_right_arithmetic")
def shift_right_arithmetic(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: shift_right_arithmetic."""
    return _shift(op, "arithmetic")


@kernel("stablehlo.shift_right_logical")
def shift_right_logical(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: shift_right_logical."""
    return _shift(op, "logical")


# --- xor (spec "xor") -----------------------------------------------------------------------------

binary_op("xor", _c.PRED_INT_TENSOR, COMMUTATIVE, result=_c.TENSOR)


@kernel("stablehlo.xor")
def xor(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: xor. Logical for i1, bitwise for integers."""
    return _bitwise(op, np.bitwise_xor)
