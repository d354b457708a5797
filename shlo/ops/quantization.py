"""Quantization: uniform_quantize, uniform_dequantize, and quantized semantics for every other op
(spec sections "uniform_quantize", "uniform_dequantize" and "Quantization computations").

A quantized tensor is, at run time, the numpy array of its storage values; its scales and zero
points live in its static :class:`~shlo.types.QuantizedType`. This module has

* :func:`dequantize` / :func:`quantize` / :func:`requantize`: the spec's ``dequantize`` and
  ``quantize`` for per-tensor and per-axis types (also the public API,
  ``shlo.quantization.dequantize(array, type)``);
* the kernels of ``stablehlo.uniform_quantize`` (from float, and requantization from quantized)
  and ``stablehlo.uniform_dequantize``;
* ``__dequantize_op_quantize__``, the generic wrapper the evaluator uses for every op that has
  quantized operands or results and whose own kernel is not quantized-aware: it prepares the
  op's float kernel on the expressed types and runs ``dequantize -> op -> quantize`` (the spec's
  ``dequantize_op_quantize`` and its ``batch_norm``, ``compare``, ``select`` and hybrid
  variants); ops with regions (reduce, sort, ...) instead run their own kernel on storage values
  with the quantized body;
* exact integer accumulation for quantized ``dot_general``/``convolution``;
* the ``tosa.rescale`` and ``tosa.const`` ops (kernel and verifier).

Choices the spec leaves open are written in docs/semantics/quantization.md.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from ..attributes import BoolAttr, DenseElementsAttr, EnumAttr, IntegerAttr, int_or_none, ints
from ..ir import Operation, Value
from ..types import (IntegerType, QuantizedType, TensorType, Type, element_type,
                     is_quantized)
from ._numeric import int_to_float
from ..registry import DOT_LIKE, kernel, lookup, names_with, verifier

__all__ = [
    "dequantize", "quantize", "requantize", "quantized_type", "expressed_tensor_type",
    "storage_tensor_type", "Dequantizer", "Quantizer", "scales_array", "zero_points_array",
    "multiplier_and_shift", "apply_rescale",
]

Run = Callable[..., Sequence[Any]]
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


def _storage_to_int64(x: Any) -> np.ndarray:
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
        d = _storage_to_int64(x)
        if not self.zero:
            d = d - self.zero_points
        return np.asarray(int_to_float(d, self.dtype) * self.scales, dtype=self.dtype)


class Quantizer:
    """``quantize`` of the spec for one quantized type, prepared once (see :func:`quantize`).

    ``round_nearest_even(x / scale)`` in the expressed type, then ``+ zero_point`` and the clamp
    to ``[storage_min, storage_max]`` exactly (no wrap-around). NaN becomes storage value 0
    (clamped into the storage range), as the upstream lowering computes; +-inf and values out of
    range saturate.
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
        q = np.asarray(x / self.scales, dtype=self.dtype).astype(_F64)
        return self.from_real_ratio(q)

    def from_real_ratio(self, q: np.ndarray) -> np.ndarray:
        """Storage values for ``q = x / scale`` given in float64 (not yet rounded)."""
        r = np.rint(q) + self.zero_points
        r = np.clip(r, self.min, self.max)
        r = np.where(np.isnan(r), self.nan, r)
        out = r.astype(_I64)
        if self.storage.kind not in "iu":
            out = out.astype(np.int16)
        return out.astype(self.storage)


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


# --- uniform_quantize / uniform_dequantize ------------------------------------------------------


def _rank(t: Type) -> int:
    return len(t.shape) if isinstance(t, TensorType) and t.shape is not None else 0


@kernel("stablehlo.uniform_quantize", quantized_aware=True)
def uniform_quantize(op: Operation, ctx: Any) -> Run:
    """Spec "uniform_quantize": ``quantize(operand, type(result))`` for a float operand,
    ``quantize(dequantize(operand), type(result))`` for a quantized one (requantization)."""
    in_t, out_t = op.operands[0].type, op.results[0].type
    rank = _rank(out_t)
    q = Quantizer(quantized_type(out_t), rank)
    if is_quantized(in_t):
        if quantized_type(in_t) == quantized_type(out_t):
            return lambda x: (np.asarray(x),)
        d = Dequantizer(quantized_type(in_t), rank)
        return lambda x: (q(d(x)),)
    return lambda x: (q(x),)


@kernel("stablehlo.uniform_dequantize", quantized_aware=True)
def uniform_dequantize(op: Operation, ctx: Any) -> Run:
    """Spec "uniform_dequantize": ``result = dequantize(operand)``."""
    d = Dequantizer(quantized_type(op.operands[0].type), _rank(op.operands[0].type))
    return lambda x: (d(x),)


