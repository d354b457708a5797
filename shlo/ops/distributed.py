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
from ..types import QuantizedType, TensorType, Type, element_type_for_dtype
from ._regions import ufunc_for
from ..registry import kernel
from ..types import TOKEN

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

    def whole_group(values: list[Any]) -> list[Any]:
        try:
            return combine(group, values)
        except ExecutionError as e:  # about the group, not the process that combined
            e.names_process = True  # type: ignore[attr-defined]
            raise

    return grid.rendezvous(op, group, me, value, whole_group, cid)


def shared(a: Any) -> np.ndarray:
    """A read-only view: one result array is handed to several processes."""
    v = np.asarray(a).view()
    v.flags.writeable = False
    return v


def _desc(a: Any) -> str:
    """`tensor<4xi64>` for a run-time array."""
    a = np.asarray(a)
    try:
        et = element_type_for_dtype(a.dtype).name
    except KeyError:
        et = str(a.dtype)
    return "tensor<" + "".join(f"{d}x" for d in a.shape) + et + ">"


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


# --- constraints (spec "Ops" section, C1..Cn) ---------------------------------------------------
# The verifiers of the distribution ops (shlo/verifier.py calls them through the registry).

from typing import Any as _Any  # noqa: E402

from ..attributes import (  # noqa: E402
    ArrayAttr as _ArrayAttr, DenseElementsAttr as _DenseElementsAttr, IntegerAttr as _IntegerAttr,
    StructAttr as _StructAttr,
)
from ..ir import Operation as _Operation  # noqa: E402
from ..types import TensorType as _TensorType, TokenType as _TokenType  # noqa: E402
from . import _constraints as _c  # noqa: E402
from ..registry import verifier  # noqa: E402

_UI32_SCALAR = _c.TC(only=frozenset({"ui32"}), description="ranked tensor of 32-bit unsigned "
                                                            "integer values")


def _replica_groups(op: _Operation, diag: _Any, label: str, same_size: bool,
                    group_size: int | None = None, attr: str = "replica_groups",
                    covering: bool = True) -> bool:
    """is_unique(replica_groups) and 0 <= replica_groups < size, as upstream checks them: a
    rank-2 tensor of ids 0..n-1 each seen once (-1 pads non-uniform groups where allowed)."""
    a = op.attr(attr)
    if isinstance(a, _StructAttr):  # #stablehlo.replica_group_mesh_axes<mesh = @m, ...>
        mesh = a.get("mesh")
        name = getattr(mesh, "name", None)
        symbols = getattr(diag, "symbols", None)
        if isinstance(name, str) and symbols is not None and name not in symbols:
            diag.error(op, label, f"replica_groups: mesh symbol '{name}' not found")
            return False
        return True
    if not isinstance(a, _DenseElementsAttr):
        return True
    arr = a.array
    if arr.ndim != 2:
        diag.error(op, label, f"replica groups should be a rank 2 tensor, got rank {arr.ndim}")
        return False
    if _c.bool_attr(op, "use_global_device_ids", False) and arr.size == 0:
        diag.error(op, label, "if `use_global_device_ids` is set, the replica groups cannot be "
                              "empty")
        return False
    seen: set[int] = set()
    for rid in arr.reshape(-1).tolist():
        if rid == -1:
            if not same_size:
                continue
            diag.error(op, label, "Invalid replica id -1")
            return False
        if rid in seen:
            diag.error(op, label, f"replica id #{rid} seen more than once")
            return False
        if rid < 0 and not covering:
            diag.error(op, label, f"replica ids must be non-negative, got {rid}")
            return False
        seen.add(rid)
    for i in range(len(seen) if covering else 0):
        if i not in seen:
            diag.error(op, label, f"replica id #{i} not seen in replica groups")
            return False
    if same_size and group_size is not None and (arr.shape[0] == 0 or
                                                 arr.shape[1] != group_size):
        diag.error(op, "C8", f"group size of replica_groups must be {group_size}, got "
                             f"{arr.shape[1]}")
        return False
    return True


def _channel_id(op: _Operation) -> int:
    h = op.attr("channel_handle")
    if isinstance(h, _StructAttr):
        return _c.struct_int(h, "handle", 0)
    v = _c.int_attr(op, "channel_id")
    return 0 if v is None else v


