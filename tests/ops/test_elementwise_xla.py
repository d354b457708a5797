"""Differential tests of the element-wise ops against XLA (skipped without jax).

For each element type, one StableHLO program applies every op that takes that type to random
inputs (plus special values); XLA's CPU client compiles and runs it, and shlo's kernels run on
the same inputs. Results must match exactly for exactly-rounded ops, and within a few ulps for
transcendental functions (XLA uses its own approximations). Known, documented differences are
allowed explicitly (docs/semantics/elementwise.md): XLA flushes f32/f64 subnormals to zero and
converts f64/i64 to narrow floats through f32 (rounding twice), where shlo rounds once.

Compiling takes XLA a few seconds per program, so by default a representative subset of the
element types runs; set SHLO_XLA_ALL_TYPES=1 to run every type (about 3 minutes).
"""

from __future__ import annotations

import os
import zlib
from dataclasses import dataclass, field
from typing import Any

import ml_dtypes
import numpy as np
import pytest

from shlo.attributes import EnumAttr, IntegerAttr
from shlo.interpreter.evaluator import PrepareContext
from shlo.ir import Operation, Value
from shlo.testing import oracles
from shlo.types import element_type, tensor

pytestmark = pytest.mark.skipif(not oracles.available(), reason="jax is not installed")

N = 48  # elements per operand

INT_TYPES = ["i2", "i4", "i8", "i16", "i32", "i64", "ui2", "ui4", "ui8", "ui16", "ui32", "ui64"]
FLOAT_TYPES = ["f8E4M3FN", "f8E5M2", "f8E4M3FNUZ", "f8E5M2FNUZ", "f8E4M3B11FNUZ", "f8E4M3",
               "f8E3M4", "f4E2M1FN", "bf16", "f16", "f32", "f64"]
COMPLEX_TYPES = ["complex<f32>", "complex<f64>"]

TRANSCENDENTAL = {"exponential", "exponential_minus_one", "log", "log_plus_one", "logistic",
                  "sine", "cosine", "tan", "tanh", "power", "atan2", "cbrt", "rsqrt"}


@dataclass
class Case:
    """One op applied in the combined program."""

    name: str                    # op mnemonic
    operands: list[int]          # indices into the program's inputs
    result: str                  # result element type
    props: dict[str, Any] = field(default_factory=dict)
    attr_text: str = ""          # the same attributes in MLIR syntax
    operand_types: list[str] = field(default_factory=list)


def _cmp(direction: str, ctype: str) -> tuple[dict[str, Any], str]:
    props = {"comparison_direction": EnumAttr("stablehlo", "comparison_direction", direction),
             "compare_type": EnumAttr("stablehlo", "comparison_type", ctype)}
    text = (f"{{comparison_direction = #stablehlo<comparison_direction {direction}>, "
            f"compare_type = #stablehlo<comparison_type {ctype}>}}")
    return props, text


def cases_for(et_name: str) -> tuple[list[str], list[Case]]:
    """The program inputs (element types) and the ops applied to them."""
    et = element_type(et_name)
    t = et_name
    cases: list[Case] = []

    def add(name: str, operands: list[int], result: str = t, props: dict | None = None,
            text: str = "", types: list[str] | None = None) -> None:
        cases.append(Case(name, operands, result, props or {}, text,
                          types or [t] * len(operands)))

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
            add("reduce_precision", [0], t,
                {"exponent_bits": IntegerAttr(e), "mantissa_bits": IntegerAttr(m)},
                f"{{exponent_bits = {e} : i32, mantissa_bits = {m} : i32}}")
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
        props, text = _cmp(d, c)
        add("compare", [0, 1], "i1", props, text)
    add("select", [2, 0, 1], t, types=["i1", t, t])
    if not et.is_complex:
        add("clamp", [1, 0, 1], t)
    return inputs, cases


# --- inputs ----------------------------------------------------------------------------------


