"""Distributed ops: replica_id, partition_id, after_all, the collectives (all_gather,
all_reduce, reduce_scatter, all_to_all, collective_permute, collective_broadcast,
collective_reduce), send, recv, infeed, outfeed, and the test op `interpreter.run_parallel`
(spec sections of the same names, "Parallel execution" and "Collective ops").

Each collective decodes its attributes once (prepare) and, when run, finds its process group
(memoised per grid size), then meets the other members through
:meth:`~shlo.interpreter.process_grid.ProcessGrid.rendezvous`: the last member to arrive
computes the results of the whole group once, with whole-array numpy calls (a reduction body
that is a single add/multiply/max/min/and/or/xor is a numpy ufunc; any other body is the
compiled region called on whole arrays). A group of one process never waits.

Data-moving collectives are registered ``quantized_aware``: they move storage values, and the
zeros they produce for processes without a source are the zero point (spec: `quantize(0)`).
"""

from __future__ import annotations

from collections import deque
from typing import Any, Callable, Sequence

import numpy as np

from ..attributes import ArrayAttr, BoolAttr, DenseElementsAttr, StructAttr, ints
from ..errors import ExecutionError
from ..interpreter.process_grid import (
    DEFAULT_TIMEOUT, ProcessId, process_groups, process_label, run_programs,
)
from ..ir import Operation, function_type
from ..types import QuantizedType, TensorType, Type
from ._regions import ufunc_for
from .registry import TOKEN, kernel

Run = Callable[..., Sequence[Any]]
Values = tuple[Any, ...]


# --- attributes ------------------------------------------------------------------------------


def channel_id(op: Operation) -> int:
    """`channel_handle = #stablehlo.channel_handle<handle = N, type = T>`'s handle (0 if absent)."""
    h = op.attr("channel_handle")
    if h is None:
        return 0
    if isinstance(h, StructAttr):
        return int(h.get("handle", 0))
    get = getattr(h, "get", None)
    if get is not None:
        v = get("handle", 0)
        return int(getattr(v, "value", v))
    return int(getattr(h, "value", h))


def flag(op: Operation, name: str) -> bool:
    """A boolean attribute: present as a unit attribute, or `true`/`false`."""
    a = op.attr(name)
    if a is None:
        return False
    if isinstance(a, BoolAttr):
        return bool(a.value)
    v = getattr(a, "value", True)
    return bool(v)


def id_groups(op: Operation, name: str = "replica_groups") -> list[list[int]]:
    """A 2-D integer attribute (`replica_groups`, `source_target_pairs`) as lists of ids."""
    a = op.attr(name)
    if a is None:
        return []
    if isinstance(a, DenseElementsAttr):
        arr = np.asarray(a.array)
        if arr.size == 0:
            return []
        if arr.ndim == 1:
            arr = arr.reshape(1, -1)
        return [[int(x) for x in row] for row in arr.reshape(arr.shape[0], -1)]
    if isinstance(a, ArrayAttr):
        return [list(ints(g)) for g in a]  # type: ignore[arg-type]
    return [list(g) for g in a]


def reduction_strategy(op: Operation) -> str:
    """all_gather, all_reduce, reduce_scatter, collective_reduce: spec's process-group choice."""
    cid = channel_id(op)
    if flag(op, "use_global_device_ids"):
        if cid <= 0:
            raise ValueError("use_global_device_ids requires a positive channel_id")
        return "flattened_ids"
    return "cross_replica_and_partition" if cid > 0 else "cross_replica"


def simple_strategy(op: Operation) -> str:
    """all_to_all, collective_broadcast, collective_permute: spec's process-group choice."""
    return "cross_partition" if channel_id(op) > 0 else "cross_replica"


def _int_attr(op: Operation, name: str) -> int:
    a = op.attr(name)
    if a is None:
        raise ValueError(f"missing attribute `{name}`")
    return int(getattr(a, "value", a))


