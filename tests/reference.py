"""A numpy reference of shlo's kernels, in the style of JAX's ``lax_reference.py``.

One function per op, written with numpy and ml_dtypes only (no shlo code), most of them one
line. Where numpy differs from the spec (or from the choice shlo documents for what the spec
leaves open, docs/semantics/*.md), a comment says how, and the reference does the spec's thing.
tests/ops/test_reference_properties.py compares shlo's results with these on values and shapes
that hypothesis draws.

Arguments and results are numpy arrays of the element type's dtype (``np.bool_`` for i1,
ml_dtypes for bf16/f8/f6/f4 and the 2- and 4-bit integers). Integers are computed exactly on
Python ints and wrapped to the type (:func:`_wrap`); floats are computed in float64, where
every operation here on narrower inputs is exact or correctly rounded, and rounded once to the
type (:func:`round_to`).
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import ml_dtypes
import numpy as np

F64 = np.dtype(np.float64)
F32 = np.dtype(np.float32)

# --- element type facts (from numpy and ml_dtypes) -------------------------------------------


def is_int(dt: Any) -> bool:
    """Integer (not bool) dtypes, ml_dtypes' int2/int4/uint2/uint4 included."""
    return np.dtype(dt).kind in "iu" or np.dtype(dt).name in ("int2", "int4", "uint2", "uint4")


def int_info(dt: Any) -> tuple[int, bool]:
    """(bits, signed) of an integer dtype."""
    info = ml_dtypes.iinfo(dt) if np.dtype(dt).kind == "V" else np.iinfo(dt)
    return int(info.bits), int(info.min) < 0


def float_info(dt: Any) -> Any:
    dt = np.dtype(dt)
    return np.finfo(dt) if dt.kind == "f" else ml_dtypes.finfo(dt)


def bits_of(x: np.ndarray) -> np.ndarray:
    """The bit patterns of ``x`` as unsigned integers of its item size."""
    x = np.array(x, order="C")  # (np.ascontiguousarray would make a 0-d array 1-d)
    return x.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[x.dtype.itemsize])


# --- integers: exact on Python ints, then wrapped ------------------------------------------------


def _wrap(values: Any, dt: Any) -> np.ndarray:
    """Python ints wrapped to the two's complement range of ``dt`` (numpy would raise or warn
    on out-of-range Python ints)."""
    nbits, signed = int_info(dt)
    wrap = np.frompyfunc(lambda a: _signed(int(a), nbits) if signed else _unsigned(int(a), nbits),
                         1, 1)
    v = np.asarray(wrap(np.asarray(values, dtype=object)), dtype=object)
    return v.astype(np.int64 if signed else np.uint64).astype(dt)


def _py(x: np.ndarray) -> np.ndarray:
    """An integer array as an object array of Python ints."""
    nbits, signed = int_info(x.dtype)
    return np.asarray(x).astype(np.int64 if signed else np.uint64).astype(object)


def _int_map(fn: Callable[..., int], *xs: np.ndarray, dtype: Any = None) -> np.ndarray:
    """``fn`` on the Python ints of ``xs`` element by element, wrapped to the type."""
    dt = dtype or xs[0].dtype
    out = np.frompyfunc(fn, len(xs), 1)(*[_py(x) for x in xs])
    return _wrap(out, dt)


def _unsigned(a: int, nbits: int) -> int:
    return a % (1 << nbits)


def _signed(a: int, nbits: int) -> int:
    u = a % (1 << nbits)
    return u - (1 << nbits) if u >> (nbits - 1) else u


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


# --- floats: in float64, rounded once ----------------------------------------------------------


def _to_odd_f32(v: np.ndarray) -> np.ndarray:
    """float64 -> float32 rounded to odd (truncate, then set the last bit when inexact)."""
    with np.errstate(all="ignore"):
        r = v.astype(F32)
        inexact = np.isfinite(v) & (r.astype(F64) != v)
        r = np.where(inexact & (np.abs(r.astype(F64)) > np.abs(v)), np.nextafter(r, F32.type(0)), r)
        b = r.view(np.uint32)
        return np.where(inexact, b | np.uint32(1), b).view(F32)


