"""Collectives on the process grid: time, and ratio to the same work on one process.

    python benchmarks/collectives_bench.py [--quick]

1. all_reduce (sum) of 1e6 f32 across 8 processes (8 replicas), against one process adding the
   8 arrays in a program (7 adds of 1e6 f32) and against numpy doing the same adds.
2. Data-parallel training of a 2-layer MLP on a 4x2 grid (8 processes): each process runs
   forward and backward on its shard of the batch, all_reduces the gradients, and updates its
   copy of the weights, for several steps in a `while` loop; against one process training on
   the whole batch (no collective). The weights both produce are compared.

Times are the best of several runs after a first (preparing) run. BLAS runs one thread per
call unless OPENBLAS_NUM_THREADS / OMP_NUM_THREADS say otherwise: the grid's processes are the
parallelism, and 8 processes each starting a BLAS thread pool oversubscribe the cores (both
sides of each ratio use the same setting).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import shlo  # noqa: E402
from shlo.interpreter.process_grid import PerProcess  # noqa: E402


def best_of(fn: Callable[[], Any], repeat: int = 5, budget: float = 20.0) -> float:
    fn()  # prepares
    times = []
    start = time.perf_counter()
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        if time.perf_counter() - start > budget:
            break
    return min(times)


ADD_F32 = """({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
  })"""


def all_reduce_bench(n: int, procs: int) -> dict[str, float]:
    t = f"tensor<{n}xf32>"
    grid = shlo.parse(f"""
func.func @main(%x: {t}) -> {t} {{
  %r = "stablehlo.all_reduce"(%x) {ADD_F32} {{
    replica_groups = dense<[{list(range(procs))}]> : tensor<1x{procs}xi64>
  }} : ({t}) -> {t}
  return %r : {t}
}}""")
    args = ", ".join(f"%x{i}: {t}" for i in range(procs))
    lines = [f"%s1 = stablehlo.add %x0, %x1 : {t}"]
    for i in range(2, procs):
        lines.append(f"%s{i} = stablehlo.add %s{i - 1}, %x{i} : {t}")
    one = shlo.parse(f"""
func.func @main({args}) -> {t} {{
  {chr(10).join(lines)}
  return %s{procs - 1} : {t}
}}""")
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal(n).astype(np.float32) for _ in range(procs)]

    def numpy_sum() -> np.ndarray:
        acc = xs[0] + xs[1]
        for x in xs[2:]:
            acc += x
        return acc

    res = shlo.run(grid, PerProcess(xs), replicas=procs, verify=False)
    np.testing.assert_allclose(res[0][0], numpy_sum(), rtol=1e-5, atol=1e-5)
    t_grid = best_of(lambda: shlo.run(grid, PerProcess(xs), replicas=procs, verify=False))
    t_one = best_of(lambda: shlo.run(one, *xs, verify=False))
    t_np = best_of(numpy_sum)
    return {"grid": t_grid, "one": t_one, "numpy": t_np}


def mlp_text(batch: int, d: int, h: int, c: int, steps: int, lr: float, total_batch: int,
             collective: bool) -> str:
    """One process's training program (SPMD): `steps` SGD steps of a 2-layer MLP (MSE loss)."""
    x, y = f"tensor<{batch}x{d}xf32>", f"tensor<{batch}x{c}xf32>"
    w1, b1, w2, b2 = (f"tensor<{d}x{h}xf32>", f"tensor<{h}xf32>", f"tensor<{h}x{c}xf32>",
                      f"tensor<{c}xf32>")
    bh, bc = f"tensor<{batch}x{h}xf32>", f"tensor<{batch}x{c}xf32>"
    ws = f"{w1}, {b1}, {w2}, {b2}"
    if collective:
        reduce_grads = f"""%g:4 = "stablehlo.all_reduce"(%gw1, %gb1, %gw2, %gb2) {ADD_F32} {{
        replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>,
        channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>
      }} : ({ws}) -> ({ws})"""
    else:
        reduce_grads = f"""%g:4 = stablehlo.optimization_barrier %gw1, %gb1, %gw2, %gb2 : {ws}"""
    scale = 2.0 / (total_batch * c)
    return f"""
func.func @main(%x: {x}, %y: {y}, %w1: {w1}, %b1: {b1}, %w2: {w2}, %b2: {b2}) -> ({ws}) {{
  %zero = stablehlo.constant dense<0> : tensor<i64>
  %r:5 = stablehlo.while(%i = %zero, %a = %w1, %b = %b1, %c = %w2, %d = %b2)
      : tensor<i64>, {ws}
  cond {{
    %n = stablehlo.constant dense<{steps}> : tensor<i64>
    %lt = stablehlo.compare LT, %i, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }} do {{
    %z1 = stablehlo.dot_general %x, %a, contracting_dims = [1] x [0] : ({x}, {w1}) -> {bh}
    %bb1 = stablehlo.broadcast_in_dim %b, dims = [1] : ({b1}) -> {bh}
    %z = stablehlo.add %z1, %bb1 : {bh}
    %zeros = stablehlo.constant dense<0.0> : {bh}
    %hid = stablehlo.maximum %z, %zeros : {bh}
    %o1 = stablehlo.dot_general %hid, %c, contracting_dims = [1] x [0] : ({bh}, {w2}) -> {bc}
    %bb2 = stablehlo.broadcast_in_dim %d, dims = [1] : ({b2}) -> {bc}
    %o = stablehlo.add %o1, %bb2 : {bc}
    %diff = stablehlo.subtract %o, %y : {bc}
    %k = stablehlo.constant dense<{scale:.9e}> : {bc}
    %dout = stablehlo.multiply %diff, %k : {bc}
    %gw2 = stablehlo.dot_general %hid, %dout, contracting_dims = [0] x [0] : ({bh}, {bc}) -> {w2}
    %z0 = stablehlo.constant dense<0.0> : tensor<f32>
    %gb2 = stablehlo.reduce(%dout init: %z0) applies stablehlo.add across dimensions = [0]
        : ({bc}, tensor<f32>) -> {b2}
    %dh = stablehlo.dot_general %dout, %c, contracting_dims = [1] x [1] : ({bc}, {w2}) -> {bh}
    %pos = stablehlo.compare GT, %z, %zeros : ({bh}, {bh}) -> tensor<{batch}x{h}xi1>
    %dz = stablehlo.select %pos, %dh, %zeros : tensor<{batch}x{h}xi1>, {bh}
    %gw1 = stablehlo.dot_general %x, %dz, contracting_dims = [0] x [0] : ({x}, {bh}) -> {w1}
    %gb1 = stablehlo.reduce(%dz init: %z0) applies stablehlo.add across dimensions = [0]
        : ({bh}, tensor<f32>) -> {b1}
    {reduce_grads}
    %lr = stablehlo.constant dense<{lr}> : tensor<f32>
    %l1 = stablehlo.broadcast_in_dim %lr, dims = [] : (tensor<f32>) -> {w1}
    %l2 = stablehlo.broadcast_in_dim %lr, dims = [] : (tensor<f32>) -> {b1}
    %l3 = stablehlo.broadcast_in_dim %lr, dims = [] : (tensor<f32>) -> {w2}
    %l4 = stablehlo.broadcast_in_dim %lr, dims = [] : (tensor<f32>) -> {b2}
    %u1 = stablehlo.multiply %l1, %g#0 : {w1}
    %u2 = stablehlo.multiply %l2, %g#1 : {b1}
    %u3 = stablehlo.multiply %l3, %g#2 : {w2}
    %u4 = stablehlo.multiply %l4, %g#3 : {b2}
    %na = stablehlo.subtract %a, %u1 : {w1}
    %nb = stablehlo.subtract %b, %u2 : {b1}
    %nc = stablehlo.subtract %c, %u3 : {w2}
    %nd = stablehlo.subtract %d, %u4 : {b2}
    %one = stablehlo.constant dense<1> : tensor<i64>
    %j = stablehlo.add %i, %one : tensor<i64>
    stablehlo.return %j, %na, %nb, %nc, %nd : tensor<i64>, {ws}
  }}
  return %r#1, %r#2, %r#3, %r#4 : {ws}
}}"""


