"""What a run may use, checked before it is spent: memory per value, grid size, call depth,
time.

A valid program can ask for more than any machine has (an `iota` of 10^11 elements, a
1,000,000-process grid, a function calling itself forever). shlo refuses such runs up front,
with the op and its location, instead of letting numpy or the OS fail half-way (or the machine
swap):

- ``max_bytes``: no result of an op may be larger. Sizes known from the program's static
  types are checked once per module, before the run; results whose shape is computed at run
  time (a `?` in their type) are checked as they are made: the dynamic-shape ops that take
  their result's shape as an operand (`dynamic_iota`, `dynamic_broadcast_in_dim`) before
  computing it, every op with such a result type after (:func:`result_check`). The message
  is the same, at the same op. The default is the machine's physical memory (a larger value
  can never be made); `shlo.run(max_bytes=N)` or `shlo run --max-bytes N` lowers it.
- ``MAX_PROCESSES``: the threaded process grid runs one thread per process; beyond this many,
  the MPI engine is the way (docs/process_model.md).
- recursion: a `func.call` chain deeper than Python's stack is reported at a call of the
  cycle, naming the functions on it.
- ``time_limit``: a run still going after this many seconds is stopped (:class:`TimeLimit`)
  wherever it is, and the error names the op it was computing and the `while` loops around
  it (in its function and in its callers), each with its location and the iteration it was
  in (counted from 0: a run with a time limit is prepared with counting loops). A timer
  thread raises :class:`TimeLimitExceeded` asynchronously in the running thread (CPython's
  ``PyThreadState_SetAsyncExc``), so the run itself checks nothing; on a process grid, in
  the thread of every process still running (the error then names the process too). It
  stops Python code: one long numpy call finishes first.
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import ExecutionError
from ..ir import Module, Operation
from ..types import TensorType

__all__ = ["check_shape_size", "TimeLimit", "TimeLimitExceeded", "time_limit_error",
           "active_time_limit", "MAX_PROCESSES", "default_max_bytes", "check_result_sizes", "result_check",
           "result_too_big", "check_grid_size", "recursion_error", "format_bytes",
           "parse_bytes"]

MAX_PROCESSES = 4096
"""The largest grid the threaded engine runs (one OS thread per StableHLO process)."""


def default_max_bytes() -> int:
    """The machine's physical memory in bytes (no single value can be larger)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return 1 << 40


