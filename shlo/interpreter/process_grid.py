"""The process grid: replicas x partitions running concurrently (spec "Parallel execution").

A program runs on ``num_replicas * num_partitions`` processes; each knows its
``process_id = (replica_id, partition_id)`` and has its own :class:`ProcessContext` and its own
prepared function, so SPMD (one function everywhere) and MPMD (a function per process) are the
same thing here. Processes are Python threads: numpy releases the GIL inside its loops, and
the collectives hand arrays over without copying them.

Processes meet in three ways (see docs/process_model.md):

* **collectives** (all_reduce, all_gather, ...): :meth:`ProcessGrid.rendezvous`. The n-th time a
  process reaches a collective of a given kind, group and channel, it meets the n-th arrival
  of every other member of its group; the last to arrive computes the results of the whole
  group once (one reduction, not one per process) and hands each member its part.
* **channels** (send, recv): :meth:`ProcessGrid.send` appends to the channel's FIFO queue without
  waiting; :meth:`ProcessGrid.recv` waits for a value.
* **feeds** (infeed, outfeed): per-process queues in the ProcessContext; the caller supplies
  infeed and gets outfeed back.

Waits never hang. Every wait is re-examined whenever any process changes state, and fails
with an :class:`~shlo.errors.ExecutionError` naming the op, its location and the processes
involved as soon as it cannot complete: a member of the group finished without reaching the
collective, or every live process is waiting for something no one can provide (a deadlock,
such as a recv with no sender). A wait on a process that is still computing is bounded by
``timeout`` seconds (default :data:`DEFAULT_TIMEOUT`). An error in one process aborts the
others: each wait checks the grid's abort flag, and a process still computing after a grace
period is interrupted.
"""

from __future__ import annotations

import ctypes
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from ..errors import ExecutionError, ShloError
from ..ir import Location, Module, Operation, function_type
from ..types import TensorType, TokenType, TupleType
from .evaluator import CompiledBlock, PrepareContext, ProcessContext

__all__ = [
    "ProcessGrid", "ProcessId", "PerProcess", "run_grid", "run_programs", "DEFAULT_TIMEOUT",
    "cross_replica", "cross_partition", "cross_replica_and_partition", "flattened_ids",
    "process_groups", "process_label", "grid_shape",
]

ProcessId = tuple[int, int]
"""``(replica_id, partition_id)``; its flattened id is ``replica_id * num_partitions +
partition_id`` (spec "flattened_ids"), the index of the process in per-process lists."""

DEFAULT_TIMEOUT = 10.0
"""Seconds a process waits at a collective or recv for processes that are still computing."""

GRACE = 1.0
"""Seconds an aborted grid gives its processes to stop before interrupting them."""


# --- process groups (spec "Collective ops") --------------------------------------------------


def cross_replica(replica_groups: Sequence[Sequence[int]], num_replicas: int,
                  num_partitions: int) -> list[list[ProcessId]]:
    """Spec `cross_replica`: each replica group, once per partition."""
    return [[(r, p) for r in group] for group in replica_groups for p in range(num_partitions)]


def cross_partition(partition_groups: Sequence[Sequence[int]], num_replicas: int,
                    num_partitions: int) -> list[list[ProcessId]]:
    """Spec `cross_partition`: each partition group, once per replica."""
    return [[(r, p) for p in group] for group in partition_groups for r in range(num_replicas)]


def cross_replica_and_partition(replica_groups: Sequence[Sequence[int]], num_replicas: int,
                                num_partitions: int) -> list[list[ProcessId]]:
    """Spec `cross_replica_and_partition`: each replica group times all partitions."""
    return [[(r, p) for p in range(num_partitions) for r in group] for group in replica_groups]


def flattened_ids(flattened_id_groups: Sequence[Sequence[int]], num_replicas: int,
                  num_partitions: int) -> list[list[ProcessId]]:
    """Spec `flattened_ids`: ids are ``replica_id * num_partitions + partition_id``."""
    return [[divmod(i, num_partitions) for i in group] for group in flattened_id_groups]


_STRATEGIES: dict[str, Callable[..., list[list[ProcessId]]]] = {
    "cross_replica": cross_replica,
    "cross_partition": cross_partition,
    "cross_replica_and_partition": cross_replica_and_partition,
    "flattened_ids": flattened_ids,
}

# What the ids of each strategy's groups count, and their bound.
_ID_KIND = {"cross_replica": "replica", "cross_partition": "partition",
            "cross_replica_and_partition": "replica", "flattened_ids": "process"}


