"""The machinery passes share: rebuild a module op by op, with a pattern deciding each op.

A pass is a pure function ``Module -> Module``: :class:`Rewriter` walks the input module and
builds a new one (the input is never mutated). For each op, the pass's *pattern* either emits
replacement ops (through the rewriter's builder methods) and returns the values that replace
the op's results, or returns None to have the op cloned (operands remapped, regions rebuilt
recursively with the same pattern, result types passed through ``type_map``).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence

import numpy as np

from ..attributes import DenseArrayAttr, DenseElementsAttr, TypeAttr
from ..errors import ShloError
from ..ir import Block, Location, Module, Operation, Region, Value, UNKNOWN_LOC
from ..registry import SIDE_EFFECTS, names_with
from ..types import (ElementType, FunctionType, TensorType, TupleType, Type, element_type)

__all__ = ["Rewriter", "Pattern", "PassError", "map_type", "const_attr", "i64_array"]

Pattern = Callable[["Rewriter", Operation], "Sequence[Value] | None"]


class PassError(ShloError):
    """A pass could not transform the program (the message names the op and the reason)."""


def map_type(t: Type, fn: Callable[[TensorType], Type]) -> Type:
    """Apply ``fn`` to every tensor type inside ``t`` (tuples and function types too)."""
    if isinstance(t, TensorType):
        return fn(t)
    if isinstance(t, TupleType):
        return TupleType(tuple(map_type(x, fn) for x in t.types))
    if isinstance(t, FunctionType):
        return FunctionType(tuple(map_type(x, fn) for x in t.inputs),
                            tuple(map_type(x, fn) for x in t.results))
    return t


def const_attr(values: Any, et: ElementType | str, shape: Sequence[int] | None = None
               ) -> DenseElementsAttr:
    """A dense elements attribute of element type ``et`` holding ``values``."""
    et = element_type(et) if isinstance(et, str) else et
    arr = np.asarray(values)
    if shape is not None:
        arr = np.broadcast_to(arr, tuple(shape))
    if arr.dtype != et.dtype:
        if et.dtype.kind not in "iubfc" and arr.dtype.kind in "iu":  # int4 & co
            arr = arr.astype(np.int16)
        arr = arr.astype(et.dtype)
    # (np.ascontiguousarray would make a 0-d array 1-d)
    return DenseElementsAttr(TensorType(tuple(arr.shape), et), np.array(arr, order="C"))


def i64_array(values: Iterable[int]) -> DenseArrayAttr:
    """`array<i64: ...>`."""
    return DenseArrayAttr(element_type("i64"), tuple(int(v) for v in values))


_PLAIN = {"divide": "divide", "multiply": "multiply", "add": "add", "subtract": "subtract"}


class Rewriter:
    """Rebuilds a module with ``pattern`` deciding each op (see the module docstring).

    ``type_map`` converts the types of cloned results, block arguments and function signatures
    (identity by default).
    """

    def __init__(self, pattern: Pattern, type_map: Callable[[Type], Type] | None = None) -> None:
        self.pattern = pattern
        self.type_map = type_map or (lambda t: t)
        self.values: dict[Value, Value] = {}
        self.block: Block | None = None
        self.loc: Location = UNKNOWN_LOC
        self.current: Operation | None = None

    # --- walking -------------------------------------------------------------------------------

    def module(self, m: Module) -> Module:
        new_op = self.clone_structure(m.op)
        return Module(new_op, m.filename, dict(m.aliases))

    def clone_structure(self, op: Operation) -> Operation:
        """Clone ``op`` detached (not appended anywhere), rebuilding its regions."""
        props = dict(op.properties)
        if op.name == "func.func" and isinstance(op.attr("function_type"), TypeAttr):
            ft = op.attr("function_type").type
            key = "function_type" if "function_type" in op.properties else None
            new_ft = TypeAttr(self.type_map(ft))
            if key:
                props[key] = new_ft
        attrs = dict(op.attributes)
        if op.name == "func.func" and "function_type" in attrs:
            attrs["function_type"] = TypeAttr(self.type_map(attrs["function_type"].type))
        regions = [self.region(r) for r in op.regions]
        new = Operation(op.name, [self.get(v) for v in op.operands],
                        [self.type_map(v.type) for v in op.results], props, attrs, regions,
                        location=op.location)
        for old, nv in zip(op.results, new.results):
            nv.name = old.name
            self.values[old] = nv
        return new

    def region(self, r: Region) -> Region:
        return Region([self.rebuild_block(b) for b in r.blocks])

    def rebuild_block(self, b: Block) -> Block:
        nb = Block([self.type_map(a.type) for a in b.arguments], label=b.label)
        for old, new in zip(b.arguments, nb.arguments):
            new.name = old.name
            self.values[old] = new
        saved, saved_loc, saved_cur = self.block, self.loc, self.current
        self.block = nb
        try:
            for op in b.operations:
                self.rewrite(op)
        finally:
            self.block, self.loc, self.current = saved, saved_loc, saved_cur
        return nb

    def rewrite(self, op: Operation) -> None:
        self.loc = op.location
        self.current = op
        res = self.pattern(self, op)
        if res is None:
            self.clone(op)
            return
        res = list(res)
        if len(res) != len(op.results):
            raise PassError(f"internal: {op.name} rewritten to {len(res)} values, expected "
                            f"{len(op.results)}", op.location)
        for old, new in zip(op.results, res):
            self.values[old] = new

    # --- building ------------------------------------------------------------------------------

    def get(self, v: Value) -> Value:
        """The new value standing for ``v`` of the input module."""
        return self.values.get(v, v)

    def clone(self, op: Operation, result_types: Sequence[Type] | None = None,
              operands: Sequence[Value] | None = None, name: str | None = None,
              properties: dict[str, Any] | None = None) -> Operation:
        """Append a copy of ``op`` (regions rebuilt with the pattern) and map its results."""
        assert self.block is not None
        if op.name == "func.func" and result_types is None and operands is None:
            new = self.clone_structure(op)
            self.block.append(new)
            return new
        regions = [self.region(r) for r in op.regions]
        types = list(result_types) if result_types is not None else \
            [self.type_map(v.type) for v in op.results]
        new = Operation(name or op.name,
                        list(operands) if operands is not None else
                        [self.get(v) for v in op.operands],
                        types, dict(op.properties if properties is None else properties),
                        dict(op.attributes), regions, location=op.location)
        for old, nv in zip(op.results, new.results):
            nv.name = old.name
            self.values[old] = nv
        self.block.append(new)
        return new

    def emit(self, name: str, operands: Sequence[Value], result_types: Sequence[Type],
             properties: dict[str, Any] | None = None, attributes: dict[str, Any] | None = None,
             regions: Sequence[Region] | None = None) -> Operation:
        """Append a new op at the current position (location: the op being rewritten)."""
        op = Operation(name, list(operands), list(result_types), properties or {},
                       attributes or {}, list(regions or []), location=self.loc)
        assert self.block is not None
        self.block.append(op)
        return op

    def emit1(self, name: str, operands: Sequence[Value], result_type: Type,
              properties: dict[str, Any] | None = None) -> Value:
        return self.emit(name, operands, [result_type], properties).results[0]

    def constant(self, values: Any, et: ElementType | str,
                 shape: Sequence[int] | None = None) -> Value:
        attr = const_attr(values, et, shape)
        return self.emit1("stablehlo.constant", [], attr.type, {"value": attr})

    def convert(self, v: Value, et: ElementType | str) -> Value:
        et = element_type(et) if isinstance(et, str) else et
        t = v.type
        assert isinstance(t, TensorType)
        return self.emit1("stablehlo.convert", [v], TensorType(t.shape, et, t.encoding))

    def unary(self, name: str, v: Value) -> Value:
        return self.emit1(name, [v], v.type)

    def binary(self, name: str, a: Value, b: Value) -> Value:
        return self.emit1(name, [a, b], a.type)

    def broadcast_binary(self, name: str, big: Value, small: Value,
                         broadcast_dimensions: Sequence[int] | None = None,
                         swap: bool = False) -> Value:
        """``chlo.broadcast_<name>(big, small)`` (or ``(small, big)`` when ``swap``) with the
        result type of ``big``."""
        bt, st = big.type, small.type
        if isinstance(bt, TensorType) and isinstance(st, TensorType) and bt.shape == () \
                and st.shape == ():  # scalars (region bodies): no broadcast needed
            ops = [small, big] if swap else [big, small]
            return self.emit1(f"stablehlo.{_PLAIN.get(name, name)}", ops, big.type)
        props: dict[str, Any] = {}
        if broadcast_dimensions:
            props["broadcast_dimensions"] = i64_array(broadcast_dimensions)
        ops = [small, big] if swap else [big, small]
        return self.emit1(f"chlo.broadcast_{name}", ops, big.type, props)

    def clamp(self, lo: Value, v: Value, hi: Value) -> Value:
        return self.emit1("stablehlo.clamp", [lo, v, hi], v.type)


def walk_block_ops(block: Block) -> Iterable[Operation]:
    for op in block.operations:
        yield from op.walk()


# --- dead-code elimination -----------------------------------------------------------------------

_STATEFUL = frozenset({"stablehlo.rng", "stablehlo.composite", "stablehlo.while"})
"""Kept though not SIDE_EFFECTS: shlo keys `rng` by its position in the program, a composite's
decomposition is another function, and a while loop may not terminate."""


def removable(op: Operation) -> bool:
    """True for ops without side effects (removable when their results are unused): no
    SIDE_EFFECTS op (registry) nested in it, nor a stateful one."""
    if not op.results:
        return False
    if not (op.dialect in ("stablehlo", "chlo") or op.name in ("tosa.const", "tosa.rescale")):
        return False
    effects = names_with(SIDE_EFFECTS)
    return not any(o.name in effects or o.name in _STATEFUL for o in op.walk())


def dead_code_elimination(module: Module) -> Module:
    """Remove side-effect-free ops whose results are unused, in place (returns ``module``)."""
    uses: dict[Value, int] = {}
    for op in module.walk():
        for v in op.operands:
            uses[v] = uses.get(v, 0) + 1

    def block(b: Block) -> None:
        kept: list[Operation] = []
        for op in reversed(b.operations):
            if removable(op) and all(uses.get(r, 0) == 0 for r in op.results):
                for inner in op.walk():
                    for v in inner.operands:
                        uses[v] -= 1
                continue
            for r in op.regions:
                for ib in r.blocks:
                    block(ib)
            kept.append(op)
        kept.reverse()
        b.operations = kept

    for r in module.op.regions:
        for b in r.blocks:
            block(b)
    return module
