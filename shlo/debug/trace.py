"""Tracing a run op by op: every executed op's name, location, time, iteration and results.

:func:`trace` runs a function through the interpreter's observer hook
(:class:`shlo.interpreter.evaluator.Observer`) and returns a :class:`Trace`: one
:class:`Event` per executed op instance, in program order (an op with regions comes before the
ops of its regions; an op of a `while` body appears once per iteration, numbered by
``iteration``). Memory stays bounded: an event keeps a :class:`Summary` of each result (shape,
dtype, min/max/mean, NaN/inf counts, a CRC-32 of the bytes); the values themselves only with
``values=True``, or streamed to a directory in the upstream interpreter's probe layout
(``index.csv`` with ``probe_id,type,path`` lines, one ``probeN.npy`` per value; see
:func:`read_probe_dir`) with ``directory=``. Filters (``ops``, ``locations``, ``functions``)
select what is recorded; ops outside them run unobserved.

`interpreter.probe` ops are traced like any op; their values, by probe id, are in
:attr:`Trace.probes`.
"""

from __future__ import annotations

import gc
import itertools
import math
import os
import re
import time
import zlib
from time import perf_counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from ..dtypes import is_ml_float, is_sub_byte_int
from ..errors import ShloError
from ..ir import CallSiteLoc, FusedLoc, Location, Module, NameLoc, Operation
from ..types import QuantizedType, TensorType, Type, format_type

__all__ = [
    "Event",
    "Summary",
    "Trace",
    "Tracer",
    "location_name",
    "op_location",
    "read_probe_dir",
    "storage_array",
    "summarize",
    "trace",
    "typed_array",
]


# --- locations -------------------------------------------------------------------------------


def op_location(op: Operation) -> str:
    """`file:line:col` of ``op`` ("" when its location has none)."""
    flc = op.location.file_line_col()
    return f"{flc[0]}:{flc[1]}:{flc[2]}" if flc else ""


def location_name(loc: Location) -> str | None:
    """The name part of a location (`loc("name"(...))`, also inside callsite/fused)."""
    if isinstance(loc, NameLoc):
        return loc.name
    if isinstance(loc, CallSiteLoc):
        return location_name(loc.callee) or location_name(loc.caller)
    if isinstance(loc, FusedLoc):
        for x in loc.locations:
            n = location_name(x)
            if n:
                return n
    return None


def enclosing_function(op: Operation) -> str:
    """The name of the `func.func` ``op`` is in ("" at module level)."""
    cur: Any = op
    while cur is not None:
        if isinstance(cur, Operation) and cur.name == "func.func" and cur is not op:
            a = cur.attr("sym_name")
            return str(a.value) if a is not None else ""
        cur = cur.parent
    return ""


# --- summaries -------------------------------------------------------------------------------


class Summary(NamedTuple):
    """What a trace keeps of a value by default. ``min``/``max``/``mean`` are over the finite
    elements (magnitudes for complex; None when there are none; the mean of a float64 sum);
    ``hash`` is the CRC-32
    of the value's bytes (8 hex digits) (equal values of equal types have equal hashes).
    (A named tuple: made once per traced result, it must be cheap.)"""

    shape: tuple[int, ...]
    dtype: str
    min: float | None
    max: float | None
    mean: float | None
    nan: int
    inf: int
    hash: str

    def __str__(self) -> str:
        shape = "x".join(map(str, self.shape)) or "scalar"
        rng = "" if self.min is None else f" [{self.min:.6g}, {self.max:.6g}] mean {self.mean:.6g}"
        bad = (f" nan {self.nan}" if self.nan else "") + (f" inf {self.inf}" if self.inf else "")
        return f"{shape} {self.dtype}{rng}{bad}"


def _as_numbers(a: np.ndarray) -> np.ndarray:
    """``a`` in a dtype numpy reduces (ml_dtypes floats through f32, sub-byte ints as int8)."""
    if is_ml_float(a.dtype):
        return a.astype(np.float32)
    if is_sub_byte_int(a.dtype):
        return a.astype(np.int8)
    return a