def _group_dim(op: _Operation) -> int | None:
    a = op.attr("replica_groups")
    if isinstance(a, _DenseElementsAttr) and a.array.ndim == 2:
        return int(a.array.shape[1])
    return None


def _global_ids(op: _Operation, diag: _Any, label: str, strict: bool) -> bool:
    """`use_global_device_ids = true` implies `channel_id > 0` (all_gather only rejects
    negative ids, as upstream does)."""
    if not _c.bool_attr(op, "use_global_device_ids", False):
        return True
    cid = _channel_id(op)
    if strict and cid <= 0:
        diag.error(op, label, f"channel_id must be positive when useGlobalDeviceIds is set but "
                              f"got: {cid}")
        return False
    if not strict and cid < 0:
        diag.error(op, label, f"channel_id cannot be negative when useGlobalDeviceIds is set "
                              f"(got {cid})")
        return False
    return True


def _reducer_results(op: _Operation, diag: _Any, label: str, operands: list) -> list | None:
    """The `computation` of all_reduce-like ops: one reducer of `(tensor<E>, tensor<E>) ->
    tensor<E>` applied to each operand in turn."""
    out = []
    for t in operands:
        rets = _c.check_reducer(op, diag, label, 0, [t], [_TensorType((), t.element_type)], [])
        if rets is None:
            return None
        out.append(rets[0])
    return out


@verifier("stablehlo.replica_id", "stablehlo.partition_id")
def _verify_process_id(op: _Operation, diag: _Any) -> None:
    """The result is a 0-dimensional tensor of ui32."""
    if _c.signature(op, diag, [], [_UI32_SCALAR]):
        _c.check_inferred(op, diag, "", [_TensorType((), op.results[0].type.element_type)])


@verifier("stablehlo.after_all", "stablehlo.create_token")
def _verify_after_all(op: _Operation, diag: _Any) -> None:
    """`inputs` are tokens; the result is a token."""
    _c.signature(op, diag, [(_c.TOKEN, "*")], [_c.TOKEN])


@verifier("stablehlo.all_gather")
def _verify_all_gather(op: _Operation, diag: _Any) -> None:
    """all_gather (C1-C6)."""
    if not _c.signature(op, diag, [(_c.TENSOR, "*")], [(_c.TENSOR, "*")],
                        attrs={"all_gather_dim": "int", "replica_groups": "i64elements"},
                        optional_attrs={"channel_handle": "any",
                                        "use_global_device_ids": "any"}):
        return
    dim = _c.int_attr(op, "all_gather_dim")
    if dim < 0:
        diag.error(op, "C1", f"op attribute 'all_gather_dim' failed to satisfy constraint: 64-bit "
                             f"signless integer attribute whose value is non-negative (got {dim})")
        return
    if not _replica_groups(op, diag, "C2, C3, C4", same_size=True):
        return
    if not _global_ids(op, diag, "C5", strict=False):
        return
    if len(op.operands) != len(op.results):
        diag.error(op, "C6", f"requires the same number of operands and results: "
                             f"{len(op.operands)} vs {len(op.results)}")
        return
    groups = _group_dim(op)
    for operand, result in zip(op.operand_types, op.result_types):
        if operand.shape is None or result.shape is None:
            continue
        if not 0 <= dim < len(operand.shape):
            diag.error(op, "C1", f"all_gather_dim must be a valid index of operand: {dim} vs "
                                 f"rank {len(operand.shape)}")
            return
        if len(operand.shape) != len(result.shape):
            diag.error(op, "C6", "operand and result must have the same rank")
            return
        for d in range(len(operand.shape)):
            if d != dim and not _c.compatible_dims(operand.shape[d], result.shape[d]):
                diag.error(op, "C6", "operand and result should have the same shape except for "
                                     "the dimension size at 'all_gather_dim'")
                return
        a, b = operand.shape[dim], result.shape[dim]
        if a is not None and b is not None:
            if a == 0 and b != 0 or a != 0 and b % a:
                diag.error(op, "C6", f"result gather dimension has size {b}, expected to be a "
                                     f"multiple of operand gather dimension size {a}")
                return
        if not _c.compatible_element_types(operand.element_type, result.element_type):
            diag.error(op, "C6", f"requires the same element type for operand and result: "
                                 f"{_c.types_str([operand, result])}")
            return