def process_groups(strategy: str, groups: Sequence[Sequence[int]], num_replicas: int,
                   num_partitions: int) -> list[list[ProcessId]]:
    """The process groups of ``strategy`` (a spec strategy name) for ``groups``.

    Negative ids are padding of ragged groups (`[[0, 1], [2, -1]]`) and are dropped. An empty
    ``groups`` means one group of every id (XLA's convention). Raises ValueError for an id
    outside the grid.
    """
    kind = _ID_KIND[strategy]
    bound = {"replica": num_replicas, "partition": num_partitions,
             "process": num_replicas * num_partitions}[kind]
    clean = [[int(i) for i in g if int(i) >= 0] for g in groups]
    clean = [g for g in clean if g]
    if not clean:
        clean = [list(range(bound))]
    for g in clean:
        for i in g:
            if i >= bound:
                raise ValueError(f"{kind} id {i} in the groups is out of range for the "
                                 f"{num_replicas}x{num_partitions} process grid "
                                 f"({num_replicas} replicas x {num_partitions} partitions); "
                                 f"run with replicas=/partitions= (--replicas/--partitions)")
    return _STRATEGIES[strategy](clean, num_replicas, num_partitions)


def process_label(process: ProcessId | int, num_partitions: int = 1) -> str:
    """`process (replica 1, partition 0)`; a flat id is converted with ``num_partitions``."""
    if isinstance(process, int):
        process = divmod(process, num_partitions)
    return f"process (replica {process[0]}, partition {process[1]})"


def _plural_label(processes: Iterable[ProcessId]) -> str:
    ps = list(processes)
    if len(ps) == 1:
        return process_label(ps[0])
    return "processes " + ", ".join(f"(replica {r}, partition {p})" for r, p in ps)


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
                    w.op, f"{w.what} waits for {_plural_label(gone)}, which finished without "
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
            detail = (f"for {_plural_label(late)} to reach it ("
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

    def attr(name: str) -> int:
        a = module.op.attr(name)
        return int(getattr(a, "value", a)) if a is not None else 1

    r = replicas if replicas is not None else attr("mhlo.num_replicas")
    p = partitions if partitions is not None else attr("mhlo.num_partitions")
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


@dataclass
class _Instance:
    """Prepared functions of every process of one grid (reused across runs)."""

    key: tuple[Any, ...]
    contexts: list[ProcessContext]
    functions: list[CompiledBlock]


_pool_lock = threading.Lock()


def _checkout(module: Module, names: list[str], r: int, p: int,
              custom_calls: dict[str, Callable[..., Any]]) -> _Instance:
    """Prepared functions for the grid, from the module's pool or freshly prepared.

    Kernels may read custom_calls while preparing, so they are part of the pool's key (by
    identity: the pooled contexts hold the callables, so their ids stay unique).
    """
    key = (tuple(names), r, p, tuple(sorted((k, id(v)) for k, v in custom_calls.items())))
    with _pool_lock:
        free = module.__dict__.setdefault("_grid_instances", {}).setdefault(key, [])
        if free:
            return free.pop()
    contexts, functions = [], []
    for i, name in enumerate(names):
        ctx = ProcessContext(replica_id=i // p, partition_id=i % p, num_replicas=r,
                             num_partitions=p, custom_calls=dict(custom_calls))
        contexts.append(ctx)
        functions.append(PrepareContext(module, ctx).function(name))
    return _Instance(key, contexts, functions)


def _checkin(module: Module, inst: _Instance) -> None:
    for c in inst.contexts:
        c.grid = None
        c.infeed, c.outfeed, c.channels = [], [], {}
    with _pool_lock:
        module.__dict__.setdefault("_grid_instances", {}).setdefault(inst.key, []).append(inst)


def run_programs(module: Module, names: list[str], num_replicas: int, num_partitions: int,
                 args: list[list[Any]], infeeds: list[list[Any]] | None = None,
                 custom_calls: dict[str, Callable[..., Any]] | None = None,
                 timeout: float | None = DEFAULT_TIMEOUT,
                 parent: ProcessContext | None = None) -> tuple[list[list[Any]], list[list[Any]]]:
    """Run function ``names[i]`` with ``args[i]`` on process i (flattened id) of the grid.

    Arguments are run-time values already (no checking). ``infeeds[i]`` is the infeed queue of
    process i (the same list object may be shared: processes then pop from one queue).
    ``parent`` is the process that runs the grid (`interpreter.run_parallel`): its check
    failures and probes are shared with the grid's processes.
    Returns (results per process, outfeed values per process).
    """
    n = num_replicas * num_partitions
    grid = ProcessGrid(num_replicas, num_partitions, timeout)
    inst = _checkout(module, names, num_replicas, num_partitions, dict(custom_calls or {}))
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


# --- the public entry ------------------------------------------------------------------------


def run_grid(module: Module, *args: Any, entry: str = "main", replicas: int | None = None,
             partitions: int | None = None, programs: Any = None,
             process_args: Sequence[Sequence[Any]] | None = None,
             infeed: Any = None, outfeed: list[Any] | None = None,
             custom_calls: dict[str, Callable[..., Any]] | None = None,
             timeout: float | None = DEFAULT_TIMEOUT) -> list[list[Any]]:
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

    Returns a list indexed by process id (``replica_id * partitions + partition_id``) of each
    process's list of results.
    """
    from .api import check_argument

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
    results, outfeeds = run_programs(module, names, r, p, values, queues, custom_calls, timeout)
    if outfeed is not None:
        outfeed.extend(outfeeds)
    return results