def format_bytes(n: int) -> str:
    for unit, size in (("TB", 1 << 40), ("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} B"


_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_bytes(text: str) -> int | None:
    """A size as the command line takes it: bytes, or with a K/M/G/T suffix (powers of 1024;
    `8G`, `500M`, `1.5T`); `none` for no limit."""
    t = text.strip().upper().removesuffix("B")
    if t == "NONE":
        return None
    unit = t[-1:] if t[-1:] in _UNITS and t[-1:] else ""
    try:
        value = float(t[:-1] if unit else t)
    except ValueError:
        raise ValueError(f"a size in bytes (e.g. 8G, 500M, 1048576, none), got '{text}'") \
            from None
    if not value > 0 or value == float("inf"):
        raise ValueError(f"the size must be positive, got '{text}'")
    return int(value * _UNITS[unit])


def _nbytes(t: TensorType) -> int:
    n = t.num_elements
    return n * max(t.dtype.itemsize, 1)


def _too_big(what: str, nbytes: int, max_bytes: int) -> str:
    need, limit = format_bytes(nbytes), format_bytes(max_bytes)
    if need == limit:  # too close to tell apart when rounded
        need, limit = f"{nbytes} B", f"{max_bytes} B"
    return (f"{what} needs {need}, more than the memory limit of {limit} "
            f"(shlo.run(max_bytes=...), shlo run --max-bytes)")


def result_too_big(op: Operation, t: TensorType, nbytes: int, max_bytes: int,
                   shape: tuple[int, ...] | None = None) -> ExecutionError:
    """The error for a result of ``op`` (of type ``t``; ``shape`` its run-time shape when
    ``t`` has dynamic dimensions) that needs ``nbytes``, more than ``max_bytes``."""
    what = f"its result {t}"
    if shape is not None:
        what = f"its result {TensorType(tuple(shape), t.element_type, t.encoding)} ({t} in " \
               f"the program)"
    return ExecutionError(f"'{op.name}' op: " + _too_big(what, nbytes, max_bytes), op.location)


def check_result_sizes(module: Module, max_bytes: int | None) -> None:
    """Raise ExecutionError at the first op whose statically shaped result is larger than
    ``max_bytes`` (once per module and limit)."""
    if max_bytes is None:
        return
    checked = module.__dict__.setdefault("_checked_max_bytes", set())
    if max_bytes in checked:
        return
    sizes: dict[int, int] = {}  # by id: ops share their type objects (the parser's caches)
    for op in module.walk():
        for r in op.results:
            t = r.type
            nbytes = sizes.get(id(t))
            if nbytes is None:
                nbytes = sizes[id(t)] = (_nbytes(t) if isinstance(t, TensorType)
                                         and t.is_static else 0)
            if nbytes > max_bytes:
                raise result_too_big(op, t, nbytes, max_bytes)
    checked.add(max_bytes)


def result_check(op: Operation, process: Any) -> Callable[..., None] | None:
    """For an op with a result of dynamic shape, what the generated code calls with its
    results after running it: each is checked against the run's ``process.max_bytes`` (None
    when every result type is static: those were checked before the run)."""
    types = [r.type for r in op.results]
    if all(not isinstance(t, TensorType) or t.is_static for t in types):
        return None

    def fits(*values: Any) -> None:
        limit = process.max_bytes
        if limit is None:
            return
        for v, t in zip(values, types):
            n = getattr(v, "nbytes", 0)
            if n > limit and isinstance(t, TensorType):
                raise result_too_big(op, t, n, limit, v.shape)

    return fits


def check_shape_size(op: Operation, shape: tuple[int, ...], max_bytes: int | None) -> None:
    """Before making ``op``'s result of run-time ``shape`` (a dynamic-shape op that takes it
    as an operand): refuse it when larger than ``max_bytes``."""
    t = op.results[0].type if op.results else None
    if max_bytes is None or not isinstance(t, TensorType):
        return
    n = max(t.dtype.itemsize, 1)
    for d in shape:
        n *= d
    if n > max_bytes:
        raise result_too_big(op, t, n, max_bytes, shape)


def check_grid_size(num_replicas: int, num_partitions: int) -> None:
    """Refuse a grid the threaded engine cannot run."""
    n = num_replicas * num_partitions
    if n > MAX_PROCESSES:
        raise ExecutionError(f"a process grid of {n} processes ({num_replicas} replicas x "
                             f"{num_partitions} partitions) is larger than the threaded "
                             f"engine's {MAX_PROCESSES}: run it on the MPI engine "
                             f"(--engine mpi; docs/process_model.md)")


def recursion_error(module: Module, entry: str) -> ExecutionError:
    """The error for a run that exhausted Python's stack: at a `func.call` on a cycle of the
    call graph reachable from ``entry`` (naming the cycle), or at the entry if none is found."""
    calls: dict[str, list[Operation]] = {}
    for name, func in module.functions.items():
        calls[name] = [op for op in func.walk() if op.name == "func.call"]

    def callee(op: Operation) -> str:
        return op.attr("callee").name

    stack: list[str] = []  # the functions on the current call chain
    done: set[str] = set()

    def visit(name: str) -> ExecutionError | None:
        stack.append(name)
        for op in calls.get(name, []):
            target = callee(op)
            if target in stack:
                cycle = " -> ".join(f"@{n}" for n in stack[stack.index(target):] + [target])
                return ExecutionError(f"'func.call' op: recursion too deep ({cycle} does not "
                                      f"return within Python's stack; XLA refuses recursive "
                                      f"calls)", op.location)
            if target not in done and target in calls:
                found = visit(target)
                if found is not None:
                    return found
        stack.pop()
        done.add(name)
        return None

    found = visit(entry)
    if found is not None:
        return found
    func = module.functions.get(entry)
    return ExecutionError("recursion too deep while running the program",
                          func.location if func is not None else None)


class TimeLimitExceeded(Exception):
    """Raised inside the running thread when its time limit is reached (see TimeLimit)."""


_local = threading.local()  # .limit: the TimeLimit the code of this thread runs under


def active_time_limit() -> TimeLimit | None:
    """The time limit the code of this thread runs under (None: none)."""
    return getattr(_local, "limit", None)


def _raise_in(ident: int, exc: type[BaseException] | None) -> None:
    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(ident), ctypes.py_object(exc) if exc is not None else None)


class TimeLimit:
    """``with TimeLimit(seconds):`` stops the code of this thread after ``seconds`` by raising
    :class:`TimeLimitExceeded` in it (None or a non-positive value: no limit). A process grid
    started inside moves the limit to its processes' threads (:meth:`worker`) while the
    starting thread waits for them (:meth:`waiting`)."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self.fired = False
        self._lock = threading.Lock()
        self._done = False
        self._timer: threading.Timer | None = None
        self._targets: set[int] = set()  # the threads stopped when the time is up
        self._missed = False  # fired while no thread was a target
        self._outer: TimeLimit | None = None

    def _fire(self) -> None:
        with self._lock:
            if self._done:
                return
            self.fired = True
            self._missed = not self._targets
            for ident in self._targets:
                _raise_in(ident, TimeLimitExceeded)

    def __enter__(self) -> "TimeLimit":
        if self.seconds is not None and self.seconds > 0:
            self._targets = {threading.get_ident()}
            self._outer, _local.limit = active_time_limit(), self
            self._timer = threading.Timer(self.seconds, self._fire)
            self._timer.daemon = True
            self._timer.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._timer is None:
            return
        _local.limit = self._outer
        with self._lock:
            self._done = True
            self._timer.cancel()
            if self.fired and exc[0] is None:  # fired after the run ended: withdraw it
                _raise_in(threading.get_ident(), None)

    @contextmanager
    def worker(self) -> Iterator[None]:
        """The body of a grid process's thread: stopped when the time is up (and any grid
        it starts runs under this limit too)."""
        ident = threading.get_ident()
        with self._lock:
            self._targets.add(ident)
        _local.limit = self
        try:
            yield
        finally:
            with self._lock:
                self._targets.discard(ident)
            _local.limit = None

    @contextmanager
    def waiting(self) -> Iterator[None]:
        """A thread waiting for its grid's processes: not stopped meanwhile (they are, and
        the grid reports their error); if the time ran out when no process was left to stop,
        it stops on leaving."""
        ident = threading.get_ident()
        with self._lock:
            was = ident in self._targets
            self._targets.discard(ident)
        try:
            yield
        finally:
            with self._lock:
                if was:
                    self._targets.add(ident)
                missed, self._missed = self._missed and was and not self._done, False
            if missed:
                raise TimeLimitExceeded


def time_limit_error(stop: BaseException, seconds: float) -> ExecutionError:
    """The error for a run stopped by its time limit (``stop``, the TimeLimitExceeded raised
    in it): at the op it was computing, naming its process on a grid and the `while` loops
    around it, innermost first, each with the iteration it was in."""
    from ..errors import runtime_location
    from .observing import failing_step

    step = failing_step(stop)
    hint = "(shlo.run(time_limit=...), shlo run --time-limit)"
    if step is None:
        return ExecutionError(f"time limit of {seconds:g} s reached {hint}")
    op = step.op
    doing = "while computing it"
    where = ""
    for loop, n in reversed(step.loops):
        if loop is op:  # stopped between two iterations of the loop itself
            doing = f"in its iteration {n}" if n is not None else "in it"
            continue
        flc = loop.location.file_line_col() if loop.location else None
        at = f" at {flc[0]}:{flc[1]}:{flc[2]}" if flc else ""
        where += f" inside '{loop.name}'{at}" + (f" (iteration {n})" if n is not None else "")
    process = step.block.ctx.process
    who = ""
    if process.num_replicas * process.num_partitions > 1:
        from ..ops.distributed.groups import process_label

        who = process_label((process.replica_id, process.partition_id)) + ": "
    return ExecutionError(f"{who}'{op.name}' op: time limit of {seconds:g} s reached {doing}"
                          f"{where} {hint}", runtime_location(op))