class Groups:
    """The process groups of one op, memoised per grid size."""

    def __init__(self, op: Operation, strategy: str, groups: list[list[int]]) -> None:
        self.op = op
        self.strategy = strategy
        self.groups = groups
        self._memo: dict[tuple[int, int], dict[ProcessId, tuple[ProcessId, ...]]] = {}

    def table(self, num_replicas: int, num_partitions: int) -> dict[ProcessId,
                                                                    tuple[ProcessId, ...]]:
        key = (num_replicas, num_partitions)
        t = self._memo.get(key)
        if t is None:
            try:
                pgs = process_groups(self.strategy, self.groups, num_replicas, num_partitions)
            except ValueError as e:
                raise ExecutionError(f"'{self.op.name}' op: {e}", self.op.location) from None
            t = {}
            for g in pgs:
                for p in g:
                    if p in t:
                        raise ExecutionError(f"'{self.op.name}' op: {process_label(p)} is in "
                                             f"more than one process group ({self.strategy})",
                                             self.op.location)
                    t[p] = tuple(g)
            self._memo[key] = t
        return t

    def find(self, process: Any) -> tuple[ProcessId, ...] | None:
        """The group of ``process`` (a ProcessContext), or None."""
        t = self.table(process.num_replicas, process.num_partitions)
        return t.get((process.replica_id, process.partition_id))

    def of(self, process: Any) -> tuple[ProcessId, ...]:
        """The group of ``process``; an error when it is in none."""
        g = self.find(process)
        if g is None:
            me = (process.replica_id, process.partition_id)
            raise ExecutionError(f"'{self.op.name}' op: {process_label(me)} is in none of the "
                                 f"process groups ({self.strategy} of {self.groups})",
                                 self.op.location)
        return g


def meet(op: Operation, process: Any, group: tuple[ProcessId, ...], value: Any,
         combine: Callable[[tuple[ProcessId, ...], list[Any]], list[Any]],
         cid: int = 0) -> Any:
    """Contribute ``value`` to ``op`` in ``group``; return this process's result."""
    if len(group) == 1:
        return combine(group, [value])[0]
    grid = process.grid
    if grid is None:
        raise ExecutionError(f"'{op.name}' op: the group has {len(group)} processes but the "
                             f"program runs without a process grid", op.location)
    me = (process.replica_id, process.partition_id)
    return grid.rendezvous(op, group, me, value, lambda vs: combine(group, vs), cid)


def shared(a: Any) -> np.ndarray:
    """A read-only view: one result array is handed to several processes."""
    v = np.asarray(a).view()
    v.flags.writeable = False
    return v


def _desc(a: Any) -> str:
    a = np.asarray(a)
    return "x".join(str(d) for d in a.shape) + ("x" if a.shape else "") + str(a.dtype)


def check_same(op: Operation, group: Sequence[ProcessId], values: list[Values]) -> None:
    """Every member gave operands of the same shapes and dtypes (else an ExecutionError)."""
    first = [(np.shape(x), np.asarray(x).dtype) for x in values[0]]
    if all([(np.shape(x), np.asarray(x).dtype) for x in v] == first for v in values[1:]):
        return
    lines = [f"  {process_label(p)}: " + ", ".join(_desc(x) for x in v)
             for p, v in zip(group, values)]
    raise ExecutionError(f"'{op.name}' op: the processes of the group gave operands of "
                         f"different shapes:\n" + "\n".join(lines), op.location)


def zeros(t: Type, like: Any = None) -> np.ndarray:
    """`broadcast_in_dim(constant(0 or quantize(0)), [], type)` for tensor type ``t``."""
    assert isinstance(t, TensorType)
    shape = t.shape if t.is_static else np.shape(like)
    et = t.element_type
    if isinstance(et, QuantizedType):
        zp = np.asarray(et.zero_points, dtype=np.int64)
        if et.quantization_dimension is not None and zp.size > 1:
            view = [1] * len(shape)  # type: ignore[arg-type]
            view[et.quantization_dimension] = zp.size
            zp = zp.reshape(view)
        return shared(np.broadcast_to(zp.astype(et.dtype), shape))  # type: ignore[arg-type]
    return shared(np.zeros(shape, dtype=t.dtype))  # type: ignore[arg-type]


