"""The threads engine: the processes of a grid are Python threads of one interpreter.

It implements the two interfaces of :mod:`shlo.ops.distributed.grid`: :class:`ProcessGrid` (a
:class:`~shlo.ops.distributed.grid.Grid`: where the processes of one run meet) and
:class:`ThreadEngine` (an :class:`~shlo.ops.distributed.grid.Engine`: it starts a grid, one
thread per process, and gathers results and outfeeds). numpy releases the GIL inside its loops,
and the collectives hand arrays over without copying them.

Processes meet in two ways (docs/process_model.md):

* **collectives** (all_reduce, all_gather, ...): :meth:`ProcessGrid.rendezvous`. The n-th time a
  process reaches a collective of a given kind, group and channel, it meets the n-th arrival
  of every other member of its group; the last to arrive computes the results of the whole
  group once (one reduction, not one per process) and hands each member its part.
* **channels** (send, recv): :meth:`ProcessGrid.send` appends to the channel's FIFO queue without
  waiting; :meth:`ProcessGrid.recv` waits for a value.

Waits never hang. Every wait is re-examined whenever any process changes state, and fails
with an :class:`~shlo.errors.ExecutionError` naming the op, its location and the processes
involved as soon as it cannot complete: a member of the group finished without reaching the
collective, or every live process is waiting for something no one can provide (a deadlock,
such as a recv with no sender). A wait on a process that is still computing is bounded by
``timeout`` seconds (default :data:`~shlo.ops.distributed.grid.DEFAULT_TIMEOUT`). An error in
one process aborts the others: each wait checks the grid's abort flag, and a process still
computing after a grace period is interrupted.

This module knows the evaluator only through the context it is handed
(:meth:`~shlo.interpreter.evaluator.PrepareContext.for_process`), so that the evaluator can make
it the default engine.
"""

from __future__ import annotations

import ctypes
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from ..errors import ExecutionError, ShloError
from ..ir import Module, Operation
from ..ops.distributed.grid import DEFAULT_TIMEOUT, ProcessId
from ..ops.distributed.groups import plural_label, process_label

if TYPE_CHECKING:  # pragma: no cover
    from .evaluator import CompiledBlock, PrepareContext, ProcessContext

__all__ = ["ProcessGrid", "ThreadEngine", "THREADS", "GRACE"]

GRACE = 1.0
"""Seconds an aborted grid gives its processes to stop before interrupting them."""


def _where(op: Operation | None) -> str:
    if op is None:
        return ""
    flc = op.location.file_line_col() if op.location is not None else None
    return f"'{op.name}'" + (f" at {flc[0]}:{flc[1]}:{flc[2]}" if flc else "")


# --- the grid --------------------------------------------------------------------------------


class _Aborted(BaseException):
    """Raised in a process when another one failed (never reaches the caller)."""


_RUNNING = "running"
_DONE = "done"
_FAILED = "failed"


@dataclass(eq=False)
class _Wait:
    """What a blocked process waits for (kept in the grid's state for diagnostics)."""

    op: Operation | None
    me: ProcessId
    ready: Callable[[], bool]
    missing: Callable[[], list[ProcessId]] | None = None  # None: any process could satisfy it
    detail: str = ""  # e.g. " for a send on channel 3"

    @property
    def what(self) -> str:
        """`'stablehlo.recv' op on process (replica 0, partition 1) for ...` (errors about
        this wait carry the op's location already)."""
        name = f"'{self.op.name}' op" if self.op is not None else "a rendezvous"
        return f"{name} on {process_label(self.me)}{self.detail}"

    @property
    def short(self) -> str:
        return f"waits at {_where(self.op)}{self.detail}"


@dataclass(eq=False)
class _Meeting:
    """One occurrence of a collective: the values of the members arrived so far."""

    group: tuple[ProcessId, ...]
    values: dict[ProcessId, Any] = field(default_factory=dict)
    results: list[Any] | None = None
    error: BaseException | None = None
    done: bool = False


@dataclass(eq=False)
class _Message:
    values: tuple[Any, ...]
    sender: ProcessId
    op: Operation | None


