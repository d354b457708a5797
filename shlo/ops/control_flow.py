"""Control flow and program-structure ops: while, if, case, func.call, optimization_barrier,
tuple, get_tuple_element, custom_call, composite (spec sections of the same names)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..attributes import IntegerAttr, SymbolRefAttr, StringAttr
from ..errors import ExecutionError
from ..ir import Operation
from .check import CHECK_TARGETS
from ..registry import kernel

Values = Sequence[Any]


@kernel("stablehlo.while", quantized_aware=True)
def while_(op: Operation, ctx: Any):
    """`while`: run `body` while `cond` returns true (spec "while")."""
    cond = ctx.region(op.regions[0]).run
    body = ctx.region(op.regions[1]).run

    def run(*args: Any) -> Values:
        while cond(*args)[0]:
            args = body(*args)
        return args

    return run


@kernel("stablehlo.if", quantized_aware=True)
def if_(op: Operation, ctx: Any):
    """`if`: run `true_branch` when `pred` is true, else `false_branch` (spec "if")."""
    true_branch = ctx.region(op.regions[0]).run
    false_branch = ctx.region(op.regions[1]).run

    def run(pred: Any) -> Values:
        return true_branch() if pred else false_branch()

    return run


@kernel("stablehlo.case", quantized_aware=True)
def case(op: Operation, ctx: Any):
    """`case`: run branch `index`; an out-of-range index selects the last branch (spec "case")."""
    branches = [ctx.region(r).run for r in op.regions]
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
    fn = ctx.function(name)  # may still be compiling (recursion): look up `run` when called

    def run(*args: Any) -> Values:
        return fn.run(*args)

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
    return lambda *args: fn.run(*args)


@kernel("stablehlo.custom_call", quantized_aware=True)
def custom_call(op: Operation, ctx: Any):
    """`custom_call`: check targets, or a Python callable the user registered for the target.

    Any other target is an ExecutionError naming it (raised when the op runs).
    """
    target = op.attr("call_target_name")
    name = target.value if isinstance(target, StringAttr) else str(target)
    if name in CHECK_TARGETS:
        return CHECK_TARGETS[name](op, ctx)
    result_types = [v.type for v in op.results]
    process = ctx.process

    def run(*args: Any) -> Values:
        user = process.custom_calls.get(name)  # looked up per run: one preparation serves all
        if user is None:
            raise ExecutionError(
                f"'stablehlo.custom_call' op: unsupported target @{name}; register a Python "
                f"callable for it (shlo.run(..., custom_calls={{'{name}': fn}}))", op.location)
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

    return run


# --- constraints (spec "Ops" section, C1..Cn) ---------------------------------------------------
# The verifiers of the control-flow ops (shlo/verifier.py calls them through the registry;
# func.call is checked against its callee by the verifier itself).

import re as _re  # noqa: E402

from ..attributes import (  # noqa: E402
    ArrayAttr as _ArrayAttr, DictAttr as _DictAttr, StructAttr as _StructAttr,
)
from ..types import TensorType as _TensorType, TupleType as _TupleType  # noqa: E402
from . import _constraints as _c  # noqa: E402
from ..registry import verifier  # noqa: E402

_VALUES = _c.TC(_c.F | _c.B | _c.I | _c.C | _c.Q | _c.QA, token=True, tuple=True)


def _branch_results(op: Operation, diag: Any, index_label: str) -> list | None:
    """Check the branches of if/case (no arguments, one return list); returns their types."""
    first = None
    for i in range(len(op.regions)):
        args = _c.region_arg_types(op, i) or []
        if args:
            diag.error(op, "C1" if op.name == "stablehlo.if" else "C2",
                       f"branch {i} must have 0 arguments, but found {len(args)}")
            return None
        rets = _c.region_return_types(op, i)
        if rets is None:
            return None
        if first is None:
            first = rets
        elif len(rets) != len(first) or any(not _c.compatible(a, b) for a, b in zip(first, rets)):
            diag.error(op, "C2" if op.name == "stablehlo.if" else "C3",
                       f"branch 0 and branch {i} have mismatched return types: "
                       f"{_c.types_str(first)} vs {_c.types_str(rets)}")
            return None
    return first


@verifier("stablehlo.if")
def _verify_if(op: Operation, diag: Any) -> None:
    """(C1) the branches take no arguments; (C2) they return the same types; (C3) the results
    have those types. `pred` is a 0-dimensional tensor of i1."""
    if not _c.signature(op, diag, [_c.PRED_TENSOR], [(_VALUES, "*")], regions=2):
        return
    pred = op.operands[0].type
    if pred.shape not in ((), None):
        diag.error(op, "I1", f"operand should be rank 0 tensor but got rank {len(pred.shape)}")
        return
    rets = _branch_results(op, diag, "I1")
    if rets is not None:
        _c.check_inferred(op, diag, "C3", rets)


@verifier("stablehlo.case")
def _verify_case(op: Operation, diag: Any) -> None:
    """(C1) at least one branch; (C2) the branches take no arguments; (C3) they return the same
    types; (C4) the results have those types. `index` is a 0-dimensional tensor of si32."""
    i32 = _c.TC(only=frozenset({"i32", "si32"}), description="ranked tensor of 32-bit signless "
                                                             "integer values")
    if not _c.signature(op, diag, [i32], [(_VALUES, "*")], regions=None):
        return
    index = op.operands[0].type
    if not op.regions:
        diag.error(op, "C1", "expect at least one branch")
        return
    if index.shape not in ((), None):
        diag.error(op, "I1", f"operand should be rank 0 tensor but got rank {len(index.shape)}")
        return
    rets = _branch_results(op, diag, "I1")
    if rets is not None:
        _c.check_inferred(op, diag, "C4", rets)


@verifier("stablehlo.while")
def _verify_while(op: Operation, diag: Any) -> None:
    """(C1) `cond` has type `(T0, ..., TN-1) -> tensor<i1>`; (C2) `body` has type `(T0, ...,
    TN-1) -> (T0, ..., TN-1)`; (C3) `type(results...) = type(operand...)`."""
    if not _c.signature(op, diag, [(_VALUES, "*")], [(_VALUES, "*")], regions=2):
        return
    types = [v.type for v in op.operands]
    def differ(a: list, b: list) -> bool:
        return len(a) != len(b) or any(not _c.compatible(x, y) for x, y in zip(a, b))
    cond_args = _c.region_arg_types(op, 0)
    if cond_args is not None and differ(types, cond_args):
        diag.error(op, "C1", f"expect operands to be compatible with condition block arguments "
                             f"but got {_c.types_str(types)} vs {_c.types_str(cond_args)}")
        return
    body_args = _c.region_arg_types(op, 1)
    if body_args is not None and differ(types, body_args):
        diag.error(op, "C2", f"expect operands to be compatible with body block arguments but "
                             f"got {_c.types_str(types)} vs {_c.types_str(body_args)}")
        return
    body_rets = _c.region_return_types(op, 1)
    if body_rets is not None and differ(types, body_rets):
        diag.error(op, "C2", f"expect operands to be compatible with body block return types "
                             f"but got {_c.types_str(types)} vs {_c.types_str(body_rets)}")
        return
    cond_rets = _c.region_return_types(op, 0)
    if cond_rets is not None:
        r = cond_rets[0] if len(cond_rets) == 1 else None
        if r is None or not (isinstance(r, _TensorType) and r.shape in ((), None) and
                             getattr(r.element_type, "name", None) == "i1"):
            got = _c.types_str(cond_rets) if cond_rets else "no value"
            diag.error(op, "C1", f"expect condition block return a zero-ranked tensor of i1 but "
                                 f"got {got}")
            return
    _c.check_inferred(op, diag, "C3", types)


@verifier("stablehlo.optimization_barrier")
def _verify_optimization_barrier(op: Operation, diag: Any) -> None:
    """(C1) `type(operand...) = type(result...)`."""
    if not _c.signature(op, diag, [(_c.TENSOR_OR_TOKEN, "*")], [(_c.TENSOR_OR_TOKEN, "*")]):
        return
    _c.check_inferred(op, diag, "C1", [v.type for v in op.operands])


@verifier("stablehlo.tuple")
def _verify_tuple(op: Operation, diag: Any) -> None:
    """(C1) `result` has type `tuple<E0, ..., EN-1>` with `Ei = type(val[i])`."""
    if not _c.signature(op, diag, [(_VALUES, "*")], [_c.TC(tuple=True)]):
        return
    _c.check_inferred(op, diag, "C1", [_TupleType(tuple(v.type for v in op.operands))])


@verifier("stablehlo.get_tuple_element")
def _verify_get_tuple_element(op: Operation, diag: Any) -> None:
    """(C1) `0 <= index < size(operand)`; (C2) `type(result) = tuple_element_types(operand)
    [index]`."""
    if not _c.signature(op, diag, [_c.TC(tuple=True)], [_VALUES], attrs={"index": "int"}):
        return
    index = _c.int_attr(op, "index")
    t = op.operands[0].type
    if index < 0:
        diag.error(op, "C1", f"op attribute 'index' failed to satisfy constraint: 32-bit "
                             f"signless integer attribute whose value is non-negative (got "
                             f"{index})")
        return
    if index >= len(t.types):
        diag.error(op, "C1", f"index {index} is out of bounds of operand with size "
                             f"{len(t.types)}")
        return
    _c.check_inferred(op, diag, "C2", [t.types[index]])


_NAMESPACED = _re.compile(r"^[a-zA-Z0-9_$]+(\.[a-zA-Z0-9_$]+)+$")


@verifier("stablehlo.composite")
def _verify_composite(op: Operation, diag: Any) -> None:
    """`composite` (beyond the seed spec): a namespaced `name`, and a `decomposition` function
    whose signature matches the operands and results."""
    if not _c.signature(op, diag, [(_VALUES, "*")], [(_VALUES, "*")],
                        attrs={"name": "str", "decomposition": "symbol"},
                        optional_attrs={"version": "int", "composite_attributes": "any"},
                        regions=None):
        return
    name = _c.str_attr(op, "name")
    if not _NAMESPACED.match(name):
        diag.error(op, "C1", f"name must be a valid namespaced op name, i.e. it must match the "
                             f"following regular expression: {_NAMESPACED.pattern} (got "
                             f"'{name}')")
        return
    dec = op.attr("decomposition")
    fname = getattr(dec, "name", None) or getattr(dec, "value", None)
    func = _c.lookup_function(op, diag, fname)
    if func is None:
        diag.error(op, "C2", f"'{fname}' does not reference a valid function")
        return
    ft = _c.function_type_of(func)
    if ft is None:
        return
    ins, outs = [v.type for v in op.operands], op.result_types
    if len(ins) != len(ft.inputs):
        diag.error(op, "C3", f"has {len(ins)} operand(s), but decomposition has "
                             f"{len(ft.inputs)}")
        return
    for i, (a, b) in enumerate(zip(ins, ft.inputs)):
        if not _c.same_type(a, b):
            diag.error(op, "C4", f"operand at index {i} has type '{_c.type_str(a)}', but "
                                 f"decomposition has type '{_c.type_str(b)}'")
            return
    if len(outs) != len(ft.results):
        diag.error(op, "C5", f"has {len(outs)} result(s), but decomposition has "
                             f"{len(ft.results)}")
        return
    for i, (a, b) in enumerate(zip(outs, ft.results)):
        if not _c.same_type(a, b):
            diag.error(op, "C6", f"result at index {i} has type '{_c.type_str(a)}', but "
                                 f"decomposition has type '{_c.type_str(b)}'")
            return


_API_VERSIONS = {1: "API_VERSION_ORIGINAL", 2: "API_VERSION_STATUS_RETURNING",
                 3: "API_VERSION_STATUS_RETURNING_UNIFIED", 4: "API_VERSION_TYPED_FFI"}


def _tuple_part(t: Any, indices: Any) -> Any:
    for i in indices:
        if not isinstance(t, _TupleType) or not 0 <= i < len(t.types):
            return None
        t = t.types[i]
    return t


@verifier("stablehlo.custom_call")
def _verify_custom_call(op: Operation, diag: Any) -> None:
    """`custom_call`: layouts (one permutation per tensor operand/result, for both or
    neither), output/operand aliases within range and of matching types, a backend_config of the
    kind the api_version asks for. (`called_computations` may name functions defined
    elsewhere: upstream does not resolve them, neither does shlo.)"""
    if not _c.signature(op, diag, [(_c.VALUE, "*")], [(_c.VALUE, "*")],
                        attrs={"call_target_name": "str"},
                        optional_attrs={"has_side_effect": "bool"}, regions=None):
        return
    api = op.attr("api_version")
    version = getattr(api, "value", api)
    if isinstance(version, str):
        version = next((k for k, v in _API_VERSIONS.items() if v == version), version)
    cfg = op.attr("backend_config")
    if cfg is not None and isinstance(version, int):
        if version == 4 and not isinstance(cfg, _DictAttr):
            diag.error(op, "I4", "backend_config for api_version API_VERSION_TYPED_FFI must be a "
                                 "dictionary attribute")
            return
        if version != 4 and isinstance(cfg, _DictAttr):
            diag.error(op, "I4", f"backend_config for api_version "
                                 f"{_API_VERSIONS.get(version, version)} must be a string "
                                 f"attribute")
            return
    ol, rl = op.attr("operand_layouts"), op.attr("result_layouts")
    if (ol is None) != (rl is None):
        diag.error(op, "", "Layout attributes should be specified for either both operands and "
                           "results or none")
        return
    if ol is not None and rl is not None:
        results = op.result_types
        if len(results) == 1 and isinstance(results[0], _TupleType):
            results = list(results[0].types)  # a single tuple result: one layout per element
        for what, types, layouts in (("operand", op.operand_types, ol), ("result", results, rl)):
            layouts = list(layouts) if isinstance(layouts, (_ArrayAttr, tuple, list)) else None
            if layouts is None:
                continue
            if len(layouts) != len(types):
                diag.error(op, "", f"Number of {what}s must match the number of {what} layouts, "
                                   f"{len(types)} != {len(layouts)}")
                return
            for i, (t, lay) in enumerate(zip(types, layouts)):
                if isinstance(t, _TupleType):
                    diag.error(op, "", "Tuple types are not fully supported with layout "
                                       "constraints yet")
                    return
                perm = _c.ints_of(lay)
                if perm is None:
                    continue
                if not isinstance(t, _TensorType):
                    if perm:
                        diag.error(op, "", f"Only tensor types can have non-empty layout: {what} "
                                           f"#{i} of type '{_c.type_str(t)}' has layout "
                                           f"{_c.dims_str(perm)}")
                        return
                    continue
                rank = len(t.shape) if t.shape is not None else None
                if rank is not None and sorted(perm) != list(range(rank)):
                    diag.error(op, "", f"incorrect layout {_c.dims_str(perm)} for type "
                                       f"'{_c.type_str(t)}', layout must be a permutation "
                                       f"of [0, {rank})")
                    return
    aliases = op.attr("output_operand_aliases")
    if isinstance(aliases, (_ArrayAttr, tuple, list)):
        results = op.result_types
        out_type = results[0] if len(results) == 1 else _TupleType(tuple(results))
        for a in aliases:
            if not isinstance(a, _StructAttr):
                continue
            idx = _c.struct_int(a, "operand_index", 0)
            if not 0 <= idx < len(op.operands):
                diag.error(op, "", f"expects operandIndex in the output_operand_alias attribute "
                                   f"to be in range [0, {len(op.operands)}); got: {idx}")
                return
            part = _tuple_part(op.operands[idx].type, _c.struct_ints(a, "operand_tuple_indices"))
            if part is None:
                diag.error(op, "", "operand_tuple_indices in the output_operand_alias attribute "
                                   "out of bounds")
                return
            out = _tuple_part(out_type, _c.struct_ints(a, "output_tuple_indices"))
            if out is None:
                diag.error(op, "", "output_tuple_indices in the output_operand_alias attribute "
                                   "out of bounds")
                return
            if not _c.same_type(part, out):
                diag.error(op, "", f"shapes mismatch in the output_operand_alias attribute: "
                                   f"operand part has type '{_c.type_str(part)}' and output "
                                   f"part has type '{_c.type_str(out)}'")
                return


# Async ops (beyond the seed spec; upstream's `async_start` wraps one op whose results become a
# `!stablehlo.future<...>`, `async_done` unwraps it).

from ..types import OpaqueType as _OpaqueType  # noqa: E402


def _future_text(types: list) -> str:
    return "!stablehlo.future<" + ", ".join(_c.type_str(t) for t in types) + ">"


def _same_text(a: str, b: str) -> bool:
    return a.replace(" ", "") == b.replace(" ", "")


@verifier("stablehlo.async_start")
def _verify_async_start(op: Operation, diag: Any) -> None:
    """`async_start`: one region holding exactly one op and a return, region arguments of the
    operands' types, a future of the types the region returns."""
    if len(op.regions) != 1:
        diag.error(op, "", f"requires one region, found {len(op.regions)}")
        return
    if len(op.results) != 1:
        diag.error(op, "", f"expects one result, found {len(op.results)}")
        return
    block = _c.region_block(op, 0)
    if block is None:
        return
    if len(block.operations) != 2:
        diag.error(op, "", "region must contain exactly one operation and a return")
        return
    args = [a.type for a in block.arguments]
    types = [v.type for v in op.operands]
    if len(args) != len(types):
        diag.error(op, "", f"has {len(types)} operands but its region takes {len(args)} "
                           f"arguments")
        return
    for i, (t, a) in enumerate(zip(types, args)):
        if not _c.same_type(t, a):
            diag.error(op, "", f"operand type '{_c.type_str(t)}' at index {i} must match region"
                               f" argument type '{_c.type_str(a)}'")
            return
    rets = _c.region_return_types(op, 0)
    res = op.results[0].type
    if rets is not None and isinstance(res, _OpaqueType) and \
            res.text.startswith("!stablehlo.future<") and \
            not _same_text(_future_text(rets), res.text):
        diag.error(op, "", f"inferred type(s) '{_future_text(rets)}' are incompatible with "
                           f"return type(s) of operation '{res.text}'")


@verifier("stablehlo.async_done")
def _verify_async_done(op: Operation, diag: Any) -> None:
    """`async_done`: a future operand whose types are the results'."""
    if len(op.operands) != 1:
        diag.error(op, "", f"expects one operand, found {len(op.operands)}")
        return
    t = op.operands[0].type
    if not (isinstance(t, _OpaqueType) and t.text.startswith("!stablehlo.future<")):
        diag.error(op, "", f"operand #0 must be future, but got '{_c.type_str(t)}'")
        return
    if not _same_text(_future_text(op.result_types), t.text):
        diag.error(op, "", f"inferred type(s) {_c.types_str(op.result_types)} are incompatible "
                           f"with the future's '{t.text}'")
