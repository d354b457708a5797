"""canonicalize: MLIR's canonicalizer, on the ops shlo knows.

The greedy driver (:mod:`._driver`) with every op's canonicalization patterns (the ``canonical``
pattern set: `stablehlo.case` with a constant index, `builtin.unrealized_conversion_cast`
chains, `bufferization.to_buffer` of `to_tensor`, the shape-dialect folds of
:mod:`._canonical_shape`) and MLIR's folds: constants uniqued and hoisted to the function
entry, dead code removed. Like upstream, it folds no arithmetic (StableHLO ops have no folders besides
`constant`; `stablehlo-aggressive-folder` does that).
"""

from __future__ import annotations

from typing import Any

from ..ir import Module, Operation
from . import (
    Option,
    _canonical_shape,  # noqa: F401  (registers the shape-dialect patterns)
    _fold_control,  # noqa: F401  (registers the case pattern)
    register_pass,
)
from ._canonical_shape import CANONICAL
from ._driver import GreedyConfig, apply_to_module
from ._patterns import PatternRewriter, pattern, patterns


@pattern(CANONICAL, "builtin.unrealized_conversion_cast")
def fold_cast_chain(op: Operation, rw: PatternRewriter) -> bool:
    """cast(X : A -> A) -> X; cast(cast(X : A -> B) : B -> A) -> X (UnrealizedConversionCastOp's
    folder)."""
    ins = list(op.operands)
    if [v.type for v in ins] == [r.type for r in op.results]:
        rw.replace_op(op, ins)
        return True
    if not ins:
        return False
    src = rw.defining(ins[0], op.name)
    if src is None or list(src.results) != ins:
        return False
    if [v.type for v in src.operands] != [r.type for r in op.results]:
        return False
    rw.replace_op(op, list(src.operands))
    return True


@pattern(CANONICAL, "bufferization.to_buffer")
def fold_to_buffer_of_to_tensor(op: Operation, rw: PatternRewriter) -> bool:
    """to_buffer(to_tensor(B)) -> B when B has the result's type (ToBufferOp's folder)."""
    src = rw.defining(op.operands[0], "bufferization.to_tensor")
    if src is None or src.operands[0].type != op.results[0].type:
        return False
    rw.replace_op(op, [src.operands[0]])
    return True


@register_pass("canonicalize", options=[
    Option("test-convergence", bool, False, "fail if the patterns do not converge"),
    Option("top-down", bool, True, "visit ops top-down (pre-order) rather than bottom-up"),
    Option("region-simplify", str, "normal", "region simplification level (accepted)"),
    Option("max-iterations", int, 10, "bound on the rewrite iterations"),
    Option("max-num-rewrites", int, -1, "bound on the rewrites per iteration (-1: none)")])
def canonicalize(module: Module, options: dict[str, Any]) -> Module:
    """Canonicalize operations (canonicalization patterns, constant uniquing, dead code).

    MLIR's canonicalizer on the greedy driver; `top-down` (default) visits ops in pre-order."""
    config = GreedyConfig(max_iterations=int(options.get("max-iterations", 10)),
                          max_num_rewrites=int(options.get("max-num-rewrites", -1)),
                          top_down=bool(options.get("top-down", True)),
                          fail_on_divergence=bool(options.get("test-convergence", False)))
    return apply_to_module(module, patterns(CANONICAL), config, "canonicalize")
