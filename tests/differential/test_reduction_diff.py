"""reduce, reduce_window, select_and_scatter, sort and map with simple bodies, on every
numeric element type, against the upstream interpreter and XLA.

The spec leaves the reduction schedule implementation-defined, so sums and products use small
integers whose every partial result is exact in the type (the result then does not depend on
the order); maximum/minimum also get special values (NaN, infinities, signed zeros), whose
result does not depend on the order either.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("jax")

from difftools import Batch, Case, params, seed, xfail_params
from shlo.testing.programs import ALL_TYPES, FunctionBuilder, Val, binary_body, type_str
from shlo.types import element_type

SHAPE = (3, 4)


def _kind(et: str) -> str:
    t = element_type(et)
    return "b" if t.is_bool else "s" if t.is_signed else "u" if t.is_unsigned else \
        "c" if t.is_complex else "f"


def _small(et: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    t = element_type(et)
    if t.is_bool:
        return rng.integers(0, 2, shape).astype(bool)
    hi = 1 if et in ("f4E2M1FN", "i2") else 2
    lo = 0 if t.is_unsigned else -hi
    v = rng.integers(lo, hi + 1, shape)
    if t.is_integer:
        return v.astype(t.dtype)
    if t.is_complex:
        return (v + 1j * rng.integers(-2, 3, shape)).astype(t.dtype)
    f = v.astype(np.float64)
    f[rng.random(shape) < 0.15] = -0.0
    return f.astype(t.dtype)


def _specials(et: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Floats with NaN, infinities and zeros of both signs (for maximum / minimum)."""
    t = element_type(et)
    vals = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5], np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        return rng.choice(vals, shape).astype(t.dtype)


def _scalar(fb: FunctionBuilder, value: str, et: str) -> Val:
    return fb.constant(value, (), et)


INIT = {"add": "0", "multiply": "1", "maximum": "min", "minimum": "max", "and": "true",
        "or": "false", "xor": "false"}


def _extreme(et: str, lowest: bool) -> str:
    """-inf / +inf, or the lowest / largest finite value of a type without infinities, as the
    hexadecimal bit pattern MLIR accepts for any float type."""
    from shlo.testing.programs import float_info

    dt = element_type(et).dtype
    with np.errstate(over="ignore", invalid="ignore"):
        inf = np.array([np.inf]).astype(dt)
    v = inf if np.isinf(inf.astype(np.float64))[0] else \
        np.array([float(float_info(dt).max)]).astype(dt)
    if lowest:
        v = -v
    nbytes = np.dtype(dt).itemsize
    bits = int(v.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[nbytes])[0])
    return f"0x{bits:0{2 * nbytes}X}" if et != "f4E2M1FN" else f"0x{bits & 15:X}"


def _init(fb: FunctionBuilder, body: str, et: str) -> Val:
    t = element_type(et)
    v = INIT[body]
    if t.is_bool:
        v = {"0": "false", "1": "true", "min": "false", "max": "true"}.get(v, v)
    elif t.is_integer:
        v = {"min": str(t.min), "max": str(t.max), "true": "-1" if t.is_signed else str(t.max),
             "false": "0"}.get(v, v)
    elif t.is_complex:
        v = {"0": "(0.0, 0.0)", "1": "(1.0, 0.0)"}[v]
    else:
        v = {"0": "0.0", "1": "1.0"}.get(v) or _extreme(et, v == "min")
    return _scalar(fb, v, et)


def _reduce(body: str, dims: tuple[int, ...], src: int = 0) -> Any:
    def build(fb: FunctionBuilder, ins: list[Val]) -> Val:
        x = ins[src]
        init = _init(fb, body, x.et)
        shape = tuple(d for k, d in enumerate(x.shape) if k not in dims)
        return fb.op1("reduce", [x, init], shape, x.et,
                      "dimensions = array<i64: " + ", ".join(map(str, dims)) + ">",
                      regions=binary_body(body, x.et, fb))
    return build