def summarize(value: Any) -> Summary:
    """The :class:`Summary` of a run-time value (tokens and tuples summarise as their kind).

    The common case costs one CRC and three reductions: the sum comes first, and a finite sum
    means no NaN or inf anywhere (one would make it NaN or inf), so the counts need no pass;
    numpy scalars (scalar programs) are summarised with Python floats."""
    cls = type(value)
    if cls is not np.ndarray:
        if isinstance(value, np.generic) and value.dtype.kind in "fiu" and \
                value.dtype.isbuiltin == 1:
            return _scalar_summary(value)
        if isinstance(value, tuple) or not isinstance(value, (np.ndarray, np.generic)):
            kind = "tuple" if isinstance(value, tuple) else type(value).__name__.lower()
            return Summary((), kind, None, None, None, 0, 0, "")
    a = np.asarray(value)
    dt = a.dtype
    if a.flags.c_contiguous:
        flat = a.reshape(-1)
        digest = f"{_CRC(a if dt.kind != 'V' and a.ndim else flat.view(np.uint8)):08x}"
    else:
        flat = np.ascontiguousarray(a).reshape(-1)
        digest = f"{_CRC(flat.view(np.uint8)):08x}"
    nan = inf = 0
    lo = hi = mean = None
    if a.size:
        w = _as_numbers(flat) if dt.kind == "V" else flat
        kind = w.dtype.kind
        if kind == "c":
            w = np.abs(w)
        elif kind == "b":
            w = w.view(np.int8)
        total = float(_ADD(w, dtype=np.float64))
        if math.isfinite(total):  # no NaN or inf anywhere
            lo, hi, mean = float(_MIN(w)), float(_MAX(w)), total / w.size
        else:  # the slow path: count them, summarise the finite rest
            finite = np.isfinite(w)
            nan = int(np.isnan(w).sum())
            inf = int(finite.size - finite.sum()) - nan
            if nan or inf:
                w = w[finite]
            if w.size:
                lo, hi = float(_MIN(w)), float(_MAX(w))
                mean = float(_ADD(w, dtype=np.float64)) / w.size
    name = _NAMES.get(dt)
    if name is None:
        name = _NAMES[dt] = str(dt)
    return Summary(a.shape, name, lo, hi, mean, nan, inf, digest)


def _scalar_summary(x: np.generic) -> Summary:
    dt = x.dtype
    name = _NAMES.get(dt)
    if name is None:
        name = _NAMES[dt] = str(dt)
    digest = f"{_CRC(x.tobytes()):08x}"
    v = float(x)
    if math.isfinite(v):
        return Summary((), name, v, v, v, 0, 0, digest)
    return Summary((), name, None, None, None, int(v != v), int(v == v), digest)


_NAMES: dict[np.dtype, str] = {}
_MIN, _MAX, _ADD, _CRC = np.minimum.reduce, np.maximum.reduce, np.add.reduce, zlib.crc32


# --- events and traces -----------------------------------------------------------------------