# --- reductions --------------------------------------------------------------------------------

_SUBBYTE_INTS = frozenset({"int2", "int4", "uint2", "uint4"})


def reducer(body: Any, dtype: np.dtype) -> Callable[[list[np.ndarray]], np.ndarray]:
    """Fold a list of arrays with the reduction ``body`` (a compiled region).

    The schedule is a left fold in group order, ``((v0 . v1) . v2) ...`` (the spec leaves the
    tree implementation-defined). A single-op body that numpy computes exactly as the spec
    does (:func:`~shlo.ops._regions.ufunc_for`) uses the ufunc, accumulating in place; any
    other body (and maximum/minimum on floats, for the order of signed zeros, and the sub-byte
    integer types, for wrapping) is called once per member on whole arrays.
    """
    name = body.single_op
    uf = ufunc_for(name, dtype) if name else None
    if dtype.name in _SUBBYTE_INTS or (
            name in ("stablehlo.maximum", "stablehlo.minimum") and dtype.kind in "fV"):
        uf = None
    if uf is not None:
        def fold(arrays: list[np.ndarray]) -> np.ndarray:
            if len(arrays) == 1:
                return np.asarray(arrays[0])
            acc = np.asarray(uf(arrays[0], arrays[1]))
            if acc.dtype != dtype:
                acc = acc.astype(dtype)
            for a in arrays[2:]:
                uf(acc, a, out=acc)
            return acc

        return fold

    def fold_body(arrays: list[np.ndarray]) -> np.ndarray:
        acc = arrays[0]
        for a in arrays[1:]:
            acc = body(acc, a)[0]
        acc = np.asarray(acc)
        return acc if acc.dtype == dtype else acc.astype(dtype)

    return fold_body


def body_dtype(body: Any) -> np.dtype:
    t = body.block.arguments[0].type
    return t.element_type.dtype


# --- process identity and tokens -------------------------------------------------------------


@kernel("stablehlo.replica_id")
def replica_id(op: Operation, ctx: Any) -> Run:
    """Spec "replica_id": the replica of the current process (0 on one process)."""
    dtype = op.results[0].type.dtype
    process = ctx.process

    def run() -> Values:
        return (np.array(process.replica_id, dtype=dtype),)

    return run


@kernel("stablehlo.partition_id")
def partition_id(op: Operation, ctx: Any) -> Run:
    """Spec "partition_id": the partition of the current process (0 on one process)."""
    dtype = op.results[0].type.dtype
    process = ctx.process

    def run() -> Values:
        return (np.array(process.partition_id, dtype=dtype),)

    return run


@kernel("stablehlo.after_all", "stablehlo.create_token")
def after_all(op: Operation, ctx: Any) -> Run:
    """Spec "after_all": a token after every input token (execution here is in order)."""
    out = (TOKEN,)

    def run(*tokens: Any) -> Values:
        return out

    return run


# --- collectives -------------------------------------------------------------------------------


@kernel("stablehlo.all_gather", quantized_aware=True)
def all_gather(op: Operation, ctx: Any) -> Run:
    """Spec "all_gather": concatenate every member's operand along ``all_gather_dim``."""
    dim = _int_attr(op, "all_gather_dim")
    groups = Groups(op, reduction_strategy(op), id_groups(op))
    cid = channel_id(op)
    process = ctx.process

    def combine(group: tuple[ProcessId, ...], values: list[Values]) -> list[Values]:
        check_same(op, group, values)
        outs = tuple(shared(np.concatenate([v[k] for v in values], axis=dim))
                     for k in range(len(values[0])))
        return [outs] * len(values)

    def run(*operands: Any) -> Values:
        return meet(op, process, groups.of(process), operands, combine, cid)

    return run