def round_to(v: Any, dt: Any) -> np.ndarray:
    """float64 values rounded once, to nearest even, to float dtype ``dt``. numpy rounds
    f64 -> f32/f16 correctly; ml_dtypes before 0.7 went through float32 with two roundings
    (1 + 2^-8 + 2^-40 -> bf16 gave 1.0, not 1.0078125), so the narrow types go through float32
    rounded to odd, which makes the second rounding the only one whatever the ml_dtypes
    version. Overflow converts as ml_dtypes does (inf, or NaN / saturation for formats without
    inf)."""
    dt = np.dtype(dt)
    v = np.asarray(v, F64)
    with np.errstate(all="ignore"):
        if dt in (F64, F32, np.dtype(np.float16)):
            return v.astype(dt)
        return _to_odd_f32(v).astype(dt)


def _f64(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.asarray(x).astype(F64)


def _float(fn: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
    """Compute ``fn`` on the float64 values and round once to the first argument's type."""
    @functools.wraps(fn)
    def wrapped(*xs: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            return round_to(fn(*[_f64(x) for x in xs]), xs[0].dtype)
    return wrapped


# --- element-wise ops --------------------------------------------------------------------------
# Integer semantics (docs/semantics/elementwise.md): arithmetic wraps; x / 0 = -1 (all bits set);
# INT_MIN / -1 = INT_MIN; x rem 0 = x; shift amounts are read as unsigned, and outside [0, N)
# give 0 (shift_left, shift_right_logical) or the sign fill (shift_right_arithmetic).


def add(x, y):
    if x.dtype == np.bool_:
        return x | y                                   # i1: logical or (numpy's + on bools too)
    return _int_map(lambda a, b: a + b, x, y) if is_int(x.dtype) else _float(np.add)(x, y)


def subtract(x, y):
    return _int_map(lambda a, b: a - b, x, y) if is_int(x.dtype) else _float(np.subtract)(x, y)


def multiply(x, y):
    if x.dtype == np.bool_:
        return x & y
    return _int_map(lambda a, b: a * b, x, y) if is_int(x.dtype) else _float(np.multiply)(x, y)


def divide(x, y):
    # integers: truncates toward zero (numpy's // floors); x / 0 = -1; INT_MIN / -1 wraps
    if is_int(x.dtype):
        return _int_map(lambda a, b: -1 if b == 0 else _trunc_div(a, b), x, y)
    return _float(np.divide)(x, y)


def remainder(x, y):
    # takes the dividend's sign (numpy's remainder takes the divisor's: that is fmod); x rem 0 = x
    if is_int(x.dtype):
        return _int_map(lambda a, b: a if b == 0 else a - b * _trunc_div(a, b), x, y)
    return _float(np.fmod)(x, y)                       # float: x rem 0 and inf rem y are NaN


def maximum(x, y):
    if not np.dtype(x.dtype).kind == "f" and not _is_ml_float(x.dtype):
        return np.maximum(x, y) if x.dtype == np.bool_ else _int_map(max, x, y)

    def fn(a, b):  # NaN propagates (np.maximum does); but maximum(-0, +0) = +0 (numpy: either)
        return np.where(a == b, np.where(np.signbit(a), b, a), np.maximum(a, b))
    return _float(fn)(x, y)


def minimum(x, y):
    if not np.dtype(x.dtype).kind == "f" and not _is_ml_float(x.dtype):
        return np.minimum(x, y) if x.dtype == np.bool_ else _int_map(min, x, y)

    def fn(a, b):  # minimum(-0, +0) = -0
        return np.where(a == b, np.where(np.signbit(a), a, b), np.minimum(a, b))
    return _float(fn)(x, y)


def _is_ml_float(dt: Any) -> bool:
    return np.dtype(dt).kind == "V" and not is_int(dt)


def and_(x, y):
    return x & y if x.dtype == np.bool_ else _int_map(lambda a, b: a & b, x, y)


def or_(x, y):
    return x | y if x.dtype == np.bool_ else _int_map(lambda a, b: a | b, x, y)


def xor(x, y):
    return x ^ y if x.dtype == np.bool_ else _int_map(lambda a, b: a ^ b, x, y)


def not_(x):
    return ~x if x.dtype == np.bool_ else _int_map(lambda a: ~a, x)


def shift_left(x, y):
    n = int_info(x.dtype)[0]
    return _int_map(lambda a, b: a << _unsigned(b, n) if _unsigned(b, n) < n else 0, x, y)


def shift_right_logical(x, y):
    n = int_info(x.dtype)[0]
    return _int_map(lambda a, b: _unsigned(a, n) >> _unsigned(b, n) if _unsigned(b, n) < n
                    else 0, x, y)


def shift_right_arithmetic(x, y):
    # the sign is the top bit, for unsigned types too (APInt ashr); amounts >= N fill with it
    n = int_info(x.dtype)[0]
    return _int_map(lambda a, b: _signed(a, n) >> min(_unsigned(b, n), n - 1), x, y)


def power(x, y):
    if not is_int(x.dtype):
        return _float(np.power)(x, y)
    n, signed = int_info(x.dtype)

    def ipow(a: int, b: int) -> int:
        # negative exponents (numpy raises): 0, but 1 for base 1 and +-1 for base -1
        if b < 0:
            return 1 if a == 1 else (-1 if b % 2 else 1) if a == -1 else 0
        return pow(a, b, 1 << n)                       # exact, wrapped (any exponent size)
    return _int_map(ipow, x, y)


def popcnt(x):
    n = int_info(x.dtype)[0]
    return _int_map(lambda a: bin(_unsigned(a, n)).count("1"), x)


def count_leading_zeros(x):
    n = int_info(x.dtype)[0]
    return _int_map(lambda a: n - _unsigned(a, n).bit_length(), x)


def abs_(x):
    if is_int(x.dtype):
        return _int_map(abs, x)                        # abs(INT_MIN) wraps to INT_MIN
    return _float(np.abs)(x)


def negate(x):
    return _int_map(lambda a: -a, x) if is_int(x.dtype) else _float(np.negative)(x)


def sign(x):
    if is_int(x.dtype):
        return _int_map(lambda a: (a > 0) - (a < 0), x)
    # -1 / +1; +-0 and NaN stay what they are (numpy agrees for reals)
    return _float(lambda v: np.where(np.isnan(v) | (v == 0), v, np.copysign(1.0, v)))(x)


floor = _float(np.floor)
ceil = _float(np.ceil)
round_nearest_even = _float(np.rint)                   # np.round / np.rint: half to even


@_float
def round_nearest_afz(v):
    # half away from zero; np.round is half-to-even, and floor(|x| + 0.5) rounds
    # 0.49999999999999994 up: truncate, then step away from zero when the dropped part >= 1/2
    t = np.trunc(v)
    return np.where(np.abs(v - t) >= 0.5, t + np.copysign(1.0, v), t)


sqrt = _float(np.sqrt)


def is_finite(x):
    return np.isfinite(_f64(x))


# transcendental functions: float64 then one rounding (shlo's documented method); shlo's
# f32 sine/cosine/tanh use numpy's float32 functions (within 1 ulp)
exponential = _float(np.exp)
exponential_minus_one = _float(np.expm1)
log = _float(np.log)
log_plus_one = _float(np.log1p)
logistic = _float(lambda v: 1.0 / (1.0 + np.exp(-v)))
sine = _float(np.sin)
cosine = _float(np.cos)
tan = _float(np.tan)
tanh = _float(np.tanh)
rsqrt = _float(lambda v: 1.0 / np.sqrt(v))
cbrt = _float(np.cbrt)
atan2 = _float(np.arctan2)


def _total_order_key(x: np.ndarray) -> np.ndarray:
    """IEEE totalOrder as integers: -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN. In the
    FNUZ formats the NaN is the pattern of -0 and orders first (as XLA, docs/semantics)."""
    nbits = float_info(x.dtype).bits
    b = bits_of(x).astype(np.int64)
    mag = b & ((1 << (nbits - 1)) - 1)
    key = np.where(b >> (nbits - 1) & 1, -mag - 1, mag)
    if "fnuz" in np.dtype(x.dtype).name:
        key = np.where(b == 1 << (nbits - 1), np.iinfo(np.int64).min, key)
    return key


_COMPARE = {"EQ": np.equal, "NE": np.not_equal, "GE": np.greater_equal, "GT": np.greater,
            "LE": np.less_equal, "LT": np.less}


def compare(x, y, direction: str, compare_type: str | None = None):
    fn = _COMPARE[direction]
    if compare_type == "TOTALORDER":
        return fn(_total_order_key(x), _total_order_key(y))
    if x.dtype == np.bool_:
        return fn(x, y)                                # i1: false < true
    if is_int(x.dtype):
        return fn(_py(x), _py(y)).astype(np.bool_)     # SIGNED / UNSIGNED: as the type reads
    with np.errstate(invalid="ignore"):
        return fn(_f64(x), _f64(y))                    # FLOAT: IEEE quiet (NaN: only NE holds)


def select(pred, on_true, on_false):
    return np.where(pred, on_true, on_false)


def clamp(lo, x, hi):
    return minimum(maximum(x, lo), hi)                 # NaN propagates; lo > hi gives hi


def convert(x: np.ndarray, dt: Any) -> np.ndarray:
    """The spec's convert with shlo's choices for what it leaves open."""
    dt = np.dtype(dt)
    if dt == np.bool_:
        return _f64(x) != 0 if not is_int(x.dtype) else _py(x) != 0   # x != 0 (NaN: true)
    if is_int(dt):
        if x.dtype == np.bool_ or is_int(x.dtype):
            return _wrap(_py(x.astype(np.int64) if x.dtype == np.bool_ else x), dt)  # wraps
        nbits, signed = int_info(dt)
        lo, hi = (-(1 << (nbits - 1)), (1 << (nbits - 1)) - 1) if signed else (0, (1 << nbits) - 1)

        def saturate(v: Any) -> int:
            # truncates toward zero and saturates; NaN -> 0 (numpy's astype is undefined there)
            v = float(v)
            return 0 if v != v else hi if v >= hi else lo if v <= lo else int(v)
        with np.errstate(invalid="ignore"):  # (comparing NaN raises the FP invalid flag)
            return _wrap(np.frompyfunc(saturate, 1, 1)(_f64(x)), dt)
    if x.dtype == np.bool_ or is_int(x.dtype):
        return round_to(_int_to_f64_odd(_py(x.astype(np.int64)) if x.dtype == np.bool_
                                        else _py(x)), dt)
    return round_to(_f64(x), dt)


def _int_to_f64_odd(v: np.ndarray) -> np.ndarray:
    """Python ints -> float64 rounded to odd, so that rounding again to a narrower type is the
    single correct rounding (an int64 can sit just off a midpoint that float64 hides)."""
    def one(a: int) -> float:
        f = float(a)                                   # Python rounds int -> float correctly
        if int(f) == a:
            return f
        if abs(int(f)) > abs(a):
            f = float(np.nextafter(f, 0.0))
        return float((np.float64(f).view(np.uint64) | np.uint64(1)).view(np.float64))
    return np.asarray(np.frompyfunc(one, 1, 1)(v), dtype=object).astype(F64)


# --- structured ops ------------------------------------------------------------------------------


def transpose(x, permutation):
    return np.transpose(x, permutation)


def reverse(x, dimensions):
    return np.flip(x, axis=tuple(dimensions)) if dimensions else x


def slice_(x, start_indices, limit_indices, strides):
    return x[tuple(slice(s, e, k) for s, e, k in zip(start_indices, limit_indices, strides))]


def concatenate(xs, dimension):
    return np.concatenate(xs, axis=dimension)


def pad(x, padding_value, low, high, interior):
    # np.pad has neither interior padding nor negative (cropping) edges: insert `interior`
    # padding values between elements, then add (or, when negative, remove) the edges
    out = x
    for d, (lo, hi, i) in enumerate(zip(low, high, interior)):
        n = out.shape[d]
        size = n + max(n - 1, 0) * i
        shape = list(out.shape)
        shape[d] = size
        grown = np.full(shape, padding_value, x.dtype)
        idx = [slice(None)] * out.ndim
        idx[d] = slice(0, size, i + 1)
        grown[tuple(idx)] = out
        shape[d] = size + max(lo, 0) + max(hi, 0)
        edged = np.full(shape, padding_value, x.dtype)
        idx[d] = slice(max(lo, 0), max(lo, 0) + size)
        edged[tuple(idx)] = grown
        idx[d] = slice(max(-lo, 0), shape[d] - max(-hi, 0))
        out = edged[tuple(idx)]
    return out


def iota(shape, dimension, dt):
    return np.broadcast_to(np.arange(shape[dimension]).reshape(
        [-1 if d == dimension else 1 for d in range(len(shape))]), shape).astype(dt)


def broadcast_in_dim(x, shape, broadcast_dimensions):
    # numpy broadcasts trailing dimensions; the op maps operand dimension i to result
    # dimension broadcast_dimensions[i]
    view = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        view[d] = x.shape[i]
    return np.broadcast_to(x.reshape(view), shape)


def dot_general(lhs, rhs, lhs_batching_dimensions, rhs_batching_dimensions,
                lhs_contracting_dimensions, rhs_contracting_dimensions):
    # result dimensions: batch, then lhs free, then rhs free (einsum with explicit output);
    # integers accumulate in the type, wrapping (numpy's einsum keeps the dtype)
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    ls = [next(letters) for _ in range(lhs.ndim)]
    rs = [next(letters) for _ in range(rhs.ndim)]
    for a, b in zip(lhs_batching_dimensions, rhs_batching_dimensions):
        rs[b] = ls[a]
    for a, b in zip(lhs_contracting_dimensions, rhs_contracting_dimensions):
        rs[b] = ls[a]
    out = [ls[d] for d in lhs_batching_dimensions]
    out += [c for d, c in enumerate(ls) if d not in lhs_batching_dimensions and
            d not in lhs_contracting_dimensions]
    out += [c for d, c in enumerate(rs) if d not in rhs_batching_dimensions and
            d not in rhs_contracting_dimensions]
    spec = f"{''.join(ls)},{''.join(rs)}->{''.join(out)}"
    with np.errstate(over="ignore"):
        return np.einsum(spec, lhs, rhs).astype(lhs.dtype)


def reduce(x, init, dimensions: Sequence[int], body: Callable[[np.ndarray, np.ndarray],
                                                              np.ndarray]):
    """``body`` folded over ``dimensions`` from ``init``, element by element in row-major
    order of the reduced dimensions (vectorized over the kept ones)."""
    kept = [d for d in range(x.ndim) if d not in dimensions]
    moved = np.transpose(x, kept + list(dimensions))
    n = int(np.prod([x.shape[d] for d in dimensions], dtype=np.int64))
    rows = moved.reshape(tuple(x.shape[d] for d in kept) + (n,))
    acc = np.broadcast_to(np.asarray(init, x.dtype), rows.shape[:-1]).copy()
    for k in range(rows.shape[-1]):
        acc = body(acc, rows[..., k].copy())
    return np.asarray(acc, x.dtype)


# --- comparing -----------------------------------------------------------------------------------


def ulp_diff(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Units in the last place between two float arrays of one dtype (0 for two NaNs, a large
    number for NaN against a number); +0 and -0 are 0 apart."""
    nbits = float_info(a.dtype).bits

    def key(x: np.ndarray) -> np.ndarray:
        u = bits_of(x).astype(np.int64)
        mag = u & ((1 << (nbits - 1)) - 1)
        return np.where(u >> (nbits - 1) & 1, -mag, mag)
    na, nb = np.isnan(_f64(a)), np.isnan(_f64(b))
    d = np.abs(key(a) - key(b))
    return np.where(na & nb, 0, np.where(na | nb, np.iinfo(np.int64).max, d))