class ProcessGrid:
    """Shared state of one run on ``num_replicas x num_partitions`` processes."""

    def __init__(self, num_replicas: int, num_partitions: int,
                 timeout: float | None = DEFAULT_TIMEOUT) -> None:
        if num_replicas < 1 or num_partitions < 1:
            raise ExecutionError(f"the process grid must be at least 1x1, got "
                                 f"{num_replicas}x{num_partitions}")
        self.num_replicas = num_replicas
        self.num_partitions = num_partitions
        self.timeout = timeout
        self._cond = threading.Condition()
        self._state: dict[ProcessId, Any] = {p: _RUNNING for p in self.processes}
        self._meetings: dict[tuple[Any, ...], _Meeting] = {}
        self._seq: dict[tuple[Any, ...], int] = {}
        self._channels: dict[int, deque[_Message]] = {}
        self.aborted = False
        self.error: BaseException | None = None

    @property
    def processes(self) -> list[ProcessId]:
        """Every process id in flattened order."""
        return [(r, p) for r in range(self.num_replicas) for p in range(self.num_partitions)]

    @property
    def size(self) -> int:
        return self.num_replicas * self.num_partitions

    def flat_id(self, process: ProcessId) -> int:
        return process[0] * self.num_partitions + process[1]

    # -- lifecycle ------------------------------------------------------------------------

    def finish(self, me: ProcessId) -> None:
        """``me`` returned from its function."""
        with self._cond:
            self._state[me] = _DONE
            self._cond.notify_all()

    def fail(self, me: ProcessId, error: BaseException | None) -> None:
        """``me`` raised ``error`` (None for an abort): record the first error, abort the rest."""
        with self._cond:
            self._state[me] = _FAILED
            if error is not None and self.error is None:
                self.error = error
            self.aborted = True
            self._cond.notify_all()

    def abort(self, error: BaseException | None = None) -> None:
        """Stop every process at its next wait (from outside the processes)."""
        with self._cond:
            if error is not None and self.error is None:
                self.error = error
            self.aborted = True
            self._cond.notify_all()

    # -- collectives ----------------------------------------------------------------------

    def rendezvous(self, op: Operation | None, group: Sequence[ProcessId], me: ProcessId,
                   value: Any, combine: Callable[[list[Any]], list[Any]],
                   channel_id: int = 0) -> Any:
        """Meet the other members of ``group`` at ``op``; return ``me``'s part of the results.

        ``combine`` gets the members' values in group order and returns one result per member
        (in group order); the last member to arrive calls it, once for the whole group.
        """
        group = tuple(group)
        base = (op.name if op is not None else "", group, channel_id)
        with self._cond:
            self._check_abort()
            n = self._seq.get((me,) + base, 0)
            self._seq[(me,) + base] = n + 1
            key = base + (n,)
            m = self._meetings.get(key)
            if m is None:
                m = self._meetings[key] = _Meeting(group)
            m.values[me] = value
            last = len(m.values) == len(group)
            if last:
                del self._meetings[key]
            else:
                self._cond.notify_all()
                self._wait(me, _Wait(op, me, lambda: m.done,
                                     lambda: [p for p in group if p not in m.values]))
        if last:
            try:
                results = combine([m.values[p] for p in group])
            except BaseException as e:
                with self._cond:
                    m.error, m.done = e, True
                    self._cond.notify_all()
                raise
            with self._cond:
                m.results, m.done = results, True
                self._cond.notify_all()
        elif m.error is not None:
            raise _Aborted()
        assert m.results is not None
        return m.results[group.index(me)]

    # -- channels -------------------------------------------------------------------------

    def send(self, op: Operation | None, channel_id: int, me: ProcessId,
             values: tuple[Any, ...]) -> None:
        """Append ``values`` to channel ``channel_id`` (does not wait for the receiver)."""
        with self._cond:
            self._check_abort()
            self._channels.setdefault(channel_id, deque()).append(_Message(values, me, op))
            self._cond.notify_all()

    def recv(self, op: Operation | None, channel_id: int, me: ProcessId) -> tuple[Any, ...]:
        """Take the oldest value sent on channel ``channel_id``, waiting for one if needed."""
        with self._cond:
            self._check_abort()
            q = self._channels.setdefault(channel_id, deque())
            if not q:
                self._wait(me, _Wait(op, me, lambda: bool(q),
                                     detail=f" for a send on channel {channel_id}"))
            return q.popleft().values

    def unreceived(self) -> list[tuple[int, _Message]]:
        """Values sent and never received, as (channel_id, message)."""
        with self._cond:
            return [(c, m) for c, q in sorted(self._channels.items()) for m in q]

    # -- waiting --------------------------------------------------------------------------

    def _check_abort(self) -> None:
        if self.aborted:
            raise _Aborted()

    def _wait(self, me: ProcessId, w: _Wait) -> None:
        """Block (holding the condition) until ``w.ready()``; fail instead of hanging."""
        self._state[me] = w
        self._cond.notify_all()
        start = time.monotonic()
        try:
            while not w.ready():
                self._check_abort()
                err = self._diagnose(me, w)
                if err is not None:
                    self.error = self.error or err
                    self.aborted = True
                    self._cond.notify_all()
                    raise err
                if self.timeout is None:
                    self._cond.wait()
                    continue
                left = self.timeout - (time.monotonic() - start)
                if left <= 0:
                    raise self._timeout_error(me, w)
                self._cond.wait(left)
        finally:
            self._state[me] = _RUNNING

    def _diagnose(self, me: ProcessId, w: _Wait) -> ExecutionError | None:
        """An error when ``w`` can never be satisfied, else None."""
        if w.missing is not None:
            gone = [p for p in w.missing() if self._state[p] == _DONE]
            if gone:
                return _grid_error(
                    w.op, f"{w.what} waits for {plural_label(gone)}, which finished without "
                    f"reaching it (every member of a process group must run the collective "
                    f"the same number of times)")
        for s in self._state.values():
            if s == _RUNNING or (isinstance(s, _Wait) and s.ready()):
                return None
        lines = [f"  {process_label(p)}: {self._describe(s)}" for p, s in self._state.items()]
        return _grid_error(w.op, f"{w.what}: deadlock, no process can make progress:\n"
                           + "\n".join(lines))

    @staticmethod
    def _describe(s: Any) -> str:
        if isinstance(s, _Wait):
            return s.short
        return {_DONE: "finished", _FAILED: "failed"}.get(s, "still running")

    def _timeout_error(self, me: ProcessId, w: _Wait) -> ExecutionError:
        if w.missing is not None:
            late = w.missing()
            detail = (f"for {plural_label(late)} to reach it ("
                      + ", ".join(self._describe(self._state[p]) for p in late) + ")")
        else:
            detail = "for a value"
        return _grid_error(w.op, f"{w.what} timed out after {self.timeout:g} s waiting "
                           f"{detail}; pass a larger timeout= if a process is just slow")


