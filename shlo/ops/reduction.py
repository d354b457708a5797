"""Reduction-family ops: reduce, reduce_window, select_and_scatter, map, sort (spec sections of
the same names).

Every region is evaluated over whole arrays (ARCHITECTURE.md principle 3); the machinery lives
in :mod:`shlo.ops._regions`:

* ``reduce``: a single-op body (add, multiply, maximum, minimum, and, or, xor) becomes a numpy
  reduction, and so does a projected body ``op(g(a), g(b))`` (``max(|a|, |b|)``...) over
  ``g(inputs)``; any other body is evaluated as a pairwise tree, one batched body call per level
  (schedule: ``body(init, tree(x0, ..., xn-1))``, adjacent pairs first; large inputs block by
  block).
* ``reduce_window``: a left fold over the window positions, one batched body call (or ufunc
  call) per position over all windows, as the upstream interpreter and XLA compute it.
* ``select_and_scatter``: the select body runs once per window position (vectorised over all
  windows), then the scatter body folds the source values into the selected positions.
* ``map``: the body is called once on the whole inputs.
* ``sort``: comparators of the common shapes (one ``compare LT/GT`` of a key, or a lexicographic
  ``or(lt, and(eq, ...))`` chain of them, keys being any function of one operand) become a
  stable argsort/``np.lexsort`` on integer keys (a single input sorted by its own values: a
  plain ``np.sort`` where stability is unobservable); any other comparator runs a bottom-up merge
  sort that calls it on whole arrays of candidate pairs (vectorised binary search per pass).

Implementation-defined choices are written in docs/semantics/reduction.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..attributes import EnumAttr, int_or_none, ints
from ..ir import Block, Operation, Value
from ..types import ComplexType, ElementType, FloatType, IntegerType, TensorType
from ._numeric import float_info, total_order_key
from ._regions import (Body, call_body, clone_subgraph, combine_at, reduce_with_body,
                       ufunc_for)
from ..registry import kernel

__all__ = ["reduce_with_body"]

Run = Callable[..., Sequence[Any]]


# --- helpers ------------------------------------------------------------------------------------


def _dtype(v: Value) -> np.dtype:
    t = v.type
    assert isinstance(t, TensorType), f"expected a tensor, got {t}"
    return t.element_type.dtype


def _as(x: Any, dtype: np.dtype) -> np.ndarray:
    a = np.asarray(x)
    return a if a.dtype == dtype else a.astype(dtype)


def _padding_pairs(attr: Any, rank: int) -> list[tuple[int, int]]:
    flat = ints(attr, (0,) * (2 * rank))
    return [(flat[2 * i], flat[2 * i + 1]) for i in range(rank)]


def _pad(x: np.ndarray, value: Any, pads: Sequence[tuple[int, int]],
         interior: Sequence[int]) -> np.ndarray:
    """Spec "pad": edge padding (may be negative) and interior padding, filled with ``value``."""
    shape, sl_in, crop = [], [], []
    for d, (lo, hi), it in zip(x.shape, pads, interior):
        dil = d + max(d - 1, 0) * it
        plo, phi = max(lo, 0), max(hi, 0)
        shape.append(plo + dil + phi)
        sl_in.append(slice(plo, plo + dil, it + 1))
        crop.append(slice(-lo if lo < 0 else 0, plo + dil + phi - (-hi if hi < 0 else 0)))
    buf = np.full(shape, value, dtype=x.dtype)
    buf[tuple(sl_in)] = x
    return buf[tuple(crop)]


_NUMPY_SCALARS = {np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                  np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128}


def _window_views(buf: np.ndarray, window_dimensions: Sequence[int],
                  window_strides: Sequence[int], window_dilations: Sequence[int]
                  ) -> np.ndarray | None:
    """All windows of ``buf`` as a view of shape ``num_windows + window_dimensions``.

    None when some dimension has no window (the result is empty).
    """
    dilated = [(w - 1) * d + 1 for w, d in zip(window_dimensions, window_dilations)]
    if any(p < w for p, w in zip(buf.shape, dilated)) or buf.size == 0:
        return None
    # ml_dtypes such as float8_e5m2 do not survive as_strided: slide over same-size uints
    raw = buf if buf.dtype.type in _NUMPY_SCALARS else buf.view(f"u{buf.dtype.itemsize}")
    v = sliding_window_view(raw, dilated)
    v = v[tuple(slice(None, None, s) for s in window_strides)
          + tuple(slice(None, None, d) for d in window_dilations)]
    return v if raw is buf else v.view(buf.dtype)


def _windows(buf: np.ndarray, window_dimensions: Sequence[int], window_strides: Sequence[int],
             window_dilations: Sequence[int]) -> np.ndarray | None:
    """All windows of ``buf``, flattened: shape ``num_windows + (prod(window_dimensions),)``."""
    v = _window_views(buf, window_dimensions, window_strides, window_dilations)
    if v is None:
        return None
    return v.reshape(v.shape[:buf.ndim] + (-1,))


def _num_windows(shape: Sequence[int], window_dimensions: Sequence[int],
                 window_strides: Sequence[int], window_dilations: Sequence[int]) -> tuple[int, ...]:
    out = []
    for p, w, s, d in zip(shape, window_dimensions, window_strides, window_dilations):
        dw = (w - 1) * d + 1
        out.append(0 if p == 0 or dw > p else (p - dw) // s + 1)
    return tuple(out)


# --- reduce -------------------------------------------------------------------------------------


@kernel("stablehlo.reduce")
def reduce(op: Operation, ctx: Any) -> Run:
    """Spec "reduce": ``results[:][j] = reduce(inputs[:][j0, ..., :, ..., jR-1])``, the ``:`` at
    ``dimensions``.

    Inputs and init values are converted to the result element types (the body's types, which
    newer spec versions allow to be wider than the inputs'). See :func:`reduce_with_body`; a
    body ``op(g(a), g(b))`` of a projection ``g`` is reduced as ``op`` over ``g(inputs)``
    (:func:`_projected_body`).
    """
    n = len(op.results)
    dimensions = ints(op.attr("dimensions"), ())
    body = ctx.region(op.regions[0])
    dtypes = [_dtype(r) for r in op.results]
    projected = _projected_body(op.regions[0].blocks[0], ctx) if n == 1 else None

    def run(*args: Any) -> list[np.ndarray]:
        inputs = [_as(a, dt) for a, dt in zip(args[:n], dtypes)]
        inits = [_as(a, dt) for a, dt in zip(args[n:], dtypes)]
        if projected is not None and inputs[0].size:
            return [_reduce_projected(body, *projected, inputs[0], inits[0], dimensions)]
        return reduce_with_body(body, inputs, inits, dimensions)

    return run


def _reduce_projected(body: Body, g: Body, op_name: str, x: np.ndarray, init: np.ndarray,
                      dimensions: Sequence[int]) -> np.ndarray:
    """``op`` reduced over ``g(x)`` and ``g(init)`` (see :func:`_projected_body`); large inputs
    block by block (``g`` of a block stays in cache), the block results then reduced again."""
    dt = [x.dtype]
    ginit = call_body(g, [init], init.shape, dt)[0]
    if x.size <= 2 * _BLOCK:
        gx = call_body(g, [x], x.shape, dt)[0]
        return reduce_with_body(body, [gx], [ginit], dimensions, single_op=op_name)[0]
    axes = sorted(d % x.ndim for d in dimensions)
    keep = [d for d in range(x.ndim) if d not in axes]
    moved = np.transpose(x, keep + axes)
    out_shape = moved.shape[:len(keep)]
    rows = int(np.prod(out_shape, dtype=np.int64))
    flat = moved.reshape(rows, -1)
    n = flat.shape[1]
    block_rows = max(1, _BLOCK // n)
    cols = n if block_rows > 1 else _BLOCK
    partials = []
    for r in range(0, rows, block_rows):
        row = []
        for c in range(0, n, cols):
            piece = flat[r:r + block_rows, c:c + cols]
            gp = call_body(g, [piece], piece.shape, dt)[0]
            row.append(reduce_with_body(body, [gp], None, (1,), single_op=op_name)[0])
        partials.append(np.stack(row, axis=-1))
    part = np.concatenate(partials, axis=0) if len(partials) > 1 else partials[0]
    out = reduce_with_body(body, [part], [ginit], (1,), single_op=op_name)[0]
    return out.reshape(out_shape)


_BLOCK = 1 << 18  # elements of g(x) computed at once: cache-resident


# Unary ops g with g(g(x)) = g(x), by the binary ops op for which g(op(g(a), g(b))) =
# op(g(a), g(b)) holds for every element type the fast path accepts (floats for all; integers
# only for maximum/minimum, whose result is one of their operands: an integer sum of
# absolute values may wrap negative).
_PROJECTIONS = {
    "stablehlo.abs": ("stablehlo.maximum", "stablehlo.minimum", "stablehlo.add",
                      "stablehlo.multiply"),
    "stablehlo.floor": ("stablehlo.maximum", "stablehlo.minimum"),
    "stablehlo.ceil": ("stablehlo.maximum", "stablehlo.minimum"),
    "stablehlo.round_nearest_even": ("stablehlo.maximum", "stablehlo.minimum"),
    "stablehlo.round_nearest_afz": ("stablehlo.maximum", "stablehlo.minimum"),
    "stablehlo.sign": ("stablehlo.maximum", "stablehlo.minimum"),
}


def _projected_body(block: Block, ctx: Any) -> tuple[Body, str] | None:
    """``(g, op)`` when the reducer is ``return op(g(a), g(b))`` for a projection ``g``.

    Then every node of the reduction tree is ``op`` of projected leaves (``g`` leaves the
    partial results unchanged), so the reduction is ``op`` reduced over ``g(inputs)`` and
    ``g(init)``: the inf-norm ``max(|a|, |b|)`` and the L1 norm ``|a| + |b|`` become one
    projection and a numpy reduction instead of a tree of body calls.
    """
    ops = block.operations
    if len(ops) != 4 or len(block.arguments) != 2 or len(ops[3].operands) != 1:
        return None
    g1, g2, comb = ops[0], ops[1], ops[2]
    a, b = block.arguments
    et = a.type.element_type if isinstance(a.type, TensorType) else None
    if et is None or not isinstance(et, (FloatType, IntegerType)) \
            or b.type != a.type or ops[3].operands[0] is not comb.results[0]:
        return None
    if g1.name != g2.name or g1.name not in _PROJECTIONS or g1.regions \
            or g1.properties != g2.properties or g1.attributes != g2.attributes:
        return None
    if len(g1.operands) != 1 or len(g2.operands) != 1 \
            or {id(g1.operands[0]), id(g2.operands[0])} != {id(a), id(b)}:
        return None
    if g1.results[0].type != a.type or g2.results[0].type != a.type \
            or comb.results[0].type != a.type:
        return None
    if comb.name not in _PROJECTIONS[g1.name] or len(comb.operands) != 2 \
            or {id(v) for v in comb.operands} != {id(g1.results[0]), id(g2.results[0])}:
        return None
    if isinstance(et, IntegerType) and comb.name not in ("stablehlo.maximum",
                                                          "stablehlo.minimum"):
        return None
    g_of_a = g1.results[0] if g1.operands[0] is a else g2.results[0]
    region = clone_subgraph(g_of_a, a)
    if region is None:
        return None
    return ctx.region(region), comb.name


# --- reduce_window ------------------------------------------------------------------------------


@kernel("stablehlo.reduce_window")
def reduce_window(op: Operation, ctx: Any) -> Run:
    """Spec "reduce_window": ``results[:][i] = reduce(windows, init_values, axes, body)``.

    ``padded_inputs = pad(inputs, init_values, padding[:, 0], padding[:, 1], base_dilations - 1)``
    (edges and the holes of the base dilation hold the init value). The windows are strided,
    dilated views of it (``sliding_window_view``, no copy). Schedule: a left fold over the window
    positions in row-major order, ``acc = body(acc, window[k])`` starting from the init value, as
    the upstream interpreter and XLA compute it; one batched body call per window position,
    over all windows at once.
    """
    n = len(op.results)
    window_dimensions = ints(op.attr("window_dimensions"))
    rank = len(window_dimensions)
    window_strides = ints(op.attr("window_strides"), (1,) * rank)
    base_dilations = ints(op.attr("base_dilations"), (1,) * rank)
    window_dilations = ints(op.attr("window_dilations"), (1,) * rank)
    padding = _padding_pairs(op.attr("padding"), rank)
    interior = [b - 1 for b in base_dilations]
    body = ctx.region(op.regions[0])
    dtypes = [_dtype(r) for r in op.results]
    step = _fold_step(body, dtypes)
    offsets = list(np.ndindex(*window_dimensions))

    def run(*args: Any) -> list[np.ndarray]:
        inits = [_as(a, dt) for a, dt in zip(args[n:], dtypes)]
        padded = [_pad(_as(a, dt), v, padding, interior)
                  for a, v, dt in zip(args[:n], inits, dtypes)]
        views = [_window_views(p, window_dimensions, window_strides, window_dilations)
                 for p in padded]
        if views[0] is None:
            shape = _num_windows(padded[0].shape, window_dimensions, window_strides,
                                 window_dilations)
            return [np.empty(shape, dtype=dt) for dt in dtypes]
        shape = views[0].shape[:rank]
        acc = [np.full(shape, v, dtype=dt) for v, dt in zip(inits, dtypes)]
        for k in offsets:
            acc = step(acc, [v[(Ellipsis,) + k] for v in views])
        return acc

    return run


def _fold_step(body: Body, dtypes: list[np.dtype]
               ) -> Callable[[list[np.ndarray], list[np.ndarray]], list[np.ndarray]]:
    """``(acc, x) -> body(acc, x)``; a numpy ufunc when it computes the single-op body exactly.

    The ufunc is used for add/multiply/and/or/xor/maximum/minimum on bool and numpy's integers,
    add/multiply on floats and complex (numpy and ml_dtypes round each result once to the
    type); float maximum/minimum (NaN, signed zeros) and the ml_dtypes integers go through the
    body's own kernel.
    """
    single = getattr(body, "single_op", None)
    if len(dtypes) == 1 and single is not None:
        dt = dtypes[0]
        uf = ufunc_for(single, dt)
        exact = uf is not None and (
            dt.kind in "biu" or (single in ("stablehlo.add", "stablehlo.multiply")
                                 and dt.kind in "fcV"))
        if exact:
            return lambda acc, x: [_as(uf(acc[0], x[0]), dt)]

    def step(acc: list[np.ndarray], x: list[np.ndarray]) -> list[np.ndarray]:
        return call_body(body, acc + x, acc[0].shape, dtypes)

    return step


# --- select_and_scatter -------------------------------------------------------------------------


@kernel("stablehlo.select_and_scatter")
def select_and_scatter(op: Operation, ctx: Any) -> Run:
    """Spec "select_and_scatter".

    For each window (one per ``source`` element) the select body picks one operand element:
    walking the window's in-bounds elements in row-major order, the current candidate replaces
    the selected one when ``select(selected, candidate)`` is false (as the upstream
    interpreter). Padding positions are never selected; a window that lies entirely in padding
    scatters nothing. Then ``result[i] = reduce([source values selected at i], init_value,
    scatter)``, folded in source order, ``init_value`` where nothing was selected.
    Vectorised: one select call per window position over all windows; scatter by rounds
    (:func:`combine_at`).
    """
    dtype = _dtype(op.results[0])
    operand_type = op.operands[0].type
    rank = operand_type.rank if isinstance(operand_type, TensorType) and \
        operand_type.shape is not None else len(ints(op.attr("window_dimensions")))
    window_dimensions = ints(op.attr("window_dimensions"), (1,) * rank)
    window_strides = ints(op.attr("window_strides"), (1,) * rank)
    padding = _padding_pairs(op.attr("padding"), rank)
    select = ctx.region(op.regions[0])
    scatter = ctx.region(op.regions[1])
    ones = (1,) * rank
    zeros = (0,) * rank

    def run(operand: Any, source: Any, init_value: Any) -> list[np.ndarray]:
        operand = _as(operand, dtype)
        source = _as(source, dtype)
        init = _as(init_value, dtype)
        shape = operand.shape
        values = _windows(_pad(operand, init, padding, zeros), window_dimensions,
                          window_strides, ones)
        result = np.full(operand.size, init, dtype=dtype)
        if values is None or source.size == 0:
            return [result.reshape(shape)]
        index = _windows(_pad(np.arange(operand.size).reshape(shape), -1, padding, zeros),
                         window_dimensions, window_strides, ones)
        values = values.reshape(-1, values.shape[-1])
        index = index.reshape(-1, index.shape[-1])
        sel_v, sel_i = values[:, 0], index[:, 0]
        for k in range(1, values.shape[1]):
            cand_v, cand_i = values[:, k], index[:, k]
            keep = call_body(select, [sel_v, cand_v], sel_v.shape, [np.dtype(np.bool_)])[0]
            take = (cand_i >= 0) & ((sel_i < 0) | ~keep)
            sel_v = np.where(take, cand_v, sel_v)
            sel_i = np.where(take, cand_i, sel_i)
        valid = sel_i >= 0
        src = source.reshape(-1)
        if src.size != sel_i.size:
            raise ValueError(f"source has {src.size} elements, expected one per window "
                             f"({sel_i.size})")
        (result,) = combine_at(scatter, [result], sel_i[valid], [src[valid]])
        return [result.reshape(shape)]

    return run


# --- map ----------------------------------------------------------------------------------------


@kernel("stablehlo.map")
def map_(op: Operation, ctx: Any) -> Run:
    """Spec "map": ``result[i] = computation(inputs[0][i], ..., inputs[N-1][i])``, in one call."""
    body = ctx.region(op.regions[0])
    dtypes = [_dtype(r) for r in op.results]
    arg_dtypes = [a.type.element_type.dtype for a in op.regions[0].blocks[0].arguments]

    def run(*inputs: Any) -> list[np.ndarray]:
        args = [_as(x, dt) for x, dt in zip(inputs, arg_dtypes)]
        return call_body(body, args, args[0].shape if args else (), dtypes)

    return run


# --- sort ---------------------------------------------------------------------------------------


@kernel("stablehlo.sort")
def sort(op: Operation, ctx: Any) -> Run:
    """Spec "sort": sorts 1-d slices along ``dimension`` of all ``inputs`` together.

    Always stable (also when ``is_stable`` is false: a stable sort is one of the allowed
    results). Recognised comparators are turned into integer sort keys (:func:`_analyze`);
    others run :func:`_merge_sort_order`.
    """
    comparator = ctx.region(op.regions[0])
    dimension = int_or_none(op.attr("dimension"))
    dimension = -1 if dimension is None else dimension
    plan = _analyze(op.regions[0].blocks[0], ctx)
    direct = _direct_sort(plan) if len(op.operands) == 1 else None

    def run(*inputs: Any) -> list[np.ndarray]:
        arrays = [np.asarray(x) for x in inputs]
        d = dimension % arrays[0].ndim
        moved = [np.moveaxis(a, d, -1) for a in arrays]
        shape = moved[0].shape
        n = shape[-1]
        flat = [m.reshape(-1, n) for m in moved]
        if n <= 1 or flat[0].shape[0] == 0:
            return [a.copy() for a in arrays]
        if direct is not None:
            values = direct(flat[0])
            if values is not None:
                return [np.moveaxis(values.reshape(shape), -1, d)]
        order = _lex_order(plan, flat) if plan is not None else None
        if order is None:
            order = _merge_sort_order(comparator, flat)
        return [np.moveaxis(np.take_along_axis(f, order, axis=1).reshape(shape), -1, d)
                for f in flat]

    return run


@dataclass
class _Key:
    """One key of a recognised comparator: ``compare direction, f(lhs_k), f(rhs_k)``."""

    operand: int  # index k of the sorted input the key is computed from
    fn: Body | None  # key function on whole arrays (None: the input itself)
    element_type: ElementType  # element type of the compared values
    compare_type: str
    descending: bool


def _direction(op: Operation) -> str | None:
    a = op.attr("comparison_direction")
    if isinstance(a, EnumAttr):
        return a.value
    return getattr(a, "value", a) if a is not None else None


def _compare_type(op: Operation, et: ElementType) -> str | None:
    """The compare op's compare_type, its default filled in from the element type."""
    a = op.attr("compare_type")
    if a is not None:
        return a.value if isinstance(a, EnumAttr) else str(getattr(a, "value", a))
    if isinstance(et, (FloatType, ComplexType)):
        return "FLOAT"
    if isinstance(et, IntegerType):
        return "SIGNED" if et.is_signed else "UNSIGNED"
    return None


def _key_supported(et: ElementType, compare_type: str) -> bool:
    if isinstance(et, IntegerType):
        if et.is_bool or et.is_unsigned:
            return compare_type == "UNSIGNED"
        return compare_type == "SIGNED"
    if isinstance(et, FloatType):
        return compare_type in ("FLOAT", "TOTALORDER")
    if isinstance(et, ComplexType):  # lexicographic on (real, imag), as the compare kernel
        return compare_type == "FLOAT"
    return False


def _analyze(block: Block, ctx: Any) -> list[_Key] | None:
    """The keys of a lexicographic comparator, or None when the comparator is not one.

    Recognised: ``compare LT|GT, f(arg2k), f(arg2k+1)`` (or with the arguments swapped), where
    ``f`` is any computation of one argument (identity, JAX's NaN/zero canonicalisation, ``real``
    ...), and chains ``or(K, and(compare EQ (same operands), REST))`` of such keys (the form JAX
    emits for multi-operand sorts), with the keys' integer, boolean or float types.
    """
    if not block.operations or len(block.operations[-1].operands) != 1:
        return None
    try:
        raw = _chain(block.operations[-1].operands[0], block)
    except RecursionError:  # pragma: no cover - absurdly deep comparator
        return None
    if raw is None:
        return None
    keys = []
    for cmp, k, swapped in raw:
        lhs, rhs = cmp.operands
        et = lhs.type.element_type
        ct = _compare_type(cmp, et)
        if ct is None or not _key_supported(et, ct):
            return None
        own = rhs if swapped else lhs  # the side computed from arg 2k
        arg = block.arguments[2 * k]
        if own is arg:
            fn = None
        else:
            region = clone_subgraph(own, arg)
            if region is None:
                return None
            fn = ctx.region(region)
        descending = (_direction(cmp) == "GT") != swapped
        keys.append(_Key(k, fn, et, ct, descending))
    return keys


def _chain(v: Value, block: Block) -> list[tuple[Operation, int, bool]] | None:
    op = _local_op(v, block)
    if op is None:
        return None
    if op.name == "stablehlo.compare":
        key = _key_compare(op, block)
        return [key] if key is not None else None
    if op.name != "stablehlo.or" or len(op.operands) != 2:
        return None
    for first, second in (op.operands, op.operands[::-1]):
        cmp = _local_op(first, block)
        and_op = _local_op(second, block)
        if cmp is None or and_op is None or cmp.name != "stablehlo.compare" \
                or and_op.name != "stablehlo.and" or len(and_op.operands) != 2:
            continue
        key = _key_compare(cmp, block)
        if key is None:
            continue
        for eq_v, rest in (and_op.operands, and_op.operands[::-1]):
            eq = _local_op(eq_v, block)
            if eq is None or eq.name != "stablehlo.compare" or _direction(eq) != "EQ":
                continue
            et = cmp.operands[0].type.element_type
            if _compare_type(eq, et) != _compare_type(cmp, et):
                continue
            a, b = cmp.operands
            c, d = eq.operands
            if not ((_same(a, c, block) and _same(b, d, block))
                    or (_same(a, d, block) and _same(b, c, block))):
                continue
            tail = _chain(rest, block)
            if tail is not None:
                return [key] + tail
    return None


def _local_op(v: Value, block: Block) -> Operation | None:
    op = v.owner
    if isinstance(op, Operation) and op.parent is block:
        return op
    return None


def _key_compare(op: Operation, block: Block) -> tuple[Operation, int, bool] | None:
    if _direction(op) not in ("LT", "GT") or len(op.operands) != 2:
        return None
    state: dict[str, Any] = {}
    if not _pair(op.operands[0], op.operands[1], block, state) or "k" not in state:
        return None
    return op, state["k"], state["swapped"]


def _pair(a: Value, b: Value, block: Block, state: dict[str, Any]) -> bool:
    """Whether ``a`` is ``f(arg2k)`` and ``b`` the same ``f(arg2k+1)`` (or swapped)."""
    if a is b:
        return not _depends_on_args(a, block)
    if a.owner is block and b.owner is block:
        ia, ib = a.index, b.index
        if ia // 2 != ib // 2 or ia == ib:
            return False
        k, swapped = ia // 2, ia % 2 == 1
        if state.setdefault("k", k) != k or state.setdefault("swapped", swapped) != swapped:
            return False
        return True
    oa, ob = _local_op(a, block), _local_op(b, block)
    if oa is None or ob is None or oa.regions or ob.regions:
        return False
    if (oa.name != ob.name or a.index != b.index or len(oa.operands) != len(ob.operands)
            or oa.properties != ob.properties or oa.attributes != ob.attributes
            or oa.result_types != ob.result_types):
        return False
    return all(_pair(x, y, block, state) for x, y in zip(oa.operands, ob.operands))


def _same(a: Value, b: Value, block: Block) -> bool:
    """Structural equality of two values of ``block`` (same ops on the same arguments)."""
    if a is b:
        return True
    oa, ob = _local_op(a, block), _local_op(b, block)
    if oa is None or ob is None or oa.regions or ob.regions:
        return False
    if (oa.name != ob.name or a.index != b.index or len(oa.operands) != len(ob.operands)
            or oa.properties != ob.properties or oa.attributes != ob.attributes
            or oa.result_types != ob.result_types):
        return False
    return all(_same(x, y, block) for x, y in zip(oa.operands, ob.operands))


def _depends_on_args(v: Value, block: Block) -> bool:
    stack, seen = [v], set()
    while stack:
        x = stack.pop()
        if x.owner is block:
            return True
        op = _local_op(x, block)
        if op is not None and id(op) not in seen:
            seen.add(id(op))
            stack.extend(op.operands)
    return False


def _float_key(values: np.ndarray) -> tuple[np.ndarray, bool]:
    """FLOAT order as integers: -0 == +0, every NaN equal and after +inf; and whether NaN seen."""
    if values.dtype in _NATIVE_FLOATS[:2]:  # f16, f32: keys of their own width
        v = values + values.dtype.type(0)  # -0.0 + 0.0 = +0.0
        nan = np.isnan(v)
        has_nan = bool(nan.any())
        if has_nan:
            v = np.where(nan, values.dtype.type(np.nan), v)
        info = _F32_INFO if values.dtype == _NATIVE_FLOATS[1] else _F16_INFO
        return total_order_key(v, info).astype(np.int64), has_nan
    v = values.astype(np.float64) + 0.0  # -0.0 + 0.0 = +0.0
    nan = np.isnan(v)
    has_nan = bool(nan.any())
    if has_nan:
        v = np.where(nan, np.nan, v)  # one positive NaN
    return total_order_key(v, _F64_INFO).astype(np.int64), has_nan


_F64_INFO = float_info(FloatType("f64"))
_F32_INFO = float_info(FloatType("f32"))
_F16_INFO = float_info(FloatType("f16"))


def _integer_keys(values: np.ndarray, key: _Key) -> tuple[list[np.ndarray], bool]:
    """int64/uint64 arrays ordering ``values`` as ``key`` does (lexicographically), and whether
    a NaN was seen under FLOAT (where keys cannot express the comparator's meaning)."""
    et, ct = key.element_type, key.compare_type
    has_nan = False
    if isinstance(et, IntegerType):
        out = [values.astype(np.uint64 if et.is_unsigned or et.is_bool else np.int64)]
    elif isinstance(et, ComplexType):
        (re, n1), (im, n2) = _float_key(np.real(values)), _float_key(np.imag(values))
        out, has_nan = [re, im], n1 or n2
    elif ct == "TOTALORDER":
        out = [total_order_key(values, float_info(et)).astype(np.int64)]
    else:
        k, has_nan = _float_key(values)
        out = [k]
    if key.descending:
        out = [~k for k in out]
    return out, has_nan


_NATIVE_FLOATS = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


def _direct_sort(plan: list[_Key] | None) -> Callable[[np.ndarray], np.ndarray | None] | None:
    """For one input sorted by its own values: a function sorting the rows of a 2-d array by
    value (numpy's SIMD sort, no permutation), or returning None when it cannot decide.

    A stable sort only differs from an unstable one on elements that compare equal but differ
    in bits: integers never; under TOTALORDER never (its keys are a bijection: sorted as keys
    and mapped back); under FLOAT only -0/+0 and NaNs, so rows holding a zero or a NaN fall
    back to the permutation path.
    """
    if plan is None or len(plan) != 1 or plan[0].fn is not None or plan[0].operand != 0:
        return None
    key = plan[0]
    et, descending = key.element_type, key.descending

    def finish(v: np.ndarray) -> np.ndarray:
        return v[:, ::-1] if descending else v

    if isinstance(et, IntegerType):
        return lambda x: finish(np.sort(x, axis=-1))
    if not isinstance(et, FloatType) or et.dtype not in _NATIVE_FLOATS:
        return None
    if key.compare_type == "TOTALORDER":
        info = float_info(et)
        sdt = np.dtype(f"i{et.dtype.itemsize}")
        flip = sdt.type((1 << (info.width - 1)) - 1)

        def by_total_order(x: np.ndarray) -> np.ndarray:
            k = np.sort(total_order_key(x, info), axis=-1)
            bits = np.where(k < 0, np.bitwise_xor(k, flip), k)  # the key map is an involution
            return finish(bits.astype(sdt, copy=False).view(et.dtype))

        return by_total_order

    def by_value(x: np.ndarray) -> np.ndarray | None:
        if np.isnan(x).any() or (x == 0).any():
            return None
        return finish(np.sort(x, axis=-1))

    return by_value


def _stable_argsort(k: np.ndarray) -> np.ndarray:
    """``np.argsort(k, axis=-1, kind="stable")`` for integer keys; when the keys span less
    than 2**32 values, as one SIMD sort of ``key << 32 | index`` (several times faster than
    numpy's stable argsort)."""
    n = k.shape[-1]
    if k.size and n < 2**31:
        lo, hi = int(k.min()), int(k.max())
        if hi - lo < 2**32:
            high = (k - k.dtype.type(lo)).astype(np.int64) - np.int64(2**31)
            packed = (high << np.int64(32)) | np.arange(n, dtype=np.int64)
            packed.sort(axis=-1)
            return packed & np.int64(0xFFFFFFFF)
    return np.argsort(k, axis=-1, kind="stable")


def _lex_order(plan: list[_Key], flat: list[np.ndarray]) -> np.ndarray | None:
    """The sorting permutation (per row) for a recognised comparator, or None to fall back.

    Falls back when a FLOAT key that is followed by further keys (or a complex key) holds a
    NaN: there the comparator treats NaN as unordered, which keys cannot express.
    """
    ints_keys: list[np.ndarray] = []
    for i, key in enumerate(plan):
        x = flat[key.operand]
        if key.fn is not None:
            values = call_body(key.fn, [x], x.shape, [key.element_type.dtype])[0]
        else:
            values = x
        ks, has_nan = _integer_keys(values, key)
        if has_nan and (i + 1 < len(plan) or len(ks) > 1):
            return None
        ints_keys.extend(ks)
    if len(ints_keys) == 1:
        return _stable_argsort(ints_keys[0])
    return np.lexsort(ints_keys[::-1], axis=-1)


def _merge_sort_order(comparator: Body, flat: list[np.ndarray]) -> np.ndarray:
    """Stable bottom-up merge sort of every row of ``flat`` with any comparator.

    Each pass merges runs of width ``w`` pairwise. An element of a left run moves forward by
    the number of elements of the right run that compare less than it (``comparator(b, a)``);
    an element of a right run by the number of left elements not greater than it
    (``not comparator(b, a)``): both counts are found by a binary search run for all elements
    of all rows at once, one comparator call per search step. New positions are applied with a
    stable argsort, so the result is a permutation even for inconsistent comparators.
    """
    m, n = flat[0].shape
    cur = [f for f in flat]
    perm = np.broadcast_to(np.arange(n), (m, n))
    pos = np.arange(n)
    bool_dt = [np.dtype(np.bool_)]
    w = 1
    while w < n:
        off = pos % (2 * w)
        block_start = pos - off
        is_left = off < w
        left_len = np.minimum(w, n - block_start)
        right_len = np.clip(n - block_start - w, 0, w)
        partner_base = np.where(is_left, block_start + w, block_start)
        lo = np.zeros((m, n), np.int64)
        hi = np.broadcast_to(np.where(is_left, right_len, left_len), (m, n)).astype(np.int64)
        while True:
            active = lo < hi
            if not active.any():
                break
            mid = (lo + hi) // 2
            pidx = np.minimum(partner_base + mid, n - 1)
            args = []
            for c in cur:
                partner = np.take_along_axis(c, pidx, axis=1)
                args.append(np.where(is_left, partner, c))   # lhs: the right-run element
                args.append(np.where(is_left, c, partner))   # rhs: the left-run element
            less = call_body(comparator, args, (m, n), bool_dt)[0]
            pred = np.where(is_left, less, ~less)
            lo = np.where(active & pred, mid + 1, lo)
            hi = np.where(active & ~pred, mid, hi)
        target = block_start + np.where(is_left, off, off - w) + lo
        order = np.argsort(target, axis=1, kind="stable")
        cur = [np.take_along_axis(c, order, axis=1) for c in cur]
        perm = np.take_along_axis(perm, order, axis=1)
        w *= 2
    return perm


# --- constraints (spec "Ops" section, C1..Cn) ---------------------------------------------------
# The verifiers of the reduction ops (shlo/verifier.py calls them through the registry).

from typing import Any as _Any  # noqa: E402

from ..ir import Operation as _Operation  # noqa: E402
from ..types import TensorType as _TensorType  # noqa: E402
from . import _constraints as _c  # noqa: E402
from ..registry import verifier  # noqa: E402


def _inputs_compatible(op: _Operation, diag: _Any, label: str, types: list) -> bool:
    for i, t in enumerate(types[1:], 1):
        if not _c.compatible_shapes(types[0].shape, t.shape):
            diag.error(op, label, f"expects all inputs to have compatible shapes. Shape at "
                                  f"input-index {i} is not compatible with shape at input-index 0")
            return False
    return True


@verifier("stablehlo.reduce")
def _verify_reduce(op: _Operation, diag: _Any) -> None:
    """reduce (C1-C8): same input shapes, matching init values, unique in-range dimensions, a
    reducer `body` of the right type, and the result types the spec determines."""
    if not _c.signature(op, diag, [(_c.TENSOR, "*"), (_c.TENSOR, "*")], [(_c.TENSOR, "*")],
                        attrs={"dimensions": "ints"}, regions=1):
        return
    n = len(op.operands) // 2
    inputs = [v.type for v in op.operands[:n]]
    inits = [v.type for v in op.operands[n:]]
    if n == 0:
        diag.error(op, "C3", "expects at least one input")
        return
    if not _inputs_compatible(op, diag, "C1", inputs):
        return
    dims = _c.ints_attr(op, "dimensions")
    shape = next((t.shape for t in inputs if t.shape is not None), None)
    if shape is not None:
        for d in dims:
            if not 0 <= d < len(shape):
                diag.error(op, "C4", f"Out-of-bounds dimension {d}, expected to be in range "
                                     f"[0, {len(shape)})")
                return
    if not _c.is_unique(dims):
        diag.error(op, "C5", f"Duplicate reduction dimension: {_c.dims_str(dims)}")
        return
    kept = None if shape is None else [s for i, s in enumerate(shape) if i not in dims]
    rets = _c.check_reducer(op, diag, "C6", 0, inputs, inits, kept)
    if rets is None:
        return
    res_shape = None if kept is None else tuple(kept)
    _c.check_inferred(op, diag, "C7, C8",
                      [_TensorType(res_shape, r.element_type) for r in rets])


@verifier("stablehlo.reduce_window")
def _verify_reduce_window(op: _Operation, diag: _Any) -> None:
    """reduce_window (C1-C16): window attributes sized like the inputs and positive, padding of
    shape [rank, 2], a reducer `body`, and the result shapes given by `num_windows`."""
    if not _c.signature(op, diag, [(_c.TENSOR, "*"), (_c.TENSOR, "*")], [(_c.TENSOR, "*")],
                        attrs={"window_dimensions": "ints"},
                        optional_attrs={"window_strides": "ints", "base_dilations": "ints",
                                        "window_dilations": "ints", "padding": "i64elements"},
                        regions=1):
        return
    n = len(op.operands) // 2
    inputs = [v.type for v in op.operands[:n]]
    inits = [v.type for v in op.operands[n:]]
    if n == 0:
        diag.error(op, "C1", "expects at least one input")
        return
    if not _inputs_compatible(op, diag, "C2", inputs):
        return
    shape = inputs[0].shape
    wd = _c.ints_attr(op, "window_dimensions")
    if shape is None:
        return
    rank = len(shape)
    if len(wd) != rank:
        diag.error(op, "C4", f"expects window-dimensions size == input rank, but got "
                             f"window-dimensions size: {len(wd)} and input: "
                             f"'{_c.type_str(inputs[0])}' with rank = {rank}.")
        return
    if not _c.positive_window(op, diag, "C5", wd):
        return
    strides = _c.window_list(op, diag, "C6, C7", "window_strides", "window-strides", rank,
                             positive="stride")
    if strides is None:
        return
    base = _c.window_list(op, diag, "C8, C9", "base_dilations", "base-dilation factors", rank,
                          positive="base dilation factor")
    if base is None:
        return
    wdil = _c.window_list(op, diag, "C10, C11", "window_dilations", "window-dilation factors",
                          rank, positive="window dilation factor")
    if wdil is None:
        return
    pad = _c.padding_pairs(op, diag, "C12", rank)
    if pad is None:
        return
    rets = _c.check_reducer(op, diag, "C13", 0, inputs, inits, list(shape))
    if rets is None:
        return
    out = tuple(_c.num_windows(shape[i], wd[i], strides[i], pad[i], base[i], wdil[i])
                for i in range(rank))
    _c.check_inferred(op, diag, "C14, C15, C16", [_TensorType(out, r.element_type) for r in rets])


@verifier("stablehlo.select_and_scatter")
def _verify_select_and_scatter(op: _Operation, diag: _Any) -> None:
    """select_and_scatter (C1-C12): window attributes, `source` shaped like the windows,
    `select` of type `(tensor<E>, tensor<E>) -> tensor<i1>`, a reducer `scatter`."""
    if not _c.signature(op, diag, [_c.TENSOR, _c.TENSOR, _c.TENSOR], [_c.TENSOR],
                        optional_attrs={"window_dimensions": "ints", "window_strides": "ints",
                                        "padding": "i64elements"}, regions=2):
        return
    operand, source, init = (v.type for v in op.operands)
    if operand.shape is None:
        return
    rank = len(operand.shape)
    wd = _c.ints_attr(op, "window_dimensions", ())
    if len(wd) != rank:
        diag.error(op, "C4", f"expects window-dimensions size == operand rank, but got "
                             f"window-dimensions size: {len(wd)} and operand-type: "
                             f"'{_c.type_str(operand)}' with rank = {rank}.")
        return
    if not _c.positive_window(op, diag, "C5", wd):
        return
    strides = _c.window_list(op, diag, "C6, C7", "window_strides", "window-strides", rank,
                             positive="stride")
    if strides is None:
        return
    pad = _c.padding_pairs(op, diag, "C8", rank)
    if pad is None:
        return
    expected = _TensorType(tuple(_c.num_windows(operand.shape[i], wd[i], strides[i], pad[i])
                                 for i in range(rank)), operand.element_type)
    if not _c.compatible(expected, source) or \
            not _c.same_element_type(operand.element_type, source.element_type):
        diag.error(op, "C1, C2", f"expects source-type to be '{_c.type_str(expected)}', but "
                                 f"got'{_c.type_str(source)}'")
        return
    scalar = _TensorType((), operand.element_type)
    select = _c.region_block(op, 0)
    if select is None:
        return
    args = [a.type for a in select.arguments]
    if len(args) != 2:
        diag.error(op, "C9", f"expects the select-region to take 2 parameters, but takes "
                             f"{len(args)}")
        return
    for i, a in enumerate(args):
        if not _c.compatible(a, scalar) or not isinstance(a, _TensorType) or a.shape != ():
            diag.error(op, "C9", f"expects the type of select-region's parameter at index {i} "
                                 f"to be '{_c.type_str(scalar)}', but got '{_c.type_str(a)}'")
            return
    rets = _c.region_return_types(op, 0)
    if rets is not None:
        if len(rets) != 1:
            diag.error(op, "C9", f"expects select-region to return single value, but got: "
                                 f"{len(rets)}")
            return
        r = rets[0]
        if not (isinstance(r, _TensorType) and r.shape in ((), None) and
                getattr(r.element_type, "name", None) == "i1"):
            diag.error(op, "C9", f"expects the return-type of select-region to be tensor<i1>, "
                                 f"but got: '{_c.type_str(r)}'")
            return
    srets = _c.check_reducer(op, diag, "C10", 1, [operand], [init], [])
    if srets is None:
        return
    _c.check_inferred(op, diag, "C11, C12", [_TensorType(operand.shape, srets[0].element_type)])


@verifier("stablehlo.map")
def _verify_map(op: _Operation, diag: _Any) -> None:
    """map (C1-C4): inputs of one shape, `dimensions = range(rank)`, and `computation` of type
    `(tensor<E0>, ..., tensor<EN-1>) -> tensor<E'>`."""
    if not _c.signature(op, diag, [(_c.TENSOR, "*")], [_c.TENSOR], attrs={"dimensions": "ints"},
                        regions=1):
        return
    inputs = [v.type for v in op.operands]
    if not inputs:
        diag.error(op, "C2", "expects at least one input")
        return
    block = _c.region_block(op, 0)
    if block is None:
        return
    args = [a.type for a in block.arguments]
    if len(args) != len(inputs):
        diag.error(op, "C4", f"expects number of operands to match the arity of map "
                             f"computation, but got: {len(inputs)} and {len(args)}")
        return
    for i, (a, t) in enumerate(zip(args, inputs)):
        if not isinstance(a, _TensorType) or a.shape != ():
            diag.error(op, "C4", f"computation arguments must be 0-rank tensor, but got: arg "
                                 f"#{i} of type '{_c.type_str(a)}'")
            return
        if not _c.same_element_type(a.element_type, t.element_type):
            diag.error(op, "C4", f"element type of operands and computation arguments must "
                                 f"match, but got: '{_c.type_str(t.element_type)}' and "
                                 f"'{_c.type_str(a.element_type)}'")
            return
    rets = _c.region_return_types(op, 0)
    if rets is None:
        return
    if len(rets) != 1:
        diag.error(op, "C4", f"computation must return single output, but got: {len(rets)}")
        return
    r = rets[0]
    if not isinstance(r, _TensorType) or r.shape != ():
        diag.error(op, "C4", f"computation must return 0-rank tensor, but got: "
                             f"'{_c.type_str(r)}'")
        return
    dims = _c.ints_attr(op, "dimensions")
    for i, d in enumerate(dims):
        if d != i:
            diag.error(op, "C3", f"requires monotonically increasing dimension numbers, but "
                                 f"got: {', '.join(map(str, dims))}")
            return
    shape = next((t.shape for t in inputs if t.shape is not None), None)
    if shape is not None and len(dims) != len(shape):
        diag.error(op, "C3", f"applied to a subset of dimensions currently not supported: "
                             f"operand dimensions = {len(shape)}, requested map dimensions size "
                             f"= {len(dims)}")
        return
    if not _c.same_shapes(op, diag, "C1", inputs, message="requires the same shape for all "
                                                          "operands"):
        return
    _c.check_inferred(op, diag, "C1, C4", [_TensorType(shape, r.element_type)])


@verifier("stablehlo.sort")
def _verify_sort(op: _Operation, diag: _Any) -> None:
    """sort (C1-C5): inputs of one shape, results of the inputs' types, `-R <= dimension < R`,
    `comparator` of type `(tensor<E0>, tensor<E0>, ...) -> tensor<i1>`."""
    if not _c.signature(op, diag, [(_c.TENSOR, "*")], [(_c.TENSOR, "*")],
                        optional_attrs={"dimension": "int", "is_stable": "bool"}, regions=1):
        return
    inputs = [v.type for v in op.operands]
    if not inputs:
        diag.error(op, "C1", "requires at least one input")
        return
    if not _c.same_shapes(op, diag, "C3", inputs + op.result_types,
                          message="requires the same shape for all operands and results"):
        return
    results = op.result_types
    if len(results) != len(inputs) or \
            any(not _c.compatible(a, b) for a, b in zip(inputs, results)):
        diag.error(op, "C2", f"requires the same type for all operands and results: inputs "
                             f"{_c.types_str(inputs)}, results {_c.types_str(results)}")
        return
    shape = next((t.shape for t in inputs if t.shape is not None), None)
    dim = _c.int_attr(op, "dimension", -1)
    if shape is not None:
        r = len(shape)
        if not -r <= dim < r:
            diag.error(op, "C4", f"dimension attribute value must be in range [-{r}, {r}), but "
                                 f"found {dim}")
            return
    block = _c.region_block(op, 0)
    if block is None:
        return
    args = [a.type for a in block.arguments]
    if len(args) != 2 * len(inputs):
        diag.error(op, "C5", f"comparator block should have {2 * len(inputs)} arguments")
        return
    for i, a in enumerate(args):
        want = _TensorType((), inputs[i // 2].element_type)
        if not _c.same_type(a, want):
            diag.error(op, "C5", f"comparator block argument #{i} should be of type "
                                 f"'{_c.type_str(want)}' but got '{_c.type_str(a)}'")
            return
    rets = _c.region_return_types(op, 0)
    if rets is None:
        return
    if len(rets) != 1:
        diag.error(op, "C5", f"comparator must return single output but got {len(rets)}")
        return
    r = rets[0]
    if not (isinstance(r, _TensorType) and r.shape in ((), None) and
            getattr(r.element_type, "name", None) == "i1"):
        diag.error(op, "C5", f"comparator must return tensor<i1> but got '{_c.type_str(r)}'")
