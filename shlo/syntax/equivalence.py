"""Structural comparison of two IRs (used by round-trip tests and passes' tests).

Two modules are equivalent when they have the same ops in the same order, with the same
operand wiring, result and block-argument types, regions, and the same attributes. Inherent and
discardable attributes are compared as one dictionary (a pretty-printed op re-parsed puts an
attribute in ``properties`` where a generic op kept it in ``attributes``); an integer or float
attribute without a type equals one with the default type (`i64`, `f64`). Locations and value
names are ignored.
"""

from __future__ import annotations

from typing import Any

from ..attributes import ArrayAttr, DictAttr, FloatAttr, IntegerAttr, StructAttr
from ..ir import Module, Operation, Region
from ..types import _ELEMENT_TYPES

__all__ = ["first_difference", "equivalent"]

_I64 = _ELEMENT_TYPES["i64"]
_F64 = _ELEMENT_TYPES["f64"]


def _norm(a: Any) -> Any:
    t = type(a)
    if t is IntegerAttr and a.type is None:
        return IntegerAttr(a.value, _I64)
    if t is FloatAttr and a.type is None:
        return FloatAttr(a.value, _F64)
    if t is ArrayAttr:
        return ArrayAttr(tuple(_norm(x) for x in a.values))
    if t is DictAttr:
        return DictAttr(tuple(sorted(((k, _norm(v)) for k, v in a.items), key=lambda kv: kv[0])))
    if t is StructAttr:
        return StructAttr(a.name, tuple((k, _norm(v)) for k, v in a.params))
    return a


def _attrs(op: Operation) -> dict[str, Any]:
    d = {k: _norm(v) for k, v in op.properties.items()}
    for k, v in op.attributes.items():
        d[k] = _norm(v)
    return d


def first_difference(a: Module | Operation, b: Module | Operation) -> str | None:
    """A description of the first difference between two IRs, or None when equivalent."""
    oa = a.op if isinstance(a, Module) else a
    ob = b.op if isinstance(b, Module) else b
    ids_a: dict[Any, int] = {}
    ids_b: dict[Any, int] = {}
    stack: list[tuple[Operation, Operation, str]] = [(oa, ob, "")]
    while stack:
        x, y, path = stack.pop()
        where = f"{path}/{x.name}"
        if x.name != y.name:
            return f"{path}: op {x.name} vs {y.name}"
        if len(x.operands) != len(y.operands):
            return f"{where}: {len(x.operands)} vs {len(y.operands)} operands"
        for i, (u, v) in enumerate(zip(x.operands, y.operands)):
            if ids_a.get(u, -1) != ids_b.get(v, -2):
                return f"{where}: operand {i} is wired differently"
        if len(x.results) != len(y.results):
            return f"{where}: {len(x.results)} vs {len(y.results)} results"
        for i, (u, v) in enumerate(zip(x.results, y.results)):
            if u.type != v.type:
                return f"{where}: result {i} type {u.type} vs {v.type}"
            ids_a[u] = ids_b[v] = len(ids_a)
        ax, ay = _attrs(x), _attrs(y)
        if ax != ay:
            keys = sorted(set(ax) | set(ay))
            for k in keys:
                if ax.get(k) != ay.get(k):
                    return f"{where}: attribute {k}: {ax.get(k)!r} vs {ay.get(k)!r}"
        if len(x.regions) != len(y.regions):
            return f"{where}: {len(x.regions)} vs {len(y.regions)} regions"
        if len(x.successors) != len(y.successors):
            return f"{where}: successors differ"
        pending: list[tuple[Operation, Operation, str]] = []
        for ri, (rx, ry) in enumerate(zip(x.regions, y.regions)):
            msg = _region(rx, ry, f"{where}#r{ri}", ids_a, ids_b, pending)
            if msg:
                return msg
        stack.extend(reversed(pending))
    return None


def _region(rx: Region, ry: Region, where: str, ids_a: dict, ids_b: dict,
            pending: list) -> str | None:
    if len(rx.blocks) != len(ry.blocks):
        return f"{where}: {len(rx.blocks)} vs {len(ry.blocks)} blocks"
    for bi, (bx, by) in enumerate(zip(rx.blocks, ry.blocks)):
        if len(bx.arguments) != len(by.arguments):
            return f"{where}^{bi}: {len(bx.arguments)} vs {len(by.arguments)} arguments"
        for u, v in zip(bx.arguments, by.arguments):
            if u.type != v.type:
                return f"{where}^{bi}: argument type {u.type} vs {v.type}"
            ids_a[u] = ids_b[v] = len(ids_a)
        if len(bx.operations) != len(by.operations):
            return f"{where}^{bi}: {len(bx.operations)} vs {len(by.operations)} ops"
        for i, (ox, oy) in enumerate(zip(bx.operations, by.operations)):
            pending.append((ox, oy, f"{where}^{bi}:{i}"))
    return None


def equivalent(a: Module | Operation, b: Module | Operation) -> bool:
    return first_difference(a, b) is None
