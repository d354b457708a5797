"""The process grid's engines side by side: threads, MPI and XLA on the same programs.

    python benchmarks/grid_bench.py                 # the table of docs/process_model.md
    python benchmarks/grid_bench.py --cases loop --sizes 8,64 --engines threads
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

ROOT = Path(__file__).resolve().parents[1]
def iterations(case: str, size: int) -> int:
    """Collectives per loop (fewer for large messages)."""
    return 0 if case != "loop" else 50 if size <= 100_000 else 5


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


def one_threads(case: str, n: int, size: int) -> dict:
    sys.path.insert(0, str(ROOT))
    import shlo

    iters = iterations(case, size)
    m = shlo.parse(program(case, n, size, iters))
    shlo.run(m, replicas=n, timeout=600)
    t0 = time.perf_counter()
    shlo.run(m, replicas=n, timeout=600)
    t = time.perf_counter() - t0
    if iters:
        m0 = shlo.parse(program(case, n, size, 0))
        shlo.run(m0, replicas=n, timeout=600)
        t1 = time.perf_counter()
        shlo.run(m0, replicas=n, timeout=600)
        t = (t - (time.perf_counter() - t1)) / iters
    return {"seconds": t, **memory()}


def one_mpi(case: str, n: int, size: int) -> dict | None:
    sys.path.insert(0, str(ROOT))
    import shlo
    from shlo.interpreter.mpi.engine import MPIEngine, serve, stop_workers
    from shlo.interpreter.mpi.world import world
    from shlo.interpreter.process_grid import run_grid

    iters = iterations(case, size)
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
        run(0)
        t = run(0)
        if iters:
            run(1)
            t = (t - run(1)) / iters
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
    if engine == "mpi":
        out["rss_mb"] = max([out["rss_mb"]] + [x["rss_mb"] for x in rows if "rank" in x])
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--one", nargs=4, metavar=("ENGINE", "CASE", "N", "ELEMENTS"))
    ap.add_argument("--engines", default="threads,mpi,xla")
    ap.add_argument("--cases", default="loop,all_to_all")
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--python", action="append", default=[], metavar="ENGINE=PATH",
                    help="the Python of an engine (e.g. xla=.venv/bin/python: jax there, "
                         "mpi4py in this one)")
    a = ap.parse_args()
    PYTHONS.update(x.split("=", 1) for x in a.python)
    if a.one:
        engine, case, n, size = a.one
        fn = {"threads": one_threads, "mpi": one_mpi, "xla": one_xla}[engine]
        out = fn(case, int(n), int(float(size)))
        if out is not None:
            print(json.dumps(out), flush=True)
        return 0
    grid = {"loop": [(8, 1000), (64, 1000), (256, 1000), (8, 100_000), (8, 10_000_000)],
            "all_to_all": [(8, 1_000_000), (64, 1_000_000), (64, 10_000_000)]}
    print("| case | processes | f32 per process | engine | time | peak RSS (MB) |")
    print("|---|---|---|---|---|---|")
    for case in a.cases.split(","):
        for n, size in grid[case]:
            for engine in a.engines.split(","):
                if engine == "mpi" and (n > 64 or n * size > 100_000_000):
                    # ~85 MB per rank before data, ~5 copies of the data per rank
                    print(f"| {case} | {n} | {size:.0e} | mpi | not run: "
                          f"{n * (85 + 5 * 4 * size / 1e6) / 1e3:.0f} GB for {n} ranks, more "
                          f"than this machine has | |", flush=True)
                    continue
                r = measure(engine, case, n, size, a.timeout)
                what = "per collective" if case == "loop" else "per run"
                t = (f"{r['seconds'] * 1e3:.3g} ms {what}" if "seconds" in r
                     else f"failed: {r['error']}")
                rss = f"{r['rss_mb']:.0f}" if "rss_mb" in r else ""
                print(f"| {case} | {n} | {size:.0e} | {engine} | {t} | {rss} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
