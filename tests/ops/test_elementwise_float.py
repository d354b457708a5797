"""Rounding of the element-wise ops, checked against exact rational arithmetic.

The reference rounds a :class:`fractions.Fraction` to a format given only by its precision,
minimum normal exponent and largest finite value (round to nearest, ties to even), so it does
not share code or rounding paths with shlo, numpy or ml_dtypes. Checked here:

* `convert` between every pair of element types (i1, all integers, all floats, complex);
* single rounding from f64/i64 to narrow floats (ml_dtypes alone rounds twice);
* add/subtract/multiply/divide/sqrt on narrow floats are correctly rounded;
* transcendental functions are computed in f64 and rounded once.
"""

from __future__ import annotations

import itertools
import math
import warnings
from fractions import Fraction
from functools import lru_cache
from typing import Any, Sequence

import ml_dtypes
import numpy as np
import pytest

from shlo.types import element_type

from harness import prepare_op, run1

NARROW = ["f8E4M3FN", "f8E5M2", "f8E4M3FNUZ", "f8E5M2FNUZ", "f8E4M3B11FNUZ", "f8E4M3",
          "f8E3M4", "f6E2M3FN", "f6E3M2FN", "f4E2M1FN", "bf16", "f16"]
FLOATS = NARROW + ["f32", "f64"]
INTS = ["i2", "i4", "i8", "i16", "i32", "i64", "ui2", "ui4", "ui8", "ui16", "ui32", "ui64"]
ALL_TYPES = ["i1"] + INTS + FLOATS + ["complex<f32>", "complex<f64>"]


# --- the reference: exact rounding of rationals -------------------------------------------------


class Format:
    """A binary floating-point format: precision p, minimum normal exponent, largest value."""

    def __init__(self, name: str) -> None:
        dt = element_type(name).dtype
        fi = np.finfo(dt) if dt in (np.float16, np.float32, np.float64) else ml_dtypes.finfo(dt)
        self.dtype = dt
        self.p = int(fi.nmant) + 1
        self.emin = int(fi.minexp)
        self.max = Fraction(float(fi.max))
        with np.errstate(all="ignore"):
            self.has_inf = bool(np.isinf(np.float32(np.inf).astype(dt)))
            self.has_nan = bool(np.isnan(np.float32(np.nan).astype(dt)))
            self.signed_zero = bool(np.signbit(np.float32(-0.0).astype(dt)))


@lru_cache(maxsize=None)
def fmt(name: str) -> Format:
    return Format(name)


def round_exact(q: Fraction, f: Format) -> Fraction | None:
    """``q`` rounded to nearest even in format ``f``; None when it overflows the format."""
    if q == 0:
        return Fraction(0)
    a = abs(q)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    e = max(e, f.emin)
    quantum = Fraction(2) ** (e - f.p + 1)
    r = round(a / quantum) * quantum  # Fraction.__round__: half to even
    if r > f.max:
        return None
    return r if q > 0 else -r


def to_fraction(v: Any) -> Fraction:
    return Fraction(int(v)) if isinstance(v, (int, np.integer, bool, np.bool_)) else \
        Fraction(float(v))


def check_float_result(got: np.ndarray, exact: Sequence[Fraction | float], name: str) -> None:
    """Compare results of format ``name`` with exact values (None = overflow, nan = NaN)."""
    f = fmt(name)
    g = np.asarray(got).astype(np.float64)
    for i, q in enumerate(exact):
        if isinstance(q, float):  # nan, inf and signed zeros pass through
            if math.isnan(q):
                assert np.isnan(g[i]) or not f.has_nan, (i, g[i])
            elif q == 0:
                assert g[i] == 0, (i, g[i])
                if f.signed_zero:
                    assert bool(np.signbit(g[i])) == bool(np.signbit(q)), (i, g[i], q)
            else:
                assert g[i] == q or not f.has_inf, (i, g[i], q)
            continue
        r = round_exact(q, f)
        if r is None:
            if f.has_inf:
                assert np.isinf(g[i]) and (g[i] > 0) == (q > 0), (i, g[i], q)
            continue  # NaN (fn/fnuz types) or saturation (f4/f6): ml_dtypes' choice
        assert Fraction(float(g[i])) == r, (name, i, float(q), g[i], float(r))
        if r == 0 and q != 0 and f.signed_zero:  # underflow keeps the sign
            assert bool(np.signbit(g[i])) == (q < 0), (i, g[i], float(q))


