"""Issue 17's programs (narrow floats, small and integer dots, outer-axis sums), timed on one or
two shlo trees and on XLA in one run:

    python benchmarks/issue17_bench.py [--before /path/to/other/tree] [--trials 5] [--only S]

Each program is timed in a child process per tree (so two versions of shlo can be compared
side by side, alternating program by program), as the median of ``--trials`` timings, each the
best of a few runs; XLA (when jax is installed) is timed in this process the same way,
execution only (compile excluded, host transfers included). Prints a markdown table.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def _unary(op: str, t: str, n: int) -> str:
    ty = f"tensor<{n}x{t}>"
    return f"""func.func @main(%a: {ty}) -> {ty} {{
  %0 = stablehlo.{op} %a : {ty}
  return %0 : {ty}
}}"""


def _binary(op: str, t: str, n: int) -> str:
    ty = f"tensor<{n}x{t}>"
    return f"""func.func @main(%a: {ty}, %b: {ty}) -> {ty} {{
  %0 = stablehlo.{op} %a, %b : {ty}
  return %0 : {ty}
}}"""


def _dot(t: str, r: str, g: int, m: int, k: int, n: int) -> str:
    lt, rt, ot = f"tensor<{g}x{m}x{k}x{t}>", f"tensor<{g}x{k}x{n}x{t}>", f"tensor<{g}x{m}x{n}x{r}>"
    return f"""func.func @main(%a: {lt}, %b: {rt}) -> {ot} {{
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : ({lt}, {rt}) -> {ot}
  return %0 : {ot}
}}"""


def _sum0(t: str, r: int, c: int) -> str:
    return f"""func.func @main(%x: tensor<{r}x{c}x{t}>) -> tensor<{c}x{t}> {{
  %z = stablehlo.constant dense<0.0> : tensor<{t}>
  %0 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0] : (tensor<{r}x{c}x{t}>, tensor<{t}>) -> tensor<{c}x{t}>
  return %0 : tensor<{c}x{t}>
}}"""


N = 1_000_000
PROGRAMS: dict[str, tuple[str, list[tuple[tuple[int, ...], str]]]] = {}
for _t in ("f32", "f16", "bf16", "f8E4M3FN"):
    PROGRAMS[f"tanh 1e6 {_t}"] = (_unary("tanh", _t, N), [((N,), _t)])
    PROGRAMS[f"exp 1e6 {_t}"] = (_unary("exponential", _t, N), [((N,), _t)])
    PROGRAMS[f"multiply 1e6 {_t}"] = (_binary("multiply", _t, N), [((N,), _t), ((N,), _t)])
PROGRAMS["logistic 1e6 bf16"] = (_unary("logistic", "bf16", N), [((N,), "bf16")])
PROGRAMS["dot 8x512 @ 512x10 f32"] = (_dot("f32", "f32", 1, 8, 512, 10),
                                      [((1, 8, 512), "f32"), ((1, 512, 10), "f32")])
PROGRAMS["dot 1x64 @ 64x64 f32 (RNN step)"] = (_dot("f32", "f32", 1, 1, 64, 64),
                                               [((1, 1, 64), "f32"), ((1, 64, 64), "f32")])
PROGRAMS["batched dot 96x(128x64 @ 64x128) f32"] = (
    _dot("f32", "f32", 96, 128, 64, 128), [((96, 128, 64), "f32"), ((96, 64, 128), "f32")])
PROGRAMS["dot 512^3 bf16"] = (_dot("bf16", "bf16", 1, 512, 512, 512),
                              [((1, 512, 512), "bf16"), ((1, 512, 512), "bf16")])
PROGRAMS["dot 1024^3 i8 -> i32"] = (_dot("i8", "i32", 1, 1024, 1024, 1024),
                                    [((1, 1024, 1024), "i8"), ((1, 1024, 1024), "i8")])
PROGRAMS["reduce add dim 0 16384x32 f32"] = (_sum0("f32", 16384, 32), [((16384, 32), "f32")])
PROGRAMS["reduce add dim 0 1000x1000 f32"] = (_sum0("f32", 1000, 1000), [((1000, 1000), "f32")])


def _args(spec: list[tuple[tuple[int, ...], str]]) -> list[np.ndarray]:
    from shlo.types import element_type

    r = np.random.default_rng(0)
    out = []
    for shape, t in spec:
        if t.startswith("i"):
            out.append(r.integers(-127, 128, shape).astype(np.int8))
        else:
            out.append((r.standard_normal(shape)).astype(element_type(t).dtype))
    return out


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    from sidebyside import main

    main(list(PROGRAMS), lambda n: (PROGRAMS[n][0], _args(PROGRAMS[n][1])), str(Path(__file__).resolve()))
