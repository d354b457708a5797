"""VHLO mixed with other dialects (`--allow-other-dialects`, StableHLO 1.11.0): ops of other
dialects (chlo, arith, ...) stay as they are, on builtin types, and
`builtin.unrealized_conversion_cast` ops convert between their values and VHLO values, where
upstream's dialect conversion materializes them:

* a VHLO block argument used by another dialect's op: one cast at the start of the block;
* a VHLO op's result used by another dialect's op, or another dialect's result used by a VHLO
  op: one cast right after the producing op.

Reading back (`vhlo-legalize-to-stablehlo`), the casts between a value and itself disappear.
"""

from __future__ import annotations

from typing import Any

from ...ir import Block, Module, Operation, Value
from .text import to_builtin_type, to_vhlo_type
from .types import VhloType

__all__ = ["insert_casts", "remove_casts", "CAST"]

CAST = "builtin.unrealized_conversion_cast"


def _is_vhlo_op(op: Operation) -> bool:
    return op.name.startswith("vhlo.")


def _is_vhlo_value(v: Value) -> bool:
    return isinstance(v.type, VhloType)


def insert_casts(module: Module) -> Module:
    """Insert the casts between VHLO and other dialects' values, in place."""
    root = module.op
    # users of each value, in program order
    users: dict[int, list[tuple[Operation, int]]] = {}
    for op in root.walk():
        for i, v in enumerate(op.operands):
            users.setdefault(id(v), []).append((op, i))

    def cast_after(value: Value, result_type: Any, block: Block, index: int) -> Operation:
        c = Operation(CAST, [value], [result_type])
        c.parent = block
        block.operations.insert(index, c)
        return c

    for op in list(root.walk()):
        for r in op.regions:
            for b in r.blocks:
                # block arguments with VHLO types used by non-VHLO ops
                for a in b.arguments:
                    if not _is_vhlo_value(a):
                        continue
                    others = [(u, i) for u, i in users.get(id(a), ()) if not _is_vhlo_op(u)
                              and u.name != CAST]
                    if others:
                        c = cast_after(a, to_builtin_type(a.type), b, 0)
                        for u, i in others:
                            u.operands[i] = c.result
                k = 0
                while k < len(b.operations):
                    o = b.operations[k]
                    k += 1
                    if o.name == CAST:
                        continue
                    vhlo_producer = _is_vhlo_op(o)
                    for res in o.results:
                        if vhlo_producer:
                            bad = [(u, i) for u, i in users.get(id(res), ())
                                   if not _is_vhlo_op(u) and u.name != CAST]
                            if not bad or not _is_vhlo_value(res):
                                continue
                            c = cast_after(res, to_builtin_type(res.type), b, k)
                        else:
                            bad = [(u, i) for u, i in users.get(id(res), ()) if _is_vhlo_op(u)]
                            if not bad or _is_vhlo_value(res):
                                continue


                            c = cast_after(res, to_vhlo_type(res.type, True), b, k)
                        k += 1
                        for u, i in bad:
                            u.operands[i] = c.result
    return module


def remove_casts(module: Module) -> Module:
    """Drop the casts whose operand and result have the same type (after the types went back
    to builtin), in place."""
    repl: dict[int, Value] = {}
    dead: list[Operation] = []
    for op in module.op.walk():
        if op.name == CAST and len(op.operands) == 1 and len(op.results) == 1:
            src = repl.get(id(op.operands[0]), op.operands[0])
            if src.type == op.results[0].type:
                repl[id(op.results[0])] = src
                dead.append(op)
    if not repl:
        return module
    for op in module.op.walk():
        if op.operands:
            op.operands = [repl.get(id(v), v) for v in op.operands]
    for op in dead:
        if op.parent is not None:
            op.parent.operations.remove(op)
    return module
