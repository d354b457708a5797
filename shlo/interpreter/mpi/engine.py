"""The MPI engine: each StableHLO process of a grid is an MPI rank.

Rank 0 is the **host**: it runs the caller's program (`shlo run`'s function, the `@main` of a
`shlo check` case with `interpreter.run_parallel`), holds the arguments, the infeed queues and
gets the results. When it starts a grid (:meth:`MPIEngine.run_programs`), it sends rank k
its function name and arguments (and its infeed queue, or serves a shared queue), runs
process 0 itself, and gathers every rank's results, outfeed and check failures. Ranks other
than 0 wait in :func:`serve` for such commands. Each rank prepares only its own function.

Failures end the job (MPI's abort-on-exception): a rank whose process raises prints its
located message on stderr and aborts every rank; the coordinator on rank 0
(:mod:`.coordinator`) does the same for deadlocks, timeouts and members that finished early.
"""

from __future__ import annotations

import time
import traceback
from typing import Any, Callable

from ...errors import ExecutionError, ShloError
from ...ir import Module
from ...ops.distributed.grid import DEFAULT_TIMEOUT
from ...ops.distributed.groups import channel_id, process_label
from ..evaluator import PrepareContext, ProcessContext
from ..threads import THREADS
from .coordinator import Coordinator
from .grid import MPIGrid
from .world import BACKSTOP, TAG_COMMAND, TAG_REPLY, TAG_RESULT, World, die, world

__all__ = ["MPIEngine", "serve", "stop_workers"]


class _RemoteQueue(list):  # type: ignore[type-arg]
    """A shared infeed queue held by the coordinator: ``pop(0)`` asks rank 0 for a value."""

    def __init__(self, w: World, rank: int) -> None:
        super().__init__()
        self.w = w
        self.rank = rank

    def pop(self, index: Any = -1) -> Any:
        self.w.report({"t": "infeed", "rank": self.rank})
        box: list[Any] = []

        def test() -> bool:
            m = self.w.ctl.improbe(source=0, tag=TAG_REPLY)
            if m is None:
                return False
            box.append(m.recv())
            return True

        self.w.poll(test, None)
        if box[0][0] != "ok":
            raise IndexError("empty infeed")
        return box[0][1]


def _receivers(module: Module, names: list[str]) -> dict[int, set[int]]:
    """Channel id -> the processes (flattened ids) whose programs receive on it."""
    funcs = module.functions
    memo: dict[str, set[int]] = {}

    def channels(name: str) -> set[int]:
        got = memo.get(name)
        if got is not None:
            return got
        got = memo[name] = set()
        f = funcs.get(name)
        if f is None:
            return got
        for op in f.walk():
            if op.name == "stablehlo.recv":
                got.add(channel_id(op))
            callee = op.attr("callee")
            if callee is not None and hasattr(callee, "name"):
                got |= channels(callee.name)
        return got

    out: dict[int, set[int]] = {}
    for i, name in enumerate(names):
        for c in channels(name):
            out.setdefault(c, set()).add(i)
    return out


def _message(e: BaseException, rank: int, num_partitions: int, n: int) -> str:
    """The located message of a rank's error (named by its process when the grid has more)."""
    if isinstance(e, ShloError):
        text = str(e)
        label = process_label(rank, num_partitions)
        if n > 1 and not getattr(e, "names_process", False) and label not in text:
            d = e.diagnostics[0]
            d.message = f"{label}: {d.message}"
            text = str(ExecutionError(d.message, d.location))
        return text
    return (f"error: {process_label(rank, num_partitions)}: internal error: "
            f"{type(e).__name__}: {e}\n" + "".join(traceback.format_exception(e)[-3:]))