# --- convert -------------------------------------------------------------------------------------


def _int_values(name: str) -> list[int]:
    et = element_type(name)
    lo, hi = et.min, et.max
    vals = {lo, lo + 1, -1, 0, 1, 2, 3, 7, hi - 1, hi, -100, 100, 255, 257, 4097, -4097,
            65519, 65520, 65535, 2**24 + 1, 2**24 + 3, -(2**24 + 1), 2**31 - 1, 2**53 + 1,
            2**62 + 2**54 + 1, 2**63 - 1, 2**63 + 2**39 + 1, 2**64 - 1, 3 * 2**60 + 2**51 + 7}
    return sorted(v for v in vals if lo <= v <= hi)


def _float_values(name: str) -> np.ndarray:
    dt = element_type(name).dtype
    base = [0.0, -0.0, 1.0, -1.0, 0.5, 1.5, 2.5, -2.5, 3.75, 100.25, -7.9, 255.5, 65519.0,
            65520.0, 1e-3, 3e-5, 6e-8, 1e-40, 1e10, -3e9, 2.0**31, 2.0**63, 2.0**64, -2.0**63,
            1 + 2**-8 + 2**-40, 1 + 2**-11 + 2**-45, 2**-133 * 1.5, 448.0, 464.0, 57344.0,
            61440.0, 1e300, -1e-300, 5e-324, np.inf, -np.inf, np.nan]
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    more = rng.standard_normal(40) * 10.0 ** rng.integers(-6, 6, 40)
    with np.errstate(all="ignore"):
        return np.concatenate([np.array(base), more]).astype(dt)


def source_values(name: str) -> np.ndarray:
    et = element_type(name)
    if et.is_bool:
        return np.array([True, False])
    if et.is_integer:
        return np.array(_int_values(name), dtype=object).astype(np.int64 if et.is_signed
                                                                 else np.uint64).astype(et.dtype)
    if et.is_float:
        return _float_values(name)
    f = _float_values("f64" if et.dtype == np.complex128 else "f32")
    z = np.empty(f.shape, et.dtype)
    z.real, z.imag = f, f[::-1]
    return z


def _int_reference(v: Any, name: str) -> int:
    """Expected integer for an exact source value (wrap for ints; trunc + saturate for floats)."""
    et = element_type(name)
    if isinstance(v, Fraction):
        t = math.trunc(v)
        return min(max(t, et.min), et.max)
    v &= (1 << et.width) - 1
    if et.is_signed and v >> (et.width - 1):
        v -= 1 << et.width
    return v


def _exact_sources(x: np.ndarray, name: str) -> list[Any]:
    """Source values as Python ints (integers, i1) or Fractions/float specials (floats),
    real parts for complex."""
    et = element_type(name)
    if et.is_bool or et.is_integer:
        wide = x.astype(np.int64) if (et.is_bool or et.is_signed or et.width < 64) \
            else x.astype(np.uint64)
        return [int(v) for v in wide]
    vals = np.real(x).astype(np.float64) if et.is_complex else x.astype(np.float64)
    return [Fraction(float(v)) if np.isfinite(v) and v != 0 else float(v) for v in vals]


