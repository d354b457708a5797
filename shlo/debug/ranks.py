"""Tracing the processes of a grid that run in other OS processes (MPI ranks).

The MPI engine (:mod:`shlo.interpreter.mpi.engine`) asks the observer of a run for
``for_ranks()``: here, a :class:`RankTracing` that every other rank unpickles and turns into a
:class:`~.trace.Tracer` of its own (the same filters, on its own copy of the module); after
the run the rank sends its events back as plain rows (:func:`export`) and the host's tracer
adds them (:func:`absorb`), each op found again by its key (its position in the module's walk,
the same on every rank). The trace then holds every process's events, in grid order, as on
the threaded grid. Start times are those of the rank's clock (``perf_counter``, the same
monotonic clock on one machine) made relative to the host's trace.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # pragma: no cover
    from ..ir import Module
    from .trace import Event, Tracer

__all__ = ["RankTracing", "export", "absorb"]


@dataclass(frozen=True)
class RankTracing:
    """What a rank needs to trace its process as the host's tracer does (picklable: the
    tracer's class and ``relay_for`` travel as references to :mod:`.trace`)."""

    ops: frozenset[str] | None
    locations: str | None
    functions: frozenset[str] | None
    values: bool
    summaries: bool
    tracer_class: Any
    relay_for: Callable[[Module, Any], Any]

    @staticmethod
    def of(tracer: Tracer, relay_for: Callable[[Module, Any], Any]) -> RankTracing:
        return RankTracing(None if tracer.ops is None else frozenset(tracer.ops),
                           tracer.locations.pattern if tracer.locations is not None else None,
                           None if tracer.functions is None else frozenset(tracer.functions),
                           tracer.keep_values or tracer.writer is not None, tracer.summaries,
                           type(tracer), relay_for)

    def observer(self, module: Module) -> tuple[Any, Callable[[], list[tuple[Any, ...]]]]:
        """The observer to prepare this rank's process with, and what makes its rows."""
        tracer = self.tracer_class(module, self.ops, self.locations, self.functions,
                                   self.values, summaries=self.summaries)
        return self.relay_for(module, tracer), lambda: export(tracer)


def export(tracer: Tracer) -> list[tuple[Any, ...]]:
    """The events ``tracer`` recorded, as rows that pickle: (key, iteration, depth, process,
    start on the clock, seconds, self seconds, bytes, summaries, values, operands, position
    of the parent among the rows or -1)."""
    tracer.flush()
    at = {id(e): i for i, e in enumerate(tracer.events)}
    return [(e.key, e.iteration, e.depth, e.process, e.start + tracer.t0, e.seconds,
             e.self_seconds, e.nbytes, e.summaries, e.values, e.operands,
             -1 if e.parent is None else at.get(id(e.parent), -1))
            for e in tracer.events]


def absorb(tracer: Tracer, rows: list[tuple[Any, ...]], event: type[Event]) -> None:
    """Add another rank's rows (:func:`export`) to ``tracer``'s events (and its directory), as
    ``event`` objects."""
    ops = tracer.module.__dict__.get("_walked_ops")
    if ops is None:
        ops = tracer.module.__dict__["_walked_ops"] = list(tracer.module.walk())
    made: list[Any] = []
    for (key, it, depth, pid, start, seconds, self_seconds, nbytes, summaries, values,
         operands, parent) in rows:
        if not 0 <= key < len(ops):  # an op made while preparing: not in the host's module
            made.append(None)
            continue
        ev = event(next(tracer._counter), ops[key], key, it, depth, pid, start - tracer.t0,
                   made[parent] if parent >= 0 else None)
        ev.seconds, ev.self_seconds, ev.nbytes = seconds, self_seconds, nbytes
        ev.summaries, ev.values, ev.operands = summaries, values, operands
        tracer.events.append(ev)
        made.append(ev)
        if tracer.writer is not None and values is not None and seconds is not None:
            tracer.writer.write(ev, values)
