"""``stablehlo-legalize-quant-to-math``: quantized programs to arithmetic on storage values
(upstream StablehloLegalizeQuantToMath.cpp, test file stablehlo_legalize_quant_to_int.mlir).

Every quantized tensor type becomes its storage type (function signatures, block arguments,
results); quantized ops become integer and float arithmetic:

* ``uniform_dequantize``: ``convert(x, i32) - zero_point`` -> ``convert`` to the expressed type
  -> ``* scale`` (``chlo.broadcast_*`` ops; per-axis parameters are 1-d constants with
  ``broadcast_dimensions``).
* ``uniform_quantize`` from float: ``round_nearest_even(x / scale) + zero_point``, clamped to
  ``[storage_min, storage_max]``, converted to the storage type (the spec's order: round, then
  add the zero point; upstream adds first). From quantized: dequantize then quantize (an
  identical type is a no-op).
* ``add`` of per-tensor operands: each operand requantized to the result's scale and zero point
  in i32 (``x * s_in / s_out + (z_out - z_in * s_in / s_out)``, rounded), integer add, minus the
  result zero point, clamped (upstream's integer lowering); per-axis operands of one identical
  i32 type: integer add minus the zero points.
* ``dot_general``/``dot``/``convolution``/``dynamic_conv`` with quantized lhs, rhs and result:
  integer dot product of ``lhs - zl`` and ``rhs - zr`` (i32, or i64 for wider storage), scaled
  once by ``sl * sr / s_out`` in f64, rounded, plus the result zero point, clamped. Hybrid ops
  (float lhs and result): the rhs is dequantized and the float op runs.
* ``maximum``/``minimum``/``select`` whose quantized operands and result share one type, and
  data-movement ops (reshape, transpose, gather, concatenate, pad, while, reduce, sort, ...):
  the same op on storage values (region bodies are lowered too).
* every other op with quantized operands or results (the spec's dequantize-op-quantize ops,
  including compare, select and batch_norm): dequantize -> the op on the expressed types ->
  quantize, with the arithmetic above.

Apart from ``add`` with different operand and result parameters (each operand is rounded on its
own: at most 1 storage unit from the spec's dequantize-op-quantize), the lowered program computes
exactly what shlo's interpreter computes on the quantized program (docs/semantics/quantization.md).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..attributes import DenseElementsAttr
from ..ir import Module, Operation, Value
from ..ops.quantization import (expressed_tensor_type, quantized_type, rhs_result_dimension,
                                storage_tensor_type)
from ..types import (FloatType, IntegerType, QuantizedType, TensorType, Type, element_type,
                     is_quantized)
from . import register_pass
from ..registry import DOT_LIKE, QUANTIZED_STORAGE, names_with
from ._rewrite import PassError, Rewriter, map_type

__all__ = ["legalize_quant_to_math", "emit_dequantize", "emit_quantize"]

_I32, _I64 = element_type("i32"), element_type("i64")
_F32, _F64 = element_type("f32"), element_type("f64")

_REFUSED = frozenset({"stablehlo.custom_call"})


def _storage(t: Type) -> Type:
    return map_type(t, storage_tensor_type)


def _tensor(v: Value) -> TensorType:
    t = v.type
    if not isinstance(t, TensorType):
        raise PassError(f"expected a tensor, got {t}")
    return t


def _params(qt: QuantizedType) -> tuple[np.ndarray, np.ndarray, list[int] | None]:
    """(scales rounded to the expressed type, zero points, broadcast_dimensions)."""
    scales = np.asarray(qt.scales, np.float64).astype(qt.expressed_type.dtype)
    zps = np.asarray(qt.zero_points, np.int64)
    if qt.quantization_dimension is None:
        return scales.reshape(()), zps.reshape(()), None
    return scales, zps, [qt.quantization_dimension]


def _int_acc(storage: IntegerType) -> IntegerType:
    """The integer type dequantization subtracts zero points in: i32, or i64 for 32-bit+."""
    return _I32 if storage.width < 32 else _I64


def emit_dequantize(rw: Rewriter, x: Value, qt: QuantizedType) -> Value:
    """Storage values ``x`` -> expressed values: ``convert(x - zp) * scale``."""
    scales, zps, bd = _params(qt)
    acc = _int_acc(qt.storage_type)
    v = rw.convert(x, acc)
    if zps.any():
        v = rw.broadcast_binary("subtract", v, rw.constant(zps, acc), bd)
    f = qt.expressed_type
    v = rw.convert(v, f)
    return rw.broadcast_binary("multiply", v, rw.constant(scales, f), bd)


def _wide_float(f: FloatType, storage: IntegerType) -> FloatType:
    """The float type integer-valued results are offset and clamped in (exact there)."""
    return _F64 if f.name == "f64" or storage.width > 16 else _F32


def emit_quantize(rw: Rewriter, x: Value, qt: QuantizedType) -> Value:
    """Expressed values ``x`` -> storage values: ``clamp(round(x / scale) + zp)``."""
    scales, zps, bd = _params(qt)
    f = _tensor(x).element_type
    assert isinstance(f, FloatType)
    if f != qt.expressed_type:
        x = rw.convert(x, qt.expressed_type)
        f = qt.expressed_type
    v = rw.broadcast_binary("divide", x, rw.constant(scales, f), bd)
    v = rw.unary("stablehlo.round_nearest_even", v)
    return _offset_clamp_convert(rw, v, qt, _wide_float(f, qt.storage_type))


def _offset_clamp_convert(rw: Rewriter, v: Value, qt: QuantizedType, w: FloatType,
                          zps: np.ndarray | None = None, bd: list[int] | None = None) -> Value:
    """Integer-valued floats ``v`` -> ``convert(clamp(v + zp))`` in float type ``w``."""
    if zps is None:
        _, zps, bd = _params(qt)
    if _tensor(v).element_type != w:
        v = rw.convert(v, w)
    if zps.any():
        v = rw.broadcast_binary("add", v, rw.constant(zps, w), bd)
    v = rw.clamp(rw.constant(float(qt.min), w), v, rw.constant(float(qt.max), w))
    return rw.convert(v, qt.storage_type)


# --- the pattern ---------------------------------------------------------------------------------


def _has_quantized(op: Operation) -> bool:
    def q(t: Type) -> bool:
        return is_quantized(t) or (map_type(t, storage_tensor_type) != t)

    return any(q(v.type) for v in op.operands) or any(q(v.type) for v in op.results)


def _pattern(rw: Rewriter, op: Operation) -> Sequence[Value] | None:
    name = op.name
    if name == "func.func" or not _has_quantized(op):
        return None
    if name in _REFUSED:
        raise PassError(f"failed to legalize operation '{name}': quantized operands or results "
                        f"of a custom call have no integer meaning", op.location)
    if name == "stablehlo.uniform_quantize":
        return [_uniform_quantize(rw, op)]
    if name == "stablehlo.uniform_dequantize":
        qt = quantized_type(op.operands[0].type)
        return [emit_dequantize(rw, rw.get(op.operands[0]), qt)]
    if name == "stablehlo.constant":
        return [_constant(rw, op)]
    if name == "stablehlo.add":
        out = _add(rw, op)
        if out is not None:
            return [out]
    if name in names_with(DOT_LIKE):
        out = _dot_like(rw, op)
        if out is not None:
            return [out]
    if name in ("stablehlo.maximum", "stablehlo.minimum") and _same_types(op.operands,
                                                                           op.results):
        return None  # cloned on storage types
    if name == "stablehlo.select" and _same_types(op.operands[1:], op.results):
        return None
    if name in names_with(QUANTIZED_STORAGE) or name.startswith("check.") or name.startswith("interpreter."):
        return None
    return _dequantize_op_quantize(rw, op)


def _same_types(operands: Sequence[Value], results: Sequence[Value]) -> bool:
    types = {v.type.element_type for v in list(operands) + list(results)
             if isinstance(v.type, TensorType)}
    return len(types) == 1 and isinstance(next(iter(types)), QuantizedType)


def _dequantize_op_quantize(rw: Rewriter, op: Operation) -> list[Value]:
    """dequantize -> the op on expressed types -> quantize (the spec's rule)."""
    if op.regions:
        raise PassError(f"failed to legalize operation '{op.name}' with quantized types",
                        op.location)
    operands = []
    for v in op.operands:
        nv = rw.get(v)
        if is_quantized(v.type):
            nv = emit_dequantize(rw, nv, quantized_type(v.type))
        operands.append(nv)
    new = rw.emit(op.name, operands, [expressed_tensor_type(v.type) for v in op.results],
                  dict(op.properties), dict(op.attributes))
    out = []
    for old, nv in zip(op.results, new.results):
        if is_quantized(old.type):
            nv = emit_quantize(rw, nv, quantized_type(old.type))
        out.append(nv)
    return out


def _uniform_quantize(rw: Rewriter, op: Operation) -> Value:
    src, res = op.operands[0], op.results[0]
    rq = quantized_type(res.type)
    x = rw.get(src)
    if is_quantized(src.type):
        sq = quantized_type(src.type)
        if sq == rq:
            return x
        x = emit_dequantize(rw, x, sq)
    return emit_quantize(rw, x, rq)


def _constant(rw: Rewriter, op: Operation) -> Value:
    attr = op.attr("value")
    t = _storage(op.results[0].type)
    assert isinstance(attr, DenseElementsAttr) and isinstance(t, TensorType)
    new_attr = DenseElementsAttr(t, attr.array, attr.hex)
    return rw.emit1("stablehlo.constant", [], t, {"value": new_attr})


# --- add -----------------------------------------------------------------------------------------


def _requantize_i32(rw: Rewriter, x: Value, in_qt: QuantizedType, out_qt: QuantizedType
                    ) -> Value:
    """Upstream's ``requantize`` into i32: ``round(x * s_in/s_out + (z_out - z_in*s_in/s_out))``
    (per-tensor types)."""
    if in_qt == out_qt:
        return rw.convert(x, _I32)
    merged_scale = in_qt.scales[0] / out_qt.scales[0]
    merged_zp = out_qt.zero_points[0] - in_qt.zero_points[0] * merged_scale
    v = rw.convert(x, _F32)
    v = rw.broadcast_binary("multiply", v, rw.constant(np.float32(merged_scale), _F32))
    if merged_zp != 0:
        v = rw.broadcast_binary("add", v, rw.constant(np.float32(merged_zp), _F32))
    v = rw.unary("stablehlo.round_nearest_even", v)
    return rw.convert(v, _I32)


def _add(rw: Rewriter, op: Operation) -> Value | None:
    types = [v.type for v in list(op.operands) + list(op.results)]
    if not all(is_quantized(t) for t in types):
        return None
    lq, rq, oq = (quantized_type(t) for t in types)
    lhs, rhs = rw.get(op.operands[0]), rw.get(op.operands[1])
    if any(q.is_per_axis for q in (lq, rq, oq)):
        if not (lq == rq == oq and oq.storage_type == _I32):
            return None  # upstream falls back to dequantize-op-quantize too
        s = rw.emit1("stablehlo.add", [lhs, rhs], _storage(op.results[0].type))
        _, zps, bd = _params(oq)
        if zps.any():
            s = rw.broadcast_binary("subtract", s, rw.constant(zps.astype(np.int32), _I32), bd)
        return s
    a = _requantize_i32(rw, lhs, lq, oq)
    b = _requantize_i32(rw, rhs, rq, oq)
    s = rw.broadcast_binary("add", a, b)
    s = rw.broadcast_binary("subtract", s, rw.constant(np.int32(oq.zero_points[0]), _I32))
    if oq.storage_type == _I32:
        return s
    s = rw.clamp(rw.constant(oq.min, _I32), s, rw.constant(oq.max, _I32))
    return rw.convert(s, oq.storage_type)


# --- dot_general / convolution -------------------------------------------------------------------


def _dot_like(rw: Rewriter, op: Operation) -> Value | None:
    lhs_t, rhs_t, res_t = op.operands[0].type, op.operands[1].type, op.results[0].type
    lq, rq, oq = is_quantized(lhs_t), is_quantized(rhs_t), is_quantized(res_t)
    if not lq and rq and not oq:  # hybrid: weight-only quantization
        operands = [rw.get(v) for v in op.operands]
        operands[1] = emit_dequantize(rw, operands[1], quantized_type(rhs_t))
        return rw.emit(op.name, operands, [res_t], dict(op.properties),
                       dict(op.attributes)).results[0]
    if not (lq and rq and oq):
        return None
    return _integer_dot_like(rw, op)


def _integer_dot_like(rw: Rewriter, op: Operation) -> Value | None:
    lhs_t, rhs_t, res_t = (_tensor(v) for v in (op.operands[0], op.operands[1], op.results[0]))
    lq, rq, oq = (quantized_type(t) for t in (lhs_t, rhs_t, res_t))
    res_rank = res_t.rank
    # the float64 multiplier sl * sr / s_out, as the interpreter computes it
    ls = float(np.float64(np.asarray(lq.scales[0]).astype(lq.expressed_type.dtype)))
    rs = np.asarray(rq.scales, np.float64).astype(rq.expressed_type.dtype).astype(np.float64)
    os_ = np.asarray(oq.scales, np.float64).astype(oq.expressed_type.dtype).astype(np.float64)
    dims = set()
    if rq.is_per_axis:
        d = rhs_result_dimension(op, rq.quantization_dimension)
        if d is None:
            return None
        dims.add(d)
    if oq.is_per_axis:
        dims.add(oq.quantization_dimension)
    if len(dims) > 1 or lq.is_per_axis:
        return None
    mult = (ls * rs) / os_ if rs.size == os_.size or rs.size == 1 or os_.size == 1 else None
    if mult is None:
        return None
    bd = sorted(dims) or None
    if bd is None:
        mult = mult.reshape(())
    wide = lq.storage_type.width > 8 or rq.storage_type.width > 8
    acc = _I64 if wide else _I32
    lhs = rw.convert(rw.get(op.operands[0]), acc)
    if lq.zero_points[0]:
        lhs = rw.broadcast_binary("subtract", lhs, rw.constant(lq.zero_points[0], acc))
    rhs = rw.convert(rw.get(op.operands[1]), acc)
    _, rzps, rbd = _params(rq)
    if rzps.any():
        rhs = rw.broadcast_binary("subtract", rhs, rw.constant(rzps, acc), rbd)
    others = [rw.get(v) for v in op.operands[2:]]
    acc_t = TensorType(res_t.shape, acc, res_t.encoding)
    prod = rw.emit(op.name, [lhs, rhs] + others, [acc_t], dict(op.properties),
                   dict(op.attributes)).results[0]
    v = rw.convert(prod, _F64)
    if not np.all(mult == 1.0):
        v = rw.broadcast_binary("multiply", v, rw.constant(mult, _F64), bd)
    v = rw.unary("stablehlo.round_nearest_even", v)
    _, ozps, obd = _params(oq)
    return _offset_clamp_convert(rw, v, oq, _F64, ozps, obd)


@register_pass("stablehlo-legalize-quant-to-math")
def legalize_quant_to_math(module: Module, options: dict[str, str] | None = None) -> Module:
    """Lower quantized ops to integer and float arithmetic on storage values; no quantized
    type is left (see the module docstring for each op's lowering).

    Fails (PassError) on a custom_call with quantized operands or results and on quantized ops
    with regions that have no storage-value meaning.
    """
    return Rewriter(_pattern, _storage).module(module)