def _float_inputs(dt: np.dtype, rng: np.random.Generator) -> np.ndarray:
    with np.errstate(all="ignore"):
        fi = ml_dtypes.finfo(dt) if dt not in (np.float32, np.float64, np.float16) \
            else np.finfo(dt)
        special = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, float(fi.max),
                            -float(fi.max), float(fi.tiny), np.inf, -np.inf, np.nan],
                           np.float64)
        mag = 2.0 ** rng.uniform(-6, 6, N) * rng.choice([-1.0, 1.0], N)
        x = np.concatenate([special, mag])[:N]
        rng.shuffle(x)
        return x.astype(dt)


def make_inputs(et_name: str, seed: int) -> list[np.ndarray]:
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
        part = np.float32 if dt == np.complex64 else np.float64
        a = (rng.uniform(-4, 4, N) + 1j * rng.uniform(-4, 4, N)).astype(dt)
        b = (rng.uniform(-2, 2, N) + 1j * rng.uniform(-2, 2, N)).astype(dt)
        assert part
    pred = rng.integers(0, 2, N).astype(bool)
    return [a, b, pred]


# --- running ---------------------------------------------------------------------------------


def program(inputs: list[str], cases: list[Case]) -> str:
    args = ", ".join(f"%a{i}: tensor<{N}x{t}>" for i, t in enumerate(inputs))
    results = ", ".join(f"tensor<{N}x{c.result}>" for c in cases)
    lines = [f"func.func @main({args}) -> ({results}) {{"]
    for k, c in enumerate(cases):
        ops = ", ".join(f"%a{i}" for i in c.operands)
        sig = ", ".join(f"tensor<{N}x{t}>" for t in c.operand_types)
        lines.append(f'  %r{k} = "stablehlo.{c.name}"({ops}) {c.attr_text} : ({sig}) -> '
                     f"tensor<{N}x{c.result}>")
    lines.append("  return " + ", ".join(f"%r{k}" for k in range(len(cases))) + " : " + results)
    lines.append("}")
    return "\n".join(lines)


def shlo_run(case: Case, args: list[np.ndarray]) -> np.ndarray:
    vals = [Value(tensor((N,), t)) for t in case.operand_types]
    op = Operation("stablehlo." + case.name, vals, [tensor((N,), case.result)],
                   properties=case.props)
    with np.errstate(all="ignore"):
        (out,) = PrepareContext(None).prepare(op)(*[args[i] for i in case.operands])
    out = np.asarray(out)
    assert out.dtype == element_type(case.result).dtype
    return out


def xla_results(inputs: list[str], cases: list[Case], args: list[np.ndarray]
                ) -> dict[int, np.ndarray]:
    """XLA's result of every case it accepts (the combined program first, then one by one)."""
    try:
        outs = oracles.xla_run(program(inputs, cases), args)
        return dict(enumerate(outs))
    except oracles.OracleError:
        pass
    got: dict[int, np.ndarray] = {}
    for k, c in enumerate(cases):
        try:
            got[k] = oracles.xla_run(program(inputs, [c]), args)[0]
        except oracles.OracleError:
            continue
    return got


# --- comparing -------------------------------------------------------------------------------


def _ulp_keys(x: np.ndarray) -> np.ndarray:
    dt = x.dtype
    fi = ml_dtypes.finfo(dt) if dt not in (np.float16, np.float32, np.float64) else np.finfo(dt)
    w = int(fi.bits)
    bits = x.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize])
    bits = bits.astype(np.uint64)
    if 1 + int(fi.nexp) + int(fi.nmant) != w:  # no sign bit (f8E8M0FNU)
        return bits.astype(np.int64)
    mag = (bits & np.uint64((1 << (w - 1)) - 1)).astype(np.int64)
    neg = (bits >> np.uint64(w - 1)) != 0
    return np.where(neg, -mag, mag)


