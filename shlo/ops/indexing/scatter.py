"""scatter (spec "scatter"): the inputs, updated at indices read from a tensor of scatter indices
with the values of `updates` combined by `update_computation`.

The dimension numbers are decoded once (:class:`ScatterDimensionNumbers`, with the spec's
names) and used by the kernel and the constraints. The kernel computes the spec's
``result_index`` of every update element at once (one broadcast integer array per input
dimension, then one linear index), and applies the updates with a few vectorized assignments:
``ufunc.at`` for the single-op bodies numpy computes exactly, rounds of unique targets
otherwise. See docs/semantics/shape_indexing.md for the implementation-defined choices.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from ...attributes import StructAttr
from ...errors import Diagnostics
from ...ir import Operation
from ...registry import QUANTIZED_STORAGE, Kernel, define, inference, kernel, verifier
from ...types import TensorType, Type, is_quantized
from .. import _constraints as _c
from .._arrays import as_dtype, result_type
from .._regions import check_reducer
from ._indices import dimension_fields, in_range, index_vectors, is_sorted, line

if TYPE_CHECKING:  # pragma: no cover
    from ...interpreter.evaluator import PrepareContext

__all__ = ["ScatterDimensionNumbers", "scatter_targets", "occurrence_rank", "UpdateComputation",
           "scatter_arrays", "scatter"]

_FIELDS = ("update_window_dims", "inserted_window_dims", "input_batching_dims",
           "scatter_indices_batching_dims", "scatter_dims_to_operand_dims")


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
    def from_attr(cls, attr: Any, strict: bool = True) -> "ScatterDimensionNumbers":
        """Decode the attribute; TypeError when it is not a `#stablehlo.scatter<...>` (or, when
        ``strict``, has a malformed field: with ``strict`` False that field reads as empty)."""
        lists, index_vector_dim = dimension_fields(attr, _FIELDS, "scatter", strict)
        return cls(*lists, index_vector_dim=index_vector_dim)

    @classmethod
    def of(cls, op: Operation) -> "ScatterDimensionNumbers | None":
        """The verifier's reading of ``op``'s `scatter_dimension_numbers`: None for a spelling
        the parser kept verbatim (nothing to judge)."""
        attr = op.attr("scatter_dimension_numbers")
        return cls.from_attr(attr, strict=False) if isinstance(attr, StructAttr) else None


define("stablehlo.scatter", spec="scatter",
       summary="updates the inputs at indices from scatter_indices",
       traits={QUANTIZED_STORAGE},
       inherent="scatter_dimension_numbers indices_are_sorted unique_indices")  # generic only

# --- the kernel ----------------------------------------------------------------------------------


def scatter_targets(input_shape: Sequence[int], scatter_indices: np.ndarray,
                    updates_shape: Sequence[int], dims: ScatterDimensionNumbers
                    ) -> tuple[np.ndarray, np.ndarray | None]:
    """The flat result index of every update element, and which update elements are in bounds.

    Returns ``(targets, mask)``: ``mask`` has the updates' shape and is true where the spec's
    ``result_index`` is in bounds, or is None when every update element is in bounds (then no
    masking is needed); ``targets`` holds the row-major linear result index of each in-bounds
    update element, in row-major order of the update index space.
    """
    starts = index_vectors(scatter_indices, dims.index_vector_dim)
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
            part = line(batch_shape[axis], rank, scatter_dims[axis])
        if d in window_input_dims:
            u = dims.update_window_dims[window_input_dims.index(d)]
            part = part + line(updates_shape[u], rank, u)
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
    def of(cls, op: Operation, ctx: PrepareContext, n: int) -> "UpdateComputation":
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
def scatter(op: Operation, ctx: PrepareContext) -> Kernel:
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


# --- type inference and constraints --------------------------------------------------------------


@inference("stablehlo.scatter")
def _infer_scatter(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """(C15) `update_computation` is a reducer region over the inputs' element types (its
    accumulators promotable from the updates', as upstream checks it);
    (C16-C17) `shape(results...) = shape(inputs...)`, with the element types the region
    returns."""
    n = (len(op.operands) - 1) // 2
    inputs = [v.type for v in op.operands[:n]]
    updates = [v.type for v in op.operands[n + 1:]]
    if n == 0 or not all(isinstance(t, TensorType) for t in inputs + updates):
        return None
    scalars = [TensorType((), u.element_type) for u in updates]  # (as upstream's init values)
    rets = check_reducer(op, diag, "C15", 0, inputs, scalars, [])
    if rets is None:
        return None
    return [TensorType(a.shape, r.element_type) for a, r in zip(inputs, rets)]


def check_scatter_shapes(op: Operation, diag: Diagnostics, inputs: Sequence[Any],
                         scatter_indices: Any, updates: Sequence[Any],
                         dims: ScatterDimensionNumbers) -> bool:
    """scatter (C1, C3, C19), upstream's first checks: the inputs' shapes agree, the updates'
    shapes agree, index_vector_dim is within the indices' rank (plus one)."""
    index_vector_dim = dims.index_vector_dim
    ranked_in = [t for t in inputs if isinstance(t, TensorType) and t.shape is not None]
    for t in ranked_in[1:]:
        if not _c.compatible_shapes(ranked_in[0].shape, t.shape):
            diag.error(op, "C1", "Not all inputs have compatible shapes.")
            return False
    ranked_up = [t for t in updates if isinstance(t, TensorType) and t.shape is not None]
    for t in ranked_up[1:]:
        if not _c.compatible_shapes(ranked_up[0].shape, t.shape):
            diag.error(op, "C3", "Not all updates have compatible shapes.")
            return False
    indices_shape = scatter_indices.shape if isinstance(scatter_indices, TensorType) else None
    if indices_shape is not None and not 0 <= index_vector_dim <= len(indices_shape):
        diag.error(op, "C19", f"Expects index_vector_dim to be in range [0, "
                              f"rank-of('scatter_indices')] i.e. [0, {len(indices_shape)}]. "
                              f"got: {index_vector_dim}.")
        return False
    return True


