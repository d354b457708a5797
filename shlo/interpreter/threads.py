"""The threads engine: the processes of a grid are Python threads of one interpreter.

It implements the two interfaces of :mod:`shlo.ops.distributed.grid`: :class:`ProcessGrid` (a
:class:`~shlo.ops.distributed.grid.Grid`: where the processes of one run meet) and
:class:`ThreadEngine` (an :class:`~shlo.ops.distributed.grid.Engine`: it starts a grid, one
thread per process, and gathers results and outfeeds). numpy releases the GIL inside its loops,
and the collectives hand arrays over without copying them.

Processes meet in two ways (docs/process_model.md):

* **collectives** (all_reduce, all_gather, ...): :meth:`ProcessGrid.rendezvous`. The n-th time a
  process reaches a collective of a given kind, group and channel, it meets the n-th arrival
  of every other member of its group (one *meeting*, with its own condition variable); the
  last to arrive computes the results of the whole group once (one reduction, not one per
  process) and wakes that meeting's members only.
* **channels** (send, recv): :meth:`ProcessGrid.send` appends to the channel's FIFO queue, or
  hands the value to a waiting receiver and wakes it alone; :meth:`ProcessGrid.recv` waits.

Waits never hang, and cost nothing per other process on the hot path. The grid counts its
live processes and those blocked in a wait nothing has satisfied yet; only when the two are
equal (every live process waits: a deadlock) does it look at every process, to say what each
waits for. A process that finishes fails the meetings still waiting for it. A wait for a
process that is still computing is bounded by ``timeout`` seconds (default
:data:`~shlo.ops.distributed.grid.DEFAULT_TIMEOUT`), counted until the last member arrives:
the combine step is not part of it. An error in one process aborts the others: their waits
are woken and unwind, and a process still computing after a grace period is interrupted.

This module knows the evaluator only through the context it is handed
(:meth:`~shlo.interpreter.evaluator.PrepareContext.for_process`), so that the evaluator can make
it the default engine.
"""

from __future__ import annotations

import ctypes
import threading
import time
from collections import deque
from contextlib import nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from ..errors import ExecutionError, ShloError
from ..ir import Module, Operation
from ..ops.distributed.grid import DEFAULT_TIMEOUT, ProcessId
from ..ops.distributed.groups import process_label
from .limits import TimeLimitExceeded, active_time_limit
from ..ops.distributed.meeting import (
    deadlock_message, gone_message, grid_error, timeout_message, waits_at,
)

if TYPE_CHECKING:  # pragma: no cover
    from .evaluator import CompiledBlock, PrepareContext, ProcessContext

__all__ = ["ProcessGrid", "ThreadEngine", "THREADS", "GRACE"]

GRACE = 1.0
"""Seconds an aborted grid gives its processes to stop before interrupting them."""

# --- the grid --------------------------------------------------------------------------------


class _Aborted(BaseException):
    """Raised in a process when another one failed (never reaches the caller)."""


_RUNNING = "running"
_DONE = "done"
_FAILED = "failed"


class _Group:
    """A process group interned by the grid: its id, members and each member's position."""

    __slots__ = ("gid", "members", "index")

    def __init__(self, gid: int, members: tuple[ProcessId, ...]) -> None:
        self.gid = gid
        self.members = members
        self.index = {p: i for i, p in enumerate(members)}


class _Meeting:
    """One occurrence of a collective: the members' values so far. Its members wait on its
    own gate (a lock the last member's results release), never on the grid's lock."""

    __slots__ = ("arrived", "blocked", "count", "done", "error", "full", "gate", "group", "op",
                 "results", "values")

    def __init__(self, group: _Group, op: Operation | None) -> None:
        self.group = group
        self.op = op
        self.gate = threading.Lock()
        self.gate.acquire()
        self.values: list[Any] = [None] * len(group.members)
        self.arrived = [False] * len(group.members)
        self.count = 0
        self.blocked = 0  # members waiting for others to arrive (counted in grid._blocked)
        self.full = False  # every member arrived: the last one combines
        self.done = False
        self.results: list[Any] | None = None
        self.error: BaseException | None = None

    detail = ""

    @property
    def short(self) -> str:
        return waits_at(self.op)

    @property
    def blocking(self) -> bool:
        return not self.full


