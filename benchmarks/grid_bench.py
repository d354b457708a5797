"""The process grid's engines side by side: threads, MPI and XLA on the same programs.

    python benchmarks/grid_bench.py                 # the table of docs/process_model.md
    python benchmarks/grid_bench.py --cases loop --sizes 8,64 --engines threads
    python benchmarks/grid_bench.py --points all_to_all:64:5e6 --engines mpi
    python benchmarks/grid_bench.py --floor      # the threaded grid's meeting, bare
    python benchmarks/grid_bench.py --one ENGINE CASE N ELEMENTS   # one measurement (internal)

Cases (each program builds its inputs, so no engine pays for moving arguments, and returns
one scalar, so none pays for gathering large results):

* ``loop``: a `while` loop of K all_reduce (sum) of ELEMENTS f32 over all N processes; the
  time is per collective ((time of K iterations - time of none) / K);
* ``all_to_all``: one all_to_all of ELEMENTS f32 per process over all N processes, then a
  sum (the 64 x 1e7 case: 2.5 GB of data in all).

Engines: ``threads`` (one OS process, a thread per StableHLO process), ``mpi`` (mpiexec -n N,
one rank per process; needs mpi4py and mpiexec in this Python's environment), ``xla`` (JAX on
N host devices, `--xla_force_host_platform_device_count`, the same computation written with
shard_map: psum in a fori_loop, all_to_all). Every measurement runs in fresh OS processes and
reports the second run (the first prepares or compiles) and the peak RSS: of the one process
(threads, XLA), of the largest rank (MPI).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
def iterations(case: str, size: int, n: int = 0, engine: str = "") -> int:
    """Collectives per loop (fewer for large messages, and for MPI beyond 64 ranks, where
    each takes seconds on few cores)."""
    if case != "loop":
        return 0
    return 5 if size > 100_000 or (engine == "mpi" and n > 64) else 50


def program(case: str, n: int, size: int, iters: int) -> str:
    t = f"tensor<{size}xf32>"
    groups = f"dense<[{list(range(n))}]> : tensor<1x{n}xi64>"
    add = """({
        ^bb0(%u: tensor<f32>, %v: tensor<f32>):
          %w = stablehlo.add %u, %v : tensor<f32>
          stablehlo.return %w : tensor<f32>
      })"""
    total = f"""%z = stablehlo.constant dense<0.0> : tensor<f32>
  %sum = stablehlo.reduce(%out init: %z) applies stablehlo.add across dimensions = [0]
      : ({t}, tensor<f32>) -> tensor<f32>
  return %sum : tensor<f32>"""
    if case == "loop":
        return f"""func.func @main() -> tensor<f32> {{
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %x = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> {t}
  %c0 = stablehlo.constant dense<0> : tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %k = stablehlo.constant dense<{iters}> : tensor<i64>
  %r:2 = stablehlo.while(%i = %c0, %a = %x) : tensor<i64>, {t}
    cond {{
      %p = stablehlo.compare LT, %i, %k : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    }} do {{
      %s = "stablehlo.all_reduce"(%a) {add} {{replica_groups = {groups}}} : ({t}) -> {t}
      %j = stablehlo.add %i, %one : tensor<i64>
      stablehlo.return %j, %s : tensor<i64>, {t}
    }}
  %out = stablehlo.add %r#1, %x : {t}
  {total}
}}"""
    if case == "all_to_all":
        return f"""func.func @main() -> tensor<f32> {{
  %io = stablehlo.iota dim = 0 : {t}
  %id = stablehlo.replica_id : tensor<ui32>
  %f = stablehlo.convert %id : (tensor<ui32>) -> tensor<f32>
  %b = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> {t}
  %x = stablehlo.add %io, %b : {t}
  %out = "stablehlo.all_to_all"(%x) {{split_dimension = 0 : i64, concat_dimension = 0 : i64,
      split_count = {n} : i64, replica_groups = {groups}}} : ({t}) -> {t}
  {total}
}}"""
    raise ValueError(case)


def memory() -> dict[str, float]:
    """This process's memory in MB: ``rss_mb`` its peak resident set (shared library pages
    included, as ru_maxrss counts them); from /proc (Linux) also ``pss_mb`` and ``uss_mb``
    now (proportional and unique set sizes, smaps_rollup) and ``own_mb``, its peak less the
    file and shared-memory pages it maps now (an estimate of the peak of what is its own:
    what one more rank costs)."""
    out = {"rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    try:
        kb: dict[str, float] = {}
        for name in ("status", "smaps_rollup"):
            with open(f"/proc/self/{name}", encoding="ascii") as f:
                for line in f:
                    k, _, v = line.partition(":")
                    if v.strip().endswith("kB"):
                        kb[k] = float(v.split()[0])
    except OSError:
        return out
    out["pss_mb"] = kb["Pss"] / 1024
    out["uss_mb"] = (kb["Private_Clean"] + kb["Private_Dirty"]) / 1024
    out["own_mb"] = (kb["VmHWM"] - kb["RssFile"] - kb["RssShmem"]) / 1024
    return out


# --- one measurement, in this process ---------------------------------------------------------


def repeats(n: int, size: int) -> int:
    """Timed runs per program (the best counts): fewer where one run takes long."""
    return 3 if n * size <= 64_000_000 and n <= 64 else 2


def timed(run: Callable[[int], float], case: str, n: int, size: int, iters: int) -> float:
    """Seconds per collective (``loop``: the best run of K iterations less the best of none,
    over K) or per run (``all_to_all``), after a first run of each program."""
    k = repeats(n, size)
    run(0)
    t = min(run(0) for _ in range(k))
    if iters:
        run(1)
        t = max(t - min(run(1) for _ in range(k)), 0.0) / iters
    return t


def one_threads(case: str, n: int, size: int) -> dict:
    sys.path.insert(0, str(ROOT))
    import shlo

    iters = iterations(case, size)
    mods = [shlo.parse(program(case, n, size, iters)), shlo.parse(program(case, n, size, 0))]

    def run(k: int) -> float:
        t0 = time.perf_counter()
        shlo.run(mods[k], replicas=n, timeout=600)
        return time.perf_counter() - t0

    return {"seconds": timed(run, case, n, size, iters), **memory()}


def one_mpi(case: str, n: int, size: int) -> dict | None:
    sys.path.insert(0, str(ROOT))
    import shlo
    from shlo.interpreter.mpi.engine import MPIEngine, serve, stop_workers
    from shlo.interpreter.mpi.world import world
    from shlo.interpreter.process_grid import run_grid

    iters = iterations(case, size, n, "mpi")
    mods = [shlo.parse(program(case, n, size, iters)), shlo.parse(program(case, n, size, 0))]
    w = world()
    if w.rank != 0:
        serve(lambda k: mods[k])
        print(json.dumps({"rank": w.rank, **memory()}), flush=True)
        return None

    def run(k: int) -> float:
        t0 = time.perf_counter()
        run_grid(mods[k], replicas=n, engine=MPIEngine(module_key=k), timeout=600)
        return time.perf_counter() - t0

    try:
        t = timed(run, case, n, size, iters)
    finally:
        stop_workers()
    return {"seconds": t, **memory()}


def one_xla(case: str, n: int, size: int) -> dict:
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                               f" --xla_force_host_platform_device_count={n}")
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax
    from jax.sharding import Mesh, PartitionSpec as P

    mesh = Mesh(np.array(jax.devices()[:n]), ("i",))
    iters = iterations(case, size)

    def make(k: int):
        if case == "loop":
            def body(x):
                return lax.fori_loop(0, k, lambda _, a: lax.psum(a, "i"), x)
            x = jnp.zeros(n * size, jnp.float32)
        else:
            def body(x):
                return lax.all_to_all(x, "i", 0, 0, tiled=True)
            x = jnp.arange(n * size, dtype=jnp.float32)
        f = jax.jit(lambda x: jnp.sum(jax.shard_map(body, mesh=mesh, in_specs=P("i"),
                                                    out_specs=P("i"), check_vma=False)(x)))
        x = jax.device_put(x, jax.sharding.NamedSharding(mesh, P("i")))
        f(x).block_until_ready()
        return lambda: f(x).block_until_ready()

    def best(fn) -> float:  # XLA's collectives take microseconds: the best of several
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        return min(times)

    k = iters * (20 if n <= 64 else 1)  # enough iterations to see them beside the launch
    t = best(make(k))
    if iters:
        t = max(t - best(make(0)), 0.0) / k
    return {"seconds": t, **memory()}


# --- the floor of the threaded grid ------------------------------------------------------------


def floor(n: int, meetings: int) -> dict[str, float]:
    """Seconds per meeting of ``n`` threads: through the threaded grid (``ProcessGrid.
    rendezvous``, no interpreter, a combine that does nothing) and through the bare hand-off
    it is built on (a lock per meeting that the last thread opens and every waiter passes on)."""
    import threading

    sys.path.insert(0, str(ROOT))
    from shlo.interpreter.threads import ProcessGrid

    def threads(work: Callable[[int], None]) -> float:
        ts = [threading.Thread(target=work, args=(i,)) for i in range(n)]
        t0 = time.perf_counter()
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        return (time.perf_counter() - t0) / meetings

    group = tuple((i, 0) for i in range(n))
    grids: list[ProcessGrid] = []

    def member(i: int) -> None:
        grid = grids[-1]
        for _ in range(meetings):
            grid.rendezvous(None, group, (i, 0), i, lambda values: values)
        grid.finish((i, 0))

    def through_grid() -> float:
        grids.append(ProcessGrid(n, 1, timeout=600))  # a grid per run, as shlo.run makes
        return threads(member)

    lock = threading.Lock()
    state = {"count": 0, "gate": threading.Lock()}
    state["gate"].acquire()

    def bare(i: int) -> None:
        for _ in range(meetings):
            with lock:
                state["count"] += 1
                gate = state["gate"]
                last = state["count"] == n
                if last:
                    state["count"] = 0
                    state["gate"] = threading.Lock()
                    state["gate"].acquire()
            if last:
                gate.release()
            else:
                gate.acquire()
                gate.release()

    return {"grid": min(through_grid() for _ in range(3)),
            "bare": min(threads(bare) for _ in range(3))}


# --- the driver --------------------------------------------------------------------------------


PYTHONS: dict[str, str] = {}  # engine -> the Python to measure it with (--python ENGINE=PATH)


def measure(engine: str, case: str, n: int, size: int, timeout: float) -> dict:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
               PYTHONPATH=str(ROOT))
    me = [PYTHONS.get(engine, sys.executable), str(Path(__file__).resolve()), "--one", engine,
          case, str(n), str(size)]
    if engine == "mpi":
        sys.path.insert(0, str(ROOT))
        from shlo.interpreter.mpi.launch import mpiexec

        me = [mpiexec(), "-n", str(n)] + me
    try:
        r = subprocess.run(me, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"no result after {timeout:g} s"}
    rows = []  # one JSON object per rank (their lines may interleave)
    dec = json.JSONDecoder()
    for line in r.stdout.splitlines():
        i = line.find("{")
        while i >= 0:
            try:
                obj, end = dec.raw_decode(line, i)
            except ValueError:
                break
            rows.append(obj)
            i = line.find("{", end)
    main = [x for x in rows if "seconds" in x]
    if r.returncode or not main:
        tail = (r.stderr.strip().splitlines() or ["failed"])[-1]
        return {"error": tail[:200]}
    out = main[0]
    ranks = [out] + [x for x in rows if "rank" in x]  # MPI: every rank; else the one process
    if engine == "mpi" and len(ranks) != n:
        return {"error": f"{len(ranks)} of {n} ranks reported"}
    per = [x for x in ranks if "own_mb" in x]
    return {"seconds": out["seconds"], "rss_mb": max(x["rss_mb"] for x in ranks),
            **({"own_mb": max(x["own_mb"] for x in per),
                # the whole job at its peak, about: every rank's own peak, shared pages once
                "total_mb": sum(x["own_mb"] for x in per)
                + max(x["rss_mb"] - x["own_mb"] for x in per)} if per else {})}


def available_mb() -> float | None:
    """MemAvailable of this machine (Linux), MB."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


