"""Element-wise functions of floats and complex numbers: atan2, cbrt, ceil, cosine, exponential,
exponential_minus_one, floor, log, log_plus_one, logistic, round_nearest_afz,
round_nearest_even, rsqrt, sine, sqrt, tan, tanh (spec order).

Transcendental functions are computed in float64 (complex128) and rounded once to the result
type ("compute wider, round once"); sqrt in float32 is already exact rounding for every
narrower type; the rounding ops are exact in float32. On float types of at most 16 bits every
unary function here (and atan2 on the one-byte formats) is a lookup table of that careful
kernel over all bit patterns (``_tables.py``): the same bits, one gather.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ...ir import Operation
from ...registry import DOQ, Kernel, kernel
from .. import _constraints as _c
from .._wide32 import compiled
from .._numeric import F32, F64
from ._common import (
    Fn, binary_op, float_unary, narrow_binary, narrow_unary, on_cores, one, operand_et, unary_op,
    unsupported, via_c128, via_f32, via_f64,
)

if TYPE_CHECKING:  # pragma: no cover
    from ...interpreter.evaluator import PrepareContext

__all__: list[str] = []


def _make_complex(re: Any, im: Any) -> np.ndarray:
    """re + i*im without arithmetic (``1j * inf`` would give a NaN real part)."""
    re, im = np.asarray(re), np.asarray(im)
    out = np.empty(np.broadcast_shapes(re.shape, im.shape), np.result_type(re, im, np.complex64))
    out.real, out.imag = re, im
    return out


def _float_only(op: Operation, fn: Fn, exact_in_f32: bool = True) -> Kernel:
    et = operand_et(op)
    if not et.is_float:
        raise unsupported(op, et)
    return one(narrow_unary(op, via_f32(fn, et.dtype) if exact_in_f32 else fn, et.dtype))


# --- atan2 (spec "atan2") -------------------------------------------------------------------------

binary_op("atan2", _c.FP_C_Q_TENSOR, DOQ)


def _complex_atan2(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Complex atan2(y, x) = -i * log((x + i*y) / sqrt(x^2 + y^2)), as the upstream interpreter."""
    return -1j * np.log((x + 1j * y) / np.sqrt(x * x + y * y))


