"""The process grid as the distribution ops see it: the two interfaces an engine implements.

A program runs on ``num_replicas x num_partitions`` processes (spec "Parallel execution"). Each
process has its own :class:`~shlo.interpreter.evaluator.ProcessContext` (``ctx.process`` in a
kernel): its ``replica_id``/``partition_id``, its feeds, and two handles on the rest of the
world, which are all the distribution ops ever touch:

* ``ctx.process.grid``, a :class:`Grid`: how the processes of one run meet (collectives) and
  talk (send/recv). None when the process runs alone (no other process exists: a collective
  over a group of one needs no grid, a recv then reads the process's own sends).
* ``ctx.process.engine``, an :class:`Engine`: how a new grid of processes is started
  (`interpreter.run_parallel`, ``shlo.run(..., replicas=...)``).

The ops never import the interpreter; engines implement these protocols:

* threads on one machine (:mod:`shlo.interpreter.threads`, the default): each process is a
  thread, values are handed over without copying;
* MPI across machines (:mod:`shlo.interpreter.mpi`): each process is an MPI rank; a
  ``rendezvous`` whose :class:`Native` description MPI can compute becomes MPI's own
  collective, any other is a gather to the group's first member, ``combine`` there, and a
  scatter of the results; ``send``/``recv`` are MPI messages.

Blocking and failures, the same for every engine:

* ``rendezvous`` blocks until every member of the group has arrived; ``recv`` blocks until a
  value was sent; ``send`` never blocks.
* A wait never hangs. It fails with an :class:`~shlo.errors.ExecutionError` naming the op, its
  location and the processes involved when it can never complete (a member finished without
  reaching the collective; every live process waits: a deadlock), or after ``timeout`` seconds
  waiting for a process that is still computing (:data:`DEFAULT_TIMEOUT`; None: no limit).
  Such errors carry ``names_process = True`` (their message names the processes already).
* An error in one process aborts the others: their waits stop (with an internal exception the
  engine swallows), the run raises the first error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Protocol, Sequence

if TYPE_CHECKING:  # pragma: no cover
    from ...interpreter.evaluator import PrepareContext, ProcessContext
    from ...ir import Operation

__all__ = ["ProcessId", "Grid", "Engine", "DEFAULT_TIMEOUT", "Native", "me"]

ProcessId = tuple[int, int]
"""``(replica_id, partition_id)``; its flattened id is ``replica_id * num_partitions +
partition_id`` (spec "flattened_ids"), the index of the process in per-process lists."""

DEFAULT_TIMEOUT = 10.0
"""Seconds a process waits at a collective or recv for processes that are still computing."""


@dataclass(frozen=True)
class Native:
    """What a collective computes, for engines that have the collective built in (MPI).

    ``combine`` stays the definition: an engine may use its own collective only where it
    gives the same values (integer and boolean reductions, data movement), or where the
    spec leaves the order of a float reduction to the implementation and the run did not
    ask to be deterministic. Kinds and their fields:

    * ``all_reduce`` (``reduction``, ``dtype``), ``reduce_scatter`` (+ ``dim``),
      ``reduce`` (to member ``root``; the others get ``zeros()``): ``reduction`` is the
      single op of the body (``stablehlo.add``, ...), ``dtype`` its element type;
    * ``all_gather`` (``dim``), ``all_to_all`` (``split``, ``dim`` = concat dimension);
    * ``broadcast`` (from member ``root``);
    * ``permute``: this member sends to member ``dest`` and receives from member ``source``
      (None: none; without a source the result is ``zeros()``).
    """

    kind: str
    reduction: str | None = None
    dtype: Any = None
    dim: int = 0
    split: int = 0
    root: int = 0
    dest: int | None = None
    source: int | None = None
    zeros: Callable[[], tuple[Any, ...]] | None = None


class Grid(Protocol):
    """The processes of one run, as one process's kernels reach them.

    ``me`` is always the calling process; ``op`` (None in tests) names the op in errors.
    """

    num_replicas: int
    num_partitions: int

    def rendezvous(self, op: Operation | None, group: Sequence[ProcessId], me: ProcessId,
                   value: Any, combine: Callable[[list[Any]], list[Any]],
                   channel_id: int = 0, native: Native | None = None) -> Any:
        """Meet the other members of ``group`` at ``op``; return ``me``'s part of the result.

        Matching: the n-th call of ``me`` with a given (op name, group, channel_id) meets the
        n-th call of every other member with the same key. Every member blocks until all have
        arrived; then ``combine`` is called once, for the whole group, with the members'
        values in group order, and returns one result per member in group order. If it
        raises, the process that called it raises that error and the others are aborted.
        ``native`` (optional) says what ``combine`` computes, for engines with built-in
        collectives; ``value`` is then the tuple of ``me``'s operands (for ``broadcast``
        and ``reduce``, a 1-tuple of it).
        """
        ...

    def send(self, op: Operation | None, channel_id: int, me: ProcessId,
             values: tuple[Any, ...]) -> None:
        """Append ``values`` to channel ``channel_id``'s FIFO queue; never blocks. A value no
        process receives makes the run fail when it ends."""
        ...

    def recv(self, op: Operation | None, channel_id: int, me: ProcessId) -> tuple[Any, ...]:
        """Take the oldest values sent on channel ``channel_id``, blocking until there are
        some (a recv no process can satisfy fails as a deadlock)."""
        ...


class Engine(Protocol):
    """Starts a grid of processes and runs a function on each."""

    def run_programs(self, ctx: PrepareContext, names: list[str], num_replicas: int,
                     num_partitions: int, args: list[list[Any]],
                     infeeds: list[list[Any]] | None = None,
                     timeout: float | None = DEFAULT_TIMEOUT,
                     parent: ProcessContext | None = None
                     ) -> tuple[list[list[Any]], list[list[Any]]]:
        """Run function ``names[i]`` of ``ctx.module`` with ``args[i]`` on process i (flattened
        id) of a new ``num_replicas x num_partitions`` grid; block until every process ended.

        ``ctx`` prepares the processes (:meth:`~shlo.interpreter.evaluator.PrepareContext.
        for_process`; its process's custom calls are theirs). Arguments are run-time values
        already. ``infeeds[i]`` is process i's infeed queue (the same list may be shared).
        ``parent`` is the process running the grid (`interpreter.run_parallel`): the grid's
        check failures and probes go to it; without one each process keeps its own. Returns
        (results per process, outfeed values per process); raises the first process's error.
        """
        ...


def me(process: ProcessContext) -> ProcessId:
    """The process id of ``process``."""
    return (process.replica_id, process.partition_id)