class Event:
    """One executed op instance. ``start`` is seconds since the run began, ``seconds`` the
    op's time including its regions and callees, ``self_seconds`` without them; ``iteration``
    counts this op's executions within the enclosing op's current execution (the iteration of
    a `while` body, the call of a function); ``key`` identifies the op in its module (its
    position in the module's walk order), the same in every run of that module."""

    __slots__ = (
        "depth",
        "index",
        "iteration",
        "key",
        "nbytes",
        "op",
        "operands",
        "parent",
        "process",
        "seconds",
        "self_seconds",
        "start",
        "summaries",
        "values",
    )

    def __init__(self, index: int, op: Operation, key: int, iteration: int, depth: int,
                 process: int, start: float, parent: Event | None) -> None:
        self.index, self.op, self.key, self.iteration = index, op, key, iteration
        self.depth, self.process, self.start, self.parent = depth, process, start, parent
        self.seconds: float | None = None  # None: the op raised (or is still running)
        self.self_seconds: float = 0.0
        self.summaries: list[Summary] = []
        self.values: list[Any] | None = None
        self.nbytes = 0  # bytes of the results
        self.operands: tuple[Any, ...] | None = None  # with values=True

    @property
    def name(self) -> str:
        return self.op.name

    @property
    def location(self) -> str:
        return op_location(self.op)

    @property
    def location_name(self) -> str | None:
        return location_name(self.op.location)

    @property
    def function(self) -> str:
        return enclosing_function(self.op)

    @property
    def result_types(self) -> list[Type]:
        return [v.type for v in self.op.results]

    def where(self) -> str:
        """`file:line:col` (or the name location, or the op's position) for messages."""
        return self.location or (self.location_name or "") or f"op #{self.key}"

    def __repr__(self) -> str:
        it = f" iteration {self.iteration}" if self.iteration else ""
        return f"<Event #{self.index} {self.name} at {self.where()}{it}>"


@dataclass
class Trace:
    """What :func:`trace` recorded: ``events`` in program order (per process, processes in
    order), the run's ``results``, the values of `interpreter.probe` ops by probe id, the
    wall-clock ``seconds`` of the run and the ``directory`` values were streamed to."""

    module: Module
    events: list[Event]
    results: list[Any] = field(default_factory=list)
    probes: dict[str, list[Any]] = field(default_factory=dict)
    seconds: float = 0.0
    directory: str | None = None
    error: ShloError | None = None

    def __len__(self) -> int:
        return len(self.events)

    def __iter__(self):
        return iter(self.events)

    def find(self, name: str | None = None, location: str | None = None) -> list[Event]:
        """Events of ops named ``name`` (with or without the dialect prefix) and/or whose
        location matches the regex ``location``."""
        out = []
        for e in self.events:
            if name is not None and e.name != name and e.name.split(".", 1)[-1] != name:
                continue
            if location is not None and not re.search(location, e.location or ""):
                continue
            out.append(e)
        return out

    def table(self, limit: int | None = None) -> str:
        """One line per event: index, location, op, iteration, time, result summaries."""
        lines = []
        for e in self.events[:limit]:
            ms = "failed" if e.seconds is None else f"{e.seconds * 1e3:9.3f} ms"
            it = f" #{e.iteration}" if e.iteration else ""
            res = "; ".join(str(s) for s in e.summaries)
            lines.append(f"{e.index:5d} {'  ' * e.depth}{e.name}{it} {ms}  {e.where()}  {res}")
        if limit is not None and len(self.events) > limit:
            lines.append(f"... {len(self.events) - limit} more")
        return "\n".join(lines)

    def save(self, path: str) -> None:
        """Write the recorded values (needs ``values=True``) to an ``.npz``: ``v{index}_{k}``
        holds result ``k`` of event ``index`` (ml_dtypes values as their storage bits), and
        ``index`` a table (JSON text) of every event's op, location, iteration and types."""
        import json

        arrays: dict[str, np.ndarray] = {}
        rows = []
        for e in self.events:
            names = []
            for k, v in enumerate(e.values or ()):
                if isinstance(v, np.ndarray):
                    arrays[f"v{e.index}_{k}"] = storage_array(v)
                    names.append(f"v{e.index}_{k}")
            rows.append({"index": e.index, "op": e.name, "location": e.location,
                         "name": e.location_name, "function": e.function,
                         "iteration": e.iteration, "process": e.process,
                         "seconds": e.seconds, "types": [format_type(t) for t in
                                                         e.result_types],
                         "values": names})
        arrays["index"] = np.array(json.dumps(rows))
        np.savez(path, **arrays)  # type: ignore[arg-type]


# --- the observer ----------------------------------------------------------------------------

_CONTROL = frozenset({"stablehlo.while", "stablehlo.case", "stablehlo.if", "func.call",
                      "stablehlo.call", "call", "stablehlo.composite", "chlo.scan"})


