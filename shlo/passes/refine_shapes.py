"""stablehlo-refine-shapes: propagate static shapes through a StableHLO program (upstream's
StablehloRefineShapes.cpp).

The target function (the module's only one, or `main`) is refined with upstream's patterns on
the greedy driver (top-down, at most 2 iterations): each op's result types are re-inferred
from its operands (the ops' own type inference from the registry; dedicated patterns for the
ops whose result shape comes from constant shape operands: dynamic_broadcast_in_dim,
dynamic_iota, dynamic_reshape, dynamic_pad, real_dynamic_slice, rng, custom_call with
`indices_of_shape_operands`, and for convert, bitcast_convert, uniform_quantize, all_gather,
reduce_scatter, chlo.ragged_dot), while bodies get their operand types, `func.return` updates
the function type, and upstream's shape folder (``populateStablehloShapeFolderPatterns``: the
integer folds of ``_fold_*.py``, no float folding, no size limit) evaluates shape computations.

`func.call` is refined interprocedurally: the callee is specialized to the call site
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

from ..attributes import ArrayAttr, DenseElementsAttr, ints
from ..errors import Diagnostics
from ..ir import Module, Operation
from ..registry import ELEMENTWISE, lookup
from ..types import IntegerType, TensorType, TokenType, Type, element_type
from ..verifier import collect
from . import _fold_elementwise, _fold_shape, register_pass  # noqa: F401  (register the folds)
from ._driver import GreedyConfig, apply_patterns, copy_module
from ._fold_shape import fold_concat_adjacent_splats
from ._patterns import FoldContext, Pattern, PatternRewriter, constant_of, fold_pattern, has_effects
from ._refine import (
    OPERAND_WRAPPER, Errors, Refinement, erase_arguments, flatten, function_type_of,
    most_specific_type, refine_arguments, refine_return_components, refine_return_shape,
    refine_return_types, refine_values, replace_uses_in, set_function_type, target_function,
)
from ..ops._constraints import constant_ints
from .canonicalize import fold_cast_chain

__all__ = ["refine_shapes", "refine_entry_function", "shape_refinement_patterns"]

_I64 = element_type("i64")

SHAPE_FOLDS = frozenset("stablehlo." + n for n in (
    "add", "and", "broadcast_in_dim", "clamp", "compare", "concatenate", "convert", "divide",
    "dynamic_slice", "get_dimension_size", "maximum", "minimum", "multiply", "or", "remainder",
    "reshape", "select", "set_dimension_size", "sign", "slice", "subtract"))
"""The ops of upstream's populateStablehloShapeFolderPatterns."""

_DEDICATED = frozenset({"stablehlo.all_gather", "stablehlo.reduce_scatter", "stablehlo.rng",
                        "stablehlo.custom_call", "stablehlo.dynamic_conv"})
"""Ops with a dedicated pattern that upstream's InferTypeOpInterface pattern does not see."""


# --- op patterns ----------------------------------------------------------------------------------


def _tensor(t: Type) -> TensorType | None:
    return t if isinstance(t, TensorType) else None


def _shard_count(op: Operation) -> int | None:
    if op.attr("channel_handle") is not None and op.attr("use_global_device_ids") is None:
        return None  # cross_replica_and_partition: needs num_partitions
    groups = op.attr("replica_groups")
    if not isinstance(groups, DenseElementsAttr) or len(groups.type.shape or ()) != 2:
        return None
    return int(groups.type.shape[1])  # type: ignore[index]


def refine_all_gather(op: Operation, rw: PatternRewriter) -> bool:
    """The gathered dimension times the replica group size."""
    shards = _shard_count(op)
    t = _tensor(op.operands[0].type) if len(op.operands) == 1 else None
    if shards is None or t is None or t.shape is None:
        return False
    dim = int(op.attr("all_gather_dim").value)
    shape = list(t.shape)
    if shape[dim] is not None:
        shape[dim] *= shards  # type: ignore[operator]
    return refine_return_shape(rw, op, shape)


def refine_reduce_scatter(op: Operation, rw: PatternRewriter) -> bool:
    """The scattered dimension divided by the replica group size."""
    shards = _shard_count(op)
    t = _tensor(op.operands[0].type) if len(op.operands) == 1 else None
    if not shards or t is None or t.shape is None:
        return False
    dim = int(op.attr("scatter_dimension").value)
    shape = list(t.shape)
    if shape[dim] is not None:
        shape[dim] //= shards  # type: ignore[operator]
    return refine_return_shape(rw, op, shape)


def _bit_width(t: TensorType) -> int | None:
    et = t.element_type
    et = getattr(et, "element", et) if et.is_complex else et
    return getattr(et, "width", None)