@kernel("stablehlo.atan2")
def atan2(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: atan2 (`lhs` is y, `rhs` is x)."""
    et = operand_et(op)
    if et.is_float:
        return one(narrow_binary(op, via_f64(np.arctan2, et.dtype), et.dtype))
    if et.is_complex:
        return one(via_c128(_complex_atan2, et.dtype))
    raise unsupported(op, et)


# --- cbrt (spec "cbrt") ---------------------------------------------------------------------------

unary_op("cbrt", _c.FP_C_Q_TENSOR, DOQ, accuracy=True)


def _complex_cbrt(z: np.ndarray) -> np.ndarray:
    """Principal cube root |z|^(1/3) * e^(i*arg(z)/3), as the upstream interpreter computes it."""
    theta = np.arctan2(z.imag, z.real) / 3.0
    r = np.power(z.real * z.real + z.imag * z.imag, 1.0 / 6.0)
    return _make_complex(r * np.cos(theta), r * np.sin(theta))


@kernel("stablehlo.cbrt")
def cbrt(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: cbrt."""
    return float_unary(op, np.cbrt, _complex_cbrt)


# --- ceil (spec "ceil") ---------------------------------------------------------------------------

unary_op("ceil", _c.FP_Q_TENSOR, DOQ)


@kernel("stablehlo.ceil")
def ceil(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: ceil (roundToIntegralTowardPositive)."""
    return _float_only(op, np.ceil, exact_in_f32=False)


# --- cosine (spec "cosine") -----------------------------------------------------------------------

unary_op("cosine", _c.FP_C_Q_TENSOR, DOQ, accuracy=True)


@kernel("stablehlo.cosine")
def cosine(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: cosine."""
    return float_unary(op, np.cos, np.cos, native_f32=True)


# --- exponential (spec "exponential") -------------------------------------------------------------

unary_op("exponential", _c.FP_C_Q_TENSOR, DOQ, accuracy=True)


@kernel("stablehlo.exponential")
def exponential(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: exponential."""
    return float_unary(op, np.exp, np.exp, f32=_EXP_F32)


_EXP_F32 = compiled("exp", via_f64(np.exp, F32))


# --- exponential_minus_one (spec "exponential_minus_one") -----------------------------------------

unary_op("exponential_minus_one", _c.FP_C_Q_TENSOR, DOQ, accuracy=True)


def _complex_expm1(z: np.ndarray) -> np.ndarray:
    """exp(z) - 1: numpy's expm1 (accurate near 0) for |z| < 1, else exp(z) - 1, which keeps
    infinities as C++ and XLA do (numpy's expm1(inf+0j) has a NaN imaginary part)."""
    small = np.abs(z) < 1.0
    return np.where(small, np.expm1(np.where(small, z, 0)), np.exp(z) - 1.0)


@kernel("stablehlo.exponential_minus_one")
def exponential_minus_one(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: exponential_minus_one."""
    return float_unary(op, np.expm1, _complex_expm1)


# --- floor (spec "floor") -------------------------------------------------------------------------

unary_op("floor", _c.FP_Q_TENSOR, DOQ)


@kernel("stablehlo.floor")
def floor(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: floor (roundToIntegralTowardNegative)."""
    return _float_only(op, np.floor, exact_in_f32=False)


# --- log (spec "log") -----------------------------------------------------------------------------

unary_op("log", _c.FP_C_Q_TENSOR, DOQ, accuracy=True)


@kernel("stablehlo.log")
def log(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: log."""
    return float_unary(op, np.log, np.log)


# --- log_plus_one (spec "log_plus_one") -----------------------------------------------------------

unary_op("log_plus_one", _c.FP_C_Q_TENSOR, DOQ, accuracy=True)


def _complex_log1p(z: np.ndarray) -> np.ndarray:
    """log(1 + z), accurate for small |z| (numpy's complex log1p computes log(1 + z))."""
    x, y = z.real, z.imag
    small = np.abs(z) < 0.5
    re_small = 0.5 * np.log1p(np.where(small, x * (x + 2.0) + y * y, 0.0))
    re = np.where(small, re_small, np.log(np.abs(np.where(small, 0.0, z) + 1.0)))
    return _make_complex(re, np.arctan2(y, x + 1.0))


@kernel("stablehlo.log_plus_one")
def log_plus_one(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: log_plus_one."""
    return float_unary(op, np.log1p, _complex_log1p)


# --- logistic (spec "logistic") -------------------------------------------------------------------

unary_op("logistic", _c.FP_C_Q_TENSOR, DOQ, accuracy=True)


def _logistic(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _logistic_f32(x: np.ndarray) -> np.ndarray:
    """``_logistic`` of f32 ``x`` in float64 (the negation widens it, exactly), rounded once."""
    return (1.0 / (1.0 + np.exp(np.negative(x, dtype=F64)))).astype(F32)


_LOGISTIC_F32 = on_cores(_logistic_f32, F32)


def _complex_logistic(z: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-z)); 0 where exp(-z) overflows (numpy's complex division of 1 by an
    infinite value gives NaN, C++ and XLA give 0)."""
    d = 1.0 + np.exp(-z)
    inf = np.isinf(d.real) | np.isinf(d.imag)
    r = 1.0 / np.where(inf, 1.0, d)
    zero = _make_complex(np.copysign(0.0, d.real), np.copysign(0.0, -d.imag))
    return np.where(inf, zero, r)


@kernel("stablehlo.logistic")
def logistic(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: logistic: 1 / (1 + exp(-x)), computed wider and rounded once."""
    return float_unary(op, _logistic, _complex_logistic, f32=_LOGISTIC_F32)


# --- round_nearest_afz (spec "round_nearest_afz") -------------------------------------------------

unary_op("round_nearest_afz", _c.FP_Q_TENSOR, DOQ)


def _round_afz(x: np.ndarray) -> np.ndarray:
    """roundToIntegralTiesToAway, exactly: trunc, then step away from zero when |frac| >= 1/2."""
    t = np.trunc(x)
    frac = np.abs(np.subtract(x, t))
    return np.where(frac >= 0.5, np.add(t, np.copysign(np.ones_like(t), x)), t)


@kernel("stablehlo.round_nearest_afz")
def round_nearest_afz(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: round_nearest_afz (roundToIntegralTiesToAway)."""
    return _float_only(op, _round_afz)


# --- round_nearest_even (spec "round_nearest_even") -----------------------------------------------

unary_op("round_nearest_even", _c.FP_Q_TENSOR, DOQ)


@kernel("stablehlo.round_nearest_even")
def round_nearest_even(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: round_nearest_even (roundToIntegralTiesToEven)."""
    return _float_only(op, np.rint, exact_in_f32=False)


# --- rsqrt (spec "rsqrt") -------------------------------------------------------------------------

unary_op("rsqrt", _c.FP_C_Q_TENSOR, DOQ, accuracy=True)


def _rsqrt(x: np.ndarray) -> np.ndarray:
    return 1.0 / np.sqrt(x)


def _rsqrt_f32(x: np.ndarray) -> np.ndarray:
    """``_rsqrt`` of f32 ``x`` in float64 (the square root widens it, exactly), rounded once."""
    return (1.0 / np.sqrt(x, dtype=F64)).astype(F32)


_RSQRT_F32 = on_cores(_rsqrt_f32, F32)


@kernel("stablehlo.rsqrt")
def rsqrt(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: rsqrt."""
    return float_unary(op, _rsqrt, _rsqrt, f32=_RSQRT_F32)


# --- sine (spec "sine") ---------------------------------------------------------------------------

unary_op("sine", _c.FP_C_Q_TENSOR, DOQ, accuracy=True)


@kernel("stablehlo.sine")
def sine(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: sine."""
    return float_unary(op, np.sin, np.sin, native_f32=True)


# --- sqrt (spec "sqrt") ---------------------------------------------------------------------------

unary_op("sqrt", _c.FP_C_Q_TENSOR, DOQ, accuracy=True)


@kernel("stablehlo.sqrt")
def sqrt(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: sqrt. Correctly rounded: sqrt in float32 is exact rounding for every narrower type."""
    et = operand_et(op)
    if et.is_float:
        return one(narrow_unary(op, np.sqrt, et.dtype))
    if et.is_complex:
        return one(via_c128(np.sqrt, et.dtype))
    raise unsupported(op, et)


# --- tan (spec "tan") -----------------------------------------------------------------------------

unary_op("tan", _c.FP_C_Q_TENSOR, DOQ, accuracy=True)


@kernel("stablehlo.tan")
def tan(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: tan."""
    return float_unary(op, np.tan, np.tan)


# --- tanh (spec "tanh") ---------------------------------------------------------------------------

unary_op("tanh", _c.FP_C_Q_TENSOR, DOQ, accuracy=True)


@kernel("stablehlo.tanh")
def tanh(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: tanh. f32: numpy's float32 tanh, through its compiled copy where that runs
    (``_tanh32_jit``: 2.2x faster on one core)."""
    return float_unary(op, np.tanh, np.tanh, native_f32=True,
                       f32=compiled("tanh", on_cores(np.tanh, F32)))
