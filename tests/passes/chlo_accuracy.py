"""Each chlo op run natively by shlo and as its chlo-legalize-to-stablehlo decomposition on the
same inputs: the distance in ULPs between the two, per op and element type.

shlo's native kernels compute in float64/complex128 and round once (for cosh/sinh they follow
the lowering's formula), so the distance is essentially the decomposition's own error.

``python tests/passes/chlo_accuracy.py`` prints the table (max and 99.9th percentile ULP
distance per op and type); tests/passes/test_chlo_legalize.py asserts the bounds of
:data:`BOUNDS`.
"""

from __future__ import annotations

import sys
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import ml_dtypes
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import shlo
from shlo.passes import run_passes

FLOATS = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "f64": np.float64}
COMPLEX = {"complex<f32>": np.complex64, "complex<f64>": np.complex128}

UNARY_REAL = ["acos", "acosh", "asin", "asinh", "atan", "atanh", "cosh", "sinh", "tan", "conj",
              "square", "erf", "erfc", "erf_inv", "lgamma", "digamma", "bessel_i1e"]
UNARY_COMPLEX = ["acos", "acosh", "asin", "asinh", "atan", "atanh", "cosh", "sinh", "tan", "conj",
                 "square"]
PREDICATES = ["is_inf", "is_pos_inf", "is_neg_inf"]
BINARY = ["next_after", "zeta", "polygamma"]

BOUNDS: dict[tuple[str, str], float] = {
    ("erf", "f32"): 4, ("erf_inv", "f32"): 36, ("erf_inv", "f64"): 23,
    ("lgamma", "f32"): 29, ("lgamma", "f64"): 26, ("digamma", "f32"): 15,
    ("digamma", "f64"): 3431, ("zeta", "f32"): 3, ("zeta", "f64"): 4,
    ("polygamma", "f32"): 19, ("polygamma", "f64"): 13,
    ("cosh", "complex<f32>"): 24, ("sinh", "complex<f32>"): 24,
    ("cosh", "complex<f64>"): 491, ("sinh", "complex<f64>"): 491,
}
"""The largest scaled ULP distance measured on regular inputs, per (op, type); 2 elsewhere."""

EDGE_DIFFERENCES = {
    ("lgamma", "f32"), ("lgamma", "f64"), ("lgamma", "f16"),
    ("cosh", "complex<f32>"), ("sinh", "complex<f32>"), ("cosh", "complex<f64>"),
    ("sinh", "complex<f64>"), ("atan", "complex<f32>"), ("atanh", "complex<f32>"),
    ("atan", "complex<f64>"), ("atanh", "complex<f64>"),
}
"""Where native and lowered differ on some inputs outside :func:`regular`: lgamma on
subnormals (the lowering's inaccuracy there), complex cosh/sinh at infinities (C99's NaN/inf
pattern natively, the formula's when lowered: cosh(0 + inf i) is nan + 0i natively, nan + nan i
lowered), complex atan/atanh next to their poles ±i / ±1 (inf lowered). Everywhere else the
edge inputs (infinities, NaN, subnormals) give the same results (two NaNs count as equal)."""


# --- inputs ---------------------------------------------------------------------------------------


