"""The other side of a diff: XLA, the upstream interpreter, or shlo at a wider dtype.

* :func:`run_with_intermediates` compiles ONE variant of the program whose entry function also
  returns the result of every op of its body and of the functions it calls (inlined into it)
  (XLA through jax, or the upstream reference interpreter through jaxlib's bindings), runs it
  once, and gives those values back keyed as the tracer keys ops (their position in the
  module's walk order). Ops nested in regions (`while`, `if`, `case` bodies, reduction
  bodies) are not visible from outside; they are compared through the ops holding them.
* :func:`promoted` is the module with every f16/bf16/f32/fp8 type (and complex<f32>) widened
  to f64 (complex<f64>), constants converted: running it is the "reference dtype" engine.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..attributes import DenseElementsAttr, TypeAttr
from ..dtypes import is_ml_float
from ..errors import ExecutionError
from ..ir import Module, Operation, function_body, function_type
from ..types import ComplexType, FloatType, FunctionType, TensorType, TupleType, Type

__all__ = ["ENGINES", "copy_module", "promoted", "run_with_intermediates"]

ENGINES = ("shlo", "xla", "upstream", "iree", "f64")


def copy_module(module: Module) -> Module:
    """A deep copy made by printing and parsing (ops keep their walk order, hence keys)."""
    from ..syntax.parser import parse
    from ..syntax.printer import format_module

    return parse(format_module(module, generic=True), module.filename)


def _returnable(t: Type) -> bool:
    return isinstance(t, TensorType) and t.is_static


_KEY = "_shlo.key"  # (an attribute the variant's ops carry until it is printed)


def run_with_intermediates(module: Module, args: Sequence[Any], engine: str, entry: str = "main"
                           ) -> tuple[list[Any], list[tuple[int, list[Any]]]]:
    """(results, [(op key, [values of its results]) per op execution, in program order]) of
    ``entry`` on ``engine`` (xla or upstream), from one compilation of a variant that returns
    every op's results (None for a result that cannot be returned).

    The variant has the entry's calls inlined (MLIR's inliner, :func:`~shlo.passes.inline.
    inline_calls`: a callee called twice gives two copies), so the ops of called functions
    are returned too, once per call, in program order: the executions a trace numbers at
    that key in order. Ops inside `while`/`if`/`case` bodies and other regions, in calls
    the inliner leaves (recursion, `no_inline`) and with results of dynamic shape cannot be
    returned: they have no entry (the caller reports them, :func:`~.diff.diff`)."""
    from ..passes.inline import inline_calls
    from ..syntax.printer import format_module
    from ..testing import oracles

    if engine == "iree":
        raise ExecutionError("the iree engine needs iree-compiler/iree-runtime, which are not "
                             "installed; use --against xla or upstream")
    if not oracles.available():
        raise ExecutionError(f"--against {engine} needs jax (pip install jax)")
    tagged = copy_module(module)
    for i, op in enumerate(tagged.walk()):  # the key of each op survives the inlining
        op.attributes[_KEY] = i
    variant = inline_calls(tagged)
    keys = {id(op): op.attributes.pop(_KEY, None) for op in variant.walk()}
    func = variant.function(entry)
    body = function_body(func)
    ret = body.operations[-1]
    n = len(ret.operands)
    extra: list[tuple[int, int]] = []  # (execution, result index) per extra result
    executions: list[tuple[int, list[Any]]] = []
    for op in body.operations[:-1]:
        key = keys.get(id(op))
        if key is None:
            continue
        executions.append((key, [None] * len(op.results)))
        for k, v in enumerate(op.results):
            if _returnable(v.type):
                ret.operands.append(v)
                extra.append((len(executions) - 1, k))
    ft = function_type(func)
    new_ft = FunctionType(tuple(ft.inputs), tuple(ft.results) +
                          tuple(ret.operands[i].type for i in range(n, len(ret.operands))))
    func.properties["function_type"] = TypeAttr(new_ft)
    res_attrs = func.attr("res_attrs")
    if res_attrs is not None:  # one entry per result: drop them rather than pad
        func.properties.pop("res_attrs", None)
        func.attributes.pop("res_attrs", None)
    text = format_module(variant)
    run: Callable[[str, Sequence[Any]], list[Any]]
    run = oracles.xla_run if engine == "xla" else oracles.upstream_run
    try:
        outs = run(text, [np.asarray(a) for a in args])
    except oracles.OracleError as e:
        raise ExecutionError(f"{engine} rejected the program: {e}") from None
    for (execution, k), v in zip(extra, outs[n:]):
        executions[execution][1][k] = v
    return list(outs[:n]), executions


# --- widening to f64 -------------------------------------------------------------------------

_WIDE = FloatType("f64")


def _widen(t: Type) -> Type:
    if isinstance(t, TensorType):
        et = t.element_type
        if isinstance(et, FloatType) and et.name != "f64":
            return TensorType(t.shape, _WIDE, t.encoding)
        if isinstance(et, ComplexType) and et.element.name != "f64":
            return TensorType(t.shape, ComplexType(_WIDE), t.encoding)
        return t
    if isinstance(t, TupleType):
        return TupleType(tuple(_widen(x) for x in t.types))
    if isinstance(t, FunctionType):
        return FunctionType(tuple(_widen(x) for x in t.inputs),
                            tuple(_widen(x) for x in t.results))
    return t


def _widen_attr(a: Any) -> Any:
    if isinstance(a, DenseElementsAttr):
        t = _widen(a.type)
        if t is a.type:
            return a
        arr = np.asarray(a.array)
        if is_ml_float(arr.dtype):
            arr = arr.astype(np.float32)
        return DenseElementsAttr(t, arr.astype(t.element_type.dtype), a.hex)
    if isinstance(a, TypeAttr):
        t = _widen(a.type)
        return a if t is a.type else TypeAttr(t)
    return a


def promoted(module: Module) -> Module:
    """A copy of ``module`` with its float types widened to f64 (see the module docstring).
    `convert`s to narrower floats become f64 -> f64 (the rounding they did is what the
    reference leaves out); `reduce_precision` still rounds."""
    out = copy_module(module)
    for op in out.walk():
        _widen_op(op)
    out.__dict__["_verified"] = True  # widened types keep every constraint
    return out


def _widen_op(op: Operation) -> None:
    for v in op.results:
        v.type = _widen(v.type)
    for region in op.regions:
        for block in region.blocks:
            for v in block.arguments:
                v.type = _widen(v.type)
    for attrs in (op.properties, op.attributes):
        for k, a in list(attrs.items()):
            attrs[k] = _widen_attr(a)


def widen_arguments(args: Sequence[Any]) -> list[Any]:
    """Arguments for the widened module: floats as f64, complex as complex128."""
    out = []
    for a in args:
        x = np.asarray(a)
        if x.dtype.kind == "c":
            out.append(x.astype(np.complex128))
        elif x.dtype.kind == "f" or is_ml_float(x.dtype):
            out.append(x.astype(np.float32).astype(np.float64) if is_ml_float(x.dtype)
                       else x.astype(np.float64))
        else:
            out.append(x)
    return out