def refine_bitcast_convert(op: Operation, rw: PatternRewriter) -> bool:
    """The operand's shape, when the bit widths agree (else the ranks differ: not refined)."""
    a, r = _tensor(op.operands[0].type), _tensor(op.results[0].type)
    if a is None or r is None or _bit_width(a) != _bit_width(r):
        return False
    return refine_return_components(rw, op, [Refinement(a.shape)])


def refine_same_shape(op: Operation, rw: PatternRewriter) -> bool:
    """convert, uniform_quantize: the operand's shape (inferConvertOp)."""
    a = _tensor(op.operands[0].type)
    if a is None:
        return False
    return refine_return_components(rw, op, [Refinement(a.shape)])


def refine_shape_operand(index: int) -> Any:
    def fn(op: Operation, rw: PatternRewriter) -> bool:
        return refine_return_shape(rw, op, constant_ints(op.operands[index]))

    fn.__name__ = f"refine_shape_operand_{index}"
    fn.__doc__ = f"The result shape is the constant operand #{index}."
    return fn


def _infer(op: Operation) -> list[Type] | None:
    """The op's own type inference (registry), None when it has none or it fails."""
    d = lookup(op.name)
    if d is None or d.infer is None:
        return None
    diag = Diagnostics()
    try:
        types = d.infer(op, diag)
    except Exception:  # noqa: BLE001 - an inference that cannot cope: no refinement
        return None
    if not types or len(diag):
        return None
    return list(types)


def refine_dynamic_conv(op: Operation, rw: PatternRewriter) -> bool:
    """Constant padding: convolution's inference with that padding."""
    pad = constant_of(op.operands[2]) if len(op.operands) == 3 else None
    if pad is None:
        return False
    attr = DenseElementsAttr(TensorType(tuple(pad.type.shape or ()), _I64),
                             np.asarray(pad.array, dtype=np.int64))
    probe = Operation("stablehlo.convolution", list(op.operands[:2]), list(op.result_types),
                      {**op.properties, "padding": attr}, dict(op.attributes), [])
    types = _infer(probe)
    return types is not None and refine_return_types(rw, op, types)


def refine_dynamic_pad(op: Operation, rw: PatternRewriter) -> bool:
    """Constant paddings: pad's inference."""
    t = _tensor(op.operands[0].type)
    pads = [constant_ints(v) for v in op.operands[2:5]]
    if t is None or t.shape is None or any(p is None or len(p) != len(t.shape) for p in pads):
        return False
    lo, hi, interior = pads
    if any(i < 0 for i in interior):  # type: ignore[union-attr]
        return False
    shape = []
    for d, l, h, i in zip(t.shape, lo, hi, interior):  # type: ignore[arg-type]
        if d is None:
            shape.append(None)
            continue
        n = l + h + d + max(d - 1, 0) * i
        if n < 0:
            return False
        shape.append(n)
    return refine_return_types(rw, op, [TensorType(tuple(shape), t.element_type, t.encoding)])


