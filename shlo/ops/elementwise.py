"""Element-wise ops: abs ... xor, compare, select, clamp, convert, bitcast_convert, ...

Each op has one section, named and ordered as in the spec ("Ops"); its kernel is a *prepare*
function that decodes the element type once and returns a lean ``run`` closure, often a direct
numpy call (``lambda x, y: (np.add(x, y),)``). The ops' constraints (C1..Cn) are checked by the
verifiers registered at the end of this module.

Kernels work on arrays of any shape (region bodies are evaluated over whole arrays of element
pairs) and accept numpy scalars for 0-d values. Results always have the result type's dtype.

Conventions (see docs/semantics/elementwise.md for the implementation-defined choices):

* Integers wrap (two's complement) and never emit numpy warnings; the sub-byte types
  (ml_dtypes int2/int4/uint2/uint4) are computed in int8/uint8 and cast back with wrapping.
* Floating-point arithmetic (add, subtract, multiply, divide, sqrt, remainder) on narrow types is
  done by numpy/ml_dtypes in float32 and rounded once, which is exact rounding for these
  operations and types. Transcendental functions are computed in float64 (complex128) and
  rounded once to the result type ("compute wider, round once").
* IEEE floating-point exceptions are values (inf, NaN), not errors: float kernels may let
  numpy's RuntimeWarnings through; the evaluator is expected to run under ``np.errstate``.
"""

from __future__ import annotations

import operator
import sys
from typing import Any, Callable, Sequence

import numpy as np

from ..attributes import int_or_none
from ..errors import ExecutionError
from ..ir import Operation
from ..types import ComplexType, ElementType, FloatType, IntegerType, TensorType
from ._numeric import (
    C128, F32, F64, IntInfo, float_info, float_to_int, from_f64, int_info, int_to_float,
    round_f64_to, total_order_key,
)
from ..registry import kernel

Run = Callable[..., Sequence[Any]]
Fn = Callable[..., Any]

# --- shared helpers --------------------------------------------------------------------------


def _etype(value_type: Any) -> ElementType:
    """The element type of a tensor type (quantized types are returned as they are)."""
    if isinstance(value_type, TensorType):
        return value_type.element_type
    raise ExecutionError(f"expected a tensor type, got {value_type}")


def _operand_et(op: Operation, i: int = 0) -> ElementType:
    return _etype(op.operands[i].type)


def _result_et(op: Operation, i: int = 0) -> ElementType:
    return _etype(op.results[i].type)


def _unsupported(op: Operation, et: ElementType) -> ExecutionError:
    return ExecutionError(f"'{op.name}' is not defined for element type {et}", op.location)


def _one(fn: Fn) -> Run:
    """Wrap a function returning one value into a kernel returning a 1-tuple."""
    return lambda *args: (fn(*args),)


def _on_wide(fn: Fn, info: IntInfo) -> Fn:
    """Run integer ``fn`` on the native ``wide`` dtype and cast back (wrapping) when needed."""
    if info.native:
        return fn
    wide, dt = info.wide, info.dtype

    def run(*xs: Any) -> Any:
        return np.asarray(fn(*[np.asarray(x).astype(wide) for x in xs])).astype(dt)

    return run


def _via_f64(fn: Fn, dt: np.dtype) -> Fn:
    """Compute float ``fn`` in float64 and round once to ``dt``."""
    if dt == F64:
        return fn
    rnd = from_f64(dt)
    return lambda *xs: rnd(fn(*[np.asarray(x, F64) for x in xs]))


def _via_c128(fn: Fn, dt: np.dtype) -> Fn:
    """Compute complex ``fn`` in complex128 and round once to ``dt``."""
    if dt == C128:
        return fn
    return lambda *xs: np.asarray(fn(*[np.asarray(x, C128) for x in xs])).astype(dt)


def _via_f32(fn: Fn, dt: np.dtype) -> Fn:
    """Compute ``fn`` in float32 and cast back, for operations whose float32 result is exactly
    representable in the narrower format (rounding to integers, sign)."""
    if dt == F32 or dt == F64:
        return fn
    return lambda *xs: np.asarray(fn(*[np.asarray(x, F32) for x in xs])).astype(dt)


def _float_unary(op: Operation, real_fn: Fn, complex_fn: Fn | None,
                 native_f32: bool = False) -> Run:
    """Kernel of a unary function of float or complex operands, computed wider, rounded once.

    ``native_f32``: on f32, use numpy's own float32 function instead (measured within 1 ulp of
    the correctly rounded value on 2e7 random inputs for tanh, sine and cosine, and 5x faster;
    docs/semantics/elementwise.md).
    """
    et = _operand_et(op)
    dt = et.dtype
    if native_f32 and dt == F32:
        return lambda x: (real_fn(x),)
    if et.is_float:
        return _one(_via_f64(real_fn, dt))
    if et.is_complex and complex_fn is not None:
        return _one(_via_c128(complex_fn, dt))
    raise _unsupported(op, et)


# --- abs --------------------------------------------------------------------------------------


@kernel("stablehlo.abs")
def abs_(op: Operation, ctx: Any) -> Run:
    """spec: abs. Signed integers wrap (abs(INT_MIN) = INT_MIN); complex gives the modulus."""
    et = _operand_et(op)
    if et.is_complex:
        if et.dtype == C128:
            return lambda x: (np.abs(x),)
        return lambda x: (np.abs(np.asarray(x, C128)).astype(F32),)
    if et.is_integer:
        info = int_info(et)
        if not info.signed:
            return lambda x: (x,)
        return _one(_on_wide(np.abs, info))
    if et.is_float:
        return lambda x: (np.abs(x),)
    raise _unsupported(op, et)


# --- add, subtract, multiply --------------------------------------------------------------------


def _arith(op: Operation, ufunc: np.ufunc, bool_ufunc: np.ufunc | None) -> Run:
    et = _operand_et(op)
    if et.is_bool:
        if bool_ufunc is None:
            raise _unsupported(op, et)
        return lambda x, y: (bool_ufunc(x, y),)
    if et.is_integer or et.is_float or et.is_complex:
        fn = _OPERATORS.get(ufunc) if et.dtype.isbuiltin == 1 else None  # numpy's own types
        if fn is not None:
            # Python's operator: the same ufunc on arrays, numpy's scalar fast path on numpy
            # scalars (~10x faster than a ufunc call; scalar `while` loops are made of these).
            return lambda x, y: (fn(x, y),)
        # ml_dtypes int2/int4/uint2/uint4 add/subtract/multiply wrap natively.
        return lambda x, y: (ufunc(x, y),)
    raise _unsupported(op, et)


_OPERATORS = {np.add: operator.add, np.subtract: operator.sub, np.multiply: operator.mul}


@kernel("stablehlo.add")
def add(op: Operation, ctx: Any) -> Run:
    """spec: add. Logical or for i1; integers wrap."""
    return _arith(op, np.add, np.logical_or)


@kernel("stablehlo.subtract")
def subtract(op: Operation, ctx: Any) -> Run:
    """spec: subtract. Integers wrap."""
    return _arith(op, np.subtract, None)


@kernel("stablehlo.multiply")
def multiply(op: Operation, ctx: Any) -> Run:
    """spec: multiply. Logical and for i1; integers wrap."""
    return _arith(op, np.multiply, np.logical_and)


# --- and, or, xor, not ---------------------------------------------------------------------------


def _bitwise(op: Operation, ufunc: np.ufunc) -> Run:
    et = _operand_et(op)
    if et.is_bool:
        return lambda x, y: (ufunc(x, y),)
    if et.is_integer:
        info = int_info(et)
        if info.native:
            return lambda x, y: (ufunc(x, y),)
        return _one(_on_wide(ufunc, info))
    raise _unsupported(op, et)


@kernel("stablehlo.and")
def and_(op: Operation, ctx: Any) -> Run:
    """spec: and. Logical for i1, bitwise for integers."""
    return _bitwise(op, np.bitwise_and)


@kernel("stablehlo.or")
def or_(op: Operation, ctx: Any) -> Run:
    """spec: or. Logical for i1, bitwise for integers."""
    return _bitwise(op, np.bitwise_or)


