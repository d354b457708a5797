"""Element-wise ops and `convert` against XLA on a second set of inputs (was
tests/ops/test_elementwise_xla.py, with its own harness; now batches of difftools).

For each element type, one program applies every op that takes that type to 48 random inputs
plus special values; for `convert`, one program converts one source type to every other type.
These inputs differ from test_elementwise_diff.py's: shift amounts, exponents and divisors
over the whole range of the type for half of the elements, complex operands uniform in a box,
and a reduce_precision to (e3, m1). Results must match exactly for exactly-rounded ops (zeros
of either sign match, as in the original file: 0 ulps), within a few ulps for transcendental
functions (XLA uses its own approximations) and relatively for complex functions. Known,
documented differences are excused explicitly (docs/semantics/elementwise.md): XLA flushes
f32/f64/bf16 subnormals, computes narrow transcendental functions in f32, reads only the low
bits of an integer power's exponent, counts popcnt of sub-byte integers sign-extended, and
converts f64/i64 to narrow floats through f32 (rounding twice) where shlo rounds once. An op
that disagrees in the combined program is compared again on its own (XLA's fusion of the
combined program can change results).

Compiling takes XLA a few seconds per program, so by default a representative subset of the
element types runs; set SHLO_XLA_ALL_TYPES=1 to run every type.
"""

from __future__ import annotations

import os
import zlib
from typing import Any

import numpy as np
import pytest

pytest.importorskip("jax")

from difftools import EXACT, Batch, Case, Tol, params
from shlo.ops.check import ulp_distance
from shlo.testing.programs import float_info
from shlo.types import element_type

N = 48  # elements per operand

INT_TYPES = ["i2", "i4", "i8", "i16", "i32", "i64", "ui2", "ui4", "ui8", "ui16", "ui32", "ui64"]
FLOAT_TYPES = ["f8E4M3FN", "f8E5M2", "f8E4M3FNUZ", "f8E5M2FNUZ", "f8E4M3B11FNUZ", "f8E4M3",
               "f8E3M4", "f4E2M1FN", "bf16", "f16", "f32", "f64"]
COMPLEX_TYPES = ["complex<f32>", "complex<f64>"]

TRANSCENDENTAL = {"exponential", "exponential_minus_one", "log", "log_plus_one", "logistic",
                  "sine", "cosine", "tan", "tanh", "power", "atan2", "cbrt", "rsqrt"}

ALL_TYPES = os.environ.get("SHLO_XLA_ALL_TYPES", "") not in ("", "0")
OP_TYPES = ["i1"] + INT_TYPES + FLOAT_TYPES + COMPLEX_TYPES if ALL_TYPES else \
    ["i1", "i4", "ui64", "f8E4M3FNUZ", "bf16", "f32", "complex<f64>"]
CONVERT_TYPES = ["i1"] + INT_TYPES + FLOAT_TYPES + COMPLEX_TYPES
CONVERT_SOURCES = CONVERT_TYPES if ALL_TYPES else ["ui4", "i64", "f16", "f64", "complex<f32>"]


# --- tolerances and excuses ------------------------------------------------------------------


def tolerance(op: str, src: str, res: str) -> Tol:
    """Exact for integers; 0 ulps for exactly-rounded float results; 4 ulps (1 for types
    narrower than f32) for transcendental functions and |complex|; 1 ulp for narrow sqrt (XLA
    rounds it twice: f8E3M4 sqrt(15.5) = 4.0); relative 2e-5 / 1e-12 for complex functions."""
    r = element_type(res)
    if r.is_bool or r.is_integer:
        return EXACT
    if r.is_complex:
        if op in ("add", "subtract", "negate", "convert", "select"):
            return Tol("ulp", 0)
        return Tol("rel", 2e-5 if res == "complex<f32>" else 1e-12)
    narrow = r.dtype.itemsize < 4
    if op in TRANSCENDENTAL or (op == "abs" and element_type(src).is_complex):
        return Tol("ulp", 1 if narrow else 4)
    if op == "sqrt" and narrow:
        return Tol("ulp", 1)
    return Tol("ulp", 0)