def float_mismatches(ours: np.ndarray, theirs: np.ndarray, ulps: int, ftz: bool) -> np.ndarray:
    o64, t64 = ours.astype(np.float64), theirs.astype(np.float64)
    both_nan = np.isnan(o64) & np.isnan(t64)
    if ftz:  # XLA flushes f32/f64 subnormals: compare them as zeros
        tiny = ml_dtypes.finfo(ours.dtype).tiny
        o = np.where(np.abs(o64) < tiny, 0.0, o64).astype(ours.dtype)
        t = np.where(np.abs(t64) < tiny, 0.0, t64).astype(theirs.dtype)
    else:
        o, t = ours, theirs
    dist = np.abs(_ulp_keys(o) - _ulp_keys(t))
    inf_ok = np.isinf(o64) & (o64 == t64)
    return ~(both_nan | inf_ok | ((dist <= ulps) & ~np.isnan(o64) & ~np.isnan(t64)))


def mismatches(case: Case, ours: np.ndarray, theirs: np.ndarray) -> np.ndarray:
    et = element_type(case.result)
    if et.is_bool or et.is_integer:
        return ours != theirs
    # XLA flushes subnormals of f32 and f64, and of bf16 (computed in f32)
    ftz = ours.dtype in (np.float32, np.float64, np.complex64, np.complex128,
                         np.dtype(ml_dtypes.bfloat16))
    narrow = ours.dtype.itemsize < 4
    transcendental = case.name in TRANSCENDENTAL or (
        case.name == "abs" and element_type(case.operand_types[0]).is_complex)
    if et.is_complex and case.name in ("add", "subtract", "negate", "convert", "select"):
        return float_mismatches(ours.real, theirs.real, 0, ftz) | \
            float_mismatches(ours.imag, theirs.imag, 0, ftz)
    if et.is_complex:
        tol = 2e-5 if ours.dtype == np.complex64 else 1e-12
        scale = np.maximum(np.abs(ours), np.abs(theirs)) + (1e-30 if not ftz else 1e-30)
        close = np.abs(ours - theirs) <= tol * scale
        nan = np.isnan(ours) & np.isnan(theirs)
        return ~(close | nan)
    if transcendental:
        ulps = 4 if not narrow else 1
    elif case.name == "sqrt" and narrow:
        ulps = 1  # XLA rounds sqrt of narrow types twice (f8E3M4 sqrt(15.5) = 4.0)
    else:
        ulps = 0
    bad = float_mismatches(ours, theirs, ulps, ftz)
    if transcendental and narrow:  # XLA's approximations lose subnormal results
        tiny = float(ml_dtypes.finfo(ours.dtype).tiny)
        bad &= ~(np.abs(ours.astype(np.float64) - theirs.astype(np.float64)) <= tiny)
    return bad


def _describe(case: Case, args: list[np.ndarray], ours: np.ndarray, theirs: np.ndarray,
              bad: np.ndarray) -> str:
    i = int(np.flatnonzero(bad)[0])
    ins = ", ".join(repr(args[k][i]) for k in case.operands)
    return (f"{case.name} {case.attr_text} ({ins}): shlo {ours[i]!r}, xla {theirs[i]!r} "
            f"[{int(bad.sum())} of {bad.size}]")


# XLA behaviours that differ from shlo (docs/semantics/elementwise.md)
KNOWN: dict[tuple[str, str], str] = {
    ("popcnt", "i2"): "XLA counts the bits of the sign-extended 8-bit value (popcnt(-8:i4) = 5)",
    ("popcnt", "i4"): "XLA counts the bits of the sign-extended 8-bit value (popcnt(-8:i4) = 5)",
}


def _restrict(case: Case, args: list[np.ndarray], bad: np.ndarray) -> np.ndarray:
    """Drop elements where XLA is known to be wrong."""
    if case.name == "power" and element_type(case.result).is_integer:
        e = args[case.operands[1]].astype(np.int64 if args[1].dtype.kind == "i" or
                                          args[1].dtype.itemsize < 8 else np.uint64)
        return bad & (e >= 0) & (e < 64)  # XLA's integer power is wrong for exponents >= 2^k
    return bad


