"""First divergence: run two executions, compare every intermediate they share, name the
first op whose error exceeds the tolerance.

The two executions (:func:`diff`):

* one program on two engines: ``against="xla"`` / ``"upstream"`` (one compile of a variant
  with the entry's calls inlined, returning every op's result, :mod:`.engines`: the ops of
  the entry and of the functions it calls are compared, each execution with its own; ops
  inside `while`/`if`/`case` bodies and other regions run inside the engine and are compared
  through the op holding them: :attr:`DiffReport.uncompared` lists them, the table ends with
  a note per holding op), ``"f64"`` (shlo on the program with its floats widened to f64:
  where precision is lost);
* two programs (``b``) on shlo (or ``b`` on ``against``), ops matched ``by="order"`` (the
  executed op sequences aligned by op name; quantize/dequantize ops are left out, so a float
  model and its quantized version align), ``"location"`` (line:col), ``"name"`` (the name
  part of locations), ``"auto"`` (names when most ops have them, else order) or a ``mapping``
  {A location or name: B location or name};
* one program on two inputs (``b_args``).

The first execution is the one under test; the second is the reference ("expected").
Quantized values are dequantized before comparing. :class:`DiffReport` prints the per-op
table (with SQNR, what a person validating a quantized model wants), the
`file:line:col: error: first divergence at 'stablehlo.xxx': ...` line, and writes a
self-checking reproducer (:mod:`.reproducer`).
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import ExecutionError
from ..ir import Module
from .metrics import Metrics, Tolerance, compare, default_tolerance
from .trace import Event, Trace, trace

__all__ = ["QUANT_OPS", "DiffReport", "Pair", "diff"]

QUANT_OPS = frozenset({"stablehlo.uniform_quantize", "stablehlo.uniform_dequantize"})
_SKIP = frozenset({"interpreter.probe", "check.expect_eq", "check.expect_eq_const",
                   "check.expect_almost_eq", "check.expect_almost_eq_const",
                   "check.expect_close", "check.expect_serialized_eq", "interpreter.print"})


@dataclass
class Pair:
    """One compared op execution: ``a`` (under test), the reference event ``b`` (None when
    the reference is an engine without events) and its values, one Metrics per result."""

    a: Event
    b: Event | None
    expected: list[Any]
    metrics: list[Metrics]
    tolerance: Tolerance
    # across engines: the op exceeds the tolerance, but shlo's own kernel run on the
    # reference's operands agrees with the reference: the error came in with its inputs
    # (each within tolerance), the op itself is not at fault
    inherited: bool = False

    @property
    def diverged(self) -> bool:
        return any(m.diverged for m in self.metrics)

    @property
    def at_fault(self) -> bool:
        return self.diverged and not self.inherited

    @property
    def worst(self) -> Metrics:
        return max(self.metrics, key=lambda m: (m.diverged, m.max_abs if not
                                                math.isnan(m.max_abs) else math.inf))


@dataclass
class DiffReport:
    pairs: list[Pair]
    a: Trace
    b: Trace | None
    against: str
    unmatched_a: list[Event] = field(default_factory=list)
    unmatched_b: list[Event] = field(default_factory=list)
    # against an engine: executions it cannot show, with the op holding them (None: results
    # it could not return: calls inlined away, dynamic shapes)
    uncompared: list[tuple[Event, Event | None]] = field(default_factory=list)

    @property
    def first(self) -> Pair | None:
        for p in self.pairs:
            if p.at_fault:
                return p
        return None

    @property
    def diverged(self) -> list[Pair]:
        return [p for p in self.pairs if p.at_fault]

    @property
    def inherited(self) -> list[Pair]:
        return [p for p in self.pairs if p.diverged and p.inherited]

    def message(self) -> str:
        """The diagnostic naming the first divergence (or a line saying there is none)."""
        first = self.first
        if first is None:
            rest = f" ({len(self.uncompared)} not compared: see the table's notes)" \
                if self.uncompared else ""
            if self.inherited:
                rest += (f"; {len(self.inherited)} exceed the tolerance only through their "
                         f"inputs (accumulated error, marked ~)")
            return (f"no divergence: {len(self.pairs)} op executions agree with "
                    f"{self.against}{rest}")
        e = first.a
        it = f" (iteration {e.iteration})" if e.iteration else ""
        idx = next(k for k, m in enumerate(first.metrics) if m.diverged)
        res = f" result {idx}" if len(first.metrics) > 1 else ""
        where = e.location or self.a.module.filename or "<unknown>"
        msg = (f"{where}: error: first divergence at '{e.name}'{it}{res}: "
               f"{first.metrics[idx]} (against {self.against}; tolerance {first.tolerance})")
        if first.b is not None and first.b.where() != e.where():
            msg += f"\n{first.b.where()}: note: the matching '{first.b.name}' of the reference"
        for u in self._unmatched_inputs(first):
            msg += f"\n{u.where()}: note: '{u.name}' of the reference feeds it and has no " \
                   f"counterpart"
        return msg

    def _unmatched_inputs(self, pair: Pair) -> list[Event]:
        if pair.b is None or not self.unmatched_b:
            return []
        producers = {id(v.owner) for v in pair.b.op.operands}
        return [u for u in self.unmatched_b if id(u.op) in producers]

    def table(self, all_ops: bool = False, limit: int = 60) -> str:
        """Per op: location, op, max abs/rel error, ULP, SQNR dB, NaN/inf mismatches; the
        first divergence is marked `<<<`, later ones `!`, inherited ones `~`."""
        rows = [("#", "location", "op", "max abs", "max rel", "ulp", "SQNR dB", "nan/inf", "")]
        first = self.first
        shown = 0
        for p in self.pairs:
            if not all_ops and shown >= limit and p is not first:
                continue
            m = p.worst
            mark = "<<<" if p is first else ("!" if p.at_fault else
                                             "~" if p.diverged else "")
            it = f"#{p.a.iteration}" if p.a.iteration else ""
            rows.append((str(p.a.index), p.a.where(), p.a.name + it,
                         f"{m.max_abs:.3g}", f"{m.max_rel:.3g}",
                         "-" if m.max_ulp is None else _g(m.max_ulp),
                         _g(m.sqnr_db, ".1f"), f"{m.nan_mismatch}/{m.inf_mismatch}", mark))
            shown += 1
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines = ["  ".join(c.ljust(w) if i < 3 else c.rjust(w) for i, (c, w) in
                           enumerate(zip(r, widths))).rstrip() for r in rows]
        if len(self.pairs) > shown:
            lines.append(f"... {len(self.pairs) - shown} more (--all)")
        if self.unmatched_a or self.unmatched_b:
            lines.append(f"unmatched: {len(self.unmatched_a)} op executions of the first "
                         f"program, {len(self.unmatched_b)} of the reference")
        lines.extend(self.uncompared_lines())
        return "\n".join(lines)

    def uncompared_lines(self) -> list[str]:
        """What the engine could not show, as notes: ops inside regions by the op holding
        them (compared through that op's results), and the rest."""
        held: dict[int, tuple[Event, int]] = {}
        calls = other = 0
        for e, holder in self.uncompared:
            if holder is not None:
                n = held.get(holder.key, (holder, 0))[1]
                held[holder.key] = (holder, n + 1)
            elif e.name in _CALLS:
                calls += 1
            else:
                other += 1
        out = [f"not compared against {self.against}: {n} op executions inside "
               f"'{h.name}' at {h.where()} (its regions run inside {self.against}; compared "
               f"through its results)" for h, n in held.values()]
        if calls:
            out.append(f"not compared against {self.against}: {calls} calls (inlined for "
                       f"{self.against}: compared through their callees' ops)")
        if other:
            out.append(f"not compared against {self.against}: {other} op executions whose "
                       f"results it does not return (results of dynamic shape, calls the "
                       f"inliner keeps)")
        return out

    def overlay(self) -> dict[str, float]:
        """{`file:line:col`: worst SQNR... as an error score} for the graph page: log10 of the
        largest relative error of each op (0 = none), keyed by the op's position."""
        out: dict[str, float] = {}
        for p in self.pairs:
            m = p.worst
            v = 0.0 if m.max_abs == 0 else min(17.0, max(0.0, 17 + math.log10(
                max(m.max_rel, 1e-17)))) if not math.isinf(m.max_rel) else 17.0
            k = str(p.a.key)
            out[k] = max(out.get(k, 0.0), v)
        return out


def _g(x: float, spec: str = ".3g") -> str:
    return "inf" if x == math.inf else ("-inf" if x == -math.inf else format(x, spec))


# --- matching --------------------------------------------------------------------------------


def _comparable(events: Sequence[Event], skip_quant: bool) -> list[Event]:
    return [e for e in events if e.name not in _SKIP and e.op.results and
            not (skip_quant and e.name in QUANT_OPS) and e.seconds is not None]


def _static_key(e: Event, by: str) -> Any:
    if by == "name":
        return e.location_name
    if by == "location":
        flc = e.op.location.file_line_col()
        return (flc[1], flc[2]) if flc else None
    return e.key


def _pair_events(a: list[Event], b: list[Event], by: str,
                 mapping: dict[str, str] | None) -> tuple[list[tuple[Event, Event]],
                                                         list[Event], list[Event]]:
    """Pairs of (a event, b event): static ops matched, then executions by occurrence."""
    if mapping:
        def label(e: Event) -> set[str]:
            return {x for x in (e.location, e.location_name, str(e.key)) if x}

        b_by_label: dict[str, list[Event]] = {}
        for e in b:
            for lab in label(e):
                b_by_label.setdefault(lab, []).append(e)
        pairs = []
        used: set[int] = set()
        for e in a:
            target = next((mapping[x] for x in label(e) if x in mapping), None)
            cands = [c for c in b_by_label.get(target, []) if id(c) not in used] \
                if target else []
            if cands:
                used.add(id(cands[0]))
                pairs.append((e, cands[0]))
        return pairs, [e for e in a if not any(e is p[0] for p in pairs)], \
            [e for e in b if id(e) not in used]
    if by in ("name", "location", "key"):
        groups: dict[Any, list[Event]] = {}
        for e in b:
            groups.setdefault((_static_key(e, by), e.process), []).append(e)
        pairs, lost_a, used2 = [], [], set()
        taken: dict[Any, int] = {}
        for e in a:
            k = (_static_key(e, by), e.process)
            lst = groups.get(k) if k[0] is not None else None
            i = taken.get(k, 0)
            if lst and i < len(lst):
                taken[k] = i + 1
                pairs.append((e, lst[i]))
                used2.add(id(lst[i]))
            else:
                lost_a.append(e)
        return pairs, lost_a, [e for e in b if id(e) not in used2]
    # by order: align the two op sequences by op name
    sm = difflib.SequenceMatcher(None, [e.name for e in a], [e.name for e in b], autojunk=False)
    pairs, lost_a, lost_b = [], [], []
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
            pairs.extend(zip(a[i1:i2], b[j1:j2]))
        else:
            lost_a.extend(a[i1:i2])
            lost_b.extend(b[j1:j2])
    return pairs, lost_a, lost_b


def _matches_types(ea: Event, eb: Event) -> bool:
    ta, tb = ea.op.results, eb.op.results
    if len(ta) != len(tb):
        return False
    for x, y in zip(ta, tb):
        sx, sy = getattr(x.type, "shape", None), getattr(y.type, "shape", None)
        if sx != sy:
            return False
    return True


# --- the entry point -------------------------------------------------------------------------


def diff(a: Module | str, *args: Any, b: Module | str | None = None, against: str = "shlo",
         b_args: Sequence[Any] | None = None, by: str = "auto",
         mapping: dict[str, str] | None = None, tolerance: Tolerance | None = None,
         entry: str = "main", **run_options: Any) -> DiffReport:
    """Compare an execution of ``a`` on ``args`` with a reference execution; see the module
    docstring. ``tolerance`` defaults to exact for shlo against shlo and to
    :func:`~.metrics.default_tolerance` across engines or dtypes."""
    from ..syntax.parser import parse
    from .engines import ENGINES, promoted, run_with_intermediates, widen_arguments

    if against not in ENGINES:
        raise ExecutionError(f"unknown engine '{against}' (one of {', '.join(ENGINES)})")
    ma = parse(a) if isinstance(a, str) else a
    mb = (parse(b) if isinstance(b, str) else b) if b is not None else None
    ref_args = list(b_args) if b_args is not None else list(args)
    ta = trace(ma, *args, entry=entry, values=True, **run_options)
    if ta.error is not None:
        raise ta.error
    same_engine = against == "shlo"
    if against in ("xla", "upstream", "iree"):
        target = mb if mb is not None else ma
        results, values = run_with_intermediates(target, ref_args, against, entry)
        operands = _engine_operands(target, values, ref_args, entry)
        if mb is None:
            return _against_values(ta, values, operands, against, tolerance)
        tb = _pseudo_trace(target, values, operands, results)
    elif against == "f64":
        if tolerance is None:  # against f64, every narrower value is judged at f32 precision
            tolerance = Tolerance(rtol=16 * 2.0 ** -23)
        target = promoted(mb if mb is not None else ma)
        tb = trace(target, *widen_arguments(ref_args), entry=entry, values=True, verify=False,
                   **run_options)
        if mb is None:
            by = "key"
    else:
        target = mb if mb is not None else ma
        tb = trace(target, *ref_args, entry=entry, values=True, **run_options)
        if mb is None:
            by = "key"
    if tb.error is not None:
        raise tb.error
    quant = _has_quant(ma) or _has_quant(target)
    ea, eb = _comparable(ta.events, quant), _comparable(tb.events, quant)
    if by == "auto":
        named = sum(1 for e in ea if e.location_name)
        by = "name" if ea and named >= 0.5 * len(ea) else "order"
    matched, lost_a, lost_b = _pair_events(ea, eb, by, mapping)
    pairs = []
    for x, y in matched:
        if not _matches_types(x, y):
            lost_a.append(x)
            lost_b.append(y)
            continue
        pairs.append(_compare_pair(x, y, list(y.values or ()), tolerance, same_engine))
    if against in ("xla", "upstream", "iree"):
        for p in pairs:
            _attribute(p, p.b.operands if p.b is not None else None)
    pairs.sort(key=lambda p: (p.a.process, p.a.index))
    return DiffReport(pairs, ta, tb, against if mb is None or against != "shlo" else
                      (target.filename or "the second program"), lost_a, lost_b)


def _has_quant(m: Module) -> bool:
    return any(op.name in QUANT_OPS for op in m.walk())


def _compare_pair(x: Event, y: Event | None, expected: list[Any], tolerance: Tolerance | None,
                  same_engine: bool) -> Pair:
    metrics = []
    tol_used = tolerance
    for k, (val, v) in enumerate(zip(x.values or (), x.op.results)):
        e = expected[k] if k < len(expected) else None
        if e is None:
            continue
        tol = tolerance or default_tolerance(same_engine, getattr(val, "dtype", None))
        tol_used = tol
        et = y.op.results[k].type if y is not None else v.type
        metrics.append(compare(val, e, v.type, et, tol))
    return Pair(x, y, expected, metrics, tol_used or Tolerance())


_CALLS = frozenset({"func.call", "call"})


def _holder(e: Event) -> Event | None:
    """The outermost op around ``e`` that is not a call (None: ``e`` runs in the entry
    function or in functions it calls, which the engines' variant inlines)."""
    found = None
    p = e.parent
    while p is not None:
        if p.name not in _CALLS:
            found = p
        p = p.parent
    return found


def _engine_operands(module: Module, executions: list[tuple[int, list[Any]]],
                     args: Sequence[Any], entry: str) -> list[list[Any] | None]:
    """Per execution of an engine, the values of its op's operands on that engine (None when
    one is unknown: operands of ops inside called functions, which the engine ran inlined)."""
    from ..ir import function_body

    ops = list(module.walk())
    known: dict[int, Any] = {id(v): a for v, a in
                             zip(function_body(module.function(entry)).arguments, args)}
    out: list[list[Any] | None] = []
    for key, values in executions:
        op = ops[key]
        vals = [known.get(id(v)) for v in op.operands]
        out.append(None if any(v is None for v in vals) else vals)
        for r, v in zip(op.results, values):
            if v is not None:
                known[id(r)] = v
    return out


def _attribute(pair: Pair, ref_operands: Sequence[Any] | None) -> None:
    """Across engines, a diverged op whose own kernel, run on the reference's operands,
    agrees with the reference is marked ``inherited``: the error came in with its inputs."""
    from ..errors import ShloError
    from ..interpreter.evaluator import evaluate_op

    op = pair.a.op
    if not pair.diverged or ref_operands is None or op.regions or \
            len(ref_operands) != len(op.operands) or any(
                np.shape(x) != tuple(getattr(v.type, "shape", ()) or ())
                for x, v in zip(ref_operands, op.operands)):
        return
    try:
        local = evaluate_op(op, ref_operands)
    except ShloError:  # an op that cannot run alone (a call) is simply not attributed
        return
    for k, (m, v) in enumerate(zip(pair.metrics, op.results)):
        if m.diverged and (k >= len(local) or k >= len(pair.expected) or compare(
                local[k], pair.expected[k], v.type, v.type, pair.tolerance).diverged):
            return
    pair.inherited = True


def _against_values(ta: Trace, executions: list[tuple[int, list[Any]]],
                    operands: list[list[Any] | None], against: str,
                    tolerance: Tolerance | None) -> DiffReport:
    """Pairs of shlo's events and an engine's values: the n-th execution of an op (outside
    regions) with the n-th value the engine returned for it."""
    by_key: dict[int, list[tuple[list[Any], list[Any] | None]]] = {}
    for (key, values), ops in zip(executions, operands):
        by_key.setdefault(key, []).append((values, ops))
    pairs, uncompared = [], []
    seen: dict[int, int] = {}
    for e in _comparable(ta.events, False):
        holder = _holder(e)
        if holder is not None:
            uncompared.append((e, holder))
            continue
        n = seen[e.key] = seen.get(e.key, -1) + 1
        runs = by_key.get(e.key, ())
        if n >= len(runs) or all(v is None for v in runs[n][0]):
            uncompared.append((e, None))
            continue
        pair = _compare_pair(e, None, runs[n][0], tolerance, False)
        _attribute(pair, runs[n][1])
        pairs.append(pair)
    return DiffReport(pairs, ta, None, against, uncompared=uncompared)


def _pseudo_trace(module: Module, executions: list[tuple[int, list[Any]]],
                  operands: list[list[Any] | None], results: list[Any]) -> Trace:
    """Events of an engine's op executions (for matching a second program run elsewhere)."""
    ops = list(module.walk())
    events = []
    for (key, values), ops_values in zip(executions, operands):
        if all(v is None for v in values):
            continue
        ev = Event(len(events), ops[key], key, 0, 0, 0, 0.0, None)
        ev.seconds = 0.0
        ev.values = values
        ev.operands = ops_values
        events.append(ev)
    return Trace(module, events, results)


def parse_mapping(text: str) -> dict[str, str]:
    """A mapping file: JSON {a: b}, or lines `a b` / `a -> b` / `a,b` (locations or names)."""
    import json

    text = text.strip()
    if text.startswith("{"):
        return {str(k): str(v) for k, v in json.loads(text).items()}
    out = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = [p for p in re.split(r"\s*(?:->|,|\s)\s*", line) if p]
        if len(parts) != 2:
            raise ValueError(f"mapping line '{line}': expected two names or locations")
        out[parts[0]] = parts[1]
    return out
