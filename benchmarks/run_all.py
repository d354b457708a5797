"""Time each benchmark program on shlo and, when jax is installed, on the upstream C++
reference interpreter and XLA; print a table with ratios.

    python benchmarks/run_all.py [--only NAME-SUBSTRING] [--no-upstream] [--markdown]

shlo: best of several runs after a first (preparing) run; "peak MB" is tracemalloc's peak over
one run (numpy reports its buffers to tracemalloc), next to the size of inputs+outputs.
XLA: compile time reported separately, execution best of several runs.
Upstream: one run in a child process. Where the full size would take the upstream interpreter
minutes, it runs a smaller size of the same program and its time is scaled by the ratio of work
(marked `~`); it works one element at a time, so its time is linear in the work.
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

import shlo  # noqa: E402
from programs import Program, all_programs  # noqa: E402
from shlo.testing import oracles  # noqa: E402


def best_of(fn, repeat: int, budget: float = 5.0) -> float:
    times = []
    start = time.perf_counter()
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        if time.perf_counter() - start > budget:
            break
    return min(times)


def time_shlo(p: Program) -> tuple[float, float, float]:
    module = shlo.parse(p.text)
    shlo.run(module, *p.args, verify=False)  # prepares
    t = best_of(lambda: shlo.run(module, *p.args, verify=False), 5)
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
    return best_of(go, 10), compile_s


def time_upstream(p: Program, timeout: float) -> tuple[float, bool] | None:
    q, scale = (p.small, p.work_ratio) if p.small is not None else (p, 1.0)
    t0 = time.perf_counter()
    try:
        oracles.upstream_run(q.text, q.args, timeout=timeout)
    except oracles.OracleError as e:
        print(f"  upstream failed on {q.name}: {e}", file=sys.stderr)
        return None
    # Subtract the child's start-up (measured once) so only evaluation counts.
    return (time.perf_counter() - t0 - _startup()) * scale, p.small is not None


_STARTUP: list[float] = []


def _startup() -> float:
    if not _STARTUP:
        tiny = "func.func @main(%a: tensor<f32>) -> tensor<f32> { return %a : tensor<f32> }"
        t0 = time.perf_counter()
        oracles.upstream_run(tiny, [np.float32(1)])
        _STARTUP.append(time.perf_counter() - t0)
    return _STARTUP[0]


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
    a = ap.parse_args()
    have_jax = oracles.available()
    rows = []
    header = ("program", "shlo", "upstream", "x faster", "XLA exec", "XLA compile", "x XLA",
              "peak MB", "live MB")
    print(" | ".join(header))
    print(" | ".join("---" for _ in header))
    for p in all_programs():
        if a.only and a.only not in p.name:
            continue
        s, peak, live = time_shlo(p)
        up = time_upstream(p, a.timeout) if have_jax and not a.no_upstream else None
        xla = time_xla(p) if have_jax and not a.no_xla else None
        row = (p.name, fmt_s(s),
               ("~" if up and up[1] else "") + fmt_s(up[0]) if up else "-",
               f"{up[0] / s:.0f}" if up else "-",
               fmt_s(xla[0]) if xla else "-", fmt_s(xla[1]) if xla else "-",
               f"{s / xla[0]:.1f}" if xla else "-", f"{peak:.1f}", f"{live:.1f}")
        rows.append(row)
        print(" | ".join(row), flush=True)


if __name__ == "__main__":
    main()
