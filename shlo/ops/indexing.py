"""Indexing ops: gather, scatter, dynamic_slice, dynamic_update_slice (spec sections of the
same names).

Gather and scatter are computed without per-element loops: the spec's index formulas
(``full_start_index + full_batching_index + full_offset_index``) are evaluated for all result
(or update) elements at once as broadcast integer arrays, one per operand dimension, and the data
moves with a single numpy fancy index (gather) or a few vectorized assignments (scatter).
See docs/semantics/shape_indexing.md for the implementation-defined choices.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ..attributes import StructAttr, int_or_none, ints
from ..ir import Operation
from ..types import TensorType, is_quantized
from ..registry import kernel
from .shape import Run, as_dtype, ints_attr, result_type

__all__ = ["GatherDimensionNumbers", "ScatterDimensionNumbers", "gather_array", "scatter_arrays",
           "scatter_targets", "to_index", "dynamic_slice_array", "UpdateComputation",
           "occurrence_rank"]

_INT64_MAX = np.iinfo(np.int64).max
_SAME_SIZE_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def to_index(a: Any) -> np.ndarray:
    """Integer index values of any integer dtype (ml_dtypes included) as int64.

    Unsigned values above the int64 range saturate to INT64_MAX (they are clamped or out of
    bounds anyway).
    """
    a = np.asarray(a)
    if a.dtype == np.int64:
        return a
    if a.dtype == np.uint64:
        return np.minimum(a, np.uint64(_INT64_MAX)).astype(np.int64)
    return a.astype(np.int64)


def _index_vectors(indices: np.ndarray, index_vector_dim: int) -> np.ndarray:
    """The index tensor with its index vector dimension moved last (added when implicit)."""
    indices = to_index(indices)
    if index_vector_dim >= indices.ndim:
        return indices[..., None]
    if index_vector_dim == indices.ndim - 1:
        return indices
    axes = [d for d in range(indices.ndim) if d != index_vector_dim] + [index_vector_dim]
    return indices.transpose(axes)


def _line(n: int, rank: int, axis: int) -> np.ndarray:
    """``arange(n)`` shaped to broadcast along ``axis`` of a rank-``rank`` index space."""
    shape = [1] * rank
    shape[axis] = n
    return np.arange(n, dtype=np.int64).reshape(shape)


# --- gather ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GatherDimensionNumbers:
    """`#stablehlo.gather<...>` with the spec's field names (absent lists are empty)."""

    offset_dims: tuple[int, ...] = ()
    collapsed_slice_dims: tuple[int, ...] = ()
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()
    start_index_map: tuple[int, ...] = ()
    index_vector_dim: int = 0

    @classmethod
    def from_attr(cls, attr: Any) -> "GatherDimensionNumbers":
        if not isinstance(attr, StructAttr):
            raise TypeError(f"expected #stablehlo.gather<...>, got {attr!r}")
        return cls(*(ints(attr.get(f), ()) for f in (  # type: ignore[arg-type]
            "offset_dims", "collapsed_slice_dims", "operand_batching_dims",
            "start_indices_batching_dims", "start_index_map")),
            index_vector_dim=int_or_none(attr.get("index_vector_dim")) or 0)