# Ops that may run other ops without having regions (callees, custom-call computations).
_NESTING = _CONTROL | {"stablehlo.custom_call", "interpreter.run_parallel"}


class _Relay:
    """The observer a module is prepared with for tracing: it observes every op and forwards
    to the current :class:`Tracer`, so repeated traces (and profiles) of a module reuse one
    preparation whatever their filters."""

    def __init__(self, module: Module) -> None:
        self.target: Tracer | None = None
        self.keys, self.leaves = _keys_and_leaves(module)

    def wants(self, op: Operation) -> bool:
        return True

    def enter(self, op: Operation, process: Any) -> None:
        self.target.enter(op, process)  # type: ignore[union-attr]

    def exit(self, op: Operation, process: Any, operands: tuple[Any, ...],
             results: Sequence[Any], seconds: float) -> None:
        self.target.exit(op, process, operands, results, seconds)  # type: ignore[union-attr]

    # for engines whose processes run elsewhere (MPI ranks): see shlo/debug/ranks.py
    def for_ranks(self) -> Any:
        from .ranks import RankTracing

        return RankTracing.of(self.target, relay_for)  # type: ignore[arg-type]

    def absorb(self, rows: list[tuple[Any, ...]]) -> None:
        from .ranks import absorb

        absorb(self.target, rows, Event)  # type: ignore[arg-type]


def _keys_and_leaves(module: Module) -> tuple[dict[int, int], frozenset[int]]:
    """Each op's key (its position in the module's walk) and the ids of the ops that run no
    other op (no regions, no callee), by op id."""
    keys: dict[int, int] = {}
    leaves = []
    for i, op in enumerate(module.walk()):
        keys[id(op)] = i
        if not op.regions and op.name not in _NESTING:
            leaves.append(id(op))
    return keys, frozenset(leaves)


def relay_for(module: Module, tracer: Tracer) -> _Relay:
    """The module's relay, now forwarding to ``tracer`` (its ``enter``/``exit`` become the
    tracer's own bound methods: no forwarding call per op)."""
    relay = module.__dict__.get("_debug_relay")
    if relay is None:
        relay = module.__dict__["_debug_relay"] = _Relay(module)
    relay.target = tracer
    relay.enter, relay.exit = tracer.enter, tracer.exit  # type: ignore[method-assign]
    return relay


class _Frame:
    __slots__ = ("children", "counts", "event")

    def __init__(self, event: Event | None) -> None:
        self.event = event
        self.counts: dict[int, int] = {}
        self.children = 0.0


