"""Element-wise functions of narrow floats as lookup tables of their careful kernels.

A float format of at most 16 bits has at most 65536 values. A unary function of such a format
is therefore a table: evaluate the careful kernel (compute in float64, round once; or whatever
the op's kernel does) once on every bit pattern, then evaluate the op by indexing the table with
the operands' bit patterns. The result is bit for bit the careful kernel's, by construction (NaN
payloads included), and costs one gather: ~1.3 ms per 10^6 elements where the f64 path of f16
`tanh` took ~80 ms and numpy's own f16 loops are scalar. Binary functions of the one-byte
formats (f8, f6, f4) are 256 x 256 tables the same way. Tables are built on first use of each
(op, dtype) and kept for the process (128 KiB for a 16-bit unary table, 64 KiB for a binary
one-byte table). docs/semantics/elementwise.md ("Narrow floats").

Many binary tables are also computed in AVX2 registers, each form checked against its table on
all 65,536 pairs before it is used (:mod:`._pair_forms`).

Conversions from these formats are tables too (of any destination type); float32 to a
one-byte format is a table on the float32's top bits (:func:`tabled_narrowing`); negate and
abs are one bitwise operation where that equals the table (:func:`by_sign_bit`).
"""

from __future__ import annotations

import threading
from typing import Any, Callable

import numpy as np

from ...dtypes import F16, is_ml_float, uint_of_size
from .. import _half
from .._half import gather, gather_pairs
from ._pair_forms import narrowing_form, register_form, widening_form

__all__ = ["tabled_unary", "tabled_binary", "table_eligible", "tabled_narrowing", "by_sign_bit",
           "binary_table", "compare_form"]

Fn = Callable[..., Any]

_TABLES: dict[tuple[str, np.dtype], np.ndarray] = {}
_LOCK = threading.Lock()


def table_eligible(dt: np.dtype, max_bytes: int = 2) -> bool:
    """True for f16 and ml_dtypes' float formats of at most ``max_bytes`` bytes."""
    dt = np.dtype(dt)
    return dt.itemsize <= max_bytes and (dt == F16 or is_ml_float(dt))


def _all_values(dt: np.dtype) -> np.ndarray:
    u = uint_of_size(dt.itemsize)
    return np.arange(1 << (8 * dt.itemsize), dtype=np.uint32).astype(u).view(dt)


def _table(key: str, dt: np.dtype, build: Callable[[], Any], out: Any = None) -> np.ndarray:
    """The table ``build()`` of (``key``, ``dt``) as ``out`` (default ``dt``), made once."""
    t = _TABLES.get((key, dt))
    if t is None:
        with np.errstate(all="ignore"):
            t = np.ascontiguousarray(np.asarray(build()).astype(dt if out is None else out,
                                                                  copy=False))
        t.setflags(write=False)
        with _LOCK:
            t = _TABLES.setdefault((key, dt), t)
    return t


def tabled_unary(key: str, careful: Fn, dt: Any, out: Any = None) -> Fn | None:
    """``careful`` (a unary function on arrays of ``dt`` returning ``out``, default ``dt``) as
    a table lookup when ``dt`` has at most 16 bits, else None. ``key`` names the function (the
    op's name, a conversion's destination) for the process-wide cache of tables."""
    dt = np.dtype(dt)
    if not table_eligible(dt):
        return None
    table = _table(key, dt, lambda: careful(_all_values(dt)), out)
    u = uint_of_size(dt.itemsize)

    def run(x: Any) -> Any:
        bits = np.asarray(x).view(u)
        via = widening_form(key, dt, table) if bits.size >= _half.MIN_SIZE else None
        fast = gather(table, bits, via)  # compiled: no intp copy of the indices
        return np.take(table, bits) if fast is None else fast

    return run


def tabled_binary(key: str, careful: Fn, dt: Any, out: Any = None) -> Fn | None:
    """``careful`` (a binary function on arrays of ``dt`` returning ``out``, default ``dt``, a
    one-byte type) as a 256 x 256 table lookup when ``dt`` is a one-byte format, else None."""
    table = binary_table(key, careful, dt, out)
    if table is None:
        return None

    def run(x: Any, y: Any) -> Any:
        via = register_form(key, dt, table) if np.size(x) >= _half.MIN_SIZE else None
        fast = gather_pairs(table, x, y, via)  # compiled: one pass, no index arrays
        if fast is not None:
            return fast
        hi = np.left_shift(np.asarray(x).view(np.uint8), 8, dtype=np.uint16)
        return np.take(table, np.bitwise_or(hi, np.asarray(y).view(np.uint8)))

    return run


