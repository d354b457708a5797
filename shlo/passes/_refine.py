"""What `stablehlo-refine-shapes` and `stablehlo-refine-arguments` share (upstream's
StablehloRefineShapes.h): refining the types of values and op results in place (with the
pattern rewriter, so that the greedy driver revisits the users), choosing the function to
refine, and refining a function's arguments behind
`stablehlo.shape_refinement_operand_wrapper` custom calls.

Types follow upstream's rules: a refinement is merged into the current type with
:func:`most_specific_type` (``hlo::inferMostSpecificType``), and only StableHLO/CHLO ops,
`func.return` and `func.call` may see an operand type change.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..attributes import ArrayAttr, DenseElementsAttr, StringAttr, TypeAttr
from ..errors import Diagnostic
from ..ir import Location, Module, Operation, Value
from ..types import ElementType, FunctionType, TensorType, TupleType, Type, element_type
from ._patterns import PatternRewriter
from ._rewrite import PassError

__all__ = ["OPERAND_WRAPPER", "Refinement", "Errors", "most_specific_type", "compatible",
           "refine_values", "refine_return_types", "refine_return_components",
           "refine_return_shape", "target_function", "refine_arguments", "set_function_type",
           "erase_arguments", "replace_uses_in"]

OPERAND_WRAPPER = "stablehlo.shape_refinement_operand_wrapper"
"""The custom call that keeps a refined argument's uses typed as before (kCustomCallOperandBarrierTarget)."""

_I64 = element_type("i64")
_DYNAMIC = np.iinfo(np.int64).min
"""MLIR's ShapedType::kDynamic, which a partially refined argument's shape constant holds."""


@dataclass
class Errors:
    """The diagnostics a pass emits without failing (MLIR's emitError/emitOpError)."""

    items: list[Diagnostic] = field(default_factory=list)

    def op_error(self, op: Operation, message: str) -> None:
        self.items.append(Diagnostic(f"'{op.name}' op {message}", op.location))

    def error(self, loc: Location, message: str) -> None:
        self.items.append(Diagnostic(message, loc))

    def fail(self) -> PassError:
        first = self.items[0]
        return PassError(first.message, first.location, diagnostics=list(self.items))


# --- types ----------------------------------------------------------------------------------------


def most_specific_type(current: Type, refinement: Type) -> Type | None:
    """``hlo::inferMostSpecificType({current, refinement})``: the static sizes either has
    where the other has `?` (tuples element by element; the element type and encoding of the
    first ranked one); None when they conflict (ranks, sizes, tuple arity)."""
    if isinstance(current, TupleType) or isinstance(refinement, TupleType):
        if not (isinstance(current, TupleType) and isinstance(refinement, TupleType)) or \
                len(current.types) != len(refinement.types):
            return None
        parts = [most_specific_type(a, b) for a, b in zip(current.types, refinement.types)]
        if any(p is None for p in parts):
            return None
        return TupleType(tuple(parts))  # type: ignore[arg-type]
    ranked = [t for t in (current, refinement) if isinstance(t, TensorType) and
              t.shape is not None]
    if not ranked:
        return current
    if len(ranked) == 2 and len(ranked[0].shape) != len(ranked[1].shape):  # type: ignore[arg-type]
        return None
    dims: list[int | None] = []
    for ds in zip(*[t.shape for t in ranked]):  # type: ignore[misc]
        known = {d for d in ds if d is not None}
        if len(known) > 1:
            return None
        dims.append(known.pop() if known else None)
    first = ranked[0]
    out = TensorType(tuple(dims), first.element_type, first.encoding)
    return first if out == first else out


def compatible(a: Type, b: Type) -> bool:
    """Shapes compatible up to `?` and unranked (isCompatibleForHloTypeInference's shape part)."""
    if not isinstance(a, TensorType) or not isinstance(b, TensorType):
        return a == b
    if a.shape is None or b.shape is None:
        return True
    return len(a.shape) == len(b.shape) and all(
        x is None or y is None or x == y for x, y in zip(a.shape, b.shape))


def flatten(types: Sequence[Type]) -> list[Type]:
    out: list[Type] = []
    for t in types:
        out.extend(flatten(t.types) if isinstance(t, TupleType) else [t])
    return out


def _unflatten(types: Sequence[Type], flat: list[Type]) -> list[Type]:
    out: list[Type] = []
    for t in types:
        if isinstance(t, TupleType):
            out.append(TupleType(tuple(_unflatten(t.types, flat))))
        else:
            out.append(flat.pop(0))
    return out


# --- refining values ------------------------------------------------------------------------------


