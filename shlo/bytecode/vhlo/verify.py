"""The structural checks MLIR's ODS verifiers make of a VHLO op as it is read: the op has each
attribute its version defines (VHLO has no optional attributes) as a VHLO attribute, and the
number of operands, regions and results its definition allows. Bytecode that passes the reader
but fails these (a corrupt file) is rejected here, before any conversion looks at the op."""

from __future__ import annotations

from ...errors import Diagnostic, ShloError
from ...ir import Module, Operation
from .attrs import VhloAttr
from .ops import OPS

__all__ = ["VhloStructureError", "verify_structure", "op_shape", "attrs_problem",
           "arity_problem", "op_structure_problem"]


class VhloStructureError(ShloError):
    """A VHLO op that does not have the shape its definition requires."""


def _arity(kind: str, fixed: int, variadic: bool, found: int) -> str:
    if variadic:
        return f"requires at least {fixed} {kind}, but found {found}"
    return f"requires {fixed} {kind}, but found {found}"


# op name -> (attribute names, (fixed, variadic) counts of operands, regions, results)
_SHAPES: dict[str, tuple] = {}


def _shape(name: str) -> tuple | None:
    shape = _SHAPES.get(name)
    if shape is None:
        info = OPS.get(name)
        if info is None:
            return None

        def counts(names: tuple[str, ...]) -> tuple[int, bool]:
            fixed = sum(1 for n in names if not n.startswith("*"))
            return fixed, fixed != len(names)

        shape = _SHAPES[name] = (info.attrs, counts(info.operands), counts(info.regions),
                                 counts(info.results))
    return shape


def op_shape(name: str) -> tuple | None:
    """``(attribute names, (fixed, variadic) counts of operands, regions, results)`` of VHLO op
    ``name`` (None: not a VHLO op)."""
    return _shape(name)


def attrs_problem(attrs: tuple[str, ...], props: dict, attributes: dict) -> str | None:
    """Why an op with these properties/attributes lacks one of ``attrs`` as a VHLO attribute."""
    for name in attrs:
        a = props.get(name)
        if a is None:
            a = attributes.get(name)
            if a is None:
                return f"requires attribute '{name}'"
        if not isinstance(a, VhloAttr):
            return f"attribute '{name}' is not a VHLO attribute"
    return None


def arity_problem(shape: tuple, n_operands: int, n_regions: int, n_results: int) -> str | None:
    """Why these operand/region/result counts do not fit the op's ``shape``."""
    _, operands, regions, results = shape
    for kind, (fixed, variadic), found in (("operands", operands, n_operands),
                                           ("regions", regions, n_regions),
                                           ("results", results, n_results)):
        if found != fixed and not (variadic and found > fixed):
            return _arity(kind, fixed, variadic, found)
    return None


def op_structure_problem(op: Operation) -> str | None:
    shape = _shape(op.name)
    if shape is None:
        return None
    return attrs_problem(shape[0], op.properties, op.attributes) or \
        arity_problem(shape, len(op.operands), len(op.regions), len(op.results))


def verify_structure(module: Module) -> None:
    """Raise :class:`VhloStructureError` at the first VHLO op that lacks an attribute or has the
    wrong number of operands, regions or results."""
    for op in module.op.walk():
        if op.name.startswith("vhlo."):
            why = op_structure_problem(op)
            if why is not None:
                d = Diagnostic(f"'{op.name}' op {why}", op.location)
                raise VhloStructureError(d.message, diagnostics=[d], filename=module.filename)