def gather_array(operand: np.ndarray, start_indices: np.ndarray, dims: GatherDimensionNumbers,
                 slice_sizes: Sequence[int]) -> np.ndarray:
    """Spec "gather" for all result elements at once.

    The operand is viewed as the array of all its windows of shape ``slice_sizes``
    (``sliding_window_view``, no copy); one fancy index picks, for every batch element, the
    window at ``full_start_index + full_batching_index`` (start indices clamped to
    ``[0, dim(operand, d) - slice_sizes[d]]``). The collapsed and batching dimensions (size 1)
    are then dropped and the offset dimensions moved to ``offset_dims``.
    """
    operand = np.asarray(operand)
    starts = _index_vectors(start_indices, dims.index_vector_dim)
    batch_shape = starts.shape[:-1]
    nb = len(batch_shape)
    # ml_dtypes such as float8_e5m2 do not survive as_strided: slide over same-size uints
    raw = operand.view(_SAME_SIZE_UINT[operand.dtype.itemsize]) \
        if operand.dtype.itemsize in _SAME_SIZE_UINT else operand
    windows = np.lib.stride_tricks.sliding_window_view(raw, tuple(slice_sizes))
    index: list[Any] = []
    for d in range(operand.ndim):
        if d in dims.start_index_map:
            k = dims.start_index_map.index(d)
            hi = max(operand.shape[d] - slice_sizes[d], 0)
            index.append(np.clip(starts[..., k], 0, hi))
        elif d in dims.operand_batching_dims:
            ds = dims.start_indices_batching_dims[dims.operand_batching_dims.index(d)]
            axis = ds if ds < dims.index_vector_dim else ds - 1
            index.append(_line(batch_shape[axis], nb, axis))
        else:
            index.append(0)
    picked = windows[tuple(index)] if index else windows
    full = tuple(batch_shape) + tuple(slice_sizes)
    if picked.shape != full:  # no index varies along some batch dimension
        picked = np.broadcast_to(picked, full)
    offset_sizes = [slice_sizes[d] for d in range(operand.ndim)
                    if d not in dims.collapsed_slice_dims and d not in dims.operand_batching_dims]
    picked = picked.reshape(tuple(batch_shape) + tuple(offset_sizes))
    rank = nb + len(offset_sizes)
    batch_axes = iter(range(nb))
    offset_axes = iter(range(nb, rank))
    perm = [next(offset_axes) if r in dims.offset_dims else next(batch_axes) for r in range(rank)]
    if perm != list(range(rank)):
        picked = picked.transpose(perm)
    return picked.view(operand.dtype) if raw is not operand else picked


@kernel("stablehlo.gather", quantized_aware=True)
def gather(op: Operation, ctx: Any) -> Run:
    """Spec "gather": slices of ``operand`` at offsets from ``start_indices`` (clamped)."""
    dims = GatherDimensionNumbers.from_attr(op.attr("dimension_numbers"))
    slice_sizes = ints_attr(op, "slice_sizes")
    dtype = result_type(op).dtype

    def run(operand: np.ndarray, start_indices: np.ndarray) -> Sequence[Any]:
        return (gather_array(as_dtype(operand, dtype), start_indices, dims, slice_sizes),)

    return run


# --- scatter -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScatterDimensionNumbers:
    """`#stablehlo.scatter<...>` with the spec's field names (absent lists are empty)."""

    update_window_dims: tuple[int, ...] = ()
    inserted_window_dims: tuple[int, ...] = ()
    input_batching_dims: tuple[int, ...] = ()
    scatter_indices_batching_dims: tuple[int, ...] = ()
    scatter_dims_to_operand_dims: tuple[int, ...] = ()
    index_vector_dim: int = 0

    @classmethod
    def from_attr(cls, attr: Any) -> "ScatterDimensionNumbers":
        if not isinstance(attr, StructAttr):
            raise TypeError(f"expected #stablehlo.scatter<...>, got {attr!r}")
        return cls(*(ints(attr.get(f), ()) for f in (  # type: ignore[arg-type]
            "update_window_dims", "inserted_window_dims", "input_batching_dims",
            "scatter_indices_batching_dims", "scatter_dims_to_operand_dims")),
            index_vector_dim=int_or_none(attr.get("index_vector_dim")) or 0)


def scatter_targets(input_shape: Sequence[int], scatter_indices: np.ndarray,
                    updates_shape: Sequence[int], dims: ScatterDimensionNumbers
                    ) -> tuple[np.ndarray, np.ndarray | None]:
    """The flat result index of every update element, and which update elements are in bounds.

    Returns ``(targets, mask)``: ``mask`` has the updates' shape and is true where the spec's
    ``result_index`` is in bounds, or is None when every update element is in bounds (then no
    masking is needed); ``targets`` holds the row-major linear result index of each in-bounds
    update element, in row-major order of the update index space.
    """
    starts = _index_vectors(scatter_indices, dims.index_vector_dim)
    batch_shape = starts.shape[:-1]
    rank = len(updates_shape)
    scatter_dims = [d for d in range(rank) if d not in dims.update_window_dims]
    batch_view = [1] * rank
    for i, d in enumerate(scatter_dims):
        batch_view[d] = batch_shape[i]
    window_input_dims = [d for d in range(len(input_shape)) if d not in dims.inserted_window_dims
                         and d not in dims.input_batching_dims]
    out_of_bounds: list[np.ndarray] = []
    linear: Any = 0
    stride = 1
    for d in reversed(range(len(input_shape))):
        part: Any = 0
        if d in dims.scatter_dims_to_operand_dims:
            k = dims.scatter_dims_to_operand_dims.index(d)
            part = starts[..., k].reshape(batch_view)
        elif d in dims.input_batching_dims:
            ds = dims.scatter_indices_batching_dims[dims.input_batching_dims.index(d)]
            axis = ds if ds < dims.index_vector_dim else ds - 1
            part = _line(batch_shape[axis], rank, scatter_dims[axis])
        if d in window_input_dims:
            u = dims.update_window_dims[window_input_dims.index(d)]
            part = part + _line(updates_shape[u], rank, u)
        if isinstance(part, np.ndarray):
            # 0 <= part < size in one comparison: negative values are huge as uint64.
            inside = part.view(np.uint64) < np.uint64(input_shape[d])
            if not inside.all():
                out_of_bounds.append(inside)
            linear = linear + part * stride if stride != 1 else part
        stride *= input_shape[d]
    linear = np.broadcast_to(np.asarray(linear, dtype=np.int64), updates_shape)
    if not out_of_bounds:
        return linear.reshape(-1), None
    mask = np.ones(updates_shape, dtype=bool)
    for inside in out_of_bounds:
        mask &= inside
    return linear[mask], mask