def float_sweep(dtype: Any, n: int = 4000) -> np.ndarray:
    """Every finite value and the specials for 16-bit floats; otherwise a dense log-spaced sweep
    of both signs over the whole range, dense near 0 and 1, with the edge values."""
    dt = np.dtype(dtype)
    if dt.itemsize == 2:
        bits = np.arange(1 << 16, dtype=np.uint16)
        return bits.view(dt)
    fi = ml_dtypes.finfo(dt)
    mags = np.concatenate([
        np.geomspace(float(fi.smallest_subnormal), float(fi.max), n),
        np.linspace(0, 8, n), np.linspace(0.9, 1.1, n // 4), np.arange(0, 40, 0.25)])
    edges = [0.0, float(fi.smallest_subnormal), float(fi.smallest_normal), float(fi.eps), 0.5,
             1.0, 2.0, float(fi.max), np.inf, np.nan]
    vals = np.concatenate([mags, edges])
    vals = np.concatenate([vals, -vals])
    with np.errstate(over="ignore"):
        return vals.astype(dt)


def complex_grid(dtype: Any, n: int = 48) -> np.ndarray:
    part = np.dtype(dtype).type(0).real.dtype
    fi = np.finfo(part)
    mags = np.concatenate([[0.0, float(fi.tiny), 1e-6, 0.5, 1.0, 2.0, 1e6, float(fi.max) / 4,
                            float(fi.max), np.inf],
                           np.geomspace(1e-3, 1e3, n)])
    axis = np.concatenate([mags, -mags[1:]]).astype(part)  # (no -0: see SIGNED_ZERO_NOTE)
    re, im = np.meshgrid(axis, axis)
    out = np.empty(re.shape, dtype)
    out.real, out.imag = re, im
    return out.reshape(-1)


# --- running --------------------------------------------------------------------------------------


def _module(op: str, et: str, arity: int, n: int, result_et: str | None = None) -> str:
    t = f"tensor<{n}x{et}>"
    rt = f"tensor<{n}x{result_et or et}>"
    args = ", ".join(f"%a{i}: {t}" for i in range(arity))
    ops = ", ".join(f"%a{i}" for i in range(arity))
    sig = ", ".join([t] * arity)
    return (f"func.func @main({args}) -> {rt} {{\n"
            f"  %0 = \"chlo.{op}\"({ops}) : ({sig}) -> {rt}\n"
            f"  return %0 : {rt}\n}}\n")


@lru_cache(maxsize=None)
def _programs(text: str) -> tuple[Any, Any]:
    native = shlo.parse(text)
    lowered = run_passes(native, "chlo-legalize-to-stablehlo")
    assert "chlo." not in shlo.format(lowered), shlo.format(lowered)
    return native, lowered


def native_and_lowered(op: str, et: str, *inputs: np.ndarray, result_et: str | None = None
                       ) -> tuple[np.ndarray, np.ndarray]:
    text = _module(op, et, len(inputs), inputs[0].size, result_et)
    native, lowered = _programs(text)
    with np.errstate(all="ignore"):
        a = np.asarray(shlo.run(native, *inputs)[0])
        b = np.asarray(shlo.run(lowered, *inputs)[0])
    return a, b


# --- distance -------------------------------------------------------------------------------------


def _ordered(x: np.ndarray) -> np.ndarray:
    """Floats as integers in the order of the values (adjacent floats 1 apart)."""
    bits = x.dtype.itemsize * 8
    ints = x.view({16: np.int16, 32: np.int32, 64: np.int64}[bits]).astype(np.int64)
    return np.where(ints < 0, -(ints & ((1 << (bits - 1)) - 1)), ints)


def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """As upstream's check.expect_close: bitwise-equal 0, two NaNs 0, a NaN and a number or a
    finite and an infinite value infinitely far; otherwise the count of floats between."""
    if a.dtype.kind == "c":
        return np.maximum(ulp_distance(a.real, b.real), ulp_distance(a.imag, b.imag))
    fa = a.astype(np.float64)
    fb = b.astype(np.float64)
    d = np.abs(_ordered(a) - _ordered(b)).astype(np.float64)
    nan_a, nan_b = np.isnan(fa), np.isnan(fb)
    d = np.where(nan_a | nan_b, np.where(nan_a & nan_b, 0.0, np.inf), d)
    inf = np.isinf(fa) | np.isinf(fb)
    d = np.where(inf & (fa != fb) & ~(nan_a | nan_b), np.inf, d)
    return np.where(fa == fb, 0.0, d)


def scaled_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The error in ULPs of max(|native value|, 1): ULPs where the value is at least 1, an
    absolute error in units of ulp(1) below (for results near a zero of the function, in the
    subnormal tail, or the small part of a complex value, where relative error means little)."""
    if a.dtype.kind == "c":
        mag = np.maximum(np.abs(a.real.astype(np.float64)), np.abs(a.imag.astype(np.float64)))
        return np.maximum(_scaled(a.real, b.real, mag), _scaled(a.imag, b.imag, mag))
    return _scaled(a, b, np.abs(a.astype(np.float64)))


def _scaled(a: np.ndarray, b: np.ndarray, mag: np.ndarray) -> np.ndarray:
    d = ulp_distance(a, b)
    fa, fb = a.astype(np.float64), b.astype(np.float64)
    both_finite = np.isfinite(fa) & np.isfinite(fb)
    eps = float(ml_dtypes.finfo(a.dtype).eps)
    with np.errstate(invalid="ignore", over="ignore"):
        absolute = np.abs(fa - fb) / (eps * np.maximum(mag, 1.0))
    return np.where(both_finite & (np.abs(fa) < 1.0) & (d > 0), np.minimum(d, absolute), d)


# --- the measured table ---------------------------------------------------------------------------

Case = tuple[str, str, Callable[[], tuple[np.ndarray, ...]]]


def cases() -> list[Case]:
    out: list[Case] = []
    for et, dt in FLOATS.items():
        for op in UNARY_REAL:
            out.append((op, et, lambda dt=dt: (float_sweep(dt),)))
        for op in BINARY:
            out.append((op, et, lambda dt=dt, op=op: _binary_inputs(op, dt)))
    for et, dt in COMPLEX.items():
        for op in UNARY_COMPLEX:
            out.append((op, et, lambda dt=dt: (complex_grid(dt),)))
    return out


def _binary_inputs(op: str, dt: Any) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    if op == "next_after":
        x = float_sweep(dt, 500)
        y = rng.permutation(x)
        return x, np.concatenate([x[: len(x) // 4], y[len(x) // 4:]]).astype(dt)
    if op == "zeta":  # x > 1 and q > 0 mostly, some domain edges
        x = np.concatenate([rng.uniform(1.0, 12.0, 3000), [1.0, 0.5, 2.0, 3.0, -1.0, np.inf]])
        q = np.concatenate([rng.uniform(0.05, 20.0, 3000), [1.0, 1.0, -2.0, 0.0, 1.0, 1.0]])
        return x.astype(dt), q.astype(dt)
    n = np.concatenate([rng.integers(0, 5, 3000), [0, 1, 1.5, -1, 2, 3]])
    x = np.concatenate([rng.uniform(0.05, 20.0, 3000), [1.0, 2.0, 1.0, 1.0, -1.5, 0.0]])
    return n.astype(dt), x.astype(dt)


def regular(op: str, inputs: tuple[np.ndarray, ...]) -> np.ndarray:
    """The inputs the ULP bounds hold on: finite ones (complex: both parts), and for lgamma not
    subnormal (there the lowering's reflection is off by ~5e-5 relative: 103.325 for 1e-45
    where lgamma is 103.279, 744.486 for 5e-324 where it is 744.440)."""
    mask = np.ones(inputs[0].shape, bool)
    for x in inputs:
        mask &= np.isfinite(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64))
    x = inputs[0]
    if op == "lgamma":
        x = x.astype(np.float64)
        mask &= (x == 0) | (np.abs(x) >= float(ml_dtypes.finfo(inputs[0].dtype).smallest_normal))
    if x.dtype.kind == "c" and op in ("atan", "atanh"):
        # atanh(±1 + tiny i) (atan(tiny ± i)): the lowering squares the tiny part to 0 and
        # returns an infinite real part (the value is about 44 for complex64)
        one, tiny = (x.real, x.imag) if op == "atanh" else (x.imag, x.real)
        small = np.sqrt(float(np.finfo(one.dtype).tiny))
        mask &= ~((np.abs(one) == 1) & (np.abs(tiny) < small))
    return mask


def measure(op: str, et: str, inputs: tuple[np.ndarray, ...]
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ULP distance, scaled distance, regular-input mask) of the decomposition from the
    native kernel."""
    a, b = native_and_lowered(op, et, *inputs)
    return ulp_distance(a, b), scaled_distance(a, b), regular(op, inputs)


def main() -> None:
    print("| op | type | max ULP | max scaled ULP | 99.9% scaled | edge inputs that differ | n |")
    print("|---|---|---|---|---|---|---|")
    for op, et, make in cases():
        d, s, reg = measure(op, et, make())
        sr = s[reg]
        p = float(np.percentile(sr, 99.9)) if sr.size else 0.0
        edge = int(((s > 0) & ~reg).sum())
        print(f"| {op} | {et} | {float(d[reg].max()):.4g} | {float(sr.max()):.4g} | {p:.3g} | "
              f"{edge} of {int((~reg).sum())} | {d.size} |")


if __name__ == "__main__":
    main()
