"""The composite passes: stablehlo-wrap-in-composite (upstream's StablehloWrapInComposite.cpp)
and stablehlo-legalize-composite-to-call (StablehloLegalizeCompositeToCall.cpp).

*wrap-in-composite* turns every op named in `op-names` into a `stablehlo.composite` of the same
name whose decomposition is a new private function `@<op name>.impl` (`_0`, `_1`, ... when the
name is taken) holding a copy of the op; the composite's attributes are the op's attributes.
Upstream runs it on the greedy driver over the module with the `ExistingOps` strictness: ops are
visited last first (the last function's first), dead ops are erased and constants uniqued on the
way, and the functions it creates are not visited.

*legalize-composite-to-call* replaces each composite (but those named in `except`) with a
`func.call` of its decomposition.
"""

from __future__ import annotations

from typing import Any

from ..attributes import DictAttr, IntegerAttr, StringAttr, SymbolRefAttr, TypeAttr
from ..ir import Block, Module, Operation, Region
from ..types import FunctionType, element_type
from . import Option, register_pass
from ._driver import GreedyConfig, apply_patterns, copy_module
from ._patterns import Pattern, PatternRewriter
from ._rewrite import Rewriter


def _unique_name(module: Module, name: str) -> str:
    """``name``, or ``name_N`` for the first N that no symbol of the module has (MLIR's
    SymbolTable::insert)."""
    taken = {getattr(op.attr("sym_name"), "value", None) for op in module.body.operations}
    if name not in taken:
        return name
    n = 0
    while f"{name}_{n}" in taken:
        n += 1
    return f"{name}_{n}"


def build_impl_function(module: Module, op: Operation) -> str:
    """Append to ``module`` a private function `@<op name>.impl` computing a copy of ``op`` on
    its arguments; returns the function's name."""
    name = _unique_name(module, op.name + ".impl")
    block = Block([v.type for v in op.operands])
    copy = Rewriter(lambda rw, o: None).clone_structure(op)
    copy.operands = list(block.arguments)  # by position (an operand may appear twice)
    block.append(copy)
    block.append(Operation("func.return", list(copy.results), [], location=op.location))
    ftype = FunctionType(tuple(v.type for v in op.operands), tuple(r.type for r in op.results))
    func = Operation("func.func", [], [], {
        "sym_name": StringAttr(name), "function_type": TypeAttr(ftype),
        "sym_visibility": StringAttr("private")}, {}, [Region([block])], location=op.location)
    module.body.append(func)
    return name


def _wrap_pattern(module: Module, names: frozenset[str], version: int,
                  existing: set[int]) -> Pattern:
    def wrap(op: Operation, rw: PatternRewriter) -> bool:
        if op.name not in names or id(op) not in existing:
            return False
        decomposition = build_impl_function(module, op)
        attrs = dict(sorted({**op.properties, **op.attributes}.items()))
        props: dict[str, Any] = {"name": StringAttr(op.name)}
        if attrs:
            props["composite_attributes"] = DictAttr(tuple(attrs.items()))
        props["decomposition"] = SymbolRefAttr(decomposition, ())
        if version:
            props["version"] = IntegerAttr(version, element_type("i32"))
        new = rw.create("stablehlo.composite", list(op.operands), [r.type for r in op.results],
                        props)
        rw.replace_op(op, new.results)
        return True

    return Pattern(None, wrap, 1, "wrap_in_composite")


@register_pass("stablehlo-wrap-in-composite", options=[
    Option("op-names", list, [], "The names of the ops to wrap."),
    Option("version", int, 0, "The version number of the composite op.")])
def wrap_in_composite(module: Module, options: dict[str, Any]) -> Module:
    """Wraps a non-composite StableHLO op in a composite op.

    Every op named in op-names becomes a composite (same name, its attributes, `version`)
    decomposed by a new private function holding the op."""
    out = copy_module(module)
    names = frozenset(n.strip() for n in options.get("op-names") or [])
    existing = {id(o) for o in out.walk()}
    pat = _wrap_pattern(out, names, int(options.get("version", 0)), existing)
    funcs = [op for op in out.body.operations if op.name == "func.func"
             and op.regions and op.regions[0].blocks]
    for f in reversed(funcs):  # the module's ops, last first
        apply_patterns(f, [pat], GreedyConfig())
    return out


@register_pass("stablehlo-legalize-composite-to-call", options=[
    Option("except", list, [], "Names of composites that should not be replaced with calls.")])
def legalize_composite_to_call(module: Module, options: dict[str, Any]) -> Module:
    """Replaces composite ops with a call to their decomposition.

    Composites named in `except` stay."""
    excluded = frozenset(n.strip().strip("'\"") for n in options.get("except") or [])

    def pattern(rw: Rewriter, op: Operation):  # type: ignore[no-untyped-def]
        if op.name != "stablehlo.composite" or op.attr("name").value in excluded:
            return None
        call = rw.emit("func.call", [rw.get(v) for v in op.operands],
                       [r.type for r in op.results], {"callee": op.attr("decomposition")})
        return list(call.results)

    return Rewriter(pattern).module(module)
