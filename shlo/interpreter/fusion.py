"""Element-wise fusion: a chain of element-wise ops on large tensors evaluated block by block.

Unfused, each op of ``y = exp(x * a + b) / c ...`` reads and writes whole tensors: with 10^8
elements every intermediate is 400 MB of fresh memory, written once and read once from RAM.
Fused, the chain runs over blocks of :data:`BLOCK_BYTES` (a few hundred KiB at most live at
once, in cache): each member op's own kernel is called on the block's slices, only the values
used after the chain are written out whole. The blocks are spread over the cores in pieces
(:mod:`shlo.ops._pool`; numpy releases the GIL in its loops).

Bit for bit the unfused result: every element-wise kernel computes each element from the same
elements of its operands, whatever the slice (tests/interpreter/test_fusion.py compares fused
and unfused runs of every element-wise op). What is fused (:func:`plan`):

* ops of the ``ELEMENTWISE`` trait in the stablehlo dialect, without regions, with one result,
  whose operands all have the result's static shape, none quantized, and
  ``broadcast_in_dim`` of a 0-d value (a splat, as JAX writes ``x * 2.0``);
* in block order, one open chain per shape: ops that do not read a chain's values, among them
  the members of chains of other shapes, may sit between its members (they run where they
  are, before the chain, which runs at its last member's place); an op that reads one of its
  values, other than a member of the chain, ends it. JAX's optimizer updates interleave the
  parameters (the first moments of all, then the second moments...): each parameter's update
  is one chain;
* at least two members, of at least :data:`MIN_ELEMENTS` elements.

Not fused when an observer (shlo.debug's trace, profile) watches the run: it sees every op.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from ..errors import ExecutionError, ShloError, locate, runtime_location
from ..ir import Block, Operation, Value
from ..registry import ELEMENTWISE, names_with
from ..ops import _pool
from ..types import TensorType, is_quantized

__all__ = ["BLOCK_BYTES", "MIN_ELEMENTS", "Chain", "plan", "fused_kernel"]

BLOCK_BYTES = 1 << 18
"""Bytes of the widest value of a chain per block (256 KiB: measured best of 32 KiB-2 MiB on
10^6 and 10^7 f32 elements, CPU time; a few live blocks stay in L2/L3)."""
MIN_ELEMENTS = 1 << 20
"""Chains over fewer elements run unfused: the 10-op chain of benchmarks/issue17_bench.py,
fused against unfused in one process, wall time: 2.5e5 elements 1.95 vs 1.43 ms, 1e6 5.1 vs
5.1 ms, 4e6 22.8 vs 26.5 ms, 1.6e7 190 vs 211 ms (smaller arrays stay in cache unfused, and
each block costs a call per member)."""

_SPLAT = "stablehlo.broadcast_in_dim"


@dataclass
class Chain:
    """Element-wise ops run together: ``ops`` in block order, reading ``inputs`` (values from
    outside the chain) and giving ``outputs`` (their values used after it)."""

    shape: tuple[int, ...]
    ops: list[Operation] = field(default_factory=list)
    inputs: list[Value] = field(default_factory=list)
    outputs: list[Value] = field(default_factory=list)


def _static_shape(v: Value) -> tuple[int, ...] | None:
    t = v.type
    if not isinstance(t, TensorType) or t.shape is None or any(d is None for d in t.shape):
        return None
    if is_quantized(t):
        return None
    return tuple(t.shape)  # type: ignore[arg-type]


def _member_shape(op: Operation, elementwise: frozenset[str]) -> tuple[int, ...] | None:
    """The shape of the chain ``op`` can join, or None when it cannot join one."""
    if op.regions or len(op.results) != 1 or not op.name.startswith("stablehlo."):
        return None
    shape = _static_shape(op.results[0])
    if shape is None:
        return None
    if op.name == _SPLAT:
        operand = op.operands[0].type if len(op.operands) == 1 else None
        ok = isinstance(operand, TensorType) and operand.shape == () and \
            not is_quantized(operand)
        return shape if ok else None
    if op.name not in elementwise or not op.operands:
        return None
    if any(_static_shape(v) != shape for v in op.operands):
        return None
    return shape


def _reads(op: Operation) -> set[int]:
    """Ids of the values ``op`` reads: its operands and those of the ops in its regions."""
    out = {id(v) for v in op.operands}
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                out |= _reads(inner)
    return out


def plan(block: Block) -> list[Chain]:
    """The chains of ``block`` worth fusing (see the module docstring)."""
    elementwise = frozenset(names_with(ELEMENTWISE))
    chains: list[Chain] = []
    open_: dict[tuple[int, ...], Chain] = {}  # one open chain per shape
    owner: dict[int, tuple[int, ...]] = {}  # id of an open chain's result -> its shape

    def close(shape: tuple[int, ...]) -> None:
        chain = open_.pop(shape)
        for op in chain.ops:
            owner.pop(id(op.results[0]), None)
        if len(chain.ops) >= 2:
            chains.append(chain)

    for op in block.operations:
        shape = _member_shape(op, elementwise)
        if shape is not None and math.prod(shape) < MIN_ELEMENTS:
            shape = None  # (a chain of it would not be kept)
        # an op reading an open chain's value ends that chain (it runs before the op), unless
        # the op joins that very chain
        if owner:
            for s in {owner[i] for i in _reads(op) if i in owner}:
                if s != shape:
                    close(s)
        if shape is not None:
            chain = open_.get(shape)
            if chain is None:
                chain = open_[shape] = Chain(shape)
            chain.ops.append(op)
            owner[id(op.results[0])] = shape
    for s in list(open_):
        close(s)
    for chain in chains:
        _wire(chain, block)
    return [c for c in chains if c.outputs]


def _wire(chain: Chain, block: Block) -> None:
    """Fill ``chain.inputs`` and ``chain.outputs``."""
    members = {id(op) for op in chain.ops}
    results = {id(op.results[0]): op.results[0] for op in chain.ops}
    seen: set[int] = set()
    for op in chain.ops:
        for v in op.operands:
            if id(v) not in results and id(v) not in seen:
                seen.add(id(v))
                chain.inputs.append(v)
    read_after: set[int] = set()
    for op in block.operations:
        if id(op) not in members:
            read_after |= _reads(op)
    chain.outputs = [v for k, v in results.items() if k in read_after]


def fused_kernel(chain: Chain, kernels: Sequence[Callable[..., Any]]) -> Callable[..., Any]:
    """The kernel running ``chain`` block by block; ``kernels`` are its members' prepared
    kernels (in ``chain.ops`` order). Takes the chain's inputs, returns its outputs."""
    slot: dict[int, int] = {id(v): i for i, v in enumerate(chain.inputs)}
    for op in chain.ops:
        slot[id(op.results[0])] = len(slot)
    steps: list[tuple[Callable[..., Any], tuple[int, ...], int, bool]] = []
    last_use: dict[int, int] = {}
    for k, (op, kern) in enumerate(zip(chain.ops, kernels)):
        ins = tuple(slot[id(v)] for v in op.operands)
        for i in ins:
            last_use[i] = k
        direct = getattr(kern, "direct", None)
        steps.append((direct or kern, ins, slot[id(op.results[0])], direct is None))
    out_slots = [slot[id(v)] for v in chain.outputs]
    keep = set(out_slots)
    # values dead after step k (not outputs): dropped so the live blocks stay few
    dead: list[tuple[int, ...]] = [() for _ in steps]
    for s, k in last_use.items():
        if s not in keep:
            dead[k] += (s,)
    splats = [op.name == _SPLAT for op in chain.ops]
    shape = chain.shape
    n = math.prod(shape)
    ops = chain.ops
    width = max([_itemsize(v) for v in chain.inputs] + [_itemsize(op.results[0]) for op in ops])
    block = max(1024, BLOCK_BYTES // max(width, 1))

    out_dtypes = [_dtype(v) for v in chain.outputs]
    starts = list(range(0, n, block))

    def blocks(flat: list[np.ndarray], outs: list[np.ndarray | None], piece: list[int]) -> None:
        """Compute the blocks starting at ``piece`` into ``outs`` (allocated at the first
        block when their dtype is not known in advance: then all blocks are one piece)."""
        vals: list[Any] = [None] * len(slot)
        k = 0
        try:
            for start in piece:
                stop = min(n, start + block)
                vals[:len(flat)] = [a[start:stop] if a.ndim else a for a in flat]
                for k, (fn, ins, out, tupled) in enumerate(steps):
                    if splats[k]:
                        vals[out] = np.full(stop - start, vals[ins[0]])
                    else:
                        r = fn(*[vals[i] for i in ins])
                        vals[out] = r[0] if tupled else r
                    for d in dead[k]:
                        vals[d] = None
                for j, s in enumerate(out_slots):
                    v = vals[s]
                    o = outs[j]
                    if o is None:
                        o = outs[j] = np.empty(n, np.asarray(v).dtype)
                    o[start:stop] = v
        except ShloError as e:
            raise locate(e, ops[k])
        except Exception as e:
            raise ExecutionError(f"'{ops[k].name}' op: {type(e).__name__}: {e}",
                                 runtime_location(ops[k])) from e

    def run(*args: Any) -> tuple[Any, ...]:
        flat = [np.asarray(a).reshape(-1) if np.ndim(a) else np.asarray(a) for a in args]
        if None in out_dtypes:
            outs: list[np.ndarray | None] = [None] * len(out_slots)
            blocks(flat, outs, starts)
        else:  # the cores take pieces of blocks in turn (numpy releases the GIL in its loops)
            outs = [np.empty(n, dt) for dt in out_dtypes]
            _pool.split(lambda piece: blocks(flat, outs, piece), (starts,), 1)
        return tuple(o.reshape(shape) for o in outs)  # type: ignore[union-attr]

    if len(out_slots) == 1:
        run.direct = lambda *args: run(*args)[0]  # type: ignore[attr-defined]
    return run


def _dtype(v: Value) -> np.dtype | None:
    """The numpy dtype of ``v``'s elements, when its type has one."""
    try:
        return np.dtype(v.type.element_type.dtype)  # type: ignore[union-attr]
    except Exception:
        return None


def _itemsize(v: Value) -> int:
    t = v.type
    try:
        return int(np.dtype(t.element_type.dtype).itemsize)  # type: ignore[union-attr]
    except Exception:
        return 8
