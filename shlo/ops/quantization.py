"""Quantization: uniform_quantize, uniform_dequantize, and quantized semantics for every other op
(spec sections "uniform_quantize", "uniform_dequantize" and "Quantization computations").

A quantized tensor is, at run time, the numpy array of its storage values; its scales and zero
points live in its static :class:`~shlo.types.QuantizedType`. This module has

* :func:`dequantize` / :func:`quantize` / :func:`requantize`: the spec's ``dequantize`` and
  ``quantize`` for per-tensor and per-axis types (also the public API,
  ``shlo.quantization.dequantize(array, type)``);
* the kernels of ``stablehlo.uniform_quantize`` (from float, and requantization from quantized)
  and ``stablehlo.uniform_dequantize``;
* :func:`dequantize_op_quantize`, the generic wrapper the evaluator uses for every op that has
  quantized operands or results and whose own kernel is not QUANTIZED_AWARE: it prepares the
  op's float kernel on the expressed types and runs ``dequantize -> op -> quantize`` (the spec's
  ``dequantize_op_quantize`` and its ``batch_norm``, ``compare``, ``select`` and hybrid
  variants); ops with regions (reduce, sort, ...) instead run their own kernel on storage values
  with the quantized body;
* exact integer accumulation for quantized ``dot_general``/``convolution``.

The TOSA ops (``tosa.rescale``, ``tosa.const``) are in :mod:`shlo.ops.tosa`.

Choices the spec leaves open are written in docs/semantics/quantization.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from ..attributes import int_attr
from ..errors import Diagnostics, ExecutionError
from ..ir import Operation, Value
from ..registry import DOT_LIKE, QUANTIZED_AWARE, Kernel, define, inference, kernel, lookup
from ..registry import names_with, verifier
from ..syntax.directives import ATTRDICT, OPERAND, declarative, types
from ..types import QuantizedType, TensorType, Type, element_type, is_quantized
from . import _constraints as _c
from ._numeric import int_to_float

if TYPE_CHECKING:  # pragma: no cover
    from ..interpreter.evaluator import PrepareContext

__all__ = [
    "dequantize", "quantize", "requantize", "quantized_type", "expressed_tensor_type",
    "storage_tensor_type", "Dequantizer", "Quantizer", "scales_array", "zero_points_array",
    "storage_int64", "dequantize_op_quantize", "shadow_op", "rhs_result_dimension",
    "QUANTIZE_ORDERS", "quantize_order", "set_quantize_order",
]

_I64 = np.dtype(np.int64)
_F64 = np.dtype(np.float64)


# --- types ------------------------------------------------------------------------------------


def quantized_type(t: Type | QuantizedType) -> QuantizedType:
    """The quantized element type of ``t`` (a quantized tensor type or element type)."""
    et = t.element_type if isinstance(t, TensorType) else t
    if not isinstance(et, QuantizedType):
        raise TypeError(f"not a quantized type: {t}")
    return et


def expressed_tensor_type(t: Type) -> Type:
    """``t`` with a quantized element type replaced by its expressed type (others unchanged)."""
    if isinstance(t, TensorType) and isinstance(t.element_type, QuantizedType):
        return TensorType(t.shape, t.element_type.expressed_type, t.encoding)
    return t


def storage_tensor_type(t: Type) -> Type:
    """``t`` with a quantized element type replaced by its storage type (others unchanged)."""
    if isinstance(t, TensorType) and isinstance(t.element_type, QuantizedType):
        return TensorType(t.shape, t.element_type.storage_type, t.encoding)
    return t


# --- parameters as broadcastable arrays ---------------------------------------------------------


def _axis_shape(qt: QuantizedType, rank: int) -> tuple[int, ...]:
    if qt.quantization_dimension is None:
        return ()
    shape = [1] * rank
    shape[qt.quantization_dimension] = len(qt.scales)
    return tuple(shape)


def scales_array(qt: QuantizedType, rank: int) -> np.ndarray:
    """``compute_scales`` of the spec: the scales as an array of the expressed type that
    broadcasts against a rank-``rank`` tensor (0-d for per-tensor quantization)."""
    dt = qt.expressed_type.dtype
    return np.asarray(qt.scales, dtype=_F64).astype(dt).reshape(_axis_shape(qt, rank))


def zero_points_array(qt: QuantizedType, rank: int) -> np.ndarray:
    """``compute_zero_points`` of the spec, as int64, broadcastable like :func:`scales_array`."""
    return np.asarray(qt.zero_points, dtype=_I64).reshape(_axis_shape(qt, rank))


def storage_int64(x: Any) -> np.ndarray:
    """Storage values as int64 (ml_dtypes' int2/int4/uint2/uint4 go through int16)."""
    a = np.asarray(x)
    if a.dtype.kind not in "iub":  # ml_dtypes int2/int4/uint2/uint4
        a = a.astype(np.int16)
    return a.astype(_I64)


class Dequantizer:
    """``dequantize`` of the spec for one quantized type, prepared once (see :func:`dequantize`).

    ``(storage - zero_point)`` is computed exactly in int64, converted to the expressed type
    (rounding once) and multiplied by the scale in the expressed type, as the spec's formula.
    """

    def __init__(self, qt: QuantizedType, rank: int) -> None:
        self.qt = qt
        self.dtype = qt.expressed_type.dtype
        self.scales = scales_array(qt, rank)
        self.zero_points = zero_points_array(qt, rank)
        self.zero = not self.zero_points.any()

    def __call__(self, x: Any) -> np.ndarray:
        d = storage_int64(x)
        if not self.zero:
            d = d - self.zero_points
        return np.asarray(int_to_float(d, self.dtype) * self.scales, dtype=self.dtype)


QUANTIZE_ORDERS = ("round-first", "zero-point-first")
"""The two orders of ``quantize`` the spec has had (docs/semantics/quantization.md):

* ``round-first`` (shlo's default, the spec this project was seeded with):
  ``clamp(round_nearest_even(x / scale) + zero_point)``, the addition and clamp exact;
* ``zero-point-first`` (today's upstream spec since #2234, and upstream's
  stablehlo-legalize-quant-to-math): ``round_nearest_even(clamp(x / scale + zero_point))``, the
  addition and clamp in the expressed type. The two differ where ``x / scale`` is a tie and the
  zero point is odd (``2.5 + 3``: 5 vs 6), and where the expressed type rounds the sum."""

_order = ["round-first"]


def quantize_order() -> str:
    """The order every ``quantize`` uses now (one of :data:`QUANTIZE_ORDERS`)."""
    return _order[0]


def set_quantize_order(order: str) -> str:
    """Choose the order of ``quantize`` for every program run from now on (process-wide, read
    when a value is quantized); returns the previous order."""
    if order not in QUANTIZE_ORDERS:
        raise ValueError(f"unknown quantize order {order!r} (known: {', '.join(QUANTIZE_ORDERS)})")
    previous, _order[0] = _order[0], order
    return previous


class Quantizer:
    """``quantize`` of the spec for one quantized type, prepared once (see :func:`quantize`).

    ``round_nearest_even(x / scale)`` in the expressed type, then ``+ zero_point`` and the clamp
    to ``[storage_min, storage_max]`` exactly (no wrap-around); with
    ``set_quantize_order("zero-point-first")`` the zero point is added and the clamp applied
    before rounding (:data:`QUANTIZE_ORDERS`). NaN becomes storage value 0 (clamped into the
    storage range), as the upstream lowering computes; +-inf and values out of range saturate.
    """

    def __init__(self, qt: QuantizedType, rank: int) -> None:
        self.qt = qt
        self.dtype = qt.expressed_type.dtype
        self.scales = scales_array(qt, rank)
        self.zero_points = zero_points_array(qt, rank).astype(_F64)
        self.min, self.max = float(qt.min), float(qt.max)
        self.nan = float(min(max(0, qt.min), qt.max))
        self.storage = qt.storage_type.dtype

    def __call__(self, x: Any) -> np.ndarray:
        x = np.asarray(x)
        if x.dtype != self.dtype:
            x = x.astype(self.dtype)
        q = np.asarray(x / self.scales, dtype=self.dtype)
        if _order[0] == "zero-point-first":  # the sum in the expressed type, as upstream
            q = np.asarray(q + self.zero_points.astype(self.dtype), dtype=self.dtype)
            return self._round_clamped(q.astype(_F64))
        return self.from_real_ratio(q.astype(_F64))

    def from_real_ratio(self, q: np.ndarray, finite: bool = False) -> np.ndarray:
        """Storage values for ``q = x / scale`` given in float64 (not yet rounded); ``finite``:
        ``q`` holds no NaN (an integer accumulator times a scale ratio)."""
        if _order[0] == "zero-point-first":
            return self._round_clamped(q + self.zero_points, finite)
        r = np.rint(q)
        r += self.zero_points
        return self._clamped(r, finite)

    def _round_clamped(self, t: np.ndarray, finite: bool = False) -> np.ndarray:
        """``round_nearest_even(clamp(t))`` for ``t = x / scale + zero_point``."""
        return self._clamped(np.rint(np.clip(t, self.min, self.max)), finite)

    def _clamped(self, r: np.ndarray, finite: bool = False) -> np.ndarray:
        """Integral float64 values ``r`` (NaN aside) clamped to the storage range, as storage."""
        r = np.clip(r, self.min, self.max, out=r if type(r) is np.ndarray else None)
        if not finite:
            r = np.where(np.isnan(r), self.nan, r)
        if self.storage.kind in "iu":
            return r.astype(self.storage)  # (integral and within the range: exact)
        return r.astype(_I64).astype(np.int16).astype(self.storage)


def dequantize(x: Any, qtype: Type | QuantizedType) -> np.ndarray:
    """Storage values ``x`` of quantized type ``qtype`` (a quantized tensor or element type) as
    values of its expressed type: ``(x - zero_point) * scale`` (spec "dequantize")."""
    qt = quantized_type(qtype)
    a = np.asarray(x)
    return Dequantizer(qt, a.ndim)(a)


def quantize(x: Any, qtype: Type | QuantizedType) -> np.ndarray:
    """Float values ``x`` as storage values of quantized type ``qtype`` (spec "quantize")."""
    qt = quantized_type(qtype)
    a = np.asarray(x)
    return Quantizer(qt, a.ndim)(a)


def requantize(x: Any, from_type: Type | QuantizedType, to_type: Type | QuantizedType
               ) -> np.ndarray:
    """Storage values of ``from_type`` re-expressed in ``to_type``:
    ``quantize(dequantize(x), to_type)`` (spec "uniform_quantize" on a quantized operand)."""
    return quantize(dequantize(x, from_type), to_type)


# --- uniform_quantize, uniform_dequantize (spec "uniform_quantize", "uniform_dequantize") ----
# Upstream's operand/result type constraints come first (valid quantized types: signless or
# unsigned storage, zero points in range, per-axis dimensions that exist with one scale per
# slice), then the op's own (C1-C2).


def _rank(t: Type) -> int:
    return len(t.shape) if isinstance(t, TensorType) and t.shape is not None else 0


_Q_QA = _c.TC(_c.Q | _c.QA)
_FP_Q_QA = _c.TC(_c.F | _c.Q | _c.QA)

define("stablehlo.uniform_quantize", spec="uniform_quantize", traits={QUANTIZED_AWARE},
       inherent="", summary="quantize a float tensor, or requantize a quantized one",
       syntax=declarative(OPERAND, ATTRDICT, types("same")))
define("stablehlo.uniform_dequantize", spec="uniform_dequantize", traits={QUANTIZED_AWARE},
       inherent="", summary="the float values of a quantized tensor",
       syntax=declarative(OPERAND, ATTRDICT, types("same")))


@kernel("stablehlo.uniform_quantize")
def uniform_quantize(op: Operation, ctx: PrepareContext) -> Kernel:
    """``quantize(operand, type(result))`` for a float operand, ``quantize(dequantize(operand),
    type(result))`` for a quantized one (requantization)."""
    in_t, out_t = op.operands[0].type, op.results[0].type
    rank = _rank(out_t)
    q = Quantizer(quantized_type(out_t), rank)
    if is_quantized(in_t):
        if quantized_type(in_t) == quantized_type(out_t):
            return lambda x: (np.asarray(x),)
        d = Dequantizer(quantized_type(in_t), rank)
        return lambda x: (q(d(x)),)
    return lambda x: (q(x),)


@verifier("stablehlo.uniform_quantize")
def _verify_uniform_quantize(op: Operation, diag: Diagnostics) -> None:
    """(C1) `shape(operand) = shape(result)`; (C2) `expressed_type(result) = is_float(operand) ?
    element_type(operand) : expressed_type(operand)`."""
    if not _c.signature(op, diag, [_FP_Q_QA], [_Q_QA]):
        return
    a, r = op.operands[0].type, op.results[0].type
    if not _c.compatible_shapes(a.shape, r.shape):
        diag.error(op, "C1", "requires the same shape for all operands and results")
        return
    ae = a.element_type
    expressed = ae.expressed_type if isinstance(ae, QuantizedType) else ae
    if expressed != r.element_type.expressed_type:
        diag.error(op, "C2", f"Expressed type of result expected to be "
                             f"'{_c.type_str(expressed)}', but got "
                             f"'{_c.type_str(r.element_type.expressed_type)}'")


@kernel("stablehlo.uniform_dequantize")
def uniform_dequantize(op: Operation, ctx: PrepareContext) -> Kernel:
    """``result = dequantize(operand)``."""
    d = Dequantizer(quantized_type(op.operands[0].type), _rank(op.operands[0].type))
    return lambda x: (d(x),)


@inference("stablehlo.uniform_dequantize")
def _infer_uniform_dequantize(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """(C1) `shape(result) = shape(operand)`; (C2) `element_type(result) =
    expressed_type(operand)`."""
    a = op.operands[0].type
    if not (isinstance(a, TensorType) and isinstance(a.element_type, QuantizedType)):
        return None
    return [TensorType(a.shape, a.element_type.expressed_type)]


@verifier("stablehlo.uniform_dequantize")
def _verify_uniform_dequantize(op: Operation, diag: Diagnostics) -> None:
    """(C1) `shape(operand) = shape(result)`; (C2) `element_type(result) =
    expressed_type(operand)`."""
    if not _c.signature(op, diag, [_Q_QA], [_c.FP_TENSOR]):
        return
    inferred = _infer_uniform_dequantize(op, diag)
    if inferred is None:
        return
    want, r = inferred[0], op.results[0].type
    if not _c.compatible_shapes(want.shape, r.shape):
        diag.error(op, "C1", "requires the same shape for all operands and results")
        return
    if r.element_type != want.element_type:
        diag.error(op, "C2", f"result element type ({r.element_type}) must be the operand's "
                             f"expressed type ({want.element_type})")


# --- dequantize_op_quantize ---------------------------------------------------------------------


def shadow_op(op: Operation, type_map: Callable[[Type], Type]) -> Operation:
    """A copy of ``op`` (no regions) whose operand and result types went through ``type_map``:
    what a kernel is prepared on to compute the op on other types than the program's."""
    operands = [Value(type_map(v.type), None, i, v.name) for i, v in enumerate(op.operands)]
    return Operation(op.name, operands, [type_map(v.type) for v in op.results],
                     op.properties, op.attributes, location=op.location)


class _PlainBody:
    """A compiled region without its ``single_op`` fast-path name (a quantized ``add`` body is
    not numpy's ``add`` on storage values)."""

    single_op = None

    def __init__(self, body: Any) -> None:
        self._body = body

    def __call__(self, *args: Any) -> Any:
        return self._body(*args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._body, name)


class _PlainBodies:
    """A PrepareContext whose compiled regions hide their ``single_op`` fast path."""

    def __init__(self, ctx: PrepareContext) -> None:
        self._ctx = ctx

    def region(self, region: Any) -> _PlainBody:
        return _PlainBody(self._ctx.region(region))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ctx, name)


def dequantize_op_quantize(op: Operation, ctx: PrepareContext) -> Kernel:
    """Spec "dequantize_op_quantize" and its variants, for any op without a quantized-aware
    kernel.

    * Ops with regions (reduce, reduce_window, select_and_scatter, sort, map, all_reduce,
      reduce_scatter): their own kernel on storage values; the quantized ops of the body carry
      the quantized semantics (the spec applies ``body`` to quantized elements). Single-op fast
      paths are disabled, since ``add`` of storage values is not quantized ``add``.
    * ``dot_general``/``dot``/``convolution``/``dynamic_conv`` with quantized ``lhs``, ``rhs``
      and result: :func:`_integer_dot_like` (exact integer accumulation).
    * Everything else: quantized operands are dequantized, the op's own kernel runs on the
      expressed types (prepared once on a shadow op), and quantized results are quantized.
      This one rule is ``dequantize_op_quantize`` (one result),
      ``dequantize_batch_norm_grad_or_training_quantize`` (three results),
      ``dequantize_compare`` (an ``i1`` result is not quantized), ``dequantize_select_quantize``
      (the ``i1`` predicate is not dequantized) and ``hybrid_dequantize_then_op`` (float
      ``lhs`` and result).
    """
    d = lookup(op.name)
    if d is None or d.prepare is None:
        def unsupported(*args: Any) -> Sequence[Any]:
            raise ExecutionError(f"'{op.name}' op is not supported by the interpreter",
                                 op.location)
        return unsupported
    if op.regions:
        return d.prepare(op, _PlainBodies(ctx))  # type: ignore[arg-type]
    if op.name in names_with(DOT_LIKE) and all(is_quantized(t) for t in
                                    (op.operands[0].type, op.operands[1].type,
                                     op.results[0].type)):
        return _integer_dot_like(op, ctx, d.prepare)
    float_run = d.prepare(shadow_op(op, expressed_tensor_type), ctx)
    deq = [Dequantizer(quantized_type(v.type), _rank(v.type)) if is_quantized(v.type) else None
           for v in op.operands]
    qua = [Quantizer(quantized_type(v.type), _rank(v.type)) if is_quantized(v.type) else None
           for v in op.results]

    def run(*args: Any) -> list[Any]:
        fargs = [a if f is None else f(a) for f, a in zip(deq, args)]
        res = float_run(*fargs)
        return [r if f is None else f(r) for f, r in zip(qua, res)]

    return run


# --- quantized dot_general / convolution --------------------------------------------------------


def rhs_result_dimension(op: Operation, rhs_dimension: int) -> int | None:
    """The result dimension that dimension ``rhs_dimension`` of ``rhs`` becomes in a dot-like op
    (None when it is contracted)."""
    if op.name in ("stablehlo.convolution", "stablehlo.dynamic_conv"):
        from .linalg.convolution import conv_dimension_numbers  # (a dot-like op's module)

        dn = conv_dimension_numbers(op)
        if rhs_dimension == dn.kernel_output_feature_dimension:
            return dn.output_feature_dimension
        return None
    lhs_rank, rhs_rank = _rank(op.operands[0].type), _rank(op.operands[1].type)
    if op.name == "stablehlo.dot":
        lb, rb, lc, rc = (), (), (lhs_rank - 1,), (0,)
    else:
        from .linalg.dot import dot_dimension_numbers

        lb, rb, lc, rc = dot_dimension_numbers(op)
    if rhs_dimension in rc:
        return None
    if rhs_dimension in rb:
        return rb.index(rhs_dimension)
    lhs_free = [d for d in range(lhs_rank) if d not in lb and d not in lc]
    rhs_free = [d for d in range(rhs_rank) if d not in rb and d not in rc]
    return len(lb) + len(lhs_free) + rhs_free.index(rhs_dimension)


def _integer_dot_like(op: Operation, ctx: PrepareContext,
                      prepare: Callable[..., Kernel]) -> Kernel:
    """Quantized dot_general/convolution, computed exactly.

    ``dequantize_op_quantize`` of a dot product is ``round(sum((l - zl) sl (r - zr) sr) / s_res)
    + z_res``. The scales factor out of the sum (``sl`` is one number, ``sr`` is constant along
    the contracted dimensions: (C15)-(C16), (C29)), so the sum is accumulated exactly over
    ``l - zl`` and ``r - zr`` (padding with 0 is padding with the dequantized 0; float64 BLAS
    when every partial sum is an integer below 2**53, int64 otherwise), and is
    scaled once in float64: ``round(acc * (sl * sr / s_res)) + z_res``, clamped to the storage
    range. This is the spec's formula computed without intermediate rounding, which
    ``precision_config`` leaves to the implementation; it is also the integer accumulation an
    `i32` storage result (scale ``sl * sr``) is designed for.
    """
    lhs_t, rhs_t, res_t = op.operands[0].type, op.operands[1].type, op.results[0].type
    lq, rq, oq = quantized_type(lhs_t), quantized_type(rhs_t), quantized_type(res_t)
    acc_et, acc_dtype = _accumulator(lq, rq, rhs_t)

    def to_acc(t: Type) -> Type:
        if isinstance(t, TensorType) and isinstance(t.element_type, QuantizedType):
            return TensorType(t.shape, acc_et, t.encoding)
        return t

    int_run = prepare(shadow_op(op, to_acc), ctx)
    lhs_rank, rhs_rank, res_rank = _rank(lhs_t), _rank(rhs_t), _rank(res_t)
    lzp = zero_points_array(lq, lhs_rank)
    rzp = zero_points_array(rq, rhs_rank)
    # sl * sr as float64 in the result's shape (per-axis rhs scales move to their result dim)
    lscale = np.float64(np.asarray(lq.scales, _F64).astype(lq.expressed_type.dtype).reshape(-1)[0])
    rscales = np.asarray(rq.scales, _F64).astype(rq.expressed_type.dtype).astype(_F64)
    if rq.quantization_dimension is None:
        prod = lscale * rscales.reshape(())
    else:
        dim = rhs_result_dimension(op, rq.quantization_dimension)
        shape = [1] * res_rank
        if dim is not None:
            shape[dim] = rscales.size
            prod = lscale * rscales.reshape(shape)
        else:  # a contracted per-axis dimension: outside the spec, fall back to float
            prod = None
    if prod is None:
        return _float_dot_like(op, ctx, prepare)
    oscales = scales_array(oq, res_rank).astype(_F64)
    multiplier = prod / oscales
    exact_one = bool(np.all(multiplier == 1.0))
    out = Quantizer(oq, res_rank)
    rest = len(op.operands) - 2
    folded = _folded_dot(op, ctx, prepare, lq, rq)

    def run(lhs: Any, rhs: Any, *others: Any) -> list[np.ndarray]:
        if folded is not None:
            acc = folded(lhs, rhs).astype(_F64, copy=False)
        else:
            a = (storage_int64(lhs) - lzp).astype(acc_dtype)
            b = (storage_int64(rhs) - rzp).astype(acc_dtype)
            acc = np.asarray(int_run(a, b, *others[:rest])[0]).astype(_F64)
        if not exact_one:
            acc = acc * multiplier
        return [out.from_real_ratio(acc, finite=True)]  # (integers times a finite ratio)

    return run


def _folded_dot(op: Operation, ctx: PrepareContext, prepare: Callable[..., Kernel],
                lq: QuantizedType, rq: QuantizedType) -> Callable[[Any, Any], np.ndarray] | None:
    """``sum((l - zl) * r)`` of a dot_general as ``l @ r - zl * sum(r)``: the product of the
    storage values themselves (an integer dot, exact; f32 BLAS when its sums provably stay
    at most 2**24: i8 x i8 up to K = 1024, longer ones by the operands' actual magnitudes), the
    lhs zero point folded in through the sums of rhs over the contracted dimensions, in
    int64. The same integers as subtracting zl from every lhs element first. A convolution
    folds through :func:`_folded_conv`. None (the shifted path) for per-axis lhs zero points
    or nonzero rhs zero points (which dot_general forbids, (C15))."""
    if lq.quantization_dimension is not None or any(z != 0 for z in rq.zero_points) or \
            max(lq.storage_type.width, rq.storage_type.width) > 16 or len(op.operands) != 2:
        return None
    if op.name == "stablehlo.convolution":
        return _folded_conv(op, ctx, prepare, int(lq.zero_points[0]) if lq.zero_points else 0)
    if op.name not in ("stablehlo.dot_general", "stablehlo.dot"):
        return None
    lhs_t, rhs_t = op.operands[0].type, op.operands[1].type
    if not (isinstance(rhs_t, TensorType) and rhs_t.is_static):
        return None
    lhs_rank, rhs_rank = _rank(lhs_t), _rank(rhs_t)
    if op.name == "stablehlo.dot":
        lb, rb, lc, rc = (), (), (lhs_rank - 1,), (0,)
    else:
        from .linalg.dot import dot_dimension_numbers

        lb, rb, lc, rc = dot_dimension_numbers(op)

    exact = _accumulator(lq, rq, rhs_t)[1]  # (float64 when every sum stays below 2**53)
    product = _product(op, _storage_type, prepare, ctx, exact)
    zl = int(lq.zero_points[0]) if lq.zero_points else 0
    kept = [d for d in range(rhs_rank) if d not in rc]
    rhs_free = [d for d in kept if d not in rb]
    perm = [kept.index(d) for d in rb] + [kept.index(d) for d in rhs_free]
    n_lhs_free = lhs_rank - len(lb) - len(lc)
    shape = rhs_t.shape  # type: ignore[union-attr]
    to_result = tuple(shape[d] for d in rb) + (1,) * n_lhs_free + \
        tuple(shape[d] for d in rhs_free)

    def run(lhs: Any, rhs: Any) -> np.ndarray:
        acc = np.asarray(product(lhs, rhs)[0], exact)
        if zl == 0:
            return acc
        sums = np.sum(np.asarray(rhs, np.int64), axis=tuple(rc))
        return acc - np.int64(zl) * np.transpose(sums, perm).reshape(to_result)

    return run


def _folded_conv(op: Operation, ctx: PrepareContext, prepare: Callable[..., Kernel],
                 zl: int) -> Callable[[Any, Any], np.ndarray] | None:
    """``conv(pad(l - zl), r)`` as ``conv(l, r) - zl * conv(ones, r)``: the padding (and
    lhs dilation's holes) hold 0 in the shifted operand, so the correction is the convolution
    of an all-ones lhs under the same window, which does not depend on the batch: computed for
    a batch of one and broadcast. Both products are of storage values, exact in int64. None
    with ``batch_group_count`` > 1 (the batch is split into groups) or dynamic types."""
    from .linalg.convolution import conv_dimension_numbers

    lhs_t = op.operands[0].type
    if int_attr(op, "batch_group_count", 1) != 1 or not isinstance(lhs_t, TensorType) or \
            not lhs_t.is_static or not isinstance(lhs_t.element_type, QuantizedType):
        return None
    rhs_t = op.operands[1].type
    exact = _accumulator(lhs_t.element_type, quantized_type(rhs_t), rhs_t)[1]
    product = _product(op, _storage_type, prepare, ctx, exact)
    batch_dim = conv_dimension_numbers(op).input_batch_dimension
    shape = list(lhs_t.shape)  # type: ignore[arg-type]
    shape[batch_dim] = 1
    ones = np.ones(shape, lhs_t.element_type.storage_type.dtype)

    def run(lhs: Any, rhs: Any) -> np.ndarray:
        acc = np.asarray(product(lhs, rhs)[0], exact)
        if zl == 0:
            return acc
        return acc - np.int64(zl) * np.asarray(product(ones, rhs)[0], exact)

    return run


def _storage_type(t: Type) -> Type:
    """A quantized tensor type's storage tensor type (others unchanged)."""
    if isinstance(t, TensorType) and isinstance(t.element_type, QuantizedType):
        return TensorType(t.shape, t.element_type.storage_type, t.encoding)
    return t


def _product(op: Operation, storage: Callable[[Type], Type], prepare: Callable[..., Kernel],
             ctx: PrepareContext, dtype: np.dtype) -> Kernel:
    """The kernel of ``op`` on its storage types with an i64 result (exact: products of two
    <= 16-bit integers summed over fewer than 2**32 terms stay below 2**63), or an f64 one
    (exact when every partial sum stays below 2**53: :func:`_accumulator` decides; it saves
    the integer round trip of a float BLAS product)."""
    res = op.results[0].type
    et = element_type("f64" if dtype == _F64 else "i64")
    wide = TensorType(res.shape, et) if isinstance(res, TensorType) else res
    operands = [Value(storage(v.type), None, i, v.name) for i, v in enumerate(op.operands)]
    shadow = Operation(op.name, operands, [wide], op.properties, op.attributes,
                       location=op.location)
    return prepare(shadow, ctx)


def _accumulator(lq: QuantizedType, rq: QuantizedType, rhs_t: Type) -> tuple[Any, np.dtype]:
    """The exact accumulation type: float64 when every partial sum of products of
    ``l - zl`` and ``r - zr`` is an integer below 2**53 (BLAS then sums exactly), else int64."""
    if isinstance(rhs_t, TensorType) and rhs_t.is_static:
        bound = 2.0 ** (lq.storage_type.width + 1) * 2.0 ** (rq.storage_type.width + 1) * \
            max(rhs_t.num_elements, 1)
        if bound < 2.0 ** 53:
            return element_type("f64"), _F64
    return element_type("i64"), _I64


def _float_dot_like(op: Operation, ctx: PrepareContext,
                    prepare: Callable[..., Kernel]) -> Kernel:
    float_run = prepare(shadow_op(op, expressed_tensor_type), ctx)
    deq = [Dequantizer(quantized_type(v.type), _rank(v.type)) if is_quantized(v.type) else None
           for v in op.operands]
    q = Quantizer(quantized_type(op.results[0].type), _rank(op.results[0].type))

    def run(*args: Any) -> list[Any]:
        fargs = [a if f is None else f(a) for f, a in zip(deq, args)]
        return [q(float_run(*fargs)[0])]

    return run