def _shape_of(t: Type) -> tuple | None:
    return t.shape if isinstance(t, TensorType) else None


def _compatible(a: tuple | None, b: tuple | None) -> bool:
    if a is None or b is None:
        return True
    return len(a) == len(b) and all(x is None or y is None or x == y for x, y in zip(a, b))


def _verify_uniform_quantize(op: Operation, diag: Any) -> None:
    """(C1) `shape(operand) = shape(result)`; (C2) `expressed_type(result) = is_float(operand) ?
    element_type(operand) : expressed_type(operand)`. Run by :func:`_verify_quantization_types`
    (below) once the operand and result types are valid."""
    a, r = op.operands[0].type, op.results[0].type
    if not _compatible(a.shape, r.shape):
        diag.error(op, "C1", "requires the same shape for all operands and results")
        return
    ae = a.element_type
    expressed = ae.expressed_type if isinstance(ae, QuantizedType) else ae
    if expressed != r.element_type.expressed_type:
        diag.error(op, "C2", f"expressed type of the result ({r.element_type.expressed_type}) "
                             f"must be the operand's ({expressed})")


def _verify_uniform_dequantize(op: Operation, diag: Any) -> None:
    """(C1) `shape(operand) = shape(result)`; (C2) `element_type(result) =
    expressed_type(operand)`. Run by :func:`_verify_quantization_types` (below)."""
    a, r = op.operands[0].type, op.results[0].type
    if not _compatible(a.shape, r.shape):
        diag.error(op, "C1", "requires the same shape for all operands and results")
        return
    if r.element_type != a.element_type.expressed_type:
        diag.error(op, "C2", f"result element type ({r.element_type}) must be the operand's "
                             f"expressed type ({a.element_type.expressed_type})")


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

    def __init__(self, ctx: Any) -> None:
        self._ctx = ctx

    def region(self, region: Any) -> _PlainBody:
        return _PlainBody(self._ctx.region(region))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ctx, name)


def dequantize_op_quantize(op: Operation, ctx: Any) -> Run:
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
        from ..errors import ExecutionError

        def unsupported(*args: Any) -> Sequence[Any]:
            raise ExecutionError(f"'{op.name}' op is not supported by the interpreter",
                                 op.location)
        return unsupported
    if op.regions:
        return d.prepare(op, _PlainBodies(ctx))
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
        from .linalg import _conv_dimension_numbers

        dn = _conv_dimension_numbers(op)
        if rhs_dimension == dn.kernel_output_feature_dimension:
            return dn.output_feature_dimension
        return None
    lhs_rank, rhs_rank = _rank(op.operands[0].type), _rank(op.operands[1].type)
    if op.name == "stablehlo.dot":
        lb, rb, lc, rc = (), (), (lhs_rank - 1,), (0,)
    else:
        lb, rb, lc, rc = dot_dimensions(op)
    if rhs_dimension in rc:
        return None
    if rhs_dimension in rb:
        return rb.index(rhs_dimension)
    lhs_free = [d for d in range(lhs_rank) if d not in lb and d not in lc]
    rhs_free = [d for d in range(rhs_rank) if d not in rb and d not in rc]
    return len(lb) + len(lhs_free) + rhs_free.index(rhs_dimension)


def dot_dimensions(op: Operation) -> tuple[tuple[int, ...], ...]:
    """(lhs_batching, rhs_batching, lhs_contracting, rhs_contracting) of a dot_general."""
    dn = op.attr("dot_dimension_numbers")

    def get(name: str) -> tuple[int, ...]:
        v = dn.get(name) if dn is not None and hasattr(dn, "get") else None
        if v is None:
            v = op.attr(name)
        return tuple(ints(v, ()) or ())

    return (get("lhs_batching_dimensions"), get("rhs_batching_dimensions"),
            get("lhs_contracting_dimensions"), get("rhs_contracting_dimensions"))


def _integer_dot_like(op: Operation, ctx: Any, prepare: Callable[..., Run]) -> Run:
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

    def run(lhs: Any, rhs: Any, *others: Any) -> list[np.ndarray]:
        a = (_storage_to_int64(lhs) - lzp).astype(acc_dtype)
        b = (_storage_to_int64(rhs) - rzp).astype(acc_dtype)
        acc = np.asarray(int_run(a, b, *others[:rest])[0]).astype(_F64)
        return [out.from_real_ratio(acc if exact_one else acc * multiplier)]

    return run


