"""Element-wise ops against the upstream interpreter and XLA, for every element type they take.

One batch per element type: every element-wise op the spec allows on that type (unary,
binary, compare in every direction and compare_type, select, clamp, reduce_precision) applied
to the same random inputs with special values; one program per batch and oracle.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from difftools import EXACT, Batch, Case, Tol, params, seed, ulps
from shlo.testing.programs import ALL_TYPES, FunctionBuilder, Val, random_array
from shlo.types import element_type

N = 32

UNARY = {
    # op: kinds (b = i1, s = signed, u = unsigned, f = float, c = complex)
    "abs": "sfc", "negate": "sufc", "not": "bsu", "sign": "sfc", "popcnt": "su",
    "count_leading_zeros": "su", "ceil": "f", "floor": "f", "round_nearest_afz": "f",
    "round_nearest_even": "f", "sqrt": "fc", "rsqrt": "fc", "cbrt": "fc", "exponential": "fc",
    "exponential_minus_one": "fc", "log": "fc", "log_plus_one": "fc", "logistic": "fc",
    "sine": "fc", "cosine": "fc", "tan": "fc", "tanh": "fc", "is_finite": "f", "real": "fc",
    "imag": "fc",
}
BINARY = {
    "add": "bsufc", "subtract": "sufc", "multiply": "bsufc", "divide": "sufc",
    "remainder": "sufc", "maximum": "bsufc", "minimum": "bsufc", "and": "bsu", "or": "bsu",
    "xor": "bsu", "power": "sufc", "atan2": "fc", "shift_left": "su",
    "shift_right_arithmetic": "su", "shift_right_logical": "su",
}
TRANSCENDENTAL = {"rsqrt", "cbrt", "exponential", "exponential_minus_one", "log", "log_plus_one",
                  "logistic", "sine", "cosine", "tan", "tanh", "power", "atan2"}
REDUCE_PRECISION = [(5, 10), (8, 7), (4, 3), (5, 2), (2, 1), (8, 23)]


def kind(et: str) -> str:
    t = element_type(et)
    return "b" if t.is_bool else "s" if t.is_signed else "u" if t.is_unsigned else \
        "c" if t.is_complex else "f"


def part(et: str) -> str:
    return et[len("complex<"):-1] if et.startswith("complex") else et


# --- tolerances and known divergences --------------------------------------------------------


def _narrow(et: str) -> bool:
    return element_type(et).dtype.itemsize < 4 and kind(et) == "f"


def tolerance(op: str, et: str) -> Tol:
    k = kind(et)
    if k in "bsu":
        return EXACT
    if k == "c":
        if op in ("add", "subtract", "negate", "real", "imag", "select", "maximum", "minimum"):
            return EXACT
        rel = 1e-5 if et == "complex<f32>" else 1e-13
        return Tol("rel", rel, (("xla", Tol("rel", rel * 10)),))
    if op in TRANSCENDENTAL:
        # upstream computes in double and rounds once, as shlo; XLA uses its own f32/f64
        # approximations (narrow types: computed in f32, then rounded)
        return ulps(1, xla=1 if _narrow(et) else 4)
    if op == "sqrt" and _narrow(et):
        return ulps(0, xla=1)  # XLA computes narrow sqrt in f32 and rounds twice
    return EXACT


def _ints(a: np.ndarray) -> np.ndarray:
    return a.astype(np.int64) if a.dtype.kind == "i" or a.dtype.itemsize < 8 else \
        a.astype(np.uint64).astype(np.float64)


def allow_for(op: str, et: str) -> Any:
    """Documented divergences of one oracle from shlo (docs/differential.md)."""
    k = kind(et)
    if op == "power" and k in "su":
        def allow(oracle: str, args: list, ours: Any, theirs: Any) -> np.ndarray:
            # XLA's integer power with a negative exponent: 0 for every base (shlo and
            # upstream: 1 for base 1, +-1 for base -1)
            e = _ints(args[2])
            return (e < 0) if oracle == "xla" else np.zeros(np.shape(ours), bool)
        return allow
    if op in TRANSCENDENTAL and _narrow(et):
        def allow_sub(oracle: str, args: list, ours: Any, theirs: Any) -> np.ndarray:
            # narrow types: XLA's f32 approximations lose accuracy on results near the
            # smallest normal (within one smallest-normal of each other)
            from shlo.testing.programs import float_info

            tiny = float(float_info(ours.dtype).tiny)
            d = np.abs(ours.astype(np.float64) - theirs.astype(np.float64))
            return (d <= tiny) if oracle == "xla" else np.zeros(np.shape(ours), bool)
        return allow_sub
    return None


# --- the batches -----------------------------------------------------------------------------


def _unary(op: str, res: str) -> Any:
    return lambda fb, ins: fb.op1(op, [ins[0]], ins[0].shape, res)


def _binary(op: str, res: str, lhs: int = 0, rhs: int = 1) -> Any:
    return lambda fb, ins: fb.op1(op, [ins[lhs], ins[rhs]], ins[0].shape, res)


def _compare(direction: str, ctype: str) -> Any:
    attrs = (f"comparison_direction = #stablehlo<comparison_direction {direction}>, "
             f"compare_type = #stablehlo<comparison_type {ctype}>")
    return lambda fb, ins: fb.op1("compare", [ins[0], ins[1]], ins[0].shape, "i1", attrs)


def _select(fb: FunctionBuilder, ins: list[Val]) -> Val:
    return fb.op1("select", [ins[-1], ins[0], ins[1]], ins[0].shape, ins[0].et)


def _clamp(fb: FunctionBuilder, ins: list[Val]) -> Val:
    lo = fb.op1("minimum", [ins[0], ins[1]], ins[0].shape, ins[0].et)
    return fb.op1("clamp", [lo, ins[0], ins[1]], ins[0].shape, ins[0].et)


def _clamp_scalar(fb: FunctionBuilder, ins: list[Val]) -> Val:
    et = ins[0].et
    r = fb.op1("reshape", [fb.op1("slice", [ins[1]], (1,), et,
                                  "start_indices = array<i64: 0>, limit_indices = array<i64: 1>,"
                                  " strides = array<i64: 1>")], (), et)
    return fb.op1("clamp", [r, ins[0], r], ins[0].shape, et)


def cases_for(et: str) -> list[Case]:
    k = kind(et)
    cases: list[Case] = []

    def add(label: str, build: Any, op: str) -> None:
        cases.append(Case(label, build, tolerance(op, et), allow_for(op, et)))

    for op, kinds in UNARY.items():
        if k in kinds:
            res = "i1" if op == "is_finite" else part(et) if op in ("real", "imag", "abs") \
                else et
            add(op, _unary(op, res), op)
    for op, kinds in BINARY.items():
        if k in kinds:
            if k in "su" and op in ("divide", "remainder"):
                add(op, _binary(op, et, 0, 3), op)          # divisor input: see oracle_args
            elif k in "su" and op in ("power", "shift_left", "shift_right_arithmetic",
                                      "shift_right_logical"):
                add(op, _binary(op, et, 0, 2), op)          # small exponents / shift amounts
            else:
                add(op, _binary(op, et), op)
    if et in ("f32", "f64"):
        add("complex", _binary("complex", f"complex<{et}>"), "complex")
    ctypes = {"b": ["UNSIGNED"], "s": ["SIGNED"], "u": ["UNSIGNED"], "f": ["FLOAT", "TOTALORDER"],
              "c": ["FLOAT"]}[k]
    for c in ctypes:
        for d in ["EQ", "NE", "GE", "GT", "LE", "LT"]:
            add(f"compare_{d}_{c}", _compare(d, c), "compare")
    add("select", _select, "select")
    add("clamp", _clamp, "clamp")
    add("clamp_scalar_bounds", _clamp_scalar, "clamp")
    if k == "f":
        for e, m in REDUCE_PRECISION:
            attrs = f"exponent_bits = {e} : i32, mantissa_bits = {m} : i32"
            add(f"reduce_precision_e{e}m{m}",
                lambda fb, ins, a=attrs: fb.op1("reduce_precision", [ins[0]], ins[0].shape, et,
                                                a), "reduce_precision")
    return cases


def _no_zero_divisor(oracle: str, args: list[np.ndarray]) -> list[np.ndarray]:
    """The upstream interpreter aborts (SIGFPE) on integer division by zero."""
    if oracle != "upstream":
        return args
    d = args[3].copy()
    d[d == 0] = 1
    return args[:3] + [d] + args[4:]


def batch_for(et: str) -> Batch:
    rng = np.random.default_rng(seed("elementwise-" + et))
    k = kind(et)
    shape = (N,)
    a = random_array(et, shape, rng)
    b = random_array(et, shape, rng)
    pred = rng.integers(0, 2, N).astype(bool)
    if k in "su":
        w = element_type(et).width  # type: ignore[attr-defined]
        small = random_array(et, shape, rng, specials=False, low=-1, high=w + 1)
        divisor = b.copy()
        divisor[:3] = np.array([0, 1, 0]).astype(b.dtype)
        if k == "s":
            a[:2] = np.array([element_type(et).min, element_type(et).min]).astype(a.dtype)
            divisor[1] = np.array(-1).astype(b.dtype)  # INT_MIN / -1
        types = [et, et, et, et, "i1"]
        return Batch(f"{et}", [(shape, t) for t in types], [a, b, small, divisor, pred],
                     cases_for(et), _no_zero_divisor)
    return Batch(f"{et}", [(shape, et), (shape, et), (shape, "i1")], [a, b, pred],
                 cases_for(et))


BATCHES = {et: batch_for(et) for et in ALL_TYPES}


@pytest.mark.parametrize("oracle,key,label", params(list(BATCHES.values())))
def test_elementwise(runner: Any, oracle: str, key: str, label: str) -> None:
    runner.check(BATCHES[key], label, oracle)
