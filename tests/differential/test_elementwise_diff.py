"""Element-wise ops against the upstream interpreter and XLA, for every element type they take.

One batch per element type: every element-wise op the spec allows on that type (unary,
binary, compare in every direction and compare_type, select, clamp, reduce_precision) applied
to the same random inputs with special values; one program per batch and oracle.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("jax")

from difftools import ORACLES, EXACT, Batch, Case, Tol, params, seed, xfail_params, ulps
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
    "remainder": "suf",  # complex: "TBD" in the spec (#997); shlo and upstream reject it
    "maximum": "bsufc", "minimum": "bsufc", "and": "bsu", "or": "bsu",
    "xor": "bsu", "power": "sufc", "atan2": "fc", "shift_left": "su",
    "shift_right_arithmetic": "su", "shift_right_logical": "su",
}
# complex ops compared on inputs with special values (inf, NaN, huge, subnormal parts); the
# others get finite moderate operands: the spec does not define the special-value behaviour of
# complex functions, multiplication or division (C99 Annex G and XLA differ there)
COMPLEX_SPECIALS = {"add", "subtract", "negate", "real", "imag", "maximum", "minimum"}
ROUNDING = {"ceil", "floor", "round_nearest_afz", "round_nearest_even"}
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
        if op == "atan2":  # upstream: -i log((x + iy) / sqrt(x^2 + y^2)), each step rounded
            return Tol("rel", rel, (("xla", Tol("rel", rel * 10)), ("upstream", Tol("rel", 1e-3))))
        return Tol("rel", rel, (("xla", Tol("rel", rel * 10)),))
    if op in TRANSCENDENTAL:
        # upstream computes in double and rounds once, as shlo; XLA uses its own f32/f64
        # approximations (narrow types: computed in f32, then rounded)
        return ulps(1, xla=1 if _narrow(et) else 4)
    if op == "sqrt" and _narrow(et):
        return ulps(0, xla=1)  # XLA computes narrow sqrt in f32 and rounds twice
    return EXACT


def _ints(a: np.ndarray) -> np.ndarray:
    """Integer values as int64 (uint64 values above INT64_MAX as float64: only compared)."""
    if a.dtype.kind == "u" and a.dtype.itemsize == 8:
        return a.astype(np.float64)
    return a.astype(np.int64)


def _f64(a: np.ndarray) -> np.ndarray:
    return np.asarray(a).astype(np.float64)


def _none(ours: np.ndarray) -> np.ndarray:
    return np.zeros(np.shape(ours), bool)


# Each allowance: (oracle, op or None for every op, element types or None for all, why, mask
# function (args, ours, theirs) -> elements where the oracle's value is the documented
# divergence). docs/differential.md lists them with the spec's position.
ALLOWANCES: list[tuple[str, str | None, set[str] | None, str, Any]] = []


def allowance(oracle: str, op: str | None, types: set[str] | None, why: str) -> Any:
    def register(fn: Any) -> Any:
        ALLOWANCES.append((oracle, op, types, why, fn))
        return fn
    return register


NARROW = {"f4E2M1FN", "f8E4M3FN", "f8E5M2", "f8E4M3FNUZ", "f8E5M2FNUZ", "f8E4M3B11FNUZ",
          "f8E4M3", "f8E3M4", "bf16", "f16"}
F8_NON_IEEE = {"f4E2M1FN", "f8E4M3FN", "f8E4M3FNUZ", "f8E5M2FNUZ", "f8E4M3B11FNUZ"}


@allowance("xla", "power", {t for t in ALL_TYPES if kind(t) in "su"},
           "XLA's integer power reads only the low 6 bits of the exponent: 3^64 = 1 and "
           "3^65 = 3 (shlo and upstream: the exact power modulo 2^n)")
def _xla_int_power(args: list, ours: Any, theirs: Any) -> np.ndarray:
    return _ints(args[2]) >= 64


@allowance("xla", "popcnt", {"i4"},
           "XLA counts the bits of the sign-extended 8-bit value (popcnt(-8 : i4) = 5)")
def _xla_popcnt(args: list, ours: Any, theirs: Any) -> np.ndarray:
    return _ints(args[0]) < 0


@allowance("xla", None, NARROW,
           "XLA computes transcendental functions of narrow types in f32 with its own "
           "approximations: results within one smallest normal of each other near underflow")
def _xla_narrow_underflow(args: list, ours: Any, theirs: Any) -> np.ndarray:
    from shlo.testing.programs import float_info

    tiny = float(float_info(ours.dtype).tiny)
    return np.abs(_f64(ours) - _f64(theirs)) <= tiny


@allowance("upstream", None, {"f4E2M1FN"},
           "f4E2M1FN has neither inf nor NaN: shlo (like XLA and ml_dtypes) saturates overflow "
           "to +-6 and maps NaN to 0; upstream's APFloat gives +-0 for both")
@allowance("xla", None, {"f4E2M1FN"},
           "f4E2M1FN has no NaN: shlo maps NaN results to +0, XLA to -0")
def _f4_nonfinite(args: list, ours: Any, theirs: Any) -> np.ndarray:
    o, t = np.abs(_f64(ours)), np.abs(_f64(theirs))
    return np.isin(o, [0.0, 6.0]) & np.isin(t, [0.0, 6.0])


@allowance("upstream", None, None,
           "the upstream interpreter ignores compare_type: TOTALORDER compares as FLOAT (NaN "
           "unordered, -0 == +0)")
def _upstream_totalorder(args: list, ours: Any, theirs: Any) -> np.ndarray:
    a, b = _f64(args[0]), _f64(args[1])
    return np.isnan(a) | np.isnan(b) | ((a == 0) & (b == 0))


@allowance("xla", None, {"complex<f32>", "complex<f64>"},
           "XLA orders complex numbers by their real parts only in compare, maximum and minimum "
           "(GE(-1+0j, -1+0.3j) is true); the spec orders (real, imag) lexicographically, as "
           "shlo and upstream")
def _xla_complex_order(args: list, ours: Any, theirs: Any) -> np.ndarray:
    return np.real(args[0]) == np.real(args[1])


@allowance("upstream", "logistic", NARROW,
           "upstream evaluates the spec's formula 1 / (1 + exp(-x)) in the element type, so "
           "exp(-x) overflows (to inf, giving 0, or to NaN in formats without inf); shlo "
           "computes in f64 and rounds once (XLA: in f32)")
def _upstream_logistic(args: list, ours: Any, theirs: Any) -> np.ndarray:
    from shlo.testing.programs import float_info

    with np.errstate(over="ignore"):
        big = np.exp(-_f64(args[0])) > float(float_info(ours.dtype).max)
    return big


@allowance("upstream", None, {"f8E3M4"},
           "upstream's ceil/floor/round_* on f8E3M4 return NaN (APFloat::roundToIntegral)")
def _upstream_e3m4_round(args: list, ours: Any, theirs: Any) -> np.ndarray:
    return np.isnan(_f64(theirs)) & ~np.isnan(_f64(ours))


UPSTREAM_REDUCE_PRECISION = (
    "upstream's reduce_precision assumes an IEEE layout (bias 2^(e-1)-1, an inf encoding); on "
    "formats without inf or with another bias its bit manipulation gives other values; shlo "
    "converts to the IEEE-like (e, m) format and back, as XLA does")


ORDERED_COMPARES = {f"compare_{d}" for d in ("GE", "GT", "LE", "LT")}


def allow_for(label: str, op: str, et: str) -> Any:
    """The union of the allowances that apply to ``op`` on ``et`` (None if none do)."""
    fns = [(o, fn) for o, aop, types, _, fn in ALLOWANCES
           if (aop is None or aop == op) and (types is None or et in types)
           and (fn is not _upstream_totalorder or label.endswith("_TOTALORDER"))
           and (fn is not _xla_complex_order or label[:10] in ORDERED_COMPARES
                or op in ("maximum", "minimum", "clamp"))
           and (fn is not _upstream_e3m4_round or op in ROUNDING)
           and (fn is not _xla_narrow_underflow or op in TRANSCENDENTAL)]
    if not fns:
        return None

    def allow(oracle: str, args: list, ours: Any, theirs: Any) -> np.ndarray:
        mask = _none(ours)
        for o, fn in fns:
            if o == oracle:
                with np.errstate(all="ignore"):
                    mask |= fn(args, ours, theirs)
        return mask
    return allow


# --- the batches -----------------------------------------------------------------------------


def _unary(op: str, res: str, src: int = 0) -> Any:
    return lambda fb, ins: fb.op1(op, [ins[src]], ins[0].shape, res)


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
        cases.append(Case(label, build, tolerance(op, et), allow_for(label, op, et)))

    for op, kinds in UNARY.items():
        if k in kinds:
            res = "i1" if op == "is_finite" else part(et) if op in ("real", "imag", "abs") \
                else et
            add(op, _unary(op, res, 2 if k == "c" and op not in COMPLEX_SPECIALS else 0), op)
            if k == "c" and op == "cbrt":
                cases[-1].skip["xla"] = "XLA rejects cbrt of complex operands"
    for op, kinds in BINARY.items():
        if k in kinds:
            if k == "c" and op not in COMPLEX_SPECIALS:
                add(op, _binary(op, et, 2, 3), op)          # finite, moderate operands
            elif k in "su" and op in ("divide", "remainder"):
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
            if k == "c" and d not in ("EQ", "NE"):
                cases[-1].skip["upstream"] = (
                    "the upstream interpreter aborts on ordered comparisons of complex numbers "
                    "('Unsupported element type'), which the spec defines lexicographically")
    add("select", _select, "select")
    add("clamp", _clamp, "clamp")
    add("clamp_scalar_bounds", _clamp_scalar, "clamp")
    if k == "f":
        for e, m in REDUCE_PRECISION:
            attrs = f"exponent_bits = {e} : i32, mantissa_bits = {m} : i32"
            add(f"reduce_precision_e{e}m{m}",
                lambda fb, ins, a=attrs: fb.op1("reduce_precision", [ins[0]], ins[0].shape, et,
                                                a), "reduce_precision")
            if et in F8_NON_IEEE:
                cases[-1].skip["upstream"] = UPSTREAM_REDUCE_PRECISION
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
    if k == "c":
        c = random_array(et, shape, rng, specials=False, low=-3, high=3)
        d = random_array(et, shape, rng, specials=False, low=-3, high=3)
        return Batch(f"{et}", [(shape, t) for t in [et, et, et, et, "i1"]], [a, b, c, d, pred],
                     cases_for(et))
    return Batch(f"{et}", [(shape, et), (shape, et), (shape, "i1")], [a, b, pred],
                 cases_for(et))


BATCHES = {et: batch_for(et) for et in ALL_TYPES}


# --- complex special values ------------------------------------------------------------------

COMPLEX_FUNCTIONS = ["exponential", "exponential_minus_one", "logistic", "log", "log_plus_one",
                     "sqrt", "rsqrt", "cbrt", "sine", "cosine", "tan", "tanh", "sign"]


def _xla_no_annex_g(oracle: str, args: list, ours: Any, theirs: Any) -> np.ndarray:
    """XLA's complex functions do not follow C99 Annex G on non-finite inputs: they return NaN
    parts where C (and shlo, and upstream's std::complex) return zeros, infinities or a NaN in
    one part only (sin(inf + 0i) = nan + 0i in C, nan + nan i in XLA)."""
    z = args[0]
    return (oracle == "xla") & ~np.isfinite(z) & np.isnan(theirs)


def complex_specials_batch(et: str) -> Batch:
    """Non-finite and extreme inputs of the complex functions; the spec does not define these
    values, C99 Annex G (what numpy and upstream's std::complex implement) does. (Tiny inputs
    are left out: upstream computes expm1 and log1p of complex z as exp(z) - 1 and log(1 + z),
    which lose |z| < ulp entirely, and XLA's complex sine/cosine lose the sinh of a tiny
    imaginary part; shlo is accurate there.)"""
    part = np.float32 if et == "complex<f32>" else np.float64
    big = float(np.finfo(part).max)
    zs = [complex(np.inf, 0), complex(-np.inf, 0), complex(np.inf, 1), complex(0, np.inf),
          complex(np.nan, 0), complex(-big, -0.65), complex(big, 0.5), complex(-np.inf, -1.4),
          complex(0.25, 0), complex(-0.5, 0.75), complex(0, 0), complex(-0.0, 0.0),
          complex(np.inf, np.inf), complex(-1, 0), complex(-np.inf, np.inf), complex(0, -np.inf)]
    z = np.array(zs, dtype=element_type(et).dtype)
    cases = []
    for op in COMPLEX_FUNCTIONS:
        c = Case(op, _unary(op, et), Tol("class", 1e-4 if part == np.float32 else 1e-10),
                 _xla_no_annex_g)
        if op == "cbrt":
            c.skip["xla"] = "XLA rejects cbrt of complex operands"
        if op == "rsqrt":
            c.xfail = {o: "shlo's complex rsqrt gives nan + nan i for 0 + inf i and inf + inf i, "
                          "where upstream and XLA give 0 (1 / sqrt(z) -> 0 as |z| -> inf)"
                       for o in ORACLES}
        cases.append(c)
    return Batch(f"specials-{et}", [(z.shape, et)], [z], cases, ftz=False)


for _et in ("complex<f32>", "complex<f64>"):
    _b = complex_specials_batch(_et)
    BATCHES[_b.key] = _b


@pytest.mark.parametrize("oracle,key", params(list(BATCHES.values())))
def test_elementwise(runner: Any, oracle: str, key: str) -> None:
    runner.check_batch(BATCHES[key], oracle)


@pytest.mark.parametrize("oracle,key,label", xfail_params(list(BATCHES.values())))
def test_known_shlo_bugs(runner: Any, oracle: str, key: str, label: str) -> None:
    runner.check(BATCHES[key], label, oracle)