ALL_TYPES = os.environ.get("SHLO_XLA_ALL_TYPES", "") not in ("", "0")
OP_TYPES = ["i1"] + INT_TYPES + FLOAT_TYPES + COMPLEX_TYPES if ALL_TYPES else \
    ["i1", "i4", "ui64", "f8E4M3FNUZ", "bf16", "f32", "complex<f64>"]


@pytest.mark.parametrize("et_name", OP_TYPES)
def test_ops_match_xla(et_name: str) -> None:
    inputs, cases = cases_for(et_name)
    args = make_inputs(et_name, seed=zlib.crc32(et_name.encode()))
    theirs_all = xla_results(inputs, cases, args)
    if not theirs_all:
        pytest.skip(f"XLA supports no op on {et_name}")
    failures = []
    for k, case in enumerate(cases):
        if k not in theirs_all or (case.name, et_name) in KNOWN:
            continue
        ours = shlo_run(case, args)
        theirs = np.asarray(theirs_all[k])
        assert theirs.dtype == ours.dtype, (case.name, theirs.dtype, ours.dtype)
        bad = _restrict(case, args, mismatches(case, ours, theirs))
        if bad.any():  # XLA's fusion of the combined program can change results: run alone
            theirs = np.asarray(oracles.xla_run(program(inputs, [case]), args)[0])
            bad = _restrict(case, args, mismatches(case, ours, theirs))
        if bad.any():
            failures.append(f"{et_name} " + _describe(case, args, ours, theirs, bad))
    assert not failures, "\n".join(failures)


# --- convert: every pair ---------------------------------------------------------------------

CONVERT_TYPES = ["i1"] + INT_TYPES + FLOAT_TYPES + COMPLEX_TYPES


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
        return (vals + 1j * vals[::-1].astype(np.float64)).astype(dt) if False else \
            _complex(vals, dt)
    return vals


def _complex(vals: np.ndarray, dt: np.dtype) -> np.ndarray:
    z = np.empty(vals.shape, dt)
    z.real, z.imag = vals, vals[::-1]
    return z


def _double_rounded(x: np.ndarray, src: str, dst: str) -> np.ndarray | None:
    """What converting through float32 gives (XLA's result for f64/i64 -> narrow floats)."""
    et, dt = element_type(src), element_type(dst)
    if not dt.is_float or dt.dtype.itemsize >= 4:
        return None
    with np.errstate(all="ignore"):
        v = np.real(x) if et.is_complex else x
        return np.asarray(v).astype(np.float32).astype(dt.dtype)


@pytest.mark.parametrize("src", CONVERT_TYPES if ALL_TYPES else
                         ["ui4", "i64", "f16", "f64", "complex<f32>"])
def test_convert_matches_xla(src: str) -> None:
    x = _convert_inputs(src)
    cases = [Case("convert", [0], dst, operand_types=[src]) for dst in CONVERT_TYPES
             if dst != src]
    theirs_all = xla_results([src], cases, [x])
    if not theirs_all:
        pytest.skip(f"XLA does not convert from {src}")
    failures = []
    for k, case in enumerate(cases):
        if k not in theirs_all:
            continue
        if src == "f4E2M1FN" and element_type(case.result).is_integer:
            continue  # XLA converts f4E2M1FN's largest value 6.0 as if it were inf
        ours = shlo_run(case, [x])
        theirs = np.asarray(theirs_all[k])
        bad = mismatches(case, ours, theirs)
        dr = _double_rounded(x, src, case.result)
        if dr is not None:  # XLA rounds twice through f32; shlo rounds once
            bad &= ~float_mismatches(dr, theirs, 0, False)
        if element_type(case.result).is_float and ours.dtype.itemsize == 1:
            # no NaN in f4E2M1FN: NaN converts to ml_dtypes' -0, XLA's choice differs
            bad &= ~np.isnan(np.real(x).astype(np.float64)) if not element_type(src).is_integer \
                and not element_type(src).is_bool else bad
        if bad.any():
            failures.append(f"-> {case.result}: " + _describe(case, [x], ours, theirs, bad))
    assert not failures, "\n".join(failures)
