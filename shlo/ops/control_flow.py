"""Control flow and program-structure ops: while, if, case, func.call, optimization_barrier,
tuple, get_tuple_element, custom_call, composite (spec sections of the same names)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..attributes import IntegerAttr, SymbolRefAttr, StringAttr
from ..errors import ExecutionError
from ..ir import Operation
from .check import CHECK_TARGETS
from .registry import kernel

Values = Sequence[Any]


@kernel("stablehlo.while", quantized_aware=True)
def while_(op: Operation, ctx: Any):
    """`while`: run `body` while `cond` returns true (spec "while")."""
    cond = ctx.region(op.regions[0])
    body = ctx.region(op.regions[1])

    def run(*args: Any) -> Values:
        while cond(*args)[0]:
            args = body(*args)
        return args

    return run


@kernel("stablehlo.if", quantized_aware=True)
def if_(op: Operation, ctx: Any):
    """`if`: run `true_branch` when `pred` is true, else `false_branch` (spec "if")."""
    true_branch = ctx.region(op.regions[0])
    false_branch = ctx.region(op.regions[1])

    def run(pred: Any) -> Values:
        return true_branch() if pred else false_branch()

    return run


@kernel("stablehlo.case", quantized_aware=True)
def case(op: Operation, ctx: Any):
    """`case`: run branch `index`; an out-of-range index selects the last branch (spec "case")."""
    branches = [ctx.region(r) for r in op.regions]
    last = len(branches) - 1

    def run(index: Any) -> Values:
        i = int(index)
        return branches[i if 0 <= i < last else last]()

    return run


@kernel("func.call", "call", quantized_aware=True)
def call(op: Operation, ctx: Any):
    """`func.call @callee(args)`: run the callee with the operands."""
    callee = op.attr("callee")
    name = callee.name if isinstance(callee, SymbolRefAttr) else str(callee)
    fn = ctx.function(name)

    def run(*args: Any) -> Values:
        return fn(*args)

    return run


@kernel("stablehlo.optimization_barrier", quantized_aware=True)
def optimization_barrier(op: Operation, ctx: Any):
    """`optimization_barrier`: the identity on its operands (spec "optimization_barrier")."""
    return lambda *args: args


@kernel("stablehlo.tuple", quantized_aware=True)
def tuple_(op: Operation, ctx: Any):
    """`tuple`: pack the operands into a tuple value (spec "tuple")."""
    return lambda *args: (tuple(args),)


@kernel("stablehlo.get_tuple_element", quantized_aware=True)
def get_tuple_element(op: Operation, ctx: Any):
    """`get_tuple_element`: element `index` of a tuple (spec "get_tuple_element")."""
    index = op.attr("index")
    i = int(index.value if isinstance(index, IntegerAttr) else index)
    return lambda t: (t[i],)


@kernel("stablehlo.composite", quantized_aware=True)
def composite(op: Operation, ctx: Any):
    """`composite`: run its `decomposition` function (StableHLO opset beyond the seed spec)."""
    decomposition = op.attr("decomposition")
    fn = ctx.function(decomposition.name)
    return lambda *args: fn(*args)


@kernel("stablehlo.custom_call", quantized_aware=True)
def custom_call(op: Operation, ctx: Any):
    """`custom_call`: check targets, or a Python callable the user registered for the target.

    Any other target is an ExecutionError naming it (raised when the op runs).
    """
    target = op.attr("call_target_name")
    name = target.value if isinstance(target, StringAttr) else str(target)
    if name in CHECK_TARGETS:
        return CHECK_TARGETS[name](op, ctx)
    user = ctx.process.custom_calls.get(name)
    result_types = [v.type for v in op.results]
    if user is not None:
        def run_user(*args: Any) -> Values:
            out = user(*args)
            if len(result_types) == 1 and not isinstance(out, (tuple, list)):
                out = (out,)
            out = list(out) if out is not None else []
            if len(out) != len(result_types):
                raise ExecutionError(f"custom_call @{name}: the registered callable returned "
                                     f"{len(out)} values, the op has {len(result_types)} results",
                                     op.location)
            return [np.asarray(v, dtype=t.element_type.dtype) if hasattr(t, "element_type")
                    else v for v, t in zip(out, result_types)]

        return run_user

    def run(*args: Any) -> Values:
        raise ExecutionError(
            f"'stablehlo.custom_call' op: unsupported target @{name}; register a Python "
            f"callable for it (shlo.run(..., custom_calls={{'{name}': fn}}))", op.location)

    return run