@kernel("stablehlo.xor")
def xor(op: Operation, ctx: Any) -> Run:
    """spec: xor. Logical for i1, bitwise for integers."""
    return _bitwise(op, np.bitwise_xor)


@kernel("stablehlo.not")
def not_(op: Operation, ctx: Any) -> Run:
    """spec: not. Logical for i1, bitwise for integers."""
    et = _operand_et(op)
    if et.is_bool:
        return lambda x: (np.logical_not(x),)
    if et.is_integer:
        info = int_info(et)
        if info.native:
            return lambda x: (np.invert(x),)
        return _one(_on_wide(np.invert, info))
    raise _unsupported(op, et)


# --- atan2 ---------------------------------------------------------------------------------------


def _complex_atan2(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Complex atan2(y, x) = -i * log((x + i*y) / sqrt(x^2 + y^2)), as the upstream interpreter."""
    return -1j * np.log((x + 1j * y) / np.sqrt(x * x + y * y))


@kernel("stablehlo.atan2")
def atan2(op: Operation, ctx: Any) -> Run:
    """spec: atan2 (`lhs` is y, `rhs` is x)."""
    et = _operand_et(op)
    if et.is_float:
        return _one(_via_f64(np.arctan2, et.dtype))
    if et.is_complex:
        return _one(_via_c128(_complex_atan2, et.dtype))
    raise _unsupported(op, et)


# --- bitcast_convert ----------------------------------------------------------------------------


def _num_bits(et: ElementType) -> int:
    """num_bits(E) of the spec (storage type of a quantized type)."""
    st = getattr(et, "storage_type", None)
    if st is not None:
        et = st
    if isinstance(et, IntegerType):
        return et.width
    if isinstance(et, FloatType):
        return float_info(et).width
    if isinstance(et, ComplexType):
        return 2 * float_info(et.element).width
    raise TypeError(f"no bit width for {et}")


def _storage(et: ElementType) -> ElementType:
    st = getattr(et, "storage_type", None)
    return st if st is not None else et


def _byte_exact(et: ElementType) -> bool:
    """True when the numpy storage holds exactly the type's bits (no i1, no sub-byte types)."""
    return not et.is_bool and _num_bits(et) == 8 * et.dtype.itemsize


_UINT = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: np.dtype(np.uint32),
         64: np.dtype(np.uint64)}


def _bits_dtype(nbits: int) -> np.dtype:
    return _UINT[max(8, 1 << (max(nbits, 1) - 1).bit_length())]


def _to_bits(x: Any, et: ElementType) -> np.ndarray:
    """Unsigned integers holding the type's bits in their low ``num_bits`` bits."""
    x = np.asarray(x)
    if et.is_bool:
        return x.astype(np.uint8)
    if isinstance(et, IntegerType) and not int_info(et).native:
        return np.bitwise_and(x.astype(int_info(et).wide).view(np.uint8), int_info(et).mask)
    return x.view(_bits_dtype(_num_bits(et)))


def _from_bits(bits: np.ndarray, et: ElementType) -> np.ndarray:
    """The values of type ``et`` whose bits are the low ``num_bits`` bits of ``bits``."""
    if et.is_bool:
        return bits != 0
    n = _num_bits(et)
    b = bits.astype(_bits_dtype(n))
    if isinstance(et, IntegerType) and not int_info(et).native:
        info = int_info(et)
        if info.signed:  # sign-extend the low `width` bits into int8
            sign = 1 << (info.width - 1)
            v = np.subtract(np.bitwise_xor(b, sign).astype(np.int8), np.int8(sign))
            return v.astype(info.dtype)
        return b.astype(np.int64).astype(info.dtype)
    return b.view(et.dtype)


def _contiguous(x: Any) -> np.ndarray:
    x = np.asarray(x)
    return x if x.flags.c_contiguous else x.copy()


@kernel("stablehlo.bitcast_convert", quantized_aware=True)
def bitcast_convert(op: Operation, ctx: Any) -> Run:
    """spec: bitcast_convert. Little-endian: with a narrower result, element ``[..., j]`` holds
    bits ``j*num_bits(E')`` upward of the operand element (the spec's example). Quantized
    tensors are reinterpreted through their storage type."""
    src, dst = _storage(_operand_et(op)), _storage(_result_et(op))
    n_in, n_out = _num_bits(src), _num_bits(dst)
    rdt = dst.dtype
    if src == dst:
        return lambda x: (x,)
    if _byte_exact(src) and _byte_exact(dst) and sys.byteorder == "little":
        if n_in == n_out:
            return lambda x: (np.asarray(x).view(rdt),)
        if n_out < n_in:
            k = n_in // n_out

            def split(x: Any) -> tuple[np.ndarray]:
                x = _contiguous(x)
                return (x.reshape(x.shape + (1,)).view(rdt).reshape(x.shape + (k,)),)

            return split

        def join(x: Any) -> tuple[np.ndarray]:
            x = _contiguous(x)
            return (x.view(rdt).reshape(x.shape[:-1]),)

        return join

    if n_in == n_out:
        return lambda x: (_from_bits(_to_bits(x, src), dst),)
    if n_out < n_in:
        k = n_in // n_out
        wdt = _bits_dtype(n_in)
        shifts = (np.arange(k) * n_out).astype(wdt)
        mask = wdt.type((1 << n_out) - 1)

        def split_bits(x: Any) -> tuple[np.ndarray]:
            b = _to_bits(x, src)[..., None]
            return (_from_bits(np.bitwise_and(np.right_shift(b, shifts), mask), dst),)

        return split_bits
    k = n_out // n_in
    wdt = _bits_dtype(n_out)
    shifts = (np.arange(k) * n_in).astype(wdt)

    def join_bits(x: Any) -> tuple[np.ndarray]:
        b = _to_bits(x, src).astype(wdt)
        return (_from_bits(np.bitwise_or.reduce(np.left_shift(b, shifts), axis=-1), dst),)

    return join_bits


# --- cbrt ----------------------------------------------------------------------------------------


def _make_complex(re: Any, im: Any) -> np.ndarray:
    """re + i*im without arithmetic (``1j * inf`` would give a NaN real part)."""
    re, im = np.asarray(re), np.asarray(im)
    out = np.empty(np.broadcast_shapes(re.shape, im.shape), np.result_type(re, im, np.complex64))
    out.real, out.imag = re, im
    return out


def _complex_cbrt(z: np.ndarray) -> np.ndarray:
    """Principal cube root |z|^(1/3) * e^(i*arg(z)/3), as the upstream interpreter computes it."""
    theta = np.arctan2(z.imag, z.real) / 3.0
    r = np.power(z.real * z.real + z.imag * z.imag, 1.0 / 6.0)
    return _make_complex(r * np.cos(theta), r * np.sin(theta))


@kernel("stablehlo.cbrt")
def cbrt(op: Operation, ctx: Any) -> Run:
    """spec: cbrt."""
    return _float_unary(op, np.cbrt, _complex_cbrt)


# --- ceil, floor, round_nearest_afz, round_nearest_even -----------------------------------------


def _round_afz(x: np.ndarray) -> np.ndarray:
    """roundToIntegralTiesToAway, exactly: trunc, then step away from zero when |frac| >= 1/2."""
    t = np.trunc(x)
    frac = np.abs(np.subtract(x, t))
    return np.where(frac >= 0.5, np.add(t, np.copysign(np.ones_like(t), x)), t)


def _float_only(op: Operation, fn: Fn, exact_in_f32: bool = True) -> Run:
    et = _operand_et(op)
    if not et.is_float:
        raise _unsupported(op, et)
    return _one(_via_f32(fn, et.dtype) if exact_in_f32 else fn)


@kernel("stablehlo.ceil")
def ceil(op: Operation, ctx: Any) -> Run:
    """spec: ceil (roundToIntegralTowardPositive)."""
    return _float_only(op, np.ceil, exact_in_f32=False)


@kernel("stablehlo.floor")
def floor(op: Operation, ctx: Any) -> Run:
    """spec: floor (roundToIntegralTowardNegative)."""
    return _float_only(op, np.floor, exact_in_f32=False)