def _narrow_underflow(oracle: str, args: list, ours: Any, theirs: Any) -> np.ndarray:
    """XLA's approximations of narrow transcendental functions lose subnormal results:
    results within one smallest normal of each other are excused."""
    tiny = float(float_info(ours.dtype).tiny)
    with np.errstate(invalid="ignore"):
        return np.abs(ours.astype(np.float64) - theirs.astype(np.float64)) <= tiny


def _integer_power(exponent: int) -> Any:
    def allow(oracle: str, args: list, ours: Any, theirs: Any) -> np.ndarray:
        """XLA's integer power is wrong for exponents >= 64 (it reads the low 6 bits) and
        for negative ones: only exponents in [0, 64) are compared."""
        a = args[exponent]
        e = a.astype(np.int64 if a.dtype.kind == "i" or a.dtype.itemsize < 8 else np.uint64)
        return ~((e >= 0) & (e < 64))
    return allow


POPCNT_SIGN_EXTENDED = "XLA counts the bits of the sign-extended 8-bit value (popcnt(-8:i4) = 5)"


# --- the ops of one element type ---------------------------------------------------------------


def _op(name: str, operands: list[int], res: str, attrs: str) -> Any:
    return lambda fb, ins: fb.op1(name, [ins[i] for i in operands], (N,), res, attrs)


def _cmp(direction: str, ctype: str) -> str:
    return (f"comparison_direction = #stablehlo<comparison_direction {direction}>, "
            f"compare_type = #stablehlo<comparison_type {ctype}>")


def cases_for(t: str) -> tuple[list[str], list[Case]]:
    """The program inputs (element types) and one case per op applied to them."""
    et = element_type(t)
    cases: list[Case] = []

    def add(name: str, operands: list[int], result: str = t, attrs: str = "",
            label: str | None = None, types: list[str] | None = None) -> None:
        src = (types or [t])[-1]
        c = Case(label or name, _op(name, operands, result, attrs), tolerance(name, src, result))
        r = element_type(result)
        if name in TRANSCENDENTAL and r.is_float and r.dtype.itemsize < 4:
            c.allow = _narrow_underflow
        if name == "power" and r.is_integer:
            c.allow = _integer_power(operands[1])
        if name == "popcnt" and t in ("i2", "i4"):
            c.skip["xla"] = POPCNT_SIGN_EXTENDED
        cases.append(c)

    inputs = [t, t, "i1"]
    if et.is_bool:
        for n in ["and", "or", "xor", "add", "multiply", "maximum", "minimum"]:
            add(n, [0, 1])
        add("not", [0])
    elif et.is_integer:
        for n in ["add", "subtract", "multiply", "divide", "remainder", "and", "or", "xor",
                  "maximum", "minimum", "power", "shift_left", "shift_right_arithmetic",
                  "shift_right_logical"]:
            add(n, [0, 1])
        for n in ["negate", "not", "popcnt", "count_leading_zeros"]:
            add(n, [0])
        if et.is_signed:
            add("abs", [0])
            add("sign", [0])
    elif et.is_float:
        for n in ["add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum",
                  "power", "atan2"]:
            add(n, [0, 1])
        for n in ["abs", "negate", "sign", "ceil", "floor", "round_nearest_afz",
                  "round_nearest_even", "sqrt", "rsqrt", "cbrt", "exponential",
                  "exponential_minus_one", "log", "log_plus_one", "logistic", "sine", "cosine",
                  "tan", "tanh"]:
            add(n, [0])
        add("is_finite", [0], "i1")
        for e, m in [(5, 2), (8, 7), (4, 3), (3, 1)]:
            add("reduce_precision", [0], t, f"exponent_bits = {e} : i32, mantissa_bits = {m} : i32",
                label=f"reduce_precision_e{e}m{m}")
    else:  # complex
        for n in ["add", "subtract", "multiply", "divide", "power"]:
            add(n, [0, 1])
        for n in ["negate", "sign", "sqrt", "rsqrt", "exponential", "exponential_minus_one",
                  "log", "log_plus_one", "logistic", "sine", "cosine", "tan", "tanh"]:
            add(n, [0])
        part = et.element.name  # type: ignore[attr-defined]
        add("abs", [0], part)
        add("real", [0], part)
        add("imag", [0], part)
    if et.is_complex:
        directions = [("EQ", "FLOAT"), ("NE", "FLOAT")]
    elif et.is_float:
        directions = [(d, c) for d in ["EQ", "NE", "GE", "GT", "LE", "LT"]
                      for c in ["FLOAT", "TOTALORDER"]]
    else:
        ctype = "SIGNED" if et.is_signed else "UNSIGNED"
        directions = [(d, ctype) for d in ["EQ", "NE", "GE", "GT", "LE", "LT"]]
    for d, c in directions:
        add("compare", [0, 1], "i1", _cmp(d, c), label=f"compare_{d}_{c}")
    add("select", [2, 0, 1], t, types=["i1", t, t])
    if not et.is_complex:
        add("clamp", [1, 0, 1], t)
    return inputs, cases