@verifier("stablehlo.all_reduce")
def _verify_all_reduce(op: _Operation, diag: _Any) -> None:
    """all_reduce (C1-C7)."""
    if not _c.signature(op, diag, [(_c.TENSOR, "*")], [(_c.TENSOR, "*")],
                        attrs={"replica_groups": "i64elements"},
                        optional_attrs={"channel_handle": "any",
                                        "use_global_device_ids": "any"}, regions=1):
        return
    if not _replica_groups(op, diag, "C1, C2, C3", same_size=False):
        return
    if not _global_ids(op, diag, "C4", strict=True):
        return
    operands = op.operand_types
    rets = _reducer_results(op, diag, "C5", operands)
    if rets is None:
        return
    _c.check_inferred(op, diag, "C6, C7",
                      [_TensorType(t.shape, r.element_type) for t, r in zip(operands, rets)])


@verifier("stablehlo.reduce_scatter")
def _verify_reduce_scatter(op: _Operation, diag: _Any) -> None:
    """reduce_scatter (C1-C9)."""
    if not _c.signature(op, diag, [_c.TENSOR], [_c.TENSOR],
                        attrs={"scatter_dimension": "int", "replica_groups": "i64elements"},
                        optional_attrs={"channel_handle": "any",
                                        "use_global_device_ids": "any"}, regions=1):
        return
    operand, result = op.operands[0].type, op.results[0].type
    dim = _c.int_attr(op, "scatter_dimension")
    if dim < 0:
        diag.error(op, "C2", f"op attribute 'scatter_dimension' failed to satisfy constraint: "
                             f"64-bit signless integer attribute whose value is non-negative (got "
                             f"{dim})")
        return
    if not _replica_groups(op, diag, "C3, C4, C5", same_size=True):
        return
    if not _global_ids(op, diag, "C6", strict=True):
        return
    rets = _reducer_results(op, diag, "C7", [operand])
    if rets is None:
        return
    if not _c.same_element_type(result.element_type, rets[0].element_type):
        diag.error(op, "C9", f"result element-type is expected to be "
                             f"'{_c.type_str(rets[0].element_type)}', but got "
                             f"'{_c.type_str(result.element_type)}'")
        return
    if operand.shape is None or result.shape is None:
        return
    if len(operand.shape) != len(result.shape):
        diag.error(op, "C8", "operand and result should have same rank")
        return
    if not 0 <= dim < len(operand.shape):
        diag.error(op, "C2", "scatter dim should be less than operand/result rank")
        return
    a, b = operand.shape[dim], result.shape[dim]
    if a == 0:
        diag.error(op, "C8", "operand dimension size at scatter_dimension cannot be zero")
        return
    if b == 0:
        diag.error(op, "C8", "result dimension size at scatter_dimension cannot be zero")
        return
    if a is not None and b is not None and a % b:
        diag.error(op, "C1, C8", f"operand scatter dimension has size {a}, expected to be a "
                                 f"multiple of result scatter dimension size {b}")
        return
    for d in range(len(operand.shape)):
        if d != dim and not _c.compatible_dims(operand.shape[d], result.shape[d]):
            diag.error(op, "C8", f"non scatter dimensions should be same for operand "
                                 f"({operand.shape[d]}) and result ({result.shape[d]})")
            return


