"""The benchmark programs: StableHLO text plus inputs, generated at a chosen size."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

HERE = Path(__file__).parent


@dataclass
class Program:
    name: str
    text: str
    args: list[np.ndarray]
    # The same program at a size the upstream interpreter finishes in reasonable time, and the
    # factor by which the full size has more work (upstream time is extrapolated linearly).
    small: "Program | None" = None
    work_ratio: float = 1.0


def _rng() -> np.random.Generator:
    return np.random.default_rng(0)


def dot(n: int) -> Program:
    t = f"tensor<{n}x{n}xf32>"
    text = f"""func.func @main(%a: {t}, %b: {t}) -> {t} {{
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : ({t}, {t}) -> {t}
  return %0 : {t}
}}"""
    r = _rng()
    return Program(f"dot f32 {n}x{n}", text, [r.standard_normal((n, n), np.float32),
                                             r.standard_normal((n, n), np.float32)])


def add_tanh(n: int) -> Program:
    t = f"tensor<{n}xf32>"
    text = f"""func.func @main(%a: {t}, %b: {t}) -> {t} {{
  %0 = stablehlo.add %a, %b : {t}
  %1 = stablehlo.tanh %0 : {t}
  return %1 : {t}
}}"""
    r = _rng()
    return Program(f"add+tanh f32 {n:.0e}", text, [r.standard_normal(n, np.float32),
                                                  r.standard_normal(n, np.float32)])


def while_loop(iterations: int) -> Program:
    text = f"""func.func @main(%x: tensor<f32>) -> tensor<f32> {{
  %zero = stablehlo.constant dense<0> : tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %n = stablehlo.constant dense<{iterations}> : tensor<i64>
  %c = stablehlo.constant dense<1.0> : tensor<f32>
  %r:2 = stablehlo.while(%i = %zero, %acc = %x) : tensor<i64>, tensor<f32>
    cond {{
      %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    }} do {{
      %i1 = stablehlo.add %i, %one : tensor<i64>
      %a1 = stablehlo.add %acc, %c : tensor<f32>
      stablehlo.return %i1, %a1 : tensor<i64>, tensor<f32>
    }}
  return %r#1 : tensor<f32>
}}"""
    return Program(f"while {iterations} scalar adds", text, [np.array(0, np.float32)])


def conv(n: int, hw: int, c: int, k: int, o: int) -> Program:
    lt, rt, ot = (f"tensor<{n}x{hw}x{hw}x{c}xf32>", f"tensor<{k}x{k}x{c}x{o}xf32>",
                  f"tensor<{n}x{hw}x{hw}x{o}xf32>")
    p = k // 2
    text = f"""func.func @main(%x: {lt}, %w: {rt}) -> {ot} {{
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {{stride = [1, 1], pad = [[{p}, {p}], [{p}, {p}]], rhs_dilate = [1, 1]}} {{batch_group_count = 1 : i64, feature_group_count = 1 : i64}} : ({lt}, {rt}) -> {ot}
  return %0 : {ot}
}}"""
    r = _rng()
    return Program(f"conv {n}x{hw}x{hw}x{c} * {k}x{k}x{c}x{o}", text,
                   [r.standard_normal((n, hw, hw, c), np.float32),
                    r.standard_normal((k, k, c, o), np.float32)])


def reduce_max_abs(n: int) -> Program:
    t = f"tensor<{n}xf32>"
    text = f"""func.func @main(%x: {t}) -> tensor<f32> {{
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %init) across dimensions = [0] : ({t}, tensor<f32>) -> tensor<f32>
    reducer(%a: tensor<f32>, %b: tensor<f32>) {{
      %aa = stablehlo.abs %a : tensor<f32>
      %bb = stablehlo.abs %b : tensor<f32>
      %m = stablehlo.maximum %aa, %bb : tensor<f32>
      stablehlo.return %m : tensor<f32>
    }}
  return %0 : tensor<f32>
}}"""
    return Program(f"reduce max|x| f32 {n:.0e}", text, [_rng().standard_normal(n, np.float32)])


def sort(n: int) -> Program:
    t = f"tensor<{n}xf32>"
    text = f"""func.func @main(%x: {t}) -> {t} {{
  %0 = "stablehlo.sort"(%x) <{{dimension = 0 : i64, is_stable = true}}> ({{
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %p = stablehlo.compare LT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
  }}) : ({t}) -> {t}
  return %0 : {t}
}}"""
    return Program(f"sort f32 {n:.0e}", text, [_rng().standard_normal(n, np.float32)])


def scatter_add(n: int, size: int = 1000) -> Program:
    ot, it, ut = f"tensor<{size}xf32>", f"tensor<{n}x1xi32>", f"tensor<{n}xf32>"
    text = f"""func.func @main(%x: {ot}, %i: {it}, %u: {ut}) -> {ot} {{
  %0 = "stablehlo.scatter"(%x, %i, %u) <{{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}}> ({{
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
  }}) : ({ot}, {it}, {ut}) -> {ot}
  return %0 : {ot}
}}"""
    r = _rng()
    return Program(f"scatter-add {n:.0e} updates", text,
                   [np.zeros(size, np.float32), r.integers(0, size, (n, 1), dtype=np.int32),
                    r.standard_normal(n, np.float32)])


def exported(name: str) -> Program | None:
    """A program exported from JAX into benchmarks/programs/ (see make_programs.py), with
    arguments drawn from a fixed seed to fit its signature."""
    import shlo
    from shlo.ir import function_type

    path = HERE / "programs" / f"{name}.mlir"
    if not path.exists():
        return None
    text = path.read_text()
    r = _rng()
    args = [(0.1 * r.standard_normal(t.shape)).astype(t.element_type.dtype)
            for t in function_type(shlo.parse(text).function("main")).inputs]
    return Program(name, text, args)


def _with_small(full: Program, small: Program, ratio: float) -> Program:
    full.small, full.work_ratio = small, ratio
    return full


def all_programs() -> list[Program]:
    progs: list[Program] = [
        dot(128),
        _with_small(dot(1024), dot(128), (1024 / 128) ** 3),
        _with_small(add_tanh(100_000), add_tanh(100_000), 1),
        _with_small(add_tanh(10_000_000), add_tanh(100_000), 100),
        while_loop(10_000),
        conv(1, 32, 8, 3, 8),
        _with_small(conv(1, 56, 64, 3, 64), conv(1, 14, 64, 3, 64), 16),
        reduce_max_abs(100_000),
        _with_small(reduce_max_abs(10_000_000), reduce_max_abs(100_000), 100),
        sort(10_000),
        _with_small(sort(1_000_000), sort(10_000), 100 * np.log(1e6) / np.log(1e4)),
        scatter_add(10_000),
        _with_small(scatter_add(1_000_000), scatter_add(10_000), 100),
    ]
    for name in ("mlp", "transformer_block"):
        p = exported(name)
        if p is not None:
            progs.append(p)
    return progs


BUILDERS: dict[str, Callable[..., Program]] = {
    "dot": dot, "add_tanh": add_tanh, "while": while_loop, "conv": conv,
    "reduce": reduce_max_abs, "sort": sort, "scatter": scatter_add,
}