@kernel("stablehlo.round_nearest_afz")
def round_nearest_afz(op: Operation, ctx: Any) -> Run:
    """spec: round_nearest_afz (roundToIntegralTiesToAway)."""
    return _float_only(op, _round_afz)


@kernel("stablehlo.round_nearest_even")
def round_nearest_even(op: Operation, ctx: Any) -> Run:
    """spec: round_nearest_even (roundToIntegralTiesToEven)."""
    return _float_only(op, np.rint, exact_in_f32=False)


# --- maximum, minimum, clamp ---------------------------------------------------------------------


def _float_max_min(dt: np.dtype, is_max: bool) -> Fn:
    """IEEE-754 maximum / minimum: NaN propagates and -0 < +0 (numpy's maximum returns either
    zero). Where x == y the result's bits are x & y (maximum) or x | y (minimum), which only
    changes the (-0, +0) pairs."""
    u = _bits_dtype(8 * dt.itemsize)
    pick, combine = (np.maximum, np.bitwise_and) if is_max else (np.minimum, np.bitwise_or)
    # numpy's pick is right except that it may return the wrong zero of a (-0, +0) pair: -0
    # for maximum, +0 for minimum. Only results holding that zero need the bitwise fix.
    wrong_zero = u.type(1 << (8 * dt.itemsize - 1)) if is_max else u.type(0)

    def run(x: Any, y: Any) -> Any:
        m = pick(x, y)
        if not (m.view(u) == wrong_zero).any():
            return m
        x, y = np.asarray(x), np.asarray(y)
        return np.where(np.equal(x, y), combine(x.view(u), y.view(u)).view(dt), m)

    return run


def _complex_max(x: Any, y: Any) -> Any:
    """Lexicographic maximum on (real, imag); as upstream, rhs wins unless lhs is greater."""
    xr, yr = np.real(x), np.real(y)
    gt = np.where(np.equal(xr, yr), np.greater(np.imag(x), np.imag(y)), np.greater(xr, yr))
    return np.where(gt, x, y)


def _complex_min(x: Any, y: Any) -> Any:
    """Lexicographic minimum on (real, imag); as upstream, rhs wins unless lhs is less."""
    xr, yr = np.real(x), np.real(y)
    lt = np.where(np.equal(xr, yr), np.less(np.imag(x), np.imag(y)), np.less(xr, yr))
    return np.where(lt, x, y)


def _max_fn(op: Operation, et: ElementType) -> Fn:
    if et.is_bool:
        return np.logical_or
    if et.is_integer:
        return _on_wide(np.maximum, int_info(et))
    if et.is_float:
        return _float_max_min(et.dtype, True)
    if et.is_complex:
        return _complex_max
    raise _unsupported(op, et)


def _min_fn(op: Operation, et: ElementType) -> Fn:
    if et.is_bool:
        return np.logical_and
    if et.is_integer:
        return _on_wide(np.minimum, int_info(et))
    if et.is_float:
        return _float_max_min(et.dtype, False)
    if et.is_complex:
        return _complex_min
    raise _unsupported(op, et)


@kernel("stablehlo.maximum")
def maximum(op: Operation, ctx: Any) -> Run:
    """spec: maximum. Logical or for i1; IEEE maximum for floats (NaN propagates, +0 > -0);
    lexicographic on (real, imag) for complex."""
    fn = _max_fn(op, _operand_et(op))
    return lambda x, y: (fn(x, y),)


@kernel("stablehlo.minimum")
def minimum(op: Operation, ctx: Any) -> Run:
    """spec: minimum. Logical and for i1; IEEE minimum for floats (NaN propagates, -0 < +0);
    lexicographic on (real, imag) for complex."""
    fn = _min_fn(op, _operand_et(op))
    return lambda x, y: (fn(x, y),)


@kernel("stablehlo.clamp")
def clamp(op: Operation, ctx: Any) -> Run:
    """spec: clamp: minimum(maximum(operand, min), max); 0-d `min`/`max` broadcast."""
    et = _operand_et(op, 1)
    mx, mn = _max_fn(op, et), _min_fn(op, et)
    if et.is_integer and int_info(et).native:
        return lambda lo, x, hi: (np.minimum(np.maximum(x, lo), hi),)
    return lambda lo, x, hi: (mn(mx(x, lo), hi),)


# --- compare -------------------------------------------------------------------------------------

_DIRECTIONS: dict[str, np.ufunc] = {
    "EQ": np.equal, "NE": np.not_equal, "GE": np.greater_equal, "GT": np.greater,
    "LE": np.less_equal, "LT": np.less,
}


def _enum_value(attr: Any) -> str | None:
    if attr is None:
        return None
    return str(getattr(attr, "value", attr))


def _complex_compare(direction: str) -> Fn:
    """Lexicographic comparison of (real, imag) pairs."""
    strict = _DIRECTIONS[direction]

    def eq(x: Any, y: Any) -> Any:
        return np.logical_and(np.equal(np.real(x), np.real(y)), np.equal(np.imag(x), np.imag(y)))

    if direction == "EQ":
        return eq
    if direction == "NE":
        return lambda x, y: np.logical_not(eq(x, y))
    first = np.greater if direction in ("GT", "GE") else np.less

    def cmp(x: Any, y: Any) -> Any:
        xr, yr = np.real(x), np.real(y)
        return np.logical_or(first(xr, yr),
                             np.logical_and(np.equal(xr, yr), strict(np.imag(x), np.imag(y))))

    return cmp


@kernel("stablehlo.compare")
def compare(op: Operation, ctx: Any) -> Run:
    """spec: compare. FLOAT: IEEE quiet comparisons; TOTALORDER: every direction compares
    IEEE totalOrder keys (so -0 < +0 and NaNs with equal bits are equal, as XLA); complex:
    lexicographic on (real, imag)."""
    direction = _enum_value(op.attr("comparison_direction"))
    if direction not in _DIRECTIONS:
        raise ExecutionError(f"unknown comparison_direction {direction}", op.location)
    compare_type = _enum_value(op.attr("compare_type"))
    et = _operand_et(op)
    ufunc = _DIRECTIONS[direction]
    if et.is_complex:
        return _one(_complex_compare(direction))
    if et.is_float and compare_type == "TOTALORDER":
        info = float_info(et)
        return lambda x, y: (ufunc(total_order_key(x, info), total_order_key(y, info)),)
    if et.is_float and et.dtype.itemsize < 4 and et.dtype != np.float16:
        # ml_dtypes comparisons raise "invalid value" warnings on NaN; float32 ones are quiet
        return lambda x, y: (ufunc(np.asarray(x, F32), np.asarray(y, F32)),)
    if et.is_bool or et.is_integer or et.is_float:
        if et.dtype.isbuiltin == 1:  # operators: numpy's scalar fast path (see _arith)
            fn = _OPERATOR_DIRECTIONS[direction]
            return lambda x, y: (fn(x, y),)
        return lambda x, y: (ufunc(x, y),)
    raise _unsupported(op, et)


_OPERATOR_DIRECTIONS = {"EQ": operator.eq, "NE": operator.ne, "GE": operator.ge,
                        "GT": operator.gt, "LE": operator.le, "LT": operator.lt}


# --- complex, real, imag -------------------------------------------------------------------------


@kernel("stablehlo.complex")
def complex_(op: Operation, ctx: Any) -> Run:
    """spec: complex: (lhs, rhs) -> lhs + i*rhs, exactly (also for inf and NaN parts)."""
    cdt = _result_et(op).dtype

    def run(lhs: Any, rhs: Any) -> tuple[np.ndarray]:
        out = np.empty(np.broadcast_shapes(np.shape(lhs), np.shape(rhs)), cdt)
        out.real = lhs
        out.imag = rhs
        return (out,)

    return run


@kernel("stablehlo.real")
def real(op: Operation, ctx: Any) -> Run:
    """spec: real: the real part of complex values; floats are returned unchanged."""
    et = _operand_et(op)
    if et.is_complex:
        return lambda x: (np.real(x),)
    if et.is_float:
        return lambda x: (x,)
    raise _unsupported(op, et)


