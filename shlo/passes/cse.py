"""cse: MLIR's common subexpression elimination (mlir/lib/Transforms/CSE.cpp).

Each block is walked in order with a scoped table of the ops seen so far: an op equivalent to
one already known (same name, operands, attributes and properties, result types, and
equivalent regions; locations ignored: MLIR's ``OperationEquivalence::IgnoreLocations``) is
replaced by it. A nested region sees the ops of the regions around it (they dominate it); a
region of an op isolated from above (`func.func`) starts from an empty table. As upstream:

* the regions of an op are simplified before the op itself;
* terminators, ops with side effects (or nested ops with side effects) and ops with a
  multi-block region are never merged;
* an op found trivially dead (unused results, no side effects) is erased instead;
* when the op kept has an unknown location and the one erased does not, it takes that one.

Upstream also merges ops that only *read* memory when no write comes between them; shlo's ops
are either free of effects or effectful, so that case does not arise.
"""

from __future__ import annotations

from typing import Any, Hashable

from ..ir import Module, Operation, Region, UnknownLoc, Value
from ..registry import ISOLATED, names_with
from . import register_pass
from ._driver import copy_module
from ._patterns import PatternRewriter, has_effects, trivially_dead

__all__ = ["cse", "eliminate_common_subexpressions"]


def _attrs_key(op: Operation) -> Hashable:
    merged = {**op.attributes, **op.properties}
    return tuple(sorted(merged.items(), key=lambda kv: kv[0]))


def _region_key(region: Region, local: dict[Value, int]) -> Hashable:
    """The structure of ``region`` with the values it defines numbered (so two regions compare
    equal when they compute the same thing from the same outside values)."""
    blocks = []
    for block in region.blocks:
        for a in block.arguments:
            local[a] = len(local)
        ops = []
        for op in block.operations:
            ops.append(_op_key(op, local))
            for r in op.results:
                local[r] = len(local)
        blocks.append((tuple(a.type for a in block.arguments), tuple(ops)))
    return tuple(blocks)


def _op_key(op: Operation, local: dict[Value, int] | None = None) -> Hashable:
    """What makes two ops equivalent: name, operands (outside values by identity), attributes,
    result types, successors and regions."""
    local = {} if local is None else local
    operands = tuple(("l", local[v]) if v in local else ("v", id(v)) for v in op.operands)
    regions = tuple(_region_key(r, local) for r in op.regions)
    return (op.name, operands, tuple(r.type for r in op.results), _attrs_key(op),
            tuple(id(b) for b in op.successors), regions)


class _CSE:
    def __init__(self, root: Operation) -> None:
        self.rw = PatternRewriter(root)
        self.isolated = names_with(ISOLATED)
        self.terminators = names_with("terminator")
        self.keep: list[Any] = []  # values keyed by id() in the tables stay alive
        self.merged = 0
        self.erased = 0

    def region(self, region: Region, scopes: list[dict[Hashable, Operation]]) -> None:
        if len(region.blocks) != 1:  # MLIR: only the entry block of a multi-block region
            for b in region.blocks[:1]:
                self.block(b.operations, [*scopes, {}])
            for b in region.blocks[1:]:
                self.block(b.operations, [{}])
            return
        self.block(region.blocks[0].operations, [*scopes, {}])

    def block(self, ops: list[Operation], scopes: list[dict[Hashable, Operation]]) -> None:
        for op in list(ops):
            if op.regions:
                inner = [] if op.name in self.isolated else scopes
                for r in op.regions:
                    self.region(r, inner)
            self.simplify(op, scopes)

    def simplify(self, op: Operation, scopes: list[dict[Hashable, Operation]]) -> None:
        if op.name in self.terminators or op.parent is None:
            return
        if trivially_dead(op, self.rw):
            self.rw.erase_op(op)
            self.erased += 1
            return
        if any(len(r.blocks) > 1 for r in op.regions) or not op.results or has_effects(op):
            return
        key = _op_key(op)
        for scope in reversed(scopes):
            known = scope.get(key)
            if known is not None:
                if isinstance(known.location, UnknownLoc) and \
                        not isinstance(op.location, UnknownLoc):
                    known.location = op.location
                self.rw.replace_op(op, list(known.results))
                self.merged += 1
                return
        scopes[-1][key] = op


def eliminate_common_subexpressions(module: Module) -> Module:
    """CSE on ``module`` in place (returns it)."""
    c = _CSE(module.op)
    for r in module.op.regions:
        c.region(r, [])
    return module


@register_pass("cse")
def cse(module: Module, options: dict[str, Any]) -> Module:
    """Eliminate common sub-expressions (MLIR's CSE: equivalent side-effect-free ops merged).

    Scoped by dominance (nested regions see the ops around them, isolated ones do not);
    trivially dead ops are erased on the way."""
    return eliminate_common_subexpressions(copy_module(module))
