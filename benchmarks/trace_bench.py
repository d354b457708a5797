"""Issue 13's tracing budget: a trace of every op of a 1,000-op model in summary mode costs at
most 2x the untraced run. Measured in one run:

    python benchmarks/trace_bench.py [--layers 40] [--batch 8] [--width 64] [--trials 5]
                                     [--before TREE --rounds 3]

The model is a residual MLP with layer norm, lowered by jax (about 25 ops a layer). Prints the
untraced and traced times (median of ``--trials``, each the best of a few runs, the two
alternating), the median of the trials' ratios of wall-clock times and of CPU times (this
thread's: on a loaded machine they leave out the waits for a core),
the number of events, the time to read them (a trace's events are made from its recording
when first read), and the memory the trace holds (tracemalloc: the peak during a traced run,
what the returned Trace keeps, and with its events read). ``--before TREE`` measures the shlo
of another tree too, alternating the two in child processes, round by round.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import tracemalloc

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sidebyside import best_both  # noqa: E402


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


def rnn(steps: int, width: int) -> tuple[str, list[np.ndarray]]:
    """loops_bench's lax.scan RNN (a `while` of three small calls per step)."""
    from loops_bench import _rnn

    return _rnn(width, steps)


def measure(layers: int, batch: int, width: int, trials: int,
            loop: int = 0) -> dict[str, object]:
    """The numbers of one row (times in seconds, memory in bytes) on the shlo on sys.path:
    the MLP, or with ``loop`` steps the RNN."""
    import shlo
    from shlo.debug import trace

    text, args = rnn(loop, width) if loop else model(layers, batch, width)
    m = shlo.parse(text)
    n_ops = sum(1 for op in m.walk() if op.name not in ("func.func", "builtin.module"))
    plain = shlo.run(m, *args, verify=False)
    t = trace(m, *args, verify=False)
    assert all(np.array_equal(x, y) for x, y in zip(plain, t.results))
    # alternate the two (the shared machine's speed drifts): each trial times both
    runs, traces, runs_cpu, traces_cpu = [], [], [], []
    for _ in range(trials):
        wall, cpu = best_both(lambda: shlo.run(m, *args, verify=False), 0.3,
                              clock=time.thread_time)
        runs.append(wall)
        runs_cpu.append(cpu)
        wall, cpu = best_both(lambda: trace(m, *args, verify=False), 0.3,
                              clock=time.thread_time)
        traces.append(wall)
        traces_cpu.append(cpu)
    # reading the events: the recording becomes Event objects when first read
    reads = []
    for _ in range(trials):
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
    return {"ops": n_ops, "events": len(t), "runs": runs, "traces": traces,
            "ratios": [t / r for t, r in zip(traces, runs)],
            "cpu_ratios": [t / r for t, r in zip(traces_cpu, runs_cpu)],
            "read": statistics.median(reads),
            "run_peak": run_peak, "peak": peak, "held": held, "held_read": held_read}


def row(label: str, r: dict[str, object]) -> str:
    return (f"| {label} | {r['ops']} | {r['events']} | "
            f"{statistics.median(r['runs']) * 1e3:.1f} ms | "  # type: ignore[arg-type]
            f"{statistics.median(r['traces']) * 1e3:.1f} ms | "  # type: ignore[arg-type]
            f"{statistics.median(r['ratios']):.2f} | "  # type: ignore[arg-type]
            f"{statistics.median(r['cpu_ratios']):.2f} | "  # type: ignore[arg-type]
            f"{', '.join(f'{x:.2f}' for x in r['cpu_ratios'])} | "  # type: ignore[attr-defined]
            f"{r['read'] * 1e3:.1f} ms | "  # type: ignore[operator]
            f"{r['run_peak'] / 1e6:.2f} / {r['peak'] / 1e6:.2f} | "  # type: ignore[operator]
            f"{r['held'] / 1e6:.2f} ({r['held_read'] / 1e6:.2f}) |")  # type: ignore[operator]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=40)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--width", type=int, default=64)
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--before", metavar="TREE",
                    help="also measure the shlo of TREE, alternating with this one in child "
                         "processes (--rounds rounds)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--rnn", type=int, default=0, metavar="STEPS",
                    help="trace loops_bench's lax.scan RNN of STEPS steps (h = --width) instead")
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.json:
        print(json.dumps(measure(a.layers, a.batch, a.width, a.trials, a.rnn)))
        return
    load = os.getloadavg()
    rows: list[tuple[str, dict[str, object]]] = []
    if a.before:
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        for k in range(a.rounds):
            for label, tree in (("before", a.before), ("after", here)):
                env = dict(os.environ, PYTHONPATH=tree)
                out = subprocess.run([sys.executable, os.path.abspath(__file__), "--json",
                                      "--layers", str(a.layers), "--batch", str(a.batch),
                                      "--width", str(a.width), "--trials", str(a.trials),
                                      "--rnn", str(a.rnn)],
                                     env=env, capture_output=True, text=True, check=True)
                rows.append((f"{label} (round {k + 1})",
                             json.loads(out.stdout.strip().splitlines()[-1])))
    else:
        rows.append(("this tree", measure(a.layers, a.batch, a.width, a.trials, a.rnn)))
    load2 = os.getloadavg()
    print(f"load average: {', '.join(f'{x:.1f}' for x in load)} at the start, "
          f"{', '.join(f'{x:.1f}' for x in load2)} at the end; each row the median of "
          f"{a.trials} trials, each the best of a few runs; " +
          (f"lax.scan RNN, {a.rnn} steps, h={a.width}\n" if a.rnn else
           f"residual MLP, {a.layers} layers, {a.batch}x{a.width} f32\n"))
    print("| tree | ops | events | untraced | traced (summaries) | traced / untraced | "
          "same, CPU time | CPU ratio per trial | reading the events | "
          "peak MB untraced / traced | trace holds MB (events read) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for label, r in rows:
        print(row(label, r))


if __name__ == "__main__":
    main()