@kernel("stablehlo.imag")
def imag(op: Operation, ctx: Any) -> Run:
    """spec: imag: the imaginary part of complex values; 0 for floats."""
    et = _operand_et(op)
    if et.is_complex:
        return lambda x: (np.imag(x),)
    if et.is_float:
        dt = et.dtype
        return lambda x: (np.zeros(np.shape(x), dt),)
    raise _unsupported(op, et)


# --- convert -------------------------------------------------------------------------------------


def _float_to_float(src: np.dtype, dst: np.dtype) -> Fn:
    """Float-to-float conversion rounding once to nearest even."""
    if src == dst:
        return lambda x: x
    if src == F64 and dst != F32:
        return lambda x: round_f64_to(x, dst)

    def cast(x: Any) -> Any:
        with np.errstate(over="ignore", invalid="ignore"):
            return np.asarray(x).astype(dst)

    return cast


def convert_fn(src: ElementType, dst: ElementType) -> Fn:
    """The conversion of spec `convert` from element type ``src`` to ``dst`` (x -> array)."""
    if src == dst:
        return lambda x: x
    sdt, ddt = src.dtype, dst.dtype
    if src.is_complex:
        if dst.is_complex:
            return lambda x: np.asarray(x).astype(ddt)
        # complex -> real: the imaginary part is dropped, the real part converts as a float
        inner = convert_fn(src.element, dst)  # type: ignore[attr-defined]
        return lambda x: inner(np.real(x))
    if dst.is_bool:
        return lambda x: np.not_equal(x, 0)
    if src.is_bool:
        return lambda x: np.asarray(x).astype(ddt)
    if dst.is_complex:
        inner = convert_fn(src, dst.element)  # type: ignore[attr-defined]
        return lambda x: np.asarray(inner(x)).astype(ddt)
    if src.is_integer and dst.is_integer:
        si, di = int_info(src), int_info(dst)  # type: ignore[arg-type]
        if si.native and di.native:
            return lambda x: np.asarray(x).astype(ddt)  # wraps
        return lambda x: np.asarray(x).astype(np.int64).astype(ddt)
    if src.is_integer and dst.is_float:
        if ddt == F64 or (ddt == F32 and sdt.itemsize < 8):
            return lambda x: x.astype(ddt)  # exact, or one rounding by numpy's C cast
        if ddt == F32:
            return lambda x: int_to_float(x, ddt)

        def narrow(x: Any) -> Any:
            with np.errstate(over="ignore", invalid="ignore"):
                return int_to_float(x, ddt)

        return narrow
    if src.is_float and dst.is_integer:
        info = int_info(dst)  # type: ignore[arg-type]
        return lambda x: float_to_int(x, info)
    if src.is_float and dst.is_float:
        return _float_to_float(sdt, ddt)
    raise TypeError(f"no conversion from {src} to {dst}")


@kernel("stablehlo.convert")
def convert(op: Operation, ctx: Any) -> Run:
    """spec: convert. Rounds once to nearest even; float -> integer truncates and saturates
    (NaN -> 0); integer -> integer wraps; -> i1 is `!= 0`; complex -> real keeps the real part."""
    src, dst = _operand_et(op), _result_et(op)
    try:
        fn = convert_fn(src, dst)
    except TypeError as e:
        raise ExecutionError(f"'stablehlo.convert': {e}", op.location) from None
    return _one(fn)


# --- cosine, sine, tan, tanh, exponential, exponential_minus_one, log, log_plus_one ---------------


@kernel("stablehlo.cosine")
def cosine(op: Operation, ctx: Any) -> Run:
    """spec: cosine."""
    return _float_unary(op, np.cos, np.cos, native_f32=True)


@kernel("stablehlo.sine")
def sine(op: Operation, ctx: Any) -> Run:
    """spec: sine."""
    return _float_unary(op, np.sin, np.sin, native_f32=True)


@kernel("stablehlo.tan")
def tan(op: Operation, ctx: Any) -> Run:
    """spec: tan."""
    return _float_unary(op, np.tan, np.tan)


@kernel("stablehlo.tanh")
def tanh(op: Operation, ctx: Any) -> Run:
    """spec: tanh."""
    return _float_unary(op, np.tanh, np.tanh, native_f32=True)


@kernel("stablehlo.exponential")
def exponential(op: Operation, ctx: Any) -> Run:
    """spec: exponential."""
    return _float_unary(op, np.exp, np.exp)


@kernel("stablehlo.exponential_minus_one")
def exponential_minus_one(op: Operation, ctx: Any) -> Run:
    """spec: exponential_minus_one."""
    return _float_unary(op, np.expm1, _complex_expm1)


def _complex_expm1(z: np.ndarray) -> np.ndarray:
    """exp(z) - 1: numpy's expm1 (accurate near 0) for |z| < 1, else exp(z) - 1, which keeps
    infinities as C++ and XLA do (numpy's expm1(inf+0j) has a NaN imaginary part)."""
    small = np.abs(z) < 1.0
    return np.where(small, np.expm1(np.where(small, z, 0)), np.exp(z) - 1.0)


@kernel("stablehlo.log")
def log(op: Operation, ctx: Any) -> Run:
    """spec: log."""
    return _float_unary(op, np.log, np.log)


def _complex_log1p(z: np.ndarray) -> np.ndarray:
    """log(1 + z), accurate for small |z| (numpy's complex log1p computes log(1 + z))."""
    x, y = z.real, z.imag
    small = np.abs(z) < 0.5
    re_small = 0.5 * np.log1p(np.where(small, x * (x + 2.0) + y * y, 0.0))
    re = np.where(small, re_small, np.log(np.abs(np.where(small, 0.0, z) + 1.0)))
    return _make_complex(re, np.arctan2(y, x + 1.0))


@kernel("stablehlo.log_plus_one")
def log_plus_one(op: Operation, ctx: Any) -> Run:
    """spec: log_plus_one."""
    return _float_unary(op, np.log1p, _complex_log1p)


