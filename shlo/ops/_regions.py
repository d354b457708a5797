"""Batched region machinery: evaluating a region body over whole arrays of element pairs.

ARCHITECTURE.md principle 3: a region that the spec applies element by element (reduce,
reduce_window, select_and_scatter, scatter, sort, map, all_reduce, ...) is evaluated **once per
step over whole arrays**; its ops are element-wise on 0-d tensors, so they work on arrays of any
shape. This module holds the reusable pieces:

* :func:`call_body` calls a compiled region on arrays and normalises its results (shape, dtype);
* :func:`ufunc_for` maps a single-op body (``add``, ``maximum``, ...) to its numpy ufunc (the one
  table of them; :func:`exact_ufunc` when the ufunc must agree with the op element by element);
* :func:`reduce_with_body` reduces arrays along axes with a body (fast numpy path or a pairwise
  tree of batched body calls); collectives import it (``all_reduce``, ``reduce_scatter``);
* :func:`combine_at` folds updates into positions of result arrays with a body, sequentially per
  position, batched across positions (select_and_scatter, usable by scatter);
* :func:`clone_subgraph` builds a one-argument region computing a value of another region
  (used by sort to evaluate a comparator's key function on whole inputs);
* :func:`check_reducer` checks a reducer region's signature for the verifiers (spec: the `body`
  of reduce, reduce_window, select_and_scatter, scatter, all_reduce, reduce_scatter) and
  :func:`is_promotable` is the spec's helper it uses.

Reduction schedule (the spec's "implementation-defined full binary tree", docs/semantics):
``body(init, tree(x0, ..., xn-1))`` where ``tree`` combines *adjacent* pairs level by level,
``(x0 . x1), (x2 . x3), ...``, carrying an odd last element up unchanged; the in-order traversal
is therefore ``init, x0, ..., xn-1`` as the spec requires, also for non-commutative bodies.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..dtypes import is_ml_float, sub_byte_int
from ..ir import Block, Operation, Region, Value
from ..types import ComplexType, FloatType, IntegerType, QuantizedType, TensorType, Type
from . import _constraints as _c, _half

if TYPE_CHECKING:  # pragma: no cover
    from ..errors import Diagnostics

__all__ = [
    "Body", "call_body", "as_dtype", "ufunc_for", "exact_ufunc", "reduce_with_body",
    "tree_reduce_last", "combine_at", "clone_subgraph", "check_reducer", "is_promotable",
]

Body = Callable[..., Sequence[Any]]
"""A compiled region (``ctx.region(...)``) or any ``fn(*args) -> list of arrays``."""

_NUMPY_KINDS = frozenset("biufc")
"""Kinds of numpy's own dtypes; ml_dtypes' have kind 'V', but float8_e5m2 'f' (``is_ml_float``)."""

# --- calling a body on arrays -------------------------------------------------------------------


def call_body(body: Body, args: Sequence[Any], shape: tuple[int, ...],
              dtypes: Sequence[np.dtype]) -> list[np.ndarray]:
    """``body(*args)``, each result an array of ``shape`` and of the matching ``dtypes`` entry.

    A body may return 0-d values (a constant, or ops on constants only) or numpy scalars: they
    are broadcast to ``shape``. A body holding control flow (``per_element``: a `while` whose
    condition would be an array) is called on each element in turn instead.
    """
    if shape and getattr(body, "per_element", False):
        return _per_element(body, args, shape, dtypes)
    out = body(*args)
    res = []
    for r, dt in zip(out, dtypes):
        a = np.asarray(r)
        if a.dtype != dt:
            a = a.astype(dt)
        if a.shape != shape:
            a = np.array(np.broadcast_to(a, shape))
        res.append(a)
    return res


def _per_element(body: Body, args: Sequence[Any], shape: tuple[int, ...],
                 dtypes: Sequence[np.dtype]) -> list[np.ndarray]:
    """:func:`call_body` one position of ``shape`` at a time (each argument broadcast to it,
    each call on 0-d arrays): a Python loop over the elements, for bodies that branch."""
    full = [np.broadcast_to(np.asarray(a), shape) for a in args]
    res = [np.empty(shape, dt) for dt in dtypes]
    for at in np.ndindex(*shape):
        for r, v in zip(res, body(*(np.array(a[at]) for a in full))):
            r[at] = np.asarray(v)
    return res


def as_dtype(x: Any, dtype: np.dtype) -> np.ndarray:
    """``x`` as an array of ``dtype`` (itself when it already is one): what a body's arguments
    must be."""
    a = np.asarray(x)
    return a if a.dtype == dtype else a.astype(dtype)


# --- single-op bodies as numpy ufuncs -----------------------------------------------------------
# The one table of them: the ops a reduction body `return op(arg0, arg1)` is recognised as (the
# evaluator's ``CompiledBlock.single_op``; with the arguments swapped only for ops with the
# COMMUTATIVE trait), with the numpy ufuncs that compute them.

_BINARY_UFUNCS: dict[str, tuple[np.ufunc, np.ufunc]] = {
    # op name: (ufunc for numbers, ufunc for booleans)
    "stablehlo.add": (np.add, np.logical_or),
    "stablehlo.multiply": (np.multiply, np.logical_and),
    "stablehlo.maximum": (np.maximum, np.logical_or),
    "stablehlo.minimum": (np.minimum, np.logical_and),
    "stablehlo.and": (np.bitwise_and, np.logical_and),
    "stablehlo.or": (np.bitwise_or, np.logical_or),
    "stablehlo.xor": (np.bitwise_xor, np.logical_xor),
}
_BITWISE = frozenset({"stablehlo.and", "stablehlo.or", "stablehlo.xor"})
_ROUNDED_ONCE = frozenset({"stablehlo.add", "stablehlo.multiply"})
"""Ops whose numpy ufunc rounds each float/complex result once to the type (ml_dtypes too)."""


def ufunc_for(op_name: str | None, dtype: np.dtype) -> np.ufunc | None:
    """The numpy ufunc computing the single-op body ``op_name`` on ``dtype``, or None.

    None when the op is not a recognised commutative op or numpy cannot compute it as the spec
    does for this dtype (complex maximum/minimum, bitwise ops on floats, the ml_dtypes integer
    types int2/int4/uint2/uint4, which :func:`reduce_with_body` computes through int64). Caveat:
    for floats, ``np.maximum``/``np.minimum`` propagate NaN as the spec does but keep the first
    of two zeros of different signs; callers fix that (:func:`reduce_with_body`) or avoid it.
    """
    pair = _BINARY_UFUNCS.get(op_name or "")
    if pair is None or sub_byte_int(dtype) is not None:
        return None
    if dtype == np.bool_:
        return pair[1]
    if op_name in _BITWISE and dtype.kind not in "iu":
        return None
    if dtype.kind == "c" and op_name in ("stablehlo.maximum", "stablehlo.minimum"):
        return None
    if dtype.kind == "V" and op_name in _BITWISE:
        return None
    return pair[0]


def exact_ufunc(op_name: str | None, dtype: np.dtype) -> np.ufunc | None:
    """The ufunc that computes the single-op body ``op_name`` on ``dtype`` element by element
    exactly as the op's kernel does, or None: every op on bool and numpy's integers,
    add/multiply on floats and complex (numpy and ml_dtypes round each result once to the
    type); not float maximum/minimum (NaN, signed zeros) nor the ml_dtypes integers."""
    uf = ufunc_for(op_name, dtype)
    if uf is None:
        return None
    if dtype.kind in "biu" or (op_name in _ROUNDED_ONCE and dtype.kind in "fcV"):
        return uf
    return None


# --- reduction ----------------------------------------------------------------------------------


_BLOCK = 1 << 18
"""Elements per body call in the first levels of a large reduction (a few MB: cache-resident)."""
_SHRINK_LEVELS = 8
"""Levels a long row is taken down per round, chunk by chunk."""


def tree_reduce_last(combine: Callable[[list[np.ndarray], list[np.ndarray]], list[np.ndarray]],
                     arrays: list[np.ndarray]) -> list[np.ndarray]:
    """Reduce the last axis (length >= 1) of every array in ``arrays`` together, pairwise.

    Level by level, adjacent elements are combined, ``combine(lhs, rhs)`` being called once per
    level on whole arrays; an odd last element is carried to the next level. The result keeps
    the in-order sequence of the inputs (so it equals a left fold for any associative body).

    Large inputs are processed in blocks of about ``_BLOCK`` elements (whole rows, or chunks
    of ``2**_SHRINK_LEVELS``-aligned columns taken down that many levels at once), so the
    temporaries of the body stay in cache instead of costing fresh pages; the tree is the same
    (chunks are aligned to the pairs of every level, and the last chunk carries its odd
    elements exactly as the whole row would).
    """
    shape = arrays[0].shape
    n = shape[-1]
    rows = arrays[0].size // n if n else 0
    if rows * n <= 2 * _BLOCK or n < 2:
        return _tree_levels(combine, arrays, None)
    flat = [a.reshape(rows, n) for a in arrays]
    width = 1 << _SHRINK_LEVELS
    while rows * n > 2 * _BLOCK and n >= 2 * width:  # shrink long rows 2**L-fold per round
        cols = max(width, (_BLOCK // rows) // width * width)
        block_rows = max(1, _BLOCK // cols)
        flat = _blockwise(flat, rows, block_rows, n, cols,
                          lambda piece: _tree_levels(combine, piece, _SHRINK_LEVELS))
        n = flat[0].shape[-1]
    if rows * n > 2 * _BLOCK:  # many short rows: reduce blocks of whole rows
        block_rows = max(1, _BLOCK // n)
        out = _blockwise(flat, rows, block_rows, n, n,
                         lambda piece: [a[:, None] for a in _tree_levels(combine, piece, None)])
    else:
        out = [a[:, None] for a in _tree_levels(combine, flat, None)]
    return [a.reshape(shape[:-1]) for a in out]


def _blockwise(flat: list[np.ndarray], rows: int, block_rows: int, n: int, cols: int,
               fn: Callable[[list[np.ndarray]], list[np.ndarray]]) -> list[np.ndarray]:
    """``fn`` applied to every (block_rows, cols) block of the (rows, n) arrays ``flat``; the
    (block_rows, k) results reassembled in order."""
    out_rows = []
    for r in range(0, rows, block_rows):
        parts = [fn([a[r:r + block_rows, c:c + cols] for a in flat]) for c in range(0, n, cols)]
        out_rows.append([np.concatenate(p, axis=1) if len(p) > 1 else p[0]
                         for p in zip(*parts)])
    if len(out_rows) == 1:
        return out_rows[0]
    return [np.concatenate(p, axis=0) for p in zip(*out_rows)]


def _tree_levels(combine: Callable[[list[np.ndarray], list[np.ndarray]], list[np.ndarray]],
                 arrays: list[np.ndarray], levels: int | None) -> list[np.ndarray]:
    """``levels`` levels of the pairwise tree over the last axis (all of them when None:
    the last axis is then dropped from the results)."""
    n = arrays[0].shape[-1]
    while n > 1 and (levels is None or levels > 0):
        h = n // 2
        lhs = [a[..., 0:2 * h:2] for a in arrays]
        rhs = [a[..., 1:2 * h:2] for a in arrays]
        out = combine(lhs, rhs)
        if n % 2:
            out = [np.concatenate([o, a[..., -1:]], axis=-1) for o, a in zip(out, arrays)]
        arrays = out
        n = h + n % 2
        if levels is not None:
            levels -= 1
    if levels is not None:
        return arrays
    return [a[..., 0] for a in arrays]


def _move_axes_last(a: np.ndarray, axes: Sequence[int]) -> np.ndarray:
    """``a`` with ``axes`` moved to the end (in order) and merged into one axis."""
    keep = [d for d in range(a.ndim) if d not in axes]
    t = np.transpose(a, keep + list(axes))
    n = 1
    for d in axes:
        n *= a.shape[d]
    return t.reshape(t.shape[:len(keep)] + (n,))  # explicit: -1 is ambiguous when a is empty


def reduce_with_body(body: Body, inputs: Sequence[np.ndarray],
                     inits: Sequence[np.ndarray] | None = None,
                     axes: Sequence[int] | None = None,
                     single_op: str | None = None) -> list[np.ndarray]:
    """Reduce ``inputs`` (N arrays of one shape) along ``axes`` with ``body``; spec "reduce".

    ``body(*lhs, *rhs)`` takes N left and N right arrays and returns N arrays (a compiled region
    from ``ctx.region`` or any such callable). ``inits`` are N 0-d values, or None to reduce
    without init values (``all_reduce``); ``axes`` default to all axes. Result ``k`` has the shape
    of ``inputs[k]`` without ``axes`` and the dtype of ``inits[k]`` (of ``inputs[k]`` when there
    are no inits); inputs are converted to that dtype first.

    When ``body`` is a single commutative op (``single_op``, or ``body.single_op`` of a compiled
    region: add, multiply, maximum, minimum, and, or, xor) and N is 1, numpy computes it directly
    (``ufunc.reduce`` on numpy's own dtypes, a pairwise tree of the ufunc on ml_dtypes floats and
    f16 so that sums stay in the element type). Any other body is evaluated as a pairwise tree
    (see :func:`tree_reduce_last`), one batched call per level; the result is
    ``body(init, tree)``. Without inits, reducing zero elements is an error.
    """
    inputs = [np.asarray(x) for x in inputs]
    n_in = len(inputs)
    ndim = inputs[0].ndim
    axes = tuple(range(ndim)) if axes is None else tuple(sorted(a % ndim if ndim else a
                                                                for a in axes))
    if inits is not None:
        inits = [np.asarray(v) for v in inits]
        dtypes = [v.dtype for v in inits]
    else:
        dtypes = [x.dtype for x in inputs]
    flat = [_move_axes_last(x.astype(dt, copy=False), axes) for x, dt in zip(inputs, dtypes)]
    out_shape = flat[0].shape[:-1]
    n = flat[0].shape[-1]
    if single_op is None:
        single_op = getattr(body, "single_op", None)

    if n_in == 1 and single_op is not None:
        fast = _reduce_single_op(single_op, flat[0], inits[0] if inits is not None else None)
        if fast is not None:
            return [fast]

    def combine(lhs: list[np.ndarray], rhs: list[np.ndarray]) -> list[np.ndarray]:
        return call_body(body, lhs + rhs, lhs[0].shape, dtypes)

    if n == 0:
        if inits is None:
            raise ValueError("reduction of zero elements without an init value")
        return [np.full(out_shape, v, dtype=dt) for v, dt in zip(inits, dtypes)]
    acc = tree_reduce_last(combine, flat)
    if inits is None:
        return [np.asarray(a) for a in acc]
    init_arrays = [np.full(out_shape, v, dtype=dt) for v, dt in zip(inits, dtypes)]
    return combine(init_arrays, [np.asarray(a) for a in acc])


def _reduce_single_op(op_name: str, x: np.ndarray, init: np.ndarray | None) -> np.ndarray | None:
    """Reduce the last axis of ``x`` with the single-op body ``op_name``, or None if unsupported."""
    dtype = x.dtype
    sub = sub_byte_int(dtype)
    if sub is not None:
        return _reduce_subbyte_int(op_name, x, init, sub)
    uf = ufunc_for(op_name, dtype)
    if uf is None:
        return None
    n = x.shape[-1]
    if dtype.kind in _NUMPY_KINDS and not is_ml_float(dtype) and dtype != np.float16:
        if op_name == "stablehlo.add" and dtype.kind in "fc" and n > _SUM_BLOCK \
                and x.strides[-1] != dtype.itemsize:
            r = blocked_sum(x)
        else:
            r = uf.reduce(x, axis=-1, dtype=dtype) if n else None
    else:  # ml_dtypes floats and f16: pairwise, every partial result rounded to the type
        r = _half_max_min(op_name, uf, x) if n else None
        if r is None and n:
            r = _narrow_tree(op_name, uf, x)
        if r is None and n:
            r = tree_reduce_last(lambda l, rr: [uf(l[0], rr[0]).astype(dtype, copy=False)],
                                 [x])[0]
    if r is None:
        if init is None:
            raise ValueError("reduction of zero elements without an init value")
        return np.full(x.shape[:-1], init, dtype=dtype)
    r = np.asarray(r, dtype=dtype)
    if init is not None:
        r = np.asarray(uf(np.asarray(init, dtype=dtype), r)).astype(dtype, copy=False)
    if dtype.kind == "f" or dtype.kind == "V":
        r = _fix_signed_zero(op_name, x, init, r)
    if r.shape != x.shape[:-1]:
        r = np.array(np.broadcast_to(r, x.shape[:-1]))
    return r


def _narrow_tree(op_name: str, uf: np.ufunc, x: np.ndarray) -> np.ndarray | None:
    """The pairwise tree of add or multiply over the last axis of a narrow float ``x`` in
    compiled code (``_half.tree_reduce``): f16/bf16 nodes computed as their element-wise loops
    do, one-byte formats' by their op's table (the element-wise kernels' own bits); None
    where it does not apply."""
    if op_name not in _ROUNDED_ONCE:
        return None
    from .elementwise._tables import binary_table

    dtype = x.dtype
    swapped = None
    if _half.half_format(dtype) is None:
        swapped = binary_table(op_name, lambda a, b: uf(b, a).astype(dtype, copy=False), dtype,
                               swapped=True)
        if swapped is None:
            return None
    return _half.tree_reduce(x, swapped, op_name == "stablehlo.multiply")


def _half_max_min(op_name: str, uf: np.ufunc, x: np.ndarray) -> np.ndarray | None:
    """f16/bf16 maximum/minimum along the last axis, in float32 (numpy's f16 loops are scalar):
    widening is exact and maximum/minimum return one of their operands, so the values are the
    pairwise tree's (the zeros' signs are fixed afterwards either way); None (the tree) for
    other ops and types, small arrays, and when a NaN is present (which NaN the tree returns
    stays the tree's)."""
    if op_name not in ("stablehlo.maximum", "stablehlo.minimum"):
        return None
    wide = _half.widen(x)
    if wide is None or np.isnan(wide).any():
        return None
    return uf.reduce(wide, axis=-1).astype(x.dtype)


_SUM_BLOCK = 32


def blocked_sum(x: np.ndarray) -> np.ndarray:
    """Sum the last axis of float/complex ``x`` when that axis is strided in memory (a reduction
    over an outer dimension). numpy's ``add.reduce`` then adds whole rows one after another, a
    sequential sum whose error grows with the length (a 16384x32 f32 array of 0.1 summed over
    dimension 0: 1638.147); numpy's pairwise summation applies only along a contiguous axis.
    Here: sums of consecutive blocks of ``_SUM_BLOCK`` elements (row by row, still fast on the
    strided layout), then numpy's pairwise sum over the block sums made contiguous, then the
    tail block. Error bound in docs/semantics/reduction.md ("Float sums")."""
    n = x.shape[-1]
    nb = n // _SUM_BLOCK
    head = x[..., :nb * _SUM_BLOCK].reshape(x.shape[:-1] + (nb, _SUM_BLOCK))
    blocks = np.ascontiguousarray(np.add.reduce(head, axis=-1, dtype=x.dtype))
    r = np.add.reduce(blocks, axis=-1, dtype=x.dtype)
    if n % _SUM_BLOCK:
        r = np.add(r, np.add.reduce(x[..., nb * _SUM_BLOCK:], axis=-1, dtype=x.dtype))
    return r


def _fix_signed_zero(op_name: str, x: np.ndarray, init: np.ndarray | None,
                     r: np.ndarray) -> np.ndarray:
    """IEEE-754 maximum/minimum order -0 < +0; numpy's keep whichever zero came first."""
    if op_name not in ("stablehlo.maximum", "stablehlo.minimum"):
        return r
    zero = r == 0
    if not zero.any():
        return r
    parts = [x] if init is None else [x, np.broadcast_to(np.asarray(init, x.dtype),
                                                         x.shape[:-1] + (1,))]
    pos = np.zeros(r.shape, bool)
    neg = np.zeros(r.shape, bool)
    for p in parts:
        pz = p == 0
        sb = np.signbit(p.astype(np.float32))
        pos |= (pz & ~sb).any(axis=-1)
        neg |= (pz & sb).any(axis=-1)
    want_neg = neg if op_name == "stablehlo.minimum" else ~pos
    neg_zero = np.array(-0.0).astype(r.dtype)
    pos_zero = np.array(0.0).astype(r.dtype)
    return np.where(zero, np.where(want_neg, neg_zero, pos_zero), r).astype(r.dtype)


def _reduce_subbyte_int(op_name: str, x: np.ndarray, init: np.ndarray | None,
                        info: tuple[int, bool]) -> np.ndarray | None:
    """int2/int4/uint2/uint4: compute in int64, wrap modulo 2^width (spec: wrap on overflow)."""
    width, signed = info
    uf = ufunc_for(op_name, np.dtype(np.int64))
    if uf is None:
        return None
    wide = x.astype(np.int64)
    if init is not None:
        wide = np.concatenate([np.broadcast_to(np.asarray(init).astype(np.int64),
                                               x.shape[:-1] + (1,)), wide], axis=-1)
    if wide.shape[-1] == 0:
        raise ValueError("reduction of zero elements without an init value")
    if op_name == "stablehlo.multiply":  # keep intermediate products small: wrap at each level
        r = tree_reduce_last(lambda l, rr: [_wrap(l[0] * rr[0], width, signed)], [wide])[0]
    else:
        r = uf.reduce(wide, axis=-1)
    return _wrap(np.asarray(r), width, signed).astype(x.dtype)


def _wrap(v: np.ndarray, width: int, signed: bool) -> np.ndarray:
    m = 1 << width
    v = np.mod(v, m)
    if signed:
        v = np.where(v >= m // 2, v - m, v)
    return v


# --- folding updates into positions -------------------------------------------------------------


def combine_at(body: Body, results: list[np.ndarray], indices: np.ndarray,
               updates: list[np.ndarray], single_op: str | None = None) -> list[np.ndarray]:
    """Fold ``updates`` into flat positions ``indices`` of the 1-d ``results``, in order.

    For every ``i`` in order: ``results[:][indices[i]] = body(results[:][indices[i]],
    updates[:][i])``. Positions may repeat: updates to one position are applied in their order
    in ``indices``. Batched by rounds: round ``r`` applies the ``r``-th update of every position
    in one body call (the number of calls is the largest multiplicity). A single-op body on
    numpy's own dtypes uses ``ufunc.at``. Returns new arrays.
    """
    results = [r.copy() for r in results]
    if indices.size == 0:
        return results
    if single_op is None:
        single_op = getattr(body, "single_op", None)
    if len(results) == 1 and single_op is not None:
        dt = results[0].dtype
        uf = ufunc_for(single_op, dt)
        if uf is not None and dt.kind in _NUMPY_KINDS and not is_ml_float(dt) and dt != np.float16:
            uf.at(results[0], indices, updates[0].astype(dt, copy=False))
            return results
    order = np.argsort(indices, kind="stable")
    sidx = indices[order]
    start = np.r_[True, sidx[1:] != sidx[:-1]]
    group_first = np.maximum.accumulate(np.where(start, np.arange(sidx.size), 0))
    rank = np.arange(sidx.size) - group_first
    dtypes = [r.dtype for r in results]
    for r in range(int(rank.max()) + 1):
        sel = order[rank == r]
        pos = indices[sel]
        cur = [res[pos] for res in results]
        upd = [u[sel].astype(dt, copy=False) for u, dt in zip(updates, dtypes)]
        new = call_body(body, cur + upd, pos.shape, dtypes)
        for res, v in zip(results, new):
            res[pos] = v
    return results


# --- cloning part of a region -------------------------------------------------------------------


def clone_subgraph(root: Value, arg: Value) -> Region | None:
    """A region ``^bb0(%x): ... return f(%x)`` computing ``root`` as a function of block ``arg``.

    ``root`` must be computed, within ``arg``'s block, by region-free ops from ``arg``,
    constants and values captured from enclosing blocks; None otherwise. Values captured from
    outside stay references to the outer values (the evaluator binds them as captures).
    """
    block = arg.owner
    if not isinstance(block, Block):
        return None
    if root is arg:
        ops: list[Operation] = []
    else:
        needed: set[int] = set()
        stack = [root]
        while stack:
            v = stack.pop()
            if v is arg:
                continue
            if isinstance(v.owner, Block):
                if v.owner is block:  # another argument of the same block
                    return None
                continue  # an outer block's argument: a capture
            op = v.owner
            if not isinstance(op, Operation) or op.parent is not block:
                continue  # defined outside the block: a capture
            if op.regions:
                return None
            if id(op) not in needed:
                needed.add(id(op))
                stack.extend(op.operands)
        ops = [op for op in block.operations if id(op) in needed]
    new_block = Block([arg.type])
    mapping: dict[int, Value] = {id(arg): new_block.arguments[0]}
    for op in ops:
        clone = Operation(op.name, [mapping.get(id(v), v) for v in op.operands],
                          [r.type for r in op.results], op.properties, op.attributes,
                          location=op.location)
        for old, new in zip(op.results, clone.results):
            mapping[id(old)] = new
        new_block.append(clone)
    new_block.append(Operation("stablehlo.return", [mapping.get(id(root), root)]))
    return Region([new_block])


# --- reducer regions: the verifiers' check --------------------------------------------------------


def _width(et: Type) -> int:
    if isinstance(et, QuantizedType):
        return et.storage_type.width
    if isinstance(et, ComplexType):
        return et.element.width
    return getattr(et, "width", 0)


def is_promotable(a: Type, b: Type) -> bool:
    """Spec `is_promotable(a, b)` as upstream checks it: the same kind of element type, and
    ``b`` at least as wide (any float to any float; quantized types keep their expressed type)."""
    if _c.same_element_type(a, b):
        return True
    if isinstance(a, QuantizedType) or isinstance(b, QuantizedType):
        return isinstance(a, QuantizedType) and isinstance(b, QuantizedType) and \
            a.expressed_type == b.expressed_type and _width(a) <= _width(b)
    if isinstance(a, FloatType) and isinstance(b, FloatType):
        return True
    if isinstance(a, IntegerType) and isinstance(b, IntegerType):
        return a.width <= b.width
    if isinstance(a, ComplexType) and isinstance(b, ComplexType):
        return _width(a) <= _width(b)
    return False


def check_reducer(op: Operation, diag: Diagnostics, label: str, region_index: int,
                  input_types: Sequence[Type], init_types: Sequence[Type],
                  allowed_dims: Sequence[int | None] | None) -> list[Type] | None:
    """A reducer region (spec: `body` has type `(tensor<E0>, ..., tensor<E0>, ...) ->
    (tensor<E0>, ...)` with `is_promotable(element_type(inputs[i]), Ei)`). ``allowed_dims`` is the
    shape the block arguments may be a sub-sequence of (None: unranked inputs). Returns the
    types the region returns, or None after reporting a violation."""
    block = _c.region_block(op, region_index)
    if block is None:
        diag.error(op, label, f"requires a non-empty region #{region_index}")
        return None
    n = len(input_types)
    args = [a.type for a in block.arguments]
    if len(args) != 2 * n:
        diag.error(op, label, f"Reduction-region must take {2 * n} parameters, but takes "
                              f"{len(args)} parameter(s)")
        return None
    rets = _c.region_return_types(op, region_index)
    if not rets:
        diag.error(op, label, "The reduction-region expected to return some value(s)")
        return None
    if len(rets) != n:
        diag.error(op, label, f"Reduction-region here must produce {n} tensors, but produces "
                              f"{len(rets)} instead")
        return None
    for r in rets:
        if not isinstance(r, TensorType):
            diag.error(op, label, f"Reduction-region here must produce tensor-typed result(s), "
                                  f"but produces '{_c.type_str(r)}' instead")
            return None
    for i in range(n):
        acc = rets[i]
        for k in (i, n + i):
            a = args[k]
            if not (isinstance(a, TensorType) and _c.compatible_shapes(a.shape, acc.shape) and
                    (_c.same_element_type(a.element_type, acc.element_type) or
                     k >= n and isinstance(a.element_type, FloatType) and
                     isinstance(acc.element_type, FloatType))):
                diag.error(op, label, f"The type of reduction-region's parameter at index {k} is "
                                      f"different than the corresponding result type: "
                                      f"'{_c.type_str(a)}' vs '{_c.type_str(acc)}'")
                return None
        init = init_types[i]
        if isinstance(init, TensorType):
            if not _c.compatible_shapes(acc.shape, init.shape):
                diag.error(op, label, f"The shape of reduction-region's result type at index {i} "
                                      f"differs from the op's corresponding init-value type: "
                                      f"'{_c.type_str(acc)}' vs '{_c.type_str(init)}'")
                return None
            if not is_promotable(init.element_type, acc.element_type):
                diag.error(op, label, f"The element-type of reduction-region's result type at "
                                      f"index {i} is expected to be promotable from the op's "
                                      f"corresponding init-value element-type: "
                                      f"'{_c.type_str(acc)}' vs '{_c.type_str(init)}'")
                return None
        inp = input_types[i]
        arg = args[n + i]
        if isinstance(inp, TensorType) and not is_promotable(inp.element_type, arg.element_type):
            diag.error(op, label, f"The element-type of reduction-region's argument at index "
                                  f"{n + i} is expected to be promotable from "
                                  f"'{_c.type_str(inp.element_type)}', but got "
                                  f"'{_c.type_str(arg.element_type)}'")
            return None
        if allowed_dims is None or arg.shape is None:
            continue
        if len(arg.shape) > len(allowed_dims):
            diag.error(op, label, f"The rank of reduction-region's argument at index {n + i} is "
                                  f"expected to be <= {len(allowed_dims)}, got {len(arg.shape)}")
            return None
        j = 0
        for d in allowed_dims:
            if j < len(arg.shape) and (d is None or arg.shape[j] == d):
                j += 1
        if j != len(arg.shape):
            diag.error(op, label, f"The shape of reduction-region's argument at index {n + i} is "
                                  f"not compatible with that of reduce-op's input-parameter at "
                                  f"index {i}")
            return None
    return rets