@kernel("stablehlo.all_reduce")
def all_reduce(op: Operation, ctx: Any) -> Run:
    """Spec "all_reduce": every member gets the reduction of the members' operands.

    Operands are converted to the body's element type first (`to_destination_type`).
    """
    body = ctx.region(op.regions[0])
    dtype = body_dtype(body)
    fold = reducer(body, dtype)
    groups = Groups(op, reduction_strategy(op), id_groups(op))
    cid = channel_id(op)
    process = ctx.process

    def combine(group: tuple[ProcessId, ...], values: list[Values]) -> list[Values]:
        check_same(op, group, values)
        outs = tuple(shared(fold([np.asarray(v[k]).astype(dtype, copy=False) for v in values]))
                     for k in range(len(values[0])))
        return [outs] * len(values)

    def run(*operands: Any) -> Values:
        return meet(op, process, groups.of(process), operands, combine, cid)

    return run


@kernel("stablehlo.reduce_scatter")
def reduce_scatter(op: Operation, ctx: Any) -> Run:
    """Spec "reduce_scatter": all_reduce, split along ``scatter_dimension``, member i gets
    part i."""
    dim = _int_attr(op, "scatter_dimension")
    body = ctx.region(op.regions[0])
    dtype = body_dtype(body)
    fold = reducer(body, dtype)
    groups = Groups(op, reduction_strategy(op), id_groups(op))
    cid = channel_id(op)
    process = ctx.process

    def combine(group: tuple[ProcessId, ...], values: list[Values]) -> list[Values]:
        check_same(op, group, values)
        n = len(group)
        parts = []
        for k in range(len(values[0])):
            reduced = fold([np.asarray(v[k]).astype(dtype, copy=False) for v in values])
            if reduced.shape[dim] % n:
                raise ExecutionError(f"'{op.name}' op: dimension {dim} of size "
                                     f"{reduced.shape[dim]} does not split into {n} parts "
                                     f"(one per process of the group)", op.location)
            parts.append([shared(x) for x in np.split(reduced, n, axis=dim)])
        return [tuple(p[i] for p in parts) for i in range(n)]

    def run(*operands: Any) -> Values:
        return meet(op, process, groups.of(process), operands, combine, cid)

    return run


@kernel("stablehlo.all_to_all", quantized_aware=True)
def all_to_all(op: Operation, ctx: Any) -> Run:
    """Spec "all_to_all": split along ``split_dimension``, member i gets every member's part i,
    concatenated along ``concat_dimension``."""
    split_dimension = _int_attr(op, "split_dimension")
    concat_dimension = _int_attr(op, "concat_dimension")
    split_count = _int_attr(op, "split_count")
    groups = Groups(op, simple_strategy(op), id_groups(op))
    cid = channel_id(op)
    process = ctx.process

    def combine(group: tuple[ProcessId, ...], values: list[Values]) -> list[Values]:
        check_same(op, group, values)
        n = len(group)
        if n != split_count:
            raise ExecutionError(f"'{op.name}' op: split_count is {split_count} but the "
                                 f"process group has {n} processes", op.location)
        outs: list[list[np.ndarray]] = [[] for _ in range(n)]
        for k in range(len(values[0])):
            size = np.shape(values[0][k])[split_dimension]
            if size % n:
                raise ExecutionError(f"'{op.name}' op: split dimension {split_dimension} of "
                                     f"size {size} does not split into {n} parts", op.location)
            split = [np.split(np.asarray(v[k]), n, axis=split_dimension) for v in values]
            for i in range(n):
                outs[i].append(np.concatenate([s[i] for s in split], axis=concat_dimension))
        return [tuple(o) for o in outs]

    def run(*operands: Any) -> Values:
        return meet(op, process, groups.of(process), operands, combine, cid)

    return run