def _run_rank(w: World, ctx: PrepareContext, names: list[str], r: int, p: int, rank: int,
              args: list[Any], infeed: list[Any], timeout: float | None, deterministic: bool
              ) -> tuple[list[Any], list[Any], list[Any], dict[str, list[Any]]]:
    """Run process ``rank`` of the grid on this rank: (results, outfeed, check failures,
    probe values by probe id)."""
    n = r * p
    module = ctx.module
    assert module is not None
    w.num_partitions = p
    comm = w.grid_comm(n)
    grid = MPIGrid(w, comm, r, p, timeout, deterministic, _receivers(module, names))
    # Prepared once per grid shape and custom-call table (kernels may read custom_calls
    # while preparing; the pooled context holds the callables, so their ids stay unique),
    # as the threads engine pools them; observed runs are prepared afresh.
    pool = module.__dict__.setdefault("_mpi_prepared", {})
    key = (tuple(names), r, p, rank,
           tuple(sorted((k, id(v)) for k, v in ctx.process.custom_calls.items())))
    prepared = None if ctx.observer is not None else pool.get(key)
    if prepared is None:
        pctx = ctx.for_process(rank // p, rank % p, r, p)
        prepared = (pctx.process, pctx.function(names[rank]))
        if ctx.observer is None:
            pool[key] = prepared
    process, fn = prepared
    process.engine = ctx.process.engine  # the engine of grids this process starts
    # A fresh run in the lists prepared kernels hold (check ops keep the list they saw).
    process.check_failures.clear()
    process.outfeed.clear()
    process.probes.clear()
    process.channels.clear()
    process.__dict__.pop("rng_counters", None)
    process.infeed = infeed
    process.grid = grid
    try:
        out = fn(*args)
        grid.finish()
    except BaseException as e:  # noqa: BLE001 - any failure ends the job, located
        die(_message(e, rank, p, n))
        raise
    finally:
        process.grid = None
    w.report({"t": "done", "rank": rank, "seq": grid.progress()})
    return (list(out), list(process.outfeed), list(process.check_failures),
            {k: list(v) for k, v in process.probes.items()})


class MPIEngine:
    """An :class:`~shlo.ops.distributed.grid.Engine` whose processes are MPI ranks (rank 0,
    the host, calls it). ``deterministic``: fold float reductions in the threaded grid's
    order (bitwise equal to it) instead of MPI's native reductions."""

    def __init__(self, deterministic: bool = False, module_key: Any = None) -> None:
        self.deterministic = deterministic
        self.module_key = module_key  # names the module for the other ranks (see serve)

    def run_programs(self, ctx: PrepareContext, names: list[str], num_replicas: int,
                     num_partitions: int, args: list[list[Any]],
                     infeeds: list[list[Any]] | None = None,
                     timeout: float | None = DEFAULT_TIMEOUT,
                     parent: ProcessContext | None = None
                     ) -> tuple[list[list[Any]], list[list[Any]]]:
        """See :meth:`shlo.ops.distributed.grid.Engine.run_programs`."""
        n = num_replicas * num_partitions
        w = world()
        if n == 1 or w.rank != 0 or (parent is not None and parent.grid is not None):
            # one process, or a grid inside a grid's process: threads of this rank
            return THREADS.run_programs(ctx, names, num_replicas, num_partitions, args,
                                        infeeds, timeout, parent)
        if n > w.size:
            raise ExecutionError(f"the grid has {n} processes ({num_replicas}x"
                                 f"{num_partitions}) but the MPI job has {w.size} ranks: start "
                                 f"it with mpiexec -n {n} (or shlo ... --engine mpi -n {n})")
        # An observed run (shlo.trace): each rank observes its own process the same way and
        # sends back what it saw (the observer's for_ranks() and absorb(), shlo/debug/ranks.py)
        observer = ctx.observer
        observe = getattr(observer, "for_ranks", None)
        remote = observe() if observe is not None else None
        queues = infeeds or [[] for _ in range(n)]
        shared = all(q is queues[0] for q in queues) and bool(queues[0])
        w.run_id += 1
        coordinator = Coordinator(w, n, num_partitions, timeout, queues[0] if shared else None)
        coordinator.start()
        for k in range(1, n):  # one at a time: a rank's arguments are pickled while sent
            req = w.ctl.isend({"t": "run", "run_id": w.run_id, "module": self.module_key,
                               "names": names,
                               "r": num_replicas, "p": num_partitions, "args": args[k],
                               "timeout": timeout, "deterministic": self.deterministic,
                               "infeed": None if shared else list(queues[k]),
                               "observe": remote},
                              dest=k, tag=TAG_COMMAND)
            limit = None if timeout is None else time.monotonic() + timeout + BACKSTOP
            if not w.poll(req.Test, limit):
                die(f"error: {process_label(k, num_partitions)} (rank {k}) does not take its "
                    f"arguments (is it running a grid started by another rank?)")
        w.report = w.report_to_host
        infeed0 = _RemoteQueue(w, 0) if shared else list(queues[0])
        try:
            res0, out0, fail0, probes0 = _run_rank(w, ctx, names, num_replicas, num_partitions,
                                                   0, args[0], infeed0, timeout,
                                                   self.deterministic)
            results, outfeeds = [res0], [out0]
            failures = list(fail0)
            probes = [probes0]
            for k in range(1, n):
                box: list[Any] = []

                def test(k: int = k) -> bool:
                    m = w.ctl.improbe(source=k, tag=TAG_RESULT)
                    if m is None:
                        return False
                    box.append(m.recv())
                    return True

                w.poll(test, None, idle=True)  # one that never ends: the coordinator ends
                # the job
                res, out, fails, probed, seen = box[0]
                results.append(res)
                outfeeds.append(out)
                failures.extend(fails)
                probes.append(probed)
                if seen is not None:
                    observer.absorb(seen)  # type: ignore[union-attr]  # in grid order
        finally:
            coordinator.stop()
        target = parent.check_failures if parent is not None else ctx.process.check_failures
        target.extend(failures)
        if parent is not None:  # as on the threaded grid: the running process's probes,
            for probed in probes:  # process by process in grid order
                for k, v in probed.items():
                    parent.probes.setdefault(k, []).extend(v)
        return results, outfeeds


def serve(module_for: Callable[[Any], Module],
          custom_calls: dict[str, Callable[..., Any]] | None = None) -> None:
    """Ranks other than 0: run the grids rank 0 starts until it says to stop.

    ``module_for(key)`` gives the module a command names (the one module of `shlo run`,
    the case of `shlo check`); ``custom_calls`` are this rank's (as rank 0's, which
    cannot send functions)."""
    w = world()
    w.report = w.report_to_host
    while True:
        box: list[Any] = []

        def test() -> bool:
            m = w.ctl.improbe(source=0, tag=TAG_COMMAND)
            if m is None:
                return False
            box.append(m.recv())
            return True

        w.poll(test, None, idle=True)  # until the host starts a grid (or the job ends)
        cmd = box[0]
        if cmd["t"] == "exit":
            w.done()
            return
        w.run_id = cmd["run_id"]
        module = module_for(cmd["module"])
        observe = cmd.get("observe")
        observer, seen = observe.observer(module) if observe is not None else (None, None)
        ctx = PrepareContext(module, ProcessContext(custom_calls=dict(custom_calls or {})),
                             observer)
        infeed = _RemoteQueue(w, w.rank) if cmd["infeed"] is None else cmd["infeed"]
        res, out, fails, probed = _run_rank(w, ctx, cmd["names"], cmd["r"], cmd["p"], w.rank,
                                            cmd["args"], infeed, cmd["timeout"],
                                            cmd["deterministic"])
        w.ctl.send((res, out, [str(f) for f in fails], probed,
                    seen() if seen is not None else None), dest=0, tag=TAG_RESULT)


def stop_workers() -> None:
    """Rank 0: tell every other rank to leave :func:`serve`."""
    w = world()
    for k in range(1, w.size):
        w.ctl.send({"t": "exit"}, dest=k, tag=TAG_COMMAND)
    w.done()
