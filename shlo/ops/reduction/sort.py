"""sort (spec "sort"): sorts 1-d slices of `inputs` together along `dimension` by
`comparator`.

Comparators of the common shapes (one ``compare LT/GT`` of a key, or a lexicographic
``or(lt, and(eq, ...))`` chain of them, keys being any function of one operand) become a stable
argsort/``np.lexsort`` on integer keys (a single input sorted by its own values: a plain
``np.sort`` where stability is unobservable); any other comparator runs a bottom-up merge sort
that calls it on whole arrays of candidate pairs (vectorised binary search per pass).
Implementation-defined choices are written in docs/semantics/reduction.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ...attributes import enum_attr, int_attr
from ...dtypes import F16, F32, F64
from ...ir import Block, Operation, Value
from ...registry import QUANTIZED_STORAGE, Kernel, define, inference, kernel, verifier
from ...types import ComplexType, ElementType, FloatType, IntegerType, TensorType, Type
from .. import _constraints as _c
from .._numeric import float_info, total_order_key
from .._regions import Body, call_body, clone_subgraph

if TYPE_CHECKING:  # pragma: no cover
    from ...errors import Diagnostics
    from ...interpreter.evaluator import PrepareContext

define("stablehlo.sort", spec="sort", summary="sorts slices of inputs along dimension",
       traits={QUANTIZED_STORAGE}, inherent="dimension is_stable")


@kernel("stablehlo.sort")
def sort(op: Operation, ctx: PrepareContext) -> Kernel:
    """Spec "sort": sorts 1-d slices along ``dimension`` of all ``inputs`` together.

    Always stable (also when ``is_stable`` is false: a stable sort is one of the allowed
    results). Recognised comparators are turned into integer sort keys (:func:`_analyze`);
    others run :func:`_merge_sort_order`.
    """
    comparator = ctx.region(op.regions[0])
    dimension = int_attr(op, "dimension", -1)
    plan = _analyze(op.regions[0].blocks[0], ctx)
    direct = _direct_sort(plan) if len(op.operands) == 1 else None

    def run(*inputs: Any) -> list[np.ndarray]:
        arrays = [np.asarray(x) for x in inputs]
        d = dimension % arrays[0].ndim
        moved = [np.moveaxis(a, d, -1) for a in arrays]
        shape = moved[0].shape
        n = shape[-1]
        if n <= 1 or arrays[0].size == 0:  # nothing to sort (reshape(-1, 0) is ambiguous)
            return [a.copy() for a in arrays]
        flat = [m.reshape(-1, n) for m in moved]
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
    return enum_attr(op, "comparison_direction", None)


def _compare_type(op: Operation, et: ElementType) -> str | None:
    """The compare op's compare_type, its default filled in from the element type."""
    ct = enum_attr(op, "compare_type", None)
    if ct is not None:
        return ct
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


def _analyze(block: Block, ctx: PrepareContext) -> list[_Key] | None:
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
    if values.dtype in (F16, F32):  # keys of their own width
        v = values + values.dtype.type(0)  # -0.0 + 0.0 = +0.0
        nan = np.isnan(v)
        has_nan = bool(nan.any())
        if has_nan:
            v = np.where(nan, values.dtype.type(np.nan), v)
        info = _F32_INFO if values.dtype == F32 else _F16_INFO
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
    if not isinstance(et, FloatType) or et.dtype not in (F16, F32, F64):
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




# --- the constraints ------------------------------------------------------------------------------


@inference("stablehlo.sort")
def _infer_sort(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """(C1) at least one input; (C4) `-R <= dimension < R`; (C5) `comparator` of type
    `(tensor<E0>, tensor<E0>, ..., tensor<EN-1>, tensor<EN-1>) -> tensor<i1>`; the results have
    the inputs' types (C2)."""
    if not op.regions or not all(isinstance(v.type, TensorType) for v in op.operands):
        return None
    inputs = [v.type for v in op.operands]
    if not inputs:
        diag.error(op, "C1", "requires at least one input")
        return None
    shape = next((t.shape for t in inputs if t.shape is not None), None)
    dim = int_attr(op, "dimension", -1)
    if shape is not None:
        r = len(shape)
        if not -r <= dim < r:
            diag.error(op, "C4", f"dimension attribute value must be in range [-{r}, {r}), but "
                                 f"found {dim}")
            return None
    block = _c.region_block(op, 0)
    if block is None:
        return None
    args = [a.type for a in block.arguments]
    if len(args) != 2 * len(inputs):
        diag.error(op, "C5", f"comparator block should have {2 * len(inputs)} arguments")
        return None
    for i, a in enumerate(args):
        want = TensorType((), inputs[i // 2].element_type)
        if not _c.same_type(a, want):
            diag.error(op, "C5", f"comparator block argument #{i} should be of type "
                                 f"'{_c.type_str(want)}' but got '{_c.type_str(a)}'")
            return None
    rets = _c.region_return_types(op, 0)
    if rets is None:
        return None
    if len(rets) != 1:
        diag.error(op, "C5", f"comparator must return single output but got {len(rets)}")
        return None
    r = rets[0]
    if not (isinstance(r, TensorType) and r.shape in ((), None) and
            getattr(r.element_type, "name", None) == "i1"):
        diag.error(op, "C5", f"comparator must return tensor<i1> but got '{_c.type_str(r)}'")
        return None
    return inputs


@verifier("stablehlo.sort")
def _verify_sort(op: Operation, diag: Diagnostics) -> None:
    """sort (C1-C5): inputs of one shape (C3), results of the inputs' types (C2),
    `-R <= dimension < R`, `comparator` of type `(tensor<E0>, tensor<E0>, ...) -> tensor<i1>`."""
    if not _c.signature(op, diag, [(_c.TENSOR, "*")], [(_c.TENSOR, "*")],
                        optional_attrs={"dimension": "int", "is_stable": "bool"}, regions=1):
        return
    inputs, results = op.operand_types, op.result_types
    if inputs:  # (C1) is the inference's
        if not _c.same_shapes(op, diag, "C3", inputs + results,
                              message="requires the same shape for all operands and results"):
            return
        if len(results) != len(inputs) or \
                any(not _c.compatible(a, b) for a, b in zip(inputs, results)):
            diag.error(op, "C2", f"requires the same type for all operands and results: inputs "
                                 f"{_c.types_str(inputs)}, results {_c.types_str(results)}")
            return
    _infer_sort(op, diag)
