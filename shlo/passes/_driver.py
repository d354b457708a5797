"""The greedy fixed-point driver (MLIR's ``applyPatternsGreedily``), on shlo's IR.

For each function of a module (the passes are func-level, as upstream's), iterations repeat
until one changes nothing, at most ``max_iterations`` times:

1. walk the function (post-order, or pre-order when ``top_down``): constants are *uniqued*
   (one constant per value and type in the function body; the first kept, the others replaced
   by it) and moved to the front of the body, the way MLIR's OperationFolder keeps them; the
   other ops go on the worklist;
2. pop ops from the worklist (the last pushed first): a trivially dead op is erased (its
   operands' producers are pushed: they may be dead now); otherwise the op's patterns are tried
   by decreasing benefit and the first that applies counts as a rewrite. Every op a rewrite
   creates or changes is pushed, with its ancestors; the users of replaced results too.

``test_convergence`` (canonicalize's option) and the stablehlo passes fail when the last
allowed iteration still changed something (:class:`PassError`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..attributes import DenseElementsAttr
from ..ir import UNKNOWN_LOC, Module, Operation
from ._patterns import (
    Listener,
    Pattern,
    PatternRewriter,
    constant_of,
    is_constant_op,
    trivially_dead,
)
from ._rewrite import PassError, Rewriter

__all__ = ["GreedyConfig", "apply_patterns", "apply_to_module", "copy_module"]


@dataclass
class GreedyConfig:
    max_iterations: int = 10
    max_num_rewrites: int = -1
    top_down: bool = False
    fail_on_divergence: bool = True


class _Worklist:
    def __init__(self) -> None:
        self.items: list[Operation | None] = []
        self.where: dict[int, int] = {}

    def push(self, op: Operation) -> None:
        if id(op) not in self.where:
            self.where[id(op)] = len(self.items)
            self.items.append(op)

    def pop(self) -> Operation | None:
        while self.items:
            op = self.items.pop()
            if op is not None:
                del self.where[id(op)]
                return op
        return None

    def remove(self, op: Operation) -> None:
        i = self.where.pop(id(op), None)
        if i is not None:
            self.items[i] = None

    def reverse(self) -> None:
        self.items.reverse()
        self.where = {id(o): i for i, o in enumerate(self.items) if o is not None}

    def __bool__(self) -> bool:
        return any(o is not None for o in self.items)


class _Driver(Listener):
    def __init__(self, func: Operation, pats: Sequence[Pattern], config: GreedyConfig) -> None:
        self.func = func
        self.config = config
        self.by_root: dict[str | None, list[Pattern]] = {}
        for p in sorted(pats, key=lambda p: -p.benefit):  # stable: registration order on ties
            self.by_root.setdefault(p.root, []).append(p)
        self.worklist = _Worklist()
        self.rw = PatternRewriter(func, self)
        self.owned: set[int] = set()  # constants the uniquer keeps (MLIR: folder-owned)
        self.uniqued: dict[tuple, Operation] = {}
        self.body = func.regions[0].blocks[0] if func.regions and func.regions[0].blocks \
            else None

    # --- listener ------------------------------------------------------------------------------

    def push(self, op: Operation) -> None:
        cur: Operation | None = op
        while cur is not None and cur is not self.func:
            self.worklist.push(cur)
            blk = cur.parent
            cur = blk.parent.parent if blk is not None and blk.parent is not None else None

    def inserted(self, op: Operation) -> None:
        self.push(op)

    def modified(self, op: Operation) -> None:
        self.push(op)

    def erased(self, op: Operation) -> None:
        for o in op.walk():
            self.worklist.remove(o)
            if id(o) in self.owned:
                self.owned.discard(id(o))
                key = self._key(o)
                if self.uniqued.get(key) is o:
                    del self.uniqued[key]
        for v in op.operands:
            d = v.owner
            if isinstance(d, Operation) and d.parent is not None and len(self.rw.uses.get(v, ())) <= 1:
                self.push(d)

    # --- constants -----------------------------------------------------------------------------

    @staticmethod
    def _key(op: Operation) -> tuple:
        attr: DenseElementsAttr | None = constant_of(op.results[0])
        return (op.dialect, attr, op.results[0].type)

    def insert_known_constant(self, op: Operation) -> bool:
        """Unique ``op`` and hoist it (MLIR OperationFolder::insertKnownConstant); False when it
        was replaced by an earlier equal constant and erased."""
        body = self.body
        if body is None:
            return True
        blk = op.parent
        if id(op) in self.owned:
            if blk is body and body.operations[0] is not op:
                i = body.operations.index(op)
                if id(body.operations[i - 1]) not in self.owned:
                    self.rw.move_before(op, body, 0)
                    op.location = UNKNOWN_LOC
            return True
        key = self._key(op)
        existing = self.uniqued.get(key)
        if existing is not None and existing is not op:
            self.rw.replace_op(op, [existing.results[0]])
            return False
        if blk is not body or (body.operations[0] is not op and id(
                body.operations[body.operations.index(op) - 1]) not in self.owned):
            self.rw.move_before(op, body, 0)
            op.location = UNKNOWN_LOC
        self.uniqued[key] = op
        self.owned.add(id(op))
        return True

    # --- the loop ------------------------------------------------------------------------------

    def _collect(self) -> list[Operation]:
        out: list[Operation] = []

        def post(op: Operation) -> None:
            for r in op.regions:
                for b in r.blocks:
                    for o in list(b.operations):
                        post(o)
            out.append(op)

        def pre(op: Operation) -> None:
            out.append(op)
            for r in op.regions:
                for b in r.blocks:
                    for o in list(b.operations):
                        pre(o)

        for r in self.func.regions:
            for b in r.blocks:
                for o in list(b.operations):
                    (pre if self.config.top_down else post)(o)
        return out

    def iteration(self) -> bool:
        changed = False
        self.worklist = _Worklist()
        for op in self._collect():
            if op.parent is None:
                continue
            if is_constant_op(op):
                if not self.insert_known_constant(op):
                    continue
            self.push(op)  # with its ancestors, as MLIR's addToWorklist
        if self.config.top_down:
            self.worklist.reverse()
        rewrites = 0
        limit = self.config.max_num_rewrites
        while True:
            if limit >= 0 and rewrites >= limit:
                break
            op = self.worklist.pop()
            if op is None:
                break
            if op.parent is None:
                continue
            if trivially_dead(op, self.rw):
                self.rw.erase_op(op)
                changed = True
                continue
            if self.apply(op):
                changed = True
                rewrites += 1
        return changed

    def apply(self, op: Operation) -> bool:
        specific = self.by_root.get(op.name, ())
        generic = self.by_root.get(None, ())
        cands = sorted([*specific, *generic], key=lambda p: -p.benefit) if generic \
            else specific
        for p in cands:
            self.rw.anchor = op
            if p.fn(op, self.rw):
                return True
        return False

    def run(self) -> bool:
        for _ in range(max(1, self.config.max_iterations)):
            if not self.iteration():
                return True
        return False


def copy_module(m: Module) -> Module:
    """A deep copy (the driver rewrites in place; passes never mutate their input)."""
    return Rewriter(lambda rw, op: None).module(m)


def apply_patterns(func: Operation, pats: Sequence[Pattern],
                   config: GreedyConfig | None = None) -> bool:
    """Apply ``pats`` to ``func`` (in place) until a fixed point; True when it converged."""
    return _Driver(func, pats, config or GreedyConfig()).run()


def apply_to_module(module: Module, pats: Sequence[Pattern], config: GreedyConfig | None = None,
                    pass_name: str = "pass") -> Module:
    """A copy of ``module`` with ``pats`` applied greedily to each of its functions."""
    config = config or GreedyConfig()
    out = copy_module(module)
    funcs = [op for op in out.op.walk() if op.name == "func.func"]
    for f in funcs:
        if not f.regions or not f.regions[0].blocks:
            continue
        if not apply_patterns(f, pats, config) and config.fail_on_divergence:
            name = f.attr("sym_name")
            raise PassError(
                f"{pass_name}: the rewrite patterns did not converge on function "
                f"@{getattr(name, 'value', '?')} within {config.max_iterations} iterations",
                f.location)
    return out