# --- inputs ----------------------------------------------------------------------------------


def _float_inputs(dt: np.dtype, rng: np.random.Generator) -> np.ndarray:
    with np.errstate(all="ignore"):
        fi = float_info(dt)
        special = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, float(fi.max),
                            -float(fi.max), float(fi.tiny), np.inf, -np.inf, np.nan],
                           np.float64)
        mag = 2.0 ** rng.uniform(-6, 6, N) * rng.choice([-1.0, 1.0], N)
        x = np.concatenate([special, mag])[:N]
        rng.shuffle(x)
        return x.astype(dt)


def make_inputs(et_name: str, seed: int) -> list[np.ndarray]:
    """Two operands and a predicate; integer right operands: small values first, then the
    whole range of the type (shift amounts, exponents and divisors beyond the width)."""
    et = element_type(et_name)
    rng = np.random.default_rng(seed)
    dt = et.dtype
    if et.is_bool:
        a = rng.integers(0, 2, N).astype(bool)
        b = rng.integers(0, 2, N).astype(bool)
    elif et.is_integer:
        lo, hi = et.min, et.max
        special = np.array([lo, hi, 0, 1, -1 if lo < 0 else 2, lo + 1], dtype=object)
        a = np.concatenate([special, rng.integers(lo, hi, N - 6, endpoint=True, dtype=np.int64
                                                  if lo < 0 else np.uint64)]).astype(object)
        b = np.concatenate([np.array([-1 if lo < 0 else 1, 0, 0, 3, 2, -1 if lo < 0 else 7],
                                     dtype=object),
                            rng.integers(0, min(hi, et.width + 2), N - 6, endpoint=True)
                            .astype(object)])
        b[N // 2:] = rng.integers(lo, hi, N - N // 2, endpoint=True,
                                  dtype=np.int64 if lo < 0 else np.uint64).astype(object)
        wide = np.int64 if lo < 0 else np.uint64
        a = a.astype(wide).astype(dt)
        b = b.astype(wide).astype(dt)
    elif et.is_float:
        a = _float_inputs(dt, rng)
        b = _float_inputs(dt, rng)
    else:
        a = (rng.uniform(-4, 4, N) + 1j * rng.uniform(-4, 4, N)).astype(dt)
        b = (rng.uniform(-2, 2, N) + 1j * rng.uniform(-2, 2, N)).astype(dt)
    pred = rng.integers(0, 2, N).astype(bool)
    return [a, b, pred]


def ops_batch(et_name: str) -> Batch:
    inputs, cases = cases_for(et_name)
    args = make_inputs(et_name, seed=zlib.crc32(et_name.encode()))
    return Batch(f"xla-ops-{et_name}", [((N,), t) for t in inputs], args, cases,
                 retry_alone=True)