class Tracer:
    """The :class:`~shlo.interpreter.evaluator.Observer` behind :func:`trace` (and the
    profiler). ``ops`` are op names (`stablehlo.add` or `add`), ``locations`` a regex over
    `file:line:col` and the name location, ``functions`` function names; an op is recorded
    when it passes every filter given. ``values`` keeps copies of the results, ``directory``
    streams them to disk in the probe layout, ``summaries=False`` skips summaries (the
    profiler's mode)."""

    def __init__(self, module: Module, ops: Iterable[str] | None = None,
                 locations: str | None = None, functions: Iterable[str] | None = None,
                 values: bool = False, directory: str | None = None,
                 summaries: bool = True) -> None:
        self.module = module
        self.ops = None if ops is None else {o if "." in o else f"stablehlo.{o}" for o in ops}
        self.locations = re.compile(locations) if locations else None
        self.functions = None if functions is None else {f.lstrip("@") for f in functions}
        self.keep_values = values
        self.summaries = summaries
        self.writer = _ProbeWriter(directory) if directory else None
        relay = module.__dict__.get("_debug_relay")
        self.keys, leaves = (relay.keys, relay.leaves) if relay is not None else \
            _keys_and_leaves(module)
        self.events: list[Event] = []
        self._recorded: dict[int, bool] = {}
        self._leaves = leaves  # ops that run no other op (no frame of their own)
        # without filters every op is recorded (no decision per op)
        self._everything = self.ops is None and self.functions is None and \
            self.locations is None
        self._pending: dict[int, Event | None] = {}  # per process: the running leaf's event
        self._batch: list[tuple[list[Any], int, np.ndarray]] = []  # results to summarise
        self._last: tuple[Any, Any] = (None, None)  # the last process seen, its (pid, stack)
        self._batch_bytes = 0
        self._stacks: dict[int, list[_Frame]] = {}
        self._counter = itertools.count()
        self.t0 = time.perf_counter()

    # Observer protocol
    def wants(self, op: Operation) -> bool:
        if self._record(op):
            return True
        return bool(op.regions) or op.name in _CONTROL  # for iteration numbers and nesting

    def _record(self, op: Operation) -> bool:
        r = self._recorded.get(id(op))
        if r is None:
            r = self._recorded[id(op)] = self._selected(op) or op.name == "interpreter.probe"
        return r

    def _selected(self, op: Operation) -> bool:
        if self.ops is not None and op.name not in self.ops:
            return False
        if self.functions is not None and enclosing_function(op) not in self.functions:
            return False
        if self.locations is not None:
            text = f"{op_location(op)} {location_name(op.location) or ''}"
            if not self.locations.search(text):
                return False
        return True

    def _stack(self, process: Any) -> tuple[int, list[_Frame]]:
        pid = process.process_id
        stack = self._stacks.get(pid)
        if stack is None:
            stack = self._stacks[pid] = [_Frame(None)]
        return pid, stack

    def enter(self, op: Operation, process: Any) -> None:
        last = self._last  # (read once: grid processes may run in threads)
        if process is last[0]:  # the same process as last time: skip the lookups
            pid, stack = last[1]
        else:
            pid, stack = found = self._stack(process)
            self._last = (process, found)
        top = stack[-1]
        k = id(op)
        counts = top.counts
        it = counts.get(k, 0)
        counts[k] = it + 1
        ev = None
        if self._everything:
            rec = True
        else:
            rec = self._recorded.get(k)
            if rec is None:
                rec = self._record(op)
        if rec:
            ev = Event(next(self._counter), op, self.keys.get(k, -1), it, len(stack) - 1, pid,
                       perf_counter() - self.t0,
                       top.event if top.event is not None or len(stack) == 1 else
                       _parent(stack))
            self.events.append(ev)
        if k in self._leaves:  # runs no nested op: no frame (fewer objects, less GC)
            self._pending[pid] = ev
        else:
            stack.append(_Frame(ev))

    def exit(self, op: Operation, process: Any, operands: tuple[Any, ...],
             results: Sequence[Any], seconds: float) -> None:
        last = self._last
        if process is last[0]:
            pid, stack = last[1]
        else:
            pid, stack = self._stack(process)
        if id(op) in self._leaves:
            children = 0.0
            ev = self._pending.pop(pid)
        else:
            frame = stack.pop()
            children, ev = frame.children, frame.event
        stack[-1].children += seconds
        if ev is None:
            return
        ev.seconds = seconds
        ev.self_seconds = seconds - children if seconds > children else 0.0
        nbytes = 0
        for r in results:
            if type(r) is np.ndarray:
                nbytes += r.nbytes
            else:
                nbytes += getattr(r, "nbytes", 0)
        ev.nbytes = nbytes
        if self.summaries:
            ev.summaries = sums = []
            for r in results:
                if type(r) is np.ndarray and 0 < r.size <= _BATCH_ELEMENTS and \
                        r.dtype.kind in "fiu" and r.dtype.isbuiltin == 1:
                    sums.append(None)  # filled by flush()
                    self._batch.append((sums, len(sums) - 1, r))
                    self._batch_bytes += r.nbytes
                else:
                    sums.append(summarize(r))
            if self._batch_bytes > _BATCH_BYTES or len(self._batch) >= _BATCH_VALUES:
                self.flush()
        if self.keep_values:
            ev.operands = operands
        if self.keep_values or op.name == "interpreter.probe":
            ev.values = [np.array(r, copy=True) if isinstance(r, np.ndarray) else r
                         for r in results]
        if self.writer is not None:
            self.writer.write(ev, results)


    def flush(self) -> None:
        """Summarise the small results kept since the last flush, a batch per dtype: three
        `reduceat`s over their concatenation instead of three reductions per result (a small
        result's reductions cost more than most small ops). A batch holds at most
        _BATCH_BYTES of results that would otherwise be freed (values are immutable)."""
        batch, self._batch, self._batch_bytes = self._batch, [], 0
        groups: dict[np.dtype, list[tuple[list[Any], int, np.ndarray]]] = {}
        for item in batch:
            groups.setdefault(item[2].dtype, []).append(item)
        for dt, items in groups.items():
            sizes = [a.size for _, _, a in items]
            starts = np.zeros(len(items), np.intp)
            np.cumsum(sizes[:-1], out=starts[1:])
            flat = np.concatenate([a.reshape(-1) for _, _, a in items])
            totals = np.add.reduceat(flat, starts, dtype=np.float64).tolist()
            lows = np.minimum.reduceat(flat, starts).tolist()
            highs = np.maximum.reduceat(flat, starts).tolist()
            name = _NAMES.get(dt)
            if name is None:
                name = _NAMES[dt] = str(dt)
            for (sums, i, a), s, n, t, lo, hi in zip(items, starts.tolist(), sizes, totals,
                                                       lows, highs):
                if math.isfinite(t):  # no NaN or inf (as in summarize)
                    sums[i] = Summary(a.shape, name, float(lo), float(hi), t / n, 0, 0,
                                      f"{_CRC(flat[s:s + n]):08x}")
                else:
                    sums[i] = summarize(a)