def mlp_bench(batch: int, d: int, h: int, c: int, steps: int) -> dict[str, float]:
    replicas, partitions = 4, 2
    n = replicas * partitions
    total = batch * n
    rng = np.random.default_rng(1)
    x = rng.standard_normal((total, d)).astype(np.float32)
    y = rng.standard_normal((total, c)).astype(np.float32)
    w1 = (rng.standard_normal((d, h)) / np.sqrt(d)).astype(np.float32)
    b1 = np.zeros(h, np.float32)
    w2 = (rng.standard_normal((h, c)) / np.sqrt(h)).astype(np.float32)
    b2 = np.zeros(c, np.float32)
    grid = shlo.parse(mlp_text(batch, d, h, c, steps, 0.05, total, collective=True))
    one = shlo.parse(mlp_text(total, d, h, c, steps, 0.05, total, collective=False))
    xs = PerProcess(np.split(x, n))
    ys = PerProcess(np.split(y, n))

    def run_grid() -> list[list[np.ndarray]]:
        return shlo.run(grid, xs, ys, w1, b1, w2, b2, replicas=replicas, partitions=partitions,
                        verify=False)

    def run_one() -> list[np.ndarray]:
        return shlo.run(one, x, y, w1, b1, w2, b2, verify=False)

    g, o = run_grid(), run_one()
    for proc in g:  # every process ends with the weights of single-process training
        for a, b in zip(proc, o):
            np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-4)
    return {"grid": best_of(run_grid, 3), "one": best_of(run_one, 3)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes (a smoke test)")
    a = ap.parse_args()
    n = 100_000 if a.quick else 1_000_000
    r = all_reduce_bench(n, 8)
    print(f"all_reduce of {n:.0e} f32 across 8 processes")
    print(f"  grid (8 processes)        {r['grid'] * 1e3:9.2f} ms")
    print(f"  one process, 7 adds       {r['one'] * 1e3:9.2f} ms   grid/one = "
          f"{r['grid'] / r['one']:.2f}")
    print(f"  numpy, 7 adds             {r['numpy'] * 1e3:9.2f} ms   grid/numpy = "
          f"{r['grid'] / r['numpy']:.2f}")
    batch, d, h, c, steps = (16, 64, 128, 10, 5) if a.quick else (64, 256, 512, 10, 10)
    m = mlp_bench(batch, d, h, c, steps)
    print(f"MLP {d}-{h}-{c}, {steps} SGD steps, global batch {batch * 8} "
          f"(BLAS threads: {os.environ['OPENBLAS_NUM_THREADS']})")
    print(f"  data-parallel on 4x2 grid {m['grid'] * 1e3:9.2f} ms")
    print(f"  one process, whole batch  {m['one'] * 1e3:9.2f} ms   grid/one = "
          f"{m['grid'] / m['one']:.2f}")


if __name__ == "__main__":
    main()
