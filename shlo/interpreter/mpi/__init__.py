"""The MPI engine: a process grid whose processes are MPI ranks (``pip install shlo[mpi]``).

* :mod:`.world`: mpi4py (imported on first use), the communicators, waits with deadlines;
* :mod:`.grid`: :class:`~.grid.MPIGrid`, the :class:`~shlo.ops.distributed.grid.Grid` of a
  rank (native MPI collectives, or gather and fold with shlo's own kernels; channels);
* :mod:`.engine`: :class:`~.engine.MPIEngine` (rank 0, the host, starts grids) and
  :func:`~.engine.serve` (the other ranks);
* :mod:`.coordinator`: the thread on rank 0 that diagnoses deadlocks and timeouts;
* :mod:`.launch`: `shlo run --engine mpi -n N` and `shlo check --engine mpi`, which start
  mpiexec themselves, and what a rank of `mpiexec -n N shlo run ...` does.

See docs/process_model.md.
"""

from __future__ import annotations

from .world import available, launched_by_mpiexec

__all__ = ["available", "launched_by_mpiexec"]
