"""The structural checks MLIR's ODS verifiers make of a VHLO op as it is read: the op has each
attribute its version defines (VHLO has no optional attributes) as a VHLO attribute, and the
number of operands, regions and results its definition allows. Bytecode that passes the reader
but fails these (a corrupt file) is rejected here, before any conversion looks at the op."""

from __future__ import annotations

from ...errors import Diagnostic, ShloError
from ...ir import Module, Operation
from .attrs import VhloAttr
from .ops import OPS

__all__ = ["VhloStructureError", "verify_structure"]


class VhloStructureError(ShloError):
    """A VHLO op that does not have the shape its definition requires."""


def _arity(kind: str, names: tuple[str, ...], found: int) -> str | None:
    fixed = sum(1 for n in names if not n.startswith("*"))
    variadic = len(names) - fixed
    if variadic == 0 and found != fixed:
        return f"requires {fixed} {kind}, but found {found}"
    if variadic and found < fixed:
        return f"requires at least {fixed} {kind}, but found {found}"
    return None


def op_structure_problem(op: Operation) -> str | None:
    info = OPS.get(op.name)
    if info is None:
        return None
    for name in info.attrs:
        a = op.properties.get(name, op.attributes.get(name))
        if a is None:
            return f"requires attribute '{name}'"
        if not isinstance(a, VhloAttr):
            return f"attribute '{name}' is not a VHLO attribute"
    return (_arity("operands", info.operands, len(op.operands))
            or _arity("regions", info.regions, len(op.regions))
            or _arity("results", info.results, len(op.results)))


def verify_structure(module: Module) -> None:
    """Raise :class:`VhloStructureError` at the first VHLO op that lacks an attribute or has the
    wrong number of operands, regions or results."""
    for op in module.op.walk():
        if op.name.startswith("vhlo."):
            why = op_structure_problem(op)
            if why is not None:
                d = Diagnostic(f"'{op.name}' op {why}", op.location)
                raise VhloStructureError(d.message, diagnostics=[d], filename=module.filename)
