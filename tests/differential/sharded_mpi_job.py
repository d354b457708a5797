"""An MPI job (8 ranks) for test_sharded_jax.py: every generated JAX program runs on the MPI
engine, one rank per device; rank 0 prints one line per program: its name, then OK (process
0's results match XLA's and every process ends with the same ones) or what differs.

    mpiexec -n 8 python sharded_mpi_job.py WORKDIR
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np

import shlo
from shlo.interpreter.mpi.engine import MPIEngine, serve, stop_workers
from shlo.interpreter.mpi.world import world


def main(work: str) -> int:
    report = json.load(open(os.path.join(work, "report.json")))
    names = [k for k, r in report.items() if k != "debug_print" and "error" not in r]
    modules = {k: shlo.parse(report[k]["text"]) for k in names}
    w = world()
    if w.rank != 0:
        serve(lambda key: modules[key])
        return 0
    try:
        for k in names:
            rep = report[k]
            args = [np.load(os.path.join(work, f"{k}_in{i}.npy")) for i in range(rep["nin"])]
            want = [np.load(os.path.join(work, f"{k}_out{i}.npy")) for i in range(rep["nout"])]
            per = shlo.run(modules[k], *args, engine=MPIEngine(module_key=k))
            got = per[0]
            if len(got) != len(want) or not all(
                    g.shape == x.shape and np.allclose(g, x, rtol=2e-5, atol=2e-6)
                    for g, x in zip(got, want)):
                print(k, "differs from XLA", flush=True)
            elif not all(all(np.array_equal(a, b) for a, b in zip(p, got)) for p in per):
                print(k, "processes end with different results", flush=True)
            else:
                print(k, "OK", flush=True)
    finally:
        stop_workers()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
