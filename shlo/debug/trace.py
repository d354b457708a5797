"""Tracing a run op by op: every executed op's name, location, time, iteration and results.

:func:`trace` runs a function with the interpreter's observer hook
(:class:`shlo.interpreter.evaluator.Observer`, implemented by :mod:`.recorder`) and returns a
:class:`~.events.Trace`: one :class:`~.events.Event` per executed op instance, in program
order (an op with regions comes before the ops of its regions; an op of a `while` body
appears once per iteration, numbered by ``iteration``). Memory stays bounded: an event keeps
a :class:`~.summary.Summary` of each result (shape, dtype, min/max/mean, NaN/inf counts, a
CRC-32 of the bytes); the values themselves only with ``values=True``, or streamed to a
directory in the upstream interpreter's probe layout (``index.csv`` with
``probe_id,type,path`` lines, one ``probeN.npy`` per value; see :func:`read_probe_dir`) with
``directory=``. Filters (``ops``, ``locations``, ``functions``) select what is recorded.

`interpreter.probe` ops are traced like any op; their values, by probe id, are in
:attr:`Trace.probes`.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterable
from typing import Any

from ..errors import ShloError
from ..ir import Module
from .events import Event, Trace
from .locations import enclosing_function, location_name, op_location
from .probes import read_probe_dir, storage_array, typed_array
from .recorder import Tracer
from .summary import Summary, summarize

__all__ = [
    "Event",
    "Summary",
    "Trace",
    "Tracer",
    "enclosing_function",
    "location_name",
    "op_location",
    "read_probe_dir",
    "storage_array",
    "summarize",
    "trace",
    "typed_array",
]


def trace(module: Module | str, *args: Any, entry: str = "main", ops: Iterable[str] | None = None,
          locations: str | None = None, functions: Iterable[str] | None = None,
          values: bool = False, directory: str | None = None, **run_options: Any) -> Trace:
    """Run ``entry`` on ``args`` and record every executed op (see the module docstring).

    ``run_options`` are :func:`shlo.run`'s (``verify``, ``infeed``, ``custom_calls``,
    ``replicas``, ...). A run that fails returns the trace up to the failing op (its event has
    ``seconds`` None) with the error in ``error``; nothing is raised. The events are made
    from the recording when first read.
    """
    from ..interpreter.api import run

    if isinstance(module, str):
        from ..syntax.parser import parse

        module = parse(module)
    tracer = Tracer(module, ops, locations, functions, values, directory)
    out = Trace(module, directory=directory, reader=tracer.events)
    t0 = time.perf_counter()
    collecting = gc.isenabled()
    gc.disable()  # the recording is kept objects: collections would walk the whole heap
    try:
        out.results = run(module, *args, entry=entry, observer=tracer.observer(), **run_options)
    except ShloError as e:
        out.error = e
    finally:
        tracer.finish()
        if collecting:
            gc.enable()
    out.seconds = time.perf_counter() - t0
    out.probes = tracer.probes()
    return out
