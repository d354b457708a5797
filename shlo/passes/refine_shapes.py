"""stablehlo-refine-shapes: propagate static shapes through a StableHLO program (upstream's
StablehloRefineShapes.cpp).

The target function (the module's only one, or `main`) is refined with upstream's patterns
(:mod:`._refine_patterns`) on the greedy driver (top-down, at most 2 iterations).

`func.call` is refined interprocedurally (here): the callee is specialized to the call site
(RefinementKey: leading token operands, then scalar integer constants, "global constants",
which are substituted into the callee and dropped from the signature, then the functional
arguments, whose types become the callee's), refined recursively, and a callee returning only
integer constants without side effects is replaced by them. Each function may be refined for
one key only and not recursively (errors as upstream's).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..attributes import ArrayAttr, DenseElementsAttr
from ..ir import Module, Operation
from ..ops._constraints import constant_ints
from ..types import IndexType, IntegerType, TensorType, TokenType, Type
from ..verifier import collect
from . import register_pass
from ._driver import GreedyConfig, apply_patterns, copy_module
from ._patterns import Pattern, PatternRewriter, constant_of, has_effects
from ._refine import (
    Errors, erase_arguments, function_type_of, refine_arguments, refine_return_types,
    replace_uses_in, target_function,
)
from ._refine_patterns import shape_folder_patterns, shape_refinement_patterns

__all__ = ["refine_shapes", "refine_entry_function", "RefinementKey"]


# --- interprocedural refinement -------------------------------------------------------------------


@dataclass(frozen=True)
class RefinementKey:
    """A function specialized to a call site: leading tokens, global constants, the types of
    the functional arguments."""

    func: Operation
    tokens: int
    constants: tuple[int, ...]
    types: tuple[Type, ...]

    @property
    def name(self) -> str:
        return str(getattr(self.func.attr("sym_name"), "value", "?"))

    def non_constant_types(self) -> tuple[Type, ...]:
        return (TokenType(),) * self.tokens + self.types

    def __str__(self) -> str:
        return (f"RefinementKey({self.name}, toks={self.tokens}, dim_args=["
                f"{', '.join(map(str, self.constants))}], fn_args=["
                f"{', '.join(map(str, self.types))}])")


@dataclass
class _State:
    """RefineShapeState: the functions refined (with their keys), the ones being refined, which
    functions are free of side effects (computed before refining), the diagnostics."""

    functions: dict[str, Operation]
    errors: Errors
    keys: dict[int, RefinementKey] = field(default_factory=dict)
    stack: list[str] = field(default_factory=list)
    effect_free: dict[str, bool] = field(default_factory=dict)

    def compute_effects(self) -> None:
        for name in self.functions:
            self._effect_free(name)

    def _effect_free(self, name: str) -> bool:
        if name in self.effect_free:
            return self.effect_free[name]
        self.effect_free[name] = False  # while visiting (recursion: may have effects)
        func = self.functions.get(name)
        ok = func is not None and bool(func.regions and func.regions[0].blocks) and all(
            self._op_effect_free(o) for b in func.regions[0].blocks for o in b.operations)
        self.effect_free[name] = ok
        return ok

    def _op_effect_free(self, op: Operation) -> bool:
        if op.name == "func.call":
            return self._effect_free(str(getattr(op.attr("callee"), "root", "")))
        if op.name in ("func.return", "func.constant"):
            return True
        if op.regions and op.dialect in ("stablehlo", "chlo"):
            if op.name in ("stablehlo.custom_call", "stablehlo.composite"):
                return not has_effects(op)
            shallow = Operation(op.name, [], [], op.properties, op.attributes, [])
            return not has_effects(shallow) and all(
                self._op_effect_free(o) for r in op.regions for b in r.blocks
                for o in b.operations)
        return not has_effects(op)


def _key_from_call(call: Operation, state: _State) -> RefinementKey | None:
    operands = call.operands
    tokens = 0
    while tokens < len(operands) and isinstance(operands[tokens].type, TokenType):
        tokens += 1
    constants: list[int] = []
    for v in operands[tokens:]:
        t = v.type
        if not (isinstance(t, TensorType) and t.shape == () and
                isinstance(t.element_type, IntegerType)):
            break
        c = constant_ints(v)
        if c is None:
            break
        constants.append(c[0])
    types = tuple(v.type for v in operands[tokens + len(constants):])
    callee = state.functions.get(str(getattr(call.attr("callee"), "root", "")))
    if callee is None:
        state.errors.op_error(call, "cannot resolve function call")
        return None
    return RefinementKey(callee, tokens, tuple(constants), types)


_ALREADY, _NEW = "already", "new"


def _validate(state: _State, key: RefinementKey) -> str | None:
    prev = state.keys.get(id(key.func))
    if prev is None:
        return _NEW
    if (key.constants and prev.constants != key.constants) or \
            key.non_constant_types() != prev.non_constant_types():
        state.errors.op_error(key.func, f"refined with incompatible refinement keys:\n  "
                                        f"curr={key}\n  prev={prev}")
        return None
    if key.name in state.stack:
        state.errors.op_error(key.func, f"Function {key.name} is being refined recursively\n")
        return None
    return _ALREADY


def refine_function(state: _State, key: RefinementKey) -> bool:
    """Specialize ``key.func`` to ``key`` and refine its body (upstream's refineFunction)."""
    status = _validate(state, key)
    if status is None:
        return False
    if status == _ALREADY:
        return True
    func = key.func
    state.stack.append(key.name)
    state.keys[id(func)] = key
    try:
        if not func.regions or len(func.regions[0].blocks) != 1:
            state.errors.op_error(func, "must have exactly one block")
            return False
        block = func.regions[0].blocks[0]
        for i, value in enumerate(key.constants):
            arg = block.arguments[key.tokens + i]
            t = arg.type
            if not isinstance(t, TensorType):
                state.errors.op_error(func, "expected global constant argument to be shaped")
                return False
            attr = DenseElementsAttr(t, np.asarray(value, dtype=t.element_type.dtype))
            const = Operation("stablehlo.constant", [], [t], {"value": attr}, {}, [],
                              location=func.location)
            const.parent = block
            block.operations.insert(i, const)
            replace_uses_in(func, arg, const.results[0])
        erase_arguments(func, key.tokens, key.tokens + len(key.constants))
        err = refine_arguments(func, key.non_constant_types())
        if err is not None:
            state.errors.items.extend(err.diagnostics)
            return False
        _apply_refinement_patterns(func, state)
        return True
    finally:
        state.stack.pop()


def _refine_call(state: _State) -> Any:
    def refine_call(op: Operation, rw: PatternRewriter) -> bool:
        """Refine the callee for this call site; then constant results replace the call (or
        its used results, when the callee has effects), the global-constant operands are
        dropped and the result types follow the callee's (RefineCallOpPattern)."""
        key = _key_from_call(op, state)
        if key is None or not refine_function(state, key):
            return False
        callee = key.func
        ret = callee.regions[0].blocks[0].terminator
        consts: list[DenseElementsAttr | None] = []
        for v in (ret.operands if ret is not None else ()):
            c = constant_of(v)  # DenseIntElementsAttr: integers (i1 too) and index
            ok = c is not None and isinstance(c.type.element_type, (IntegerType, IndexType))
            consts.append(c if ok else None)
        if all(c is not None for c in consts) and state.effect_free.get(key.name, False):
            rw.replace_op(op, [rw.constant(c) for c in consts])  # type: ignore[arg-type]
            return True
        changed = False
        results = list(function_type_of(callee).results)
        if [r.type for r in op.results] != results:
            if not refine_return_types(rw, op, results):
                return False
            changed = True
        if key.constants:
            n_fn = len(key.types)
            keep = list(op.operands[:key.tokens]) + list(op.operands[len(op.operands) - n_fn:])
            dropped = op.operands[key.tokens:len(op.operands) - n_fn]
            for where in (op.properties, op.attributes):
                aa = where.get("arg_attrs")
                if isinstance(aa, ArrayAttr):
                    vals = aa.values
                    where["arg_attrs"] = ArrayAttr(vals[:key.tokens] +
                                                   (vals[len(vals) - n_fn:] if n_fn else ()))
            rw.set_operands(op, keep)
            for v in dropped:  # now maybe dead: let the driver see them in this iteration
                d = rw.defining(v)
                if d is not None:
                    rw.modified(d)
            changed = True
        used = [(r, c) for r, c in zip(op.results, consts) if c is not None and
                not rw.use_empty(r)]
        if used:
            blk = op.parent
            assert blk is not None
            at = blk.operations.index(op) + 1
            for r, c in used:
                cv = rw.create("stablehlo.constant", [], [c.type], {"value": c}, block=blk,
                               index=at, location=op.location).results[0]
                at += 1
                rw.replace_all_uses(r, cv)
            return True
        if changed:
            return True
        return refine_return_types(rw, op, results)

    return refine_call


def _apply_refinement_patterns(func: Operation, state: _State) -> None:
    pats = shape_refinement_patterns(state.errors)
    pats.append(Pattern("func.call", _refine_call(state), 1, "refine_call"))
    pats += shape_folder_patterns()
    config = GreedyConfig(max_iterations=2, top_down=True)
    if not apply_patterns(func, pats, config):
        state.errors.error(func.location, "Failed to converge StablehloRefineShapes in "
                                          f"{config.max_iterations} iterations")


def refine_entry_function(module: Module, func: Operation, errors: Errors) -> bool:
    """refineEntryFunction: refine ``func`` (in place) with no tokens nor global constants."""
    functions = {str(getattr(f.attr("sym_name"), "value", "")): f
                 for f in module.body.operations if f.name == "func.func"}
    state = _State(functions, errors)
    state.compute_effects()
    block = func.regions[0].blocks[0]
    key = RefinementKey(func, 0, (), tuple(a.type for a in block.arguments))
    if not refine_function(state, key):
        errors.error(func.location, "Failed to refine entry function")
        return False
    return True


@register_pass("stablehlo-refine-shapes")
def refine_shapes(module: Module, options: dict[str, Any] | None = None) -> Module:
    """Refines shapes across a StableHLO program.

    Static argument shapes propagate through the target function (the only one or `main`) and
    the functions it calls; `shape_refinement_operand_wrapper` custom calls go away. As after
    any upstream pass, the result is verified: errors the pass reported and the verifier's are
    raised together."""
    out = copy_module(module)
    func = target_function(out)
    if func is None:
        return out
    errors = Errors()
    if not refine_entry_function(out, func, errors):
        raise errors.fail()
    errors.items.extend(collect(out))
    if errors.items:
        raise errors.fail()
    return out
