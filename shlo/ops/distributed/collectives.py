"""The collective ops: all_gather, all_reduce, reduce_scatter, all_to_all, collective_permute,
collective_broadcast, collective_reduce (spec sections of the same names, "Collective ops").

Each collective decodes its attributes once (prepare) and, when run, finds its process group
(memoised per grid size), then meets the other members through the process's grid
(:meth:`~shlo.ops.distributed.grid.Grid.rendezvous`): the last member to arrive computes the
results of the whole group once, with whole-array numpy calls (a reduction body that is a
single add/multiply/max/min/and/or/xor is a numpy ufunc; any other body is the compiled region
called on whole arrays). A group of one process never waits.

Data-moving collectives are QUANTIZED_AWARE: they move storage values, and the zeros they
produce for processes without a source are the zero point (spec: `quantize(0)`). all_reduce,
reduce_scatter and collective_reduce run their own kernel on storage values with the quantized
body (the evaluator's dequantize_op_quantize for ops with regions).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ...attributes import DenseElementsAttr, bool_attr, int_attr
from ...errors import Diagnostics, ExecutionError
from ...ir import Operation
from ...registry import QUANTIZED_AWARE, QUANTIZED_STORAGE, SIDE_EFFECTS, Kernel, define
from ...registry import inference, kernel, verifier
from ...types import TensorType, Type
from .. import _constraints as _c
from .grid import Native, ProcessId
from .groups import Groups, channel_id, check_global_ids, check_replica_groups, group_size
from .groups import id_groups, process_groups, process_label, reduction_strategy
from .groups import simple_strategy
from .meeting import Values, body_dtype, check_reduction_body, check_same, meet, reducer
from .meeting import shared, zeros

if TYPE_CHECKING:  # pragma: no cover
    from ...interpreter.evaluator import PrepareContext

# Every collective synchronises with the other processes of its group: removing one from one
# process would leave the others waiting (SIDE_EFFECTS).
_MOVES = {QUANTIZED_AWARE, QUANTIZED_STORAGE, SIDE_EFFECTS}
_REDUCES = {QUANTIZED_STORAGE, SIDE_EFFECTS}


def _non_negative(op: Operation, diag: Diagnostics, name: str, label: str) -> int | None:
    """Integer attribute ``name``, reported (upstream's words) when it is negative."""
    v = int_attr(op, name, None)
    if v is not None and v < 0:
        diag.error(op, label, f"op attribute '{name}' failed to satisfy constraint: 64-bit "
                              f"signless integer attribute whose value is non-negative (got {v})")
        return None
    return v


_COLLECTIVE = {"replica_groups": "i64elements"}
_CHANNEL = {"channel_handle": "any"}
_GLOBAL = {"channel_handle": "any", "use_global_device_ids": "any"}


# --- all_gather (spec "all_gather") ---------------------------------------------------------

define("stablehlo.all_gather", spec="all_gather", traits=_MOVES,
       summary="concatenate the operands of a process group along all_gather_dim",
       inherent="all_gather_dim replica_groups channel_handle use_global_device_ids")


@kernel("stablehlo.all_gather")
def all_gather(op: Operation, ctx: PrepareContext) -> Kernel:
    """Concatenate every member's operand along ``all_gather_dim``."""
    dim = int_attr(op, "all_gather_dim")
    groups = Groups(op, reduction_strategy(op), id_groups(op))
    cid = channel_id(op)
    process = ctx.process

    def combine(group: tuple[ProcessId, ...], values: list[Values]) -> list[Values]:
        check_same(op, group, values)
        outs = tuple(shared(np.concatenate([v[k] for v in values], axis=dim))
                     for k in range(len(values[0])))
        return [outs] * len(values)

    native = Native("all_gather", dim=dim)

    def run(*operands: Any) -> Values:
        return meet(op, process, groups.of(process), operands, combine, cid, native)

    return run


@inference("stablehlo.all_gather")
def _infer_all_gather(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """(C1) `0 <= all_gather_dim < rank(operands...)`; (C6) `type(results...)` is the operands'
    with `dim(results..., all_gather_dim) = dim(operands..., all_gather_dim) *
    dim(process_groups, 1)` (unknown, None, when the groups do not give their size). The
    verifier, as upstream's, only requires a multiple of the operand's size there: programs
    upstream accepts declare other multiples."""
    dim = _non_negative(op, diag, "all_gather_dim", "C1")
    if dim is None:
        return None
    n = group_size(op)
    out: list[Type] = []
    for t in op.operand_types:
        if t.shape is None:
            out.append(t)
            continue
        if not 0 <= dim < len(t.shape):
            diag.error(op, "C1", f"all_gather_dim must be a valid index of operand: {dim} vs "
                                 f"rank {len(t.shape)}")
            return None
        shape = list(t.shape)
        shape[dim] = shape[dim] * n if shape[dim] is not None and n is not None else None
        out.append(TensorType(tuple(shape), t.element_type))
    return out


@verifier("stablehlo.all_gather")
def _verify_all_gather(op: Operation, diag: Diagnostics) -> None:
    """all_gather (C1-C6). The size of the gathered dimension is checked as upstream does: a
    multiple of the operand's."""
    if not _c.signature(op, diag, [(_c.TENSOR, "*")], [(_c.TENSOR, "*")],
                        attrs={"all_gather_dim": "int", **_COLLECTIVE}, optional_attrs=_GLOBAL):
        return
    if _non_negative(op, diag, "all_gather_dim", "C1") is None:
        return
    if not check_replica_groups(op, diag, "C2, C3, C4", same_size=True):
        return
    if not check_global_ids(op, diag, "C5", strict=False):
        return
    if len(op.operands) != len(op.results):
        diag.error(op, "C6", f"requires the same number of operands and results: "
                             f"{len(op.operands)} vs {len(op.results)}")
        return
    inferred = _infer_all_gather(op, diag)
    if inferred is None:
        return
    dim = int_attr(op, "all_gather_dim")
    for operand, want, result in zip(op.operand_types, inferred, op.result_types):
        if operand.shape is None or result.shape is None:
            continue
        if operand.shape[dim] == 0:
            # upstream's rule (not the spec's): an empty gathered dimension is rejected
            diag.error(op, "", "dimension size of operand at 'all_gather_dim' cannot be zero")
            return
        if len(want.shape) != len(result.shape):
            diag.error(op, "C6", "operand and result must have the same rank")
            return
        for d in range(len(want.shape)):
            if d != dim and not _c.compatible_dims(want.shape[d], result.shape[d]):
                diag.error(op, "C6", "operand and result should have the same shape except for "
                                     "the dimension size at 'all_gather_dim'")
                return
        a, b = operand.shape[dim], result.shape[dim]
        if a is not None and b is not None:
            if a == 0 and b != 0 or a != 0 and b % a:
                diag.error(op, "C6", f"result gather dimension has size {b}, expected to be a "
                                     f"multiple of operand gather dimension size {a}")
                return
        if not _c.compatible_element_types(want.element_type, result.element_type):
            diag.error(op, "C6", f"requires the same element type for operand and result: "
                                 f"{_c.types_str([operand, result])}")
            return


# --- all_reduce (spec "all_reduce") ---------------------------------------------------------

define("stablehlo.all_reduce", spec="all_reduce", traits=_REDUCES,
       summary="every member of a process group gets the reduction of the members' operands",
       inherent="replica_groups channel_handle use_global_device_ids")


@kernel("stablehlo.all_reduce")
def all_reduce(op: Operation, ctx: PrepareContext) -> Kernel:
    """Every member gets the reduction of the members' operands. Operands are converted to the
    body's element type first (`to_destination_type`)."""
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

    native = Native("all_reduce", reduction=body.single_op, dtype=dtype)

    def run(*operands: Any) -> Values:
        return meet(op, process, groups.of(process), operands, combine, cid, native)

    return run


@inference("stablehlo.all_reduce")
def _infer_all_reduce(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """(C5) `computation` has type `(tensor<E>, tensor<E>) -> tensor<E>`; (C6, C7) the results
    have the operands' shapes and element type `E`."""
    return _reduced_types(op, diag, op.operand_types)


def _reduced_types(op: Operation, diag: Diagnostics, operands: list[Type]) -> list[Type] | None:
    """The results of reducing ``operands`` with the op's body (C5): their shapes, the body's
    element types (all_reduce, collective_reduce)."""
    rets = check_reduction_body(op, diag, "C5", operands)
    if rets is None:
        return None
    return [TensorType(t.shape, r.element_type) for t, r in zip(operands, rets)]


@verifier("stablehlo.all_reduce")
def _verify_all_reduce(op: Operation, diag: Diagnostics) -> None:
    """all_reduce (C1-C7)."""
    if not _c.signature(op, diag, [(_c.TENSOR, "*")], [(_c.TENSOR, "*")], attrs=_COLLECTIVE,
                        optional_attrs=_GLOBAL, regions=1):
        return
    if not check_replica_groups(op, diag, "C1, C2, C3", same_size=False):
        return
    if not check_global_ids(op, diag, "C4", strict=True):
        return
    inferred = _infer_all_reduce(op, diag)
    if inferred is not None:
        _c.check_inferred(op, diag, "C6, C7", inferred)


# --- reduce_scatter (spec "reduce_scatter") -------------------------------------------------

define("stablehlo.reduce_scatter", spec="reduce_scatter", traits=_REDUCES,
       summary="all_reduce, then member i of the group gets part i along scatter_dimension",
       inherent="scatter_dimension replica_groups channel_handle use_global_device_ids")


@kernel("stablehlo.reduce_scatter")
def reduce_scatter(op: Operation, ctx: PrepareContext) -> Kernel:
    """all_reduce, split along ``scatter_dimension``, member i gets part i."""
    dim = int_attr(op, "scatter_dimension")
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

    native = Native("reduce_scatter", reduction=body.single_op, dtype=dtype, dim=dim)

    def run(*operands: Any) -> Values:
        return meet(op, process, groups.of(process), operands, combine, cid, native)

    return run


@inference("stablehlo.reduce_scatter")
def _infer_reduce_scatter(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """(C7) `computation` has type `(tensor<E>, tensor<E>) -> tensor<E>`; (C8, C9) the result
    is the operand's shape with `dim(result, scatter_dimension) = dim(operand,
    scatter_dimension) / dim(process_groups, 1)` (None when the groups do not give their
    size), of element type `E`."""
    dim = _non_negative(op, diag, "scatter_dimension", "C2")
    if dim is None:
        return None
    operand = op.operands[0].type
    rets = check_reduction_body(op, diag, "C7", [operand])
    if rets is None:
        return None
    if operand.shape is None:
        return [TensorType(None, rets[0].element_type)]
    shape = list(operand.shape)
    if dim < len(shape):
        n = group_size(op)
        shape[dim] = shape[dim] // n if shape[dim] is not None and n is not None else None
    return [TensorType(tuple(shape), rets[0].element_type)]


@verifier("stablehlo.reduce_scatter")
def _verify_reduce_scatter(op: Operation, diag: Diagnostics) -> None:
    """reduce_scatter (C1-C9). The scattered dimension is checked as upstream does: the
    operand's is a multiple of the result's."""
    if not _c.signature(op, diag, [_c.TENSOR], [_c.TENSOR],
                        attrs={"scatter_dimension": "int", **_COLLECTIVE},
                        optional_attrs=_GLOBAL, regions=1):
        return
    if _non_negative(op, diag, "scatter_dimension", "C2") is None:
        return
    if not check_replica_groups(op, diag, "C3, C4, C5", same_size=True):
        return
    if not check_global_ids(op, diag, "C6", strict=True):
        return
    inferred = _infer_reduce_scatter(op, diag)
    if inferred is None:
        return
    operand, result, want = op.operands[0].type, op.results[0].type, inferred[0]
    dim = int_attr(op, "scatter_dimension")
    if not _c.same_element_type(result.element_type, want.element_type):
        diag.error(op, "C9", f"result element-type is expected to be "
                             f"'{_c.type_str(want.element_type)}', but got "
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
    for d in range(len(want.shape)):
        if d != dim and not _c.compatible_dims(want.shape[d], result.shape[d]):
            diag.error(op, "C8", f"non scatter dimensions should be same for operand "
                                 f"({operand.shape[d]}) and result ({result.shape[d]})")
            return


# --- all_to_all (spec "all_to_all") ---------------------------------------------------------

define("stablehlo.all_to_all", spec="all_to_all", traits=_MOVES,
       summary="split along split_dimension, member i gets every member's part i, "
               "concatenated along concat_dimension",
       inherent="split_dimension concat_dimension split_count replica_groups channel_handle")


@kernel("stablehlo.all_to_all")
def all_to_all(op: Operation, ctx: PrepareContext) -> Kernel:
    """Split along ``split_dimension``, member i gets every member's part i, concatenated along
    ``concat_dimension``."""
    split_dimension = int_attr(op, "split_dimension")
    concat_dimension = int_attr(op, "concat_dimension")
    split_count = int_attr(op, "split_count")
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

    native = Native("all_to_all", split=split_dimension, dim=concat_dimension)

    def run(*operands: Any) -> Values:
        group = groups.of(process)
        if len(group) != split_count:  # combine says so
            return meet(op, process, group, operands, combine, cid)
        return meet(op, process, group, operands, combine, cid, native)

    return run


def _all_to_all_attrs(op: Operation, diag: Diagnostics) -> tuple[int, int, int] | None:
    """(C1, C3) non-negative split and concat dimensions; (C4) `0 < split_count`."""
    split_dim = _non_negative(op, diag, "split_dimension", "C1")
    if split_dim is None:
        return None
    concat_dim = _non_negative(op, diag, "concat_dimension", "C3")
    if concat_dim is None:
        return None
    count = int_attr(op, "split_count")
    if count <= 0:
        diag.error(op, "C4", f"op attribute 'split_count' failed to satisfy constraint: 64-bit "
                             f"signless integer attribute whose value is positive (got {count})")
        return None
    return split_dim, concat_dim, count


@inference("stablehlo.all_to_all")
def _infer_all_to_all(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """(C1)-(C8), then (C9): each result is its operand with `dim(split_dimension) /
    split_count` and `dim(concat_dimension) * split_count`."""
    attrs = _all_to_all_attrs(op, diag)
    if attrs is None:
        return None
    split_dim, concat_dim, count = attrs
    for operand in op.operand_types:
        if operand.shape is None:
            continue
        rank = len(operand.shape)
        if split_dim >= rank:
            diag.error(op, "C1", f"AllToAll split_dimension {split_dim} is out-of-bounds for "
                                 f"input rank {rank}")
            return None
        if concat_dim >= rank:
            diag.error(op, "C3", f"AllToAll concat_dimension {concat_dim} is out-of-bounds for "
                                 f"input rank {rank}")
            return None
    if not check_replica_groups(op, diag, "C5, C6, C7", same_size=True, group_size=count):
        return None
    inferred: list[Type] = []
    for operand in op.operand_types:
        if operand.shape is None:
            inferred.append(operand)
            continue
        shape = list(operand.shape)
        s = shape[split_dim]
        if s is not None:
            if s % count:
                diag.error(op, "C2", f"split dimension has size {s}, expected to be a multiple "
                                     f"of split_count {count}")
                return None
            shape[split_dim] = s // count
        c = shape[concat_dim]
        if c is not None:
            shape[concat_dim] = c * count
        inferred.append(TensorType(tuple(shape), operand.element_type))
    return inferred


@verifier("stablehlo.all_to_all")
def _verify_all_to_all(op: Operation, diag: Diagnostics) -> None:
    """all_to_all (C1-C9)."""
    if not _c.signature(op, diag, [(_c.TENSOR, "*")], [(_c.TENSOR, "*")],
                        attrs={"split_dimension": "int", "concat_dimension": "int",
                               "split_count": "int", **_COLLECTIVE}, optional_attrs=_CHANNEL):
        return
    if _all_to_all_attrs(op, diag) is None:
        return
    if len(op.operands) != len(op.results):
        diag.error(op, "C9", "op requires the same number of operands and results")
        return
    for i, (a, b) in enumerate(zip(op.operand_types, op.result_types)):
        if not _c.compatible_element_types(a.element_type, b.element_type):
            diag.error(op, "C9", f"op requires the same element type for operand and result at "
                                 f"index {i}")
            return
    inferred = _infer_all_to_all(op, diag)
    if inferred is not None:
        _c.check_inferred(op, diag, "C9", [None if t.shape is None else t for t in inferred])


# --- collective_permute (spec "collective_permute") -----------------------------------------

define("stablehlo.collective_permute", spec="collective_permute", traits=_MOVES,
       summary="the target of each source-target pair gets the source's operand",
       inherent="source_target_pairs channel_handle")


@kernel("stablehlo.collective_permute")
def collective_permute(op: Operation, ctx: PrepareContext) -> Kernel:
    """The target of each source-target pair gets the source's operand; a process that is no
    pair's target gets zeros.

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
        group = component.get((process.replica_id, process.partition_id))
        if group is None:
            return tuple(zeros(t, x) for t, x in zip(types, operands))

        def combine(group: tuple[ProcessId, ...], values: list[Values]) -> list[Values]:
            out = []
            for m, v in zip(group, values):
                src = source_of.get(m)
                out.append(values[group.index(src)] if src is not None else
                           tuple(zeros(t, x) for t, x in zip(types, v)))
            return out

        me = (process.replica_id, process.partition_id)
        dest = next((group.index(t) for t, s in source_of.items() if s == me), None)
        src = source_of.get(me)
        native = Native("permute", dest=dest, source=None if src is None else group.index(src),
                        zeros=lambda: tuple(zeros(t, x) for t, x in zip(types, operands)))
        return meet(op, process, group, operands, combine, cid, native)

    return run


@inference("stablehlo.collective_permute")
def _infer_collective_permute(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """(C5) `type(result) = type(operand)`."""
    return [op.operands[0].type]


@verifier("stablehlo.collective_permute")
def _verify_collective_permute(op: Operation, diag: Diagnostics) -> None:
    """collective_permute (C1-C5)."""
    if not _c.signature(op, diag, [_c.TENSOR], [_c.TENSOR],
                        attrs={"source_target_pairs": "i64elements"}, optional_attrs=_CHANNEL):
        return
    a = op.attr("source_target_pairs")
    if isinstance(a, DenseElementsAttr):
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
    _c.check_inferred(op, diag, "C5", _infer_collective_permute(op, diag) or [])


# --- collective_broadcast (spec "collective_broadcast") -------------------------------------

define("stablehlo.collective_broadcast", spec="collective_broadcast", traits=_MOVES,
       summary="every member of a process group gets the operand of the group's root",
       inherent="replica_groups channel_handle")


def _dynamic_root(op: Operation, diag: Diagnostics, name: str) -> int | None:
    """With `has_dynamic_root`, the last operand is a rank-1 i32 root; returns the number of
    data operands (None after a violation)."""
    n = len(op.operands)
    if not bool_attr(op, "has_dynamic_root", False):
        if n < 1:
            diag.error(op, "", f"{name} requires at least one data operand")
            return None
        return n
    if n < 2:
        diag.error(op, "", f"{name} with has_dynamic_root=true requires at least two operands "
                           f"(data + root)")
        return None
    root = op.operands[-1].type
    if not (isinstance(root, TensorType) and root.shape is not None and len(root.shape) == 1
            and getattr(root.element_type, "name", None) == "i32"):
        diag.error(op, "", f"last operand of {name} with has_dynamic_root=true must be a "
                           f"rank-1 i32 tensor, but got '{root}'")
        return None
    if root.shape[0] != n - 1:
        diag.error(op, "", f"last operand of {name} with has_dynamic_root=true must have the "
                           f"same number of elements as data operands ({n - 1}), but got {_c.size_str(root.shape[0])}")
        return None
    return n - 1


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


@kernel("stablehlo.collective_broadcast")
def collective_broadcast(op: Operation, ctx: PrepareContext) -> Kernel:
    """Every member gets the operand of its group's first process (with ``has_dynamic_root``,
    of the process the last operand names); a process in no group gets zeros."""
    dynamic = bool_attr(op, "has_dynamic_root", False)
    groups = Groups(op, simple_strategy(op), id_groups(op))
    cid = channel_id(op)
    types = op.result_types
    process = ctx.process

    def combine(group: tuple[ProcessId, ...], values: list[Values]) -> list[Values]:
        count = len(values[0][0])
        roots = _roots(op, group, values, count) if dynamic else [0] * count
        outs = tuple(values[r][0][k] for k, r in enumerate(roots))
        return [outs] * len(values)

    native = Native("broadcast", root=0)

    def run(*operands: Any) -> Values:
        data = operands[:-1] if dynamic else operands
        group = groups.find(process)
        if group is None:
            return tuple(zeros(t, x) for t, x in zip(types, data))
        if dynamic:
            return meet(op, process, group, (data, operands[-1]), combine, cid)
        return meet(op, process, group, (data,), combine, cid, native)

    return run


@inference("stablehlo.collective_broadcast")
def _infer_collective_broadcast(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """(C3) `type(results...) = type(operands...)` (the data operands)."""
    n = _dynamic_root(op, diag, "collective_broadcast")
    return None if n is None else [v.type for v in op.operands[:n]]


@verifier("stablehlo.collective_broadcast")
def _verify_collective_broadcast(op: Operation, diag: Diagnostics) -> None:
    """collective_broadcast (C1-C3)."""
    if not _c.signature(op, diag, [(_c.TENSOR, "*")], [(_c.TENSOR, "*")], attrs=_COLLECTIVE,
                        optional_attrs=_CHANNEL):
        return
    if _dynamic_root(op, diag, "collective_broadcast") is None:
        return
    if not check_replica_groups(op, diag, "C1, C2", same_size=True, covering=False):
        return
    inferred = _infer_collective_broadcast(op, diag)
    if inferred is not None:
        _c.check_inferred(op, diag, "C3", inferred)


# --- collective_reduce (beyond the seed spec) -----------------------------------------------

define("stablehlo.collective_reduce", summary="the root of a process group gets the reduction "
                                              "of the members' operands, the others zeros",
       traits={SIDE_EFFECTS})


@kernel("stablehlo.collective_reduce")
def collective_reduce(op: Operation, ctx: PrepareContext) -> Kernel:
    """The group's first process (or the one the ``has_dynamic_root`` operand names) gets the
    reduction of the members' operands, as in all_reduce; the other members get zeros."""
    dynamic = bool_attr(op, "has_dynamic_root", False)
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
        group = groups.of(process)
        if dynamic:
            return meet(op, process, group, (data, operands[-1]), combine, cid)
        native = Native("reduce", reduction=body.single_op, dtype=dtype, root=0,
                        zeros=lambda: tuple(zeros(t, x) for t, x in zip(types, data)))
        return meet(op, process, group, (data,), combine, cid, native)

    return run


@inference("stablehlo.collective_reduce")
def _infer_collective_reduce(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """As all_reduce, for the data operands: their shapes, the reducer's element types."""
    n = _dynamic_root(op, diag, "collective_reduce")
    if n is None:
        return None
    return _reduced_types(op, diag, op.operand_types[:n])


@verifier("stablehlo.collective_reduce")
def _verify_collective_reduce(op: Operation, diag: Diagnostics) -> None:
    """collective_reduce: like all_reduce, with an optional dynamic root operand."""
    if not _c.signature(op, diag, [(_c.TENSOR, "*")], [(_c.TENSOR, "*")], attrs=_COLLECTIVE,
                        optional_attrs=_CHANNEL, regions=1):
        return
    if not check_global_ids(op, diag, "C4", strict=True):
        return
    if _dynamic_root(op, diag, "collective_reduce") is None:
        return
    if not check_replica_groups(op, diag, "C1, C2, C3", same_size=False):
        return
    inferred = _infer_collective_reduce(op, diag)
    if inferred is not None:
        _c.check_inferred(op, diag, "C6, C7", inferred)


# --- cross-replica-sum (upstream, verified by name only) ------------------------------------

define("stablehlo.cross-replica-sum", summary="MHLO's all_reduce of a sum (known, not run)",
       inherent="replica_groups")
