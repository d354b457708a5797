"""VHLO programs in shlo's IR: ops named `vhlo.*_vN` whose attributes are the VHLO attribute
classes and whose values have VHLO types.

:func:`textualize` turns the VHLO attributes into their text (opaque attributes, as shlo's
printer prints them), :func:`structurize` does the reverse for a VHLO program read from text.
:func:`is_vhlo_module` tells whether a module holds VHLO ops.
"""

from __future__ import annotations

from typing import Any

from ...attributes import ArrayAttr, DictAttr, OpaqueAttr, TypeAttr
from ...ir import Module, Operation
from ...types import OpaqueType
from .attrs import VhloAttr
from .text import from_ir_attr, from_ir_type
from . import syntax as _syntax  # noqa: F401  (declares vhlo.func_v1's pretty form)

__all__ = ["textualize", "structurize", "is_vhlo_module", "walk_values"]


def _text_attr(a: Any) -> Any:
    if isinstance(a, VhloAttr):
        return OpaqueAttr(a.text)
    t = type(a)
    if t is DictAttr:
        return DictAttr(tuple((k, _text_attr(v)) for k, v in a.items))
    if t is ArrayAttr:
        return ArrayAttr(tuple(_text_attr(v) for v in a.values))
    return a


def textualize(module: Module | Operation) -> Module | Operation:
    """Replace VHLO attributes by their printed text, in place (for printing)."""
    root = module.op if isinstance(module, Module) else module
    for op in root.walk():
        if op.properties:
            op.properties = {k: _text_attr(v) for k, v in op.properties.items()}
        if op.attributes:
            op.attributes = {k: _text_attr(v) for k, v in op.attributes.items()}
    return module


def _struct_attr(a: Any) -> Any:
    a = from_ir_attr(a)
    t = type(a)
    if t is DictAttr:
        return DictAttr(tuple((k, _struct_attr(v)) for k, v in a.items))
    if t is ArrayAttr:
        return ArrayAttr(tuple(_struct_attr(v) for v in a.values))
    if t is TypeAttr and isinstance(a.type, OpaqueType):
        return TypeAttr(from_ir_type(a.type))
    return a


def structurize(module: Module | Operation) -> Module | Operation:
    """Replace VHLO attribute and type text (as shlo's parser keeps them) by VHLO objects, in
    place."""
    root = module.op if isinstance(module, Module) else module
    for op in root.walk():
        if op.properties:
            op.properties = {k: _struct_attr(v) for k, v in op.properties.items()}
        if op.attributes:
            op.attributes = {k: _struct_attr(v) for k, v in op.attributes.items()}
        for v in op.results:
            if isinstance(v.type, OpaqueType):
                v.type = from_ir_type(v.type)
        for r in op.regions:
            for b in r.blocks:
                for v in b.arguments:
                    if isinstance(v.type, OpaqueType):
                        v.type = from_ir_type(v.type)
    return module


def is_vhlo_module(module: Module) -> bool:
    """True when the module holds VHLO ops (a VHLO program)."""
    for op in module.body.operations:
        if op.name.startswith("vhlo."):
            return True
    return any(op.name.startswith("vhlo.") for op in module.op.walk())


def walk_values(op: Operation) -> Any:
    for o in op.walk():
        yield from o.results
        for r in o.regions:
            for b in r.blocks:
                yield from b.arguments


def clone(module: Module) -> Module:
    """A deep copy of ``module``'s IR (attributes and types are immutable and shared)."""
    from ...ir import Block, Region

    vmap: dict[int, Any] = {}
    unmapped = [False]  # an operand defined later (or outside): fixed up at the end

    def copy_op(op: Operation) -> Operation:
        operands = []
        for v in op.operands:
            nv = vmap.get(id(v))
            if nv is None:
                unmapped[0] = True
                nv = v
            operands.append(nv)
        new = Operation(op.name, operands,
                        [r.type for r in op.results], op.properties, op.attributes, None, None,
                        op.location)
        for a, b in zip(op.results, new.results):
            b.name = a.name
            vmap[id(a)] = b
        if op.regions:
            regions = []
            for r in op.regions:
                nr = Region()
                bmap = {}
                for b in r.blocks:
                    nb = Block(label=b.label)
                    for a in b.arguments:
                        vmap[id(a)] = nb.add_argument(a.type, a.name)
                    nr.append(nb)
                    bmap[id(b)] = nb
                for b, nb in zip(r.blocks, nr.blocks):
                    for o in b.operations:
                        nb.append(copy_op(o))
                for nb, b in zip(nr.blocks, r.blocks):
                    for o, no in zip(b.operations, nb.operations):
                        if o.successors:
                            no.successors = [bmap.get(id(s), s) for s in o.successors]
                regions.append(nr)
            new.regions = regions
            for nr in regions:
                nr.parent = new
        return new

    new_op = copy_op(module.op)
    # operands that referred to values defined later (graph regions) are fixed up here
    if unmapped[0]:
        for op in new_op.walk():
            op.operands = [vmap.get(id(v), v) for v in op.operands]
    return Module(new_op, module.filename, dict(module.aliases))


def strip_debuginfo(module: Module) -> Module:
    """Every location becomes `loc(unknown)`, in place (`--strip-debuginfo`)."""
    from ...ir import UNKNOWN_LOC

    for op in module.op.walk():
        op.location = UNKNOWN_LOC
    return module


def _attr_problem(a: Any) -> str | None:
    """The verifier message of an ill-formed VHLO attribute (upstream `VhloAttrs.td`)."""
    from . import attrs as A
    from .types import VhloType

    t = type(a)
    if t is A.VDict:
        for k, v in a.items:
            if not isinstance(k, VhloAttr):
                return "expected VHLO key attribute"
            p = _attr_problem(v)
            if p:
                return p
    elif t is A.VArray:
        for v in a.values:
            p = _attr_problem(v)
            if p:
                return p
    elif t is A.VResultAccuracy and not isinstance(a.mode, VhloAttr):
        return "expected VHLO result accuracy mode"
    elif t in (A.VFloat, A.VInteger, A.VTensorAttr) and not isinstance(a.type, VhloType):
        return "expected VHLO type"
    elif t is A.VTypeAttr and not isinstance(a.value, VhloType):
        return "expected VHLO type"
    return None


def validate(module: Module, text: str | None = None) -> None:
    """Raise ShloError for VHLO attributes that upstream's verifiers reject (a dictionary with a
    non-VHLO key, ...), located at the attribute's line in ``text`` when it can be found."""
    from ...errors import Diagnostic, ParseError
    from ...ir import FileLineColLoc

    diags = []
    lines = text.split("\n") if text else []
    for op in module.op.walk():
        for d in (op.properties, op.attributes):
            for k, a in d.items():
                if not isinstance(a, VhloAttr):
                    continue
                p = _attr_problem(a)
                if p is None:
                    continue
                loc = op.location
                flc = loc.file_line_col() if loc is not None else None
                if flc is not None and lines:
                    for i in range(flc[1] - 1, min(len(lines), flc[1] + 200)):
                        col = lines[i].find(f"{k} = #vhlo")
                        if col >= 0:
                            loc = FileLineColLoc(flc[0], i + 1, col + 1)
                            break
                diags.append(Diagnostic(p, loc))
    if diags:
        raise ParseError(diags[0].message, diagnostics=diags, filename=module.filename)