def _accumulator(lq: QuantizedType, rq: QuantizedType, rhs_t: Type) -> tuple[Any, np.dtype]:
    """The exact accumulation type: float64 when every partial sum of products of
    ``l - zl`` and ``r - zr`` is an integer below 2**53 (BLAS then sums exactly), else int64."""
    if isinstance(rhs_t, TensorType) and rhs_t.is_static:
        bound = 2.0 ** (lq.storage_type.width + 1) * 2.0 ** (rq.storage_type.width + 1) * \
            max(rhs_t.num_elements, 1)
        if bound < 2.0 ** 53:
            return element_type("f64"), _F64
    return element_type("i64"), _I64


def _float_dot_like(op: Operation, ctx: Any, prepare: Callable[..., Run]) -> Run:
    float_run = prepare(shadow_op(op, expressed_tensor_type), ctx)
    deq = [Dequantizer(quantized_type(v.type), _rank(v.type)) if is_quantized(v.type) else None
           for v in op.operands]
    q = Quantizer(quantized_type(op.results[0].type), _rank(op.results[0].type))

    def run(*args: Any) -> list[Any]:
        fargs = [a if f is None else f(a) for f, a in zip(deq, args)]
        return [q(float_run(*fargs)[0])]

    return run


# --- tosa.rescale -------------------------------------------------------------------------------


def multiplier_and_shift(scale: float, scale_width: int = 32) -> tuple[int, int]:
    """TOSA's ``computeMultiplierAndShift``: ``scale ~= multiplier * 2**-shift`` with a
    ``scale_width``-bit multiplier (32: ``multiplier`` in [2**30, 2**31); 16: [2**14, 2**15))
    and ``shift`` in [2, 62] (large shifts move into the multiplier)."""
    if scale <= 0:
        return 0, 2
    mantissa, exponent = math.frexp(scale)
    bits = scale_width - 1
    m = round(mantissa * (1 << bits))
    if m == 1 << bits:
        m //= 2
        exponent += 1
    shift = bits - exponent
    while shift > 62:  # very small scales: drop multiplier bits
        m >>= 1
        shift -= 1
    while shift < 2:  # very large scales cannot be represented: saturate
        m = min(m << 1, (1 << bits) - 1)
        shift += 1
    return int(m), int(shift)


def apply_rescale(value: np.ndarray, multiplier: np.ndarray, shift: np.ndarray,
                  rounding_mode: str = "SINGLE_ROUND", scale32: bool = True) -> np.ndarray:
    """TOSA ``apply_scale_32``/``apply_scale_16`` on int64 values (vectorized):
    ``(value * multiplier + round) >> shift`` with ``round = 1 << (shift - 1)``, and for
    DOUBLE_ROUND with ``shift > 31`` an extra ``+-(1 << 30)``."""
    value = value.astype(_I64)
    shift = shift.astype(_I64)
    rnd = np.left_shift(np.int64(1), shift - 1)
    if scale32 and rounding_mode == "DOUBLE_ROUND":
        big = shift > 31
        rnd = rnd + np.where(big & (value >= 0), np.int64(1 << 30), np.int64(0)) \
            - np.where(big & (value < 0), np.int64(1 << 30), np.int64(0))
    with np.errstate(over="ignore"):
        r = value * multiplier.astype(_I64) + rnd
    return np.right_shift(r, shift)


def rescale_int_attr(op: Operation, name: str, default: int = 0) -> int:
    """An integer attribute of the older ``tosa.rescale`` form (``input_zp = -1 : i32``)."""
    v = op.attr(name)
    if v is None:
        return default
    if isinstance(v, DenseElementsAttr):
        return int(v.array.reshape(-1)[0])
    return int(int_or_none(v))


def rescale_flag(op: Operation, name: str, default: bool = False) -> bool:
    """A boolean attribute of ``tosa.rescale`` (``scale32``, ``per_channel``, ...)."""
    v = op.attr(name)
    if v is None:
        return default
    if isinstance(v, BoolAttr):
        return bool(v.value)
    if isinstance(v, IntegerAttr):
        return bool(v.value)
    return bool(v)


def rescale_rounding_mode(op: Operation) -> str:
    """SINGLE_ROUND, DOUBLE_ROUND or INEXACT_ROUND (older spelling: ``double_round`` bool)."""
    v = op.attr("rounding_mode")
    if v is not None:
        return v.value if isinstance(v, EnumAttr) else str(getattr(v, "value", v))
    return "DOUBLE_ROUND" if rescale_flag(op, "double_round") else "SINGLE_ROUND"


