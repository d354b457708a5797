"""interpreter-instrument-with-probe: an `interpreter.probe` after every suitable op (upstream's
stablehlo/reference/InterpreterInstrumentWithProbe.cpp), so that a run records intermediate
values by probe id (``shlo.debug.trace`` and `check.expect_serialized_eq` read them).

Suitable: every op with results but `stablehlo.constant`, at any nesting depth (ops are visited
in post-order, so a region's ops before the op holding it); each result that is a static
tensor of integers, floats or complex numbers gets its probe, which then feeds the result's
users. Probe ids are `probe1`, `probe2`, ... in that order; with `useDebugInfo`, an op located
at `loc("name@...")` gives `name.N` instead.
"""

from __future__ import annotations

from typing import Any

from ..attributes import StringAttr
from ..ir import Location, Module, NameLoc, Operation, Value
from ..types import IntegerType, TensorType
from . import Option, register_pass
from ._driver import copy_module
from ._patterns import PatternRewriter


def should_probe_op(op: Operation) -> bool:
    return op.name != "stablehlo.constant" and bool(op.results)


def should_probe_value(v: Value) -> bool:
    """A static tensor of integers (with i1, without index), floats or complex numbers."""
    t = v.type
    if not isinstance(t, TensorType) or not t.is_static:
        return False
    et = t.element_type
    return isinstance(et, IntegerType) or getattr(et, "is_float", False) or \
        getattr(et, "is_complex", False)


def probe_id(location: Location, n: int, use_debug_info: bool) -> str:
    """`probeN`, or `<name>.N` for a `loc("name@...")` when ``use_debug_info``."""
    if use_debug_info and isinstance(location, NameLoc):
        return location.name.split("@", 1)[0] + f".{n}"
    return f"probe{n}"


def _post_order(op: Operation) -> list[Operation]:
    out: list[Operation] = []
    for r in op.regions:
        for b in r.blocks:
            for o in b.operations:
                out.extend(_post_order(o))
    out.append(op)
    return out


@register_pass("interpreter-instrument-with-probe", options=[
    Option("useDebugInfo", bool, False,
           "Whether or not to use location debug data as `probe_id` values.")])
def instrument_with_probe(module: Module, options: dict[str, Any]) -> Module:
    """Inserts interpreter.probe ops in a StableHLO program.

    After each op but constants, one probe per static int/float/complex tensor result, ids
    probe1, probe2, ... (`name.N` from `loc("name")` with useDebugInfo)."""
    out = copy_module(module)
    use_debug_info = bool(options.get("useDebugInfo", False))
    rw = PatternRewriter(out.op)
    n = 0
    for op in _post_order(out.op):
        if not should_probe_op(op) or op.parent is None:
            continue
        block = op.parent
        for r in op.results:
            if not should_probe_value(r):
                continue
            n += 1
            probe = rw.create("interpreter.probe", [r], [r.type],
                              {"probe_id": StringAttr(probe_id(op.location, n, use_debug_info))},
                              location=op.location, block=block,
                              index=block.operations.index(op) + 1)
            rw.replace_all_uses(r, probe.results[0])
            rw.set_operands(probe, [r])
    return out