def check_scatter_dimension_numbers(op: Operation, diag: Diagnostics, inputs: Sequence[Any],
                                    scatter_indices: Any, updates: Sequence[Any],
                                    dims: ScatterDimensionNumbers) -> bool:
    """scatter (C2, C4, C7-C14), after :func:`check_scatter_shapes` and the region, in upstream's
    order: the rank of the updates, the dimension numbers, then the bounds of the updates."""
    update_window_dims = dims.update_window_dims
    inserted_window_dims = dims.inserted_window_dims
    input_batching_dims = dims.input_batching_dims
    scatter_indices_batching_dims = dims.scatter_indices_batching_dims
    scatter_dims_to_operand_dims = dims.scatter_dims_to_operand_dims
    index_vector_dim = dims.index_vector_dim
    ranked_in = [t for t in inputs if isinstance(t, TensorType) and t.shape is not None]
    ranked_up = [t for t in updates if isinstance(t, TensorType) and t.shape is not None]
    input_shape = ranked_in[0].shape if ranked_in else None
    updates_shape = ranked_up[0].shape if ranked_up else None
    indices_shape = scatter_indices.shape if isinstance(scatter_indices, TensorType) else None
    if updates_shape is not None and indices_shape is not None:
        expanded = len(indices_shape) + (1 if index_vector_dim == len(indices_shape) else 0)
        want = expanded - 1 + len(update_window_dims)
        if len(updates_shape) != want:
            diag.error(op, "C4", f"expects updates tensor must be of rank {want} ( == "
                                 f"rank-of('scatter_indices') - 1 + size-of('update_window_dims'),"
                                 f" where 'scatter_indices' is expanded by a trailing 1 dimension "
                                 f"if 'index_vector_dim' == rank-of('scatter_indices')), but got "
                                 f"{len(updates_shape)}.")
            return False
    n_window = len(update_window_dims) + len(inserted_window_dims) + len(input_batching_dims)
    if input_shape is not None and len(input_shape) != n_window:
        diag.error(op, "C2", f"Expects rank-of operand to match size-of('update_window_dims') + "
                             f"size-of('inserted_window_dims') + size-of('input_batching_dims') "
                             f"i.e. {n_window} but got {len(input_shape)}.")
        return False
    if not is_sorted(update_window_dims):
        diag.error(op, "C7", f"Expects update_window_dims to be sorted; got: "
                             f"{_c.dims_str(update_window_dims)}.")
        return False
    if not _c.is_unique(update_window_dims):
        diag.error(op, "C7", f"Expects update_window_dims to not repeat; got: "
                             f"{_c.dims_str(update_window_dims)}.")
        return False
    if updates_shape is not None and not in_range(op, diag, "C8", "update_window_dims",
                                                  update_window_dims, len(updates_shape),
                                                  "rank-of('updates')"):
        return False
    if not _c._disjoint(op, diag, "C9", inserted_window_dims, input_batching_dims,
                        "inserted_window_dims", "input_batching_dims"):
        return False
    if not is_sorted(inserted_window_dims):
        diag.error(op, "C9", f"Expects inserted_window_dims to be sorted; got: "
                             f"{_c.dims_str(inserted_window_dims)}.")
        return False
    if input_shape is not None and not in_range(op, diag, "C10", "inserted_window_dims",
                                                inserted_window_dims, len(input_shape),
                                                "rank-of('operand')"):
        return False
    if not is_sorted(input_batching_dims):
        diag.error(op, "C11", f"Expects input_batching_dims to be sorted; got: "
                              f"{_c.dims_str(input_batching_dims)}.")
        return False
    if input_shape is not None and not in_range(op, diag, "C12", "input_batching_dims",
                                                input_batching_dims, len(input_shape),
                                                "rank-of('operand')"):
        return False
    if not _c.is_unique(scatter_indices_batching_dims):
        diag.error(op, "C13", f"Expects scatter_indices_batching_dims to not repeat; got: "
                              f"{_c.dims_str(scatter_indices_batching_dims)}.")
        return False
    if indices_shape is not None:
        if not in_range(op, diag, "C14", "scatter_indices_batching_dims",
                        scatter_indices_batching_dims, len(indices_shape),
                        "rank-of('scatter_indices')"):
            return False
        if index_vector_dim in scatter_indices_batching_dims:
            diag.error(op, "C15", f"expects scatter_indices_batching_dims not to include "
                                  f"index_vector_dim {index_vector_dim}.")
            return False
    if len(input_batching_dims) != len(scatter_indices_batching_dims):
        diag.error(op, "C16", "input_batching_dims and scatter_indices_batching_dims should have "
                              "the same size.")
        return False
    if input_shape is not None and indices_shape is not None:
        for i, (a, b) in enumerate(zip(input_batching_dims, scatter_indices_batching_dims)):
            if not _c.compatible_dims(input_shape[a], indices_shape[b]):
                diag.error(op, "C17", f"input_batching_dims[{i}] and "
                                      f"scatter_indices_batching_dims[{i}] must have compatible "
                                      f"sizes, but got {input_shape[a]} and {indices_shape[b]}.")
                return False
    if indices_shape is not None:
        n_idx = indices_shape[index_vector_dim] if index_vector_dim < len(indices_shape) else 1
        if n_idx is not None and len(scatter_dims_to_operand_dims) != n_idx:
            diag.error(op, "C11", f"Scatter op has {len(scatter_dims_to_operand_dims)} elements "
                                  f"in scatter_dims_to_operand_dims and the bound of dimension "
                                  f"index_vector_dim={index_vector_dim} of scatter_indices is "
                                  f"{n_idx}. These two numbers must be equal.")
            return False
    if not _c._disjoint(op, diag, "C12", scatter_dims_to_operand_dims, input_batching_dims,
                        "scatter_dims_to_operand_dims", "input_batching_dims"):
        return False
    if input_shape is not None and not in_range(op, diag, "C13", "scatter_dims_to_operand_dims",
                                                scatter_dims_to_operand_dims, len(input_shape),
                                                "rank-of('operand')"):
        return False
    if updates_shape is not None and indices_shape is not None:
        if input_shape is not None:
            window_operand_dims = [d for d in range(len(input_shape))
                                   if d not in inserted_window_dims and d not in
                                   input_batching_dims]
            for i, d in enumerate(update_window_dims):
                if i >= len(window_operand_dims):
                    break
                ub, ob = updates_shape[d], input_shape[window_operand_dims[i]]
                if ub is not None and ob is not None and ub > ob:
                    diag.error(op, "C4", f"expects bounds of the window dimensions of updates to "
                                         f"not exceed the bounds of the corresponding dimensions "
                                         f"of operand. For dimension {d}, updates bound is {ub}, "
                                         f"operand bound is {ob}.")
                    return False
        scatter_dims = [d for d in range(len(updates_shape)) if d not in update_window_dims]
        index_dims = [d for d in range(len(indices_shape)) if d != index_vector_dim]
        for ud, sd in zip(scatter_dims, index_dims):
            ub, sb = updates_shape[ud], indices_shape[sd]
            if ub is not None and sb is not None and ub != sb:
                diag.error(op, "C4", f"expects bounds of the scatter dimensions of updates to be "
                                     f"same as the bounds of the corresponding dimensions of "
                                     f"scatter indices. For scatter dimension {ud}, updates bound "
                                     f"is {ub} , scatter_indices bound is {sb}.")
                return False
    return True