def occurrence_rank(targets: np.ndarray) -> np.ndarray:
    """For each position, how many earlier positions have the same target (0 for the first)."""
    n = targets.size
    order = np.argsort(targets, kind="stable")
    st = targets[order]
    pos = np.arange(n)
    start = np.where(np.r_[True, st[1:] != st[:-1]] if n else np.zeros(0, bool), pos, 0)
    rank = np.empty(n, dtype=np.int64)
    rank[order] = pos - np.maximum.accumulate(start) if n else pos
    return rank


_UFUNCS: dict[str, np.ufunc] = {
    "stablehlo.add": np.add, "stablehlo.multiply": np.multiply,
    "stablehlo.maximum": np.maximum, "stablehlo.minimum": np.minimum,
    "stablehlo.and": np.bitwise_and, "stablehlo.or": np.bitwise_or,
    "stablehlo.xor": np.bitwise_xor,
}


def _ufunc_for(name: str | None, dtype: np.dtype) -> np.ufunc | None:
    """The ufunc whose ``.at`` computes the single-op body ``name`` exactly on ``dtype``.

    Not for float or complex maximum/minimum (numpy does not order -0.0 below +0.0, and its
    complex NaN handling differs from the spec's) nor bitwise ops on anything but numpy's own
    integers and booleans.
    """
    uf = _UFUNCS.get(name or "")
    if uf is None:
        return None
    if dtype.kind not in "biu" and uf in (np.maximum, np.minimum):
        return None
    if uf in (np.bitwise_and, np.bitwise_or, np.bitwise_xor) and dtype.kind not in "biu":
        return None
    return uf


@dataclass
class UpdateComputation:
    """How scatter applies ``update_computation``: decided once in prepare.

    ``kind`` is ``"assign"`` (the body returns the update values), ``"keep"`` (it returns the
    current values), ``"ufunc"`` (a single binary op numpy has a ``ufunc.at`` for) or
    ``"region"`` (evaluate the compiled region on whole arrays).
    """

    kind: str
    fn: Callable[..., list[Any]] | None = None
    ufunc: np.ufunc | None = None
    arg_dtypes: tuple[np.dtype, ...] = ()

    @classmethod
    def of(cls, op: Operation, ctx: Any, n: int) -> "UpdateComputation":
        region = op.regions[0]
        block = region.blocks[0]
        args = block.arguments
        dtypes = tuple(a.type.dtype for a in args if isinstance(a.type, TensorType))
        ret = block.operations[-1] if block.operations else None
        if len(block.operations) == 1 and ret is not None and len(ret.operands) == n:
            if all(v is a for v, a in zip(ret.operands, args[n:])):
                return cls("assign", arg_dtypes=dtypes)
            if all(v is a for v, a in zip(ret.operands, args[:n])):
                return cls("keep", arg_dtypes=dtypes)
        fn = ctx.region(region)
        name = fn.single_op if n == 1 else None
        in_types = [v.type for v in op.operands[:n]]
        same = all(isinstance(a.type, TensorType) and isinstance(t, TensorType)
                   and a.type.element_type == t.element_type for a, t in zip(args, in_types * 2))
        uf = _ufunc_for(name, dtypes[0]) if dtypes else None
        if uf is not None and same and not any(is_quantized(t) for t in in_types):
            return cls("ufunc", fn=fn, ufunc=uf, arg_dtypes=dtypes)
        return cls("region", fn=fn, arg_dtypes=dtypes)