OPS = {b.key: b for b in map(ops_batch, OP_TYPES)}


@pytest.mark.parametrize("oracle,key", params(list(OPS.values()), ("xla",)))
def test_ops_match_xla(runner: Any, oracle: str, key: str) -> None:
    runner.check_batch(OPS[key], oracle)


# --- convert: every pair ---------------------------------------------------------------------


def _convert_inputs(src: str) -> np.ndarray:
    et = element_type(src)
    rng = np.random.default_rng(17)
    if et.is_bool or et.is_integer:
        return make_inputs(src, 3)[0]
    dt = et.dtype
    part = np.float64 if dt == np.complex128 else np.float32 if et.is_complex else dt
    with np.errstate(all="ignore"):
        vals = np.concatenate([
            np.array([0.0, -0.0, 1.5, -2.5, 2.5, 300.0, -300.0, 1e10, -1e10, 65520.0, 448.0,
                      1e-3, 2.0**63, 2.0**64, -2.0**63, 2.0**31, np.inf, -np.inf, np.nan]),
            rng.standard_normal(N) * 10.0 ** rng.integers(-2, 4, N)])[:N].astype(part)
    if et.is_complex:
        z = np.empty(vals.shape, dt)
        z.real, z.imag = vals, vals[::-1]
        return z
    return vals


def _convert_excuses(src: str, dst: str) -> Any:
    """XLA converts f64/i64 (and complex<f64>) to floats narrower than f32 through f32,
    rounding twice, where shlo rounds once: elements where XLA's result is the twice-rounded
    value are excused. NaN converted to a 1-byte float: the formats without NaN give
    different values (shlo: ml_dtypes' choice), so NaN inputs are excused."""
    s, d = element_type(src), element_type(dst)
    twice = d.is_float and d.dtype.itemsize < 4
    nan = d.is_float and d.dtype.itemsize == 1 and not (s.is_integer or s.is_bool)
    if not (twice or nan):
        return None

    def allow(oracle: str, args: list, ours: Any, theirs: Any) -> np.ndarray:
        x = np.real(args[0]) if args[0].dtype.kind == "c" else args[0]
        mask = np.zeros(np.shape(ours), bool)
        with np.errstate(all="ignore"):
            if twice:
                dr = np.asarray(x).astype(np.float32).astype(d.dtype)
                mask |= ulp_distance(dr, np.asarray(theirs), d) == 0
            if nan:
                mask |= np.isnan(np.asarray(x).astype(np.float64))
        return mask
    return allow


def _convert(dst: str) -> Any:
    return lambda fb, ins: fb.op1("convert", [ins[0]], (N,), dst)


def convert_batch(src: str) -> Batch:
    cases = []
    for dst in CONVERT_TYPES:
        if dst == src:
            continue
        c = Case(f"to_{dst}", _convert(dst), tolerance("convert", src, dst),
                 _convert_excuses(src, dst))
        if src == "f4E2M1FN" and element_type(dst).is_integer:
            c.skip["xla"] = "XLA converts f4E2M1FN's largest value 6.0 as if it were inf"
        cases.append(c)
    return Batch(f"xla-convert-{src}", [((N,), src)], [_convert_inputs(src)], cases)


CONVERT = {b.key: b for b in map(convert_batch, CONVERT_SOURCES)}


@pytest.mark.parametrize("oracle,key", params(list(CONVERT.values()), ("xla",)))
def test_convert_matches_xla(runner: Any, oracle: str, key: str) -> None:
    runner.check_batch(CONVERT[key], oracle)


def test_batches_build_valid_programs() -> None:
    """Every batch's program verifies (without running any oracle)."""
    import shlo

    for b in [*OPS.values(), *CONVERT.values()]:
        shlo.verify(shlo.parse(b.program().core_text()))
