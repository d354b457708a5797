"""Issue 13's tracing budget: a trace of every op of a 1,000-op model in summary mode costs at
most 2x the untraced run. Measured in one run:

    python benchmarks/trace_bench.py [--layers 40] [--batch 8] [--width 64] [--trials 5]

The model is a residual MLP with layer norm, lowered by jax (about 25 ops a layer). Prints the
untraced and traced times (median of ``--trials``, each the best of a few runs, the two
alternating), the median of the trials' ratios,
the number of events, the time to read them (a trace's events are made from its recording
when first read), and the memory the trace holds (tracemalloc: the peak during a traced run,
what the returned Trace keeps, and with its events read).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import tracemalloc

import numpy as np


def model(layers: int, batch: int, width: int) -> tuple[str, list[np.ndarray]]:
    import jax
    import jax.numpy as jnp

    def f(x, ws, bs):
        for w, b in zip(ws, bs):
            h = x @ w + b
            mu = jnp.mean(h, axis=-1, keepdims=True)
            var = jnp.mean((h - mu) ** 2, axis=-1, keepdims=True)
            h = (h - mu) * jax.lax.rsqrt(var + 1e-5)
            x = x + jnp.maximum(h, 0.0)
        return jnp.tanh(x)

    r = np.random.default_rng(0)
    x = r.standard_normal((batch, width)).astype(np.float32)
    ws = [(r.standard_normal((width, width)) / np.sqrt(width)).astype(np.float32)
          for _ in range(layers)]
    bs = [r.standard_normal(width).astype(np.float32) * 0.1 for _ in range(layers)]
    text = jax.jit(f).lower(x, ws, bs).as_text()
    return text, [x, *ws, *bs]


def _best(fn, budget: float = 0.5, least: int = 2) -> float:
    ts: list[float] = []
    end = time.perf_counter() + budget
    while len(ts) < least or (time.perf_counter() < end and len(ts) < 30):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return min(ts)


def main() -> None:
    import shlo
    from shlo.debug import trace

    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=40)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--width", type=int, default=64)
    ap.add_argument("--trials", type=int, default=5)
    a = ap.parse_args()
    text, args = model(a.layers, a.batch, a.width)
    m = shlo.parse(text)
    n_ops = sum(1 for op in m.walk() if op.name not in ("func.func", "builtin.module"))
    plain = shlo.run(m, *args, verify=False)
    t = trace(m, *args, verify=False)
    assert all(np.array_equal(x, y) for x, y in zip(plain, t.results))
    # alternate the two (the shared machine's speed drifts): each trial times both
    runs, traces = [], []
    for _ in range(a.trials):
        runs.append(_best(lambda: shlo.run(m, *args, verify=False), 0.3))
        traces.append(_best(lambda: trace(m, *args, verify=False), 0.3))
    run_s, trace_s = statistics.median(runs), statistics.median(traces)
    ratios = [t / r for t, r in zip(traces, runs)]
    ratio = statistics.median(ratios)
    # reading the events: the recording becomes Event objects when first read
    reads = []
    for _ in range(a.trials):
        t = trace(m, *args, verify=False)
        t0 = time.perf_counter()
        _ = t.events
        reads.append(time.perf_counter() - t0)
    tracemalloc.start()
    t = trace(m, *args, verify=False)
    held, peak = tracemalloc.get_traced_memory()
    _ = t.events
    held_read, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    tracemalloc.start()
    shlo.run(m, *args, verify=False)
    _, run_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"load average: {', '.join(f'{x:.1f}' for x in os.getloadavg())}; "
          f"median of {a.trials} trials (each the best of a few runs); ratios per trial: "
          f"{', '.join(f'{x:.2f}' for x in ratios)}\n")
    print("| model | ops | events | untraced | traced (summaries) | traced / untraced | "
          "reading the events | peak MB untraced / traced | trace holds MB (events read) |")
    print("|---|---|---|---|---|---|---|---|---|")
    print(f"| residual MLP, {a.layers} layers, {a.batch}x{a.width} f32 | {n_ops} | {len(t)} | "
          f"{run_s * 1e3:.1f} ms | {trace_s * 1e3:.1f} ms | {ratio:.2f} | "
          f"{statistics.median(reads) * 1e3:.1f} ms | "
          f"{run_peak / 1e6:.2f} / {peak / 1e6:.2f} | {held / 1e6:.2f} ({held_read / 1e6:.2f}) |")


if __name__ == "__main__":
    main()