def _call_region(fn: Callable[..., list[Any]], args: list[np.ndarray],
                 out_dtypes: Sequence[np.dtype]) -> list[np.ndarray]:
    """Evaluate the region on whole arrays of element tuples; per element if it cannot batch.

    The per-element fallback is only taken when the body is not element-wise (it raised on
    1-D arguments); it evaluates the body on 0-d arrays one element tuple at a time.
    """
    try:
        outs = fn(*args)
        outs = [np.broadcast_to(np.asarray(o), args[0].shape) for o in outs]
    except Exception:
        m = args[0].shape[0] if args else 0
        outs_el = [fn(*[a[i, ...] for a in args]) for i in range(m)]  # not element-wise
        outs = [np.array([np.asarray(o[j]) for o in outs_el]).reshape(m)
                for j in range(len(out_dtypes))]
    return [as_dtype(o, dt) for o, dt in zip(outs, out_dtypes)]


def scatter_arrays(inputs: Sequence[np.ndarray], scatter_indices: np.ndarray,
                   updates: Sequence[np.ndarray], dims: ScatterDimensionNumbers,
                   comp: UpdateComputation) -> list[np.ndarray]:
    """Spec "scatter" on numpy arrays (see the module docstring and the semantics notes).

    Update elements whose ``result_index`` is out of bounds are skipped (spec). The schedule is
    the row-major order of the update index space: with duplicate targets the result is what
    applying the updates one by one in that order gives.
    """
    results = [np.array(x, copy=True, order="C") for x in inputs]
    if comp.kind == "keep" or not results or results[0].size == 0:
        return results
    targets, mask = scatter_targets(results[0].shape, scatter_indices, np.shape(updates[0]),
                                    dims)
    if targets.size == 0:
        return results
    flats = [r.reshape(-1) for r in results]
    values = [np.asarray(u).reshape(-1) if mask is None else np.asarray(u)[mask]
              for u in updates]
    n = len(results)
    if comp.kind == "assign":
        # last writer wins: the largest update position per target (ufunc.at is sequential)
        pos = np.arange(targets.size)
        winner = np.full(flats[0].size, -1, dtype=np.int64)
        np.maximum.at(winner, targets, pos)
        last = pos[winner[targets] == pos]
        for f, v in zip(flats, values):
            f[targets[last]] = v[last]
        return results
    if comp.kind == "ufunc":
        comp.ufunc.at(flats[0], targets, as_dtype(values[0], flats[0].dtype))  # type: ignore
        return results
    in_dtypes = comp.arg_dtypes[:n] or tuple(f.dtype for f in flats)
    up_dtypes = comp.arg_dtypes[n:] or in_dtypes
    values = [as_dtype(v, dt) for v, dt in zip(values, up_dtypes)]
    out_dtypes = [f.dtype for f in flats]
    rank = occurrence_rank(targets)
    rounds = int(rank.max()) + 1
    if rounds == 1:
        groups = [np.arange(targets.size)]
    else:  # round r applies the r-th update of every target, targets unique within a round
        order = np.argsort(rank, kind="stable")
        groups = np.split(order, np.cumsum(np.bincount(rank))[:-1])
    for sel in groups:
        t = targets[sel]
        cur = [as_dtype(f[t], dt) for f, dt in zip(flats, in_dtypes)]
        new = _call_region(comp.fn, cur + [v[sel] for v in values], out_dtypes)  # type: ignore
        for f, v in zip(flats, new):
            f[t] = v
    return results


@kernel("stablehlo.scatter", quantized_aware=True)
def scatter(op: Operation, ctx: Any) -> Run:
    """Spec "scatter": ``results = inputs`` updated at the indices from ``scatter_indices``.

    Quantized tensors are scattered as storage values; the update computation's own ops then
    see quantized element types and handle them (no fast path for quantized types).
    """
    n = (len(op.operands) - 1) // 2
    dims = ScatterDimensionNumbers.from_attr(op.attr("scatter_dimension_numbers"))
    comp = UpdateComputation.of(op, ctx, n)
    dtypes = [result_type(op, i).dtype for i in range(n)]

    def run(*operands: np.ndarray) -> Sequence[Any]:
        inputs = [as_dtype(x, dt) for x, dt in zip(operands[:n], dtypes)]
        return scatter_arrays(inputs, operands[n], operands[n + 1:], dims, comp)

    return run