def integer_storage(t: Type) -> IntegerType | None:
    """The integer type of ``t``'s values (the storage type of a quantized type), or None."""
    et = t.element_type if isinstance(t, TensorType) else t
    if isinstance(et, QuantizedType):
        return et.storage_type
    return et if isinstance(et, IntegerType) and not et.is_bool else None


@kernel("tosa.const", quantized_aware=True)
def tosa_const(op: Operation, ctx: Any) -> Run:
    """TOSA ``const``: ``output = values`` (older spelling: ``value``)."""
    attr = op.attr("values") or op.attr("value")
    arr = np.asarray(attr.array)
    arr.flags.writeable = False
    return lambda: (arr,)


@kernel("tosa.rescale", quantized_aware=True)
def tosa_rescale(op: Operation, ctx: Any) -> Run:
    """TOSA ``rescale`` (TOSA 1.0 spec, "RESCALE"), on storage values::

        value = input - input_zp                      (int64)
        c = per_channel ? index[rank - 1] : 0
        result = apply_scale(value, multiplier[c], shift[c], rounding_mode)
        output = clamp(result + output_zp, min(out_t), max(out_t))

    Operands ``input, multiplier, shift, input_zp, output_zp`` (TOSA 1.0), or only ``input``
    with attributes ``multiplier``, ``shift``, ``input_zp``, ``output_zp``, ``double_round``
    (older form). ``input_unsigned``/``output_unsigned`` read signless storage as unsigned.
    INEXACT_ROUND rounds as SINGLE_ROUND (TOSA lets the implementation choose).
    """
    in_t, out_t = op.operands[0].type, op.results[0].type
    out_int = integer_storage(out_t)
    if out_int is None:
        raise TypeError("tosa.rescale: the output must be an integer or quantized tensor")
    mode = rescale_rounding_mode(op)
    scale32 = rescale_flag(op, "scale32", True)
    per_channel = rescale_flag(op, "per_channel")
    in_unsigned = rescale_flag(op, "input_unsigned")
    out_unsigned = rescale_flag(op, "output_unsigned") or out_int.is_unsigned
    width = out_int.width
    lo, hi = (0, (1 << width) - 1) if out_unsigned else (-(1 << (width - 1)),
                                                         (1 << (width - 1)) - 1)
    out_dtype = out_int.dtype
    in_int = integer_storage(in_t)
    in_width = in_int.width if in_int is not None else 32
    operand_form = len(op.operands) == 5

    if not operand_form:
        mult_c = np.asarray(ints(op.attr("multiplier"), (1 << 30,)), _I64)
        shift_c = np.asarray(ints(op.attr("shift"), (30,)), _I64)
        izp_c = rescale_int_attr(op, "input_zp")
        ozp_c = rescale_int_attr(op, "output_zp")

    def read_input(x: Any) -> np.ndarray:
        v = _storage_to_int64(x)
        if in_unsigned and in_width < 64:
            v = v & np.int64((1 << in_width) - 1)
        return v

    def run(x: Any, *params: Any) -> list[np.ndarray]:
        if operand_form:
            mult = _storage_to_int64(params[0]).reshape(-1)
            shift = _storage_to_int64(params[1]).reshape(-1)
            izp = int(_storage_to_int64(params[2]).reshape(-1)[0])
            ozp = int(_storage_to_int64(params[3]).reshape(-1)[0])
            if in_unsigned and in_width < 64:
                izp &= (1 << in_width) - 1
            if out_unsigned and width < 64:
                ozp &= (1 << width) - 1
        else:
            mult, shift, izp, ozp = mult_c, shift_c, izp_c, ozp_c
        value = read_input(x) - np.int64(izp)
        if per_channel and value.ndim:
            m, s = mult.reshape(-1), shift.reshape(-1)
        else:
            m, s = mult.reshape(-1)[:1].reshape(()), shift.reshape(-1)[:1].reshape(())
        r = apply_rescale(value, m, s, mode, scale32) + np.int64(ozp)
        r = np.clip(r, lo, hi)
        if out_dtype.kind not in "iu":
            return [r.astype(np.int16).astype(out_dtype)]
        return [r.astype(out_dtype)]

    return run


_ROUNDING_MODES = ("SINGLE_ROUND", "DOUBLE_ROUND", "INEXACT_ROUND")