def _may_refine_user(user: Operation) -> bool:
    """StableHLO/CHLO (and sdy) ops accept refined operands; `func.return` and `func.call` are
    followed up by dedicated patterns; other users block the refinement."""
    return user.dialect in ("stablehlo", "chlo", "sdy") or user.name in ("func.return",
                                                                          "func.call")


def refine_values(rw: PatternRewriter, op: Operation, values: Sequence[Value],
                  types: Sequence[Type]) -> bool:
    """Give ``values`` the most specific of their types and ``types`` (upstream's
    refineValues). A use by `func.return` keeps the old type through an
    `unrealized_conversion_cast` after ``op`` (the function type is updated by its own
    pattern). False when nothing changes or a refinement is impossible."""
    if len(values) != len(types):
        return False
    refined = []
    for v, t in zip(values, types):
        r = most_specific_type(v.type, t)
        if r is None:
            return False
        refined.append(r)
    if all(v.type == r for v, r in zip(values, refined)):
        return False
    for v, r in zip(values, refined):
        if v.type == r:
            continue
        if not all(_may_refine_user(u) for u in rw.users(v)):
            return False
        old = v.type
        v.type = r
        returns = [u for u in dict.fromkeys(rw.users(v)) if u.name == "func.return"]
        if not returns:
            continue
        blk = op.parent
        assert blk is not None
        cast = rw.create("builtin.unrealized_conversion_cast", [v], [old], block=blk,
                         index=blk.operations.index(op) + 1, location=op.location).results[0]
        for ret in returns:
            rw.set_operands(ret, [cast if x is v else x for x in ret.operands])
    return True


def refine_return_types(rw: PatternRewriter, op: Operation, types: Sequence[Type]) -> bool:
    """Refine ``op``'s results to ``types`` and have the driver revisit their users."""
    if not refine_values(rw, op, op.results, types):
        return False
    rw.modified(op)
    for r in op.results:
        for u in dict.fromkeys(rw.users(r)):
            rw.modified(u)
    return True


@dataclass(frozen=True)
class Refinement:
    """MLIR's ShapedTypeComponents: a shape (None: no rank known) and maybe an element type."""

    shape: tuple[int | None, ...] | None = None
    element: ElementType | None = None


def refine_return_components(rw: PatternRewriter, op: Operation,
                             refinements: Sequence[Refinement]) -> bool:
    """Refine ``op``'s results (tuples flattened) to the shapes ``refinements`` give; they
    must keep the element types, have no encoding and be compatible (upstream's
    refineReturnTypes over ShapedTypeComponents)."""
    flat = flatten(op.result_types)
    if len(flat) != len(refinements):
        return False
    out: list[Type] = []
    for cur, ref in zip(flat, refinements):
        if not isinstance(cur, TensorType):
            if ref.shape is not None or ref.element is not None:
                return False
            out.append(cur)
            continue
        if ref.element is not None and ref.element != cur.element_type:
            return False
        if cur.shape is None and ref.shape is None:
            out.append(cur)
            continue
        if cur.encoding is not None:
            return False
        shape = ref.shape if ref.shape is not None else cur.shape
        if any(d is not None and d < 0 for d in shape):  # type: ignore[union-attr]
            return False
        refined = TensorType(tuple(shape), cur.element_type)  # type: ignore[arg-type]
        if not compatible(cur, refined):
            return False
        out.append(refined)
    return refine_return_types(rw, op, _unflatten(op.result_types, out))


def refine_return_shape(rw: PatternRewriter, op: Operation,
                        shape: Sequence[int | None] | None) -> bool:
    """refineReturnShape: the one result of ``op`` gets ``shape`` (None: no constant shape)."""
    if shape is None:
        return False
    return refine_return_components(rw, op, [Refinement(tuple(shape))])


# --- functions ------------------------------------------------------------------------------------


def function_type_of(func: Operation) -> FunctionType:
    ft = func.attr("function_type")
    return ft.type if isinstance(ft, TypeAttr) else ft


def set_function_type(func: Operation, inputs: Sequence[Type], results: Sequence[Type]) -> None:
    attr = TypeAttr(FunctionType(tuple(inputs), tuple(results)))
    where = func.properties if "function_type" in func.properties else func.attributes
    where["function_type"] = attr


def replace_uses_in(root: Operation, old: Value, new: Value) -> None:
    """Every use of ``old`` inside ``root`` becomes ``new`` (outside any rewriter)."""
    for op in root.walk():
        if any(v is old for v in op.operands):
            op.operands = [new if v is old else v for v in op.operands]