@pytest.mark.parametrize("src", ALL_TYPES)
@pytest.mark.parametrize("dst", ALL_TYPES)
def test_convert_matrix(src: str, dst: str) -> None:
    x = source_values(src)
    got = run1("stablehlo.convert", [x], [src], dst, quiet=True)
    sv = _exact_sources(x, src)
    det = element_type(dst)
    if det.is_bool:
        expect = [bool(v != 0) for v in sv]  # NaN != 0
        assert got.tolist() == expect
        return
    if det.is_integer:
        ints = got.astype(np.int64 if det.is_signed else np.uint64)
        for i in range(len(sv)):
            v = sv[i]
            if isinstance(v, float):  # NaN -> 0, inf saturates, zeros
                expect = 0 if (math.isnan(v) or v == 0) else (det.max if v > 0 else det.min)
            else:
                expect = _int_reference(v, dst)
            assert int(ints[i]) == expect, (src, dst, i, v, ints[i])
        return
    comp = det.element.name if det.is_complex else dst  # type: ignore[attr-defined]
    check_float_result(np.real(got) if det.is_complex else got,
                       [Fraction(v) if isinstance(v, int) else v for v in sv], comp)
    if det.is_complex:
        if element_type(src).is_complex:
            im = _exact_sources(np.imag(x), "f64")
            check_float_result(np.imag(got), im, comp)
        else:
            assert not np.imag(got).any()


def test_single_rounding_from_f64_at_midpoints() -> None:
    """f64 values just above/below the midpoints of every narrow format round correctly
    (going through float32 first would round some of them twice)."""
    for name in NARROW:
        f = fmt(name)
        with np.errstate(all="ignore"):
            vals = np.unique(np.arange(256 if f.dtype.itemsize == 1 else 65536,
                                       dtype=np.uint8 if f.dtype.itemsize == 1 else np.uint16)
                             .view(f.dtype).astype(np.float64))
        vals = vals[np.isfinite(vals) & (vals >= 0)]
        if len(vals) > 400:
            vals = vals[np.linspace(0, len(vals) - 1, 400).astype(int)]
            vals = np.unique(vals)
        mids = (vals[:-1] + vals[1:]) / 2
        eps = np.abs(mids) * 2.0**-40
        x = np.concatenate([mids, mids + eps, mids - eps, -(mids + eps)])
        got = run1("stablehlo.convert", [x], ["f64"], name, quiet=True)
        check_float_result(got, [Fraction(float(v)) for v in x], name)


def test_single_rounding_from_i64() -> None:
    x = np.array([2**24 + 2**16 + 1, 2**62 + 2**54 + 1, -(2**40 + 2**32 + 1), 2**63 - 1,
                  2**31 + 2**23 + 1, 257, 4097, 65520, 2**53 + 1], np.int64)
    for name in ["bf16", "f16", "f32", "f8E5M2", "f8E4M3FN"]:
        got = run1("stablehlo.convert", [x], ["i64"], name, quiet=True)
        check_float_result(got, [Fraction(int(v)) for v in x], name)
    u = np.array([2**64 - 1, 2**63 + 2**55 + 1, 2**40 + 2**32 + 1], np.uint64)
    for name in ["bf16", "f32", "f64"]:
        got = run1("stablehlo.convert", [u], ["ui64"], name, quiet=True)
        check_float_result(got, [Fraction(int(v)) for v in u], name)


def test_convert_documented_choices() -> None:
    # float -> int saturates, NaN -> 0 (XLA); to unsigned, negatives saturate to 0
    x = np.array([-5.0, 300.0, np.nan, -np.inf, np.inf, 2.7, -0.5, -2.7], np.float32)
    assert run1("stablehlo.convert", [x], ["f32"], "ui8", quiet=True).tolist() == \
        [0, 255, 0, 0, 255, 2, 0, 0]
    assert run1("stablehlo.convert", [x], ["f32"], "i8", quiet=True).tolist() == \
        [-5, 127, 0, -128, 127, 2, 0, -2]
    assert run1("stablehlo.convert", [x], ["f32"], "i4", quiet=True).astype(int).tolist() == \
        [-5, 7, 0, -8, 7, 2, 0, -2]
    big = np.array([9.3e18, -9.3e18, 2.0**63, 1.8e19, 2.0**64], np.float64)
    assert run1("stablehlo.convert", [big], ["f64"], "i64", quiet=True).tolist() == \
        [2**63 - 1, -2**63, 2**63 - 1, 2**63 - 1, 2**63 - 1]
    assert run1("stablehlo.convert", [big], ["f64"], "ui64", quiet=True).tolist() == \
        [9300000000000000000, 0, 2**63, 18000000000000000000, 2**64 - 1]
    # int -> narrower int wraps; complex -> real keeps the real part; -> i1 is != 0
    assert run1("stablehlo.convert", [np.array([300, -129], np.int32)], ["i32"], "i8",
                quiet=True).tolist() \
        == [44, 127]
    z = np.array([0 + 1j, 2.5 - 1j], np.complex64)
    assert run1("stablehlo.convert", [z], ["complex<f32>"], "i1", quiet=True).tolist() == \
        [False, True]
    assert run1("stablehlo.convert", [z], ["complex<f32>"], "i32", quiet=True).tolist() == [0, 2]
    assert run1("stablehlo.convert", [z], ["complex<f32>"], "f64", quiet=True).tolist() == \
        [0.0, 2.5]


