"""Element-wise binary chlo ops on operands of one shape: zeta, polygamma (computed in float64
and rounded once, with the lowering's domain rules), next_after, mulhi."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from .._lazy import special as sc
from ...dtypes import bit_width, sub_byte_int, uint_of_size
from ...errors import ExecutionError
from ...ir import Operation
from ...registry import Kernel, kernel
from .. import _constraints as _c
from .._numeric import round_from_wide
from ._common import F, as_wide, elementwise_op, is_int, result_type
from .unary import digamma

if TYPE_CHECKING:  # pragma: no cover
    from ...interpreter.evaluator import PrepareContext

__all__ = ["zeta", "polygamma", "next_after", "mulhi"]


# --- zeta, polygamma ------------------------------------------------------------------------------


def zeta(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Hurwitz ζ(x, q) = Σ (q + n)^-x, with the lowering's domain rules.

    NaN for x < 1; for q <= 0 NaN unless x is an integer; at the poles (q a non-positive
    integer) +inf when x is an even integer, else NaN; +inf for x = 1.
    """
    x, q = np.broadcast_arrays(x, q)
    with np.errstate(all="ignore"):
        out = np.asarray(sc.zeta(x, q), dtype=np.float64)
        x_int = is_int(x)
        out = np.where(x < 1, np.nan, out)
        out = np.where((q <= 0) & ~x_int, np.nan, out)
        at_pole = (q <= 0) & is_int(q)
        even = x_int & (np.fmod(x, 2) == 0)
        out = np.where(at_pole, np.where(even, np.inf, np.nan), out)
        return np.where(x == 1, np.inf, out)


def polygamma(n: np.ndarray, x: np.ndarray) -> np.ndarray:
    """ψ^(n)(x) = (-1)^(n+1) n! ζ(n+1, x) for natural n (ψ for n = 0); NaN for other n."""
    n, x = np.broadcast_arrays(n, x)
    with np.errstate(all="ignore"):
        sign = 2.0 * np.fmod(n, 2) - 1.0
        out = sign * np.exp(sc.gammaln(n + 1)) * zeta(n + 1, x)
        out = np.where(n == 0, digamma(x), out)
        natural = is_int(n) & (n >= 0)
        return np.where(natural, out, np.nan)


def _wide_binary(name: str, fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> None:
    def prepare(op: Operation, ctx: PrepareContext) -> Kernel:
        dtype = result_type(op).dtype

        def run(a: Any, b: Any) -> Sequence[Any]:
            with np.errstate(all="ignore"):
                y = fn(as_wide(a), as_wide(b))
            return (round_from_wide(y, dtype),)

        return run

    prepare.__name__ = name
    prepare.__doc__ = f"`chlo.{name}` computed in float64 and rounded once."
    kernel(f"chlo.{name}")(prepare)


elementwise_op("zeta", F, arity=2)
_wide_binary("zeta", zeta)
elementwise_op("polygamma", F, arity=2)
_wide_binary("polygamma", polygamma)


# --- next_after -----------------------------------------------------------------------------------

elementwise_op("next_after", F, arity=2)


def next_after(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """std::nextafter(x, y) on the bit patterns of any float format (as the lowering does).

    NaN if either is NaN; ``y`` if x == y (so nextafter(0, -0) = -0); the smallest subnormal
    signed like ``y`` when x is ±0; otherwise one step of the magnitude bits towards ``y``.
    """
    x, y = np.broadcast_arrays(np.asarray(x), np.asarray(y))
    dtype = x.dtype
    storage, width = uint_of_size(dtype.itemsize), bit_width(dtype)
    xi = np.ascontiguousarray(x).view(storage)
    yi = np.ascontiguousarray(y).view(storage)
    sign = storage.type(1 << (width - 1))
    mag = storage.type((1 << (width - 1)) - 1)
    xw, yw = x.astype(np.float64), y.astype(np.float64)
    x_abs, y_abs = xi & mag, yi & mag
    smaller = (x_abs > y_abs) | ((xi & sign) != (yi & sign))
    one = storage.type(1)
    step = np.where(smaller, xi - one, xi + one).astype(storage)
    tiny = ((yi & sign) | one).astype(storage)
    out = np.where(x_abs == 0, np.where(y_abs == 0, yi, tiny), step)
    out = np.where(xw == yw, yi, out).astype(storage)
    result = out.view(dtype)
    nan = np.isnan(xw) | np.isnan(yw)
    if nan.any():
        result = np.where(nan, np.array(np.nan).astype(dtype), result)
    return result


@kernel("chlo.next_after")
def next_after_op(op: Operation, ctx: PrepareContext) -> Kernel:
    """`chlo.next_after(x, y)`: the next representable value of x towards y (std::nextafter)."""
    dtype = result_type(op).dtype

    def run(x: Any, y: Any) -> Sequence[Any]:
        return (np.asarray(next_after(np.asarray(x, dtype), np.asarray(y, dtype))),)

    return run


# --- mulhi ----------------------------------------------------------------------------------------

elementwise_op("mulhi", _c.TC(_c.I), arity=2)


def mulhi(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The high half of the double-width product of two integers of the same type."""
    a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    dtype = a.dtype
    if dtype.kind in "iu":
        width, signed = dtype.itemsize * 8, dtype.kind == "i"
    elif sub_byte_int(dtype) is not None:
        width, signed = sub_byte_int(dtype)  # type: ignore[misc]
    else:
        raise ExecutionError(f"chlo.mulhi: integer operands expected, got {dtype}")
    if width <= 32:
        wide = np.int64 if signed else np.uint64
        p = a.astype(wide) * b.astype(wide)
        return (p >> wide(width)).astype(dtype)
    # 64-bit: schoolbook multiplication on 32-bit limbs, then correct for the signs.
    ua, ub = a.view(np.uint64), b.view(np.uint64)
    m32 = np.uint64(0xFFFFFFFF)
    s32 = np.uint64(32)
    a_lo, a_hi = ua & m32, ua >> s32
    b_lo, b_hi = ub & m32, ub >> s32
    lo_lo = a_lo * b_lo
    hi_lo = a_hi * b_lo
    lo_hi = a_lo * b_hi
    hi_hi = a_hi * b_hi
    cross = (lo_lo >> s32) + (hi_lo & m32) + lo_hi
    high = hi_hi + (hi_lo >> s32) + (cross >> s32)
    if signed:
        high = high - np.where(a < 0, ub, np.uint64(0)) - np.where(b < 0, ua, np.uint64(0))
        return high.view(np.int64)
    return high


@kernel("chlo.mulhi")
def mulhi_op(op: Operation, ctx: PrepareContext) -> Kernel:
    """`chlo.mulhi(lhs, rhs)`: the upper half of the full-width integer product."""

    def run(a: Any, b: Any) -> Sequence[Any]:
        return (mulhi(a, b),)

    return run