def binary_table(key: str, careful: Fn, dt: Any, out: Any = None,
                 swapped: bool = False) -> np.ndarray | None:
    """The 256 x 256 table of :func:`tabled_binary` (entry ``x * 256 + y``; ``swapped``: of
    ``careful`` with its operands swapped, kept apart), or None."""
    dt = np.dtype(dt)
    if not table_eligible(dt, max_bytes=1):
        return None
    v = _all_values(dt)
    return _table(key + " swapped" if swapped else key, dt,
                  lambda: careful(np.repeat(v, 256), np.tile(v, 256)), out)


def tabled_narrowing(dt: Any) -> Fn | None:
    """float32 -> the one-byte float format ``dt`` (ml_dtypes' cast, which rounds once) as a
    lookup table, or None (another format, no compiled loops, the check failed). Rounding to
    M mantissa bits depends only on the sign, the exponent, the top M + 1 significand bits
    (the kept ones and the first dropped one, for every result: subnormal results keep fewer)
    and whether any lower bit is set; the table has an entry for each of those 2^(11 + M)
    combinations (16 KiB for M = 3), made by the cast from a representative float32. It is
    checked at creation against the cast on every rounding boundary of the format and its
    neighbours, on specials and on random bit patterns (benchmarks/narrowing_exhaustive.py
    checks all 2^32)."""
    dt = np.dtype(dt)
    mod = _half.loops()
    if dt.itemsize != 1 or not is_ml_float(dt) or mod is None:
        return None
    if dt not in _NARROWING:
        _NARROWING.setdefault(dt, _narrowing_table(dt, mod))
    entry = _NARROWING[dt]
    if entry is None:
        return None
    table, shift = entry

    def run(x: Any) -> Any:
        via = narrowing_form(dt, table, shift) if np.size(x) >= _half.MIN_SIZE else None
        fast = _half.narrow_by_table(table, shift, x, dt, via)
        if fast is None:
            with np.errstate(over="ignore", invalid="ignore"):
                return np.asarray(x, np.float32).astype(dt)
        return fast

    return run


_NARROWING: dict[np.dtype, tuple[np.ndarray, int] | None] = {}  # dtype -> (table, shift)