class _Recv:
    """A process waiting on a channel: the send hands the value over and opens its gate."""

    __slots__ = ("channel", "gate", "me", "message", "op")

    def __init__(self, op: Operation | None, me: ProcessId, channel: int) -> None:
        self.op = op
        self.me = me
        self.channel = channel
        self.gate = threading.Lock()
        self.gate.acquire()
        self.message: _Message | None = None

    @property
    def detail(self) -> str:
        return f" for a send on channel {self.channel}"

    @property
    def short(self) -> str:
        return waits_at(self.op, self.detail)

    @property
    def blocking(self) -> bool:
        return self.message is None


def _pass_gate(gate: threading.Lock, timeout: float | None) -> bool:
    """Wait until ``gate`` opens (False after ``timeout`` seconds); leave it open for the
    next waiter."""
    if not gate.acquire(timeout=-1 if timeout is None else max(timeout, 0.0)):
        return False
    gate.release()
    return True


def _open(gate: threading.Lock) -> None:
    """Open ``gate`` (an open gate stays open)."""
    if gate.locked():
        try:
            gate.release()
        except RuntimeError:  # opened meanwhile
            pass


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
        self._lock = threading.Lock()
        # _RUNNING, _DONE, _FAILED, or what the process waits in (a _Meeting, a _Recv).
        self._state: dict[ProcessId, Any] = {p: _RUNNING for p in self.processes}
        self._live = len(self._state)  # neither finished nor failed
        self._blocked = 0  # in a wait that nothing has satisfied yet
        self._done = 0
        self._groups: dict[int, tuple[Any, _Group]] = {}  # by id() of the caller's tuple
        self._group_ids: dict[tuple[ProcessId, ...], _Group] = {}
        self._meetings: dict[tuple[Any, ...], _Meeting] = {}
        self._combining: set[_Meeting] = set()
        self._seq: dict[tuple[Any, ...], int] = {}
        self._channels: dict[int, deque[_Message]] = {}
        self._receivers: dict[int, deque[_Recv]] = {}
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
        """``me`` returned from its function: meetings still waiting for it cannot complete."""
        with self._lock:
            self._state[me] = _DONE
            self._live -= 1
            self._done += 1
            for m in self._meetings.values():
                i = m.group.index.get(me)
                if i is not None and not m.arrived[i]:
                    first = m.group.members[m.arrived.index(True)]
                    self._abort(grid_error(m.op, gone_message(m.op, first, [me])))
                    return
            self._check_deadlock()

    def fail(self, me: ProcessId, error: BaseException | None) -> None:
        """``me`` raised ``error`` (None for an abort): record the first error, abort the rest."""
        with self._lock:
            if self._state[me] not in (_DONE, _FAILED):
                self._live -= 1
            self._state[me] = _FAILED
            self._abort(error)

    def abort(self, error: BaseException | None = None) -> None:
        """Stop every process at its next wait (from outside the processes)."""
        with self._lock:
            self._abort(error)

    def _abort(self, error: BaseException | None) -> None:
        """(Holding the lock.) Record ``error`` and open every gate: the waits unwind."""
        if error is not None and self.error is None:
            self.error = error
        if self.aborted:
            return
        self.aborted = True
        for m in list(self._meetings.values()) + list(self._combining):
            _open(m.gate)
        for q in self._receivers.values():
            for w in q:
                _open(w.gate)

    # -- collectives ----------------------------------------------------------------------

    def _intern(self, group: Sequence[ProcessId]) -> _Group:
        """(Holding the lock.) The grid's record of ``group``: found by the identity of the
        caller's tuple (kernels pass the same tuple each time), hashed only once."""
        hit = self._groups.get(id(group))
        if hit is not None and hit[0] is group:
            return hit[1]
        members = tuple(group)
        g = self._group_ids.get(members)
        if g is None:
            g = self._group_ids[members] = _Group(len(self._group_ids), members)
        if isinstance(group, tuple):
            self._groups[id(group)] = (group, g)
        return g

    def rendezvous(self, op: Operation | None, group: Sequence[ProcessId], me: ProcessId,
                   value: Any, combine: Callable[[list[Any]], list[Any]],
                   channel_id: int = 0, native: Any = None) -> Any:
        """Meet the other members of ``group`` at ``op``; return ``me``'s part of the results.

        ``combine`` gets the members' values in group order and returns one result per member
        (in group order); the last member to arrive calls it, once for the whole group
        (``native`` is for engines with built-in collectives: threads need none).
        """
        name = op.name if op is not None else ""
        with self._lock:
            if self.aborted:
                raise _Aborted()
            g = self._intern(group)
            i = g.index[me]
            sk = (me, g.gid, name, channel_id)
            n = self._seq.get(sk, 0)
            self._seq[sk] = n + 1
            key = (g.gid, name, channel_id, n)
            m = self._meetings.get(key)
            if m is None:
                m = self._meetings[key] = _Meeting(g, op)
                if self._done:  # a member that finished already will never arrive
                    gone = [p for p in g.members if self._state[p] == _DONE]
                    if gone:
                        self._abort(grid_error(op, gone_message(op, me, gone)))
                        raise _Aborted()
            m.values[i] = value
            m.arrived[i] = True
            m.count += 1
            last = m.count == len(g.members)
            if last:
                del self._meetings[key]
                m.full = True
                self._blocked -= m.blocked
                m.blocked = 0
                self._combining.add(m)
            else:
                m.blocked += 1
                self._blocked += 1
                self._state[me] = m
                self._check_deadlock()
        if last:
            self._combine(m, combine)
        else:
            self._wait_meeting(me, m)
        if m.error is not None or m.results is None:
            raise _Aborted()
        return m.results[i]

    def _combine(self, m: _Meeting, combine: Callable[[list[Any]], list[Any]]) -> None:
        """The last member computes everyone's results, then opens the gate."""
        try:
            results = combine(m.values)
        except BaseException as e:
            with self._lock:
                m.error, m.done = e, True
                self._release(m)
            raise
        with self._lock:
            m.results, m.done = results, True
            m.values = []  # the operands are no longer needed
            self._release(m)

    def _release(self, m: _Meeting) -> None:
        """(Holding the lock.) The members waiting in ``m`` run again; open its gate."""
        self._combining.discard(m)
        state = self._state
        for p, arrived in zip(m.group.members, m.arrived):
            if arrived and state[p] is m:
                state[p] = _RUNNING
        _open(m.gate)

    def _wait_meeting(self, me: ProcessId, m: _Meeting) -> None:
        """Wait (not holding the lock) until ``m`` is combined; fail instead of hanging."""
        timeout = self.timeout
        start = time.monotonic()
        err: BaseException = _Aborted()
        while True:
            left = None if timeout is None else timeout - (time.monotonic() - start)
            if _pass_gate(m.gate, left):
                if m.done:
                    return
                break  # aborted
            with self._lock:  # the deadline passed: still waiting for a process?
                if m.full or m.done or self.aborted:
                    timeout = None  # combining: not bounded by the timeout
                    continue
                err = self._meeting_timeout(me, m)
                break
        with self._lock:  # leaving an unfinished meeting
            if not m.full:
                m.blocked -= 1
                self._blocked -= 1
            if self._state[me] is m:
                self._state[me] = _RUNNING
        raise err

    def _meeting_timeout(self, me: ProcessId, m: _Meeting) -> ExecutionError:
        arrived = [p for p, a in zip(m.group.members, m.arrived) if a]
        late = [(p, self._describe(self._state[p])) for p, a in
                zip(m.group.members, m.arrived) if not a]
        return grid_error(m.op, timeout_message(m.op, me, self.timeout or 0.0, arrived, late))

    # -- channels -------------------------------------------------------------------------

    def send(self, op: Operation | None, channel_id: int, me: ProcessId,
             values: tuple[Any, ...]) -> None:
        """Hand ``values`` to the oldest receiver waiting on channel ``channel_id``, or queue
        them (does not wait for the receiver)."""
        msg = _Message(values, me, op)
        with self._lock:
            if self.aborted:
                raise _Aborted()
            waiting = self._receivers.get(channel_id)
            if waiting:
                w = waiting.popleft()
                w.message = msg
                self._blocked -= 1
                if self._state[w.me] is w:
                    self._state[w.me] = _RUNNING
                _open(w.gate)
            else:
                self._channels.setdefault(channel_id, deque()).append(msg)

    def recv(self, op: Operation | None, channel_id: int, me: ProcessId) -> tuple[Any, ...]:
        """Take the oldest value sent on channel ``channel_id``, waiting for one if needed."""
        with self._lock:
            if self.aborted:
                raise _Aborted()
            q = self._channels.get(channel_id)
            if q:
                return q.popleft().values
            w = _Recv(op, me, channel_id)
            self._receivers.setdefault(channel_id, deque()).append(w)
            self._state[me] = w
            self._blocked += 1
            self._check_deadlock()
        if _pass_gate(w.gate, self.timeout) and w.message is not None:
            return w.message.values
        with self._lock:
            if w.message is not None:  # sent just after the deadline
                return w.message.values
            self._receivers[channel_id].remove(w)
            self._blocked -= 1
            if self._state[me] is w:
                self._state[me] = _RUNNING
            if self.aborted:
                raise _Aborted()
            running = [(p, "still running") for p, s in self._state.items() if s == _RUNNING]
            raise grid_error(op, timeout_message(op, me, self.timeout or 0.0, None, running,
                                                 w.detail))

    def unreceived(self) -> list[tuple[int, _Message]]:
        """Values sent and never received, as (channel_id, message)."""
        with self._lock:
            return [(c, m) for c, q in sorted(self._channels.items()) for m in q]

    # -- deadlocks ------------------------------------------------------------------------

    def _check_deadlock(self) -> None:
        """(Holding the lock.) O(1) unless every live process is blocked; then every process's
        state goes into the message."""
        if self._live == 0 or self._blocked < self._live or self.aborted:
            return
        waits = [(p, s) for p, s in self._state.items()
                 if isinstance(s, (_Meeting, _Recv)) and s.blocking]
        if len(waits) < self._live:  # pragma: no cover - the counts are kept exact
            return
        p, w = waits[0]
        states = [(q, self._describe(s)) for q, s in self._state.items()]
        self._abort(grid_error(w.op, deadlock_message(w.op, p, w.detail, states)))

    @staticmethod
    def _describe(s: Any) -> str:
        if isinstance(s, (_Meeting, _Recv)):
            return s.short
        return {_DONE: "finished", _FAILED: "failed"}.get(s, "still running")


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
           ctx.counted, observed)
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
            # Prepared check ops hold the lists they saw: empty them, do not replace them.
            c.check_failures.clear()
            c.probes.clear()
            c.max_bytes = ctx.process.max_bytes
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
            name = f"'{m.op.name}' op" if m.op is not None else "a send"
            raise grid_error(m.op, f"{name} on {process_label(m.sender)}: the value "
                              f"sent on channel {c} was never received"
                              + (f" ({len(leftover)} values in all)" if len(leftover) > 1
                                 else ""))
        outfeeds = [list(c.outfeed) for c in inst.contexts]
        if parent is not None:  # the grid's check failures and probes are the parent's
            for c in inst.contexts:
                parent.check_failures.extend(c.check_failures)
                for k, v in c.probes.items():
                    parent.probes.setdefault(k, []).extend(v)
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
    """Run every process in its own thread; False when some did not stop after an abort.
    A time limit of the run moves to the processes' threads meanwhile (limits.TimeLimit)."""
    limit = active_time_limit()

    def work(i: int) -> None:
        try:
            with limit.worker() if limit is not None else nullcontext():
                results[i] = _run_one(grid, inst, i, args[i])
        except (_Aborted, TimeLimitExceeded):  # arrived after the process had finished
            pass

    threads = [threading.Thread(target=work, args=(i,), daemon=True,
                                name=f"shlo-{process_label(i, grid.num_partitions)}")
               for i in range(grid.size)]
    with limit.waiting() if limit is not None else nullcontext():
        return _wait_for(grid, threads)


def _wait_for(grid: ProcessGrid, threads: list[threading.Thread]) -> bool:
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
