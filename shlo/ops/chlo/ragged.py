"""chlo.ragged_dot: a dot_general whose lhs has one ragged dimension, split into groups by
`group_sizes` (ChloOps.cpp, RaggedDotOp)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ...attributes import StructAttr, ints
from ...dtypes import is_sub_byte_int
from ...errors import Diagnostics, ExecutionError
from ...ir import Operation
from ...registry import Kernel, define, kernel, verifier
from .. import _constraints as _c
from .._numeric import round_from_wide
from ._common import ANY, result_type, wide_dtype

if TYPE_CHECKING:  # pragma: no cover
    from ...interpreter.evaluator import PrepareContext

__all__ = ["ragged_dot"]

define("chlo.ragged_dot", summary="ChloOps.td",
       inherent="ragged_dot_dimension_numbers precision_config")

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFHIJKLMNOPQRSTUVWXYZ"  # 'G' is the group letter


def _ragged_mask(group_sizes: np.ndarray, prefix_sizes: list[int], ragged_size: int
                 ) -> np.ndarray:
    """mask[g, p..., r]: position r of the ragged dimension belongs to group g (per prefix)."""
    gs = np.asarray(group_sizes).astype(np.int64)
    if gs.ndim == 1:
        gs = np.broadcast_to(gs, (*prefix_sizes, gs.shape[0]))
    ends = np.cumsum(gs, axis=-1)
    starts = ends - gs
    pos = np.arange(ragged_size)
    mask = (starts[..., None, :] <= pos[:, None]) & (pos[:, None] < ends[..., None, :])
    return np.moveaxis(mask, -1, 0)  # [g, prefix..., r]


def _expand_ragged(x: np.ndarray, mask: np.ndarray, mask_dims: list[int]) -> np.ndarray:
    """Dense [g, x...] with x's entries outside group g set to zero (jax's ragged_to_dense)."""
    order = sorted(range(len(mask_dims)), key=lambda i: mask_dims[i])
    m = np.transpose(mask, [0] + [1 + i for i in order])
    shape = [mask.shape[0]] + [1] * x.ndim
    for i in order:
        shape[1 + mask_dims[i]] = x.shape[mask_dims[i]]
    m = m.reshape(shape)
    return np.where(m, x[None], np.zeros((), dtype=x.dtype))


def ragged_dot(lhs: np.ndarray, rhs: np.ndarray, group_sizes: np.ndarray,
               lhs_batching_dimensions: Sequence[int], rhs_batching_dimensions: Sequence[int],
               lhs_contracting_dimensions: Sequence[int],
               rhs_contracting_dimensions: Sequence[int], lhs_ragged_dimensions: Sequence[int],
               rhs_group_dimensions: Sequence[int]) -> np.ndarray:
    """chlo.ragged_dot in the wide dtype of its operands (ChloOps.cpp, RaggedDotOp).

    Mode 1 (ragged non-contracting dim m): [b,m,k] x [g,b,k,n] -> [b,m,n]; row r of m uses
    rhs group g(r), rows past the last group are zero. Mode 2 (ragged contracting dim k):
    [b,m,k] x [b,k,n] -> [g,b,m,n], group g sums over its own slice of k. Mode 3 (ragged batch
    dim): a plain dot_general. The result dims are [g (mode 2)] + batch + lhs free + rhs free.
    """
    lb, rb = list(lhs_batching_dimensions), list(rhs_batching_dimensions)
    lc, rc = list(lhs_contracting_dimensions), list(rhs_contracting_dimensions)
    (ragged,) = lhs_ragged_dimensions
    lhs_letters = list(_LETTERS[:lhs.ndim])
    rhs_letters = [""] * rhs.ndim
    for i, d in enumerate(rb):
        rhs_letters[d] = lhs_letters[lb[i]]
    for i, d in enumerate(rc):
        rhs_letters[d] = lhs_letters[lc[i]]
    fresh = iter(_LETTERS[lhs.ndim:])
    for d in range(rhs.ndim):
        if not rhs_letters[d]:
            rhs_letters[d] = "G" if d in rhs_group_dimensions else next(fresh)
    lhs_free = [d for d in range(lhs.ndim) if d not in lb and d not in lc]
    rhs_free = [d for d in range(rhs.ndim)
                if d not in rb and d not in rc and d not in rhs_group_dimensions]
    out = "".join(lhs_letters[d] for d in lb) + "".join(lhs_letters[d] for d in lhs_free) + \
        "".join(rhs_letters[d] for d in rhs_free)
    lhs_s, rhs_s = "".join(lhs_letters), "".join(rhs_letters)
    if ragged in lb:  # mode 3
        return np.einsum(f"{lhs_s},{rhs_s}->{out}", lhs, rhs)
    if ragged in lc:  # mode 2
        prefix = lb + lc[:lc.index(ragged)]
    else:  # mode 1
        prefix = lb + [d for d in lhs_free if d < ragged]
    mask = _ragged_mask(group_sizes, [lhs.shape[d] for d in prefix], lhs.shape[ragged])
    lhs_dense = _expand_ragged(lhs, mask, prefix + [ragged])
    if ragged in lc:
        rhs_dims = [rb[lb.index(d)] if d in lb else rc[lc.index(d)] for d in prefix + [ragged]]
        rhs_dense = _expand_ragged(rhs, mask, rhs_dims)
        return np.einsum(f"G{lhs_s},G{rhs_s}->G{out}", lhs_dense, rhs_dense)
    return np.einsum(f"G{lhs_s},{rhs_s}->{out}", lhs_dense, rhs)


def _dims(attr: Any, key: str) -> tuple[int, ...]:
    if isinstance(attr, StructAttr):
        return ints(attr.get(key), ()) or ()
    if isinstance(attr, dict):
        return tuple(attr.get(key, ()))
    raise ExecutionError(f"chlo.ragged_dot: unsupported ragged_dot_dimension_numbers {attr!r}")


@kernel("chlo.ragged_dot")
def ragged_dot_op(op: Operation, ctx: PrepareContext) -> Kernel:
    """`chlo.ragged_dot(lhs, rhs, group_sizes)`: dot_general whose lhs has one ragged dim."""
    dn = op.attr("ragged_dot_dimension_numbers")
    keys = ("lhs_batching_dimensions", "rhs_batching_dimensions", "lhs_contracting_dimensions",
            "rhs_contracting_dimensions", "lhs_ragged_dimensions", "rhs_group_dimensions")
    dims = [_dims(dn, k) for k in keys]
    if len(dims[4]) != 1:
        raise ExecutionError("chlo.ragged_dot: there must be exactly one lhs ragged dimension",
                             op.location)
    dtype = result_type(op).dtype
    wide = np.dtype(np.int64) if dtype.kind in "iub" or is_sub_byte_int(dtype) \
        else wide_dtype(dtype)

    def run(lhs: Any, rhs: Any, group_sizes: Any) -> Sequence[Any]:
        a = np.asarray(lhs).astype(wide, copy=False)
        b = np.asarray(rhs).astype(wide, copy=False)
        with np.errstate(all="ignore"):
            out = ragged_dot(a, b, group_sizes, *dims)
        return (round_from_wide(out, dtype),)

    return run


@verifier("chlo.ragged_dot")
def _verify_chlo_ragged_dot(op: Operation, diag: Diagnostics) -> None:
    """`chlo.ragged_dot`: dot_general's dimension rules plus one lhs ragged dimension and the
    rhs group dimension its mode asks for (one when the ragged dimension is non-contracting,
    none when it is a batching or contracting dimension), and `group_sizes` of shape
    `[batch dims before the ragged one..., g]`."""
    if not _c.signature(op, diag, [ANY, ANY, _c.TC(_c.I, ranked=False)], [ANY],
                        attrs={"ragged_dot_dimension_numbers": "any"},
                        optional_attrs={"precision_config": "any"}):
        return
    dn = op.attr("ragged_dot_dimension_numbers")
    lhs, rhs, groups = (v.type for v in op.operands)
    if not isinstance(dn, StructAttr) or None in (lhs.shape, rhs.shape, groups.shape):
        return
    lb, rb = _c.struct_ints(dn, "lhs_batching_dimensions"), _c.struct_ints(
        dn, "rhs_batching_dimensions")
    lc, rc = _c.struct_ints(dn, "lhs_contracting_dimensions"), _c.struct_ints(
        dn, "rhs_contracting_dimensions")
    lr, rg = _c.struct_ints(dn, "lhs_ragged_dimensions"), _c.struct_ints(
        dn, "rhs_group_dimensions")
    if len(lb) != len(rb) or len(lc) != len(rc):
        diag.error(op, "C1", "lhs and rhs should have the same number of batching and "
                             "contracting dimensions")
        return
    if not _c._disjoint(op, diag, "C2", lb, lc, "lhs_batching_dimensions",
                        "lhs_contracting_dimensions"):
        return
    for a, b, an, bn in ((rb, rc, "rhs_batching_dimensions", "rhs_contracting_dimensions"),
                         (rg, rc, "rhs_group_dimensions", "rhs_contracting_dimensions"),
                         (rg, rb, "rhs_group_dimensions", "rhs_batching_dimensions")):
        if not _c._disjoint(op, diag, "C2", a, b, an, bn):
            return
    for dims, t, name in ((lb, lhs, "lhs_batching_dimensions"),
                          (lc, lhs, "lhs_contracting_dimensions"),
                          (lr, lhs, "lhs_ragged_dimensions"),
                          (rb, rhs, "rhs_batching_dimensions"),
                          (rc, rhs, "rhs_contracting_dimensions"),
                          (rg, rhs, "rhs_group_dimensions")):
        for d in dims:
            if not 0 <= d < len(t.shape):
                diag.error(op, "C3", f"{name} value: {d} is out of range: [0, {len(t.shape)})")
                return
    for a, b in zip(lb, rb):
        if not _c.compatible_dims(lhs.shape[a], rhs.shape[b]):
            diag.error(op, "C4", "batching dimension sizes must match")
            return
    for a, b in zip(lc, rc):
        if not _c.compatible_dims(lhs.shape[a], rhs.shape[b]):
            diag.error(op, "C4", f"contracting dimension sizes must match: dim(lhs, {a}) = "
                                 f"{lhs.shape[a]}, dim(rhs, {b}) = {rhs.shape[b]}")
            return
    if len(lr) != 1:
        diag.error(op, "C5", f"There must be exactly one ragged dimension in the lhs, got "
                             f"{len(lr)}")
        return
    ragged = lr[0]
    # group_sizes is [g] or [prefix..., g]: the batch dimensions (those before the ragged one in
    # batch mode), the contracting ones before it (contracting mode) or the free ones before it
    # (non-contracting mode), as upstream's checkRaggedDotConstraints and the kernel read it
    if ragged in lb:
        dims = list(lb[:lb.index(ragged)])
    elif ragged in lc:
        dims = list(lb) + list(lc[:lc.index(ragged)])
    else:
        dims = list(lb) + [d for d in range(ragged) if d not in lb and d not in lc]
    prefix = [lhs.shape[d] for d in dims]
    if not groups.shape:
        diag.error(op, "C6", f"expected group_sizes to have rank {len(prefix) + 1}, got 0")
        return
    g = groups.shape[-1]
    if len(groups.shape) != 1:
        if len(groups.shape) != len(prefix) + 1:
            diag.error(op, "C6", f"expected group_sizes to have rank {len(prefix) + 1}, got "
                                 f"{len(groups.shape)}")
            return
        if list(groups.shape[:-1]) != prefix:
            want = ", ".join(map(_c.size_str, prefix + [groups.shape[-1]]))
            got = ", ".join(map(_c.size_str, groups.shape))
            diag.error(op, "C6", f"group_sizes is expected to have shape [{want}], got [{got}]")
            return
    if ragged in lb or ragged in lc:
        if rg:
            diag.error(op, "C7", "There must be zero group dimensions in the rhs when the ragged "
                                 "dimension is batch or contracting")
        return
    if len(rg) != 1:
        diag.error(op, "C7", "There must be exactly one group dimension in the rhs when the lhs "
                             "ragged dimension is non-contracting")
        return
    size = rhs.shape[rg[0]]
    if g is not None and size is not None and size != g:
        diag.error(op, "C8", f"rhs group dimension is expected to have size={g}, got {size}")
