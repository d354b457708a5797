"""Element-wise arithmetic: abs, add, divide, maximum, minimum, multiply, negate, power,
remainder, sign, subtract (spec order).

Integers wrap (two's complement) and never emit numpy warnings; the sub-byte integers are
computed in int8/uint8 and cast back. Float add, subtract, multiply and divide on narrow types
are done by numpy/ml_dtypes in float32 and rounded once, which is exact rounding for them; on
the one-byte formats (f8, f6, f4) they, power and remainder are 256 x 256 lookup tables of
exactly those kernels (``_tables.py``); on f16 and bf16 they are compiled loops doing the same
(``ops/_half.py``).
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ...dtypes import uint_of_size
from ...errors import Diagnostics
from ...ir import Operation
from ...registry import COMMUTATIVE, DOQ, ELEMENTWISE, Kernel, define, inference, kernel, verifier
from ...types import ElementType, QuantizedType, TensorType, Type
from .. import _constraints as _c, _half
from .._numeric import C128, F32, F64, IntInfo, int_info
from ._common import (
    BINARY, UNARY, Fn, binary_op, complex_part, infer_same, narrow_binary, narrow_pairwise,
    narrow_unary, on_wide, one, operand_et, unary_op, unsupported, via_c128, via_f32, via_f64,
)
from ._tables import by_sign_bit

if TYPE_CHECKING:  # pragma: no cover
    from ...interpreter.evaluator import PrepareContext

__all__ = ["max_fn", "min_fn"]


# --- abs (spec "abs") -----------------------------------------------------------------------------

define("stablehlo.abs", spec="abs", traits={ELEMENTWISE, DOQ}, syntax=UNARY)


@kernel("stablehlo.abs")
def abs_(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: abs. Signed integers wrap (abs(INT_MIN) = INT_MIN); complex gives the modulus."""
    et = operand_et(op)
    if et.is_complex:
        if et.dtype == C128:
            return one(np.abs)
        return one(lambda x: np.abs(np.asarray(x, C128)).astype(F32))
    if et.is_integer:
        info = int_info(et)
        if not info.signed:
            return one(lambda x: x)
        return one(on_wide(np.abs, info))
    if et.is_float:
        return one(by_sign_bit(op.name, np.abs, et.dtype, flip=False) or np.abs)
    raise unsupported(op, et)


