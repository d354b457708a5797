"""Numeric helpers for the element-wise ops: integer facts, float formats, correct rounding.

Everything here is vectorized numpy and works on arrays of any shape and on numpy scalars.
The two facts that need care (see docs/semantics/elementwise.md):

* ml_dtypes has no arithmetic of its own for the sub-byte integers beyond add/subtract/multiply:
  other ufuncs promote int2/int4/uint2/uint4 to int8. :class:`IntInfo` names the native
  ``wide`` dtype to compute in; casting back with ``astype`` wraps (two's complement).
* Older ml_dtypes converted float64 (and int64) to narrow floats through float32, rounding
  twice. :func:`round_f64_to` rounds once: by the direct cast where a self-test on the values
  next to ties shows it rounds once (:func:`direct_f64_cast_ok`), otherwise float64 -> float32
  *round-to-odd*, then float32 -> target round-to-nearest-even, which is exact rounding for
  every target of at most 22 significand bits.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import numpy as np

from ..dtypes import (
    C64, C128, F32, F64, finfo, int_of_size, is_ml_float, is_sub_byte_int, uint_of_size,
)
from ..types import FloatType, IntegerType

__all__ = [
    "IntInfo", "FloatInfo", "int_info", "float_info", "round_f64_to", "direct_f64_cast_ok", "round_from_wide",
    "from_f64", "int_to_float", "float_to_int", "total_order_key", "F64", "F32", "C128", "C64",
    "rto_f32",
]


# --- integers -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class IntInfo:
    """What the integer kernels need to know about an integer element type (not i1)."""

    dtype: np.dtype      # the run-time dtype (ml_dtypes int4 etc. for sub-byte types)
    width: int           # bits of the StableHLO type
    signed: bool
    wide: np.dtype       # a numpy-native dtype holding the same values (int8/uint8 for sub-byte)
    unsigned: np.dtype   # native unsigned dtype of wide's size (for bit manipulation)
    min: int
    max: int

    @property
    def native(self) -> bool:
        """True when numpy ufuncs work on ``dtype`` directly."""
        return self.dtype == self.wide

    @property
    def mask(self) -> int:
        """``width`` one bits."""
        return (1 << self.width) - 1


@lru_cache(maxsize=None)
def int_info(et: IntegerType) -> IntInfo:
    dt = et.dtype
    signed = et.is_signed
    nbytes = max(1, et.width // 8)
    wide = int_of_size(nbytes) if signed else uint_of_size(nbytes)
    return IntInfo(dt, et.width, signed, wide, uint_of_size(nbytes), et.min, et.max)


# --- floats ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FloatInfo:
    """Bit layout of a floating-point element type."""

    dtype: np.dtype
    width: int           # bits of the format (4 for f4E2M1FN, stored in one byte)
    mantissa_bits: int   # explicit significand bits
    exponent_bits: int
    has_sign: bool       # False only for f8E8M0FNU
    has_inf: bool
    nan_is_negative_zero: bool  # the FNUZ formats: the "-0" bit pattern is their only NaN
    bits: np.dtype       # unsigned storage dtype (uint8 for every format of at most 8 bits)

    @property
    def ieee_like(self) -> bool:
        """True for formats laid out as IEEE-754 (bias 2^(e-1)-1, inf and NaN encodings)."""
        return self.has_sign and self.has_inf


@lru_cache(maxsize=None)
def float_info(et: FloatType) -> FloatInfo:
    dt = et.dtype
    fi = finfo(dt)
    width = int(fi.bits)
    nmant, nexp = int(fi.nmant), int(fi.nexp)
    has_sign = 1 + nexp + nmant == width
    bits = uint_of_size(dt.itemsize)
    with np.errstate(all="ignore"):
        has_inf = bool(np.isinf(np.array(np.inf, F32).astype(dt)))
        fnuz = has_sign and bool(np.isnan(np.array(1 << (width - 1), bits).view(dt)))
    return FloatInfo(dt, width, nmant, nexp, has_sign, has_inf, fnuz, bits)


def rto_f32(x: np.ndarray) -> np.ndarray:
    """float64 -> float32 rounding to odd (truncate, then set the last bit when inexact)."""
    y = x.astype(F32)
    back = y.astype(F64)
    inexact = np.not_equal(back, x) & ~np.isnan(x)
    away = np.greater(np.abs(back), np.abs(x))
    bits = y.view(np.uint32)
    bits = np.where(inexact & away, bits - np.uint32(1), bits)
    bits = bits | inexact.astype(np.uint32)
    return bits.view(F32)


def _round_f64_careful(x: np.ndarray, dt: np.dtype) -> np.ndarray:
    """float64 -> ``dt`` rounded once: round to odd in float32, then to nearest even."""
    with np.errstate(all="ignore"):
        return rto_f32(np.asarray(x, F64)).astype(dt)


def _near_ties(dt: np.dtype) -> np.ndarray:
    """float64 values where a two-step rounding to ``dt`` would go wrong: the midpoints
    between neighbouring finite values of ``dt`` (every one for formats of at most 8 bits, a
    regular sample of about 2^11 for 16-bit ones, always including both ends of the range) and
    values a relative 2^-26, 2^-30, 2^-45 and one float64 ulp either side of them, the values
    themselves, and the overflow threshold's neighbourhood."""
    nbits = dt.itemsize * 8
    pats = np.arange(1 << nbits, dtype=np.uint32).astype(uint_of_size(dt.itemsize))
    with np.errstate(all="ignore"):
        vals = np.unique(pats.view(dt).astype(F64))
    vals = vals[np.isfinite(vals)]
    step = max(1, len(vals) // (1 << 11))
    idx = np.unique(np.r_[np.arange(0, len(vals) - 1, step), 0, 1, 2, len(vals) - 3,
                          len(vals) - 2])
    lo, hi = vals[idx], vals[idx + 1]
    mid = lo / 2 + hi / 2  # exact: the formats have few significand bits
    top = vals[-1] + (vals[-1] - vals[-2]) / 2  # the overflow threshold
    base = np.r_[mid, lo, top, -top]
    outs = [base, np.nextafter(base, np.inf), np.nextafter(base, -np.inf)]
    for rel in (2.0 ** -26, 2.0 ** -30, 2.0 ** -45):
        outs += [base * (1 + rel), base * (1 - rel)]
    return np.concatenate(outs + [np.array([np.inf, -np.inf, np.nan, 0.0, -0.0])])


@lru_cache(maxsize=None)
def direct_f64_cast_ok(dt: np.dtype) -> bool:
    """True when ``x.astype(dt)`` on float64 values rounds exactly as :func:`_round_f64_careful`
    (one rounding to nearest even), measured once per dtype on the values where a conversion
    through float32 would round twice (:func:`_near_ties`). numpy's float64 -> float16 is direct;
    ml_dtypes >= 0.5 converts float64 to its formats directly too (earlier versions went through
    float32). Costs a few milliseconds, on the first use of each narrow dtype."""
    dt = np.dtype(dt)
    if dt.itemsize > 2:
        return False
    x = _near_ties(dt)
    with np.errstate(all="ignore"):
        direct = x.astype(dt)
    careful = _round_f64_careful(x, dt)
    u = uint_of_size(dt.itemsize)
    return bool(np.array_equal(direct.view(u), careful.view(u)))


def round_f64_to(x: np.ndarray | np.generic, dt: np.dtype) -> np.ndarray:
    """Round float64 values once, to nearest even, to the float dtype ``dt``: numpy's or
    ml_dtypes' direct cast where :func:`direct_f64_cast_ok` has shown it rounds once (1.8-9x
    faster), else round to odd in float32 and then to nearest even."""
    dt = np.dtype(dt)
    if dt == F64:
        return np.asarray(x, F64)
    with np.errstate(all="ignore"):
        if dt == F32 or direct_f64_cast_ok(dt):
            return np.asarray(x, F64).astype(dt)
        return rto_f32(np.asarray(x, F64)).astype(dt)


def round_from_wide(x: np.ndarray | np.generic, dtype: np.dtype) -> np.ndarray:
    """Round float64/complex128 values ``x`` once (correctly) to ``dtype``; integer and bool
    values convert as numpy converts them.

    numpy rounds float64 -> float32/float16 (and complex) correctly; ml_dtypes' formats go
    through :func:`round_f64_to` (its float32 step rounds to odd).
    """
    x = np.asarray(x)
    dtype = np.dtype(dtype)
    if x.dtype == dtype:
        return x
    if not is_ml_float(dtype):
        with np.errstate(over="ignore", invalid="ignore"):
            return x.astype(dtype)
    return round_f64_to(x, dtype)


def from_f64(dt: np.dtype) -> Callable[[np.ndarray], np.ndarray]:
    """The rounding function float64 -> ``dt`` (float or complex), chosen once."""
    dt = np.dtype(dt)
    if dt == F64 or dt == C128:
        return lambda r: r
    if dt == F32 or dt == C64:
        return lambda r: r.astype(dt)
    return lambda r: round_f64_to(r, dt)


def _int64_to_f64_rto(x: np.ndarray) -> np.ndarray:
    """64-bit integers -> float64 rounding to odd (exact TwoSum of the two 32-bit halves)."""
    x = np.asarray(x)
    if x.dtype == np.uint64:
        hi = (x >> np.uint64(32)).astype(F64) * 4294967296.0
    else:
        hi = np.right_shift(x, 32).astype(F64) * 4294967296.0
    lo = np.bitwise_and(x, 0xFFFFFFFF).astype(F64)
    s = hi + lo
    bb = s - hi
    err = (hi - (s - bb)) + (lo - bb)
    inexact = err != 0
    away = inexact & ((err < 0) == (s > 0))  # s was rounded away from zero
    bits = s.view(np.uint64)
    bits = np.where(away, bits - np.uint64(1), bits)
    bits = bits | inexact.astype(np.uint64)
    return bits.view(F64)


def int_to_float(x: np.ndarray | np.generic, dt: np.dtype) -> np.ndarray:
    """Convert integers (any width, any signedness) to float dtype ``dt``, rounding once."""
    x = np.asarray(x)
    dt = np.dtype(dt)
    if is_sub_byte_int(x.dtype):  # ml_dtypes int2/int4/uint2/uint4
        x = x.astype(np.int16)
    if dt == F64 or dt == F32 or x.dtype.itemsize <= 2:
        return x.astype(dt)  # numpy's C casts round once (exact for <= 16-bit integers)
    if x.dtype.itemsize == 4:
        return round_f64_to(x.astype(F64), dt)  # exact in float64
    return round_f64_to(_int64_to_f64_rto(x), dt)  # round-to-odd twice, then nearest even


def float_to_int(x: np.ndarray | np.generic, info: IntInfo) -> np.ndarray:
    """Truncate floats toward zero and saturate to the integer type; NaN gives 0 (as XLA)."""
    x = np.asarray(x)
    if x.dtype != F64 and x.dtype != F32:
        x = x.astype(F64)  # exact for every narrower format
    t = np.trunc(x.astype(F64))
    hi = t >= float(info.max)  # float(max) may round up to 2^N; that is still "too big"
    lo = t <= float(info.min)
    bad = hi | lo | np.isnan(t)
    r = np.where(bad, 0.0, t).astype(info.wide)
    r = np.where(hi, info.wide.type(info.max), np.where(lo, info.wide.type(info.min), r))
    return r if info.native else r.astype(info.dtype)


# --- total order -------------------------------------------------------------------------------


def total_order_key(x: np.ndarray | np.generic, info: FloatInfo) -> np.ndarray:
    """Signed integers ordered as IEEE-754 totalOrder orders the floats ``x``.

    -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN; sign-magnitude bits map to two's
    complement by flipping the magnitude bits of negative values. The NaN of the FNUZ formats
    (the bit pattern of -0) has its sign bit set: it orders first, as XLA orders it.
    """
    bits = np.asarray(x).view(info.bits)
    if not info.has_sign:
        return bits
    sdt = int_of_size(info.bits.itemsize)
    if info.width == 8 * info.bits.itemsize:
        s = bits.view(sdt)
        flip = sdt.type((1 << (info.width - 1)) - 1)
        key = np.where(s < 0, np.bitwise_xor(s, flip), s)
        if info.nan_is_negative_zero:  # its sign bit is set: -NaN, below everything
            nan = s == sdt.type(-(1 << (info.width - 1)))
            return np.where(nan, np.int16(-(1 << 15)), key.astype(np.int16))
        return key
    # sub-byte formats (f4, f6): sign bit is bit width-1 of the byte
    mag = np.bitwise_and(bits, (1 << (info.width - 1)) - 1).astype(np.int16)
    neg = np.right_shift(bits, info.width - 1) != 0
    return np.where(neg, np.subtract(np.negative(mag), 1), mag)
