"""gather (spec "gather"): slices of an operand at offsets read from a tensor of start indices.

The dimension numbers are decoded once (:class:`GatherDimensionNumbers`, with the spec's names)
and used by the kernel, the type inference and the constraints; dynamic_gather
(:mod:`shlo.ops.dynamic`) shares all three. The kernel evaluates the spec's formula
``operand[full_start_index + full_batching_index + full_offset_index]`` for all result
elements at once: a sliding-window view of the operand and one numpy fancy index.
torch_index_select (not in HLO, a gather along one dimension) is declared here too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ...attributes import StructAttr, ints_attr
from ...dtypes import uint_of_size
from ...errors import Diagnostics
from ...ir import Operation
from ...registry import QUANTIZED_STORAGE, Kernel, define, inference, kernel, verifier
from ...types import TensorType, Type
from .. import _constraints as _c
from .._arrays import as_dtype, result_type
from ._indices import dimension_fields, in_range, index_vectors, is_sorted, line

if TYPE_CHECKING:  # pragma: no cover
    from ...interpreter.evaluator import PrepareContext

__all__ = ["GatherDimensionNumbers", "gather_array", "gather", "infer_gather_shape"]

_FIELDS = ("offset_dims", "collapsed_slice_dims", "operand_batching_dims",
           "start_indices_batching_dims", "start_index_map")


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
    def from_attr(cls, attr: Any, strict: bool = True) -> "GatherDimensionNumbers":
        """Decode the attribute; TypeError when it is not a `#stablehlo.gather<...>` (or, when
        ``strict``, has a malformed field: with ``strict`` False that field reads as empty)."""
        lists, index_vector_dim = dimension_fields(attr, _FIELDS, "gather", strict)
        return cls(*lists, index_vector_dim=index_vector_dim)

    @classmethod
    def of(cls, op: Operation) -> "GatherDimensionNumbers | None":
        """The verifier's reading of ``op``'s `dimension_numbers`: None for a spelling the
        parser kept verbatim (nothing to judge)."""
        attr = op.attr("dimension_numbers")
        return cls.from_attr(attr, strict=False) if isinstance(attr, StructAttr) else None


# --- gather (spec "gather") ----------------------------------------------------------------------

define("stablehlo.gather", spec="gather",
       summary="slices of the operand at offsets from start_indices",
       traits={QUANTIZED_STORAGE},
       inherent="dimension_numbers slice_sizes indices_are_sorted")  # generic form only


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
    starts = index_vectors(start_indices, dims.index_vector_dim)
    batch_shape = starts.shape[:-1]
    nb = len(batch_shape)
    # ml_dtypes such as float8_e5m2 do not survive as_strided: slide over same-size uints
    raw = operand.view(uint_of_size(operand.dtype.itemsize)) \
        if operand.dtype.itemsize in (1, 2, 4, 8) else operand
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
            index.append(line(batch_shape[axis], nb, axis))
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
def gather(op: Operation, ctx: PrepareContext) -> Kernel:
    """Spec "gather": slices of ``operand`` at offsets from ``start_indices`` (clamped)."""
    dims = GatherDimensionNumbers.from_attr(op.attr("dimension_numbers"))
    slice_sizes = ints_attr(op, "slice_sizes")
    dtype = result_type(op).dtype

    def run(operand: np.ndarray, start_indices: np.ndarray) -> Sequence[Any]:
        return (gather_array(as_dtype(operand, dtype), start_indices, dims, slice_sizes),)

    return run


def infer_gather_shape(op: Operation, diag: Diagnostics, operand: Any, start_indices: Any,
                       slice_sizes: Sequence[int | None] | None,
                       dims: GatherDimensionNumbers) -> tuple[int | None, ...] | None:
    """gather (C1-C21, with batching dimensions, in upstream's order: C9, C12, C21 and C5 after
    the others) and the result shape they determine (C13-C14 of the seed spec: batch dimensions of `start_indices` where `offset_dims` are not, the
    offset sizes of `slice_sizes` where they are; None entries for `?`), or None (unranked
    operands, or after reporting a violation). ``slice_sizes`` has None entries, or is None,
    where they are not static (dynamic_gather)."""
    offset_dims, collapsed_slice_dims = dims.offset_dims, dims.collapsed_slice_dims
    operand_batching_dims = dims.operand_batching_dims
    start_indices_batching_dims = dims.start_indices_batching_dims
    start_index_map, index_vector_dim = dims.start_index_map, dims.index_vector_dim
    operand_shape = operand.shape if isinstance(operand, TensorType) else None
    indices_shape = start_indices.shape if isinstance(start_indices, TensorType) else None
    if operand_shape is not None:
        r = len(operand_shape)
        if len(offset_dims) + len(collapsed_slice_dims) + len(operand_batching_dims) != r:
            diag.error(op, "C1", f"offset_dims size ({len(offset_dims)}) plus collapse_slice_dims "
                                 f"size ({len(collapsed_slice_dims)}) plus operand_batching_dims "
                                 f"size ({len(operand_batching_dims)}) is not equal to operand "
                                 f"rank ({r})")
            return None
    if indices_shape is not None:
        if not 0 <= index_vector_dim <= len(indices_shape):
            diag.error(op, "C2", f"Expects index_vector_dim to be in range [0, "
                                 f"rank-of('start_indices')] i.e. [0, {len(indices_shape)}]. "
                                 f"got: {index_vector_dim}.")
            return None
        n_idx = indices_shape[index_vector_dim] if index_vector_dim < len(indices_shape) else 1
        if n_idx is not None and len(start_index_map) != n_idx:
            diag.error(op, "C3", f"start_index_map size ({len(start_index_map)}) is not equal to "
                                 f"size of index dimension ({index_vector_dim}) of start_indices "
                                 f"({n_idx})")
            return None
    if not is_sorted(offset_dims):
        diag.error(op, "C4", f"expects offset_dims to be sorted, got: {_c.dims_str(offset_dims)}")
        return None
    if not _c.is_unique(offset_dims):
        diag.error(op, "C4", f"expects offset_dims to not repeat, got: "
                             f"{_c.dims_str(offset_dims)}")
        return None
    if not _c._disjoint(op, diag, "C6", collapsed_slice_dims, operand_batching_dims,
                        "collapsed_slice_dims", "operand_batching_dims"):
        return None
    if not is_sorted(collapsed_slice_dims):
        diag.error(op, "C7", f"expects collapsed_slice_dims to be sorted, got: "
                             f"{_c.dims_str(collapsed_slice_dims)}")
        return None
    if operand_shape is not None and not in_range(op, diag, "C8", "collapsed_slice_dims",
                                                  collapsed_slice_dims, len(operand_shape),
                                                  "rank-of('operand')"):
        return None
    if not is_sorted(operand_batching_dims):
        diag.error(op, "C10", f"expects operand_batching_dims to be sorted, got: "
                              f"{_c.dims_str(operand_batching_dims)}")
        return None
    if operand_shape is not None and not in_range(op, diag, "C11", "operand_batching_dims",
                                                  operand_batching_dims, len(operand_shape),
                                                  "rank-of('operand')"):
        return None
    if not _c.is_unique(start_indices_batching_dims):
        diag.error(op, "C13", f"expects start_indices_batching_dims to not repeat, got: "
                              f"{_c.dims_str(start_indices_batching_dims)}")
        return None
    if indices_shape is not None:
        if not in_range(op, diag, "C14", "start_indices_batching_dims",
                        start_indices_batching_dims, len(indices_shape),
                        "rank-of('start_indices')"):
            return None
        if index_vector_dim in start_indices_batching_dims:
            diag.error(op, "C15", f"expects start_indices_batching_dims not to include "
                                  f"index_vector_dim {index_vector_dim}")
            return None
    if len(operand_batching_dims) != len(start_indices_batching_dims):
        diag.error(op, "C16", f"operand_batching_dims and start_indices_batching_dims should "
                              f"have the same size: {len(operand_batching_dims)} vs "
                              f"{len(start_indices_batching_dims)}")
        return None
    if operand_shape is not None and indices_shape is not None:
        for i, (a, b) in enumerate(zip(operand_batching_dims, start_indices_batching_dims)):
            if not _c.compatible_dims(operand_shape[a], indices_shape[b]):
                diag.error(op, "C17", f"operand_batching_dims[{i}] and "
                                      f"start_indices_batching_dims[{i}] must have compatible "
                                      f"sizes, but got {operand_shape[a]} and {indices_shape[b]}")
                return None
    if not _c._disjoint(op, diag, "C18", start_index_map, operand_batching_dims,
                        "start_index_map", "operand_batching_dims"):
        return None
    if operand_shape is not None and not in_range(op, diag, "C19", "start_index_map",
                                                  start_index_map, len(operand_shape),
                                                  "rank-of('operand')"):
        return None
    if slice_sizes is not None and operand_shape is not None:
        if len(slice_sizes) != len(operand_shape):
            diag.error(op, "C20", f"slice_sizes size ({len(slice_sizes)}) not equal to operand "
                                  f"rank ({len(operand_shape)})")
            return None
    if slice_sizes is not None:
        for label, name, dims in (("C9", "collapsed_slice_dims", collapsed_slice_dims),
                                  ("C12", "operand_batching_dims", operand_batching_dims)):
            for d in dims:
                if 0 <= d < len(slice_sizes) and slice_sizes[d] is not None and \
                        slice_sizes[d] > 1:
                    diag.error(op, label, f"Expects that for each dim in {name}, "
                                          f"slice_sizes[dim] should be <= 1, but got "
                                          f"{slice_sizes[d]}")
                    return None
    if slice_sizes is not None and operand_shape is not None:
        for i, (s, n) in enumerate(zip(slice_sizes, operand_shape)):
            if s is not None and (s < 0 or n is not None and s > n):
                diag.error(op, "C21", f"slice size ({s}) is out of bounds for operand dimension "
                                      f"({n}) at index {i}")
                return None
    if indices_shape is not None:
        implied = len(offset_dims) + len(indices_shape) - (
            1 if index_vector_dim < len(indices_shape) else 0)
        if not in_range(op, diag, "C5", "offset_dims", offset_dims, implied,
                        "implied-result-rank"):
            return None
    if indices_shape is None or operand_shape is None:
        return None
    batch = [d for i, d in enumerate(indices_shape) if i != index_vector_dim]
    sizes = slice_sizes if slice_sizes is not None else [None] * len(operand_shape)
    offsets = [sizes[d] for d in range(len(operand_shape))
               if d not in collapsed_slice_dims and d not in operand_batching_dims]
    rank = len(batch) + len(offset_dims)
    shape: list[int | None] = []
    bi = oi = 0
    for d in range(rank):
        if d in offset_dims and oi < len(offsets):
            shape.append(offsets[oi])
            oi += 1
        elif bi < len(batch):
            shape.append(batch[bi])
            bi += 1
        else:
            shape.append(None)
    return tuple(shape)


@inference("stablehlo.gather")
def _infer_gather(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """The result type: the shape :func:`infer_gather_shape` determines, the operand's element
    type."""
    dims = GatherDimensionNumbers.of(op)
    slice_sizes = ints_attr(op, "slice_sizes", None)
    if dims is None or slice_sizes is None or len(op.operands) != 2:
        return None
    operand, start_indices = op.operands[0].type, op.operands[1].type
    shape = infer_gather_shape(op, diag, operand, start_indices, slice_sizes, dims)
    return None if shape is None else [TensorType(shape, operand.element_type)]


@verifier("stablehlo.gather")
def _verify_gather(op: Operation, diag: Diagnostics) -> None:
    """gather (C1-C21): dimension numbers within range, sorted and unique where the spec says,
    slice sizes within the operand, and the result type the spec determines."""
    if not _c.signature(op, diag, [_c.TENSOR, _c.INT_TENSOR], [_c.TENSOR],
                        attrs={"dimension_numbers": "any", "slice_sizes": "ints"},
                        optional_attrs={"indices_are_sorted": "bool"}):
        return
    inferred = _infer_gather(op, diag)
    if inferred is not None:
        _c.check_inferred(op, diag, "C13, C14", inferred)


# --- torch_index_select (not in HLO) -------------------------------------------------------------
# `index_select` of PyTorch: a gather along dimension `dim` (after `batch_dims` batch
# dimensions). Parsed and printed (generic form); shlo has no kernel for it.

define("stablehlo.torch_index_select", summary="a gather along one dimension (not in HLO)",
       inherent="dim batch_dims")


@verifier("stablehlo.torch_index_select")
def _verify_torch_index_select(op: Operation, diag: Diagnostics) -> None:
    """Upstream's ODS definition: two tensor operands, one result, `dim` and `batch_dims`
    required 64-bit integer attributes."""
    _c.signature(op, diag, [_c.TENSOR, _c.TENSOR], [_c.TENSOR],
                 attrs={"dim": "int", "batch_dims": "int"})