@verifier("stablehlo.all_to_all")
def _verify_all_to_all(op: _Operation, diag: _Any) -> None:
    """all_to_all (C1-C9)."""
    if not _c.signature(op, diag, [(_c.TENSOR, "*")], [(_c.TENSOR, "*")],
                        attrs={"split_dimension": "int", "concat_dimension": "int",
                               "split_count": "int", "replica_groups": "i64elements"},
                        optional_attrs={"channel_handle": "any"}):
        return
    split_dim = _c.int_attr(op, "split_dimension")
    concat_dim = _c.int_attr(op, "concat_dimension")
    count = _c.int_attr(op, "split_count")
    for name, v, label in (("split_dimension", split_dim, "C1"),
                           ("concat_dimension", concat_dim, "C3")):
        if v < 0:
            diag.error(op, label, f"op attribute '{name}' failed to satisfy constraint: 64-bit "
                                  f"signless integer attribute whose value is non-negative (got "
                                  f"{v})")
            return
    if count <= 0:
        diag.error(op, "C4", f"op attribute 'split_count' failed to satisfy constraint: 64-bit "
                             f"signless integer attribute whose value is positive (got {count})")
        return
    if len(op.operands) != len(op.results):
        diag.error(op, "C9", "op requires the same number of operands and results")
        return
    for i, (a, b) in enumerate(zip(op.operand_types, op.result_types)):
        if not _c.compatible_element_types(a.element_type, b.element_type):
            diag.error(op, "C9", f"op requires the same element type for operand and result at "
                                 f"index {i}")
            return
    for operand in op.operand_types:
        if operand.shape is None:
            continue
        rank = len(operand.shape)
        if split_dim >= rank:
            diag.error(op, "C1", f"AllToAll split_dimension {split_dim} is out-of-bounds for "
                                 f"input rank {rank}")
            return
        if concat_dim >= rank:
            diag.error(op, "C3", f"AllToAll concat_dimension {concat_dim} is out-of-bounds for "
                                 f"input rank {rank}")
            return
    if not _replica_groups(op, diag, "C5, C6, C7", same_size=True, group_size=count):
        return
    inferred = []
    for operand in op.operand_types:
        if operand.shape is None:
            inferred.append(None)
            continue
        shape = list(operand.shape)
        s = shape[split_dim]
        if s is not None:
            if s % count:
                diag.error(op, "C2", f"split dimension has size {s}, expected to be a multiple "
                                     f"of split_count {count}")
                return
            shape[split_dim] = s // count
        c = shape[concat_dim]
        if c is not None:
            shape[concat_dim] = c * count
        inferred.append(_TensorType(tuple(shape), operand.element_type))
    _c.check_inferred(op, diag, "C9", inferred)


@verifier("stablehlo.collective_permute")
def _verify_collective_permute(op: _Operation, diag: _Any) -> None:
    """collective_permute (C1-C5)."""
    if not _c.signature(op, diag, [_c.TENSOR], [_c.TENSOR],
                        attrs={"source_target_pairs": "i64elements"},
                        optional_attrs={"channel_handle": "any"}):
        return
    a = op.attr("source_target_pairs")
    if isinstance(a, _DenseElementsAttr):
        arr = a.array
        if arr.ndim != 2:
            diag.error(op, "C1", f"expect source_target_pairs attribute to be of rank 2, but got "
                                 f"rank {arr.ndim}")
            return
        if arr.shape[1] != 2:
            diag.error(op, "C1", f"expect source_target_pairs attribute of shape (N, 2), but got "
                                 f"({arr.shape[0]}, {arr.shape[1]})")
            return
        if (arr < 0).any():
            diag.error(op, "C4", "replica ids in source_target_pairs must be >= 0")
            return
        sources, targets = arr[:, 0].tolist(), arr[:, 1].tolist()
        if not _c.is_unique(sources):
            diag.error(op, "C2", f"duplicate sources not allowed: {sources}")
            return
        if not _c.is_unique(targets):
            diag.error(op, "C3", f"duplicate targets not allowed: {targets}")
            return
    _c.check_inferred(op, diag, "C5", [op.operands[0].type])


def _dynamic_root(op: _Operation, diag: _Any, name: str) -> int | None:
    """With `has_dynamic_root`, the last operand is a rank-1 i32 root; returns the number of
    data operands (None after a violation)."""
    n = len(op.operands)
    if not _c.bool_attr(op, "has_dynamic_root", False):
        if n < 1:
            diag.error(op, "", f"{name} requires at least one data operand")
            return None
        return n
    if n < 2:
        diag.error(op, "", f"{name} with has_dynamic_root=true requires at least two operands "
                           f"(data + root)")
        return None
    root = op.operands[-1].type
    if not (isinstance(root, _TensorType) and root.shape is not None and len(root.shape) == 1
            and getattr(root.element_type, "name", None) == "i32"):
        diag.error(op, "", f"last operand of {name} with has_dynamic_root=true must be a "
                           f"rank-1 i32 tensor")
        return None
    return n - 1