# --- dynamic_slice / dynamic_update_slice ------------------------------------------------------


def _clamped_starts(start_indices: Sequence[Any], shape: Sequence[int],
                    sizes: Sequence[int]) -> list[int]:
    """``clamp(0, start_indices, shape - sizes)`` as Python ints."""
    return [min(max(int(np.asarray(s)), 0), n - k)
            for s, n, k in zip(start_indices, shape, sizes)]


def dynamic_slice_array(operand: np.ndarray, start_indices: Sequence[Any],
                        slice_sizes: Sequence[int]) -> np.ndarray:
    """Spec "dynamic_slice": the slice at the clamped start indices (a view)."""
    operand = np.asarray(operand)
    starts = _clamped_starts(start_indices, operand.shape, slice_sizes)
    return operand[tuple(slice(s, s + k) for s, k in zip(starts, slice_sizes))]


@kernel("stablehlo.dynamic_slice", quantized_aware=True)
def dynamic_slice(op: Operation, ctx: Any) -> Run:
    """Spec "dynamic_slice": ``adjusted_start_indices = clamp(0, start_indices, shape - sizes)``."""
    slice_sizes = ints_attr(op, "slice_sizes")

    def run(operand: np.ndarray, *start_indices: np.ndarray) -> Sequence[Any]:
        return (dynamic_slice_array(operand, start_indices, slice_sizes),)

    return run


@kernel("stablehlo.dynamic_update_slice", quantized_aware=True)
def dynamic_update_slice(op: Operation, ctx: Any) -> Run:
    """Spec "dynamic_update_slice": writes ``update`` at the clamped start indices (a copy)."""
    dtype = result_type(op).dtype

    def run(operand: np.ndarray, update: np.ndarray, *start_indices: np.ndarray
            ) -> Sequence[Any]:
        result = np.array(operand, dtype=dtype, copy=True)
        update = np.asarray(update)
        starts = _clamped_starts(start_indices, result.shape, update.shape)
        result[tuple(slice(s, s + k) for s, k in zip(starts, update.shape))] = update
        return (result,)

    return run



# --- constraints (spec "Ops" section, C1..Cn) ---------------------------------------------------
# The verifiers of the indexing ops (shlo/verifier.py calls them through the registry).

from typing import Any as _Any  # noqa: E402

from ..ir import Operation as _Operation  # noqa: E402
from ..types import TensorType as _TensorType  # noqa: E402
from . import _constraints as _c  # noqa: E402
from ..registry import verifier  # noqa: E402

_INDEX_SCALAR = _c.TC(_c.I, rank=0)


@verifier("stablehlo.gather")
def _verify_gather(op: _Operation, diag: _Any) -> None:
    """gather (C1-C14): dimension numbers within range, sorted and unique where the spec says,
    slice sizes within the operand, and the result type the spec determines."""
    if not _c.signature(op, diag, [_c.TENSOR, _c.INT_TENSOR], [_c.TENSOR],
                        attrs={"dimension_numbers": "any", "slice_sizes": "ints"},
                        optional_attrs={"indices_are_sorted": "bool"}):
        return
    operand, indices = op.operands[0].type, op.operands[1].type
    shape = _c.check_gather(op, diag, operand, indices, _c.ints_attr(op, "slice_sizes"),
                            op.attr("dimension_numbers"))
    if shape is not None:
        _c.check_inferred(op, diag, "C13, C14", [_TensorType(shape, operand.element_type)])


@verifier("stablehlo.scatter")
def _verify_scatter(op: _Operation, diag: _Any) -> None:
    """scatter (C1-C17): dimension numbers, updates shape, update_computation and results."""
    if not _c.signature(op, diag, [(_c.TENSOR, "*"), _c.TC(_c.I | _c.INDEX), (_c.TENSOR, "*")],
                        [(_c.TENSOR, "*")], attrs={"scatter_dimension_numbers": "any"},
                        optional_attrs={"indices_are_sorted": "bool", "unique_indices": "bool"},
                        regions=1):
        return
    n = (len(op.operands) - 1) // 2
    inputs = [v.type for v in op.operands[:n]]
    indices = op.operands[n].type
    updates = [v.type for v in op.operands[n + 1:]]
    if n == 0:
        diag.error(op, "C5", "expects at least one input")
        return
    for i, (a, u) in enumerate(zip(inputs, updates)):
        if not _c.compatible_element_types(a.element_type, u.element_type):
            diag.error(op, "C6", f"expects updates and inputs to have the same element types: "
                                 f"input {i} is {_c.types_str([a])}, update {i} is "
                                 f"{_c.types_str([u])}")
            return
    if not _c.check_scatter_dims(op, diag, inputs, indices, updates,
                                 op.attr("scatter_dimension_numbers")):
        return
    scalars = [_TensorType((), a.element_type) for a in inputs]
    rets = _c.check_reducer(op, diag, "C15", 0, inputs, scalars, [])
    if rets is None:
        return
    _c.check_inferred(op, diag, "C16, C17",
                      [_TensorType(a.shape, r.element_type) for a, r in zip(inputs, rets)])