@verifier("stablehlo.scatter")
def _verify_scatter(op: Operation, diag: Diagnostics) -> None:
    """scatter (C1-C19): dimension numbers, updates shape, update_computation and results."""
    if not _c.signature(op, diag, [(_c.TENSOR, "*"), _c.TC(_c.I | _c.INDEX), (_c.TENSOR, "*")],
                        [(_c.TENSOR, "*")], attrs={"scatter_dimension_numbers": "any"},
                        optional_attrs={"indices_are_sorted": "bool", "unique_indices": "bool"},
                        regions=1):
        return
    n = (len(op.operands) - 1) // 2
    inputs = [v.type for v in op.operands[:n]]
    scatter_indices = op.operands[n].type
    updates = [v.type for v in op.operands[n + 1:]]
    if n == 0:
        diag.error(op, "C5", "expects at least one input")
        return
    dims = ScatterDimensionNumbers.of(op)
    if dims is not None and not check_scatter_shapes(op, diag, inputs, scatter_indices, updates,
                                                     dims):
        return
    count = len(diag)
    inferred = _infer_scatter(op, diag)
    if len(diag) > count:
        return
    if dims is not None and not check_scatter_dimension_numbers(op, diag, inputs,
                                                                 scatter_indices, updates, dims):
        return
    for i, (a, u) in enumerate(zip(inputs, updates)):
        if not _c.compatible_element_types(a.element_type, u.element_type):
            diag.error(op, "C6", f"expects updates and inputs to have the same element types: "
                                 f"input {i} is {_c.types_str([a])}, update {i} is "
                                 f"{_c.types_str([u])}")
            return
    if inferred is not None:
        _c.check_inferred(op, diag, "C16, C17", inferred)
