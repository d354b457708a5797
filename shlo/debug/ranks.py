"""Tracing the processes of a grid that run in other OS processes (MPI ranks).

The MPI engine (:mod:`shlo.interpreter.mpi.engine`) asks the run's observer (the module's
:class:`~.recorder.Relay`) for ``for_ranks()``: here, a :class:`RankTracing` that every other
rank unpickles and turns into a :class:`~.recorder.Tracer` of its own (the same filters, on
its own copy of the module). After the run the rank sends its events back as plain rows
(:func:`export`), and the host adds them to its tracer as one more process's recording
(:func:`absorb`, a :class:`Received` recorder), each op found again by its key (its position
in the module's walk, the same on every rank). The trace then holds every process's events in
grid order, as on the threaded grid. Start times are the rank's clock (``perf_counter``, the
same monotonic clock on one machine) made relative to the host's trace.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # pragma: no cover
    from ..ir import Module
    from .events import Event
    from .recorder import Tracer

__all__ = ["RankTracing", "Received", "export", "absorb"]


@dataclass(frozen=True)
class RankTracing:
    """What a rank needs to trace its process as the host's tracer does (picklable: the
    tracer's class travels as a reference to its module)."""

    ops: frozenset[str] | None
    locations: str | None
    functions: frozenset[str] | None
    values: bool
    summaries: bool
    tracer_class: Any

    @staticmethod
    def of(tracer: Tracer) -> RankTracing:
        return RankTracing(None if tracer.ops is None else frozenset(tracer.ops),
                           tracer.locations.pattern if tracer.locations is not None else None,
                           None if tracer.functions is None else frozenset(tracer.functions),
                           tracer.keep_values or tracer.writer is not None, tracer.summaries,
                           type(tracer))

    def observer(self, module: Module) -> tuple[Any, Callable[[], list[tuple[Any, ...]]]]:
        """The observer to prepare this rank's process with, and what makes its rows."""
        tracer = self.tracer_class(module, self.ops, self.locations, self.functions,
                                   self.values, summaries=self.summaries)
        return tracer.observer(), lambda: export(tracer)


def export(tracer: Tracer) -> list[tuple[Any, ...]]:
    """The events ``tracer`` recorded, as rows that pickle: (key, iteration, depth, process,
    start on the clock, seconds, self seconds, bytes, summaries, values, operands, position
    of the parent among the rows or -1)."""
    tracer.finish()
    events = tracer.events()
    at = {id(e): i for i, e in enumerate(events)}
    return [(e.key, e.iteration, e.depth, e.process, e.start + tracer.t0, e.seconds,
             e.self_seconds, e.nbytes, e.summaries, e.values, e.operands,
             -1 if e.parent is None else at.get(id(e.parent), -1))
            for e in events]


class Received:
    """Another rank's recording, as the host's tracer reads its recorders: ``read`` makes the
    events, ``events[i][0]`` and ``kept`` give the probes' ops and values."""

    def __init__(self, tracer: Tracer, rows: list[tuple[Any, ...]], event: type[Event]
                 ) -> None:
        ops = tracer.relay.ops
        self.process_id = rows[0][3] if rows else -1
        self.events: list[tuple[int]] = []
        self.kept: dict[int, tuple[Any, list[Any]]] = {}
        self._made: list[Event] = []
        made: list[Any] = []
        for (key, it, depth, pid, start, seconds, self_seconds, nbytes, summaries, values,
             operands, parent) in rows:
            if not 0 <= key < tracer.relay.walked:  # made while preparing: not in the module
                made.append(None)
                continue
            ev = event(0, ops[key], key, it, depth, pid, start - tracer.t0,
                       made[parent] if parent >= 0 else None, seconds, self_seconds,
                       summaries, nbytes, values, operands)
            made.append(ev)
            if values is not None:
                self.kept[len(self.events)] = (operands or (), values)
            self.events.append((key,))
            self._made.append(ev)
            if tracer.writer is not None and values is not None and seconds is not None:
                tracer.writer.write(ev.op, it, pid, seconds, values)

    def flush(self) -> None:
        pass

    def read(self, tracer: Tracer) -> list[Event]:
        return list(self._made)


def absorb(tracer: Tracer, rows: list[tuple[Any, ...]], event: type[Event]) -> None:
    """Add another rank's rows (:func:`export`) to ``tracer`` as one more recorder."""
    received = Received(tracer, rows, event)
    with tracer._lock:
        tracer.recorders[id(received)] = received  # type: ignore[assignment]
