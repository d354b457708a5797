"""The process's identity and tokens: replica_id, partition_id, after_all (spec sections of the
same names) and create_token (upstream's older spelling of `after_all` without inputs)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ...errors import Diagnostics
from ...ir import Operation
from ...registry import Kernel, define, inference, kernel, verifier
from ...syntax.directives import ATTRDICT, OPERANDS, declarative, types
from ...types import TOKEN, TensorType, TokenType, Type, element_type
from .. import _constraints as _c

if TYPE_CHECKING:  # pragma: no cover
    from ...interpreter.evaluator import PrepareContext

_UI32 = element_type("ui32")
_UI32_SCALAR = _c.TC(only=frozenset({"ui32"}), description="ranked tensor of 32-bit unsigned "
                                                            "integer values")

# --- replica_id, partition_id (spec "replica_id", "partition_id") ---------------------------

define("stablehlo.replica_id", spec="replica_id", summary="the replica of the current process",
       syntax=declarative(ATTRDICT, types("results")))
define("stablehlo.partition_id", spec="partition_id",
       summary="the partition of the current process",
       syntax=declarative(ATTRDICT, types("results")))


@kernel("stablehlo.replica_id")
def replica_id(op: Operation, ctx: PrepareContext) -> Kernel:
    """The replica of the current process (0 on one process)."""
    dtype = op.results[0].type.dtype
    process = ctx.process

    def run() -> tuple[Any, ...]:
        return (np.array(process.replica_id, dtype=dtype),)

    return run


@kernel("stablehlo.partition_id")
def partition_id(op: Operation, ctx: PrepareContext) -> Kernel:
    """The partition of the current process (0 on one process)."""
    dtype = op.results[0].type.dtype
    process = ctx.process

    def run() -> tuple[Any, ...]:
        return (np.array(process.partition_id, dtype=dtype),)

    return run


@inference("stablehlo.replica_id", "stablehlo.partition_id")
def _infer_process_id(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """`tensor<ui32>`."""
    return [TensorType((), _UI32)]


@verifier("stablehlo.replica_id", "stablehlo.partition_id")
def _verify_process_id(op: Operation, diag: Diagnostics) -> None:
    """The result is a 0-dimensional tensor of ui32."""
    if _c.signature(op, diag, [], [_UI32_SCALAR]):
        _c.check_inferred(op, diag, "", _infer_process_id(op, diag) or [])


# --- after_all (spec "after_all"), create_token ---------------------------------------------

define("stablehlo.after_all", spec="after_all", summary="a token after every input token",
       syntax=declarative(OPERANDS, ATTRDICT, types("variadic_same")))
define("stablehlo.create_token", summary="a token (upstream's older `after_all` with no inputs)",
       syntax=declarative(ATTRDICT, types("results")))


@kernel("stablehlo.after_all", "stablehlo.create_token")
def after_all(op: Operation, ctx: PrepareContext) -> Kernel:
    """A token after every input token (execution here is in order)."""
    out = (TOKEN,)

    def run(*tokens: Any) -> tuple[Any, ...]:
        return out

    return run


@inference("stablehlo.after_all", "stablehlo.create_token")
def _infer_after_all(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """`!stablehlo.token`."""
    return [TokenType()]


@verifier("stablehlo.after_all", "stablehlo.create_token")
def _verify_after_all(op: Operation, diag: Diagnostics) -> None:
    """`inputs` are tokens; the result is a token."""
    _c.signature(op, diag, [(_c.TOKEN, "*")], [_c.TOKEN])
