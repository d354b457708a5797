"""Time each benchmark program on shlo and, when jax is installed, on the upstream C++
reference interpreter and XLA; print a markdown table with ratios.

    python benchmarks/run_all.py [--only NAME-SUBSTRING] [--no-upstream] [--no-xla]
                                 [--budget SECONDS]

BLAS runs with the threads the environment gives it (OPENBLAS_NUM_THREADS / all cores by
default), as a user would have it; the header line says how many, and the load average.
shlo: the best of as many runs as fit in ``--budget`` seconds (at least 3, at most 200) after a
first (preparing) run: on a shared machine the minimum is the stable statistic; "peak MB" is
tracemalloc's peak over one run (numpy reports its buffers to tracemalloc), next to the size of
inputs+outputs ("live MB").
XLA: compile time reported separately, execution timed as shlo's.
Upstream: one run in a long-lived child process (its start-up excluded). Where the full size
would take the upstream interpreter minutes, it runs a smaller size of the same program and its
time is scaled by the ratio of work (marked `~`); it works one element at a time, so its time is
linear in the work.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

import shlo  # noqa: E402
from programs import Program, all_programs  # noqa: E402
from shlo.testing import oracles  # noqa: E402


BUDGET = [2.0]  # seconds of repeated runs per program and engine (--budget)


def best_of(fn, least: int = 3, most: int = 200) -> float:
    """The fastest of repeated runs of ``fn``: at least ``least``, then as many as fit in the
    time budget (at most ``most``)."""
    times: list[float] = []
    end = time.perf_counter() + BUDGET[0]
    while len(times) < least or (len(times) < most and time.perf_counter() < end):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def time_shlo(p: Program) -> tuple[float, float, float]:
    module = shlo.parse(p.text)
    shlo.run(module, *p.args, verify=False)  # prepares
    t = best_of(lambda: shlo.run(module, *p.args, verify=False))
    tracemalloc.start()
    out = shlo.run(module, *p.args, verify=False)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    live = sum(a.nbytes for a in p.args) + sum(np.asarray(o).nbytes for o in out)
    return t, peak / 1e6, live / 1e6


def time_xla(p: Program) -> tuple[float, float]:
    import jax
    from jax._src import xla_bridge
    from jaxlib import xla_client

    jax.config.update("jax_enable_x64", True)
    backend = xla_bridge.get_backend("cpu")
    dev = backend.devices()[0]
    t0 = time.perf_counter()
    exe = backend.compile_and_load(p.text, xla_client.DeviceList((dev,)),
                                   xla_client.CompileOptions())
    compile_s = time.perf_counter() - t0
    bufs = [jax.device_put(a, dev) for a in p.args]

    def go():
        for o in exe.execute(bufs):
            o.block_until_ready()

    go()
    return best_of(go), compile_s


def time_upstream(p: Program, timeout: float) -> tuple[float, bool] | None:
    """Seconds the upstream interpreter takes on ``p`` (one run, in a long-lived child process
    that has already run a tiny program: no start-up in the time, only the round trip of the
    arguments and results); extrapolated from ``p.small`` when set."""
    q, scale = (p.small, p.work_ratio) if p.small is not None else (p, 1.0)
    session = _session(timeout)
    t0 = time.perf_counter()
    try:
        session.run(q.text, q.args)
    except oracles.OracleError as e:
        print(f"  upstream failed on {q.name}: {e}", file=sys.stderr)
        return None
    return (time.perf_counter() - t0) * scale, p.small is not None


_SESSION: list[oracles.UpstreamSession] = []


def _session(timeout: float) -> oracles.UpstreamSession:
    if not _SESSION:
        session = oracles.UpstreamSession(timeout)
        tiny = "func.func @main(%a: tensor<f32>) -> tensor<f32> { return %a : tensor<f32> }"
        session.run(tiny, [np.float32(1)])  # start-up: jaxlib import, MLIR context
        _SESSION.append(session)
    return _SESSION[0]


def fmt_s(t: float | None) -> str:
    if t is None:
        return "-"
    if t < 1e-3:
        return f"{t * 1e6:.0f} µs"
    if t < 1:
        return f"{t * 1e3:.1f} ms"
    return f"{t:.2f} s"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only")
    ap.add_argument("--no-upstream", action="store_true")
    ap.add_argument("--no-xla", action="store_true")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--budget", type=float, default=2.0,
                    help="seconds of repeated runs per program and engine")
    a = ap.parse_args()
    BUDGET[0] = a.budget
    have_jax = oracles.available()
    rows = []
    print(f"BLAS threads: {_blas_threads()}; load average: "
          f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}; {os.cpu_count()} CPUs\n")
    header = ("program", "shlo", "upstream", "x faster", "XLA exec", "XLA compile", "x XLA",
              "peak MB", "live MB")
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for p in all_programs():
        if a.only and a.only not in p.name:
            continue
        s, peak, live = time_shlo(p)
        up = time_upstream(p, a.timeout) if have_jax and not a.no_upstream else None
        xla = time_xla(p) if have_jax and not a.no_xla else None
        row = (p.name.replace("|", "\\|"), fmt_s(s),
               ("~" if up and up[1] else "") + fmt_s(up[0]) if up else "-",
               f"{up[0] / s:.0f}" if up else "-",
               fmt_s(xla[0]) if xla else "-", fmt_s(xla[1]) if xla else "-",
               f"{s / xla[0]:.1f}" if xla else "-", f"{peak:.1f}", f"{live:.1f}")
        rows.append(row)
        print("| " + " | ".join(row) + " |", flush=True)
    for session in _SESSION:
        session.close()


def _blas_threads() -> str:
    try:
        from threadpoolctl import threadpool_info

        return ", ".join(f"{i['internal_api']} {i['num_threads']}" for i in threadpool_info()
                         if i["user_api"] == "blas") or "none found"
    except ImportError:
        return "unknown"


if __name__ == "__main__":
    main()
