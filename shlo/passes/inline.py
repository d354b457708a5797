"""inline: MLIR's inliner (mlir/lib/Transforms/InlinerPass.cpp) on `func.call`.

A `func.call` of a function of the module that has a body of one block is replaced by that body:
the callee's arguments stand for the call's operands, its `func.return` operands for the call's
results, and each inlined op's location becomes `callsite(its location at the call's)`
(MLIR's ``remapInlinedLocations``). Calls inside the inlined body are inlined too (MLIR walks
the call graph bottom-up); calls of a self-recursive function, a call back into a function
being inlined, and a call marked `no_inline` stay calls. Then, as upstream:

* private functions (`sym_visibility = "private"`) no symbol refers to any more are erased;
* the `default-pipeline` (`canonicalize`) runs on the result (MLIR runs it on every callable).
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from ..attributes import ArrayAttr, DictAttr, StringAttr, SymbolRefAttr
from ..ir import CallSiteLoc, Module, Operation, Value
from . import Option, register_pass, run_passes
from ._rewrite import Rewriter

__all__ = ["inline", "inline_calls", "erase_dead_private_functions"]


def _callee(call: Operation, funcs: dict[str, Operation]) -> Operation | None:
    ref = call.attr("callee")
    if not isinstance(ref, SymbolRefAttr) or ref.nested:
        return None
    f = funcs.get(ref.root)
    if f is None or not f.regions or len(f.regions[0].blocks) != 1:
        return None  # a declaration, or a body of several blocks (no cf dialect in shlo)
    term = f.regions[0].blocks[0].terminator
    if term is None or term.name != "func.return":
        return None
    if any(o.name == "func.call" and isinstance(o.attr("callee"), SymbolRefAttr)
           and o.attr("callee").root == ref.root for o in f.walk()):
        return None  # MLIR's inliner leaves the calls of a self-recursive function
    return f


class _Inliner:
    def __init__(self, module: Module) -> None:
        self.funcs = module.functions
        self.stack: list[Operation] = []
        self.inlined = 0

    def __call__(self, rw: Rewriter, op: Operation) -> Sequence[Value] | None:
        if op.name != "func.call" or op.has_attr("no_inline"):
            return None
        f = _callee(op, self.funcs)
        if f is None or f in self.stack:
            return None
        block = f.regions[0].blocks[0]
        if len(block.arguments) != len(op.operands):
            return None
        assert rw.block is not None
        for a, v in zip(block.arguments, op.operands):
            rw.values[a] = rw.get(v)
        mark = len(rw.block.operations)
        call_loc = op.location
        self.stack.append(f)
        try:
            for inner in block.operations[:-1]:
                rw.rewrite(inner)
        finally:
            self.stack.pop()
        for new in rw.block.operations[mark:]:
            for o in new.walk():
                o.location = CallSiteLoc(o.location, call_loc)
        self.inlined += 1
        return [rw.get(v) for v in block.operations[-1].operands]


def inline_calls(module: Module) -> Module:
    """A copy of ``module`` with its calls inlined (not the dead functions erased)."""
    return Rewriter(_Inliner(module)).module(module)


def _symbol_refs(values: Iterable[Any], out: set[str]) -> None:
    stack = list(values)
    while stack:
        a = stack.pop()
        if isinstance(a, SymbolRefAttr):
            out.add(a.root)
        elif isinstance(a, ArrayAttr):
            stack.extend(a.values)
        elif isinstance(a, DictAttr):
            stack.extend(v for _, v in a.items)


def erase_dead_private_functions(module: Module) -> Module:
    """Erase, in place, the private functions no symbol reference reaches (until none is
    left)."""
    while True:
        used: set[str] = set()
        for op in module.walk():
            if op.name == "func.func" and op.parent is module.body:
                for inner in op.walk():
                    if inner is not op:
                        _symbol_refs([*inner.properties.values(), *inner.attributes.values()],
                                     used)
            elif op is not module.op:
                _symbol_refs([*op.properties.values(), *op.attributes.values()], used)
        dead = [op for op in module.body.operations if op.name == "func.func"
                and isinstance(op.attr("sym_visibility"), StringAttr)
                and op.attr("sym_visibility").value == "private"
                and op.attr("sym_name").value not in used]
        if not dead:
            return module
        module.body.operations = [op for op in module.body.operations if op not in dead]


@register_pass("inline", options=[
    Option("default-pipeline", str, "canonicalize",
           "the pipeline run on the callables after inlining (empty: none)"),
    Option("max-iterations", int, 4, "bound on the inlining iterations (accepted)"),
    Option("inlining-threshold", int, 4294967295,
           "bound on the callee/caller size ratio in percent (accepted: shlo inlines all)")])
def inline(module: Module, options: dict[str, Any]) -> Module:
    """Inline function calls (MLIR's inliner: calls replaced by the callee's body).

    Private functions left without uses are erased; the default pipeline (canonicalize)
    runs after."""
    out = erase_dead_private_functions(inline_calls(module))
    pipeline = str(options.get("default-pipeline", "canonicalize")).strip()
    return run_passes(out, pipeline) if pipeline else out
