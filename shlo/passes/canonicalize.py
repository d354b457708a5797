"""canonicalize (MLIR's canonicalizer, as far as shlo implements it)."""

from __future__ import annotations

from typing import Sequence

from ..attributes import ints
from ..ir import Module, Operation, Value
from . import Option, register_pass
from ._rewrite import Rewriter, dead_code_elimination

_IDENTITIES = frozenset({"stablehlo.convert", "stablehlo.bitcast_convert", "stablehlo.reshape"})


def _canon_pattern(rw: Rewriter, op: Operation) -> Sequence[Value] | None:
    if op.name in _IDENTITIES and len(op.operands) == 1 and len(op.results) == 1:
        src = rw.get(op.operands[0])
        if src.type == op.results[0].type:
            return [src]
    if op.name == "stablehlo.broadcast_in_dim" and op.operands[0].type == op.results[0].type:
        dims = ints(op.attr("broadcast_dimensions"), ())
        if tuple(dims) == tuple(range(len(dims))):
            return [rw.get(op.operands[0])]
    if op.name == "stablehlo.transpose" and op.operands[0].type == op.results[0].type:
        perm = ints(op.attr("permutation"), ())
        if tuple(perm) == tuple(range(len(perm))):
            return [rw.get(op.operands[0])]
    return None


@register_pass("canonicalize", options=[
    Option("test-convergence", bool, False, "fail if the patterns do not converge"),
    Option("top-down", bool, True, "visit ops top-down (accepted; the result is the same)"),
    Option("region-simplify", str, "normal", "region simplification level (accepted)"),
    Option("max-iterations", int, 10, "bound on the rewrite iterations"),
    Option("max-num-rewrites", int, -1, "bound on the rewrites per iteration")])
def canonicalize(module: Module, options: dict[str, str] | None = None) -> Module:
    """A small part of MLIR's canonicalization: identity ``convert``/``bitcast_convert``/
    ``reshape``/``broadcast_in_dim``/``transpose`` ops are removed, then side-effect-free ops
    whose results are unused.

    No constant folding and none of the other MLIR patterns: shlo's interpreter does not need
    them, and the programs stay recognisable.
    """
    return dead_code_elimination(Rewriter(_canon_pattern).module(module))


