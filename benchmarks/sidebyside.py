"""What the side-by-side benchmarks (issue17_bench.py, loops_bench.py) share: timing a program
on a shlo tree in a child process (so two trees can be compared in one run) and on XLA, with
the same best-of-a-few rule for both. Wall-clock and CPU time (the process's, all threads) are
both kept: on the shared, loaded machine the CPU time leaves out the waits for a core."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
import zlib
from typing import Callable

import numpy as np


WARM_UP = 1.5
"""Seconds each child runs its program before timing it."""


def best(fn: Callable[[], object], budget: float = 0.5, least: int = 2) -> float:
    """The fastest of at least ``least`` calls of ``fn`` (more within ``budget`` seconds)."""
    ts: list[float] = []
    end = time.perf_counter() + budget
    while len(ts) < least or (time.perf_counter() < end and len(ts) < 50):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return min(ts)


def best_both(fn: Callable[[], object], budget: float = 0.5, least: int = 2,
              clock: Callable[[], float] = time.process_time) -> tuple[float, float]:
    """The fastest wall-clock time and the smallest CPU time (``clock``: this process's, or
    ``time.thread_time`` for this thread's) of at least ``least`` calls of ``fn`` (more within
    ``budget`` seconds)."""
    ts: list[float] = []
    cpu: list[float] = []
    end = time.perf_counter() + budget
    while len(ts) < least or (time.perf_counter() < end and len(ts) < 50):
        t0, c0 = time.perf_counter(), clock()
        fn()
        cpu.append(clock() - c0)
        ts.append(time.perf_counter() - t0)
    return min(ts), min(cpu)


def child(text: str, args: list[np.ndarray], trials: int) -> None:
    """In the child: time ``text`` on the shlo on sys.path; print JSON with the trials' times
    and a digest of the results (both trees must compute the same bits)."""
    import shlo

    m = shlo.parse(text)
    with np.errstate(all="ignore"):
        out = shlo.run(m, *args, verify=False)
        digest = zlib.crc32(b"".join(np.ascontiguousarray(o).tobytes() for o in out))
        # warm up for WARM_UP seconds: steady state, as XLA's compiled executable (shlo's
        # compiled chains take over after 2^20 ops, interpreter/fusion.py)
        end = time.perf_counter() + WARM_UP
        while time.perf_counter() < end:
            shlo.run(m, *args, verify=False)
        both = [best_both(lambda: shlo.run(m, *args, verify=False)) for _ in range(trials)]
    print(json.dumps({"times": [w for w, _ in both], "cpu": [c for _, c in both],
                      "digest": digest}))


def time_tree(script: str, tree: str, name: str, trials: int,
              numpy_only: bool = False) -> tuple[float, int, float]:
    """Median time, results digest and median CPU time of program ``name`` of ``script`` run
    by the shlo of ``tree`` (``script --child NAME --trials N`` in a child process);
    ``numpy_only``: with ``SHLO_NO_JIT=1`` (no compiled loops, as without the ``fast`` extra)."""
    env = dict(os.environ, PYTHONPATH=tree)
    if numpy_only:
        env["SHLO_NO_JIT"] = "1"
    out = subprocess.run([sys.executable, script, "--child", name, "--trials", str(trials)],
                         env=env, capture_output=True, text=True, check=True, cwd=tree)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    return statistics.median(r["times"]), r["digest"], statistics.median(r.get("cpu", [0.0]))


def time_xla(text: str, args: list[np.ndarray], trials: int) -> tuple[float, float] | None:
    """XLA:CPU's median execute time of ``text`` (host transfers included) and median CPU time
    (all of the process's threads); None without jax."""
    try:
        import jax
        from jax._src import xla_bridge
        from jaxlib import xla_client
    except ImportError:
        return None
    backend = xla_bridge.get_backend("cpu")
    dev = backend.devices()[0]
    exe = backend.compile_and_load(text, xla_client.DeviceList((dev,)),
                                   xla_client.CompileOptions())

    def go() -> None:
        bufs = [jax.device_put(a, dev) for a in args]
        for o in exe.execute(bufs):
            np.asarray(o)

    go()
    both = [best_both(go) for _ in range(trials)]
    return statistics.median(w for w, _ in both), statistics.median(c for _, c in both)


def fmt(t: float | None) -> str:
    if t is None:
        return "-"
    return f"{t * 1e6:.0f} µs" if t < 1e-3 else f"{t * 1e3:.1f} ms"


def load_line(trials: int) -> str:
    return (f"load average: {', '.join(f'{x:.1f}' for x in os.getloadavg())}; "
            f"{os.cpu_count()} CPUs; median of {trials} trials (each the best of a few runs)\n")


def main(names: list[str], program: Callable[[str], tuple[str, list[np.ndarray]]],
         script: str, xla_text: dict[str, str] | None = None) -> None:
    """The command line of a side-by-side benchmark: ``[--before TREE] [--trials N]
    [--only SUBSTR]`` prints a table of this tree's time (and TREE's), XLA's and the ratios;
    ``program(name)`` gives a program's text and arguments. Both trees must compute the same
    bits (a warning otherwise). ``xla_text`` gives, for some programs, the text XLA runs
    instead (an equivalent program in types XLA has)."""
    import argparse
    from pathlib import Path

    ap = argparse.ArgumentParser()
    ap.add_argument("--child")
    ap.add_argument("--before", help="another shlo tree to time side by side")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--only")
    ap.add_argument("--numpy-only", action="store_true",
                    help="also time this tree without compiled loops (SHLO_NO_JIT=1)")
    ap.add_argument("--processes", type=int, default=1,
                    help="time each tree in this many child processes (the trees alternating) "
                         "and keep the fastest process's median: a process on the shared "
                         "machine sometimes runs ~1.5x slower throughout")
    a = ap.parse_args()
    if a.child:
        child(*program(a.child), a.trials)
        return
    here = str(Path(script).resolve().parent.parent)
    print(load_line(a.trials) + (f"(shlo: the fastest of {a.processes} processes per tree)\n"
                                 if a.processes > 1 else ""))

    def fastest(runs: list[tuple[float, int, float]]) -> tuple[float, int, float]:
        return min(r[0] for r in runs), runs[0][1], min(r[2] for r in runs)

    cols = ["program"] + (["before"] if a.before else []) + \
        (["after, numpy only"] if a.numpy_only else []) + ["after", "XLA"]
    cols += (["before / XLA"] if a.before else []) + ["after / XLA"]
    cols += (["CPU: before / XLA"] if a.before else []) + ["CPU: after / XLA"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "|".join("---" for _ in cols) + "|")
    for name in names:
        if a.only and a.only not in name:
            continue
        rb, ra = [], []
        for _ in range(a.processes):  # (the trees alternating process by process)
            if a.before:
                rb.append(time_tree(script, a.before, name, a.trials))
            ra.append(time_tree(script, here, name, a.trials))
        before, bd, bcpu = fastest(rb) if rb else (None, None, None)
        after, ad, acpu = fastest(ra)
        plain, pd, _ = fastest([time_tree(script, here, name, a.trials, True)
                                for _ in range(a.processes)]) if a.numpy_only else \
            (None, None, None)
        if bd is not None and bd != ad:
            print(f"WARNING: {name}: results differ between the trees", file=sys.stderr)
        if pd is not None and pd != ad:
            print(f"WARNING: {name}: results differ without compiled loops", file=sys.stderr)
        text, args = program(name)
        xla, xcpu = time_xla((xla_text or {}).get(name, text), args, a.trials) or (None, None)
        row = [name] + ([fmt(before)] if a.before else []) + \
            ([fmt(plain)] if a.numpy_only else []) + [fmt(after), fmt(xla)]
        pairs = ([(before, xla)] if a.before else []) + [(after, xla)] + \
            ([(bcpu, xcpu)] if a.before else []) + [(acpu, xcpu)]
        row += [f"{ours / theirs:.1f}" if theirs else "-" for ours, theirs in pairs]
        print("| " + " | ".join(row) + " |", flush=True)
    print(load_line(a.trials))