# Results of at most _BATCH_ELEMENTS elements are summarised in batches (Tracer.flush), of at
# most _BATCH_VALUES results or _BATCH_BYTES bytes.
_BATCH_ELEMENTS = 1 << 14
_BATCH_VALUES = 4096
_BATCH_BYTES = 4 << 20


def _parent(stack: list[_Frame]) -> Event | None:
    for f in reversed(stack):
        if f.event is not None:
            return f.event
    return None


def trace(module: Module | str, *args: Any, entry: str = "main", ops: Iterable[str] | None = None,
          locations: str | None = None, functions: Iterable[str] | None = None,
          values: bool = False, directory: str | None = None, **run_options: Any) -> Trace:
    """Run ``entry`` on ``args`` and record every executed op (see the module docstring).

    ``run_options`` are :func:`shlo.run`'s (``verify``, ``infeed``, ``custom_calls``,
    ``replicas``, ...). A run that fails returns the trace up to the failing op (its event has
    ``seconds`` None) with the error in ``error``; nothing is raised.
    """
    from ..interpreter.api import run

    if isinstance(module, str):
        from ..syntax.parser import parse

        module = parse(module)
    tracer = Tracer(module, ops, locations, functions, values, directory)
    probes: dict[str, list[Any]] = {}
    out = Trace(module, tracer.events, probes=probes, directory=directory)
    t0 = time.perf_counter()
    collecting = gc.isenabled()
    gc.disable()  # events are kept objects: collections would walk the whole heap (the IR...)
    try:
        out.results = run(module, *args, entry=entry, observer=relay_for(module, tracer),
                          **run_options)
    except ShloError as e:
        out.error = e
    finally:
        tracer.flush()
        if collecting:
            gc.enable()
    out.seconds = time.perf_counter() - t0
    out.events.sort(key=lambda e: (e.process, e.index))
    for e in out.events:
        if e.name == "interpreter.probe" and e.values:
            probes.setdefault(str(e.op.attr("probe_id").value), []).append(e.values[0])
    if tracer.writer is not None:
        tracer.writer.close()
    return out


# --- the probe directory ---------------------------------------------------------------------


