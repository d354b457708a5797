"""The recording behind a trace or a profile: the interpreter's observer
(:class:`shlo.interpreter.evaluator.Observer`) as the debugging tools implement it.

The generated code of an observed preparation calls, after every op, its process's
:class:`Recorder`, which appends a tuple (op key, iteration, start, end, results) to a list:
no object, frame or dictionary per op. Results are summarised in batches (a batch holds at
most :data:`BATCH_BYTES` of values or :data:`BATCH_VALUES` of them) and the tuples become
:class:`~.events.Event` objects only when the trace is read (:meth:`Tracer.events`).

A module is prepared once for all its traces: its :class:`Relay` numbers its ops and hands
each run's generated code the current :class:`Tracer`'s recorders, whatever the filters.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterable
from time import perf_counter
from typing import Any

import numpy as np

from ..ir import Module, Operation
from .events import Event
from .locations import enclosing_function, location_name, op_location
from .probes import ProbeWriter
from .summary import Summary, SummaryTable, summarize, summarize_lists, summary_bytes

__all__ = ["BATCH_BYTES", "BATCH_VALUES", "Recorder", "Relay", "Tracer", "relay_for"]

BATCH_BYTES = 1 << 19
BATCH_VALUES = 1024
# (a flush holds about 4x BATCH_BYTES at its peak: the values, their concatenation and its
# float64 sums' cast; larger batches save little: the per-flush numpy calls are few)

# what a recorder does with an op: nothing, the plain record, the general one (values kept,
# streamed to a directory, an `interpreter.probe`)
_SKIP, _PLAIN, _GENERAL = 0, 1, 2


class Relay:
    """The observer a module is prepared with for tracing: numbers its ops (their position in
    the module's walk) and gives the generated code the current tracer's recorders."""

    def __init__(self, module: Module) -> None:
        self.ops: list[Operation] = list(module.walk())
        self.walked = len(self.ops)
        self.keys = {id(op): i for i, op in enumerate(self.ops)}
        self.target: Tracer | None = None
        self.constants: dict[int, Summary] = {}  # the summary of a constant op's value, by key

    def key(self, op: Operation) -> int:
        k = self.keys.get(id(op))
        if k is None:  # an op outside the module's walk (made while preparing)
            k = self.keys[id(op)] = len(self.ops)
            self.ops.append(op)
            if self.target is not None:
                self.target.modes.append(self.target.mode(op))
        return k

    def unfiltered(self, general: bool) -> list[int]:
        """The modes of a tracer without filters (kept: made once per module)."""
        cached = self.__dict__.setdefault("_unfiltered", {})
        modes = cached.get(general)
        if modes is None or len(modes) != len(self.ops):
            every = _GENERAL if general else _PLAIN
            modes = cached[general] = [_GENERAL if op.name == "interpreter.probe" else every
                                       for op in self.ops]
        return modes

    def recorder(self, process: Any) -> Recorder:
        return self.target.recorder(process)  # type: ignore[union-attr]  # (see relay_for)


def relay_for(module: Module, tracer: Tracer | None = None) -> Relay:
    """The module's relay (made on first use), now handing out ``tracer``'s recorders (its
    own bound method: no forwarding call)."""
    relay = module.__dict__.get("_debug_relay")
    if relay is None:
        relay = module.__dict__["_debug_relay"] = Relay(module)
    if tracer is not None:
        relay.target = tracer
        relay.recorder = tracer.recorder  # type: ignore[method-assign]
    return relay


class Recorder:
    """One process's recording of one run (the :class:`~shlo.interpreter.evaluator.Recorder`
    its generated code calls). ``events`` holds, in program order, a tuple ``(key, iteration,
    start, end, results)`` per op that runs no other op and a list ``[key, iteration, start,
    end, results, end_index, counts]`` per op that does (made when it begins, completed when
    it ends: ``end_index`` is where its nested events stop; ``counts`` how often each
    generated function was entered inside it). ``results`` is the list of result values,
    replaced by their summaries in batches, or the results' byte count (profiles); ``end``
    None: the op raised."""

    def __init__(self, tracer: Tracer, process: Any) -> None:
        self.process_id: int = process.process_id
        events: list[Any] = []
        pending: list[list[Any]] = []  # results waiting for their summaries
        stack: list[list[Any]] = []  # the ops begun and not ended
        base: list[Any] = [None] * 7  # what generated functions entered outside any op count on
        kept: dict[int, tuple[Any, list[Any]]] = {}  # event index: (operands, values)
        self.events, self.pending, self.kept = events, pending, kept
        modes, clock, writer = tracer.modes, perf_counter, tracer.writer
        keep_values, summaries, pid = tracer.keep_values, tracer.summaries, self.process_id
        ops = tracer.relay.ops
        append, pend, ndarray = events.append, pending.append, np.ndarray
        held = 0  # bytes of the pending values

        table = self.table = SummaryTable()

        def flush() -> None:
            nonlocal held
            summarize_lists(pending, table)
            pending.clear()
            held = 0

        def account(results: list[Any]) -> None:  # (the plain path of record, inlined there)
            nonlocal held
            for r in results:
                if type(r) is ndarray:
                    held += r.nbytes
            pend(results)
            if held > BATCH_BYTES or len(pending) >= BATCH_VALUES:
                flush()

        def general(index: int, key: int, it: int, seconds: float | None,
                    operands: tuple[Any, ...], results: list[Any]) -> None:
            op = ops[key]
            if writer is not None:
                writer.write(op, it, pid, seconds, results)
            if keep_values or op.name == "interpreter.probe":
                kept[index] = (operands if keep_values else None,
                               [np.array(r, copy=True) if type(r) is ndarray else r
                                for r in results])
            if summaries:
                account(results)

        def record(key: int, it: int, start: float, operands: tuple[Any, ...],
                   results: list[Any]) -> float:
            nonlocal held
            end = clock()
            mode = modes[key]
            if mode == _PLAIN:
                append((key, it, start, end, results))
                for r in results:
                    if type(r) is ndarray:
                        held += r.nbytes
                pend(results)
                if held > BATCH_BYTES or len(pending) >= BATCH_VALUES:
                    flush()
            elif mode:
                append((key, it, start, end, results))
                general(len(events) - 1, key, it, end - start, operands, results)
            return clock()

        def record_bytes(key: int, it: int, start: float, operands: tuple[Any, ...],
                         results: list[Any]) -> float:  # profiles: no summaries
            end = clock()
            if modes[key]:
                n = 0
                for r in results:
                    n += r.nbytes if type(r) is ndarray else getattr(r, "nbytes", 0)
                append((key, it, start, end, n))
            return clock()

        known = tracer.relay.constants  # the summary of each constant op's value

        def constant(key: int, it: int, start: float, value: Any) -> float:
            end = clock()
            mode = modes[key]
            if not mode:
                pass
            elif not summaries:
                append((key, it, start, end, getattr(value, "nbytes", 0)))
            elif mode == _PLAIN:
                s = known.get(key)
                if s is None:
                    s = known[key] = summarize(value)
                append((key, it, start, end, [s]))
            else:
                append((key, it, start, end, [value]))
                general(len(events) - 1, key, it, end - start, (), events[-1][4])
            return clock()

        def open_(key: int, it: int, start: float) -> int:
            ev = [key, it, start, None, None, 0, None]
            append(ev)
            stack.append(ev)
            return len(events) - 1

        def close(slot: int, operands: tuple[Any, ...], results: list[Any]) -> float:
            end = clock()
            ev = events[slot]
            while stack and stack.pop() is not ev:  # (ops a kernel abandoned: unbalanced)
                pass
            ev[3], ev[5] = end, len(events)
            key = ev[0]
            mode = modes[key]
            if not summaries:
                ev[4] = sum(r.nbytes if type(r) is ndarray else getattr(r, "nbytes", 0)
                            for r in results)
            elif mode:
                ev[4] = results
                if mode == _PLAIN:
                    account(results)
                else:
                    general(slot, key, ev[1], end - ev[2], operands, results)
            return clock()

        def enter(block: object) -> int:
            top = stack[-1] if stack else base
            counts = top[6]
            if counts is None:
                counts = top[6] = {}
            n = counts.get(block, 0)
            counts[block] = n + 1
            return n

        def failed(key: int, it: int, start: float | None) -> None:
            last = events[-1] if events else None
            if (stack and stack[-1][0] == key) or (last is not None and last[0] == key and
                                                   last[3] is None):
                return  # the op that raised is open, or already told (by an outer block)
            if modes[key]:
                append((key, it, clock() if start is None else start, None, None))

        self.record = record if summaries else record_bytes
        self.constant, self.open, self.close = constant, open_, close
        self.enter, self.failed = enter, failed
        self.flush = flush

    def read(self, tracer: Tracer) -> list[Event]:
        """The recorded events as :class:`Event` objects (index, process order: set by the
        caller)."""
        self.flush()
        ops, walked, modes, t0 = tracer.relay.ops, tracer.relay.walked, tracer.modes, tracer.t0
        pid, kept, row = self.process_id, self.kept, self.table.summary
        out: list[Event] = []
        stack: list[list[Any]] = []  # [end index, event or None, children's seconds, parent]
        for i, raw in enumerate(self.events):
            while stack and stack[-1][0] <= i:
                _finish(stack.pop())
            key, it, start, end, results = raw[0], raw[1], raw[2], raw[3], raw[4]
            seconds = None if end is None else end - start
            if stack and seconds is not None:
                stack[-1][2] += seconds
            ev = None
            if modes[key]:
                sums: list[Summary] | None = None
                nbytes = 0
                if type(results) is int:
                    nbytes = results
                elif results is not None:
                    sums = [row(s) if type(s) is int else s if type(s) is Summary else
                            summarize(s) for s in results]
                    nbytes = summary_bytes(sums)
                extra = kept.get(i)
                ev = Event(0, ops[key], key if key < walked else -1, it, len(stack), pid,
                           start - t0, stack[-1][3] if stack else None, seconds,
                           seconds or 0.0, sums, nbytes,
                           *((extra[1], extra[0]) if extra is not None else ()))
                out.append(ev)
            if type(raw) is list:  # an op running others: its events follow, up to raw[5]
                stack.append([raw[5] if raw[3] is not None else len(self.events), ev, 0.0,
                              ev if ev is not None else (stack[-1][3] if stack else None)])
        while stack:
            _finish(stack.pop())
        return out


def _finish(entry: list[Any]) -> None:
    ev, children = entry[1], entry[2]
    if ev is not None and ev.seconds is not None:
        ev.self_seconds = ev.seconds - children if ev.seconds > children else 0.0


class Tracer:
    """One trace's recording (what :func:`~.trace.trace` and :func:`~.profile.profile` run
    with): ``ops`` are op names (`stablehlo.add` or `add`), ``locations`` a regex over
    `file:line:col` and the name location, ``functions`` function names; an op is recorded
    when it passes every filter given (`interpreter.probe` ops always are). ``values`` keeps
    copies of the results (and the operands), ``directory`` streams them to disk in the probe
    layout, ``summaries=False`` records no summaries (the profiler's mode)."""

    def __init__(self, module: Module, ops: Iterable[str] | None = None,
                 locations: str | None = None, functions: Iterable[str] | None = None,
                 values: bool = False, directory: str | None = None,
                 summaries: bool = True) -> None:
        import re

        self.module = module
        self.ops = None if ops is None else {o if "." in o else f"stablehlo.{o}" for o in ops}
        self.locations = re.compile(locations) if locations else None
        self.functions = None if functions is None else {f.lstrip("@") for f in functions}
        self.keep_values = values
        self.summaries = summaries
        self.writer = ProbeWriter(directory) if directory else None
        self.relay = relay_for(module)
        self._general = values or directory is not None
        unfiltered = ops is None and locations is None and functions is None
        self.modes = list(self.relay.unfiltered(self._general)) if unfiltered else \
            [self.mode(op) for op in self.relay.ops]
        self.recorders: dict[int, Recorder] = {}  # by id of the ProcessContext
        self._lock = threading.Lock()
        self._events: list[Event] | None = None
        self.t0 = perf_counter()

    def mode(self, op: Operation) -> int:
        if op.name == "interpreter.probe":
            return _GENERAL
        if self.ops is not None and op.name not in self.ops:
            return _SKIP
        if self.functions is not None and enclosing_function(op) not in self.functions:
            return _SKIP
        if self.locations is not None:
            text = f"{op_location(op)} {location_name(op.location) or ''}"
            if not self.locations.search(text):
                return _SKIP
        return _GENERAL if self._general else _PLAIN

    def recorder(self, process: Any) -> Recorder:
        """The recorder of ``process`` (a ProcessContext) in this run."""
        r = self.recorders.get(id(process))
        if r is None:
            with self._lock:
                r = self.recorders.get(id(process))
                if r is None:
                    r = self.recorders[id(process)] = Recorder(self, process)
        return r

    def observer(self) -> Relay:
        """What to run with (``shlo.run(..., observer=tracer.observer())``)."""
        return relay_for(self.module, self)

    def events(self) -> list[Event]:
        """Every process's events, processes in order (a process's grid processes, run by
        `interpreter.run_parallel`, merged in by time), ``index`` their position."""
        if self._events is None:
            by_pid: dict[int, list[Recorder]] = {}
            for r in self.recorders.values():
                by_pid.setdefault(r.process_id, []).append(r)
            out: list[Event] = []
            collecting = gc.isenabled()
            gc.disable()  # (many new objects, none garbage: collections would walk the heap)
            try:
                for pid in sorted(by_pid):
                    rs = by_pid[pid]
                    evs = [e for r in rs for e in r.read(self)]
                    if len(rs) > 1:
                        evs.sort(key=lambda e: e.start)
                    out.extend(evs)
            finally:
                if collecting:
                    gc.enable()
            for i, e in enumerate(out):
                e.index = i
            self._events = out
        return self._events

    def probes(self) -> dict[str, list[Any]]:
        """The values of `interpreter.probe` ops by probe id, in order (processes in order)."""
        out: dict[str, list[Any]] = {}
        ops = self.relay.ops
        for r in sorted(self.recorders.values(), key=lambda r: r.process_id):
            for i, (_, values) in r.kept.items():
                op = ops[r.events[i][0]]
                if op.name == "interpreter.probe" and values:
                    out.setdefault(str(op.attr("probe_id").value), []).append(values[0])
        return out

    def finish(self) -> None:
        """After the run: summarise what is pending, close the probe files, let the module's
        relay go (the recording is then held by this tracer only)."""
        for r in list(self.recorders.values()):
            r.flush()
        if self.writer is not None:
            self.writer.close()
        if self.relay.target is self:
            self.relay.target = None
            self.relay.__dict__.pop("recorder", None)
