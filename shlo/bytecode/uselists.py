"""Use-list orders: MLIR records, from bytecode version 3, the order of a value's uses when it
differs from the order reading the IR back would give (the reverse of the order in which a
pre-order walk meets the uses).

shlo's IR has no use lists; IR read or parsed, and IR converted op by op in program order, has
the reference order. Rewrites that replace an op by a new one (the VHLO version upgrades and
downgrades) leave other orders, which :func:`simulate` computes as MLIR's rewriter leaves them:
the new op's operand uses are pushed to the front of their values' lists when it is created;
when the rewrites are committed, each replaced result's uses move one by one to the front of the
new result (reversing them), and the old ops' uses are dropped.
"""

from __future__ import annotations

from typing import Any

from ..ir import Operation

__all__ = ["simulate", "encode"]


def simulate(root: Operation, rewritten: list[Operation]) -> dict[int, list[tuple[Any, int]]]:
    """id(value) -> its uses ``(op, operand index)`` in use-list order, for the values whose
    order the rewrites ``rewritten`` (in the order applied) may have changed."""
    if not rewritten:
        return {}
    changed = {id(op) for op in rewritten}
    touched: dict[int, Any] = {}
    for op in rewritten:
        for v in op.operands:
            touched[id(v)] = v
        for r in op.results:
            touched[id(r)] = r
    produced_by_rewrite = {id(r) for op in rewritten for r in op.results}

    def key(v: Any) -> tuple[int, str]:
        return (id(v), "old" if id(v) in produced_by_rewrite else "same")

    lists: dict[tuple[int, str], list[tuple[str, Any, int]]] = {}
    for vid in touched:
        k = (vid, "old" if vid in produced_by_rewrite else "same")
        lists[k] = []
    for op in root.walk():
        tag = "old" if id(op) in changed else "final"
        for i, v in enumerate(op.operands):
            lst = lists.get(key(v))
            if lst is not None:
                lst.append((tag, op, i))
    for lst in lists.values():
        lst.reverse()
    for op in rewritten:
        for i, v in enumerate(op.operands):
            lists[key(v)].insert(0, ("new", op, i))
    for op in rewritten:
        for r in op.results:
            old = lists[(id(r), "old")]
            new = lists.setdefault((id(r), "new"), [])
            lists[(id(r), "new")] = list(reversed(old)) + new
            lists[(id(r), "old")] = []
    out: dict[int, list[tuple[Any, int]]] = {}
    for (vid, which), lst in lists.items():
        if which == "old":
            continue
        out[vid] = [(op, i) for tag, op, i in lst if tag != "old"]
    return out


def _dense_map_order(keys: list[int]) -> list[int]:
    """The iteration order of an llvm::DenseMap<unsigned, ...> holding ``keys`` (inserted in
    order): buckets by hash `key * 37`, quadratic probing, 64 buckets until 3/4 full."""
    n = 64
    while len(keys) * 4 >= n * 3:
        n *= 2
    buckets: list[int | None] = [None] * n
    for k in keys:
        b = (k * 37) & (n - 1)
        probe = 1
        while buckets[b] is not None:
            b = (b + probe) & (n - 1)
            probe += 1
        buckets[b] = k
    return [k for k in buckets if k is not None]


def encode(e: Any, values: list[Any], orders: dict[int, list[tuple[Any, int]]],
           op_ids: dict[int, int]) -> bool:
    """Write the use-list orders of ``values`` (an op's results or a block's arguments) that
    are not the reference order (`writeUseListOrders`); True when something was written."""
    entries: dict[int, list[int]] = {}
    for idx, v in enumerate(values):
        uses = orders.get(id(v))
        if uses is None or len(uses) < 2:
            continue
        ids = [(op_ids[id(op)] << 32) | i for op, i in uses]
        if all(a > b for a, b in zip(ids, ids[1:])):
            continue
        pairs = sorted(enumerate(ids), key=lambda p: -p[1])
        entries[idx] = [p[0] for p in pairs]
    if not entries:
        return False
    if len(values) != 1:
        e.varint(len(entries))
    for idx in _dense_map_order(list(entries)):
        order = entries[idx]
        shuffled = sum(1 for i, x in enumerate(order) if i != x)
        pair = shuffled < len(order) // 2
        if len(values) != 1:
            e.varint(idx)
        if pair:
            e.varint_flag(shuffled * 2, True)
            for i, x in enumerate(order):
                if i != x:
                    e.varint(x)
                    e.varint(i)
        else:
            e.varint_flag(len(order), False)
            for x in order:
                e.varint(x)
    return True