def storage_array(a: np.ndarray) -> np.ndarray:
    """``a`` as numpy-native storage: ml_dtypes floats and sub-byte ints as unsigned ints of
    their item size (the upstream interpreter writes bf16 as `<u2`); other dtypes unchanged."""
    if a.dtype.kind == "V":
        return np.ascontiguousarray(a).view(f"<u{a.dtype.itemsize}")
    return a


def typed_array(stored: np.ndarray, type_text: str) -> np.ndarray:
    """The value of MLIR type ``type_text`` from its stored array (the inverse of
    :func:`storage_array`)."""
    from ..syntax.parser import Parser

    from ..interpreter.arrays import as_declared

    t = Parser(type_text).parse_type()
    if not isinstance(t, TensorType):
        return stored
    et = t.element_type
    dtype = et.storage_type.dtype if isinstance(et, QuantizedType) else et.dtype
    value = as_declared(stored, t)  # narrow types from their bits
    return value if value.dtype == dtype else value.astype(dtype)


class _ProbeWriter:
    """Streams values to ``directory`` as the upstream interpreter's `--probe-output-dir`
    does: `probeN.npy` files and an `index.csv` of `probe_id,type,path` lines (probe ids are
    the probe op's own, else `<location name>.<n>` or `probe<n>` per traced value, as
    `interpreter-instrument-with-probe` names them). `ops.csv` beside it describes each file:
    op, location, function, iteration, process, seconds."""

    def __init__(self, directory: str) -> None:
        os.makedirs(directory, exist_ok=True)
        self.directory = directory
        # open for the run's duration (closed by close(), after the run)
        join = os.path.join
        self.index = open(join(directory, "index.csv"), "w", encoding="utf-8")  # noqa: SIM115
        self.ops = open(join(directory, "ops.csv"), "w", encoding="utf-8")  # noqa: SIM115
        self.ops.write("file,probe_id,op,location,name,function,iteration,process,seconds\n")
        self.ids: dict[tuple[int, int], str] = {}
        self.n = 0

    def _probe_id(self, ev: Event, k: int) -> str:
        op = ev.op
        if op.name == "interpreter.probe":
            return str(op.attr("probe_id").value)
        pid = self.ids.get((id(op), k))
        if pid is None:
            base = (ev.location_name or "").split("@")[0]
            base = re.sub(r"[\s,]", "_", base)
            pid = self.ids[(id(op), k)] = (f"{base}.{len(self.ids) + 1}" if base else
                                          f"probe{len(self.ids) + 1}")
        return pid

    def write(self, ev: Event, results: Sequence[Any]) -> None:
        for k, (r, v) in enumerate(zip(results, ev.op.results)):
            if not isinstance(r, (np.ndarray, np.generic)) or not isinstance(v.type, TensorType):
                continue
            self.n += 1
            path = os.path.join(self.directory, f"probe{self.n}.npy")
            np.save(path, storage_array(np.asarray(r)))
            pid = self._probe_id(ev, k)
            self.index.write(f"{pid},{format_type(v.type)},{path}\n")
            name = (ev.location_name or "").replace(",", "_")
            sec = "" if ev.seconds is None else f"{ev.seconds:.9f}"
            self.ops.write(f"probe{self.n}.npy,{pid},{ev.name},{ev.location},{name},"
                           f"{ev.function},{ev.iteration},{ev.process},{sec}\n")

    def close(self) -> None:
        self.index.close()
        self.ops.close()


def read_probe_dir(directory: str) -> list[tuple[str, str, np.ndarray]]:
    """``(probe_id, type, value)`` per line of ``directory``/index.csv, each value read with
    numpy and given its dtype back from the type (bf16, fp8, int4 through ml_dtypes)."""
    out = []
    with open(os.path.join(directory, "index.csv"), encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            pid, rest = line.split(",", 1)
            type_text, path = rest.rsplit(",", 1)
            if not os.path.isabs(path) and not os.path.exists(path):
                path = os.path.join(directory, os.path.basename(path))
            out.append((pid, type_text, typed_array(np.load(path), type_text)))
    return out