@kernel("stablehlo.collective_permute", quantized_aware=True)
def collective_permute(op: Operation, ctx: Any) -> Run:
    """Spec "collective_permute": the target of each source-target pair gets the source's
    operand; a process that is no pair's target gets zeros.

    The processes linked by pairs (a connected component) meet together; a process in no
    pair does not wait.
    """
    pairs = id_groups(op, "source_target_pairs")
    for pr in pairs:
        if len(pr) != 2:
            raise ValueError(f"source_target_pairs must have 2 columns, got {pr}")
    strategy = simple_strategy(op)
    cid = channel_id(op)
    types = op.result_types
    process = ctx.process
    memo: dict[tuple[int, int], tuple[dict[ProcessId, ProcessId],
                                      dict[ProcessId, tuple[ProcessId, ...]]]] = {}

    def links(r: int, p: int) -> tuple[dict[ProcessId, ProcessId],
                                       dict[ProcessId, tuple[ProcessId, ...]]]:
        got = memo.get((r, p))
        if got is None:
            source_of: dict[ProcessId, ProcessId] = {}
            try:
                pgs = process_groups(strategy, pairs, r, p) if pairs else []
            except ValueError as e:
                raise ExecutionError(f"'{op.name}' op: {e}", op.location) from None
            parent: dict[ProcessId, ProcessId] = {}

            def root(x: ProcessId) -> ProcessId:
                while parent.setdefault(x, x) != x:
                    x = parent[x]
                return x

            for src, tgt in pgs:
                source_of[tgt] = src
                parent[root(src)] = root(tgt)
            comps: dict[ProcessId, list[ProcessId]] = {}
            for x in list(parent):
                comps.setdefault(root(x), []).append(x)
            component = {x: tuple(sorted(c)) for c in comps.values() for x in c}
            got = memo[(r, p)] = (source_of, component)
        return got

    def run(*operands: Any) -> Values:
        source_of, component = links(process.num_replicas, process.num_partitions)
        me = (process.replica_id, process.partition_id)
        group = component.get(me)
        if group is None:
            return tuple(zeros(t, x) for t, x in zip(types, operands))

        def combine(group: tuple[ProcessId, ...], values: list[Values]) -> list[Values]:
            out = []
            for m, v in zip(group, values):
                src = source_of.get(m)
                out.append(values[group.index(src)] if src is not None else
                           tuple(zeros(t, x) for t, x in zip(types, v)))
            return out

        return meet(op, process, group, operands, combine, cid)

    return run


def _roots(op: Operation, group: Sequence[ProcessId], values: list[Values],
           count: int) -> list[int]:
    """The root index in the group for each of ``count`` data operands (has_dynamic_root)."""
    first = np.asarray(values[0][1]).reshape(-1)
    for p, v in zip(group, values):
        if not np.array_equal(np.asarray(v[1]).reshape(-1), first):
            raise ExecutionError(f"'{op.name}' op: the processes of the group disagree on the "
                                 f"root: " + ", ".join(
                                     f"{process_label(q)}: {np.asarray(w[1]).tolist()}"
                                     for q, w in zip(group, values)), op.location)
    if first.size not in (1, count):
        raise ExecutionError(f"'{op.name}' op: the root tensor has {first.size} elements for "
                             f"{count} data operands", op.location)
    roots = [int(x) for x in (first if first.size == count else np.repeat(first, count))]
    for r in roots:
        if not 0 <= r < len(group):
            raise ExecutionError(f"'{op.name}' op: root {r} is outside the process group of "
                                 f"{len(group)} processes", op.location)
    return roots


@kernel("stablehlo.collective_broadcast", quantized_aware=True)
def collective_broadcast(op: Operation, ctx: Any) -> Run:
    """Spec "collective_broadcast": every member gets the operand of its group's first process
    (with ``has_dynamic_root``, of the process the last operand names); a process in no group
    gets zeros."""
    dynamic = flag(op, "has_dynamic_root")
    groups = Groups(op, simple_strategy(op), id_groups(op))
    cid = channel_id(op)
    types = op.result_types
    process = ctx.process

    def combine(group: tuple[ProcessId, ...], values: list[Values]) -> list[Values]:
        count = len(values[0][0])
        roots = _roots(op, group, values, count) if dynamic else [0] * count
        outs = tuple(values[r][0][k] for k, r in enumerate(roots))
        return [outs] * len(values)

    def run(*operands: Any) -> Values:
        data = operands[:-1] if dynamic else operands
        group = groups.find(process)
        if group is None:
            return tuple(zeros(t, x) for t, x in zip(types, data))
        value = (data, operands[-1]) if dynamic else (data,)
        return meet(op, process, group, value, combine, cid)

    return run


