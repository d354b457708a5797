"""chlo ops (shlo/ops/chlo.py): hand-computed values, scipy/numpy references, the lowering's
edge cases, XLA differential checks (skipped without jax) and the official corpus files that use
chlo (skipped without ../shared/conformance)."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
import scipy.special as sc

import shlo
from shlo.errors import ShloError
from shlo.ops.chlo import mulhi, next_after, ragged_dot, round_from_wide, top_k
from shlo.testing import oracles
from shlo.types import element_type

from harness import prepare_op, run_text

CONFORMANCE = Path(__file__).resolve().parents[2] / ".." / "shared" / "conformance"


def unary(name: str, ty: str, shape: str = "8x", result: str | None = None) -> str:
    result = result or ty
    return f"""
    func.func @main(%x: tensor<{shape}{ty}>) -> tensor<{shape}{result}> {{
      %0 = chlo.{name} %x : tensor<{shape}{ty}> -> tensor<{shape}{result}>
      func.return %0 : tensor<{shape}{result}>
    }}"""


def binary(name: str, ty: str, shape: str = "6x") -> str:
    return f"""
    func.func @main(%x: tensor<{shape}{ty}>, %y: tensor<{shape}{ty}>) -> tensor<{shape}{ty}> {{
      %0 = chlo.{name} %x, %y : tensor<{shape}{ty}>, tensor<{shape}{ty}> -> tensor<{shape}{ty}>
      func.return %0 : tensor<{shape}{ty}>
    }}"""


# --- rounding once ------------------------------------------------------------------------------


def test_round_from_wide_rounds_once_to_bf16():
    # ml_dtypes goes through float32 and rounds twice: 1 + 2^-8 + 2^-40 -> 1.0 (wrong).
    x = np.array([1 + 2**-8 + 2**-40, -(1 + 2**-8 + 2**-40), 1 + 2**-8, 1 + 3 * 2**-9])
    got = round_from_wide(x, ml_dtypes.bfloat16).astype(np.float64)
    assert got.tolist() == [1.0078125, -1.0078125, 1.0, 1.0078125]


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2", "float8_e4m3b11fnuz",
                                  "bfloat16", "float4_e2m1fn"])
def test_round_from_wide_is_nearest_even(name):
    dtype = np.dtype(getattr(ml_dtypes, name))
    rng = np.random.default_rng(0)
    x = rng.normal(0, 4, 4000) * np.exp2(rng.integers(-10, 6, 4000))
    got = round_from_wide(x, dtype).astype(np.float64)
    with np.errstate(invalid="ignore"):
        grid = np.unique(np.arange(256 if dtype.itemsize == 1 else 65536, dtype=np.uint32)
                         .astype(np.uint8 if dtype.itemsize == 1 else np.uint16)
                         .view(dtype).astype(np.float64))
    grid = grid[np.isfinite(grid)]
    inside = (x > grid[0]) & (x < grid[-1])
    i = np.searchsorted(grid, x[inside])
    lo, hi = grid[i - 1], grid[i]
    best = np.where(np.abs(x[inside] - lo) <= np.abs(hi - x[inside]), lo, hi)
    tie = np.abs(x[inside] - lo) == np.abs(hi - x[inside])
    assert np.array_equal(got[inside][~tie], best[~tie])


# --- unary functions ---------------------------------------------------------------------------

REAL_CASES = {
    "lgamma": (sc.gammaln, [0.5, -0.25, 2.0, 3.5, 1e-3, 30.0, -2.5, 1e20]),
    "digamma": (sc.psi, [0.5, -0.25, 2.0, 3.5, 1e-3, 30.0, -2.5, 100.0]),
    "erf": (sc.erf, [0.5, -0.25, 2.0, -3.5, 1e-3, 0.0, -0.0, 6.0]),
    "erfc": (sc.erfc, [0.5, -0.25, 2.0, -3.5, 1e-3, 9.0, 20.0, -6.0]),
    "erf_inv": (sc.erfinv, [0.5, -0.25, 0.999, -0.9999, 1e-3, 0.0, 0.3, -0.7]),
    "bessel_i1e": (sc.i1e, [0.5, -0.25, 2.0, -3.5, 1e-3, 0.0, 9.0, -50.0]),
    "acos": (np.arccos, [0.5, -0.25, 1.0, -1.0, 1e-3, 0.0, 0.999, -0.7]),
    "acosh": (np.arccosh, [1.0, 1.5, 2.0, 3.5, 100.0, 1e10, 1.0001, 7.0]),
    "asin": (np.arcsin, [0.5, -0.25, 1.0, -1.0, 1e-3, 0.0, 0.999, -0.7]),
    "asinh": (np.arcsinh, [0.5, -0.25, 2.0, -3.5, 1e-3, 0.0, 1e10, -7.0]),
    "atan": (np.arctan, [0.5, -0.25, 2.0, -3.5, 1e-3, 0.0, 1e10, -7.0]),
    "atanh": (np.arctanh, [0.5, -0.25, 0.99, -0.999, 1e-3, 0.0, 0.3, -0.7]),
    "tan": (np.tan, [0.5, -0.25, 2.0, -3.5, 1e-3, 0.0, 1e4, -7.0]),
    "cosh": (np.cosh, [0.5, -0.25, 2.0, -3.5, 1e-3, 0.0, 0.9, -0.7]),
    "sinh": (np.sinh, [0.5, -0.25, 2.0, -3.5, 1e-3, 0.0, 0.9, -0.7]),
    "square": (np.square, [0.5, -0.25, 2.0, -3.5, 1e-3, 0.0, 1e10, -7.0]),
}


@pytest.mark.parametrize("name", sorted(REAL_CASES))
@pytest.mark.parametrize("ty", ["f64", "f32", "bf16"])
def test_real_unary_matches_reference_rounded_once(name, ty):
    fn, values = REAL_CASES[name]
    dtype = element_type(ty).dtype
    x = np.array(values, np.float64).astype(dtype)
    (r,) = run_text(unary(name, ty), x)
    assert r.dtype == dtype
    with np.errstate(divide="ignore"):
        expected = round_from_wide(fn(x.astype(np.float64)), dtype)
    if name in ("cosh", "sinh") and ty == "f64":  # the definition's formula: within 4 ulp
        np.testing.assert_allclose(r, expected, rtol=1e-15)
    elif name in ("cosh", "sinh"):
        np.testing.assert_allclose(r.astype(np.float64), expected.astype(np.float64),
                                   rtol=1e-6)
    else:
        assert r.tobytes() == expected.tobytes(), (r, expected)


def test_lowering_edge_cases():
    inf, nan = np.inf, np.nan
    (lg,) = run_text(unary("lgamma", "f32", "5x"), np.array([inf, -inf, 0, -1, -3], np.float32))
    assert np.isposinf(lg).all()
    (dg,) = run_text(unary("digamma", "f32", "5x"), np.array([0, -0.0, -1, -4, nan], np.float32))
    assert np.isnan(dg).all()  # poles (±0 too) are NaN in the lowering and in XLA
    (ei,) = run_text(unary("erf_inv", "f64", "4x"), np.array([1, -1, 1.5, -2], np.float64))
    assert ei[0] == inf and ei[1] == -inf and np.isnan(ei[2:]).all()
    (ac,) = run_text(unary("acosh", "f32", "3x"), np.array([0.5, -2, inf], np.float32))
    assert np.isnan(ac[:2]).all() and ac[2] == inf


def test_cosh_sinh_follow_the_definition_formula():
    # For large |x| the chlo definition e^(x + log(1/2)) +- e^(-x + log(1/2)), evaluated in
    # f32, is a few ulp from the correctly rounded value; the corpus expects the former.
    x = np.array([9.8, -9.8, 20.5, 0.3], np.float32)
    (c,) = run_text(unary("cosh", "f32", "4x"), x)
    (s,) = run_text(unary("sinh", "f32", "4x"), x)
    lh = np.float32(np.log(np.float32(0.5)))
    e = lambda v: np.float32(np.exp(np.float64(v)))  # noqa: E731
    want_c = [np.float32(e(np.float32(v + lh)) + e(np.float32(lh - v))) for v in x[:3]]
    assert c[:3].tolist() == want_c
    assert abs(float(s[3]) - np.sinh(0.3)) < 1e-7
    assert s[0] == -s[1] and np.isfinite(s).all()
    (h,) = run_text(unary("cosh", "f16", "3x"), np.array([0, 12, -12], np.float16))
    assert h.tolist() == [1.0, np.inf, np.inf]  # cosh(12) = 81377.4 overflows f16


COMPLEX_FUNCS = {"acos": np.arccos, "acosh": np.arccosh, "asin": np.arcsin, "asinh": np.arcsinh,
                 "atan": np.arctan, "atanh": np.arctanh, "cosh": np.cosh, "sinh": np.sinh,
                 "tan": np.tan, "conj": np.conj, "square": np.square}


@pytest.mark.parametrize("name", sorted(COMPLEX_FUNCS))
def test_complex_unary(name):
    z = np.array([0.5 + 0.5j, -2 + 1j, 3 - 0.25j, 1e-3j, -0.75 - 4j, 2 + 0j, 0.1, 1 + 1j],
                 np.complex64)
    (r,) = run_text(unary(name, "complex<f32>"), z)
    assert r.dtype == np.complex64
    expected = COMPLEX_FUNCS[name](z.astype(np.complex128)).astype(np.complex64)
    np.testing.assert_allclose(r, expected, rtol=2e-7)


def test_square_complex_avoids_cancellation():
    z = np.array([1e8 + (1e8 + 1) * 1j], np.complex128)
    (r,) = run_text(unary("square", "complex<f64>", "1x"), z)
    assert r[0].real == -(2e8 + 1)  # (a-b)(a+b) is exact here, a*a - b*b is not


def test_conj_of_real_is_identity_and_predicates():
    x = np.array([1.5, -np.inf, np.inf, np.nan, 0, -2, 3e38, -0.0], np.float32)
    (c,) = run_text(unary("conj", "f32"), x)
    assert c.tobytes() == x.tobytes()
    for name, want in [("is_inf", np.isinf(x)), ("is_pos_inf", np.isposinf(x)),
                       ("is_neg_inf", np.isneginf(x))]:
        (r,) = run_text(unary(name, "f32", result="i1"), x)
        assert r.dtype == np.bool_ and r.tolist() == want.tolist()
    (b,) = run_text(unary("is_inf", "bf16", result="i1"), x.astype(ml_dtypes.bfloat16))
    assert b.tolist() == np.isinf(x).tolist()


# --- binary special functions -------------------------------------------------------------------


def test_zeta_values_and_domain():
    x = np.array([2, 3, 1, 0.5, 2.5, 4, 3, 2], np.float64)
    q = np.array([1, 2, 1, 1, -1.5, -2, -2, 0.5], np.float64)
    (r,) = run_text(binary("zeta", "f64", "8x"), x, q)
    assert r[0] == pytest.approx(np.pi**2 / 6, rel=1e-15)
    assert r[1] == pytest.approx(sc.zeta(3, 2), rel=1e-15)
    assert r[2] == np.inf                     # x = 1: harmonic series
    assert np.isnan(r[3])                     # x < 1
    assert np.isnan(r[4])                     # q <= 0 and x not an integer
    assert r[5] == np.inf and np.isnan(r[6])  # pole at q = -2: +inf only for even x
    assert r[7] == pytest.approx(sc.zeta(2, 0.5), rel=1e-15)


def test_polygamma_values_and_domain():
    n = np.array([0, 1, 2, 3, 1.5, -1], np.float32)
    x = np.array([2.5, 0.5, 3.0, -1.5, 2.0, 2.0], np.float32)
    (r,) = run_text(binary("polygamma", "f32"), n, x)
    expected = [sc.psi(2.5), sc.polygamma(1, 0.5), sc.polygamma(2, 3.0),
                sc.polygamma(3, -1.5)]
    np.testing.assert_allclose(r[:4], np.array(expected, np.float32), rtol=1e-6)
    assert np.isnan(r[4:]).all()  # n must be a natural number


# --- next_after ---------------------------------------------------------------------------------


@pytest.mark.parametrize("ty", ["f16", "f32", "f64"])
def test_next_after_matches_std_nextafter(ty):
    dtype = element_type(ty).dtype
    rng = np.random.default_rng(3)
    specials = np.array([0, -0.0, 1, -1, np.inf, -np.inf, np.nan, 5, 0], dtype)
    x = np.concatenate([rng.normal(0, 10, 40).astype(dtype), specials])
    y = np.concatenate([rng.normal(0, 10, 40).astype(dtype),
                        np.array([-0.0, 0, 1, 2, 0, 0, 1, np.nan, 0], dtype)])
    y[5] = x[5]  # x == y gives y
    (r,) = run_text(binary("next_after", ty, f"{x.size}x"), x, y)
    expected = np.nextafter(x, y)
    assert np.array_equal(r, expected, equal_nan=True)
    zero_to_neg = r[40 + 0]
    assert zero_to_neg == 0 and np.signbit(zero_to_neg)  # nextafter(0, -0) = -0 (= y)


def test_next_after_narrow_floats():
    one = np.array([1.0, 1.0, 0.0, -0.0], ml_dtypes.bfloat16)
    to = np.array([2.0, 0.0, 1.0, -1.0], ml_dtypes.bfloat16)
    r = next_after(one, to).astype(np.float64)
    tiny = float(ml_dtypes.finfo(ml_dtypes.bfloat16).smallest_subnormal)
    assert r.tolist() == [1.0078125, 1 - 2**-8, tiny, -tiny]
    e4 = next_after(np.array([448.0], ml_dtypes.float8_e4m3fn),
                    np.array([0.0], ml_dtypes.float8_e4m3fn))
    assert float(e4[0]) == 416.0


# --- mulhi ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("ty", ["i8", "ui8", "i16", "ui16", "i32", "ui32", "i64", "ui64"])
def test_mulhi_matches_big_integer_product(ty):
    et = element_type(ty)
    rng = np.random.default_rng(7)
    draw = np.int64 if et.is_signed else np.uint64
    lo, hi = et.min, et.max
    a = [lo, hi, -1 if lo else 1, 0, 3] + rng.integers(lo, hi, 27, draw, True).tolist()
    b = [hi, lo, lo, 7, -5 if lo else 5] + rng.integers(lo, hi, 27, draw, True).tolist()
    x, y = np.array(a, et.dtype), np.array(b, et.dtype)
    text = f"""
    func.func @main(%x: tensor<32x{ty}>, %y: tensor<32x{ty}>) -> tensor<32x{ty}> {{
      %0 = "chlo.mulhi"(%x, %y) : (tensor<32x{ty}>, tensor<32x{ty}>) -> tensor<32x{ty}>
      func.return %0 : tensor<32x{ty}>
    }}"""
    (r,) = run_text(text, x, y)
    w, half = et.width, 1 << (et.width - 1)
    want = [(int(p) * int(q)) >> w for p, q in zip(x.tolist(), y.tolist())]
    want = [((v + half) % (1 << w)) - half if et.is_signed else v % (1 << w) for v in want]
    assert r.dtype == et.dtype and r.tolist() == want


def test_mulhi_narrow_signed():
    r = mulhi(np.array([7, -8, -8], ml_dtypes.int4), np.array([7, -8, 7], ml_dtypes.int4))
    assert r.astype(np.int64).tolist() == [3, 4, -4]


# --- top_k ---------------------------------------------------------------------------------------


def test_top_k_ints_ties_keep_lower_index():
    text = """
    func.func @main(%x: tensor<2x5xi32>) -> (tensor<2x3xi32>, tensor<2x3xi32>) {
      %v, %i = chlo.top_k(%x, k = 3) : tensor<2x5xi32> -> (tensor<2x3xi32>, tensor<2x3xi32>)
      func.return %v, %i : tensor<2x3xi32>, tensor<2x3xi32>
    }"""
    v, i = run_text(text, np.array([[1, 5, 5, -2, 5], [-1, -3, 0, 2, 2]], np.int32))
    assert v.tolist() == [[5, 5, 5], [2, 2, 0]] and i.tolist() == [[1, 2, 4], [3, 4, 2]]


def test_top_k_float_total_order():
    neg_nan = np.array([0xFFC00000], np.uint32).view(np.float32)[0]
    x = np.array([np.inf, np.nan, neg_nan, -np.inf, 3.0, 0.0, -0.0], np.float32)
    v, i = top_k(x, 7)
    assert i.tolist() == [1, 0, 4, 5, 6, 3, 2]  # +NaN > inf > 3 > +0 > -0 > -inf > -NaN
    assert not np.signbit(v[3]) and np.signbit(v[4])


@pytest.mark.parametrize("ty", ["ui8", "ui64", "i64", "bf16", "f16", "f64"])
def test_top_k_types(ty):
    dtype = element_type(ty).dtype
    rng = np.random.default_rng(5)
    x = rng.integers(0, 50, (3, 10)).astype(dtype)
    v, i = top_k(x, 4)
    ref = np.argsort(-x.astype(np.float64), axis=-1, kind="stable")[:, :4]
    assert np.array_equal(i, ref) and np.array_equal(v, np.take_along_axis(x, ref, -1))


def test_top_k_k_larger_than_dimension_is_clamped():
    v, i = top_k(np.array([1, 3, 2], np.int8), 8)
    assert v.tolist() == [3, 2, 1] and i.tolist() == [1, 2, 0]


# --- ragged_dot ----------------------------------------------------------------------------------


def ragged_text(lhs, rhs, gs, out, lb, rb, lc, rc, lr, rg, ty="f32"):
    def fmt(v):
        return "[" + ", ".join(map(str, v)) + "]"

    return f"""
    func.func @main(%l: tensor<{lhs}x{ty}>, %r: tensor<{rhs}x{ty}>, %g: tensor<{gs}xi64>)
        -> tensor<{out}x{ty}> {{
      %0 = "chlo.ragged_dot"(%l, %r, %g) {{
        ragged_dot_dimension_numbers = #chlo.ragged_dot<
          lhs_batching_dimensions = {fmt(lb)}, rhs_batching_dimensions = {fmt(rb)},
          lhs_contracting_dimensions = {fmt(lc)}, rhs_contracting_dimensions = {fmt(rc)},
          lhs_ragged_dimensions = {fmt(lr)}, rhs_group_dimensions = {fmt(rg)}>,
        precision_config = [#chlo<precision DEFAULT>, #chlo<precision DEFAULT>]
      }} : (tensor<{lhs}x{ty}>, tensor<{rhs}x{ty}>, tensor<{gs}xi64>) -> tensor<{out}x{ty}>
      func.return %0 : tensor<{out}x{ty}>
    }}"""


def test_ragged_dot_mode1_rows_use_their_group():
    rng = np.random.default_rng(11)
    lhs = rng.normal(size=(7, 3)).astype(np.float32)
    rhs = rng.normal(size=(3, 3, 4)).astype(np.float32)
    gs = np.array([2, 0, 4], np.int64)  # row 6 belongs to no group: zero
    (r,) = run_text(ragged_text("7x3", "3x3x4", "3", "7x4", [], [], [1], [1], [0], [0]),
               lhs, rhs, gs)
    groups = [0, 0, 2, 2, 2, 2, None]
    for row, g in enumerate(groups):
        want = np.zeros(4) if g is None else lhs[row].astype(np.float64) @ rhs[g]
        np.testing.assert_allclose(r[row], want, rtol=1e-6, atol=1e-7)


def test_ragged_dot_mode1_batched_group_sizes_and_nan_isolation():
    rng = np.random.default_rng(12)
    lhs = rng.normal(size=(2, 5, 3))
    lhs[0, 0, 0] = np.nan  # stays in its own row (masking selects, it does not multiply)
    rhs = rng.normal(size=(2, 2, 3, 4))  # [g, b, k, n]
    gs = np.array([[1, 4], [3, 1]], np.int64)  # per batch
    (r,) = run_text(ragged_text("2x5x3", "2x2x3x4", "2x2", "2x5x4", [0], [1], [2], [2], [1], [0],
                           "f64"), lhs, rhs, gs)
    for b in range(2):
        bounds = np.cumsum(gs[b])
        for row in range(5):
            g = int(np.searchsorted(bounds, row, side="right"))
            want = lhs[b, row] @ rhs[g, b] if g < 2 else np.zeros(4)
            np.testing.assert_allclose(r[b, row], want, rtol=1e-12)
    assert np.isnan(r[0, 0]).all() and np.isfinite(r[0, 1:]).all()


def test_ragged_dot_mode2_groups_split_contracting_dim():
    rng = np.random.default_rng(13)
    lhs = rng.normal(size=(3, 6))   # [m, k]
    rhs = rng.normal(size=(6, 2))   # [k, n]
    gs = np.array([2, 3], np.int64)
    (r,) = run_text(ragged_text("3x6", "6x2", "2", "2x3x2", [], [], [1], [0], [1], [], "f64"),
               lhs, rhs, gs)
    np.testing.assert_allclose(r[0], lhs[:, :2] @ rhs[:2], rtol=1e-12)
    np.testing.assert_allclose(r[1], lhs[:, 2:5] @ rhs[2:5], rtol=1e-12)


def test_ragged_dot_mode3_is_a_batched_dot():
    rng = np.random.default_rng(14)
    lhs = rng.normal(size=(3, 4, 5))
    rhs = rng.normal(size=(3, 5, 2))
    (r,) = run_text(ragged_text("3x4x5", "3x5x2", "3", "3x4x2", [0], [0], [2], [1], [0], [], "f64"),
               lhs, rhs, np.array([1, 1, 1], np.int64))
    np.testing.assert_allclose(r, np.einsum("bmk,bkn->bmn", lhs, rhs), rtol=1e-12)


def test_ragged_dot_integer_and_bf16():
    lhs = np.arange(6, dtype=np.int32).reshape(3, 2)
    rhs = np.arange(8, dtype=np.int32).reshape(2, 2, 2)
    r = ragged_dot(lhs.astype(np.int64), rhs.astype(np.int64), np.array([1, 2]), [], [], [1],
                   [1], [0], [0])
    assert r.tolist() == [[2, 3], [26, 31], [46, 55]]
    (b,) = run_text(ragged_text("3x2", "2x2x2", "2", "3x2", [], [], [1], [1], [0], [0], "bf16"),
               lhs.astype(ml_dtypes.bfloat16), rhs.astype(ml_dtypes.bfloat16),
               np.array([1, 2], np.int64))
    assert b.dtype == ml_dtypes.bfloat16 and b.astype(np.int64).tolist() == r.tolist()


# --- scan ----------------------------------------------------------------------------------------


def test_scan_cumsum_and_carry():
    text = """
    func.func @main(%x: tensor<2x3xf32>, %init: tensor<2xf32>) -> (tensor<2x3xf32>, tensor<2xf32>) {
      %0:2 = chlo.scan(%x) inits(%init) dimension=1 {
      ^bb0(%a: tensor<2xf32>, %c: tensor<2xf32>):
        %s = stablehlo.add %a, %c : tensor<2xf32>
        stablehlo.return %s, %s : tensor<2xf32>, tensor<2xf32>
      } : (tensor<2x3xf32>, tensor<2xf32>) -> (tensor<2x3xf32>, tensor<2xf32>)
      func.return %0#0, %0#1 : tensor<2x3xf32>, tensor<2xf32>
    }"""
    out, carry = run_text(text, np.array([[1, 2, 3], [4, 5, 6]], np.float32),
                     np.array([10, 0], np.float32))
    assert out.tolist() == [[11, 13, 16], [4, 9, 15]] and carry.tolist() == [16, 15]


def test_scan_reverse_outputs_differ_from_carries():
    text = """
    func.func @main(%x: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi1>, tensor<i32>) {
      %z = stablehlo.constant dense<0> : tensor<i32>
      %0:3 = chlo.scan(%x) inits(%z) dimension=0 attributes {is_reverse = true} {
      ^bb0(%a: tensor<i32>, %c: tensor<i32>):
        %s = stablehlo.add %a, %c : tensor<i32>
        %p = stablehlo.compare GT, %a, %c : (tensor<i32>, tensor<i32>) -> tensor<i1>
        stablehlo.return %s, %p, %s : tensor<i32>, tensor<i1>, tensor<i32>
      } : (tensor<4xi32>, tensor<i32>) -> (tensor<4xi32>, tensor<4xi1>, tensor<i32>)
      func.return %0#0, %0#1, %0#2 : tensor<4xi32>, tensor<4xi1>, tensor<i32>
    }"""
    s, p, c = run_text(text, np.array([1, 2, 3, 4], np.int32))
    assert s.tolist() == [10, 9, 7, 4] and int(c) == 10
    assert p.tolist() == [False, False, False, True]


def test_scan_generic_form_with_segment_sizes():
    text = """
    func.func @main(%x: tensor<3xf64>, %y: tensor<3xf64>) -> (tensor<3xf64>, tensor<f64>) {
      %one = stablehlo.constant dense<1.0> : tensor<f64>
      %0:2 = "chlo.scan"(%x, %y, %one) <{dimension = 0 : i64,
                                         operandSegmentSizes = array<i32: 2, 1>}> ({
      ^bb0(%a: tensor<f64>, %b: tensor<f64>, %c: tensor<f64>):
        %m = stablehlo.multiply %a, %b : tensor<f64>
        %n = stablehlo.multiply %m, %c : tensor<f64>
        stablehlo.return %n, %n : tensor<f64>, tensor<f64>
      }) : (tensor<3xf64>, tensor<3xf64>, tensor<f64>) -> (tensor<3xf64>, tensor<f64>)
      func.return %0#0, %0#1 : tensor<3xf64>, tensor<f64>
    }"""
    out, carry = run_text(text, np.array([1, 2, 3.0]), np.array([2, 2, 0.5]))
    assert out.tolist() == [2, 8, 12] and float(carry) == 12


# --- constants -----------------------------------------------------------------------------------


def test_constant_and_constant_like():
    text = """
    func.func @main(%x: tensor<2x3xi64>) -> (tensor<2x3xf32>, tensor<2x3xi32>, tensor<2xi32>) {
      %0 = "chlo.constant_like"(%x) {value = 3.2 : f32} : (tensor<2x3xi64>) -> tensor<2x3xf32>
      %1 = "chlo.constant_like"(%x) {value = -7 : i32} : (tensor<2x3xi64>) -> tensor<2x3xi32>
      %2 = "chlo.constant"() {value = dense<[4, 5]> : tensor<2xi32>} : () -> tensor<2xi32>
      func.return %0, %1, %2 : tensor<2x3xf32>, tensor<2x3xi32>, tensor<2xi32>
    }"""
    a, b, c = run_text(text, np.zeros((2, 3), np.int64))
    assert a.dtype == np.float32 and (a == np.float32(3.2)).all() and a.shape == (2, 3)
    assert b.dtype == np.int32 and (b == -7).all()
    assert c.tolist() == [4, 5]


def test_constant_like_takes_the_runtime_shape():
    text = """
    func.func @main(%x: tensor<?xf64>) -> tensor<?xf64> {
      %0 = "chlo.constant_like"(%x) {value = 0.5 : f64} : (tensor<?xf64>) -> tensor<?xf64>
      func.return %0 : tensor<?xf64>
    }"""
    (r,) = run_text(text, np.zeros(5))
    assert r.tolist() == [0.5] * 5


# --- broadcasting ops ----------------------------------------------------------------------------


def test_broadcast_add_numpy_prefix_padding():
    text = """
    func.func @main(%a: tensor<3xi32>, %b: tensor<2x3xi32>) -> tensor<2x3xi32> {
      %0 = chlo.broadcast_add %a, %b : (tensor<3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
      func.return %0 : tensor<2x3xi32>
    }"""
    (r,) = run_text(text, np.array([1, 2, 3], np.int32), np.array([[10, 20, 30], [40, 50, 60]],
                                                               np.int32))
    assert r.tolist() == [[11, 22, 33], [41, 52, 63]]


def test_broadcast_dimensions_map_the_lower_rank_operand():
    text = """
    func.func @main(%a: tensor<2x3xf32>, %b: tensor<2xf32>) -> tensor<2x3xf32> {
      %0 = chlo.broadcast_subtract %a, %b {broadcast_dimensions = array<i64: 0>}
          : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
      func.return %0 : tensor<2x3xf32>
    }"""
    (r,) = run_text(text, np.ones((2, 3), np.float32), np.array([1, 2], np.float32))
    assert r.tolist() == [[0, 0, 0], [-1, -1, -1]]


@pytest.mark.parametrize("dims", ["-1", "-9223372036854775808", "2"])
def test_broadcast_dimensions_out_of_range_are_a_clear_error(dims):
    """broadcast_dimensions outside the result's rank (the verifier accepts them, as upstream:
    they leave the result type unknown) stop the run with a message naming them: -1 once
    indexed from the end, INT64_MIN raised an IndexError."""
    text = f"""
    func.func @main(%a: tensor<3x3xf32>, %b: tensor<3xf32>) -> tensor<3x3xf32> {{
      %0 = chlo.broadcast_add %a, %b {{broadcast_dimensions = array<i64: {dims}>}}
          : (tensor<3x3xf32>, tensor<3xf32>) -> tensor<3x3xf32>
      func.return %0 : tensor<3x3xf32>
    }}"""
    with pytest.raises(ShloError, match=r"broadcast_dimensions \[.*\] must be distinct"):
        run_text(text, np.ones((3, 3), np.float32), np.ones((3,), np.float32))


def test_broadcast_degenerate_dims_and_integer_semantics():
    text = """
    func.func @main(%a: tensor<2x1xi32>, %b: tensor<1x3xi32>) -> (tensor<2x3xi32>, tensor<2x3xi32>, tensor<2x3xi32>) {
      %0 = chlo.broadcast_divide %a, %b : (tensor<2x1xi32>, tensor<1x3xi32>) -> tensor<2x3xi32>
      %1 = chlo.broadcast_remainder %a, %b : (tensor<2x1xi32>, tensor<1x3xi32>) -> tensor<2x3xi32>
      %2 = chlo.broadcast_shift_left %a, %b : (tensor<2x1xi32>, tensor<1x3xi32>) -> tensor<2x3xi32>
      func.return %0, %1, %2 : tensor<2x3xi32>, tensor<2x3xi32>, tensor<2x3xi32>
    }"""
    d, m, s = run_text(text, np.array([[7], [-7]], np.int32), np.array([[2, 3, 40]], np.int32))
    assert d.tolist() == [[3, 2, 0], [-3, -2, 0]]   # truncating division
    assert m.tolist() == [[1, 1, 7], [-1, -1, -7]]  # remainder takes the dividend's sign
    assert s.tolist() == [[28, 56, 0], [-28, -56, 0]]


def test_broadcast_compare_select_complex():
    text = """
    func.func @main(%a: tensor<3xf32>, %b: tensor<f32>) -> (tensor<3xi1>, tensor<3xf32>, tensor<3xcomplex<f32>>) {
      %p = chlo.broadcast_compare %a, %b {comparison_direction = #chlo<comparison_direction LT>}
          : (tensor<3xf32>, tensor<f32>) -> tensor<3xi1>
      %s = chlo.broadcast_select %p, %a, %b : (tensor<3xi1>, tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
      %c = chlo.broadcast_complex %a, %b : (tensor<3xf32>, tensor<f32>) -> tensor<3xcomplex<f32>>
      func.return %p, %s, %c : tensor<3xi1>, tensor<3xf32>, tensor<3xcomplex<f32>>
    }"""
    p, s, c = run_text(text, np.array([1, 5, -2], np.float32), np.float32(2))
    assert p.tolist() == [True, False, True]
    assert s.tolist() == [1, 2, -2]
    assert c.tolist() == [1 + 2j, 5 + 2j, -2 + 2j] and c.dtype == np.complex64


def test_broadcast_compare_totalorder():
    text = """
    func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xi1> {
      %p = chlo.broadcast_compare %a, %b {comparison_direction = #chlo<comparison_direction LT>,
                                          compare_type = #chlo<comparison_type TOTALORDER>}
          : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
      func.return %p : tensor<2xi1>
    }"""
    (p,) = run_text(text, np.array([-0.0, 1], np.float32), np.array([0.0, np.nan], np.float32))
    assert p.tolist() == [True, True]


def test_broadcast_chlo_targets():
    text = """
    func.func @main(%a: tensor<3xf64>, %b: tensor<f64>) -> (tensor<3xf64>, tensor<3xf64>, tensor<3xf64>) {
      %0 = chlo.broadcast_zeta %a, %b : (tensor<3xf64>, tensor<f64>) -> tensor<3xf64>
      %1 = chlo.broadcast_polygamma %b, %a : (tensor<f64>, tensor<3xf64>) -> tensor<3xf64>
      %2 = chlo.broadcast_next_after %a, %b : (tensor<3xf64>, tensor<f64>) -> tensor<3xf64>
      func.return %0, %1, %2 : tensor<3xf64>, tensor<3xf64>, tensor<3xf64>
    }"""
    a = np.array([2.0, 3.0, 4.0])
    z, pg, na = run_text(text, a, np.float64(1.0))
    np.testing.assert_allclose(z, sc.zeta(a, 1.0), rtol=1e-14)
    np.testing.assert_allclose(pg, sc.polygamma(1, a), rtol=1e-14)
    assert na.tolist() == np.nextafter(a, 1.0).tolist()


def test_broadcast_add_quantized():
    from shlo.registry import lookup

    if lookup("__dequantize_op_quantize__") is None:
        pytest.skip("quantized evaluation (shlo/ops/quantization.py) is not available")
    text = """
    func.func @main(%a: tensor<2x!quant.uniform<i8:f32, 0.5:0>>, %b: tensor<!quant.uniform<i8:f32, 0.5:0>>)
        -> tensor<2x!quant.uniform<i8:f32, 0.5:0>> {
      %0 = chlo.broadcast_add %a, %b : (tensor<2x!quant.uniform<i8:f32, 0.5:0>>,
          tensor<!quant.uniform<i8:f32, 0.5:0>>) -> tensor<2x!quant.uniform<i8:f32, 0.5:0>>
      func.return %0 : tensor<2x!quant.uniform<i8:f32, 0.5:0>>
    }"""
    (r,) = run_text(text, np.array([2, 4], np.int8), np.int8(6))  # 1.0 + 3.0, 2.0 + 3.0
    assert r.tolist() == [8, 10]


# --- differential: chlo against XLA ---------------------------------------------------------------


def _ulp_key(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    signed = {2: np.int16, 4: np.int32, 8: np.int64}[a.dtype.itemsize]
    i = a.view(signed).astype(np.float64)
    return np.where(i < 0, -(i + 2.0 ** (8 * a.dtype.itemsize - 1)), i)


@pytest.mark.skipif(not oracles.available(), reason="jax is not installed")
@pytest.mark.parametrize("ty", ["f32", "f16", "bf16"])
def test_against_xla_at_least_as_accurate(ty):
    """Each op, against XLA's lowering: shlo is never farther from the correctly rounded value
    (computed with scipy in float64) than XLA is, except where both are within 1 ulp."""
    dtype = element_type(ty).dtype
    rng = np.random.default_rng(21)
    names = ["lgamma", "digamma", "erf", "erfc", "erf_inv", "bessel_i1e", "acos", "acosh",
             "asin", "asinh", "atan", "atanh", "tan"]
    domain = {"erf_inv": (-1, 1), "acos": (-1, 1), "asin": (-1, 1), "atanh": (-1, 1),
              "acosh": (1, 30)}
    refs = {"lgamma": sc.gammaln, "digamma": sc.psi, "erf": sc.erf, "erfc": sc.erfc,
            "erf_inv": sc.erfinv, "bessel_i1e": sc.i1e, "acos": np.arccos,
            "acosh": np.arccosh, "asin": np.arcsin, "asinh": np.arcsinh, "atan": np.arctan,
            "atanh": np.arctanh, "tan": np.tan}
    n = 256
    xs = [rng.uniform(*domain.get(k, (-12, 12)), n).astype(dtype) for k in names]
    lines = [f"  %r{i} = chlo.{k} %x{i} : tensor<{n}x{ty}> -> tensor<{n}x{ty}>"
             for i, k in enumerate(names)]
    params = ", ".join(f"%x{i}: tensor<{n}x{ty}>" for i in range(len(names)))
    types = ", ".join([f"tensor<{n}x{ty}>"] * len(names))
    rets = ", ".join(f"%r{i}" for i in range(len(names)))
    text = (f"func.func @main({params}) -> ({types}) {{\n" + "\n".join(lines)
            + f"\n  func.return {rets} : {types}\n}}")
    xla = oracles.xla_run(text, xs)
    ours = shlo.run(shlo.parse(text), *xs, verify=False)
    for k, x, a, e in zip(names, xs, ours, xla):
        with np.errstate(all="ignore"):
            ref = round_from_wide(refs[k](x.astype(np.float64)), dtype)
        finite = np.isfinite(ref.astype(np.float64)) & np.isfinite(np.asarray(e, np.float64))
        d_ours = np.abs(_ulp_key(a) - _ulp_key(ref))[finite]
        d_xla = np.abs(_ulp_key(np.asarray(e, dtype)) - _ulp_key(ref))[finite]
        assert (d_ours <= np.maximum(d_xla, 1)).all(), k
        assert d_ours.max(initial=0) == 0, k  # rounded once from float64


@pytest.mark.skipif(not oracles.available(), reason="jax is not installed")
def test_top_k_scan_mulhi_against_xla():
    text = """
    func.func @main(%x: tensor<4x9xf32>, %a: tensor<6xi64>, %b: tensor<6xi64>)
        -> (tensor<4x3xf32>, tensor<4x3xi32>, tensor<4x9xf32>, tensor<9xf32>, tensor<6xi64>) {
      %v, %i = chlo.top_k(%x, k = 3) : tensor<4x9xf32> -> (tensor<4x3xf32>, tensor<4x3xi32>)
      %z = stablehlo.constant dense<0.0> : tensor<9xf32>
      %s:2 = chlo.scan(%x) inits(%z) dimension=0 {
      ^bb0(%e: tensor<9xf32>, %c: tensor<9xf32>):
        %m = stablehlo.maximum %e, %c : tensor<9xf32>
        stablehlo.return %m, %m : tensor<9xf32>, tensor<9xf32>
      } : (tensor<4x9xf32>, tensor<9xf32>) -> (tensor<4x9xf32>, tensor<9xf32>)
      %h = "chlo.mulhi"(%a, %b) : (tensor<6xi64>, tensor<6xi64>) -> tensor<6xi64>
      func.return %v, %i, %s#0, %s#1, %h : tensor<4x3xf32>, tensor<4x3xi32>, tensor<4x9xf32>,
          tensor<9xf32>, tensor<6xi64>
    }"""
    rng = np.random.default_rng(4)
    x = rng.integers(-3, 4, (4, 9)).astype(np.float32)  # many ties
    a = rng.integers(-2**62, 2**62, 6, dtype=np.int64)
    b = rng.integers(-2**62, 2**62, 6, dtype=np.int64)
    expected = oracles.xla_run(text, [x, a, b])
    actual = shlo.run(shlo.parse(text), x, a, b, verify=False)
    for e, r in zip(expected, actual):
        assert np.array_equal(e, r)


@pytest.mark.skipif(not oracles.available(), reason="jax is not installed")
@pytest.mark.parametrize("mode", [1, 2, 3])
def test_ragged_dot_against_the_upstream_lowering(mode):
    """XLA:CPU has no ragged-dot: lower with chlo-legalize-to-stablehlo, run upstream."""
    from jaxlib.mlir import ir
    from jaxlib.mlir.dialects import stablehlo
    from jaxlib.mlir.passmanager import PassManager

    cfg = {1: ("2x5x3", "2x2x3x4", "2", "2x5x4", [0], [1], [2], [2], [1], [0], [2, 2]),
           2: ("2x3x6", "2x6x2", "2x2", "2x2x3x2", [0], [0], [2], [1], [2], [], [[2, 3], [1, 5]]),
           3: ("3x4x5", "3x5x2", "3", "3x4x2", [0], [0], [2], [1], [0], [], [1, 1, 1])}[mode]
    text = ragged_text(*cfg[:10], "f64")
    rng = np.random.default_rng(mode)
    shape = lambda s: tuple(int(d) for d in s.split("x"))  # noqa: E731
    args = [rng.normal(size=shape(cfg[0])), rng.normal(size=shape(cfg[1])),
            np.array(cfg[10], np.int64)]
    stablehlo.register_stablehlo_passes()
    with oracles.mlir_context() as ctx:
        module = ir.Module.parse(text)
        PassManager.parse("builtin.module(func.func(chlo-legalize-to-stablehlo))").run(
            module.operation)
        lowered = str(module)
    del ctx
    (expected,) = oracles.upstream_run(lowered, args)
    (actual,) = run_text(text, *args)
    np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=1e-14)


# --- the official corpus -------------------------------------------------------------------------


def _corpus_files() -> list[str]:
    if not CONFORMANCE.exists():
        return []
    files = sorted(str(p) for p in (CONFORMANCE / "interpret" / "chlo").glob("*.mlir"))
    # One testdata program per chlo op (the rest run in the conformance tier).
    seen: set[str] = set()
    for p in sorted((CONFORMANCE / "testdata").glob("*_chlo.mlir")):
        text = p.read_text()
        if "RUN-DISABLED" in text.splitlines()[0]:
            continue
        ops = {w for w in text.split() if w.startswith("chlo.")}
        if not ops <= seen:
            seen |= ops
            files.append(str(p))
    return files


@pytest.mark.skipif(not CONFORMANCE.exists(), reason="../shared/conformance is absent")
@pytest.mark.parametrize("path", _corpus_files(), ids=lambda p: Path(p).name)
def test_conformance(path):
    from shlo.testing.runner import run_file

    results = run_file(path)
    failed = [m for r in results if r.status != "passed" for m in r.messages]
    assert results and not failed, failed


def test_constant_like_complex_value_kept_as_opaque_attribute():
    # `#complex.number<:f32 1.5, -2.0> : complex<f32>` (built by hand: a dialect attribute).
    from shlo.attributes import OpaqueAttr

    k = prepare_op("chlo.constant_like", ["f32"], "complex<f32>", (2,),
                   value=OpaqueAttr("#complex.number<:f32 1.5, -2.0> : complex<f32>"))
    (r,) = k(np.zeros(2, np.float32))
    assert r.dtype == np.complex64 and r.tolist() == [1.5 - 2j, 1.5 - 2j]


def test_broadcast_ops_work_in_batched_region_bodies():
    # Region bodies run once over whole arrays (ARCHITECTURE.md principle 3): a chlo
    # broadcast op typed on 0-d tensors must accept arrays there.
    text = """func.func @main(%x: tensor<4xf32>) -> tensor<f32> {
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %init) across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
    reducer(%a: tensor<f32>, %b: tensor<f32>) {
      %s = chlo.broadcast_add %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32>
      %m = chlo.broadcast_maximum %s, %a : (tensor<f32>, tensor<f32>) -> tensor<f32>
      stablehlo.return %m : tensor<f32>
    }
  return %0 : tensor<f32>
}"""
    (r,) = shlo.run(shlo.parse(text), np.array([1, 2, 3, 4], np.float32))
    assert float(r) == 10.0