def test_convert_no_warnings() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for src, dst in [("f64", "bf16"), ("f32", "f16"), ("f32", "i32"), ("f64", "ui64"),
                         ("i64", "f16"), ("ui64", "bf16"), ("i32", "i8"), ("f32", "f8E4M3FN")]:
            x = np.array([1e300, -1e300, np.nan, np.inf, 3.5]) if element_type(src).is_float \
                else np.array([2**31 - 1, 0, 7])
            with np.errstate(all="ignore"):
                x = x.astype(element_type(src).dtype)
            (out,) = prepare_op("stablehlo.convert", [src], dst, x.shape)(x)
            assert np.asarray(out).dtype == element_type(dst).dtype


# --- arithmetic on narrow floats is correctly rounded -------------------------------------------


_EXACT = {
    "stablehlo.add": lambda a, b: a + b,
    "stablehlo.subtract": lambda a, b: a - b,
    "stablehlo.multiply": lambda a, b: a * b,
    "stablehlo.divide": lambda a, b: a / b if b != 0 else None,
}


def _finite_values(name: str) -> np.ndarray:
    dt = fmt(name).dtype
    n = 256 if dt.itemsize == 1 else 65536
    with np.errstate(all="ignore"):
        v = np.arange(n, dtype=np.uint8 if dt.itemsize == 1 else np.uint16).view(dt)
        return v[np.isfinite(v.astype(np.float32))]


@pytest.mark.parametrize("name", NARROW + ["f32"])
@pytest.mark.parametrize("op", sorted(_EXACT))
def test_narrow_arithmetic_correctly_rounded(name: str, op: str) -> None:
    rng = np.random.default_rng(7)
    if name == "f32":
        with np.errstate(all="ignore"):
            vals = rng.standard_normal(4000).astype(np.float32) * np.float32(1e3)
    else:
        vals = _finite_values(name)
    a = rng.choice(vals, 1500)
    b = rng.choice(vals, 1500)
    got = run1(op, [a, b], [name, name], name, quiet=True)
    exact = []
    for x, y in zip(a.astype(np.float64), b.astype(np.float64)):
        q = _EXACT[op](Fraction(float(x)), Fraction(float(y)))
        exact.append(float("nan") if q is None else q)
    keep = [i for i, q in enumerate(exact) if not isinstance(q, float)]
    check_float_result(got[keep], [exact[i] for i in keep], name)


@pytest.mark.parametrize("name", NARROW)
def test_narrow_sqrt_correctly_rounded(name: str) -> None:
    vals = _finite_values(name)
    vals = vals[vals.astype(np.float64) >= 0]
    got = run1("stablehlo.sqrt", [vals], [name], name, quiet=True)
    for g, v in zip(got.astype(np.float64), vals.astype(np.float64)):
        q = Fraction(float(v))
        r = round_exact(Fraction(math.isqrt(int(q * 2**200)), 2**100), fmt(name))
        # isqrt truncates: r is exact unless sqrt lies within 2^-100 of a midpoint
        assert Fraction(float(g)) == r, (name, v, g)


# --- transcendental functions: f64, rounded once -------------------------------------------------