def _logistic(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _complex_logistic(z: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-z)); 0 where exp(-z) overflows (numpy's complex division of 1 by an
    infinite value gives NaN, C++ and XLA give 0)."""
    d = 1.0 + np.exp(-z)
    inf = np.isinf(d.real) | np.isinf(d.imag)
    r = 1.0 / np.where(inf, 1.0, d)
    zero = _make_complex(np.copysign(0.0, d.real), np.copysign(0.0, -d.imag))
    return np.where(inf, zero, r)


@kernel("stablehlo.logistic")
def logistic(op: Operation, ctx: Any) -> Run:
    """spec: logistic: 1 / (1 + exp(-x)), computed wider and rounded once."""
    return _float_unary(op, _logistic, _complex_logistic)


def _rsqrt(x: np.ndarray) -> np.ndarray:
    return 1.0 / np.sqrt(x)


@kernel("stablehlo.rsqrt")
def rsqrt(op: Operation, ctx: Any) -> Run:
    """spec: rsqrt."""
    return _float_unary(op, _rsqrt, _rsqrt)


@kernel("stablehlo.sqrt")
def sqrt(op: Operation, ctx: Any) -> Run:
    """spec: sqrt. Correctly rounded: sqrt in float32 is exact rounding for every narrower type."""
    et = _operand_et(op)
    if et.is_float:
        return lambda x: (np.sqrt(x),)
    if et.is_complex:
        return _one(_via_c128(np.sqrt, et.dtype))
    raise _unsupported(op, et)


# --- count_leading_zeros, popcnt ---------------------------------------------------------------


def _unsigned_bits(x: Any, info: IntInfo) -> np.ndarray:
    """The ``width`` low bits of integers as a native unsigned array."""
    u = np.asarray(x).astype(info.wide).view(info.unsigned)
    return u if info.native else np.bitwise_and(u, info.mask)


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
def count_leading_zeros(op: Operation, ctx: Any) -> Run:
    """spec: count_leading_zeros."""
    et = _operand_et(op)
    if not et.is_integer:
        raise _unsupported(op, et)
    info = int_info(et)
    rdt = info.dtype
    return lambda x: (_clz(_unsigned_bits(x, info), info.width).astype(rdt),)


@kernel("stablehlo.popcnt")
def popcnt(op: Operation, ctx: Any) -> Run:
    """spec: popcnt (bits of the two's complement representation)."""
    et = _operand_et(op)
    if not et.is_integer:
        raise _unsupported(op, et)
    info = int_info(et)
    rdt = info.dtype
    if info.native and not info.signed:
        return lambda x: (np.bitwise_count(x).astype(rdt),)
    return lambda x: (np.bitwise_count(_unsigned_bits(x, info)).astype(rdt),)


# --- divide, remainder ---------------------------------------------------------------------------


def _int_divide(info: IntInfo) -> Fn:
    """Integer division truncating toward zero; x / 0 = -1 (all bits set), INT_MIN / -1 =
    INT_MIN (as XLA); never a numpy warning."""
    all_ones = -1 if info.signed else info.max
    wide = info.wide

    if not info.signed:
        def udiv(x: Any, y: Any) -> Any:
            zero = np.equal(y, 0)
            q = np.floor_divide(x, np.where(zero, wide.type(1), y))
            return np.where(zero, wide.type(all_ones), q)

        return _on_wide(udiv, info)

    def sdiv(x: Any, y: Any) -> Any:
        zero = np.equal(y, 0)
        minus_one = np.equal(y, -1)
        ys = np.where(zero | minus_one, wide.type(1), y)
        q = np.floor_divide(np.subtract(x, np.fmod(x, ys)), ys)  # exact: x - fmod is a multiple
        q = np.where(minus_one, np.negative(x), q)  # wraps: -INT_MIN = INT_MIN
        return np.where(zero, wide.type(-1), q)

    return _on_wide(sdiv, info)


def _wrap_int(v: int, info: IntInfo) -> int:
    v &= info.mask
    return v - (1 << info.width) if info.signed and v > info.max else v


def _scalar_fast_path(array_fn: Fn, int_fn: Callable[[int, int], int], info: IntInfo) -> Fn:
    """Use Python integers for 0-d operands (scalar while loops); numpy for arrays."""
    make = info.dtype.type

    def run(x: Any, y: Any) -> Any:
        if x.ndim == 0 and y.ndim == 0:
            return make(_wrap_int(int_fn(int(x), int(y)), info))
        return array_fn(x, y)

    return run


def _py_trunc_div(a: int, b: int) -> int:
    if b == 0:
        return -1
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _py_rem(a: int, b: int) -> int:
    return a if b == 0 else a - b * _py_trunc_div(a, b)


@kernel("stablehlo.divide")
def divide(op: Operation, ctx: Any) -> Run:
    """spec: divide. Integers truncate toward zero; x / 0 = -1 (all bits set) and
    INT_MIN / -1 = INT_MIN, as XLA (the spec leaves them undefined)."""
    et = _operand_et(op)
    if et.is_integer:
        info = int_info(et)
        return _one(_scalar_fast_path(_int_divide(info), _py_trunc_div, info))
    if et.is_float:
        return lambda x, y: (np.divide(x, y),)
    if et.is_complex:
        return _one(_via_c128(np.divide, et.dtype))
    raise _unsupported(op, et)


def _int_remainder(info: IntInfo) -> Fn:
    """Remainder with the dividend's sign; x rem 0 = x (as XLA); INT_MIN rem -1 = 0."""
    wide = info.wide

    def rem(x: Any, y: Any) -> Any:
        zero = np.equal(y, 0)
        bad = zero | np.equal(y, -1) if info.signed else zero
        r = np.fmod(x, np.where(bad, wide.type(1), y))
        return np.where(zero, x, r)

    return _on_wide(rem, info)


@kernel("stablehlo.remainder")
def remainder(op: Operation, ctx: Any) -> Run:
    """spec: remainder: the sign of the dividend (C fmod). x rem 0 = x for integers, as XLA."""
    et = _operand_et(op)
    if et.is_integer:
        info = int_info(et)
        return _one(_scalar_fast_path(_int_remainder(info), _py_rem, info))
    if et.is_float:
        return lambda x, y: (np.fmod(x, y),)
    raise _unsupported(op, et)  # complex: "TBD" in the spec (#997)


# --- is_finite -----------------------------------------------------------------------------------


@kernel("stablehlo.is_finite", quantized_aware=True)
def is_finite(op: Operation, ctx: Any) -> Run:
    """spec: is_finite. Always true for quantized tensors."""
    et = _operand_et(op)
    if et.is_quantized:
        return lambda x: (np.ones(np.shape(x), np.bool_),)
    if et.is_float:
        return lambda x: (np.isfinite(x),)
    raise _unsupported(op, et)


# --- negate, sign --------------------------------------------------------------------------------


@kernel("stablehlo.negate")
def negate(op: Operation, ctx: Any) -> Run:
    """spec: negate. Integers wrap (unsigned: two's complement negation)."""
    et = _operand_et(op)
    if et.is_integer:
        info = int_info(et)
        if info.native:
            return lambda x: (np.negative(x),)
        return _one(_on_wide(np.negative, info))
    if et.is_float or et.is_complex:
        return lambda x: (np.negative(x),)
    raise _unsupported(op, et)


def _float_sign(x: Any) -> Any:
    """-1 / +1, keeping -0.0, +0.0 and NaN as they are."""
    keep = np.logical_or(np.equal(x, 0), np.isnan(x))
    return np.where(keep, x, np.copysign(np.ones_like(x), x))


def _complex_sign(z: np.ndarray) -> np.ndarray:
    """z / |z|; (0, 0) for 0 and (NaN, NaN) when a part is NaN."""
    a = np.abs(z)
    zero = a == 0
    r = z / np.where(zero, 1.0, a)
    nan = np.isnan(z.real) | np.isnan(z.imag)
    return np.where(nan, complex(np.nan, np.nan), np.where(zero, 0j, r))


@kernel("stablehlo.sign")
def sign(op: Operation, ctx: Any) -> Run:
    """spec: sign. Integers: -1/0/1; floats: -1.0/+1.0 keeping -0.0, +0.0 and NaN;
    complex: x / |x| with 0 for 0."""
    et = _operand_et(op)
    if et.is_integer:
        info = int_info(et)
        if not info.signed:
            return _one(_on_wide(lambda v: np.minimum(v, 1), info))
        return _one(_on_wide(np.sign, info))
    if et.is_float:
        return _one(_via_f32(_float_sign, et.dtype))
    if et.is_complex:
        return _one(_via_c128(_complex_sign, et.dtype))
    raise _unsupported(op, et)


# --- power ---------------------------------------------------------------------------------------


def _int_power(info: IntInfo) -> Fn:
    """Integer power by repeated squaring (wrapping). A negative exponent gives 0, except for
    base 1 (1) and base -1 (+-1 by the exponent's parity), as the upstream interpreter."""
    wide, unsigned = info.wide, info.unsigned

    def power(x: Any, y: Any) -> Any:
        base = np.asarray(x, wide)
        e = np.asarray(y, wide)
        base, e = np.broadcast_arrays(base, e)
        result = np.ones(base.shape, wide)
        if info.signed:
            neg = e < 0
            unit = np.equal(np.abs(base), 1)
            e = np.where(neg, np.negative(e), e)  # |e| (INT_MIN stays INT_MIN: bits 100..0)
            zero_out = neg & ~unit
        else:
            zero_out = None
        eu = e.view(unsigned) if e.dtype != unsigned else e
        while eu.any():
            odd = np.bitwise_and(eu, 1).astype(bool)
            result = np.where(odd, np.multiply(result, base), result)
            base = np.multiply(base, base)
            eu = np.right_shift(eu, 1)
        if zero_out is not None:
            result = np.where(zero_out, wide.type(0), result)
        return result

    return _on_wide(power, info)


@kernel("stablehlo.power")
def power(op: Operation, ctx: Any) -> Run:
    """spec: power. Integers: exact power with wrapping (negative exponents: see _int_power)."""
    et = _operand_et(op)
    if et.is_integer:
        return _one(_int_power(int_info(et)))
    if et.is_float:
        return _one(_via_f64(np.power, et.dtype))
    if et.is_complex:
        return _one(_via_c128(np.power, et.dtype))
    raise _unsupported(op, et)


# --- reduce_precision ----------------------------------------------------------------------------


def _reduce_precision_bits(x: Any, width: int, src_mantissa: int, bits_dt: np.dtype,
                           exponent_bits: int, mantissa_bits: int) -> np.ndarray:
    """XLA's / the upstream interpreter's bit algorithm on an IEEE-like format."""
    xb = np.asarray(x)
    v = xb.view(bits_dt)
    t = bits_dt.type
    if mantissa_bits < src_mantissa:
        shift = src_mantissa - mantissa_bits
        last_bit_mask = 1 << shift
        base_bias = (last_bit_mask >> 1) - 1
        last_bit = np.right_shift(np.bitwise_and(v, t(last_bit_mask)), shift)
        v = np.add(v, np.add(last_bit, t(base_bias)))
        v = np.bitwise_and(v, t(~(last_bit_mask - 1) & ((1 << (8 * bits_dt.itemsize)) - 1)))
    src_exponent = width - src_mantissa - 1
    if exponent_bits < src_exponent:
        sign_mask = t(1 << (width - 1))
        exp_mask = t(((1 << src_exponent) - 1) << src_mantissa)
        bias = (1 << (src_exponent - 1)) - 1
        reduced_bias = (1 << (exponent_bits - 1)) - 1
        max_exp, min_exp = bias + reduced_bias, bias - reduced_bias
        x_exp = np.bitwise_and(v, exp_mask)
        overflows = x_exp > t(max_exp << src_mantissa)
        underflows = x_exp <= t(min_exp << src_mantissa)
        signed_zero = np.bitwise_and(v, sign_mask)
        signed_inf = np.bitwise_or(signed_zero, exp_mask)
        v = np.where(overflows, signed_inf, np.where(underflows, signed_zero, v))
    if width < 8 * bits_dt.itemsize:  # f4/f6 live in the low bits of a byte
        v = np.bitwise_and(v, t((1 << width) - 1))
    r = np.asarray(v).view(xb.dtype)
    nan = np.isnan(xb)
    if mantissa_bits > 0:
        return np.where(nan, xb, r)
    return np.where(nan, np.asarray(np.inf, xb.dtype), r)


@kernel("stablehlo.reduce_precision")
def reduce_precision(op: Operation, ctx: Any) -> Run:
    """spec: reduce_precision. Rounds the significand to `mantissa_bits` (nearest even), then
    overflows to inf / flushes to zero outside the range of `exponent_bits` (no subnormals).
    Works on the bits of f16, bf16, f32 and f64 values, as XLA and the upstream interpreter do;
    one-byte formats (f8, f6, f4) are reduced as f16 values (f32 for f8E8M0FNU) and converted
    back, as XLA does (the upstream interpreter works on their own bits, which differs for their
    subnormals and for formats without inf). NaN stays NaN (+inf when mantissa_bits = 0)."""
    et = _operand_et(op)
    if not et.is_float:
        raise _unsupported(op, et)
    exponent_bits = int_or_none(op.attr("exponent_bits"))
    mantissa_bits = int_or_none(op.attr("mantissa_bits"))
    if exponent_bits is None or mantissa_bits is None:
        raise ExecutionError("reduce_precision needs exponent_bits and mantissa_bits",
                             op.location)
    info = float_info(et)
    if info.width >= 16:
        args = (info.width, info.mantissa_bits, info.bits, exponent_bits, mantissa_bits)
        return lambda x: (_reduce_precision_bits(x, *args),)
    dt = et.dtype
    wider = np.dtype(np.float16) if info.has_sign else F32  # holds every value exactly
    w = float_info(FloatType("f16" if wider == np.float16 else "f32"))
    args = (w.width, w.mantissa_bits, w.bits, exponent_bits, mantissa_bits)

    def narrow(x: Any) -> tuple[np.ndarray]:
        r = _reduce_precision_bits(np.asarray(x, wider), *args)
        with np.errstate(over="ignore", invalid="ignore"):
            return (r.astype(dt),)

    return narrow


# --- select --------------------------------------------------------------------------------------


@kernel("stablehlo.select")
def select(op: Operation, ctx: Any) -> Run:
    """spec: select: pred ? on_true : on_false; a 0-d `pred` selects a whole tensor."""

    def run(pred: Any, on_true: Any, on_false: Any) -> tuple[Any]:
        if pred.ndim == 0 and on_true.shape == on_false.shape:
            return (on_true if pred else on_false,)
        return (np.where(pred, on_true, on_false),)

    return run


# --- shift_left, shift_right_arithmetic, shift_right_logical ------------------------------------


def _shift(op: Operation, kind: str) -> Run:
    """Shifts; an amount outside [0, width) (rhs read as unsigned) gives 0, or the sign fill
    for shift_right_arithmetic, as the upstream interpreter (LLVM APInt)."""
    et = _operand_et(op)
    if not et.is_integer:
        raise _unsupported(op, et)
    info = int_info(et)
    width, wide, unsigned = info.width, info.wide, info.unsigned
    signed_dt = np.dtype(f"int{8 * wide.itemsize}")
    mask = info.mask

    def amount(y: Any) -> tuple[Any, Any]:
        y = np.asarray(y, wide)
        out = np.logical_or(np.less(y, 0), np.greater_equal(y, width)) if info.signed \
            else np.greater_equal(y, width)
        return out, np.where(out, wide.type(0), y)

    if kind == "left":
        def left(x: Any, y: Any) -> Any:
            out, s = amount(y)
            r = np.left_shift(np.asarray(x, wide).view(unsigned), s.view(unsigned))
            return np.where(out, wide.type(0), r.view(wide))

        return _one(_on_wide(left, info))

    if kind == "logical":
        def logical(x: Any, y: Any) -> Any:
            out, s = amount(y)
            u = np.asarray(x, wide).view(unsigned)
            if not info.native:
                u = np.bitwise_and(u, unsigned.type(mask))
            r = np.right_shift(u, s.view(unsigned))
            return np.where(out, wide.type(0), r.view(wide))

        return _one(_on_wide(logical, info))

    # arithmetic: shift the bits as a signed number of `width` bits (also for unsigned types,
    # as APInt::ashr does)
    def arithmetic(x: Any, y: Any) -> Any:
        out, s = amount(y)
        v = np.asarray(x, wide).view(signed_dt)
        if not info.native and not info.signed:  # sign-extend the low `width` bits
            sign = 1 << (width - 1)
            v = np.subtract(np.bitwise_xor(np.asarray(x, wide), sign).view(signed_dt),
                            signed_dt.type(sign))
        r = np.right_shift(v, s.view(signed_dt))
        fill = np.where(np.less(v, 0), signed_dt.type(-1), signed_dt.type(0))
        return np.where(out, fill, r).view(wide)

    return _one(_on_wide(arithmetic, info))


@kernel("stablehlo.shift_left")
def shift_left(op: Operation, ctx: Any) -> Run:
    """spec: shift_left."""
    return _shift(op, "left")


@kernel("stablehlo.shift_right_arithmetic")
def shift_right_arithmetic(op: Operation, ctx: Any) -> Run:
    """spec: shift_right_arithmetic."""
    return _shift(op, "arithmetic")


@kernel("stablehlo.shift_right_logical")
def shift_right_logical(op: Operation, ctx: Any) -> Run:
    """spec: shift_right_logical."""
    return _shift(op, "logical")


# --- constraints (spec "Ops" section, C1..Cn) ---------------------------------------------------
# The verifiers of the element-wise ops (shlo/verifier.py calls them through the registry).
# Type constraints follow upstream's op definitions; each check is labelled as in the spec.

from typing import Any  # noqa: E402

from ..ir import Operation  # noqa: E402
from ..types import ComplexType, QuantizedType, TensorType  # noqa: E402
from . import _constraints as _c  # noqa: E402
from ..registry import verifier  # noqa: E402

_UNARY_SAME = {
    # op: (operand/result type constraint, has result_accuracy)
    "stablehlo.cbrt": (_c.FP_C_Q_TENSOR, True),
    "stablehlo.cosine": (_c.FP_C_Q_TENSOR, True),
    "stablehlo.exponential": (_c.FP_C_Q_TENSOR, True),
    "stablehlo.exponential_minus_one": (_c.FP_C_Q_TENSOR, True),
    "stablehlo.log": (_c.FP_C_Q_TENSOR, True),
    "stablehlo.log_plus_one": (_c.FP_C_Q_TENSOR, True),
    "stablehlo.logistic": (_c.FP_C_Q_TENSOR, True),
    "stablehlo.rsqrt": (_c.FP_C_Q_TENSOR, True),
    "stablehlo.sine": (_c.FP_C_Q_TENSOR, True),
    "stablehlo.sqrt": (_c.FP_C_Q_TENSOR, True),
    "stablehlo.tan": (_c.FP_C_Q_TENSOR, True),
    "stablehlo.tanh": (_c.FP_C_Q_TENSOR, True),
    "stablehlo.ceil": (_c.FP_Q_TENSOR, False),
    "stablehlo.floor": (_c.FP_Q_TENSOR, False),
    "stablehlo.round_nearest_afz": (_c.FP_Q_TENSOR, False),
    "stablehlo.round_nearest_even": (_c.FP_Q_TENSOR, False),
    "stablehlo.count_leading_zeros": (_c.INT_TENSOR, False),
    "stablehlo.popcnt": (_c.INT_TENSOR, False),
    "stablehlo.not": (_c.PRED_INT_TENSOR, False),
    "stablehlo.negate": (_c.INT_FP_C_Q_TENSOR, False),
    "stablehlo.sign": (_c.SINT_FP_C_Q_TENSOR, False),
}


@verifier(*_UNARY_SAME)
def _verify_unary(op: Operation, diag: Any) -> None:
    """(C1) `baseline_type(operand) = baseline_type(result)` (`type(operand) = type(result)` for
    the integer ops); the result_accuracy attribute, where the op has one, is well formed."""
    tc, accuracy = _UNARY_SAME[op.name]
    if not _c.signature(op, diag, [tc], [tc], optional_attrs={"result_accuracy": "any"}):
        return
    _c.compatible_all(op, diag, "C1")
    if accuracy:
        _c.result_accuracy(op, diag)


_BINARY_SAME = {
    "stablehlo.maximum": (_c.TENSOR, _c.TENSOR),
    "stablehlo.minimum": (_c.TENSOR, _c.TENSOR),
    "stablehlo.multiply": (_c.TENSOR, _c.TENSOR),
    "stablehlo.subtract": (_c.INT_FP_C_Q_TENSOR, _c.INT_FP_C_Q_TENSOR),
    "stablehlo.divide": (_c.INT_FP_C_Q_TENSOR, _c.INT_FP_C_Q_TENSOR),
    "stablehlo.remainder": (_c.INT_FP_C_Q_TENSOR, _c.INT_FP_C_Q_TENSOR),
    "stablehlo.power": (_c.INT_FP_C_Q_TENSOR, _c.INT_FP_C_Q_TENSOR),
    "stablehlo.atan2": (_c.FP_C_Q_TENSOR, _c.FP_C_Q_TENSOR),
    "stablehlo.shift_left": (_c.INT_TENSOR, _c.INT_TENSOR),
    "stablehlo.shift_right_arithmetic": (_c.INT_TENSOR, _c.INT_TENSOR),
    "stablehlo.shift_right_logical": (_c.INT_TENSOR, _c.INT_TENSOR),
    "stablehlo.and": (_c.PRED_INT_TENSOR, _c.TENSOR),
    "stablehlo.or": (_c.PRED_INT_TENSOR, _c.TENSOR),
    "stablehlo.xor": (_c.PRED_INT_TENSOR, _c.TENSOR),
}


@verifier(*_BINARY_SAME)
def _verify_binary(op: Operation, diag: Any) -> None:
    """(C1) `baseline_type(lhs) = baseline_type(rhs) = baseline_type(result)`."""
    operand, result = _BINARY_SAME[op.name]
    if _c.signature(op, diag, [operand, operand], [result]):
        _c.compatible_all(op, diag, "C1")


@verifier("stablehlo.add")
def _verify_add(op: Operation, diag: Any) -> None:
    """(C1) `baseline_type(lhs) = baseline_type(rhs) = baseline_type(result)`; for quantized
    operands (C2) all or none are quantized, (C3-C4) storage and expressed types agree,
    (C5-C7) per-axis quantization is kept along the same dimension."""
    if not _c.signature(op, diag, [_c.TENSOR_QA, _c.TENSOR_QA], [_c.TENSOR_QA]):
        return
    types = [op.operands[0].type, op.operands[1].type, op.results[0].type]
    ets = [t.element_type for t in types]
    quant = [isinstance(e, QuantizedType) for e in ets]
    if not any(quant):
        _c.compatible_all(op, diag, "C1")
        return
    if not _c.same_shapes(op, diag, "C1", types):
        return
    if not all(quant):
        diag.error(op, "C2", "expects all operands and results to be either quantized or "
                             "non-quantized: " + _c.types_str(types))
        return
    lhs, rhs, res = ets
    if len({(e.storage_type, e.min, e.max) for e in ets}) != 1:
        diag.error(op, "C3", "mismatched operands and result quantization storage types: "
                             + _c.types_str(types))
    if len({e.expressed_type for e in ets}) != 1:
        diag.error(op, "C4", "mismatched operands and result quantization expressed types: "
                             + _c.types_str(types))
    if res.quantization_dimension is None:
        if lhs.quantization_dimension is not None or rhs.quantization_dimension is not None:
            diag.error(op, "C5", "result is not per_axis quantized but lhs or rhs are")
        return
    for name, e in (("lhs", lhs), ("rhs", rhs)):
        if e.quantization_dimension is not None and \
                e.quantization_dimension != res.quantization_dimension:
            diag.error(op, "C6" if name == "lhs" else "C7",
                       f"quantization_dimension of {name} and result are not same: "
                       f"{e.quantization_dimension} vs {res.quantization_dimension}")


def _complex_part(et: Any) -> Any:
    return et.element if isinstance(et, ComplexType) else et


_ABS_RESULT = _c.TC(_c.SI | _c.F | _c.Q)
_F32_F64 = _c.TC(only=frozenset({"f32", "f64"}),
                 description="ranked tensor of 32/64-bit float values")
_COMPLEX = _c.TC(_c.C)
_CONVERTIBLE = _c.TC(_c.F | _c.B | _c.I | _c.C)


@verifier("stablehlo.abs")
def _verify_abs(op: Operation, diag: Any) -> None:
    """(C1) `shape(result) = shape(operand)`; (C2) the result's baseline element type is the
    operand's, or its complex element type for complex operands."""
    if not _c.signature(op, diag, [_c.SINT_FP_C_Q_TENSOR], [_ABS_RESULT]):
        return
    t = op.operands[0].type
    _c.check_inferred(op, diag, "C1, C2",
                      [TensorType(t.shape, _complex_part(t.element_type))])


@verifier("stablehlo.real", "stablehlo.imag")
def _verify_real_imag(op: Operation, diag: Any) -> None:
    """(C1) `shape(result) = shape(operand)`; (C2) the result element type is the complex
    element type of a complex operand, else the operand's element type."""
    if not _c.signature(op, diag, [_c.FP_C_TENSOR], [_c.FP_TENSOR]):
        return
    t = op.operands[0].type
    _c.check_inferred(op, diag, "C1, C2",
                      [TensorType(t.shape, _complex_part(t.element_type))])


@verifier("stablehlo.is_finite")
def _verify_is_finite(op: Operation, diag: Any) -> None:
    """(C1) `shape(x) = shape(y)`; `y` is a tensor of i1."""
    if not _c.signature(op, diag, [_c.FP_Q_TENSOR], [_c.PRED_TENSOR]):
        return
    _c.same_shapes(op, diag, "C1", message="all non-scalar operands/results must have the "
                                           "same shape and base type")


@verifier("stablehlo.complex")
def _verify_complex(op: Operation, diag: Any) -> None:
    """(C1) `type(lhs) = type(rhs)`; (C2) `shape(result) = shape(lhs)`; (C3) the result element
    type is `complex<element_type(lhs)>`."""
    if not _c.signature(op, diag, [_F32_F64, _F32_F64], [_COMPLEX]):
        return
    lhs, rhs = op.operands[0].type, op.operands[1].type
    if not _c.compatible_all(op, diag, "C1", [lhs, rhs]):
        return
    _c.check_inferred(op, diag, "C2, C3", [TensorType(lhs.shape, ComplexType(lhs.element_type))])


_COMPARISON_DIRECTIONS = frozenset({"EQ", "NE", "GE", "GT", "LE", "LT"})
_COMPARISON_TYPES = frozenset({"NOTYPE", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"})


@verifier("stablehlo.compare")
def _verify_compare(op: Operation, diag: Any) -> None:
    """(C1) `baseline_element_type(lhs) = baseline_element_type(rhs)`;
    (C2) `shape(lhs) = shape(rhs) = shape(result)`; the result is a tensor of i1.

    (C3), the compare_type implied by the element type, is not enforced: upstream accepts any
    compare_type and programs in the wild rely on it."""
    if not _c.signature(op, diag, [_c.TENSOR, _c.TENSOR], [_c.PRED_TENSOR],
                        attrs={"comparison_direction": "any"},
                        optional_attrs={"compare_type": "any"}):
        return
    d = _c.enum_attr(op, "comparison_direction")
    if d is not None and d not in _COMPARISON_DIRECTIONS:
        diag.error(op, "I3", f"comparison_direction must be one of EQ, NE, GE, GT, LE, LT, "
                             f"got {d}")
    ct = _c.enum_attr(op, "compare_type")
    if ct is not None and ct not in _COMPARISON_TYPES:
        diag.error(op, "I4", f"compare_type must be one of FLOAT, TOTALORDER, SIGNED, UNSIGNED,"
                             f" got {ct}")
    lhs, rhs = op.operands[0].type, op.operands[1].type
    if not _c.same_shapes(op, diag, "C2"):
        return
    if not _c.compatible_element_types(lhs.element_type, rhs.element_type):
        diag.error(op, "C1", "requires compatible element types for lhs and rhs: "
                             + _c.types_str([lhs, rhs]))


@verifier("stablehlo.select")
def _verify_select(op: Operation, diag: Any) -> None:
    """(C1) `rank(pred) = 0 or shape(pred) = shape(on_true)`;
    (C2) `baseline_type(on_true) = baseline_type(on_false) = baseline_type(result)`."""
    if not _c.signature(op, diag, [_c.PRED_TENSOR, _c.TENSOR, _c.TENSOR], [_c.TENSOR]):
        return
    pred, on_true, on_false = (v.type for v in op.operands)
    if pred.shape is not None and pred.shape != () and \
            not _c.same_shapes(op, diag, "C1", [pred, on_true],
                               message="requires the same shape for all operands"):
        return
    if not _c.compatible(on_true, on_false):
        diag.error(op, "C2", "requires compatible types for non-predicate operands: "
                             + _c.types_str([on_true, on_false]))
        return
    _c.check_inferred(op, diag, "C2", [on_true])


@verifier("stablehlo.clamp")
def _verify_clamp(op: Operation, diag: Any) -> None:
    """(C1) `rank(min) = 0 or shape(min) = shape(operand)`; (C2) the same for max;
    (C3) the three baseline element types agree; (C4) `baseline_type(operand) =
    baseline_type(result)`."""
    if not _c.signature(op, diag, [_c.TENSOR] * 3, [_c.TENSOR]):
        return
    mn, operand, mx = (v.type for v in op.operands)
    ok = True
    for name, t, label in (("min", mn, "C1"), ("max", mx, "C2")):
        if t.shape != () and not _c.compatible_shapes(t.shape, operand.shape):
            diag.error(op, label, f"{name} shape {_c.dims_str(t.shape)} is not scalar and is "
                                  f"not compatible to operand shape {_c.dims_str(operand.shape)}")
            ok = False
    for t in (mn, mx):
        if not _c.compatible_element_types(t.element_type, operand.element_type):
            diag.error(op, "C3", "requires compatible element types for min, operand and max: "
                                 + _c.types_str([mn, operand, mx]))
            ok = False
            break
    if ok:
        _c.check_inferred(op, diag, "C4", [operand])


@verifier("stablehlo.convert")
def _verify_convert(op: Operation, diag: Any) -> None:
    """(C1) `shape(operand) = shape(result)`."""
    if _c.signature(op, diag, [_CONVERTIBLE], [_CONVERTIBLE]):
        _c.same_shapes(op, diag, "C1")


def _storage(et: Any) -> Any:
    return et.storage_type if isinstance(et, QuantizedType) else et


@verifier("stablehlo.bitcast_convert")
def _verify_bitcast_convert(op: Operation, diag: Any) -> None:
    """(C1) shapes agree, with one extra innermost dimension on the side of the narrower
    element type, whose size times its width is the wider width; (C2) complex converts only to
    complex."""
    if not _c.signature(op, diag, [_c.TENSOR_QA], [_c.TENSOR_QA]):
        return
    operand, result = op.operands[0].type, op.results[0].type
    e, e2 = _storage(operand.element_type), _storage(result.element_type)
    if isinstance(e, ComplexType) != isinstance(e2, ComplexType):
        diag.error(op, "C2", "cannot convert between real and complex types: "
                             + _c.types_str([operand, result]))
        return
    if operand.shape is None or result.shape is None:
        return
    w, w2 = _c.num_bits(e), _c.num_bits(e2)
    if w is None or w2 is None:
        return
    got = f"Got: '{_c.type_str(operand)}' and '{_c.type_str(result)}'"
    if w == w2:
        if not _c.compatible_shapes(operand.shape, result.shape):
            diag.error(op, "C1", "operand and result shapes must match except for the innermost"
                                 " dimension of the shape with the smaller element type. " + got
                                 + ".")
        return
    small, large = (operand, result) if w < w2 else (result, operand)
    ws, wl = min(w, w2), max(w, w2)
    if len(small.shape) != len(large.shape) + 1:
        diag.error(op, "C1", f"rank of smaller element type ({len(small.shape)}) should be 1 "
                             f"more than rank of larger element type ({len(large.shape)}), but "
                             f"{len(small.shape)} != {len(large.shape)} + 1.")
        return
    if not _c.compatible_shapes(small.shape[:-1], large.shape):
        diag.error(op, "C1", "operand and result shapes must match except for the innermost "
                             "dimension of the shape with the smaller element type. " + got + ".")
        return
    last = small.shape[-1]
    if last is not None and last * ws != wl:
        diag.error(op, "C1", f"requires compatible bit widths. {got}, but {ws} * {last} != "
                             f"{wl}.")


@verifier("stablehlo.reduce_precision")
def _verify_reduce_precision(op: Operation, diag: Any) -> None:
    """(C1) `baseline_type(operand) = baseline_type(output)`; (C2) `1 <= exponent_bits`;
    (C3) `0 <= mantissa_bits`."""
    if not _c.signature(op, diag, [_c.FP_Q_TENSOR], [_c.FP_Q_TENSOR],
                        attrs={"exponent_bits": "int", "mantissa_bits": "int"}):
        return
    e = _c.int_attr(op, "exponent_bits")
    m = _c.int_attr(op, "mantissa_bits")
    if e is not None and e < 1:
        diag.error(op, "C2", f"attribute 'exponent_bits' failed to satisfy constraint: 32-bit "
                             f"signless integer attribute whose value is positive (got {e})")
    if m is not None and m < 0:
        diag.error(op, "C3", f"attribute 'mantissa_bits' failed to satisfy constraint: 32-bit "
                             f"signless integer attribute whose value is non-negative (got {m})")
    _c.compatible_all(op, diag, "C1")
