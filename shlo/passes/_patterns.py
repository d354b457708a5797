"""Pattern rewriting that knows no op: an in-place rewriter with use lists, patterns, pattern
sets, and the helpers patterns share (constant matching, kernel evaluation).

MLIR's model, on shlo's IR: a *pattern* is ``fn(op, rw) -> bool`` registered for a root op name
(or for any op); it either changes the IR through the :class:`PatternRewriter` and returns True,
or returns False having changed nothing. The greedy driver (:mod:`._driver`) applies the
patterns of a set until nothing changes. The rewriter works in place on a copy of the input
module (passes never mutate their input), keeping a use list per value so that patterns can ask
``has_one_use`` / ``users`` and replacements reach every use.

Op-specific patterns live in one module per op family (``_simplify_*.py``, ``_fold_*.py``) and
register themselves into a named set with :func:`pattern`; constant folds are registered on the
op definitions (``registry.folder``) and run through :func:`fold_pattern`.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np

from ..attributes import DenseElementsAttr
from ..ir import Block, Location, Operation, Region, Value
from ..registry import SIDE_EFFECTS, lookup, names_with
from ..types import ElementType, TensorType, TokenType, Type
from ._rewrite import i64_array

__all__ = ["PatternRewriter", "Pattern", "pattern", "patterns", "constant_of", "is_constant_op",
           "FoldContext", "fold_pattern", "evaluate", "dense", "has_effects", "trivially_dead",
           "Listener"]

RewriteFn = Callable[[Operation, "PatternRewriter"], bool]


@dataclass
class Pattern:
    """A rewrite rooted at ``root`` (an op name, or None for every op); higher ``benefit`` is
    tried first, then registration order."""

    root: str | None
    fn: RewriteFn
    benefit: int = 1
    name: str = ""


_SETS: dict[str, list[Pattern]] = {}


def pattern(set_name: str, root: str | None, benefit: int = 1
            ) -> Callable[[RewriteFn], RewriteFn]:
    """Register ``fn(op, rw) -> bool`` in pattern set ``set_name`` for ops named ``root``."""

    def deco(fn: RewriteFn) -> RewriteFn:
        _SETS.setdefault(set_name, []).append(Pattern(root, fn, benefit, fn.__name__))
        return fn

    return deco


def patterns(*set_names: str, benefit: int | None = None) -> list[Pattern]:
    """The patterns of the named sets (``benefit`` overrides theirs, as upstream's populate
    functions do)."""
    out: list[Pattern] = []
    for s in set_names:
        for p in _SETS.get(s, ()):
            out.append(p if benefit is None else Pattern(p.root, p.fn, benefit, p.name))
    return out


# --- side effects ---------------------------------------------------------------------------------

_PURE_DIALECTS = frozenset({"stablehlo", "chlo", "arith", "tensor", "shape", "math", "builtin",
                            "tosa"})
_PURE_OPS = frozenset({"memref.cast", "bufferization.to_tensor"})
"""Ops of other dialects that are dead when unused: `memref.cast` is Pure, `to_tensor` only
reads (MLIR's wouldOpBeTriviallyDead ignores reads)."""
_STATEFUL = frozenset({"stablehlo.rng", "stablehlo.composite"})
"""Not SIDE_EFFECTS, but kept: shlo keys `rng` by its position in the program, and a composite
calls another function."""


def _own_effects(op: Operation) -> bool:
    if op.name in names_with(SIDE_EFFECTS):
        d = lookup(op.name)
        if d is not None and d.inherent and "has_side_effect" in d.inherent:
            # effects as the op says (`has_side_effect`, false when absent, as upstream)
            return bool(getattr(op.attr("has_side_effect"), "value", False))
        return True
    if op.name in _STATEFUL:
        return True
    # unknown ops (func.call, ...) may do anything
    return op.dialect not in _PURE_DIALECTS and op.name not in _PURE_OPS


def has_effects(op: Operation, declared_only: bool = False) -> bool:
    """True if ``op`` or an op nested in it has side effects (MLIR's recursive memory effects).
    Ops shlo does not know count as effectful, unless ``declared_only`` (only the ops that
    declare effects count: the `assume-no-undeclared-side-effects` view)."""
    effects = names_with(SIDE_EFFECTS)
    for o in op.walk():
        if declared_only:
            if o.name in effects and _own_effects(o):
                return True
        elif _own_effects(o):
            return True
    return False


def trivially_dead(op: Operation, rw: "PatternRewriter") -> bool:
    """No result is used and nothing in the op has side effects (MLIR `isOpTriviallyDead`)."""
    if not op.results or op.name in names_with("terminator"):
        return False
    if any(rw.uses.get(r) for r in op.results):
        return False
    return not has_effects(op)


# --- constants ------------------------------------------------------------------------------------


_CONSTANT_ATTR = {"shape.const_shape": "shape", "tosa.const": "values",
                  "tosa.const_shape": "values"}
"""ConstantLike ops whose elements are not in `value`."""


def is_constant_op(op: Operation) -> bool:
    """A constant-like op: no operands, no regions, one result, a dense `value` (`shape` for
    `shape.const_shape`)."""
    name = _CONSTANT_ATTR.get(op.name, "value")
    return (not op.operands and not op.regions and len(op.results) == 1
            and isinstance(op.properties.get(name, op.attributes.get(name)),
                           DenseElementsAttr))


def constant_of(v: Value) -> DenseElementsAttr | None:
    """The elements ``v`` holds when a constant-like op defines it (MLIR `m_Constant`)."""
    op = v.owner
    if isinstance(op, Operation) and is_constant_op(op):
        return op.attr(_CONSTANT_ATTR.get(op.name, "value"))
    return None


def dense(values: Any, t: TensorType) -> DenseElementsAttr:
    """A dense attribute of tensor type ``t`` (no encoding) holding ``values`` (broadcast)."""
    tt = TensorType(t.shape, t.element_type)
    arr = np.asarray(values)
    dt = t.element_type.dtype
    if arr.size == 0:
        arr = np.zeros(tuple(t.shape), arr.dtype)  # type: ignore[arg-type]
    if arr.dtype != dt:
        if dt.kind not in "iubfc" and arr.dtype.kind in "iu":  # int4 & co
            arr = arr.astype(np.int16)
        arr = arr.astype(dt)
    arr = np.broadcast_to(arr, tuple(t.shape)).copy()  # type: ignore[arg-type]
    return DenseElementsAttr(tt, arr)


def zero_like(t: Type) -> DenseElementsAttr | None:
    if isinstance(t, TensorType) and t.is_static and not t.element_type.is_quantized:
        return dense(np.zeros((), t.element_type.dtype), t)
    return None


def evaluate(op: Operation, arrays: Sequence[np.ndarray], **variant: Any) -> list[Any]:
    """:func:`shlo.interpreter.evaluator.evaluate_op` (the folders' way of running an op)."""
    from ..interpreter.evaluator import evaluate_op

    return evaluate_op(op, arrays, **variant)


@dataclass
class FoldContext:
    """What a fold hook (``registry.folder``) sees: the pass options and the constants."""

    element_limit: int = 65536
    optimize_float: bool = True
    assume_no_undeclared_side_effects: bool = False

    def constant(self, v: Value) -> DenseElementsAttr | None:
        return constant_of(v)

    def constants(self, op: Operation) -> list[DenseElementsAttr] | None:
        """Every operand's constant, or None when one is not constant."""
        out = []
        for v in op.operands:
            c = constant_of(v)
            if c is None:
                return None
            out.append(c)
        return out

    def within_limit(self, t: Type) -> bool:
        return isinstance(t, TensorType) and t.is_static and t.num_elements <= self.element_limit

    def evaluate(self, op: Operation, arrays: Sequence[np.ndarray], **kw: Any) -> list[Any]:
        return evaluate(op, arrays, **kw)


def fold_pattern(ctx: FoldContext, benefit: int = 1) -> list[Pattern]:
    """One pattern per op with a fold hook: the hook's attributes become constants created
    where the op was (upstream's ``replaceOpWithNewOp<ConstantOp>``)."""
    from ..registry import defined

    def run(op: Operation, rw: "PatternRewriter") -> bool:
        d = lookup(op.name)
        if d is None or d.fold is None:
            return False
        res = d.fold(op, ctx)
        if res is None:
            return False
        values = [rw.constant(r) if isinstance(r, DenseElementsAttr) else r for r in res]
        rw.replace_op(op, values)
        return True

    return [Pattern(name, run, benefit, f"fold:{name}")
            for name, d in sorted(defined().items()) if d.fold is not None]


# --- the rewriter ---------------------------------------------------------------------------------


class Listener:
    """What the driver hears about changes (MLIR's RewriterBase::Listener)."""

    def inserted(self, op: Operation) -> None: ...

    def modified(self, op: Operation) -> None: ...

    def erased(self, op: Operation) -> None: ...


class PatternRewriter:
    """Changes IR in place, keeping use lists and telling its listener (the driver) what
    changed. New ops go before ``anchor`` (the op being rewritten) unless a block and index are
    given."""

    def __init__(self, root: Operation, listener: Listener | None = None) -> None:
        self.root = root
        self.listener = listener or Listener()
        self.uses: dict[Value, list[Operation]] = {}
        self.anchor: Operation | None = None
        for op in root.walk():
            for v in op.operands:
                self.uses.setdefault(v, []).append(op)

    # --- queries -------------------------------------------------------------------------------

    @staticmethod
    def defining(v: Value, name: str | None = None) -> Operation | None:
        op = v.owner
        if isinstance(op, Operation) and (name is None or op.name == name):
            return op
        return None

    def users(self, v: Value) -> list[Operation]:
        return list(self.uses.get(v, ()))

    def use_empty(self, v: Value) -> bool:
        return not self.uses.get(v)

    def has_one_use(self, v: Value) -> bool:
        return len(self.uses.get(v, ())) == 1

    # --- building ------------------------------------------------------------------------------

    def _insert(self, op: Operation, block: Block | None = None, index: int | None = None
                ) -> Operation:
        if block is None:
            anchor = self.anchor
            assert anchor is not None and anchor.parent is not None
            block = anchor.parent
            index = block.operations.index(anchor)
        op.parent = block
        block.operations.insert(len(block.operations) if index is None else index, op)
        for o in op.walk():
            for v in o.operands:
                self.uses.setdefault(v, []).append(o)
        self.listener.inserted(op)
        return op

    def create(self, name: str, operands: Sequence[Value], result_types: Sequence[Type],
               properties: dict[str, Any] | None = None,
               attributes: dict[str, Any] | None = None,
               regions: Sequence[Region] | None = None, location: Location | None = None,
               block: Block | None = None, index: int | None = None) -> Operation:
        """A new op, inserted before the anchor (or at ``block[index]``)."""
        loc = location if location is not None else (
            self.anchor.location if self.anchor is not None else None)
        op = Operation(name, list(operands), list(result_types), properties or {},
                       attributes or {}, list(regions or []), **({"location": loc} if loc else {}))
        return self._insert(op, block, index)

    def create1(self, name: str, operands: Sequence[Value], result_type: Type,
                properties: dict[str, Any] | None = None, **kw: Any) -> Value:
        return self.create(name, operands, [result_type], properties, **kw).results[0]

    def scalars_of(self, v: Value, n: int) -> list[Value]:
        """The ``n`` elements of the 1-D tensor ``v`` as 0-d values (slice + reshape each), as
        upstream unpacks an index tensor into dynamic_slice's start indices."""
        et = v.type.element_type  # type: ignore[union-attr]
        out = []
        for i in range(n):
            s1 = self.create1("stablehlo.slice", [v], TensorType((1,), et),
                              {"start_indices": i64_array([i]),
                               "limit_indices": i64_array([i + 1]), "strides": i64_array([1])})
            out.append(self.create1("stablehlo.reshape", [s1], TensorType((), et)))
        return out

    def infer_create1(self, name: str, operands: Sequence[Value],
                      properties: dict[str, Any] | None = None,
                      fallback: Type | None = None, **kw: Any) -> Value:
        """A new op typed by its own type inference (``fallback`` when it has none)."""
        from ..errors import Diagnostics

        probe = Operation(name, list(operands), [], properties or {}, {}, [])
        d = lookup(name)
        types = None
        if d is not None and d.infer is not None:
            with contextlib.suppress(Exception):
                types = d.infer(probe, Diagnostics())
        if not types:
            assert fallback is not None, f"no type inference for {name}"
            types = [fallback]
        return self.create1(name, operands, types[0], properties, **kw)

    def constant(self, attr: DenseElementsAttr, **kw: Any) -> Value:
        """`stablehlo.constant` holding ``attr`` (the dialect's materializeConstant)."""
        return self.create1("stablehlo.constant", [], attr.type, {"value": attr}, **kw)

    @staticmethod
    def placeholder_possible(t: Type) -> bool:
        return isinstance(t, TokenType) or zero_like(t) is not None

    def placeholder(self, t: Type, **kw: Any) -> Value | None:
        """A value of type ``t`` nobody will read: zeros, or `after_all` for a token."""
        if isinstance(t, TokenType):
            return self.create1("stablehlo.after_all", [], t, **kw)
        z = zero_like(t)
        return self.constant(z, **kw) if z is not None else None

    # --- changing ------------------------------------------------------------------------------

    def set_operands(self, op: Operation, operands: Sequence[Value]) -> None:
        for v in op.operands:
            self._drop_use(v, op)
        op.operands = list(operands)
        for v in op.operands:
            self.uses.setdefault(v, []).append(op)
        self.listener.modified(op)

    def set_operand(self, op: Operation, i: int, v: Value) -> None:
        ops = list(op.operands)
        ops[i] = v
        self.set_operands(op, ops)

    def modified(self, op: Operation) -> None:
        """Report an in-place change of ``op``'s attributes or types."""
        self.listener.modified(op)

    def _drop_use(self, v: Value, op: Operation) -> None:
        lst = self.uses.get(v)
        if lst:
            for i, o in enumerate(lst):
                if o is op:
                    del lst[i]
                    break

    def replace_all_uses(self, old: Value, new: Value) -> None:
        if old is new:
            return
        users = self.uses.pop(old, [])
        for user in dict.fromkeys(users):
            user.operands = [new if v is old else v for v in user.operands]
            self.listener.modified(user)
        self.uses.setdefault(new, []).extend(users)

    def replace_op(self, op: Operation, values: Sequence[Value | None]) -> None:
        """Replace every use of ``op``'s results by ``values`` (None: a result without uses)
        and erase ``op``."""
        assert len(values) == len(op.results), f"{op.name}: {len(values)} replacements"
        for r, v in zip(op.results, values):
            if v is not None:
                self.replace_all_uses(r, v)
            else:
                assert not self.uses.get(r), f"{op.name}: a used result replaced by nothing"
        self.erase_op(op)

    def erase_op(self, op: Operation) -> None:
        for o in op.walk():
            for v in o.operands:
                self._drop_use(v, o)
        if op.parent is not None:
            ops = op.parent.operations
            for i in range(len(ops) - 1, -1, -1):
                if ops[i] is op:
                    del ops[i]
                    break
            op.parent = None
        self.listener.erased(op)

    def take_regions(self, op: Operation) -> list[Region]:
        """Detach ``op``'s regions (to give them to a new op, which registers their uses)."""
        regions = list(op.regions)
        for r in regions:
            for b in r.blocks:
                for inner in b.operations:
                    for o in inner.walk():
                        for v in o.operands:
                            self._drop_use(v, o)
        op.regions = []
        return regions

    def move_before(self, op: Operation, block: Block, index: int) -> None:
        """Move ``op`` (not erased: its uses stay) to ``block[index]``."""
        if op.parent is not None:
            op.parent.operations.remove(op)
        op.parent = block
        block.operations.insert(index, op)

    def inline_block_before(self, block: Block, anchor: Operation,
                            args: Sequence[Value] = ()) -> None:
        """Move ``block``'s ops before ``anchor``, its arguments replaced by ``args``."""
        for a, v in zip(block.arguments, args):
            self.replace_all_uses(a, v)
        target = anchor.parent
        assert target is not None
        idx = target.operations.index(anchor)
        moved = list(block.operations)
        block.operations = []
        for k, o in enumerate(moved):
            o.parent = target
            target.operations.insert(idx + k, o)
        for o in moved:
            self.listener.inserted(o)

    def walk_values(self, op: Operation) -> Iterator[Value]:
        for o in op.walk():
            yield from o.results
            for r in o.regions:
                for b in r.blocks:
                    yield from b.arguments


def region_of(v: Value) -> Region | None:
    """The region ``v`` is defined in."""
    owner = v.owner
    if isinstance(owner, Block):
        return owner.parent
    if isinstance(owner, Operation) and owner.parent is not None:
        return owner.parent.parent
    return None


def ancestors(op: Operation) -> Iterable[Operation]:
    cur: Operation | None = op
    while cur is not None:
        yield cur
        blk = cur.parent
        cur = blk.parent.parent if blk is not None and blk.parent is not None else None


def element(t: Type) -> ElementType | None:
    return t.element_type if isinstance(t, TensorType) else None