@verifier("stablehlo.collective_broadcast")
def _verify_collective_broadcast(op: _Operation, diag: _Any) -> None:
    """collective_broadcast (C1-C3)."""
    if not _c.signature(op, diag, [(_c.TENSOR, "*")], [(_c.TENSOR, "*")],
                        attrs={"replica_groups": "i64elements"},
                        optional_attrs={"channel_handle": "any"}):
        return
    n = _dynamic_root(op, diag, "collective_broadcast")
    if n is None:
        return
    if not _replica_groups(op, diag, "C1, C2", same_size=True, covering=False):
        return
    _c.check_inferred(op, diag, "C3", [v.type for v in op.operands[:n]])


@verifier("stablehlo.collective_reduce")
def _verify_collective_reduce(op: _Operation, diag: _Any) -> None:
    """collective_reduce (beyond the seed spec): like all_reduce, with an optional dynamic
    root operand."""
    if not _c.signature(op, diag, [(_c.TENSOR, "*")], [(_c.TENSOR, "*")],
                        attrs={"replica_groups": "i64elements"},
                        optional_attrs={"channel_handle": "any"}, regions=1):
        return
    if not _global_ids(op, diag, "C4", strict=True):
        return
    n = _dynamic_root(op, diag, "collective_reduce")
    if n is None:
        return
    if not _replica_groups(op, diag, "C1, C2, C3", same_size=False):
        return
    operands = op.operand_types[:n]
    rets = _reducer_results(op, diag, "C5", operands)
    if rets is None:
        return
    _c.check_inferred(op, diag, "C6, C7",
                      [_TensorType(t.shape, r.element_type) for t, r in zip(operands, rets)])


def _channel_type(op: _Operation) -> int | None:
    h = op.attr("channel_handle")
    if isinstance(h, _StructAttr):
        return _c.struct_int(h, "type", 0)
    return None


@verifier("stablehlo.send")
def _verify_send(op: _Operation, diag: _Any) -> None:
    """send (C1): channel_type is DEVICE_TO_HOST for host transfers, DEVICE_TO_DEVICE
    otherwise; the result is a token."""
    if not _c.signature(op, diag, [(_c.TENSOR_QA, "*"), _c.TOKEN], [_c.TOKEN],
                        attrs={"channel_handle": "any"},
                        optional_attrs={"is_host_transfer": "bool"}):
        return
    host = _c.bool_attr(op, "is_host_transfer", False)
    t = _channel_type(op)
    if t is not None and t != (2 if host else 1):
        want = "DEVICE_TO_HOST" if host else "DEVICE_TO_DEVICE"
        diag.error(op, "C1", f"channel_type should be {want} when is_host_transfer is "
                             f"{'true' if host else 'false'}")


def _feed_results(op: _Operation, diag: _Any) -> bool:
    results = op.result_types
    if not results:
        diag.error(op, "C2", "result is expected to be at least of size 1, but got 0")
        return False
    for t in results[:-1]:
        if not isinstance(t, _TensorType):
            what = ("all elements of result types, except the last element, are" if
                    op.name == "stablehlo.infeed" else
                    "everything but the last element of result types is")
            diag.error(op, "C3", f"{what} expected to be of tensor type, but got "
                                 f"'{_c.type_str(t)}'")
            return False
    if not isinstance(results[-1], _TokenType):
        diag.error(op, "C4", f"last element of result types is expected to be of token type, "
                             f"but got '{_c.type_str(results[-1])}'")
        return False
    return True


@verifier("stablehlo.recv")
def _verify_recv(op: _Operation, diag: _Any) -> None:
    """recv (C1-C4)."""
    if not _c.signature(op, diag, [_c.TOKEN], [(_c.TENSOR_QA_OR_TOKEN, "*")],
                        attrs={"channel_handle": "any"},
                        optional_attrs={"is_host_transfer": "bool"}):
        return
    host = _c.bool_attr(op, "is_host_transfer", False)
    t = _channel_type(op)
    if t is not None and t != (3 if host else 1):
        want = "HOST_TO_DEVICE" if host else "DEVICE_TO_DEVICE"
        diag.error(op, "C1", f"channel_type should be {want} when is_host_transfer is "
                             f"{'true' if host else 'false'}")
        return
    _feed_results(op, diag)


