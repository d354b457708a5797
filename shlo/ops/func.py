"""Program structure: func.func, func.call, func.return, builtin.module (spec "Programs"), the
bare `return`/`call` spellings of older files, and the func ops shlo knows but does not run
(func.call_indirect, func.constant).

A function body is a block ending in `func.return` (TERMINATOR, FUNCTION_RETURN); functions and
modules see no value defined outside them (ISOLATED). The structural checks (signatures,
returns, callees) are the verifier's (shlo/verifier.py): they need the symbol table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from ..attributes import ArrayAttr, DictAttr, StringAttr, SymbolRefAttr, TypeAttr
from ..ir import Block, Operation, Region
from ..registry import FUNCTION_RETURN, ISOLATED, QUANTIZED_AWARE, QUANTIZED_STORAGE
from ..registry import TERMINATOR, Kernel, define, kernel
from ..syntax.directives import Format, parse_attrdict, parse_attrdict_kw, types_functional
from ..syntax.lexer import AT, BARE, PUNCT, VALUE
from ..types import FunctionType, Type

if TYPE_CHECKING:  # pragma: no cover
    from ..interpreter.evaluator import PrepareContext
    from ..syntax.parser import Parser
    from ..syntax.printer import Printer

_RETURN = {TERMINATOR, FUNCTION_RETURN, QUANTIZED_STORAGE}
_CALL = {QUANTIZED_AWARE, QUANTIZED_STORAGE}
_VISIBILITIES = ("public", "private", "nested")
_NO_ATTRS = DictAttr(())  # (an argument's or result's empty attributes: one immutable object)


# --- func.func ------------------------------------------------------------------------------


def _parse_func(p: Parser, name: str, nres: int, start: int) -> Operation:
    """`func.func [visibility] @name(%a: T {attrs}, ...) -> (R {attrs}, ...) attributes {...}
    { body }` (a declaration has no body; its arguments may be unnamed types)."""
    props: dict[str, Any] = {}
    attrs: dict[str, Any] = {}
    if p.k == BARE and p.v in _VISIBILITIES:
        props["sym_visibility"] = StringAttr(p.v)
        p._advance()
    if p.k != AT:
        p.error("expected function name")
    props["sym_name"] = StringAttr(p.symbol_name())
    p.expect("(")
    arg_types: list[Type] = []
    arg_names: list[str] = []
    arg_attrs: list[DictAttr] = []
    named_args: bool | None = None
    if p.v != ")":
        while True:
            if p.k == VALUE:
                if named_args is False:
                    p.error("expected a type (unnamed argument list)")
                named_args = True
                arg_names.append(p.v[1:])
                p._advance()
                p.expect(":")
            else:
                if named_args:
                    p.error("expected SSA identifier")
                named_args = False
            arg_types.append(p.parse_type())
            arg_attrs.append(p.dict_attr() if p.v == "{" and p.k == PUNCT else _NO_ATTRS)
            p.optional_location()
            if not p.accept(","):
                break
    p.expect(")")
    res_types: list[Type] = []
    res_attrs: list[DictAttr] = []
    if p.accept("->"):
        if p.v == "(" and p.k == PUNCT:
            p._advance()
            if p.v != ")":
                while True:
                    res_types.append(p.parse_type())
                    res_attrs.append(p.dict_attr() if p.v == "{" and p.k == PUNCT
                                     else _NO_ATTRS)
                    if not p.accept(","):
                        break
            p.expect(")")
        else:
            res_types.append(p.parse_type())
            res_attrs.append(_NO_ATTRS)
    props["function_type"] = TypeAttr(FunctionType(tuple(arg_types), tuple(res_types)))
    if any(d.items for d in arg_attrs):
        props["arg_attrs"] = ArrayAttr(tuple(arg_attrs))
    if any(d.items for d in res_attrs):
        props["res_attrs"] = ArrayAttr(tuple(res_attrs))
    parse_attrdict_kw(p, name, props, attrs)
    regions: list[Region] = []
    if p.v == "{" and p.k == PUNCT:
        if named_args is False and arg_types:
            p.error("expected named arguments for a function with a body", found=False)
        p.default_dialect.append("func")
        regions.append(p.parse_region(list(zip(arg_names, arg_types))))
        p.default_dialect.pop()
    else:
        regions.append(Region())
    return Operation(name, [], [], props, attrs, regions)


def _print_func(pr: Printer, op: Operation) -> str | None:
    sym = op.attr("sym_name")
    ft = op.attr("function_type")
    if type(sym) is not StringAttr or type(ft) is not TypeAttr \
            or not isinstance(ft.type, FunctionType) or op.operands or op.results \
            or len(op.regions) != 1:
        return None
    fty = ft.type
    vis = op.attr("sym_visibility")
    if vis is not None and (type(vis) is not StringAttr or vis.value not in _VISIBILITIES):
        return None  # (the generic form: the pretty one reads only these words)
    aa = op.attr("arg_attrs")
    ra = op.attr("res_attrs")
    for a, n in ((aa, len(fty.inputs)), (ra, len(fty.results))):
        if a is not None and (type(a) is not ArrayAttr or len(a) != n
                              or not all(type(d) is DictAttr for d in a.values)):
            return None
    region = op.regions[0]
    body = region.blocks[0] if region.blocks else None
    if body is not None and [x.type for x in body.arguments] != list(fty.inputs):
        return None
    s = " " + (vis.value + " " if vis is not None else "") + pr.symbol(sym.value) + "("
    args = []
    for i, t in enumerate(fty.inputs):
        a = pr.val(body.arguments[i]) + ": " if body is not None else ""
        a += pr.type(t)
        if aa is not None and aa[i].items:
            a += " " + pr.attr(aa[i])
        args.append(a)
    s += ", ".join(args) + ")"
    if fty.results:
        rs = []
        for i, t in enumerate(fty.results):
            r = pr.type(t)
            if ra is not None and ra[i].items:
                r += " " + pr.attr(ra[i])
            rs.append(r)
        if len(rs) == 1 and (ra is None or not ra[0].items) and not isinstance(fty.results[0],
                                                                              FunctionType):
            s += " -> " + rs[0]
        else:
            s += " -> (" + ", ".join(rs) + ")"
    d = pr.attr_dict(op, {"sym_name", "function_type", "sym_visibility", "arg_attrs",
                          "res_attrs"})
    if d:
        s += " attributes" + d
    if body is not None:
        s += " " + pr.region(region, False)
    return s


define("func.func", traits={ISOLATED}, summary="a function: a symbol with a body",
       inherent="sym_name function_type sym_visibility arg_attrs res_attrs no_inline",
       syntax=Format(_parse_func, _print_func, frozenset()))


# --- func.call, call ------------------------------------------------------------------------


def _parse_call(p: Parser, name: str, nres: int, start: int) -> Operation:
    """`func.call @callee(%a, %b) {attrs} : (T0, T1) -> R`."""
    props: dict[str, Any] = {"callee": p.symbol_ref()}
    p.expect("(")
    operands = p.operand_list()
    p.expect(")")
    attrs: dict[str, Any] = {}
    parse_attrdict(p, name, props, attrs)
    p.expect(":")
    res = types_functional(p, operands)
    return Operation(name, operands, res, props, attrs)


def _print_call(pr: Printer, op: Operation) -> str | None:
    callee = op.attr("callee")
    if type(callee) is not SymbolRefAttr or op.regions:
        return None
    d = pr.attr_dict(op, {"callee"})
    return (f" {pr.attr(callee)}({', '.join(pr.val(v) for v in op.operands)}){d} : "
            f"{pr.functional(op.operand_types, op.result_types)}")


define("func.call", traits=_CALL, summary="call a function of the module",
       inherent="callee arg_attrs res_attrs no_inline",
       syntax=Format(_parse_call, _print_call, frozenset()))
define("call", traits=_CALL, summary="`func.call` as older files spell it")


@kernel("func.call", "call")
def call(op: Operation, ctx: PrepareContext) -> Kernel:
    """`func.call @callee(args)`: run the callee with the operands."""
    callee = op.attr("callee")
    name = callee.name if isinstance(callee, SymbolRefAttr) else str(callee)
    fn = ctx.function(name)  # may still be compiling (recursion): look up `run` when called

    def run(*args: Any) -> Sequence[Any]:
        return fn.run(*args)

    run.inline = ("call", fn)  # type: ignore[attr-defined]  # small callees are emitted in place
    return run


# --- func.return, return --------------------------------------------------------------------


def _parse_return(p: Parser, name: str, nres: int, start: int) -> Operation:
    """`func.return %a, %b : T0, T1` (or nothing)."""
    operands = p.operand_list()
    props: dict[str, Any] = {}
    attrs: dict[str, Any] = {}
    parse_attrdict(p, name, props, attrs)
    if operands:
        p.expect(":")
        off = p.start
        types_ = p.type_list()
        p.check_types(operands, types_, off)
    return Operation(name, operands, [], props, attrs)


def _print_return(pr: Printer, op: Operation) -> str | None:
    if op.results or op.regions:
        return None
    d = pr.attr_dict(op, set())
    if not op.operands:
        return d
    return (f" {', '.join(pr.val(v) for v in op.operands)}{d} : "
            f"{', '.join(pr.type(t) for t in op.operand_types)}")


define("func.return", traits=_RETURN, inherent="", summary="return values from a function",
       syntax=Format(_parse_return, _print_return, frozenset()))
define("return", traits=_RETURN, summary="`func.return` as older files spell it")


# --- builtin.module -------------------------------------------------------------------------


def _parse_module(p: Parser, name: str, nres: int, start: int) -> Operation:
    """`module [@name] attributes {...} { body }`."""
    props: dict[str, Any] = {}
    attrs: dict[str, Any] = {}
    if p.k == AT:
        props["sym_name"] = StringAttr(p.symbol_name())
    parse_attrdict_kw(p, name, props, attrs)
    p.default_dialect.append("builtin")
    region = p.parse_region()
    p.default_dialect.pop()
    if not region.blocks:
        region.append(Block())
    return Operation(name, [], [], props, attrs, [region])


def _print_module(pr: Printer, op: Operation) -> str | None:
    if len(op.regions) != 1 or len(op.regions[0].blocks) != 1 or op.operands or op.results:
        return None
    sym = op.attr("sym_name")
    s = ""
    if sym is not None:
        if type(sym) is not StringAttr:
            return None
        s += " " + pr.symbol(sym.value)
    d = pr.attr_dict(op, {"sym_name"})
    if d:
        s += " attributes" + d
    return s + " " + pr.region(op.regions[0], False)


define("builtin.module", traits={ISOLATED}, summary="a module: a symbol table of functions",
       inherent="sym_name sym_visibility",
       syntax=Format(_parse_module, _print_module, frozenset()))


# --- func ops shlo knows but does not run ----------------------------------------------------

define("func.call_indirect", summary="call a function value (known, not run)")
define("func.constant", summary="a function symbol as a value (known, not run)")