def erase_arguments(func: Operation, first: int, stop: int) -> None:
    """Drop arguments ``first..stop-1`` of ``func`` (block, type and `arg_attrs`)."""
    if stop <= first:
        return
    block = func.regions[0].blocks[0]
    block.arguments = block.arguments[:first] + block.arguments[stop:]
    for i, a in enumerate(block.arguments):
        a.index = i
    ft = function_type_of(func)
    set_function_type(func, ft.inputs[:first] + ft.inputs[stop:], ft.results)
    for where in (func.properties, func.attributes):
        aa = where.get("arg_attrs")
        if isinstance(aa, ArrayAttr):
            where["arg_attrs"] = ArrayAttr(aa.values[:first] + aa.values[stop:])


def target_function(module: Module) -> Operation | None:
    """getStablehloRefineShapesTarget: the module's only function, or its `main`; None when
    there is no function (upstream then fails silently; shlo leaves the module alone)."""
    funcs = [op for op in module.body.operations if op.name == "func.func"]
    if not funcs:
        return None
    if len(funcs) == 1:
        result: Operation | None = funcs[0]
    else:
        result = next((f for f in funcs if getattr(f.attr("sym_name"), "value", None) == "main"),
                      None)
    if result is None:
        raise PassError("'builtin.module' op must have no more than one function or a `main` "
                        "function to clearly identify which function will be refined",
                        module.op.location)
    if len(result.regions[0].blocks) != 1:
        raise PassError("'func.func' op must have exactly one block", result.location)
    return result


def _refinement_error(func: Operation, i: int, t: Type, r: Type, msg: str) -> PassError:
    return PassError(f"'func.func' op invalid refinement for argument {i}, refinement {msg} in "
                     f"{t} -> {r}", func.location)


def validate_refined_types(func: Operation, types: Sequence[Type], refined: Sequence[Type]
                           ) -> PassError | None:
    """Upstream's validateRefinedTypes: one refinement per argument, each equal to it or a
    ranked tensor of the same element type and rank keeping its static sizes."""
    if len(types) != len(refined):
        return PassError("'func.func' op number of refinements must match number of op "
                         f"operands {len(refined)} vs {len(types)}", func.location)
    for i, (t, r) in enumerate(zip(types, refined)):
        if t == r:
            continue
        if not isinstance(t, TensorType) or not isinstance(r, TensorType):
            return _refinement_error(func, i, t, r, "must be a tensor")
        if t.element_type != r.element_type:
            return _refinement_error(func, i, t, r, "element types must match")
        if r.shape is None:
            return _refinement_error(func, i, t, r, "must be ranked")
        if t.shape is None:
            continue
        if len(t.shape) != len(r.shape):
            return _refinement_error(func, i, t, r, "rank must match operand rank")
        if any(d is not None and d != e for d, e in zip(t.shape, r.shape)):
            return _refinement_error(func, i, t, r,
                                     "dimension sizes must match for static dimensions")
    return None


def refine_arguments(func: Operation, refined: Sequence[Type]) -> PassError | None:
    """Upstream's refineArguments: validate, wrap each changed argument in
    `custom_call @stablehlo.shape_refinement_operand_wrapper(arg, shape)` (whose result keeps
    the old type for the old uses), then give the arguments and the signature the new types.
    Returns the error instead of raising it."""
    block = func.regions[0].blocks[0]
    types = [a.type for a in block.arguments]
    err = validate_refined_types(func, types, refined)
    if err is not None:
        return err
    at = 0
    for arg, r in zip(list(block.arguments), refined):
        if arg.type == r:
            continue
        assert isinstance(r, TensorType) and r.shape is not None
        shape = DenseElementsAttr(TensorType((len(r.shape),), _I64),
                                  np.asarray([_DYNAMIC if d is None else d for d in r.shape], dtype=np.int64))
        const = Operation("stablehlo.constant", [], [shape.type], {"value": shape}, {}, [],
                          location=func.location)
        wrapper = Operation("stablehlo.custom_call", [arg, const.results[0]], [arg.type],
                            {"call_target_name": StringAttr(OPERAND_WRAPPER)},
                            {"indices_of_shape_operands": DenseElementsAttr(
                                TensorType((1,), _I64), np.asarray([1], dtype=np.int64))},
                            [], location=func.location)
        for o in func.walk():
            if o is not func:
                o.operands = [wrapper.results[0] if v is arg else v for v in o.operands]
        for o in (const, wrapper):
            o.parent = block
            block.operations.insert(at, o)
            at += 1
    for arg, r in zip(block.arguments, refined):
        arg.type = r
    set_function_type(func, refined, function_type_of(func).results)
    return None
