"""Issue 17's programs (narrow floats, small and integer dots, outer-axis sums), timed on one or
two shlo trees and on XLA in one run:

    python benchmarks/issue17_bench.py [--before /path/to/other/tree] [--trials 5] [--only S]

Each program is timed in a child process per tree (so two versions of shlo can be compared
side by side, alternating program by program), as the median of ``--trials`` timings, each the
best of a few runs; XLA (when jax is installed) is timed in this process the same way,
execution only (compile excluded, host transfers included). Prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
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


def _best(fn, budget: float = 0.5, least: int = 2) -> float:
    ts: list[float] = []
    end = time.perf_counter() + budget
    while len(ts) < least or (time.perf_counter() < end and len(ts) < 50):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return min(ts)


def child(name: str, trials: int) -> None:
    """Time program ``name`` with the shlo on sys.path; print a JSON list of seconds."""
    import shlo

    text, spec = PROGRAMS[name]
    m = shlo.parse(text)
    args = _args(spec)
    with np.errstate(all="ignore"):
        shlo.run(m, *args, verify=False)
        print(json.dumps([_best(lambda: shlo.run(m, *args, verify=False))
                          for _ in range(trials)]))


def time_tree(tree: str, name: str, trials: int) -> float:
    env = dict(os.environ, PYTHONPATH=tree)
    out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", name,
                          "--trials", str(trials)], env=env, capture_output=True, text=True,
                         check=True, cwd=tree)
    return statistics.median(json.loads(out.stdout.strip().splitlines()[-1]))


def time_xla(name: str, trials: int) -> float | None:
    try:
        import jax
        from jax._src import xla_bridge
        from jaxlib import xla_client
    except ImportError:
        return None
    text, spec = PROGRAMS[name]
    backend = xla_bridge.get_backend("cpu")
    dev = backend.devices()[0]
    exe = backend.compile_and_load(text, xla_client.DeviceList((dev,)),
                                   xla_client.CompileOptions())
    args = _args(spec)

    def go() -> None:
        bufs = [jax.device_put(a, dev) for a in args]
        for o in exe.execute(bufs):
            np.asarray(o)

    go()
    return statistics.median(_best(go) for _ in range(trials))


def fmt(t: float | None) -> str:
    if t is None:
        return "-"
    return f"{t * 1e6:.0f} µs" if t < 1e-3 else f"{t * 1e3:.1f} ms"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--child")
    ap.add_argument("--before", help="another shlo tree to time side by side")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--only")
    a = ap.parse_args()
    if a.child:
        child(a.child, a.trials)
        return
    here = str(HERE.parent)
    print(f"load average: {', '.join(f'{x:.1f}' for x in os.getloadavg())}; "
          f"{os.cpu_count()} CPUs; median of {a.trials} trials (each the best of a few runs)\n")
    cols = ["program"] + (["before"] if a.before else []) + ["after", "XLA", "after / XLA"]
    if a.before:
        cols.insert(-1, "before / XLA")
    print("| " + " | ".join(cols) + " |")
    print("|" + "|".join("---" for _ in cols) + "|")
    for name in PROGRAMS:
        if a.only and a.only not in name:
            continue
        before = time_tree(a.before, name, a.trials) if a.before else None
        after = time_tree(here, name, a.trials)
        xla = time_xla(name, a.trials)
        row = [name] + ([fmt(before)] if a.before else []) + [fmt(after), fmt(xla)]
        if a.before:
            row.append(f"{before / xla:.1f}" if xla else "-")
        row.append(f"{after / xla:.1f}" if xla else "-")
        print("| " + " | ".join(row) + " |", flush=True)


if __name__ == "__main__":
    main()