def _grid_error(op: Operation | None, message: str) -> ExecutionError:
    e = ExecutionError(message, op.location if op is not None else None)
    e.names_process = True  # type: ignore[attr-defined]
    return e


# --- running functions on the grid -----------------------------------------------------------


@dataclass
class _Instance:
    """Prepared functions of every process of one grid (reused across runs)."""

    key: tuple[Any, ...]
    contexts: list[ProcessContext]
    functions: list[CompiledBlock]


_pool_lock = threading.Lock()


def _checkout(ctx: PrepareContext, module: Module, names: list[str], r: int,
              p: int) -> _Instance:
    """Prepared functions for the grid, from the module's pool or freshly prepared.

    Kernels may read custom_calls while preparing, so they are part of the pool's key (by
    identity: the pooled contexts hold the callables, so their ids stay unique).
    """
    custom_calls = ctx.process.custom_calls
    observed = ctx.observer is not None  # observed runs are prepared afresh, never pooled
    key = (tuple(names), r, p, tuple(sorted((k, id(v)) for k, v in custom_calls.items())),
           observed)
    with _pool_lock:
        free = module.__dict__.setdefault("_grid_instances", {}).setdefault(key, [])
        if free and not observed:
            return free.pop()
    contexts, functions = [], []
    for i, name in enumerate(names):
        pctx = ctx.for_process(i // p, i % p, r, p)
        contexts.append(pctx.process)
        functions.append(pctx.function(name))
    return _Instance(key, contexts, functions)


def _checkin(module: Module, inst: _Instance) -> None:
    if inst.key[-1]:  # observed (see _checkout)
        return
    for c in inst.contexts:
        c.grid = None
        c.infeed, c.outfeed, c.channels = [], [], {}
    with _pool_lock:
        module.__dict__.setdefault("_grid_instances", {}).setdefault(inst.key, []).append(inst)


class ThreadEngine:
    """The threads engine (an :class:`~shlo.ops.distributed.grid.Engine`): one thread per
    process of a :class:`ProcessGrid`; prepared functions are pooled on the module and reused
    by later runs of the same programs."""

    def run_programs(self, ctx: PrepareContext, names: list[str], num_replicas: int,
                     num_partitions: int, args: list[list[Any]],
                     infeeds: list[list[Any]] | None = None,
                     timeout: float | None = DEFAULT_TIMEOUT,
                     parent: ProcessContext | None = None
                     ) -> tuple[list[list[Any]], list[list[Any]]]:
        """See :meth:`shlo.ops.distributed.grid.Engine.run_programs`."""
        return run_programs(ctx, names, num_replicas, num_partitions, args, infeeds, timeout,
                            parent)


def run_programs(ctx: PrepareContext, names: list[str], num_replicas: int, num_partitions: int,
                 args: list[list[Any]], infeeds: list[list[Any]] | None = None,
                 timeout: float | None = DEFAULT_TIMEOUT,
                 parent: ProcessContext | None = None) -> tuple[list[list[Any]], list[list[Any]]]:
    """Run function ``names[i]`` of ``ctx.module`` with ``args[i]`` on process i (flattened id)
    of a new grid, each process in its own thread.

    Arguments are run-time values already (no checking). ``infeeds[i]`` is the infeed queue of
    process i (the same list object may be shared: processes then pop from one queue).
    ``parent`` is the process that runs the grid (`interpreter.run_parallel`): its check
    failures and probes are shared with the grid's processes.
    Returns (results per process, outfeed values per process).
    """
    module = ctx.module
    if module is None:
        raise ExecutionError("no module to run the programs of")
    n = num_replicas * num_partitions
    grid = ProcessGrid(num_replicas, num_partitions, timeout)
    inst = _checkout(ctx, module, names, num_replicas, num_partitions)
    reuse = True
    try:
        for i, c in enumerate(inst.contexts):
            c.grid = grid
            c.infeed = infeeds[i] if infeeds is not None else []
            c.outfeed = []
            if parent is not None:
                c.check_failures = parent.check_failures
                c.probes = parent.probes
            else:
                c.check_failures, c.probes = [], {}
        results: list[Any] = [None] * n
        if n == 1:
            results[0] = _run_one(grid, inst, 0, args[0])
        else:
            reuse = False  # unless every process stopped: their functions may still run
            reuse = _run_threads(grid, inst, args, results)
        if grid.error is not None:
            raise grid.error
        leftover = grid.unreceived()
        if leftover:
            c, m = leftover[0]
            what = f"'{m.op.name}' op" if m.op is not None else "a send"
            raise _grid_error(m.op, f"{what} on {process_label(m.sender)}: the value "
                              f"sent on channel {c} was never received"
                              + (f" ({len(leftover)} values in all)" if len(leftover) > 1
                                 else ""))
        outfeeds = [list(c.outfeed) for c in inst.contexts]
    finally:
        if reuse:
            _checkin(module, inst)
    return results, outfeeds


def _run_one(grid: ProcessGrid, inst: _Instance, i: int, args: list[Any]) -> list[Any] | None:
    me = inst.contexts[i].replica_id, inst.contexts[i].partition_id
    try:
        out = inst.functions[i](*args)
    except _Aborted:
        grid.fail(me, None)
        return None
    except ShloError as e:
        if grid.size > 1 and not getattr(e, "names_process", False):
            _name_process(e, me)
        grid.fail(me, e)
        return None
    except BaseException as e:  # noqa: BLE001 - any failure must stop the other processes
        grid.fail(me, e)
        return None
    grid.finish(me)
    return [_to_numpy(v) for v in out]


def _name_process(e: ShloError, me: ProcessId) -> None:
    d = e.diagnostics[0]
    d.message = f"{process_label(me)}: {d.message}"
    e.names_process = True  # type: ignore[attr-defined]
    e.args = (d.message,) + e.args[1:]


def _run_threads(grid: ProcessGrid, inst: _Instance, args: list[list[Any]],
                 results: list[Any]) -> bool:
    """Run every process in its own thread; False when some did not stop after an abort."""
    def work(i: int) -> None:
        try:
            results[i] = _run_one(grid, inst, i, args[i])
        except _Aborted:  # an interrupt that arrived after the process had finished
            pass

    threads = [threading.Thread(target=work, args=(i,), daemon=True,
                                name=f"shlo-{process_label(i, grid.num_partitions)}")
               for i in range(grid.size)]
    for t in threads:
        t.start()
    try:
        aborted_at = None
        while True:
            alive = [t for t in threads if t.is_alive()]
            if not alive:
                return True
            if grid.aborted:
                aborted_at = aborted_at or time.monotonic()
                if time.monotonic() - aborted_at > GRACE:
                    # Still computing after the abort (a long op or an endless loop):
                    # interrupt them and stop waiting.
                    for t in alive:
                        _interrupt(t)
                    for t in alive:
                        t.join(GRACE)
                    return not any(t.is_alive() for t in alive)
            alive[0].join(0.05)
    except BaseException as e:  # KeyboardInterrupt, a test runner's alarm, ...
        grid.abort()
        for t in threads:
            if t.is_alive():
                _interrupt(t)
        raise e


def _interrupt(t: threading.Thread) -> None:
    """Raise _Aborted inside thread ``t`` at its next Python instruction (best effort)."""
    if t.ident is not None:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(t.ident),
                                                   ctypes.py_object(_Aborted))


def _to_numpy(value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(_to_numpy(v) for v in value)
    if isinstance(value, np.generic):
        return np.asarray(value)
    return value


THREADS = ThreadEngine()
"""The default engine of every process (``ProcessContext.engine``)."""
