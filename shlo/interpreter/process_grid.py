"""Running a module on a process grid: replicas x partitions running concurrently (spec
"Parallel execution").

A program runs on ``num_replicas * num_partitions`` processes; each knows its
``process_id = (replica_id, partition_id)`` and has its own ProcessContext and its own
prepared function, so SPMD (one function everywhere) and MPMD (a function per process) are the
same thing here. :func:`run_grid` is the entry point (``shlo.run(..., replicas=...)`` calls it);
the processes run on the process's engine (``ProcessContext.engine``; by default the threads
engine, :mod:`shlo.interpreter.threads`, behind the interfaces of
:mod:`shlo.ops.distributed.grid`).

Processes meet through collectives (rendezvous), channels (send/recv) and feeds (infeed,
outfeed: per-process queues in the ProcessContext; the caller supplies infeed and gets outfeed
back). See docs/process_model.md.

The process groups of the spec (:func:`process_groups` and its four strategies) are defined
with the ops (:mod:`shlo.ops.distributed.groups`) and re-exported here.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence

from ..attributes import int_attr
from ..errors import ExecutionError
from ..ir import Module, function_type
from ..ops.distributed.grid import DEFAULT_TIMEOUT, Engine, ProcessId
from ..ops.distributed.groups import (
    cross_partition, cross_replica, cross_replica_and_partition, flattened_ids, process_groups,
    process_label,
)
from .evaluator import Observer, PrepareContext, ProcessContext
from .limits import active_time_limit
from .threads import ProcessGrid

__all__ = [
    "ProcessGrid", "ProcessId", "PerProcess", "run_grid", "DEFAULT_TIMEOUT",
    "cross_replica", "cross_partition", "cross_replica_and_partition", "flattened_ids",
    "process_groups", "process_label", "grid_shape",
]


# --- arguments and the grid's shape ----------------------------------------------------------


class PerProcess:
    """Marks an argument (or an infeed queue) that differs per process.

    ``PerProcess([x0, x1, x2, x3])`` gives ``x0`` to process 0, ... (indexed by flattened
    process id ``replica_id * num_partitions + partition_id``). Arguments not wrapped are given
    to every process.
    """

    __slots__ = ("values",)

    def __init__(self, values: Iterable[Any]) -> None:
        self.values = list(values)

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, i: int) -> Any:
        return self.values[i]

    def __repr__(self) -> str:
        return f"PerProcess({self.values!r})"


def grid_shape(module: Module, replicas: int | None = None, partitions: int | None = None,
               programs: Any = None) -> tuple[int, int]:
    """The grid size: from ``programs``' shape, else the arguments, else the module's
    `mhlo.num_replicas` / `mhlo.num_partitions` attributes, else 1."""
    if programs is not None:
        rows = _program_rows(programs, replicas, partitions)
        r, p = len(rows), len(rows[0])
        if (replicas is not None and replicas != r) or (partitions is not None and
                                                         partitions != p):
            raise ExecutionError(f"programs describe a {r}x{p} grid but replicas={replicas}, "
                                 f"partitions={partitions} were given")
        return r, p

    r = replicas if replicas is not None else int_attr(module.op, "mhlo.num_replicas", 1)
    p = partitions if partitions is not None else int_attr(module.op, "mhlo.num_partitions", 1)
    return int(r), int(p)


def _program_rows(programs: Any, replicas: int | None, partitions: int | None) -> list[list[str]]:
    """Normalise ``programs`` (rows of names per replica, or a flat list) to rows of names."""
    items = list(programs)
    if not items:
        raise ExecutionError("programs must not be empty")
    if all(isinstance(x, str) for x in items):
        n = len(items)
        p = partitions if partitions is not None else (n // replicas if replicas else 1)
        if p < 1 or n % p:
            raise ExecutionError(f"{n} programs do not fill a grid with {p} partitions")
        return [items[i:i + p] for i in range(0, n, p)]
    rows = [[str(getattr(x, "name", x)).lstrip("@") for x in row] for row in items]
    if any(len(r) != len(rows[0]) for r in rows) or not rows[0]:
        raise ExecutionError("every replica must have the same (non-zero) number of programs")
    return rows


# --- the public entry ------------------------------------------------------------------------


def run_grid(module: Module, *args: Any, entry: str = "main", replicas: int | None = None,
             partitions: int | None = None, programs: Any = None,
             process_args: Sequence[Sequence[Any]] | None = None,
             infeed: Any = None, outfeed: list[Any] | None = None,
             custom_calls: dict[str, Callable[..., Any]] | None = None,
             timeout: float | None = DEFAULT_TIMEOUT,
             observer: Observer | None = None,
             engine: Engine | None = None,
             max_bytes: int | None = None) -> list[list[Any]]:
    """Run ``module`` on a ``replicas x partitions`` process grid; results per process.

    * The grid: ``replicas``/``partitions``, else the module's `mhlo.num_replicas` /
      `mhlo.num_partitions`, else 1. ``programs`` (MPMD) gives each process its function: a
      list of rows of function names, one row per replica and one name per partition (as
      `interpreter.run_parallel`'s ``programs``), or a flat list indexed by process id (one
      partition unless ``partitions`` says otherwise); otherwise every process runs ``entry``
      (SPMD).
    * Arguments: each positional argument goes to every process, unless wrapped in
      :class:`PerProcess` (one value per process). ``process_args`` instead gives each
      process its whole argument list (for MPMD functions of different signatures).
    * ``infeed``: the values `infeed` ops read, in order (each a value, or a tuple of values
      for an infeed with several results); a plain list is copied to every process,
      ``PerProcess([queue0, queue1, ...])`` gives each its own.
    * ``outfeed``: when given, one list per process (by process id) of the tuples that
      process's `outfeed` ops wrote is appended to it.
    * ``timeout``: seconds a collective or recv waits for processes still computing (None:
      no limit; deadlocks are still reported at once).
    * ``observer``: watches every op of every process (:class:`~shlo.interpreter.evaluator.
      Observer`; prepared afresh, not pooled).
    * ``max_bytes``: the largest result of dynamic shape an op may make (interpreter/limits.py;
      static shapes are checked by :func:`shlo.run` before the run). A time limit the caller
      runs under (``shlo.run(time_limit=)``) stops every process's thread.
    * ``engine``: what runs the processes (default: threads of this interpreter; an
      :class:`~shlo.interpreter.mpi.engine.MPIEngine` on rank 0 of an MPI job: one rank each).

    Returns a list indexed by process id (``replica_id * partitions + partition_id``) of each
    process's list of results.
    """
    from .arguments import check_argument

    r, p = grid_shape(module, replicas, partitions, programs)
    n = r * p
    if programs is not None:
        names = [name for row in _program_rows(programs, replicas, partitions) for name in row]
    else:
        names = [entry] * n
    funcs = module.functions
    for name in set(names):
        if name not in funcs:
            raise ExecutionError(f"no function @{name} in the module")
    if process_args is not None:
        if args:
            raise ExecutionError("give either positional arguments or process_args, not both")
        if len(process_args) != n:
            raise ExecutionError(f"process_args has {len(process_args)} entries for {n} "
                                 f"processes")
        raw = [list(a) for a in process_args]
    else:
        for k, a in enumerate(args):
            if isinstance(a, PerProcess) and len(a) != n:
                raise ExecutionError(f"argument {k} has {len(a)} per-process values for {n} "
                                     f"processes")
        raw = [[a[i] if isinstance(a, PerProcess) else a for a in args] for i in range(n)]
    values: list[list[Any]] = []
    for i, (name, a) in enumerate(zip(names, raw)):
        ftype = function_type(funcs[name])
        if len(a) != len(ftype.inputs):
            raise ExecutionError(f"@{name} on {process_label(i, p)} takes {len(ftype.inputs)} "
                                 f"arguments, got {len(a)}", funcs[name].location)
        values.append([check_argument(v, t, k, name) for k, (v, t) in
                       enumerate(zip(a, ftype.inputs))])
    if infeed is None:
        queues: list[list[Any]] = [[] for _ in range(n)]
    elif isinstance(infeed, PerProcess):
        if len(infeed) != n:
            raise ExecutionError(f"infeed has {len(infeed)} per-process queues for {n} "
                                 f"processes")
        queues = [list(q) for q in infeed.values]
    else:
        queues = [list(infeed) for _ in range(n)]
    root = PrepareContext(module, ProcessContext(custom_calls=dict(custom_calls or {}),
                                                 max_bytes=max_bytes),
                          observer, counted=active_time_limit() is not None)
    if engine is not None:
        root.process.engine = engine
    results, outfeeds = root.process.engine.run_programs(root, names, r, p, values, queues,
                                                         timeout)
    if outfeed is not None:
        outfeed.extend(outfeeds)
    return results
