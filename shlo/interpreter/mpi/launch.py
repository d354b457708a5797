"""Starting MPI jobs, and what the ranks of one do.

* `mpiexec -n N shlo run prog.mlir ARGS --replicas R --partitions P`: every rank parses the
  program (:func:`run_ranks`); rank 0 loads the arguments, runs the grid on the MPI engine
  and prints the results, the other ranks serve it.
* `shlo run ... --engine mpi -n N` starts that command itself (:func:`relaunch`), with the
  mpiexec of the running Python's environment (the `mpich` wheel puts it beside python).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

__all__ = ["mpiexec", "relaunch", "run_ranks", "mpi_command"]


def mpiexec() -> str:
    """The mpiexec beside this Python (the mpich wheel's), else the one on PATH."""
    here = Path(sys.executable).parent / "mpiexec"
    if here.exists():
        return str(here)
    found = shutil.which("mpiexec")
    if found is None:
        raise RuntimeError("no mpiexec found: pip install 'shlo[mpi]' (mpi4py and the mpich "
                           "wheel) into this environment")
    return found


def mpi_command(n: int, module_args: Sequence[str]) -> list[str]:
    """`mpiexec -n N python -m ...` for this Python. With MPICH's launcher (hydra), a rank
    that dies does not silently take the others down (-disable-auto-cleanup): they are
    signalled, and rank 0 names the one that died before ending the job."""
    exe = mpiexec()
    return [exe, *_hydra_options(exe), "-n", str(n), sys.executable, "-m", *module_args]


_HYDRA: dict[str, bool] = {}


def _hydra_options(exe: str) -> list[str]:
    if exe not in _HYDRA:
        try:
            out = subprocess.run([exe, "--version"], capture_output=True, text=True,
                                 timeout=30).stdout
        except (OSError, subprocess.SubprocessError):
            out = ""
        _HYDRA[exe] = "HYDRA" in out
    return ["-disable-auto-cleanup"] if _HYDRA[exe] else []


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("OPENBLAS_NUM_THREADS", "1")  # one BLAS thread per rank
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


def relaunch(argv: Sequence[str], n: int) -> int:
    """Run `shlo ARGV` on ``n`` MPI ranks (ARGV without --engine/-n); its exit status."""
    cmd = mpi_command(n, ["shlo", *argv])
    try:
        return subprocess.run(cmd, env=_env()).returncode
    except KeyboardInterrupt:
        return 130


def run_ranks(a: Any, load_module: Callable[[], Any], load_args: Callable[[], list[Any]],
              print_results: Callable[[Any, list[Any]], None],
              runner: Callable[..., list[Any]] | None = None) -> int:
    """`shlo run` on one rank of an MPI job (the world gives the ranks). ``runner`` (rank 0)
    runs the grid instead of ``run_grid``, with its arguments (`--trace`, `--profile`)."""
    from ..process_grid import run_grid
    from .engine import MPIEngine, serve, stop_workers
    from .world import world

    w = world()
    module = load_module()
    if w.rank != 0:
        serve(lambda key: module)
        return 0
    opts: dict[str, Any] = {}
    if a.replicas is not None:
        opts["replicas"] = a.replicas
    if a.partitions is not None:
        opts["partitions"] = a.partitions
    if not opts:
        opts["replicas"] = w.size
    timeout = getattr(a, "timeout", None)
    try:
        results = (runner or run_grid)(module, *load_args(), entry=a.entry,
                           engine=MPIEngine(deterministic=getattr(a, "deterministic", False)),
                           **({"timeout": timeout} if timeout is not None else {}), **opts)
    finally:
        stop_workers()
    print_results(module, results)
    return 0