def refine_real_dynamic_slice(op: Operation, rw: PatternRewriter) -> bool:
    """Constant start/limit/strides (slice's inference), or `limit = start + constant` with unit
    strides (dynamic_slice's: the constant is the slice size)."""
    t = _tensor(op.operands[0].type)
    if t is None or t.shape is None:
        return False
    start, limit, strides = (constant_ints(v) for v in op.operands[1:4])
    rank = len(t.shape)
    if start is not None and limit is not None and strides is not None:
        if not len(start) == len(limit) == len(strides) == rank:
            return False
        shape: list[int | None] = []
        for d, s, e, k in zip(t.shape, start, limit, strides):
            if k <= 0 or s < 0 or e < s or (d is not None and e > d):
                return False
            shape.append(-(-(e - s) // k))
        return refine_return_types(rw, op, [TensorType(tuple(shape), t.element_type)])
    add = rw.defining(op.operands[2], "stablehlo.add")
    if add is None:
        return False
    a, b = add.operands
    sizes = None
    if a is op.operands[1] and constant_of(b) is not None:
        sizes = constant_ints(b)
    elif b is op.operands[1] and constant_of(a) is not None:
        sizes = constant_ints(a)
    if sizes is None or strides is None or any(k != 1 for k in strides):
        return False
    if len(sizes) != rank or any(s < 0 or (d is not None and s > d)
                                 for s, d in zip(sizes, t.shape)):
        return False
    return refine_return_components(rw, op, [Refinement(tuple(sizes))])


def _dims_attr(op: Operation, key: str) -> tuple[int, ...]:
    attr = op.attr("ragged_dot_dimension_numbers")
    v = attr.get(key, ()) if hasattr(attr, "get") else getattr(attr, key, ())
    return tuple(ints(v, ())) if not isinstance(v, tuple) else v


def refine_ragged_dot(op: Operation, rw: PatternRewriter) -> bool:
    """chlo.ragged_dot: batch, lhs free and rhs free dimensions (rhs group dimensions left
    out); a ragged contracting dimension adds the group dimension in front."""
    lhs, rhs, groups = (_tensor(v.type) for v in op.operands)
    if lhs is None or rhs is None or groups is None or None in (lhs.shape, rhs.shape,
                                                                 groups.shape):
        return False
    lb, rb = _dims_attr(op, "lhs_batching_dimensions"), _dims_attr(op, "rhs_batching_dimensions")
    lc = _dims_attr(op, "lhs_contracting_dimensions")
    rc = _dims_attr(op, "rhs_contracting_dimensions")
    lr = _dims_attr(op, "lhs_ragged_dimensions")
    rg = _dims_attr(op, "rhs_group_dimensions")
    if len(lr) != 1:
        return False
    shape = [lhs.shape[d] for d in lb]  # type: ignore[index]
    shape += [d for i, d in enumerate(lhs.shape) if i not in lb and i not in lc]  # type: ignore
    shape += [d for i, d in enumerate(rhs.shape)  # type: ignore[arg-type]
              if i not in rb and i not in rc and i not in rg]
    if lr[0] in lc:
        shape = [groups.shape[-1] if groups.shape else None] + shape  # type: ignore[index]
    return refine_return_components(rw, op, [Refinement(tuple(shape))])


def _custom_call_refinements(op: Operation, errors: Errors) -> list[Refinement] | None:
    """hlo::getShapeRefinements: one constant shape operand per (flattened) result."""
    attr = op.attr("indices_of_shape_operands")
    if not isinstance(attr, DenseElementsAttr):
        return None
    flat = flatten(op.result_types)
    suffix = ", with tuples flattened" if len(flat) != len(op.results) else ""
    idx = [int(x) for x in np.asarray(attr.array).reshape(-1)]
    if len(idx) != len(flat):
        errors.error(op.location, f"indices_of_shape_operands: number of elements ({len(idx)}) "
                     f"must be equal to the number of operation results ({len(flat)}){suffix}")
        return None
    out = []
    for k, (i, t) in enumerate(zip(idx, flat)):
        if i < 0 or i >= len(op.operands):
            errors.error(op.location, f"indices_of_shape_operands: index #{k} ({i}) must be "
                         f"within bounds for operation operands (from 0 to {len(op.operands)})")
            return None
        shape = constant_ints(op.operands[i])
        if shape is None:
            return None
        if any(d < 0 for d in shape) or (isinstance(t, TensorType) and t.shape is not None and (
                len(t.shape) != len(shape) or
                any(a is not None and a != b for a, b in zip(t.shape, shape)))):
            errors.error(op.location, f"indices_of_shape_operands: refinement #{k} "
                         f"([{', '.join(map(str, shape))}]) must be compatible with operation "
                         f"result #{k} ('{t}'){suffix}")
            return None
        out.append(Refinement(tuple(shape)))
    return out


def refine_custom_call(errors: Errors) -> Any:
    def refine_custom_call(op: Operation, rw: PatternRewriter) -> bool:
        """Result shapes from the constant operands `indices_of_shape_operands` names; the
        operand wrapper is then replaced by its operand."""
        refs = _custom_call_refinements(op, errors)
        if refs is None or not refine_return_components(rw, op, refs):
            return False
        if getattr(op.attr("call_target_name"), "value", None) == OPERAND_WRAPPER:
            operand = op.operands[0]
            if operand.type == op.results[0].type:
                rw.replace_all_uses(op.results[0], operand)
            if rw.use_empty(op.results[0]):
                rw.erase_op(op)
        return True

    return refine_custom_call


def refine_while(op: Operation, rw: PatternRewriter) -> bool:
    """The operand types go to the cond and body arguments (the result types follow through
    the while's own type inference)."""
    types = [v.type for v in op.operands]
    changed = False
    for region in op.regions[:2]:
        if region.blocks and refine_values(rw, op, region.blocks[0].arguments, types):
            changed = True
    if changed:
        rw.modified(op)
    return changed


def update_function_type(op: Operation, rw: PatternRewriter) -> bool:
    """`func.return` of casts from a more specific type: the casts go, the function type
    takes the specific types (UpdateFunctionTypePattern)."""
    func = op.parent.parent.parent if op.parent is not None and op.parent.parent else None
    if func is None or func.name != "func.func":
        return False
    new_types = [v.type for v in op.operands]
    casts: dict[int, Operation] = {}
    operands = list(op.operands)
    for i, v in enumerate(op.operands):
        cast = rw.defining(v, "builtin.unrealized_conversion_cast")
        if cast is None or len(cast.operands) != 1 or len(cast.results) != 1:
            continue
        src, dst = cast.operands[0].type, cast.results[0].type
        ms = most_specific_type(src, dst)
        if ms is None or ms == dst:
            continue
        new_types[i] = src
        operands[i] = cast.operands[0]
        casts[id(cast)] = cast
    if not casts:
        return False
    for cast in casts.values():
        rw.replace_op(cast, list(cast.operands))
    ft = function_type_of(func)
    set_function_type(func, ft.inputs, new_types)
    return True


def update_region_type(op: Operation, rw: PatternRewriter) -> bool:
    """A case/if branch returning more specific types: revisit the case/if."""
    parent = op.parent.parent.parent if op.parent is not None and op.parent.parent else None
    if parent is None or parent.name not in ("stablehlo.case", "stablehlo.if"):
        return False
    for rt, vt in zip(parent.result_types, (v.type for v in op.operands)):
        ms = most_specific_type(rt, vt)
        if ms is not None and ms != rt:
            rw.modified(parent)
            return True
    return False


def _elementwise_compatible(op: Operation) -> bool:
    t: Type | None = None
    for v in op.operands:
        t = v.type if t is None else most_specific_type(t, v.type)
        if t is None:
            return False
    return True


def refine_infer_type(op: Operation, rw: PatternRewriter) -> bool:
    """Any StableHLO/CHLO op with type inference: its results re-inferred (benefit 0)."""
    if op.dialect not in ("stablehlo", "chlo") or op.name in _DEDICATED:
        return False
    d = lookup(op.name)
    if d is None or d.infer is None:
        return False
    if d.has(ELEMENTWISE) and not _elementwise_compatible(op):
        return False  # upstream's inference fails on conflicting operand shapes
    types = _infer(op)
    if types is None or len(types) != len(op.results):
        return False
    return refine_return_types(rw, op, types)


def shape_refinement_patterns(errors: Errors) -> list[Pattern]:
    """populateStablehloRefineShapesPatterns (without the call pattern)."""
    fixed: list[tuple[str | None, Any, int]] = [
        ("stablehlo.all_gather", refine_all_gather, 1),
        ("stablehlo.bitcast_convert", refine_bitcast_convert, 1),
        ("stablehlo.convert", refine_same_shape, 1),
        ("stablehlo.custom_call", refine_custom_call(errors), 1),
        ("chlo.ragged_dot", refine_ragged_dot, 1),
        ("stablehlo.dynamic_broadcast_in_dim", refine_shape_operand(1), 1),
        ("stablehlo.dynamic_conv", refine_dynamic_conv, 1),
        ("stablehlo.dynamic_iota", refine_shape_operand(0), 1),
        ("stablehlo.dynamic_pad", refine_dynamic_pad, 1),
        ("stablehlo.dynamic_reshape", refine_shape_operand(1), 1),
        (None, refine_infer_type, 0),
        ("stablehlo.real_dynamic_slice", refine_real_dynamic_slice, 1),
        ("stablehlo.reduce_scatter", refine_reduce_scatter, 1),
        ("stablehlo.rng", refine_shape_operand(2), 1),
        ("stablehlo.uniform_quantize", refine_same_shape, 1),
        ("stablehlo.while", refine_while, 1),
        ("func.return", update_function_type, 1),
        ("stablehlo.return", update_region_type, 1),
    ]
    return [Pattern(root, fn, benefit, fn.__name__) for root, fn, benefit in fixed]


def shape_folder_patterns() -> list[Pattern]:
    """populateStablehloShapeFolderPatterns with `optimize-float=false` and no element limit,
    plus MLIR's fold of `unrealized_conversion_cast` (the greedy driver folds ops)."""
    ctx = FoldContext(element_limit=np.iinfo(np.int64).max, optimize_float=False)
    pats = [p for p in fold_pattern(ctx) if p.root in SHAPE_FOLDS]
    pats.append(Pattern("stablehlo.concatenate", fold_concat_adjacent_splats, 1,
                        "fold_concat_adjacent_splats"))
    pats.append(Pattern("builtin.unrealized_conversion_cast", fold_cast_chain, 1,
                        "fold_cast_chain"))
    return pats


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
                              location=arg_location(func))
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


def arg_location(func: Operation) -> Any:
    return func.location


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
            c = constant_of(v)
            ok = c is not None and (c.type.element_type.is_integer or c.type.element_type.is_bool
                                    or isinstance(c.type.element_type, IntegerType))
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
