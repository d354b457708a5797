"""Folding of the ops with regions (`stablehlo-aggressive-folder` and `canonicalize`): `case`
with a constant index, `while` whose condition is constant false, and the `reduce` folds.
"""

from __future__ import annotations

from ..attributes import ints
from ..ir import Block, Operation
from ._patterns import (
    PatternRewriter,
    constant_of,
    dense,
    has_effects,
    pattern,
    region_of,
)

FOLDER = "folder"
CANONICAL = "canonical"
ASSUME_PURE = "folder-assume-no-undeclared-side-effects"


def _index(op: Operation) -> int | None:
    c = constant_of(op.operands[0])
    if c is None or not c.is_splat:
        return None
    return int(c.array.reshape(-1)[0])


@pattern(FOLDER, "stablehlo.case")
def inline_case_with_constant_index(op: Operation, rw: PatternRewriter) -> bool:
    """Inline the branch a constant index selects (out of range: the last); the emptied
    branch returns placeholders, and the case op stays for dead-code removal to judge."""
    if all(rw.use_empty(r) for r in op.results):
        return False
    idx = _index(op)
    if idx is None:
        return False
    n = len(op.regions)
    if idx < 0 or idx >= n:
        idx = n - 1
    region = op.regions[idx]
    if len(region.blocks) != 1 or any(
            rw.placeholder_possible(r.type) is False for r in op.results):
        return False
    block = region.blocks[0]
    term = block.operations[-1]
    results = list(term.operands)
    rw.erase_op(term)
    rw.inline_block_before(block, op)
    for r, v in zip(op.results, results):
        rw.replace_all_uses(r, v)
    region.blocks = []
    nb = Block()
    region.append(nb)
    values = [rw.placeholder(r.type, block=nb, index=None) for r in op.results]
    rw.create("stablehlo.return", values, [], block=nb, index=None)  # type: ignore[arg-type]
    rw.modified(op)
    return True


@pattern(CANONICAL, "stablehlo.case")
def fold_constant_case(op: Operation, rw: PatternRewriter) -> bool:
    """case(constant i) -> the i-th branch's ops, cloned before the op (index in range)."""
    idx = _index(op)
    if idx is None or not 0 <= idx < len(op.regions):
        return False
    block = op.regions[idx].blocks[-1]
    from ._rewrite import Rewriter

    cloner = Rewriter(lambda r, o: None)
    cloner.block = Block()
    for o in block.operations[:-1]:
        cloner.clone(o)
    for o in list(cloner.block.operations):
        cloner.block.operations.remove(o)
        rw.anchor = op
        rw._insert(o)
    rw.replace_op(op, [cloner.get(v) for v in block.operations[-1].operands])
    return True


def _cond_is_false(op: Operation) -> bool:
    cond = op.regions[0].blocks[0]
    ret = cond.operations[-1] if cond.operations else None
    if ret is None or ret.name != "stablehlo.return" or not ret.operands:
        return False
    c = constant_of(ret.operands[0])
    return c is not None and c.is_splat and not bool(c.array.reshape(-1)[0])


@pattern(FOLDER, "stablehlo.while")
def fold_while_false(op: Operation, rw: PatternRewriter) -> bool:
    """while(operands, cond=false) -> operands (the op itself is left to dead-code removal)."""
    if all(rw.use_empty(r) for r in op.results):
        return False
    if not _cond_is_false(op):
        return False
    for r, v in zip(op.results, op.operands):
        rw.replace_all_uses(r, v)
    return True


@pattern(ASSUME_PURE, "stablehlo.while")
def erase_dead_while_presumed_pure(op: Operation, rw: PatternRewriter) -> bool:
    """An unused while that never runs its body, with no declared side effect: erased."""
    if any(not rw.use_empty(r) for r in op.results) or not _cond_is_false(op):
        return False
    if has_effects(op, declared_only=True):
        return False
    rw.erase_op(op)
    return True


def _body(op: Operation) -> Block:
    return op.regions[0].blocks[0]


@pattern(FOLDER, "stablehlo.reduce")
def fold_reduce_zero_dims(op: Operation, rw: PatternRewriter) -> bool:
    """reduce(X..., dimensions=[]) -> X... (types equal)."""
    if ints(op.attr("dimensions"), ()):
        return False
    n = len(op.results)
    inputs = op.operands[:n]
    if any(i.type != r.type for i, r in zip(inputs, op.results)):
        return False
    rw.replace_op(op, list(inputs))
    return True


@pattern(FOLDER, "stablehlo.reduce")
def fold_reduce_to_constant_initializer(op: Operation, rw: PatternRewriter) -> bool:
    """A body returning constants: the result is that constant, broadcast."""
    body = _body(op)
    if len(body.operations) != 1 or body.operations[0].name != "stablehlo.return":
        return False
    attrs = []
    for v, r in zip(body.operations[0].operands, op.results):
        c = constant_of(v)
        if c is None or not c.is_splat or not getattr(r.type, "is_static", False):
            return False
        attrs.append(dense(c.array.reshape(-1)[0], r.type))
    rw.replace_op(op, [rw.constant(a) for a in attrs])
    return True


@pattern(FOLDER, "stablehlo.reduce")
def fold_reduce_redundant_results(op: Operation, rw: PatternRewriter) -> bool:
    """A body returning values defined outside it: those values."""
    body = _body(op)
    ret = body.operations[-1] if body.operations else None
    if ret is None or ret.name != "stablehlo.return":
        return False
    region = op.regions[0]
    for r, v in zip(op.results, ret.operands):
        if region_of(v) is region or v.type != r.type:
            return False
    rw.replace_op(op, list(ret.operands))
    return True


@pattern(FOLDER, "stablehlo.reduce")
def lower_bool_splats_into_reduce_body(op: Operation, rw: PatternRewriter) -> bool:
    """and/or reductions of splat constants: the body's arguments become those constants."""
    body = _body(op)
    if len(body.operations) != 2 or body.operations[0].name not in (
            "stablehlo.and", "stablehlo.or"):
        return False
    consts = []
    for v, a in zip(op.operands, body.arguments):
        c = constant_of(v)
        if c is None or not c.is_splat:
            return False
        consts.append(dense(c.array.reshape(-1)[0], a.type))
    if all(rw.use_empty(a) for a in body.arguments):
        return False
    for a, c in zip(body.arguments, consts):
        rw.replace_all_uses(a, rw.constant(c))
    return True