@kernel("stablehlo.collective_reduce")
def collective_reduce(op: Operation, ctx: Any) -> Run:
    """`collective_reduce` (newer than the spec): the group's first process (or the one the
    ``has_dynamic_root`` operand names) gets the reduction of the members' operands, as in
    all_reduce; the other members get zeros."""
    dynamic = flag(op, "has_dynamic_root")
    body = ctx.region(op.regions[0])
    dtype = body_dtype(body)
    fold = reducer(body, dtype)
    groups = Groups(op, reduction_strategy(op), id_groups(op))
    cid = channel_id(op)
    types = op.result_types
    process = ctx.process

    def combine(group: tuple[ProcessId, ...], values: list[Values]) -> list[Values]:
        data = [v[0] for v in values]
        check_same(op, group, data)
        count = len(data[0])
        roots = _roots(op, group, values, count) if dynamic else [0] * count
        outs: list[list[np.ndarray]] = [[] for _ in group]
        for k in range(count):
            reduced = shared(fold([np.asarray(d[k]).astype(dtype, copy=False) for d in data]))
            for i in range(len(group)):
                outs[i].append(reduced if i == roots[k] else zeros(types[k], reduced))
        return [tuple(o) for o in outs]

    def run(*operands: Any) -> Values:
        data = operands[:-1] if dynamic else operands
        value = (data, operands[-1]) if dynamic else (data,)
        return meet(op, process, groups.of(process), value, combine, cid)

    return run


# --- channels ----------------------------------------------------------------------------------


def _me(process: Any) -> ProcessId:
    return (process.replica_id, process.partition_id)


@kernel("stablehlo.send", quantized_aware=True)
def send(op: Operation, ctx: Any) -> Run:
    """Spec "send": put the operands on channel ``channel_id`` (the receiver takes them in
    order; a send does not wait). Host transfers are channels between processes too."""
    cid = channel_id(op)
    process = ctx.process
    out = (TOKEN,)

    def run(*operands: Any) -> Values:
        values = tuple(operands[:-1])
        if process.grid is None:  # one process without a grid: a local queue
            process.channels.setdefault(cid, deque()).append(values)
        else:
            process.grid.send(op, cid, _me(process), values)
        return out

    return run


@kernel("stablehlo.recv", quantized_aware=True)
def recv(op: Operation, ctx: Any) -> Run:
    """Spec "recv": take the oldest value sent on channel ``channel_id``, waiting for it."""
    cid = channel_id(op)
    types = op.result_types[:-1]
    process = ctx.process

    def run(token: Any = None) -> Values:
        if process.grid is None:
            q = process.channels.get(cid)
            if not q:
                raise ExecutionError(f"'{op.name}' op on {process_label(_me(process))}: "
                                     f"nothing was sent on channel {cid}, and no other "
                                     f"process runs", op.location)
            values = q.popleft()
        else:
            values = process.grid.recv(op, cid, _me(process))
        return (*_typed(op, values, types, f"the value received on channel {cid}"), TOKEN)

    return run


def _type_str(t: TensorType) -> str:
    dims = "".join(("?" if d is None else str(d)) + "x" for d in (t.shape or ()))
    return f"tensor<{dims}{t.element_type.name}>"


