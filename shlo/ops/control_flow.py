"""Control flow and values of several parts: while, if, case, optimization_barrier, tuple,
get_tuple_element, composite (spec sections of the same names), and upstream's async_start /
async_done (verified, not run).

Control-flow ops are QUANTIZED_AWARE: they run their regions on whatever values they get
(storage values of quantized tensors), the quantized semantics being in the ops inside.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Sequence

from ..attributes import StringAttr, int_attr, str_attr
from ..errors import Diagnostics
from ..ir import Operation
from ..registry import QUANTIZED_AWARE, QUANTIZED_STORAGE, TERMINATOR, Kernel, define
from ..registry import inference, kernel, verifier
from ..syntax.directives import ATTRDICT, OPERAND, OPERANDS, Format, attr, declarative, p_
from ..syntax.directives import parse_attrdict, parse_attrdict_kw, types, types_functional
from ..syntax.directives import types_pairwise
from ..syntax.lexer import PUNCT
from ..types import OpaqueType, TensorType, TupleType, Type
from . import _constraints as _c

if TYPE_CHECKING:  # pragma: no cover
    from ..interpreter.evaluator import PrepareContext
    from ..syntax.parser import Parser
    from ..syntax.printer import Printer

_CONTROL = {QUANTIZED_AWARE, QUANTIZED_STORAGE}
_VALUES = _c.TC(_c.F | _c.B | _c.I | _c.C | _c.Q | _c.QA, token=True, tuple=True)
# while's operands and results, tuple's operands, get_tuple_element's result may be buffers
# (memrefs) too; while's are never tuples (upstream's HLO_TensorOr...TokenOrBuffer).
_BUFFERS = _c.TC(_c.F | _c.B | _c.I | _c.C | _c.Q | _c.QA, token=True, tuple=True, buffer=True)
_WHILE_VALUES = _c.TC(_c.F | _c.B | _c.I | _c.C | _c.Q | _c.QA, token=True, buffer=True)


def _differ(a: Sequence[Type], b: Sequence[Type]) -> bool:
    return len(a) != len(b) or any(not _c.compatible(x, y) for x, y in zip(a, b))



# --- return (spec "return"): the terminator of every op region --------------------------------

define("stablehlo.return", spec="return", traits={TERMINATOR, QUANTIZED_STORAGE}, inherent="",
       syntax=declarative(OPERANDS, ATTRDICT, types("return")),
       summary="end a region of an op, giving its results")

# --- trace: a deprecated op upstream still parses (a debug tag on a value) ----------------------

define("stablehlo.trace", summary="deprecated: tag a value for debugging",
       syntax=declarative(OPERAND, p_(","), attr("tag", "str"), ATTRDICT,
                          types("operand_types")))


# --- while (spec "while") -------------------------------------------------------------------


def _parse_while(p: Parser, name: str, nres: int, start: int) -> Operation:
    """`stablehlo.while(%it = %init, ...) : types attributes {...} cond {...} do {...}`."""
    iter_names, operands = p.assignment_list()
    types_: list[Type] = []
    if operands:
        p.expect(":")
        off = p.start
        types_ = p.type_list()
        p.check_types(operands, types_, off)
    props: dict[str, Any] = {}
    attrs: dict[str, Any] = {}
    parse_attrdict_kw(p, name, props, attrs)
    p.keyword("cond")
    args = list(zip(iter_names, types_))
    cond = p.parse_region(args)
    p.keyword("do")
    body = p.parse_region(args)
    return Operation(name, operands, types_, props, attrs, [cond, body])


def _print_while(pr: Printer, op: Operation) -> str | None:
    if len(op.regions) != 2 or any(len(r.blocks) != 1 for r in op.regions):
        return None
    cond, body = op.regions
    cargs, bargs = cond.blocks[0].arguments, body.blocks[0].arguments
    ots = op.operand_types
    if [a.type for a in cargs] != ots or [a.type for a in bargs] != ots \
            or op.result_types != ots:
        return None
    if any(pr.val(a) != pr.val(b) for a, b in zip(cargs, bargs)):
        return None
    pairs = ", ".join(f"{pr.val(a)} = {pr.val(v)}" for a, v in zip(bargs, op.operands))
    s = f"({pairs})"
    if ots:
        s += " : " + ", ".join(pr.type(t) for t in ots)
    d = pr.attr_dict(op, set())
    if d:
        s += " attributes" + d
    ind = pr.indent_str()
    s += f"\n{ind}cond " + pr.region(cond, False) + " do " + pr.region(body, False)
    return s


define("stablehlo.while", spec="while", traits=_CONTROL, inherent="",
       summary="run `body` while `cond` returns true",
       syntax=Format(_parse_while, _print_while, frozenset()))


@kernel("stablehlo.while")
def while_(op: Operation, ctx: PrepareContext) -> Kernel:
    """Run `body` while `cond` returns true. The prepared block holding the op emits the loop
    in place (``inline``: a Python `while` over local variables); this kernel runs it when it
    cannot (observed runs)."""
    cond_cb, body_cb = ctx.region(op.regions[0]), ctx.region(op.regions[1])

    def run(*args: Any) -> Sequence[Any]:
        cond, body = cond_cb.run, body_cb.run
        while cond(*args)[0]:
            args = body(*args)
        return args

    run.inline = ("while", cond_cb, body_cb)  # type: ignore[attr-defined]
    return run


@inference("stablehlo.while")
def _infer_while(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """(C3) `type(results...) = type(operand...)`."""
    return [v.type for v in op.operands]


@verifier("stablehlo.while")
def _verify_while(op: Operation, diag: Diagnostics) -> None:
    """(C1) `cond` has type `(T0, ..., TN-1) -> tensor<i1>`; (C2) `body` has type `(T0, ...,
    TN-1) -> (T0, ..., TN-1)`; (C3) `type(results...) = type(operand...)`."""
    if not _c.signature(op, diag, [(_WHILE_VALUES, "*")], [(_WHILE_VALUES, "*")], regions=2):
        return
    types_ = [v.type for v in op.operands]
    cond_args = _c.region_arg_types(op, 0)
    if cond_args is not None and _differ(types_, cond_args):
        diag.error(op, "C1", f"expect operands to be compatible with condition block arguments "
                             f"but got {_c.types_str(types_)} vs {_c.types_str(cond_args)}")
        return
    body_args = _c.region_arg_types(op, 1)
    if body_args is not None and _differ(types_, body_args):
        diag.error(op, "C2", f"expect operands to be compatible with body block arguments but "
                             f"got {_c.types_str(types_)} vs {_c.types_str(body_args)}")
        return
    body_rets = _c.region_return_types(op, 1)
    if body_rets is not None and _differ(types_, body_rets):
        diag.error(op, "C2", f"expect operands to be compatible with body block return types "
                             f"but got {_c.types_str(types_)} vs {_c.types_str(body_rets)}")
        return
    cond_rets = _c.region_return_types(op, 0)
    if cond_rets is not None and len(cond_rets) != 1:
        diag.error(op, "C1", f"expect condition body returns a single value but got "
                             f"{len(cond_rets)}")
        return
    if cond_rets is not None:
        r = cond_rets[0] if len(cond_rets) == 1 else None
        if r is None or not (isinstance(r, TensorType) and r.shape in ((), None) and
                             getattr(r.element_type, "name", None) == "i1"):
            got = _c.types_str(cond_rets) if cond_rets else "no value"
            diag.error(op, "C1", f"expect condition block return a zero-ranked tensor of i1 but "
                                 f"got {got}")
            return
    _c.check_inferred(op, diag, "C3", _infer_while(op, diag) or [])


# --- if, case (spec "if", "case") -----------------------------------------------------------

define("stablehlo.if", spec="if", traits=_CONTROL, inherent="",
       summary="run `true_branch` when `pred` is true, else `false_branch`")
define("stablehlo.case", spec="case", traits=_CONTROL, inherent="",
       summary="run branch `index` (the last one when out of range)")


@kernel("stablehlo.if")
def if_(op: Operation, ctx: PrepareContext) -> Kernel:
    """Run `true_branch` when `pred` is true, else `false_branch` (emitted in place by the
    enclosing block when it can, as `while`)."""
    true_cb, false_cb = ctx.region(op.regions[0]), ctx.region(op.regions[1])

    def run(pred: Any) -> Sequence[Any]:
        return true_cb.run() if pred else false_cb.run()

    run.inline = ("if", true_cb, false_cb)  # type: ignore[attr-defined]
    return run


@kernel("stablehlo.case")
def case(op: Operation, ctx: PrepareContext) -> Kernel:
    """Run branch `index`; an out-of-range index selects the last branch (emitted in place by
    the enclosing block when it can, as `while`)."""
    branches = [ctx.region(r) for r in op.regions]
    last = len(branches) - 1

    def run(index: Any) -> Sequence[Any]:
        i = int(index)
        return branches[i if 0 <= i < last else last].run()

    run.inline = ("case", *branches)  # type: ignore[attr-defined]
    return run


@inference("stablehlo.if", "stablehlo.case")
def _infer_branches(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """if (C1, C2) / case (C2, C3): the branches take no arguments and return the same types,
    the types of the results (if C3, case C4)."""
    first = None
    is_if = op.name == "stablehlo.if"
    for i in range(len(op.regions)):
        args = _c.region_arg_types(op, i) or []
        if args:
            diag.error(op, "C1" if is_if else "C2",
                       f"branch {i} must have 0 arguments, but found {len(args)}")
            return None
        rets = _c.region_return_types(op, i)
        if rets is None:
            return None
        if first is None:
            first = rets
        elif _differ(first, rets):
            diag.error(op, "C2" if is_if else "C3",
                       f"branch 0 and branch {i} have mismatched return types: "
                       f"{_c.types_str(first)} vs {_c.types_str(rets)}")
            return None
    return first


def _scalar_selector(op: Operation, diag: Diagnostics) -> bool:
    """`pred` / `index` is a 0-dimensional tensor."""
    t = op.operands[0].type
    if t.shape not in ((), None):
        diag.error(op, "I1", f"operand should be rank 0 tensor but got rank {len(t.shape)}")
        return False
    return True


@verifier("stablehlo.if")
def _verify_if(op: Operation, diag: Diagnostics) -> None:
    """(C1) the branches take no arguments; (C2) they return the same types; (C3) the results
    have those types. `pred` is a 0-dimensional tensor of i1."""
    if not _c.signature(op, diag, [_c.PRED_TENSOR], [(_VALUES, "*")], regions=2):
        return
    if not _scalar_selector(op, diag):
        return
    rets = _infer_branches(op, diag)
    if rets is not None:
        _c.check_inferred(op, diag, "C3", rets)


_SI32 = _c.TC(only=frozenset({"i32", "si32"}), description="ranked tensor of 32-bit signless "
                                                            "integer values")


@verifier("stablehlo.case")
def _verify_case(op: Operation, diag: Diagnostics) -> None:
    """(C1) at least one branch; (C2) the branches take no arguments; (C3) they return the same
    types; (C4) the results have those types. `index` is a 0-dimensional tensor of si32."""
    if not _c.signature(op, diag, [_SI32], [(_VALUES, "*")], regions=None):
        return
    if not op.regions:
        diag.error(op, "C1", "expect at least one branch")
        return
    if not _scalar_selector(op, diag):
        return
    rets = _infer_branches(op, diag)
    if rets is not None:
        _c.check_inferred(op, diag, "C4", rets)


# --- optimization_barrier (spec "optimization_barrier") -------------------------------------


def _parse_optimization_barrier(p: Parser, name: str, nres: int, start: int) -> Operation:
    """`stablehlo.optimization_barrier %a, %b : T0, T1` (or `()` without operands)."""
    props: dict[str, Any] = {}
    attrs: dict[str, Any] = {}
    parse_attrdict(p, name, props, attrs)
    if p.v == "(" and p.k == PUNCT:
        p._advance()
        p.expect(")")
        return Operation(name, [], [], props, attrs)
    operands = p.operand_list()
    if not operands:
        p.error("expected operands or '()'")
    p.expect(":")
    res = types_pairwise(p, operands)
    return Operation(name, operands, res, props, attrs)


def _print_optimization_barrier(pr: Printer, op: Operation) -> str | None:
    if op.regions or op.operand_types != op.result_types:
        return None
    d = pr.attr_dict(op, set())
    if not op.operands:
        return f"{d}()"
    return (f"{d} {', '.join(pr.val(v) for v in op.operands)} : "
            f"{', '.join(pr.type(t) for t in op.operand_types)}")


define("stablehlo.optimization_barrier", spec="optimization_barrier", traits=_CONTROL,
       inherent="", summary="the identity, a barrier to optimizations moving ops across it",
       syntax=Format(_parse_optimization_barrier, _print_optimization_barrier, frozenset()))


@kernel("stablehlo.optimization_barrier")
def optimization_barrier(op: Operation, ctx: PrepareContext) -> Kernel:
    """The identity on its operands."""
    return lambda *args: args


@inference("stablehlo.optimization_barrier")
def _infer_optimization_barrier(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """(C1) `type(operand...) = type(result...)`."""
    return [v.type for v in op.operands]


@verifier("stablehlo.optimization_barrier")
def _verify_optimization_barrier(op: Operation, diag: Diagnostics) -> None:
    """(C1) `type(operand...) = type(result...)`."""
    if not _c.signature(op, diag, [(_c.TENSOR_OR_TOKEN, "*")], [(_c.TENSOR_OR_TOKEN, "*")]):
        return
    _c.check_inferred(op, diag, "C1", _infer_optimization_barrier(op, diag) or [])


# --- tuple, get_tuple_element (spec "tuple", "get_tuple_element") ---------------------------

define("stablehlo.tuple", spec="tuple", traits=_CONTROL, inherent="",
       summary="pack the operands into a tuple",
       syntax=declarative(OPERANDS, ATTRDICT, types("tuple")))
define("stablehlo.get_tuple_element", spec="get_tuple_element", traits=_CONTROL,
       summary="element `index` of a tuple",
       syntax=declarative(OPERAND, p_("["), attr("index", "i32"), p_("]"), ATTRDICT,
                          types("functional")))


@kernel("stablehlo.tuple")
def tuple_(op: Operation, ctx: PrepareContext) -> Kernel:
    """Pack the operands into a tuple value."""
    return lambda *args: (tuple(args),)


@inference("stablehlo.tuple")
def _infer_tuple(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """(C1) `tuple<E0, ..., EN-1>` with `Ei = type(val[i])`."""
    return [TupleType(tuple(v.type for v in op.operands))]


@verifier("stablehlo.tuple")
def _verify_tuple(op: Operation, diag: Diagnostics) -> None:
    """(C1) `result` has type `tuple<E0, ..., EN-1>` with `Ei = type(val[i])`."""
    if not _c.signature(op, diag, [(_BUFFERS, "*")], [_c.TC(tuple=True, buffer=True)]):
        return
    _c.check_inferred(op, diag, "C1", _infer_tuple(op, diag) or [])


@kernel("stablehlo.get_tuple_element")
def get_tuple_element(op: Operation, ctx: PrepareContext) -> Kernel:
    """Element `index` of a tuple."""
    i = int_attr(op, "index")
    return lambda t: (t[i],)


@inference("stablehlo.get_tuple_element")
def _infer_get_tuple_element(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """(C1) `0 <= index < size(operand)`; (C2) `tuple_element_types(operand)[index]`."""
    index = int_attr(op, "index", None)
    t = op.operands[0].type
    if index is None or not isinstance(t, TupleType):
        return None
    if index < 0:
        diag.error(op, "C1", f"op attribute 'index' failed to satisfy constraint: 32-bit "
                             f"signless integer attribute whose value is non-negative (got "
                             f"{index})")
        return None
    if index >= len(t.types):
        diag.error(op, "C1", f"index {index} is out of bounds of operand with size "
                             f"{len(t.types)}")
        return None
    return [t.types[index]]


@verifier("stablehlo.get_tuple_element")
def _verify_get_tuple_element(op: Operation, diag: Diagnostics) -> None:
    """(C1) `0 <= index < size(operand)`; (C2) `type(result) = tuple_element_types(operand)
    [index]`."""
    if not _c.signature(op, diag, [_c.TC(tuple=True, buffer=True)], [_BUFFERS],
                        attrs={"index": "int"}):
        return
    inferred = _infer_get_tuple_element(op, diag)
    if inferred is not None:
        _c.check_inferred(op, diag, "C2", inferred)


# --- composite (beyond the seed spec) -------------------------------------------------------


def _parse_composite(p: Parser, name: str, nres: int, start: int) -> Operation:
    """`stablehlo.composite "name" %a, %b {decomposition = @f, ...} : (T) -> R`."""
    props: dict[str, Any] = {"name": StringAttr(p.string())}
    operands = p.operand_list()
    attrs: dict[str, Any] = {}
    parse_attrdict(p, name, props, attrs)
    p.expect(":")
    res = types_functional(p, operands)
    return Operation(name, operands, res, props, attrs)


def _print_composite(pr: Printer, op: Operation) -> str | None:
    n = op.attr("name")
    if type(n) is not StringAttr or op.regions:
        return None
    ops = ", ".join(pr.val(v) for v in op.operands)
    d = pr.attr_dict(op, {"name"})
    return (f" {pr.attr(n)} {ops}{d} : "
            f"{pr.functional(op.operand_types, op.result_types)}")


define("stablehlo.composite", spec="composite", traits=_CONTROL,
       summary="an op made of others: runs its `decomposition` function",
       inherent="name composite_attributes decomposition version",
       syntax=Format(_parse_composite, _print_composite, frozenset({"name"})))


@kernel("stablehlo.composite")
def composite(op: Operation, ctx: PrepareContext) -> Kernel:
    """Run the `decomposition` function."""
    decomposition = op.attr("decomposition")
    fn = ctx.function(decomposition.name)
    return lambda *args: fn.run(*args)


_NAMESPACED = re.compile(r"^[a-zA-Z][a-zA-Z0-9_]*([.][a-zA-Z0-9_$]+)+$")  # (upstream's)


@verifier("stablehlo.composite")
def _verify_composite(op: Operation, diag: Diagnostics) -> None:
    """A namespaced `name`, and a `decomposition` function whose signature matches the operands
    and results."""
    if not _c.signature(op, diag, [(_VALUES, "*")], [(_VALUES, "*")],
                        attrs={"name": "str", "decomposition": "symbol"},
                        optional_attrs={"version": "int", "composite_attributes": "any"},
                        regions=None):
        return
    name = str_attr(op, "name", "")
    if not _NAMESPACED.match(name):
        diag.error(op, "C1", f"name must be a valid namespaced op name, i.e. it must match the "
                             f"following regular expression: {_NAMESPACED.pattern} e.g. "
                             f"\"my_namespace.my_op\" (got '{name}')")
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


# --- async_start, async_done (upstream, beyond the seed spec; verified, not run) ------------
# `async_start` wraps one op whose results become a `!stablehlo.future<...>`, `async_done`
# unwraps it.

define("stablehlo.async_start", summary="start an op asynchronously (a future of its results)")
define("stablehlo.async_done", summary="wait for a future, giving its values")


def _future_text(types_: list[Type]) -> str:
    return "!stablehlo.future<" + ", ".join(_c.type_str(t) for t in types_) + ">"


def _same_text(a: str, b: str) -> bool:
    return a.replace(" ", "") == b.replace(" ", "")


# The ops async_start may wrap (upstream's AsyncStartOp::inferReturnTypes).
_ASYNC_OPS = frozenset("stablehlo." + n for n in (
    "all_gather", "all_reduce", "all_to_all", "collective_broadcast", "collective_permute",
    "collective_reduce", "dynamic_slice", "dynamic_update_slice", "reduce_scatter", "slice"))


@verifier("stablehlo.async_start")
def _verify_async_start(op: Operation, diag: Diagnostics) -> None:
    """One region holding exactly one op (a collective or a slice) and a return of one value,
    region arguments of the operands' types, a future of the type the region returns."""
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
    if block.operations[0].name not in _ASYNC_OPS:
        diag.error(op, "", "region must contain a collective or slice operation")
        return
    args = [a.type for a in block.arguments]
    types_ = [v.type for v in op.operands]
    if len(args) != len(types_):
        diag.error(op, "", f"number of operands ({len(types_)}) must match number of region "
                           f"arguments ({len(args)})")
        return
    for i, (t, a) in enumerate(zip(types_, args)):
        if not _c.same_type(t, a):
            diag.error(op, "", f"operand type '{_c.type_str(t)}' at index {i} must match region"
                               f" argument type '{_c.type_str(a)}'")
            return
    rets = _c.region_return_types(op, 0)
    if rets is not None and len(rets) != 1:
        diag.error(op, "", f"region must return exactly one value, but got {len(rets)}")
        return
    res = op.results[0].type
    if rets is not None and isinstance(res, OpaqueType) and \
            res.text.startswith("!stablehlo.future<") and \
            not _same_text(_future_text(rets), res.text):
        diag.error(op, "", f"inferred type(s) '{_future_text(rets)}' are incompatible with "
                           f"return type(s) of operation '{res.text}'")


@verifier("stablehlo.async_done")
def _verify_async_done(op: Operation, diag: Diagnostics) -> None:
    """A future operand whose types are the results'."""
    if len(op.operands) != 1:
        diag.error(op, "", f"expects one operand, found {len(op.operands)}")
        return
    t = op.operands[0].type
    if not (isinstance(t, OpaqueType) and t.text.startswith("!stablehlo.future<")):
        diag.error(op, "", f"operand #0 must be future, but got '{_c.type_str(t)}'")
        return
    if not _same_text(_future_text(op.result_types), t.text):
        inner = t.text[len("!stablehlo.future<"):-1]
        diag.error(op, "", f"inferred type(s) '{inner}' are incompatible with return type(s) of "
                           f"operation {_c.types_str(op.result_types)}")
