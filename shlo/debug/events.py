"""What a trace holds: one :class:`Event` per executed op instance, in a :class:`Trace`."""

from __future__ import annotations

import re
from typing import Any, Callable

import numpy as np

from ..errors import ShloError
from ..ir import Module, Operation
from ..types import Type, format_type
from .locations import enclosing_function, location_name, op_location
from .summary import Summary

__all__ = ["Event", "Trace"]


class Event:
    """One executed op instance. ``start`` is seconds since the run began, ``seconds`` the
    op's time including its regions and callees (None: the op raised), ``self_seconds``
    without them; ``iteration`` counts this op's executions within the enclosing op's current
    execution (the iteration of a `while` body, the call of a region by its op); ``depth``
    the ops around it, ``parent`` the innermost recorded one; ``key`` identifies the op in
    its module (its position in the module's walk order), the same in every run of that
    module. ``summaries`` describe the results (:class:`~.summary.Summary`), ``nbytes`` their
    size; ``values`` and ``operands`` are kept with ``values=True``."""

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
                 process: int, start: float, parent: Event | None,
                 seconds: float | None = None, self_seconds: float = 0.0,
                 summaries: list[Summary] | None = None, nbytes: int = 0,
                 values: list[Any] | None = None,
                 operands: tuple[Any, ...] | None = None) -> None:
        self.index, self.op, self.key, self.iteration = index, op, key, iteration
        self.depth, self.process, self.start, self.parent = depth, process, start, parent
        self.seconds = seconds  # None: the op raised (or is still running)
        self.self_seconds = self_seconds
        self.summaries = summaries if summaries is not None else []
        self.nbytes = nbytes  # bytes of the results
        self.values = values  # with values=True (and for interpreter.probe)
        self.operands = operands  # with values=True

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


class Trace:
    """What :func:`~.trace.trace` recorded: ``events`` in program order (per process,
    processes in order; made from the recording when first read), the run's ``results``,
    the values of `interpreter.probe` ops by probe id, the wall-clock ``seconds`` of the run,
    the ``directory`` values were streamed to and the run's ``error``."""

    def __init__(self, module: Module, events: list[Event] | None = None,
                 results: list[Any] | None = None, probes: dict[str, list[Any]] | None = None,
                 seconds: float = 0.0, directory: str | None = None,
                 error: ShloError | None = None,
                 reader: Callable[[], list[Event]] | None = None) -> None:
        self.module = module
        self._events = events
        self._reader = reader
        self.results = results if results is not None else []
        self.probes = probes if probes is not None else {}
        self.seconds = seconds
        self.directory = directory
        self.error = error

    @property
    def events(self) -> list[Event]:
        if self._events is None:
            self._events = self._reader() if self._reader is not None else []
            self._reader = None
        return self._events

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

        from .probes import storage_array

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
