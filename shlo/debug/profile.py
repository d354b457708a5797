"""Profiling a run: time per op and per op kind, counts, bytes produced, flops.

:func:`profile` runs through the tracer without summaries (so the profile measures the kernels,
not the tracing) and returns a :class:`Profile`. Times are *self* times: an op with regions
(`while`, `call`, `reduce` with a non-trivial body) counts its own work only, its nested ops
count theirs, so the rows add up to the run's total (:attr:`Profile.total`), which is the
run's wall time less the observer's overhead. :meth:`Profile.chrome_trace` gives the
Chrome trace-event JSON that Perfetto (ui.perfetto.dev) and chrome://tracing open, with one
track per process of a grid.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ShloError
from ..ir import Module, Operation
from ..registry import ELEMENTWISE, names_with
from ..types import TensorType
from .events import Event
from .recorder import Tracer

__all__ = ["Profile", "Row", "flops", "profile"]


def _elements(t: Any) -> int:
    if isinstance(t, TensorType) and t.shape is not None and all(d is not None for d in t.shape):
        return int(np.prod(t.shape, dtype=np.int64))
    return 0


def flops(op: Operation) -> int:
    """Floating-point (or integer) operations of one execution of ``op``, where meaningful:
    2 per multiply-add of `dot_general`/`dot`/`convolution`, one per element of an
    element-wise op's result, one per input element of `reduce`; 0 otherwise."""
    name = op.name
    if not op.results:
        return 0
    out = _elements(op.results[0].type)
    if name in ("stablehlo.dot_general", "stablehlo.dot"):
        lhs = op.operands[0].type
        if not isinstance(lhs, TensorType) or lhs.shape is None:
            return 0
        if name == "stablehlo.dot":
            contracting: Iterable[int] = [len(lhs.shape) - 1]
        else:
            dn = op.attr("dot_dimension_numbers")
            from ..attributes import ints

            v = dn.get("lhs_contracting_dimensions") if dn is not None and hasattr(dn, "get") \
                else op.attr("lhs_contracting_dimensions")
            contracting = ints(v, ()) or ()
        k = int(np.prod([lhs.shape[d] or 0 for d in contracting], dtype=np.int64))
        return 2 * out * k
    if name == "stablehlo.convolution":
        rhs = op.operands[1].type
        if not isinstance(rhs, TensorType) or rhs.shape is None:
            return 0
        # every output element sums kernel-size x input-features / groups products
        kernel = int(np.prod([d or 0 for d in rhs.shape], dtype=np.int64))
        feat_out = _output_features(op)
        return 2 * out * (kernel // max(feat_out, 1))
    if name == "stablehlo.reduce":
        return sum(_elements(v.type) for v in op.operands[: len(op.operands) // 2])
    if name in names_with(ELEMENTWISE):
        return out
    return 0


def _output_features(op: Operation) -> int:
    dn = op.attr("dimension_numbers")
    rhs = op.operands[1].type
    idx = getattr(dn, "kernel_output_feature_dimension", None)
    if idx is None or not isinstance(rhs, TensorType) or rhs.shape is None:
        return 1
    return int(rhs.shape[idx] or 1)


@dataclass
class Row:
    """One line of a profile table: an op (by location) or an op kind."""

    label: str
    count: int
    seconds: float  # self time, summed
    nbytes: int
    flops: int
    share: float  # of the profile's total

    def format(self, width: int) -> str:
        rate = f"{self.flops / self.seconds / 1e9:8.2f}" if self.flops and self.seconds else \
            f"{'':8}"
        return (f"{self.label:<{width}} {self.count:7d} {self.seconds * 1e3:11.3f} "
                f"{self.share * 100:6.1f}% {_mb(self.nbytes):>10} {rate}")


def _mb(n: int) -> str:
    return f"{n / 1e6:.3f} MB" if n >= 1e5 else f"{n / 1e3:.1f} kB"


@dataclass
class Profile:
    """The events of a profiled run (no summaries), its wall time and results."""

    module: Module
    events: list[Event]
    seconds: float  # wall time of the run, as the caller saw it
    results: list[Any]
    error: ShloError | None = None

    @property
    def total(self) -> float:
        """The sum of the ops' self times (the table's 100%)."""
        return sum(e.self_seconds for e in self.events)

    def _rows(self, key: Any) -> list[Row]:
        groups: dict[str, list[Event]] = {}
        for e in self.events:
            groups.setdefault(key(e), []).append(e)
        total = self.total or 1.0
        rows = []
        for label, evs in groups.items():
            s = sum(e.self_seconds for e in evs)
            rows.append(Row(label, len(evs), s, sum(e.nbytes for e in evs),
                            sum(flops(e.op) for e in evs), s / total))
        rows.sort(key=lambda r: -r.seconds)
        return rows

    def by_kind(self) -> list[Row]:
        """One row per op name, slowest first."""
        return self._rows(lambda e: e.name)

    def by_op(self) -> list[Row]:
        """One row per op of the program (all its executions), slowest first."""
        return self._rows(lambda e: f"{e.name} {e.where()}")

    def by_process(self) -> list[Row]:
        return self._rows(lambda e: f"process {e.process}")

    def table(self, top: int = 10) -> str:
        """The top ops and op kinds by self time, with counts, bytes produced, GFLOP/s and
        share of the total."""
        lines = [(f"// profile: {len(self.events)} op executions, {self.total * 1e3:.3f} ms "
                  f"in ops, {self.seconds * 1e3:.3f} ms wall")]
        for title, rows in (("op kind", self.by_kind()), ("op", self.by_op())):
            width = max([len(title)] + [len(r.label) for r in rows[:top]])
            lines.append(f"{title:<{width}} {'count':>7} {'self ms':>11} {'share':>7} "
                         f"{'produced':>10} {'GFLOP/s':>8}")
            lines.extend(r.format(width) for r in rows[:top])
            if len(rows) > top:
                rest = rows[top:]
                lines.append(f"{'(' + str(len(rest)) + ' more)':<{width}} "
                             f"{sum(r.count for r in rest):7d} "
                             f"{sum(r.seconds for r in rest) * 1e3:11.3f} "
                             f"{sum(r.share for r in rest) * 100:6.1f}%")
            lines.append("")
        return "\n".join(lines).rstrip() + "\n"

    def chrome_trace(self) -> dict[str, Any]:
        """Chrome trace-event JSON (complete events, microseconds): pid = process of the grid,
        one thread track per process; each event's args say location, iteration, bytes."""
        out: list[dict[str, Any]] = []
        for pid in sorted({e.process for e in self.events}):
            out.append({"name": "process_name", "ph": "M", "pid": pid, "tid": 0,
                        "args": {"name": f"process {pid}"}})
        for e in self.events:
            if e.seconds is None:
                continue
            out.append({"name": e.name, "cat": e.name.split(".", 1)[0], "ph": "X",
                        "pid": e.process, "tid": 0, "ts": e.start * 1e6,
                        "dur": e.seconds * 1e6,
                        "args": {"location": e.where(), "iteration": e.iteration,
                                 "bytes": e.nbytes}})
        return {"traceEvents": out, "displayTimeUnit": "ms"}

    def write_chrome_trace(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.chrome_trace(), f)


def profile(module: Module | str, *args: Any, entry: str = "main",
            **run_options: Any) -> Profile:
    """Run ``entry`` on ``args`` with every op timed; see :class:`Profile`."""
    from ..interpreter.api import run

    if isinstance(module, str):
        from ..syntax.parser import parse

        module = parse(module)
    tracer = Tracer(module, summaries=False)
    error = None
    results: list[Any] = []
    t0 = time.perf_counter()
    try:
        results = run(module, *args, entry=entry, observer=tracer.observer(), **run_options)
    except ShloError as e:
        error = e
    seconds = time.perf_counter() - t0
    tracer.finish()
    return Profile(module, tracer.events(), seconds, results, error)
