"""What a run may use, checked before it is spent: memory per value, grid size, call depth.

A valid program can ask for more than any machine has (an `iota` of 10^11 elements, a
1,000,000-process grid, a function calling itself forever). shlo refuses such runs up front,
with the op and its location, instead of letting numpy or the OS fail half-way (or the machine
swap):

- ``max_bytes``: no result of an op may be larger. Sizes known from the program's static
  types are checked once per module, before the run (results whose shape is computed at run
  time are not checked yet). The default is the machine's physical memory (a larger value can
  never be made); `shlo.run(max_bytes=N)` or `shlo run --max-bytes N` lowers it.
- ``MAX_PROCESSES``: the threaded process grid runs one thread per process; beyond this many,
  the MPI engine is the way (docs/process_model.md).
- recursion: a `func.call` chain deeper than Python's stack is reported at a call of the
  cycle, naming the functions on it.
- ``time_limit``: a run still going after this many seconds is stopped (:class:`TimeLimit`)
  wherever it is, and the error names the op it was computing and the `while` loops around
  it. A timer thread raises :class:`TimeLimitExceeded` asynchronously in the running thread
  (CPython's ``PyThreadState_SetAsyncExc``), so the run itself checks nothing. It stops
  Python code: one long numpy call finishes first. On a process grid the processes' own
  threads are not stopped; their waits are bounded by the grid's ``timeout``.
"""

from __future__ import annotations

import ctypes
import os
import threading
from typing import Any

from ..errors import ExecutionError
from ..ir import Module, Operation
from ..types import TensorType

__all__ = ["TimeLimit", "TimeLimitExceeded", "time_limit_error", "MAX_PROCESSES", "default_max_bytes", "check_result_sizes",
           "check_grid_size", "recursion_error", "format_bytes", "parse_bytes"]

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
                raise ExecutionError(f"'{op.name}' op: "
                                     + _too_big(f"its result {t}", nbytes, max_bytes),
                                     op.location)
    checked.add(max_bytes)


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


class TimeLimit:
    """``with TimeLimit(seconds):`` stops the code of this thread after ``seconds`` by raising
    :class:`TimeLimitExceeded` in it (None or a non-positive value: no limit)."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self.fired = False
        self._lock = threading.Lock()
        self._done = False
        self._timer: threading.Timer | None = None
        self._ident = threading.get_ident()

    def _fire(self) -> None:
        with self._lock:
            if not self._done:
                self.fired = True
                ctypes.pythonapi.PyThreadState_SetAsyncExc(
                    ctypes.c_ulong(self._ident), ctypes.py_object(TimeLimitExceeded))

    def __enter__(self) -> "TimeLimit":
        if self.seconds is not None and self.seconds > 0:
            self._ident = threading.get_ident()
            self._timer = threading.Timer(self.seconds, self._fire)
            self._timer.daemon = True
            self._timer.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._timer is None:
            return
        with self._lock:
            self._done = True
            self._timer.cancel()
            if self.fired and exc[0] is None:  # fired after the run ended: withdraw it
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self._ident), None)


def time_limit_error(stop: BaseException, seconds: float) -> ExecutionError:
    """The error for a run stopped by its time limit (``stop``, the TimeLimitExceeded raised
    in it): at the op it was computing, naming the `while` loops around that op."""
    from ..errors import runtime_location
    from .evaluator import CompiledBlock

    op = CompiledBlock._failing_op(stop)
    if op is None:
        return ExecutionError(f"time limit of {seconds:g} s reached (shlo.run(time_limit=...), "
                              f"shlo run --time-limit)")
    loops = []
    o: Any = op
    while o is not None:
        region = getattr(getattr(o, "parent", None), "parent", None)
        o = getattr(region, "parent", None)
        if isinstance(o, Operation) and o.name == "stablehlo.while":
            flc = o.location.file_line_col() if o.location else None
            loops.append("'stablehlo.while'" + (f" at {flc[0]}:{flc[1]}:{flc[2]}" if flc else ""))
    inside = "".join(f" inside {w}" for w in loops)
    return ExecutionError(f"'{op.name}' op: time limit of {seconds:g} s reached while computing "
                          f"it{inside} (shlo.run(time_limit=...), shlo run --time-limit)",
                          runtime_location(op))
