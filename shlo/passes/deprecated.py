"""stablehlo-legalize-deprecated-ops: the ops the StableHLO v1.0 opset deprecations RFC (#2283)
removes become their long-term counterparts (upstream's StablehloLegalizeDeprecatedOps.cpp and
StablehloLegalizeDeprecatedOpsPatterns.td):

* `broadcast` -> `broadcast_in_dim` (dims: the trailing dimensions of the result);
* `create_token` -> `after_all` (no operand);
* `cross-replica-sum` -> `all_reduce` with an `add` body;
* `dot` -> `dot_general` (contracting the last lhs dimension with the first rhs dimension);
* `unary_einsum` -> `einsum` of the constant 1 and the operand (config `,` + equation).

`map` and `rng` have no replacement: with `fail-on-unused` (the default) they fail the pass, as
upstream's partial conversion does when an illegal op is left.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ..attributes import StringAttr, StructAttr
from ..ir import Block, Module, Operation, Region, Value
from ..types import TensorType, Type
from . import Option, register_pass
from ._rewrite import PassError, Rewriter, i64_array

Lowering = Callable[[Rewriter, Operation], Sequence[Value]]
_LOWERINGS: dict[str, Lowering] = {}
NO_REPLACEMENT = ("stablehlo.map", "stablehlo.rng")


def _lowering(name: str) -> Callable[[Lowering], Lowering]:
    def deco(fn: Lowering) -> Lowering:
        _LOWERINGS[name] = fn
        return fn

    return deco


def _rank(t: Type) -> int:
    assert isinstance(t, TensorType) and t.shape is not None
    return len(t.shape)


@_lowering("stablehlo.broadcast")
def broadcast_to_broadcast_in_dim(rw: Rewriter, op: Operation) -> Sequence[Value]:
    """broadcast(X, sizes) -> broadcast_in_dim(X, dims = [len(sizes), ..., rank - 1])."""
    sizes = tuple(op.attr("broadcast_sizes").values)
    result = op.results[0].type
    dims = range(len(sizes), _rank(result))
    return [rw.emit1("stablehlo.broadcast_in_dim", [rw.get(op.operands[0])], result,
                     {"broadcast_dimensions": i64_array(dims)})]


@_lowering("stablehlo.create_token")
def create_token_to_after_all(rw: Rewriter, op: Operation) -> Sequence[Value]:
    """create_token -> after_all()."""
    return [rw.emit1("stablehlo.after_all", [], op.results[0].type)]


@_lowering("stablehlo.cross-replica-sum")
def cross_replica_sum_to_all_reduce(rw: Rewriter, op: Operation) -> Sequence[Value]:
    """cross-replica-sum(X) -> all_reduce(X) with the body `add`, the same replica groups."""
    t = op.results[0].type
    assert isinstance(t, TensorType)
    scalar = TensorType((), t.element_type)
    block = Block([scalar, scalar])
    add = Operation("stablehlo.add", list(block.arguments), [scalar], location=op.location)
    block.append(add)
    block.append(Operation("stablehlo.return", list(add.results), [], location=op.location))
    props = {"replica_groups": op.attr("replica_groups")}
    return list(rw.emit("stablehlo.all_reduce", [rw.get(op.operands[0])], [t], props,
                        regions=[Region([block])]).results)


@_lowering("stablehlo.dot")
def dot_to_dot_general(rw: Rewriter, op: Operation) -> Sequence[Value]:
    """dot(lhs, rhs) -> dot_general contracting lhs's last dimension with rhs's first."""
    dims = StructAttr("stablehlo.dot", (
        ("lhs_contracting_dimensions", (_rank(op.operands[0].type) - 1,)),
        ("rhs_contracting_dimensions", (0,))))
    props: dict[str, Any] = {"dot_dimension_numbers": dims}
    if op.attr("precision_config") is not None:
        props["precision_config"] = op.attr("precision_config")
    return [rw.emit1("stablehlo.dot_general", [rw.get(v) for v in op.operands],
                     op.results[0].type, props)]


@_lowering("stablehlo.unary_einsum")
def unary_einsum_to_einsum(rw: Rewriter, op: Operation) -> Sequence[Value]:
    """unary_einsum(X, "eq") -> einsum(1, X, ",eq")."""
    et = op.operands[0].type.element_type  # type: ignore[union-attr]
    one = rw.constant(np.ones((), et.dtype), et)
    config = StringAttr("," + op.attr("einsum_config").value)
    return [rw.emit1("stablehlo.einsum", [one, rw.get(op.operands[0])], op.results[0].type,
                     {"einsum_config": config})]


def _pattern(fail_on_unused: bool) -> Callable[[Rewriter, Operation], Sequence[Value] | None]:
    def pattern(rw: Rewriter, op: Operation) -> Sequence[Value] | None:
        fn = _LOWERINGS.get(op.name)
        if fn is not None:
            return fn(rw, op)
        if fail_on_unused and op.name in NO_REPLACEMENT:
            raise PassError(f"failed to legalize operation '{op.name}' that was explicitly "
                            "marked illegal", op.location)
        return None

    return pattern


@register_pass("stablehlo-legalize-deprecated-ops", options=[
    Option("fail-on-unused", bool, True,
           "Fail on (mostly) unused ops that are deprecated without any fallback.")])
def legalize_deprecated_ops(module: Module, options: dict[str, Any]) -> Module:
    """Legalize deprecated ops to well-supported ops.

    broadcast, create_token, cross-replica-sum, dot and unary_einsum become broadcast_in_dim,
    after_all, all_reduce, dot_general and einsum; map and rng fail unless fail-on-unused=false."""
    return Rewriter(_pattern(bool(options.get("fail-on-unused", True)))).module(module)