def _narrowing_table(dt: np.dtype, mod: Any) -> tuple[np.ndarray, int] | None:
    """The narrowing table of ``dt`` and its shift, if :func:`narrowing_agrees`."""
    import ml_dtypes

    m = int(ml_dtypes.finfo(dt).nmant)
    shift = 22 - m  # bits below the top m + 1 significand bits
    index = np.arange(1 << (10 + m), dtype=np.uint32)
    rep = np.concatenate([index << shift, (index << shift) | 1]).view(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        cast = rep.astype(dt).view(np.uint8)
    table = np.empty(1 << (11 + m), np.uint8)
    table[0::2], table[1::2] = cast[:index.size], cast[index.size:]
    return (table, shift) if narrowing_agrees(table, shift, dt, mod) else None


def narrowing_agrees(table: np.ndarray, shift: int, dt: np.dtype, mod: Any) -> bool:
    """Whether a narrowing table rounds as ml_dtypes' cast does on every value of the format,
    the midpoints between neighbours, each +-1 float32 ulp, both signs; infinities, NaNs with
    payloads, float32 subnormals; 2^16 random bit patterns."""
    v = np.arange(256, dtype=np.uint8).view(dt).astype(np.float32)
    v = np.unique(np.abs(v[np.isfinite(v)]))
    with np.errstate(over="ignore"):
        mid = ((v[:-1].astype(np.float64) + v[1:]) / 2).astype(np.float32)
        top = np.float32(np.float64(v[-1]) * 2)
    near = np.concatenate([v, mid, [top, np.float32(np.inf), np.float32(np.nan)]])
    bits = near.view(np.uint32)
    bits = np.concatenate([bits, bits + 1, bits - 1, np.array([0x7F800001, 0x7FBFFFFF, 0x7FC00001,
                                                              0x00000001, 0x007FFFFF], np.uint32)])
    bits = np.concatenate([bits, bits | 0x80000000,
                           np.random.default_rng(0).integers(0, 1 << 32, 1 << 16, np.uint32)])
    x = bits.view(np.float32)
    got = mod.narrow_by_table(table, shift, x.view(np.uint32), np.empty(x.size, np.uint8))
    with np.errstate(over="ignore", invalid="ignore"):
        want = x.astype(dt).view(np.uint8)
    return bool(np.array_equal(got, want))


def by_sign_bit(key: str, careful: Fn, dt: Any, flip: bool) -> Fn | None:
    """``careful`` (negate, ``flip``, or abs of a float of at most 16 bits) as bitwise
    operations on the sign bit, the first of these that gives ``careful``'s bits on every bit
    pattern: the sign flipped (abs: every bit from the sign bit up cleared, as ml_dtypes
    clears the spare high bits of f6/f4 bytes) everywhere (f16, bf16, f6, f4, the f8 formats
    with a -0), or everywhere but where the magnitude is zero (FNUZ formats: 0 has no sign,
    their 0x80 is the NaN); else its table (:func:`tabled_unary`); None for other types."""
    dt = np.dtype(dt)
    table = tabled_unary(key, careful, dt)
    if table is None:
        return None
    u = uint_of_size(dt.itemsize)
    sign = u.type(1 << (_ml_bits(dt) - 1))
    op = np.bitwise_xor if flip else np.bitwise_and
    bit = sign if flip else u.type(sign - 1)  # (abs: ml_dtypes' f6/f4 drop spare high bits)

    def everywhere(b: np.ndarray) -> np.ndarray:
        return op(b, bit)

    def but_zero(b: np.ndarray) -> np.ndarray:  # the sign bit of nonzero magnitudes only
        fast = _half.sign_but_zero(b, int(sign), flip)
        if fast is not None:
            return fast
        nonzero = np.not_equal(np.bitwise_and(b, ~sign), 0)
        return np.bitwise_xor(b, np.multiply(nonzero, sign, dtype=u)) if flip else \
            np.bitwise_and(b, np.bitwise_or(~sign, np.multiply(~nonzero, sign, dtype=u)))

    bits = _all_values(dt).view(u)
    want = np.asarray(table(_all_values(dt))).view(u)
    for candidate in (everywhere, but_zero):
        if np.array_equal(candidate(bits), want):
            return lambda x: candidate(np.asarray(x).view(u)).view(dt)
    return table


_COMPARE: dict[np.dtype, np.ndarray | None] = {}


def compare_form(dt: Any) -> np.ndarray | None:
    """The spec of ``_half_jit.compare_keys`` for a float format of at most 16 bits: (its
    sign bits, every bit from the sign bit up, or 0; the largest magnitude pattern that is not
    a NaN; the NaN pattern of a format without -0 and 1, else 0 and 0), if comparing by those
    keys equals comparing the values widened to float32 on every pair of a one-byte format
    (f6/f4 bytes with spare high bits set included), on every 16-bit pattern against
    specials, its own negation and random patterns; else None (and where the compiled loops
    do not run)."""
    dt = np.dtype(dt)
    if dt in _COMPARE:
        return _COMPARE[dt]
    mod = _half.loops()
    if not table_eligible(dt) or mod is None:
        return None
    bits = int(_ml_bits(dt))
    u = uint_of_size(dt.itemsize)
    codes = np.arange(1 << bits, dtype=np.uint32).astype(u)
    with np.errstate(all="ignore"):
        values = codes.view(dt).astype(np.float32)
    bit = 1 << (bits - 1)
    signed = not values[bit] > 0  # (f8E8M0FNU: 0x80 is 2.0; the others' is -0 or a NaN)
    sign = ((1 << 8 * dt.itemsize) - bit) if signed else 0
    mags = np.arange(bit if signed else 1 << bits)
    top = int(mags[~np.isnan(values[mags])].max())
    coded = signed and bool(np.isnan(values[bit]))
    spec = np.array([sign, top, bit if coded else 0, int(coded)], np.int64)
    _COMPARE[dt] = spec if _compare_agrees(spec, dt, mod) else None
    return _COMPARE[dt]


def _ml_bits(dt: np.dtype) -> int:
    if not is_ml_float(dt):
        return 8 * dt.itemsize
    import ml_dtypes

    return int(ml_dtypes.finfo(dt).bits)


def _compare_agrees(spec: np.ndarray, dt: np.dtype, mod: Any) -> bool:
    u = uint_of_size(dt.itemsize)
    if dt.itemsize == 1:
        v = np.arange(256, dtype=np.uint8)
        x, y = np.repeat(v, 256), np.tile(v, 256)
    else:
        every = np.arange(1 << 16, dtype=np.uint32).astype(u)
        specials = np.array([0, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0x7C01, 0xFE01, 0x7F80, 0xFF80,
                             0x7FC0, 0x7F81, 0x3C00, 0xBC00, 0x3F80, 1, 0x8001], u)
        rng = np.random.default_rng(0)
        x = np.tile(every, 3)
        y = np.concatenate([np.resize(specials, every.size), every ^ u.type(0x8000),
                            rng.integers(0, 1 << 16, every.size).astype(u)])
    with np.errstate(invalid="ignore"):
        a, b = x.view(dt).astype(np.float32), y.view(dt).astype(np.float32)
    for direction, flags in mod.DIRECTIONS.items():
        ufunc = {"LT": np.less, "LE": np.less_equal, "GT": np.greater, "GE": np.greater_equal,
                 "EQ": np.equal, "NE": np.not_equal}[direction]
        got = np.empty(x.size, np.bool_)
        mod.compare_keys(x, y, got, np.concatenate([spec, flags]))
        with np.errstate(invalid="ignore"):
            if not np.array_equal(got, ufunc(a, b)):
                return False
    return True
