"""The one VHLO op with a pretty form: `vhlo.func_v1` (upstream `printFunctionBody`)::

    vhlo.func_v1 @name(%arg0: !vhlo.tensor_v1<!vhlo.f32_v1>) -> (!vhlo.tensor_v1<...>) {
      ...
    } {arg_attrs = #vhlo.array_v1<[]>, res_attrs = ..., sym_visibility = ...}

Every other VHLO op prints in the generic form. Declared in the op registry when this module
is imported (shlo.bytecode imports it).
"""

from __future__ import annotations

from typing import Any

from ...attributes import OpaqueAttr
from ...ir import Block, Operation, Region
from ...registry import define, lookup
from . import attrs as A
from . import types as T
from .text import from_ir_attr, from_ir_type

__all__ = ["FUNC"]

FUNC = "vhlo.func_v1"


def _print(pr: Any, op: Operation) -> str | None:
    name = from_ir_attr(op.properties.get("sym_name"))
    ftype = from_ir_attr(op.properties.get("function_type"))
    if not isinstance(name, A.VString) or not isinstance(ftype, A.VTypeAttr) or \
            not isinstance(ftype.value, T.VFunction) or len(op.regions) != 1 or \
            op.operands or op.results:
        return None
    region = op.regions[0]
    if not region.blocks:
        return None
    body = region.blocks[0]
    if len(body.arguments) != len(ftype.value.inputs):
        return None
    args = ", ".join(f"{pr.val(a)}: {pr.type(a.type)}" for a in body.arguments)
    outs = ", ".join(T.type_text(t) for t in ftype.value.outputs)
    s = f" {pr.symbol(name.value)}({args}) -> ({outs}) " + pr.region(region, False)
    d = pr.attr_dict(op, {"sym_name", "function_type"})
    return s + d


def _parse(p: Any, name: str, nres: int, start: int) -> Operation:
    sym = p.symbol_name()
    p.expect("(")
    types: list[Any] = []
    names: list[str] = []
    if not p.accept(")"):
        while True:
            if not p.v.startswith("%"):
                p.error("expected an argument name")
            names.append(p.v[1:])
            p._advance()
            p.expect(":")
            types.append(p.parse_type())
            if not p.accept(","):
                break
        p.expect(")")
    p.expect("->")
    outs: list[Any] = []
    p.expect("(")
    if not p.accept(")"):
        while True:
            outs.append(p.parse_type())
            if not p.accept(","):
                break
        p.expect(")")
    region = p.parse_region(list(zip(names, types)))
    attrs: dict[str, Any] = {}
    if p.v == "{":
        attrs = dict(p.dict_items())
    props: dict[str, Any] = {}
    for k in ("arg_attrs", "res_attrs", "sym_visibility"):
        if k in attrs:
            props[k] = attrs.pop(k)
    fn = T.VFunction(tuple(from_ir_type(t) for t in types), tuple(from_ir_type(t) for t in outs))
    props["sym_name"] = OpaqueAttr(A.VString(sym).text)
    props["function_type"] = OpaqueAttr(A.VTypeAttr(fn).text)
    return Operation(name, [], [], props, attrs, [region], None, p.location_at(start))


if lookup(FUNC) is None or lookup(FUNC).syntax is None:
    from ...syntax.directives import Format

    define(FUNC, summary="a function (VHLO)", syntax=Format(_parse, _print, frozenset(
        {"sym_name", "function_type"})), inherent=("sym_name", "function_type",
                                                   "sym_visibility", "arg_attrs", "res_attrs"))

_ = (Block, Region)