_FUNCS = {
    "stablehlo.exponential": np.exp, "stablehlo.log": np.log, "stablehlo.sine": np.sin,
    "stablehlo.cosine": np.cos, "stablehlo.tan": np.tan, "stablehlo.tanh": np.tanh,
    "stablehlo.exponential_minus_one": np.expm1, "stablehlo.log_plus_one": np.log1p,
    "stablehlo.logistic": lambda v: 1 / (1 + np.exp(-v)), "stablehlo.rsqrt":
        lambda v: 1 / np.sqrt(v), "stablehlo.cbrt": np.cbrt,
}


@pytest.mark.parametrize("name", ["bf16", "f16", "f8E4M3FN", "f8E5M2", "f4E2M1FN", "f32"])
@pytest.mark.parametrize("op", sorted(_FUNCS))
def test_transcendental_rounded_once(name: str, op: str) -> None:
    vals = _finite_values(name) if name != "f32" else \
        np.random.default_rng(3).standard_normal(3000).astype(np.float32) * 4
    if len(vals) > 3000:
        vals = vals[:: len(vals) // 3000]
    got = run1(op, [vals], [name], name, quiet=True)
    with np.errstate(all="ignore"):
        ref = _FUNCS[op](vals.astype(np.float64))
    if name == "f32" and op in _NATIVE_F32:
        # f32 sine/cosine/tanh use numpy's float32 kernels, for speed: within 1 ulp of the
        # correctly rounded value (docs/semantics/elementwise.md).
        from shlo.ops.check import ulp_distance
        from shlo.types import element_type

        dist = ulp_distance(got, ref.astype(np.float32), element_type("f32"))
        assert dist.max() <= 1, (op, float(dist.max()))
        return
    exact = [Fraction(float(r)) if np.isfinite(r) else float(r) for r in ref]
    check_float_result(got, exact, name)


_NATIVE_F32 = {"stablehlo.sine", "stablehlo.cosine", "stablehlo.tanh"}


def test_atan2_power_rounded_once() -> None:
    rng = np.random.default_rng(5)
    vals = _finite_values("bf16")
    a, b = rng.choice(vals, 2000), rng.choice(vals, 2000)
    for op, f in [("stablehlo.atan2", np.arctan2), ("stablehlo.power", np.power)]:
        got = run1(op, [a, b], ["bf16", "bf16"], "bf16", quiet=True)
        with np.errstate(all="ignore"):
            ref = f(a.astype(np.float64), b.astype(np.float64))
        check_float_result(got, [Fraction(float(r)) if np.isfinite(r) else float(r)
                                 for r in ref], "bf16")


def test_reduce_precision_matches_convert_round_trip() -> None:
    """reduce_precision(x, e, m) of a type with more bits equals converting to the format
    (e, m) and back, for normal results (f32 -> bf16 / f16 / e5m2 / e4m3 layouts)."""
    from shlo.attributes import IntegerAttr

    rng = np.random.default_rng(11)
    x = (rng.standard_normal(5000) * 10.0 ** rng.integers(-3, 4, 5000)).astype(np.float32)
    for e, m, target in [(8, 7, "bf16"), (5, 10, "f16"), (5, 2, "f8E5M2"), (4, 3, "f8E4M3")]:
        k = prepare_op("stablehlo.reduce_precision", ["f32"], "f32", x.shape,
                       exponent_bits=IntegerAttr(e), mantissa_bits=IntegerAttr(m))
        with np.errstate(all="ignore"):
            (got,) = k(x)
            via = x.astype(element_type(target).dtype).astype(np.float32)
        f = fmt(target)
        normal = np.abs(x) >= 2.0 ** f.emin  # (x just below: rounded at m bits, then flushed)
        np.testing.assert_array_equal(got[normal & np.isfinite(via)],
                                      via[normal & np.isfinite(via)])
        assert np.all(got[np.abs(x) < 2.0 ** (f.emin - 1) / 2] == 0)  # flushed, not subnormal


def test_all_pairs_of_types_prepare() -> None:
    """Every (src, dst) pair of the spec's types has a conversion."""
    for src, dst in itertools.product(ALL_TYPES, ALL_TYPES):
        prepare_op("stablehlo.convert", [src], dst, (1,))