def _typed(op: Operation, values: Sequence[Any], types: Sequence[Type], what: str) -> list[Any]:
    """Check/convert ``values`` against the op's payload result ``types``."""
    if len(values) != len(types):
        raise ExecutionError(f"'{op.name}' op: {what} has {len(values)} tensors, the op "
                             f"returns {len(types)}", op.location)
    out = []
    for i, (v, t) in enumerate(zip(values, types)):
        if not isinstance(t, TensorType):
            out.append(v)
            continue
        a = np.asarray(v)
        if a.dtype != t.dtype:
            if not isinstance(v, np.ndarray) and a.dtype.kind in "biuf" and \
                    np.can_cast(a.dtype, t.dtype, "same_kind"):
                a = a.astype(t.dtype)
            else:
                raise ExecutionError(f"'{op.name}' op: {what}, result {i}: expected dtype "
                                     f"{t.dtype} for {_type_str(t)}, got {a.dtype}", op.location)
        if t.shape is not None and (len(a.shape) != len(t.shape) or any(
                d is not None and d != s for d, s in zip(t.shape, a.shape))):
            raise ExecutionError(f"'{op.name}' op: {what}, result {i}: expected shape "
                                 f"{tuple(t.shape)} for {_type_str(t)}, got {a.shape}", op.location)
        out.append(a)
    return out


# --- feeds -------------------------------------------------------------------------------------


@kernel("stablehlo.infeed", quantized_aware=True)
def infeed(op: Operation, ctx: Any) -> Run:
    """Spec "infeed": the next entry of the process's infeed queue (a value, or a tuple of
    values when the op has several payload results), then a token."""
    types = op.result_types[:-1]
    process = ctx.process

    def run(token: Any = None) -> Values:
        if not types:
            return (TOKEN,)
        try:
            entry = process.infeed.pop(0)
        except IndexError:
            raise ExecutionError(f"'{op.name}' op on {process_label(_me(process))}: the infeed "
                                 f"queue is empty (pass the values with infeed=[...])",
                                 op.location) from None
        values = entry if isinstance(entry, tuple) or (
            isinstance(entry, list) and len(types) > 1) else (entry,)
        return (*_typed(op, values, types, "the infeed value"), TOKEN)

    return run


@kernel("stablehlo.outfeed", quantized_aware=True)
def outfeed(op: Operation, ctx: Any) -> Run:
    """Spec "outfeed": append the tuple of inputs to the process's outfeed."""
    process = ctx.process
    out = (TOKEN,)

    def run(*operands: Any) -> Values:
        process.outfeed.append(tuple(operands[:-1]))
        return out

    return run


# --- interpreter.run_parallel ------------------------------------------------------------------


@kernel("interpreter.run_parallel", quantized_aware=True)
def run_parallel(op: Operation, ctx: Any) -> Run:
    """`interpreter.run_parallel` (upstream's test op): run ``programs`` (one row of functions
    per replica, one function per partition) on a process grid.

    Operands are the processes' arguments one process after the other (flattened order),
    results likewise. ``infeed`` lists functions whose results form one infeed queue shared by
    the whole grid (upstream's behaviour). Outfeed values go to the running process's outfeed.
    """
    rows = [[s.name for s in row] for row in op.attr("programs")]
    if not rows or not rows[0] or any(len(r) != len(rows[0]) for r in rows):
        raise ValueError("`programs` must be a non-empty rectangle of function symbols")
    num_replicas, num_partitions = len(rows), len(rows[0])
    names = [n for row in rows for n in row]
    module = ctx.module
    funcs = module.functions
    for n in names:
        if n not in funcs:
            raise ValueError(f"function @{n} is not defined")
    counts = [len(function_type(funcs[n]).inputs) for n in names]
    feeds = [ctx.function(s.name) for s in (op.attr("infeed") or ())]
    parent = ctx.process

    def run(*inputs: Any) -> Sequence[Any]:
        queue = [f()[0] for f in feeds]
        args, k = [], 0
        for c in counts:
            args.append(list(inputs[k:k + c]))
            k += c
        results, outfeeds = run_programs(module, names, num_replicas, num_partitions, args,
                                         [queue] * len(names), parent.custom_calls,
                                         DEFAULT_TIMEOUT, parent)
        for o in outfeeds:
            parent.outfeed.extend(o)
        return [v for res in results for v in res]

    return run