def _argmax(fb: FunctionBuilder, ins: list[Val]) -> Val:
    """Variadic reduce over dimension 1: (max value, first index of it)."""
    x = ins[0]
    et, t, ti = x.et, type_str((), x.et), type_str((), "i32")
    idx = fb.op1("iota", [], x.shape, "i32", "iota_dimension = 1 : i64")
    init_v = _init(fb, "maximum", et)
    init_i = fb.constant("0", (), "i32")
    n = fb.fresh("r")
    ctype = {"b": "UNSIGNED", "s": "SIGNED", "u": "UNSIGNED", "f": "FLOAT"}[_kind(et)]
    i1 = "tensor<i1>"

    def cmp(a: str, b: str, d: str, c: str, ty: str) -> str:
        return (f"\"stablehlo.compare\"({a}, {b}) {{comparison_direction = "
                f"#stablehlo<comparison_direction {d}>, compare_type = "
                f"#stablehlo<comparison_type {c}>}} : ({ty}, {ty}) -> {i1}")

    body = (f"{{\n  ^bb0({n}a: {t}, {n}i: {ti}, {n}b: {t}, {n}j: {ti}):\n"
            f"    {n}gt = {cmp(n + 'a', n + 'b', 'GT', ctype, t)}\n"
            f"    {n}eq = {cmp(n + 'a', n + 'b', 'EQ', ctype, t)}\n"
            f"    {n}lt = {cmp(n + 'i', n + 'j', 'LT', 'SIGNED', ti)}\n"
            f"    {n}tie = \"stablehlo.and\"({n}eq, {n}lt) : ({i1}, {i1}) -> {i1}\n"
            f"    {n}pick = \"stablehlo.or\"({n}gt, {n}tie) : ({i1}, {i1}) -> {i1}\n"
            f"    {n}v = \"stablehlo.select\"({n}pick, {n}a, {n}b) : ({i1}, {t}, {t}) -> {t}\n"
            f"    {n}k = \"stablehlo.select\"({n}pick, {n}i, {n}j) : ({i1}, {ti}, {ti}) -> {ti}\n"
            f"    \"stablehlo.return\"({n}v, {n}k) : ({t}, {ti}) -> ()\n  }}")
    outs = fb.op("reduce", [x, idx, init_v, init_i], [((3,), et), ((3,), "i32")],
                 "dimensions = array<i64: 1>", regions=body)
    # one result per case: the index (the value is checked by reduce_maximum_dim1)
    return outs[1]


def _reduce_window(body: str, window: str, out: tuple[int, ...]) -> Any:
    def build(fb: FunctionBuilder, ins: list[Val]) -> Val:
        x = ins[0]
        init = _init(fb, body, x.et)
        return fb.op1("reduce_window", [x, init], out, x.et, window,
                      regions=binary_body(body, x.et, fb))
    return build


POOL = ("window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 1, 1>, "
        "padding = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>")
DILATED = ("window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 1, 1>, "
           "base_dilations = array<i64: 2, 1>, window_dilations = array<i64: 1, 2>, "
           "padding = dense<[[1, 0], [0, 0]]> : tensor<2x2xi64>")


def _select_and_scatter(fb: FunctionBuilder, ins: list[Val]) -> Val:
    """operand 4x4 (input 2), source 2x2 (input 3): 2x2 windows, stride 2, GE, add."""
    x, src = ins[2], ins[3]
    et, t = x.et, type_str((), x.et)
    init = _init(fb, "add", et)
    ctype = {"b": "UNSIGNED", "s": "SIGNED", "u": "UNSIGNED", "f": "FLOAT"}[_kind(et)]
    n = fb.fresh("r")
    select = (f"{{\n  ^bb0({n}a: {t}, {n}b: {t}):\n"
              f"    {n}c = \"stablehlo.compare\"({n}a, {n}b) {{comparison_direction = "
              f"#stablehlo<comparison_direction GE>, compare_type = #stablehlo<comparison_type "
              f"{ctype}>}} : ({t}, {t}) -> tensor<i1>\n"
              f"    \"stablehlo.return\"({n}c) : (tensor<i1>) -> ()\n  }}")
    scatter = binary_body("add", et, fb)
    return fb.op1("select_and_scatter", [x, src, init], x.shape, et,
                  "window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>",
                  regions=f"{select}, {scatter}")