@verifier("stablehlo.dynamic_slice")
def _verify_dynamic_slice(op: _Operation, diag: _Any) -> None:
    """(C1) element types agree; (C2) `size(start_indices) = size(slice_sizes) =
    rank(operand)`; (C3) the start indices share one type; (C4) `0 <= slice_sizes <=
    shape(operand)`; (C5) `shape(result) = slice_sizes`."""
    if not _c.signature(op, diag, [_c.TENSOR, (_INDEX_SCALAR, "*")], [_c.TENSOR],
                        attrs={"slice_sizes": "ints"}):
        return
    operand = op.operands[0].type
    starts = [v.type for v in op.operands[1:]]
    sizes = _c.ints_attr(op, "slice_sizes")
    if len(sizes) != len(starts):
        diag.error(op, "C2", f"has mismatched number of slice sizes ({len(sizes)}) and number of "
                             f"start indices ({len(starts)})")
        return
    if operand.shape is not None and len(starts) != len(operand.shape):
        diag.error(op, "C2", f"has mismatched number of start indices ({len(starts)}) and the "
                             f"rank of operand ({len(operand.shape)})")
        return
    if any(not _c.same_type(starts[0], t) for t in starts[1:]):
        diag.error(op, "C3", f"start indices must have same element type: "
                             f"{_c.types_str(starts)}")
        return
    for i, s in enumerate(sizes):
        if s < 0:
            diag.error(op, "C4", f"has negative size index to dynamic slice: {s}")
            return
        n = operand.shape[i] if operand.shape is not None else None
        if n is not None and s > n:
            diag.error(op, "C4", f"has slice size {s} greater than dimension size {n} in "
                                 f"dimension {i} of operand")
            return
    _c.check_inferred(op, diag, "C1, C5", [_TensorType(tuple(sizes), operand.element_type)])


@verifier("stablehlo.dynamic_update_slice")
def _verify_dynamic_update_slice(op: _Operation, diag: _Any) -> None:
    """(C1) `type(operand) = type(result)`; (C2) element types agree; (C3) `rank(update) =
    rank(operand)`; (C4) `size(start_indices) = rank(operand)`; (C5) the start indices share one
    type; (C6) `0 <= shape(update) <= shape(operand)`."""
    if not _c.signature(op, diag, [_c.TENSOR, _c.TENSOR, (_INDEX_SCALAR, "*")], [_c.TENSOR]):
        return
    operand, update = op.operands[0].type, op.operands[1].type
    starts = [v.type for v in op.operands[2:]]
    if not _c.compatible_element_types(operand.element_type, update.element_type):
        diag.error(op, "C2", f"expects update and operand to have the same element type: "
                             f"{_c.types_str([update, operand])}")
        return
    if operand.shape is not None and update.shape is not None and \
            len(update.shape) != len(operand.shape):
        diag.error(op, "C3", f"update rank does not match operand rank: {len(update.shape)} vs "
                             f"{len(operand.shape)}.")
        return
    if operand.shape is not None and len(starts) != len(operand.shape):
        diag.error(op, "C4", f"expects number of start_indices to match operand rank: "
                             f"{len(starts)} vs {len(operand.shape)}.")
        return
    if any(not _c.same_type(starts[0], t) for t in starts[1:]):
        diag.error(op, "C5", f"start indices must have same element type: "
                             f"{_c.types_str(starts)}")
        return
    if operand.shape is not None and update.shape is not None:
        for i, (u, n) in enumerate(zip(update.shape, operand.shape)):
            if u is not None and n is not None and not 0 <= u <= n:
                diag.error(op, "C6", f"expects size at dimension {i} of update to be in range "
                                     f"[0, {n}]. Got: {u}.")
                return
    _c.check_inferred(op, diag, "C1", [operand])