@inference("stablehlo.abs")
def _infer_abs(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """The operand's shape; its element type, or the parts' type for complex operands."""
    t = op.operands[0].type
    if not isinstance(t, TensorType):
        return None
    return [TensorType(t.shape, complex_part(t.element_type), t.encoding)]


_ABS_RESULT = _c.TC(_c.SI | _c.F | _c.Q)


@verifier("stablehlo.abs")
def _verify_abs(op: Operation, diag: Diagnostics) -> None:
    """(C1) `shape(result) = shape(operand)`; (C2) the result's baseline element type is the
    operand's, or its complex element type for complex operands."""
    if not _c.signature(op, diag, [_c.SINT_FP_C_Q_TENSOR], [_ABS_RESULT]):
        return
    _c.check_inferred(op, diag, "C1, C2", _infer_abs(op, diag))  # type: ignore[arg-type]


# --- add (spec "add") -----------------------------------------------------------------------------


def _arith(op: Operation, ufunc: np.ufunc, bool_ufunc: np.ufunc | None) -> Kernel:
    et = operand_et(op)
    if et.is_bool:
        if bool_ufunc is None:
            raise unsupported(op, et)
        return one(bool_ufunc)
    if et.is_integer or et.is_float or et.is_complex:
        fn = _OPERATORS.get(ufunc) if et.dtype.isbuiltin == 1 else None  # numpy's own types
        if et.is_float:
            # f8/f6/f4: a 256 x 256 table of ml_dtypes' own (f32, rounded once); f16/bf16:
            # the compiled f32 loop (numpy's / ml_dtypes' bits, at f32 speed)
            fast = narrow_binary(op, fn or ufunc, et.dtype)
            if fast is not (fn or ufunc):
                return one(fast)
        if fn is not None:
            # Python's operator: the same ufunc on arrays, numpy's scalar fast path on numpy
            # scalars (~10x faster than a ufunc call; scalar `while` loops are made of these).
            return one(fn)
        # ml_dtypes int2/int4/uint2/uint4 add/subtract/multiply wrap natively.
        return one(ufunc)
    raise unsupported(op, et)


_OPERATORS = {np.add: operator.add, np.subtract: operator.sub, np.multiply: operator.mul}
"""numpy ufuncs and the Python operators that compute them (faster on numpy scalars)."""

define("stablehlo.add", spec="add", traits={ELEMENTWISE, COMMUTATIVE, DOQ}, syntax=BINARY)
inference("stablehlo.add")(infer_same)


@kernel("stablehlo.add")
def add(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: add. Logical or for i1; integers wrap."""
    return _arith(op, np.add, np.logical_or)


@verifier("stablehlo.add")
def _verify_add(op: Operation, diag: Diagnostics) -> None:
    """(C1) `baseline_type(lhs) = baseline_type(rhs) = baseline_type(result)`; for quantized
    operands (C2) all or none are quantized, (C3-C4) storage and expressed types agree,
    (C5-C7) per-axis quantization is kept along the same dimension. In upstream's order: the
    same shapes, the element types, then the result against the type inferred from the
    operands (where bounds count)."""
    if not _c.signature(op, diag, [_c.TENSOR_QA, _c.TENSOR_QA], [_c.TENSOR_QA]):
        return
    types = [op.operands[0].type, op.operands[1].type, op.results[0].type]
    if not _c.same_shapes(op, diag, "C1", types, bounds=False):
        return
    ets = [t.element_type for t in types]
    quant = [isinstance(e, QuantizedType) for e in ets]
    if not any(quant):
        if ets[0] != ets[1] or ets[0] != ets[2]:
            diag.error(op, "C1", "op requires the same element type for all operands and "
                                 "results: " + _c.types_str(types))
            return
    elif not _quantized_add_ok(op, diag, types):
        return
    if _c.same_shapes(op, diag, "C1", types[:2]):
        _c.check_inferred(op, diag, "C1", infer_same(op, diag) or [])


def _quantized_add_ok(op: Operation, diag: Diagnostics, types: list[Type]) -> bool:
    """add (C2-C7) for quantized types (upstream's verifyBinaryOpQuantizationConstraints:
    storage types compare by width, as MLIR's signless storage types do)."""
    ets = [t.element_type for t in types]
    if not all(isinstance(e, QuantizedType) for e in ets):
        diag.error(op, "C2", "expects all operands and results to be either quantized or "
                             "non-quantized: " + _c.types_str(types))
        return False
    lhs, rhs, res = ets
    if len({e.storage_type.width for e in ets}) != 1:
        diag.error(op, "C3", "mismatched operands and result quantization storage types: "
                             + _c.types_str(types))
        return False
    if len({e.expressed_type for e in ets}) != 1:
        diag.error(op, "C4", "mismatched operands and result quantization expressed types: "
                             + _c.types_str(types))
        return False
    if lhs.quantization_dimension is None and rhs.quantization_dimension is None:
        if res.quantization_dimension is not None:
            diag.error(op, "", "result per_axis quantized but none from rhs and lhs are "
                               "per_axis quantized")
            return False
        return True
    if res.quantization_dimension is None:
        diag.error(op, "C5", "result is not per_axis quantized but lhs or rhs are")
        return False
    for name, e in (("lhs", lhs), ("rhs", rhs)):
        if e.quantization_dimension is not None and \
                e.quantization_dimension != res.quantization_dimension:
            diag.error(op, "C6" if name == "lhs" else "C7",
                       f"quantization_dimension of {name} and result are not same "
                       f"'{_c.type_str(e)}' vs '{_c.type_str(res)}'")
            return False
    return True


# --- divide (spec "divide") -----------------------------------------------------------------------

binary_op("divide", _c.INT_FP_C_Q_TENSOR, DOQ)


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

        return on_wide(udiv, info)

    def sdiv(x: Any, y: Any) -> Any:
        zero = np.equal(y, 0)
        minus_one = np.equal(y, -1)
        ys = np.where(zero | minus_one, wide.type(1), y)
        q = np.floor_divide(np.subtract(x, np.fmod(x, ys)), ys)  # exact: x - fmod is a multiple
        q = np.where(minus_one, np.negative(x), q)  # wraps: -INT_MIN = INT_MIN
        return np.where(zero, wide.type(-1), q)

    return on_wide(sdiv, info)


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
def divide(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: divide. Integers truncate toward zero; x / 0 = -1 (all bits set) and
    INT_MIN / -1 = INT_MIN, as XLA (the spec leaves them undefined)."""
    et = operand_et(op)
    if et.is_integer:
        info = int_info(et)
        return one(_scalar_fast_path(_int_divide(info), _py_trunc_div, info))
    if et.is_float:
        if et.dtype == F32 or et.dtype == F64:  # the operator: numpy's scalar fast path
            return one(operator.truediv)
        return one(narrow_binary(op, np.divide, et.dtype))
    if et.is_complex:
        return one(via_c128(np.divide, et.dtype))
    raise unsupported(op, et)


# --- maximum, minimum (spec "maximum", "minimum") -------------------------------------------------

binary_op("maximum", _c.TENSOR, COMMUTATIVE, DOQ)
binary_op("minimum", _c.TENSOR, COMMUTATIVE, DOQ)


# Results of at most this many bytes are checked for a wrong zero by a byte search (below that
# it is the cheaper test: `bytes.find` on 64 to 16384 bytes against a comparison and `any`,
# 0.3 / 2.5 us at 64 bytes, even at ~4 KB).
_SEARCHED_BYTES = 2048


def _float_max_min(dt: np.dtype, is_max: bool) -> Fn:
    """IEEE-754 maximum / minimum: NaN propagates and -0 < +0 (numpy's maximum returns either
    zero). Where x == y the result's bits are x & y (maximum) or x | y (minimum), which only
    changes the (-0, +0) pairs. One-byte formats: a 256 x 256 table of it; f16 and bf16: the
    compiled loop (``_half.max_min``; numpy's f16 and ml_dtypes' bf16 loops are scalar)."""
    return narrow_pairwise("stablehlo.maximum" if is_max else "stablehlo.minimum",
                           _careful_max_min(dt, is_max), dt,
                           lambda x, y: _half.max_min(is_max, x, y))


def _careful_max_min(dt: np.dtype, is_max: bool) -> Fn:
    """:func:`_float_max_min` by numpy's maximum / minimum and the zeros' fix."""
    u = uint_of_size(dt.itemsize)
    pick, combine = (np.maximum, np.bitwise_and) if is_max else (np.minimum, np.bitwise_or)
    # numpy's pick is right except that it may return the wrong zero of a (-0, +0) pair: -0
    # for maximum, +0 for minimum. Only results holding that zero need the bitwise fix.
    wrong_zero = u.type(1 << (8 * dt.itemsize - 1)) if is_max else u.type(0)
    # A small result is searched for the wrong zero's bytes instead (one copy and a byte
    # search, ~0.2 us, against ~2.5 us for a comparison and a reduction on a 16-element
    # array): a match at an unaligned offset only sends it to the exact check below.
    # (`bytes.find` is ~2x faster than `in` on short bytes.)
    wrong_bytes = np.array(wrong_zero).tobytes()

    def run(x: Any, y: Any) -> Any:
        m = pick(x, y)
        if m.nbytes <= _SEARCHED_BYTES:
            if m.tobytes().find(wrong_bytes) < 0:
                return m
        elif not (m.view(u) == wrong_zero).any():
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


def max_fn(op: Operation, et: ElementType) -> Fn:
    """`maximum` on arrays of element type ``et`` (also used by clamp)."""
    if et.is_bool:
        return np.logical_or
    if et.is_integer:
        return on_wide(np.maximum, int_info(et))
    if et.is_float:
        return _float_max_min(et.dtype, True)
    if et.is_complex:
        return _complex_max
    raise unsupported(op, et)


def min_fn(op: Operation, et: ElementType) -> Fn:
    """`minimum` on arrays of element type ``et`` (also used by clamp)."""
    if et.is_bool:
        return np.logical_and
    if et.is_integer:
        return on_wide(np.minimum, int_info(et))
    if et.is_float:
        return _float_max_min(et.dtype, False)
    if et.is_complex:
        return _complex_min
    raise unsupported(op, et)


@kernel("stablehlo.maximum")
def maximum(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: maximum. Logical or for i1; IEEE maximum for floats (NaN propagates, +0 > -0);
    lexicographic on (real, imag) for complex."""
    fn = max_fn(op, operand_et(op))
    return one(fn)


@kernel("stablehlo.minimum")
def minimum(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: minimum. Logical and for i1; IEEE minimum for floats (NaN propagates, -0 < +0);
    lexicographic on (real, imag) for complex."""
    fn = min_fn(op, operand_et(op))
    return one(fn)


# --- multiply (spec "multiply") -------------------------------------------------------------------

binary_op("multiply", _c.TENSOR, COMMUTATIVE, DOQ)


@kernel("stablehlo.multiply")
def multiply(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: multiply. Logical and for i1; integers wrap."""
    return _arith(op, np.multiply, np.logical_and)


# --- negate (spec "negate") -----------------------------------------------------------------------

unary_op("negate", _c.INT_FP_C_Q_TENSOR, DOQ)


def _large(op: Operation) -> bool:
    """True when the operand has a static shape of at least ``_half.MIN_SIZE`` elements:
    numpy's f16 negative is a scalar loop (2.7x float32's), the sign bit's xor is not; smaller
    ones keep the operator, which the evaluator inlines in loop bodies."""
    t = op.operands[0].type
    return isinstance(t, TensorType) and t.is_static and t.num_elements >= _half.MIN_SIZE


@kernel("stablehlo.negate")
def negate(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: negate. Integers wrap (unsigned: two's complement negation)."""
    et = operand_et(op)
    builtin = et.dtype.isbuiltin == 1  # numpy's own types: the operator (as in _arith)
    if et.is_integer:
        info = int_info(et)
        if info.native:
            return one(operator.neg if builtin else np.negative)
        return one(on_wide(np.negative, info))
    if et.is_float and (not builtin or _large(op)):  # (small f16: the operator, inlined)
        fast = by_sign_bit(op.name, np.negative, et.dtype, flip=True)
        if fast is not None:
            return one(fast)
    if et.is_float or et.is_complex:
        return one(operator.neg if builtin else np.negative)
    raise unsupported(op, et)


# --- power (spec "power") -------------------------------------------------------------------------

binary_op("power", _c.INT_FP_C_Q_TENSOR, DOQ)


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

    return on_wide(power, info)


@kernel("stablehlo.power")
def power(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: power. Integers: exact power with wrapping (negative exponents: see _int_power)."""
    et = operand_et(op)
    if et.is_integer:
        return one(_int_power(int_info(et)))
    if et.is_float:
        return one(narrow_binary(op, via_f64(np.power, et.dtype), et.dtype))
    if et.is_complex:
        return one(via_c128(np.power, et.dtype))
    raise unsupported(op, et)


# --- remainder (spec "remainder") -----------------------------------------------------------------

binary_op("remainder", _c.INT_FP_C_Q_TENSOR, DOQ)


def _int_remainder(info: IntInfo) -> Fn:
    """Remainder with the dividend's sign; x rem 0 = x (as XLA); INT_MIN rem -1 = 0."""
    wide = info.wide

    def rem(x: Any, y: Any) -> Any:
        zero = np.equal(y, 0)
        bad = zero | np.equal(y, -1) if info.signed else zero
        r = np.fmod(x, np.where(bad, wide.type(1), y))
        return np.where(zero, x, r)

    return on_wide(rem, info)


@kernel("stablehlo.remainder")
def remainder(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: remainder: the sign of the dividend (C fmod). x rem 0 = x for integers, as XLA."""
    et = operand_et(op)
    if et.is_integer:
        info = int_info(et)
        return one(_scalar_fast_path(_int_remainder(info), _py_rem, info))
    if et.is_float:
        return one(narrow_binary(op, np.fmod, et.dtype))
    raise unsupported(op, et)  # complex: "TBD" in the spec (#997)


# --- sign (spec "sign") ---------------------------------------------------------------------------

unary_op("sign", _c.SINT_FP_C_Q_TENSOR, DOQ)


def _float_sign(x: Any) -> Any:
    """-1 / +1, keeping -0.0, +0.0 and NaN as they are: numpy's sign is that except that it
    gives +0 for -0 (a NaN is returned as it is), which the copysign puts right. Two calls
    (~1 us on 16 elements; it was six, ~9 us); tests/ops/test_fast_paths.py compares every
    f16 bit pattern and 2e6 random f32/f64 ones with the six-call definition."""
    return np.copysign(np.sign(x), x)


def _complex_sign(z: np.ndarray) -> np.ndarray:
    """z / |z|; (0, 0) for 0 and (NaN, NaN) when a part is NaN."""
    a = np.abs(z)
    zero = a == 0
    r = z / np.where(zero, 1.0, a)
    nan = np.isnan(z.real) | np.isnan(z.imag)
    return np.where(nan, complex(np.nan, np.nan), np.where(zero, 0j, r))


@kernel("stablehlo.sign")
def sign(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: sign. Integers: -1/0/1; floats: -1.0/+1.0 keeping -0.0, +0.0 and NaN;
    complex: x / |x| with 0 for 0."""
    et = operand_et(op)
    if et.is_integer:
        info = int_info(et)
        if not info.signed:
            return one(on_wide(lambda v: np.minimum(v, 1), info))
        return one(on_wide(np.sign, info))
    if et.is_float:
        return one(narrow_unary(op, via_f32(_float_sign, et.dtype), et.dtype))
    if et.is_complex:
        return one(via_c128(_complex_sign, et.dtype))
    raise unsupported(op, et)


# --- subtract (spec "subtract") -------------------------------------------------------------------

binary_op("subtract", _c.INT_FP_C_Q_TENSOR, DOQ)


@kernel("stablehlo.subtract")
def subtract(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: subtract. Integers wrap."""
    return _arith(op, np.subtract, None)