def _sort(direction: str, ctype: str, src: int = 0, with_index: bool = False) -> Any:
    def build(fb: FunctionBuilder, ins: list[Val]) -> Val:
        x = ins[src]
        t = type_str((), x.et)
        n = fb.fresh("r")
        operands = [x]
        args = f"{n}a: {t}, {n}b: {t}"
        if with_index:
            operands.append(fb.op1("iota", [], x.shape, "i32", "iota_dimension = 1 : i64"))
            args += f", {n}i: tensor<i32>, {n}j: tensor<i32>"
        body = (f"{{\n  ^bb0({args}):\n"
                f"    {n}c = \"stablehlo.compare\"({n}a, {n}b) {{comparison_direction = "
                f"#stablehlo<comparison_direction {direction}>, compare_type = "
                f"#stablehlo<comparison_type {ctype}>}} : ({t}, {t}) -> tensor<i1>\n"
                f"    \"stablehlo.return\"({n}c) : (tensor<i1>) -> ()\n  }}")
        outs = fb.op("sort", operands, [(x.shape, v.et) for v in operands],
                     "dimension = 1 : i64, is_stable = true", regions=body)
        return outs[-1]  # with an index: the permutation (it determines the sorted keys)
    return build


def _map_add(fb: FunctionBuilder, ins: list[Val]) -> Val:
    x, y = ins[0], ins[1]
    return fb.op1("map", [x, y], x.shape, x.et, "dimensions = array<i64: 0, 1>",
                  regions=binary_body("add", x.et, fb))


UPSTREAM_TOTALORDER = ("the upstream interpreter ignores compare_type: a TOTALORDER comparator "
                       "compares as FLOAT (NaN unordered, -0 == +0)")


def cases_for(et: str) -> list[Case]:
    k = _kind(et)
    cases = [Case("reduce_add_dim0", _reduce("add", (0,))),
             Case("reduce_add_dim1", _reduce("add", (1,))),
             Case("reduce_add_all", _reduce("add", (0, 1))),
             Case("reduce_multiply_dim1", _reduce("multiply", (1,))),
             Case("map_add", _map_add)]
    if k == "c":
        return cases
    cases += [Case("reduce_maximum_dim1", _reduce("maximum", (1,))),
              Case("reduce_minimum_dim0", _reduce("minimum", (0,))),
              Case("argmax_dim1", _argmax),
              Case("reduce_window_max_pool", _reduce_window("maximum", POOL, (3, 4))),
              Case("reduce_window_add_dilated", _reduce_window("add", DILATED, (5, 2))),
              Case("select_and_scatter_ge_add", _select_and_scatter)]
    ctype = {"b": "UNSIGNED", "s": "SIGNED", "u": "UNSIGNED", "f": "FLOAT"}[k]
    cases += [Case("sort_lt", _sort("LT", ctype, with_index=True)),
              Case("sort_gt_stable", _sort("GT", ctype, with_index=True))]
    if k in "bsu":
        cases += [Case(f"reduce_{b}_dim1", _reduce(b, (1,))) for b in ("and", "or", "xor")]
    if k == "f":
        cases += [Case("reduce_maximum_specials", _reduce("maximum", (1,), src=4)),
                  Case("reduce_minimum_specials", _reduce("minimum", (1,), src=4)),
                  Case("sort_totalorder_specials", _sort("LT", "TOTALORDER", src=4,
                                                         with_index=True),
                       skip={"upstream": UPSTREAM_TOTALORDER})]
    return cases


def batch(et: str) -> Batch:
    rng = np.random.default_rng(seed("reduction-" + et))
    types = [(SHAPE, et), (SHAPE, et), ((4, 4), et), ((2, 2), et)]
    args = [_small(et, SHAPE, rng), _small(et, SHAPE, rng), _small(et, (4, 4), rng),
            _small(et, (2, 2), rng)]
    if _kind(et) == "f":
        types.append(((3, 8), et))
        args.append(_specials(et, (3, 8), rng))
    cases = cases_for(et)
    if et in ("i2", "ui2"):
        for c in cases:
            if c.label.startswith(("argmax", "sort")):
                c.skip["xla"] = ("XLA rejects variadic reduce and sort of 2-bit integers "
                                 "(internal errors: 'Inputs must have the same shape', a layout "
                                 "RET_CHECK in reduce_decomposer)")
    return Batch(f"{et}", types, args, cases)


BATCHES = {et: batch(et) for et in ALL_TYPES}


@pytest.mark.parametrize("oracle,key", params(list(BATCHES.values())))
def test_reduction(runner: Any, oracle: str, key: str) -> None:
    runner.check_batch(BATCHES[key], oracle)


@pytest.mark.parametrize("oracle,key,label", xfail_params(list(BATCHES.values())))
def test_known_shlo_bugs(runner: Any, oracle: str, key: str, label: str) -> None:
    runner.check(BATCHES[key], label, oracle)