RANK_MB = 40
"""A rank's own memory before data (Python, numpy, MPI, shlo: measured 33-37 MB)."""

RESERVE_MB = 4096
"""Memory left to the machine's other users when deciding whether an MPI case fits."""


def mpi_need_mb(n: int, size: int) -> float:
    """The memory an MPI case needs, about: per rank its own, and its operand, result and one
    temporary of ``size`` f32."""
    return n * (RANK_MB + 3 * 4 * size / 2**20)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--one", nargs=4, metavar=("ENGINE", "CASE", "N", "ELEMENTS"))
    ap.add_argument("--engines", default="threads,mpi,xla")
    ap.add_argument("--cases", default="loop,all_to_all")
    ap.add_argument("--sizes", help="only these process counts (e.g. 8,64)")
    ap.add_argument("--points", help="instead of the table's cases: CASE:N:ELEMENTS,... "
                                     "(e.g. loop:128:1e3,all_to_all:64:5e6)")
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--python", action="append", default=[], metavar="ENGINE=PATH",
                    help="the Python of an engine (e.g. xla=.venv/bin/python: jax there, "
                         "mpi4py in this one)")
    ap.add_argument("--floor", action="store_true",
                    help="the threaded grid's meeting alone, and a bare thread hand-off")
    a = ap.parse_args()
    PYTHONS.update(x.split("=", 1) for x in a.python)
    if a.floor:
        print("| threads | grid meeting | bare hand-off | grid, per thread |")
        print("|---|---|---|---|")
        for n in (8, 64, 256):
            f = floor(n, 20_000 // n)
            print(f"| {n} | {f['grid'] * 1e3:.3g} ms | {f['bare'] * 1e3:.3g} ms | "
                  f"{f['grid'] * 1e6 / n:.3g} us |", flush=True)
        return 0
    if a.one:
        engine, case, n, size = a.one
        fn = {"threads": one_threads, "mpi": one_mpi, "xla": one_xla}[engine]
        out = fn(case, int(n), int(float(size)))
        if out is not None:
            print(json.dumps(out), flush=True)
        return 0
    grid = {"loop": [(8, 1000), (64, 1000), (256, 1000), (8, 100_000), (8, 10_000_000)],
            "all_to_all": [(8, 1_000_000), (64, 1_000_000), (64, 10_000_000)]}
    print("| case | processes | f32 per process | engine | time | peak RSS per process (MB) "
          "| own peak per process (MB) | all processes (MB) |")
    print("|---|---|---|---|---|---|---|---|")
    points = [(c, n, size) for c in a.cases.split(",") for n, size in grid[c]
              if not a.sizes or str(n) in a.sizes.split(",")]
    if a.points:
        points = [(c, int(n), int(float(e))) for c, n, e in
                  (p.split(":") for p in a.points.split(","))]
    for case, n, size in points:
        for engine in a.engines.split(","):
            if engine == "mpi":
                need, free = mpi_need_mb(n, size), available_mb()
                if free is not None and need > free - RESERVE_MB:
                    print(f"| {case} | {n} | {size:.0e} | mpi | not run: needs about "
                          f"{need / 1024:.1f} GB ({n} ranks x {need / n:.0f} MB), "
                          f"{free / 1024:.1f} GB available | | | |", flush=True)
                    continue
            r = measure(engine, case, n, size, a.timeout)
            what = "per collective" if case == "loop" else "per run"
            t = (f"{r['seconds'] * 1e3:.3g} ms {what}" if "seconds" in r
                 else f"failed: {r['error']}")
            mem = " | ".join(f"{r[k]:.0f}" if k in r else "" for k in
                             ("rss_mb", "own_mb", "total_mb"))
            print(f"| {case} | {n} | {size:.0e} | {engine} | {t} | {mem} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