@verifier("tosa.rescale")
def _verify_tosa_rescale(op: Operation, diag: Any) -> None:
    """TOSA ``rescale``: integer (or quantized) input and output of the same shape; five operands
    (TOSA 1.0) or one with ``multiplier``/``shift`` attributes; multiplier and shift have one
    element, or one per channel (the last dimension) when ``per_channel``; ``shift`` in
    [2, 62] when constant; a known ``rounding_mode``; DOUBLE_ROUND needs ``scale32``."""
    if len(op.results) != 1 or len(op.operands) not in (1, 5):
        diag.error(op, "", "expects 5 operands (input, multiplier, shift, input_zp, output_zp) "
                           "or 1 operand with attributes, and one result")
        return
    in_t, out_t = op.operands[0].type, op.results[0].type
    if integer_storage(in_t) is None:
        diag.error(op, "", f"operand #0 must be a tensor of integer or quantized values, but got "
                           f"'{in_t}'")
        return
    if integer_storage(out_t) is None:
        diag.error(op, "", f"result #0 must be a tensor of integer or quantized values, but got "
                           f"'{out_t}'")
        return
    if not _compatible(_shape_of(in_t), _shape_of(out_t)):
        diag.error(op, "", "requires the same shape for input and output")
        return
    mode = rescale_rounding_mode(op)
    if mode not in _ROUNDING_MODES:
        diag.error(op, "", f"unknown rounding_mode {mode}")
        return
    scale32 = rescale_flag(op, "scale32", True)
    if mode == "DOUBLE_ROUND" and not scale32:
        diag.error(op, "", "DOUBLE_ROUND is only allowed with scale32 = true")
        return
    per_channel = rescale_flag(op, "per_channel")
    channels = None
    if per_channel and isinstance(in_t, TensorType) and in_t.shape:
        channels = in_t.shape[-1]
    if len(op.operands) == 5:
        mult_t, shift_t = op.operands[1].type, op.operands[2].type
        want_mult = "i32" if scale32 else "i16"
        for name, t, want in (("multiplier", mult_t, want_mult), ("shift", shift_t, "i8")):
            et = t.element_type if isinstance(t, TensorType) else None
            if et is None or et.name != want:
                diag.error(op, "", f"expect {name} to be a tensor of {want}, got '{t}'")
                return
            n = t.num_elements if t.is_static else None
            expect = channels if per_channel else 1
            if n is not None and expect is not None and n != expect:
                diag.error(op, "", f"expect {name} to have {expect} element(s), got {n}")
                return
        shifts = _constant_values(op.operands[2])
    else:
        mult = ints(op.attr("multiplier"), None)
        shifts = ints(op.attr("shift"), None)
        if mult is None or shifts is None:
            diag.error(op, "", "requires attributes 'multiplier' and 'shift'")
            return
        expect = channels if per_channel else 1
        if expect is not None and (len(mult) != expect or len(shifts) != expect):
            diag.error(op, "", f"expect multiplier and shift to have {expect} element(s)")
            return
    if shifts is not None and any(not 2 <= int(s) <= 62 for s in shifts):
        diag.error(op, "", "expect shift values in [2, 62]")


def _constant_values(v: Value) -> list[int] | None:
    owner = v.owner
    if isinstance(owner, Operation) and owner.name in ("tosa.const", "stablehlo.constant"):
        attr = owner.attr("values") or owner.attr("value")
        if isinstance(attr, DenseElementsAttr):
            return [int(x) for x in attr.array.reshape(-1)]
    return None


# --- constraints (spec "Ops" section, C1..Cn) ---------------------------------------------------
# Upstream's operand/result type constraints of uniform_quantize and uniform_dequantize (valid
# quantized types: signless or unsigned storage, zero points in range, per-axis dimensions that
# exist with one scale per slice), checked before the C1-C2 verifiers above.

from . import _constraints as _c  # noqa: E402

_Q_QA = _c.TC(_c.Q | _c.QA)
_FP_Q_QA = _c.TC(_c.F | _c.Q | _c.QA)
_SPEC_VERIFIERS = {name: globals().get(fn) for name, fn in (
    ("stablehlo.uniform_quantize", "_verify_uniform_quantize"),
    ("stablehlo.uniform_dequantize", "_verify_uniform_dequantize"))}


@verifier("stablehlo.uniform_quantize", "stablehlo.uniform_dequantize")
def _verify_quantization_types(op: Operation, diag: Any) -> None:
    """Operand and result types first, then the op's constraints (C1-C2)."""
    if op.name == "stablehlo.uniform_quantize":
        ok = _c.signature(op, diag, [_FP_Q_QA], [_Q_QA])
    else:
        ok = _c.signature(op, diag, [_Q_QA], [_c.FP_TENSOR])
    spec = _SPEC_VERIFIERS.get(op.name)
    if ok and spec is not None:
        spec(op, diag)