@verifier("stablehlo.infeed")
def _verify_infeed(op: _Operation, diag: _Any) -> None:
    """infeed (C1-C3), and the layout attribute: one array of integers per non-token result."""
    if not _c.signature(op, diag, [_c.TOKEN], [(_c.TENSOR_QA_OR_TOKEN, "*")],
                        optional_attrs={"infeed_config": "str", "layout": "any"}):
        return
    layout = op.attr("layout")
    if isinstance(layout, _ArrayAttr):
        n = max(len(op.results) - 1, 0)
        if len(layout) != n:
            diag.error(op, "", f"layout-attribute size must be {n} (which is the number of "
                               f"op-results - 1 (for token result)), but got {len(layout)}")
            return
        for child in layout:
            if not isinstance(child, _ArrayAttr):
                diag.error(op, "", f"layout-attribute expected to have elements of type array, "
                                   f"but got {_attr_text(child)}")
                return
            for leaf in child:
                if not isinstance(leaf, (_IntegerAttr, int)):
                    diag.error(op, "", f"layout-attribute's leaf elements are expected to be of "
                                       f"type integer, but got {_attr_text(leaf)}")
                    return
    _feed_results(op, diag)


def _attr_text(a: _Any) -> str:
    if isinstance(a, _IntegerAttr):
        return f"{a.value} : {a.type or 'i64'}"
    if isinstance(a, _ArrayAttr):
        return "[" + ", ".join(_attr_text(x) for x in a) + "]"
    return str(a)


@verifier("stablehlo.outfeed")
def _verify_outfeed(op: _Operation, diag: _Any) -> None:
    """outfeed: tensors and a token in, a token out."""
    _c.signature(op, diag, [(_c.TENSOR_QA, "*"), _c.TOKEN], [_c.TOKEN],
                 optional_attrs={"outfeed_config": "str"})


@verifier("interpreter.run_parallel")
def _verify_run_parallel(op: _Operation, diag: _Any) -> None:
    """`interpreter.run_parallel` (the interpreter dialect's test op): a non-empty rectangular
    `programs` grid of functions whose inputs and results add up to the op's, and `infeed`
    functions that each return one tensor."""
    programs = op.attr("programs")
    rows = [list(r) for r in programs] if isinstance(programs, _ArrayAttr) else None
    if rows is None:
        return
    if not rows:
        diag.error(op, "", "`programs` attribute cannot be empty")
        return
    for r in rows:
        if len(r) != len(rows[0]):
            diag.error(op, "", f"Sizes of second dimension of `programs` should all match "
                               f"{len(rows[0])} but got {len(r)}")
            return
    n_in = n_out = 0
    for r in rows:
        for ref in r:
            name = getattr(ref, "name", None)
            func = _c.lookup_function(op, diag, name)
            if func is None:
                diag.error(op, "", f'Function "{name}" not found')
                return
            ft = _c.function_type_of(func)
            if ft is not None:
                n_in += len(ft.inputs)
                n_out += len(ft.results)
    if len(op.operands) != n_in:
        diag.error(op, "", f"Number of inputs ({len(op.operands)}) should match the sum of the "
                           f"number of inputs of all programs ({n_in})")
        return
    if len(op.results) != n_out:
        diag.error(op, "", f"Number of results ({len(op.results)}) should match the sum of the "
                           f"number of results of all programs ({n_out})")
        return
    infeed = op.attr("infeed")
    if infeed is None:
        return
    feeds = list(infeed) if isinstance(infeed, _ArrayAttr) else []
    if not feeds:
        diag.error(op, "", "infeed attribute is optional or should not be empty")
        return
    for ref in feeds:
        name = getattr(ref, "name", None)
        func = _c.lookup_function(op, diag, name)
        if func is None:
            diag.error(op, "", f'Function "{name}" not found')
            return
        ft = _c.function_type_of(func)
        if ft is None:
            continue
        if len(ft.results) != 1:
            diag.error(op, "", f'Function "{name}" should return 1 tensor but returns '
                               f'{len(ft.results)}')
            return
        if not isinstance(ft.results[0], _TensorType):
            diag.error(op, "", f'Function "{name}" should return a tensor type, but instead '
                               f"returns '{_c.type_str(ft.results[0])}'")
            return
