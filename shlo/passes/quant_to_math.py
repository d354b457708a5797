"""``stablehlo-legalize-quant-to-math``: quantized programs to integer and f32 arithmetic on
storage values, op for op as upstream's StablehloLegalizeQuantToMath.cpp lowers them (its test
file is stablehlo_legalize_quant_to_int.mlir).

Every quantized tensor type becomes its storage type (signatures, block arguments, results).
Scales, merged scales and zero points are **f32** constants, as upstream builds them:

* ``uniform_quantize`` from f32: ``convert(round_nearest_even(clamp(min, x / s + zp, max)))``
  (the zero point is added *before* rounding). From a quantized type: requantize,
  ``convert(x, f32) * (s_in/s_out) + (zp_out - zp_in * s_in/s_out)``, clamped when the storage
  is narrower than 32 bits, rounded; the same type gives a plain ``convert``.
* ``uniform_dequantize``: ``convert(convert(x, i32) - zp, f32) * s``.
* ``add`` (all per-tensor): both operands requantized to the result's parameters in i32, added,
  minus the result zero point, clamped and converted unless the storage is i32; all per-axis:
  only identical i32 types (integer add minus the zero points).
* ``dot``/``dot_general``/``convolution`` with a per-tensor lhs and a per-tensor (or per-axis
  rhs and result) pair: the integer op (i32 result) on storage values, minus the zero-point
  offset ``zl*sum(rhs) + zr*sum(lhs) - zl*zr*K``, scaled by ``sl*sr/s_out`` (f32; skipped when
  within 0.001 of 1) with *truncating* f32->i32 converts, plus the result zero point, converted
  to the result storage type **without clamping**. Convolutions: NHWC/NCHW/NDHWC/NCDHW only,
  rhs zero point 0, padding made explicit with the lhs zero point. Hybrid ops (float lhs and
  result, quantized rhs): ``optimization_barrier`` then dequantize the rhs and run the float op.
* data-movement ops of upstream's list (reshape, transpose, concatenate, pad, slice, gather,
  broadcast_in_dim, select, max/min of one per-tensor type, reduce_window, composite, ...): the
  same op on storage values.
* the ops of stablehlo-legalize-quantized-op-to-qdq (qdq.QDQ_OPS) otherwise:
  dequantize -> the f32 op -> quantize, each lowered as above.

Any other op with quantized operands or results (while, reduce, sort, custom_call, ...) fails
with upstream's "failed to legalize operation ... that was explicitly marked illegal".

These numerics differ from the spec's dequantize-op-quantize (what shlo's interpreter runs on
the quantized program): see docs/semantics.md, "Quantized programs after
stablehlo-legalize-quant-to-math".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..attributes import DenseElementsAttr, IntegerAttr, StructAttr
from ..errors import Diagnostic
from ..ir import Block, Module, Operation, Region, Value
from ..ops.linalg.convolution import conv_dimension_numbers
from ..ops.linalg.dot import dot_dimension_numbers
from ..ops.quantization import quantized_type, storage_tensor_type
from ..types import IntegerType, QuantizedType, TensorType, Type, element_type
from . import register_pass
from ._rewrite import PassError, Rewriter, const_attr, i64_array, map_type
from .qdq import QDQ_OPS, expand_to_qdq

__all__ = ["legalize_quant_to_math"]

_I8, _I32, _I64 = element_type("i8"), element_type("i32"), element_type("i64")
_F32 = element_type("f32")

GENERIC_OPS = frozenset("stablehlo." + n for n in (
    "bitcast_convert", "broadcast_in_dim", "composite", "concatenate", "constant",
    "dynamic_reshape", "dynamic_slice", "gather", "maximum", "minimum", "pad", "reduce_window",
    "reshape", "return", "select", "slice", "transpose", "get_dimension_size",
    "dynamic_broadcast_in_dim"))
"""Upstream's ConvertGenericOp list: these ops only change types (quantized -> storage)."""


class _NoMatch(Exception):
    """A pattern does not apply (upstream's notifyMatchFailure): try the next one."""


def _storage(t: Type) -> Type:
    return map_type(t, storage_tensor_type)


def _tensor(v: Value | Type) -> TensorType:
    t = v.type if isinstance(v, Value) else v
    if not isinstance(t, TensorType):
        raise _NoMatch
    return t


def _with(t: TensorType, et) -> TensorType:
    return TensorType(t.shape, et, t.encoding)


def _qtype(t: Type) -> QuantizedType | None:
    et = t.element_type if isinstance(t, TensorType) else t
    return et if isinstance(et, QuantizedType) else None


def _per_axis(t: Type) -> bool:
    q = _qtype(t)
    return q is not None and q.is_per_axis


def _per_tensor(t: Type) -> bool:
    q = _qtype(t)
    return q is not None and not q.is_per_axis


# --- building blocks ---------------------------------------------------------------------------


def _bcast(rw: Rewriter, name: str, a: Value, b: Value, result: TensorType | None = None,
           bd: Sequence[int] | None = None) -> Value:
    """``chlo.broadcast_<name>(a, b)``; the result type defaults to the higher-rank operand's
    shape (upstream's inferred type) with ``a``'s element type."""
    if result is None:
        ta, tb = _tensor(a), _tensor(b)
        big = ta if ta.rank >= tb.rank else tb
        result = TensorType(big.shape, ta.element_type, big.encoding)
    props = {"broadcast_dimensions": i64_array(bd)} if bd is not None else {}
    return rw.emit1(f"chlo.broadcast_{name}", [a, b], result, props)


def _params(rw: Rewriter, qt: QuantizedType, zp_float: bool
            ) -> tuple[Value, Value, list[int] | None]:
    """Upstream's getQuantizationParams: f32 scales, zero points (f32 or i32), broadcast dims."""
    zp_et = _F32 if zp_float else _I32
    if not qt.is_per_axis:
        return (rw.constant(np.float32(qt.scales[0]), _F32),
                rw.constant(np.asarray(qt.zero_points[0]).astype(zp_et.dtype), zp_et), None)
    n = len(qt.scales)
    return (rw.constant(np.asarray(qt.scales, np.float32), _F32, (n,)),
            rw.constant(np.asarray(qt.zero_points).astype(zp_et.dtype), zp_et, (n,)),
            [qt.quantization_dimension])


def _storage_bounds(rw: Rewriter, qt: QuantizedType) -> tuple[Value, Value]:
    return (rw.constant(np.float32(qt.min), _F32), rw.constant(np.float32(qt.max), _F32))


def _merged_scales_and_zps(rw: Rewriter, iq: QuantizedType, oq: QuantizedType, x: Value
                           ) -> Value:
    """Upstream's applyMergedScalesAndZps: ``x * s_in/s_out (+ zp_out - zp_in*s_in/s_out)``."""
    xt = _tensor(x)
    if not iq.is_per_axis and not oq.is_per_axis:
        scale = iq.scales[0] / oq.scales[0]
        x = _bcast(rw, "multiply", x, rw.constant(np.float32(scale), _F32), xt)
        zp = oq.zero_points[0] - iq.zero_points[0] * scale
        if zp != 0:
            x = _bcast(rw, "add", x, rw.constant(np.float32(zp), _F32), xt)
        return x
    n = len((oq if oq.is_per_axis else iq).scales)
    axis = (oq if oq.is_per_axis else iq).quantization_dimension

    def col(q: QuantizedType, vals) -> np.ndarray:
        return np.asarray(vals if q.is_per_axis else [vals[0]] * n, np.float64)

    scales = col(iq, iq.scales) / col(oq, oq.scales)
    zps = col(oq, oq.zero_points) - col(iq, iq.zero_points) * scales
    x = _bcast(rw, "multiply", x, rw.constant(scales.astype(np.float32), _F32, (n,)), xt, [axis])
    zps32 = zps.astype(np.float32)
    if np.any(zps32 != 0):
        x = _bcast(rw, "add", x, rw.constant(zps32, _F32, (n,)), xt, [axis])
    return x


def _requantize(rw: Rewriter, x: Value, iq: QuantizedType, oq: QuantizedType,
                out: TensorType) -> Value:
    """Upstream's requantize into the integer tensor type ``out``."""
    if iq == oq:
        return rw.emit1("stablehlo.convert", [x], out)
    ft = _with(out, _F32)
    v = rw.emit1("stablehlo.convert", [x], ft)
    v = _merged_scales_and_zps(rw, iq, oq, v)
    assert isinstance(out.element_type, IntegerType)
    if out.element_type.width < 32:
        lo, hi = _storage_bounds(rw, oq)
        v = rw.emit1("stablehlo.clamp", [lo, v, hi], ft)
    v = rw.emit1("stablehlo.round_nearest_even", [v], ft)
    return rw.emit1("stablehlo.convert", [v], out)


# --- quantize / dequantize / add ---------------------------------------------------------------


def _fail(op: Operation, message: str) -> PassError:
    return PassError(message, op.location, diagnostics=[
        Diagnostic(message, op.location),
        Diagnostic(f"failed to legalize operation '{op.name}' that was explicitly marked "
                   f"illegal", op.location)])


def _quantize(rw: Rewriter, x: Value, st: TensorType, rt: TensorType, op: Operation) -> Value:
    """Upstream's ConvertUniformQuantizeOp on the new value ``x`` of type ``st`` (f32 or
    quantized) to the quantized type ``rt``."""
    oq = quantized_type(rt)
    if st.element_type == _F32:
        scales, zps, bd = _params(rw, oq, zp_float=True)
        lo, hi = _storage_bounds(rw, oq)
        ft = _with(st, _F32)
        v = _bcast(rw, "divide", x, scales, ft, bd)
        v = _bcast(rw, "add", v, zps, ft, bd)
        v = rw.emit1("stablehlo.clamp", [lo, v, hi], ft)
        v = rw.emit1("stablehlo.round_nearest_even", [v], ft)
        return rw.emit1("stablehlo.convert", [v], _with(st, oq.storage_type))
    iq = _qtype(st)
    if iq is None:
        raise _fail(op, "Unsupported input element type.")
    if iq.is_per_axis and oq.is_per_axis and \
            iq.quantization_dimension != oq.quantization_dimension:
        raise _fail(op, "Cannot requantize while changing quantization_axis")
    return _requantize(rw, x, iq, oq, _with(rt, oq.storage_type))


def _dequantize(rw: Rewriter, x: Value, t: Type) -> Value:
    """Upstream's ConvertUniformDequantizeOp on storage values ``x`` of quantized type ``t``:
    an f32 tensor."""
    scales, zps, bd = _params(rw, quantized_type(t), zp_float=False)
    it = _with(_tensor(x), _I32)
    v = rw.emit1("stablehlo.convert", [x], it)
    v = _bcast(rw, "subtract", v, zps, it, bd)
    ft = _with(it, _F32)
    v = rw.emit1("stablehlo.convert", [v], ft)
    return _bcast(rw, "multiply", v, scales, ft, bd)


def _add(rw: Rewriter, op: Operation) -> Value:
    types = [op.operands[0].type, op.operands[1].type, op.results[0].type]
    qs = [_qtype(t) for t in types]
    if any(q is None for q in qs):
        raise _NoMatch
    lq, rq, oq = qs
    lhs, rhs = rw.get(op.operands[0]), rw.get(op.operands[1])
    if any(q.is_per_axis for q in qs):
        if not (lq == rq == oq and oq.storage_type == _I32):
            raise _NoMatch
        s = rw.emit1("stablehlo.add", [lhs, rhs], _storage(types[2]))
        if any(oq.zero_points):
            n = len(oq.zero_points)
            zps = rw.constant(np.asarray(oq.zero_points, np.int32), _I32, (n,))
            s = _bcast(rw, "subtract", s, zps, None, [oq.quantization_dimension])
        return s
    it = _with(_tensor(types[2]), _I32)
    a = _requantize(rw, lhs, lq, oq, it)
    b = _requantize(rw, rhs, rq, oq, it)
    zp = rw.constant(np.int32(oq.zero_points[0]), _I32)
    s = _bcast(rw, "add", a, b, it)
    s = _bcast(rw, "subtract", s, zp, it)
    if oq.storage_type == _I32:
        return s
    lo = rw.constant(np.int32(oq.min), _I32)
    hi = rw.constant(np.int32(oq.max), _I32)
    s = rw.emit1("stablehlo.clamp", [lo, s, hi], it)
    return rw.emit1("stablehlo.convert", [s], _with(it, oq.storage_type))


# --- dot-like ops ------------------------------------------------------------------------------


@dataclass
class _Dims:
    """Upstream's DotLikeDimensionNumbers."""
    lhs_batching: list[int] = field(default_factory=list)
    lhs_spatial: list[int] = field(default_factory=list)
    lhs_contracting: list[int] = field(default_factory=list)
    rhs_batching: list[int] = field(default_factory=list)
    rhs_spatial: list[int] = field(default_factory=list)
    rhs_contracting: list[int] = field(default_factory=list)


def _is_hybrid(op: Operation) -> bool:
    """Upstream's isDotLikeOpHybrid: False (quantized), True (hybrid), _NoMatch otherwise."""
    lhs, rhs, res = op.operands[0].type, op.operands[1].type, op.results[0].type
    if _per_tensor(lhs) and ((_per_tensor(rhs) and _per_tensor(res))
                             or (_per_axis(rhs) and _per_axis(res))):
        return False
    if _qtype(lhs) is None and _qtype(rhs) is not None and _qtype(res) is None:
        return True
    raise _NoMatch


def _hybrid(rw: Rewriter, op: Operation) -> Value:
    """Weight-only quantization: ``op(lhs, dequantize(optimization_barrier(rhs)))`` in f32."""
    rq = quantized_type(op.operands[1].type)
    rhs = rw.get(op.operands[1])
    rhs = rw.emit1("stablehlo.optimization_barrier", [rhs], rhs.type)
    scales, zps, bd = _params(rw, rq, zp_float=True)
    ft = _with(_tensor(op.operands[1]), _F32)
    v = rw.emit1("stablehlo.convert", [rhs], ft)
    if any(rq.zero_points):
        v = _bcast(rw, "subtract", v, zps, ft, bd)
    v = _bcast(rw, "multiply", v, scales, ft, bd)
    return rw.emit(op.name, [rw.get(op.operands[0]), v], [op.results[0].type],
                   dict(op.properties), dict(op.attributes)).results[0]


def _reduce_sum(rw: Rewriter, x: Value, dims: list[int]) -> Value:
    """``reduce(convert(x, i32), 0, add)`` over ``dims``."""
    t = _tensor(x)
    x = rw.emit1("stablehlo.convert", [x], _with(t, _I32))
    scalar = TensorType((), _I32)
    init = rw.constant(np.int32(0), _I32)
    body = Block([scalar, scalar])
    s = Operation("stablehlo.add", list(body.arguments), [scalar], location=rw.loc)
    body.append(s)
    body.append(Operation("stablehlo.return", [s.results[0]], [], location=rw.loc))
    out = TensorType(tuple(d for i, d in enumerate(t.shape) if i not in dims), _I32)
    return rw.emit("stablehlo.reduce", [x, init], [out], {"dimensions": i64_array(dims)},
                   regions=[Region([body])]).results[0]


def _partial_offset(rw: Rewriter, x: Value, other_zp: int, dims: list[int]) -> Value:
    """Upstream's createZeroPointPartialOffset: ``sum(x over dims) * other_zp``."""
    r = _reduce_sum(rw, x, dims)
    return _bcast(rw, "multiply", r, rw.constant(np.int32(other_zp), _I32))


def _output_dims(rw: Rewriter, output: Value, t: TensorType) -> Value:
    """The 1-d i64 shape of ``output`` (get_dimension_size for dynamic dimensions)."""
    parts = []
    for i, d in enumerate(t.shape):
        if d is None:
            v = rw.emit1("stablehlo.get_dimension_size", [output], TensorType((), _I32),
                         {"dimension": IntegerAttr(i, _I64)})
            v = rw.emit1("stablehlo.convert", [v], TensorType((), _I64))
            parts.append(rw.emit1("stablehlo.reshape", [v], TensorType((1,), _I64)))
        else:
            parts.append(rw.constant(np.asarray([d], np.int64), _I64, (1,)))
    return rw.emit1("stablehlo.concatenate", parts, TensorType((t.rank,), _I64),
                    {"dimension": IntegerAttr(0, _I64)})


def _broadcast_offset(rw: Rewriter, contrib: Value, reduction: list[int], batching: list[int],
                      start: int, output: Value, out_t: TensorType, cache: list) -> Value:
    """Upstream's broadcastZpContribution."""
    rank = _tensor(contrib).rank
    dims, b_idx, nb_idx, orig = [], 0, start, 0
    for _ in range(rank):
        while orig in reduction:
            orig += 1
        if orig in batching:
            dims.append(b_idx)
            b_idx += 1
        else:
            dims.append(nb_idx)
            nb_idx += 1
        orig += 1
    if all(d is not None for d in out_t.shape):
        return rw.emit1("stablehlo.broadcast_in_dim", [contrib], out_t,
                        {"broadcast_dimensions": i64_array(dims)})
    if not cache:
        cache.append(_output_dims(rw, output, out_t))
    return rw.emit1("stablehlo.dynamic_broadcast_in_dim", [contrib, cache[0]], out_t,
                    {"broadcast_dimensions": i64_array(dims)})


def _zero_point_offset(rw: Rewriter, lhs: Value, rhs: Value, output: Value, lzp: int, rzp: int,
                       out_t: TensorType, dims: _Dims) -> Value | None:
    """Upstream's calculateZeroPointOffset: ``zr*sum(lhs) + zl*sum(rhs) - zl*zr*K``."""
    result, cache = None, []
    if rzp != 0:
        red = dims.lhs_spatial + dims.lhs_contracting
        c = _partial_offset(rw, lhs, rzp, red)
        result = _broadcast_offset(rw, c, red, dims.lhs_batching, len(dims.lhs_batching),
                                   output, out_t, cache)
    if lzp != 0:
        red = dims.rhs_spatial + dims.rhs_contracting
        c = _partial_offset(rw, rhs, lzp, red)
        start = _tensor(lhs).rank - len(dims.lhs_contracting)
        if dims.lhs_spatial and dims.rhs_spatial:
            start = dims.lhs_contracting[0]
        c = _broadcast_offset(rw, c, red, dims.rhs_batching, start, output, out_t, cache)
        result = c if result is None else rw.emit1("stablehlo.add", [result, c], out_t)
    if lzp != 0 and rzp != 0:
        rt = _tensor(rhs)
        total = 1
        dynamic = rw.constant(np.int32(1), _I32)
        has_dynamic = False
        for i in dims.rhs_spatial + dims.rhs_contracting:
            if rt.shape[i] is None:
                has_dynamic = True
                d = rw.emit1("stablehlo.get_dimension_size", [rhs], TensorType((), _I32),
                             {"dimension": IntegerAttr(i, _I64)})
                dynamic = rw.emit1("stablehlo.multiply", [dynamic, d], TensorType((), _I32))
            else:
                total *= rt.shape[i]
        zz = rw.constant(np.int64(lzp * rzp * total).astype(np.int32), _I32)  # i32 wraps
        if has_dynamic:
            zz = rw.emit1("stablehlo.multiply", [zz, dynamic], TensorType((), _I32))
        assert result is not None
        result = _bcast(rw, "subtract", result, zz)
    return result


_CONV_LAYOUTS = {
    # (input b, f, spatial), (kernel i, o, spatial), (output b, f, spatial) -> _Dims
    ((0, 3, (1, 2)), (2, 3, (0, 1)), (0, 3, (1, 2))): _Dims([0], [1, 2], [3], [], [0, 1], [2]),
    ((0, 1, (2, 3)), (1, 0, (2, 3)), (0, 1, (2, 3))): _Dims([0], [2, 3], [1], [], [2, 3], [1]),
    ((0, 4, (1, 2, 3)), (3, 4, (0, 1, 2)), (0, 4, (1, 2, 3))):
        _Dims([0], [1, 2, 3], [4], [], [0, 1, 2], [3]),
    ((0, 1, (2, 3, 4)), (0, 1, (2, 3, 4)), (0, 1, (2, 3, 4))):
        _Dims([0], [2, 3, 4], [1], [], [2, 3, 4], [1]),
}


def _conv_dims(op: Operation) -> _Dims:
    """Upstream's verifyAndConstructDims for convolution (_NoMatch when unsupported)."""
    rq, oq = _qtype(op.operands[1].type), _qtype(op.results[0].type)
    assert rq is not None and oq is not None
    zps = list(rq.zero_points) + (list(oq.zero_points) if rq.is_per_axis else [])
    if any(zps):
        raise _NoMatch  # RHS/result UQ type must have zero zp
    if rq.is_per_axis:
        if rq.quantization_dimension != _tensor(op.operands[1]).rank - 1:
            raise _NoMatch  # conv quantized axis must be out channel axis
        ratios = [o / r for o, r in zip(oq.scales, rq.scales)]
        if any(abs((x - ratios[0]) / ratios[0]) > 0.001 for x in ratios):
            raise _NoMatch
    lhs_dilation = op.attr("lhs_dilation")
    if lhs_dilation is not None and any(v != 1 for v in lhs_dilation.values):
        raise _NoMatch
    dn = conv_dimension_numbers(op)
    key = ((dn.input_batch_dimension, dn.input_feature_dimension,
            tuple(dn.input_spatial_dimensions)),
           (dn.kernel_input_feature_dimension, dn.kernel_output_feature_dimension,
            tuple(dn.kernel_spatial_dimensions)),
           (dn.output_batch_dimension, dn.output_feature_dimension,
            tuple(dn.output_spatial_dimensions)))
    if key not in _CONV_LAYOUTS:
        raise _NoMatch
    return _CONV_LAYOUTS[key]


def _kernel(rw: Rewriter, op: Operation, lhs: Value, rhs: Value, res_t: TensorType,
            dims: _Dims) -> tuple[Value, Value]:
    """The integer dot_general / convolution (convolution: lhs padded with its zero point)."""
    props, attrs = dict(op.properties), dict(op.attributes)
    if op.name == "stablehlo.dot":
        props["dot_dimension_numbers"] = StructAttr("stablehlo.dot", (
            ("lhs_contracting_dimensions", (1,)), ("rhs_contracting_dimensions", (0,))))
        name = "stablehlo.dot_general"
    else:
        name = op.name
    if name == "stablehlo.convolution":
        pad = op.attr("padding")
        if isinstance(pad, DenseElementsAttr) and np.any(np.asarray(pad.array) != 0):
            lq = quantized_type(op.operands[0].type)
            rank = _tensor(lhs).rank
            low, high = [0] * rank, [0] * rank
            p = np.asarray(pad.array).reshape(-1, 2)
            for i, d in enumerate(dims.lhs_spatial):
                low[d], high[d] = int(p[i][0]), int(p[i][1])
            zp = rw.constant(np.int8(lq.zero_points[0]), _I8)
            lt = _tensor(lhs)
            shape = tuple(None if s is None else s + low[i] + high[i]
                          for i, s in enumerate(lt.shape))
            lhs = rw.emit1("stablehlo.pad", [lhs, zp], TensorType(shape, lt.element_type),
                           {"edge_padding_low": i64_array(low),
                            "edge_padding_high": i64_array(high),
                            "interior_padding": i64_array([0] * rank)})
            (attrs if "padding" in attrs else props)["padding"] = \
                const_attr(0, _I64, (rank - 2, 2))
    out = rw.emit(name, [lhs, rhs], [res_t], props, attrs).results[0]
    return out, lhs


def _dot_like(rw: Rewriter, op: Operation) -> Value:
    if op.name not in ("stablehlo.dot", "stablehlo.dot_general", "stablehlo.convolution"):
        raise _NoMatch
    if _is_hybrid(op):
        return _hybrid(rw, op)
    if op.name == "stablehlo.convolution":
        dims = _conv_dims(op)
    elif op.name == "stablehlo.dot":
        dims = _Dims([], [], [1], [], [], [0])
    else:
        dn = dot_dimension_numbers(op)
        dims = _Dims(list(dn.lhs_batching_dimensions), [], list(dn.lhs_contracting_dimensions),
                     list(dn.rhs_batching_dimensions), [], list(dn.rhs_contracting_dimensions))
    res = _tensor(op.results[0])
    it, ft = _with(res, _I32), _with(res, _F32)
    lq, rq, oq = (quantized_type(v.type) for v in (op.operands[0], op.operands[1],
                                                   op.results[0]))
    acc, lhs = _kernel(rw, op, rw.get(op.operands[0]), rw.get(op.operands[1]), it, dims)
    rzp = 0 if rq.is_per_axis else rq.zero_points[0]
    offset = _zero_point_offset(rw, lhs, rw.get(op.operands[1]), acc, lq.zero_points[0], rzp,
                                it, dims)
    scale = lq.scales[0] * rq.scales[0] / oq.scales[0]
    if abs(scale - 1.0) > 0.001:
        cs = rw.constant(np.float32(scale), _F32)
        v = rw.emit1("stablehlo.convert", [acc], ft)
        v = _bcast(rw, "multiply", v, cs, ft)
        acc = rw.emit1("stablehlo.convert", [v], it)
        if offset is not None:
            ot = _tensor(offset)
            v = rw.emit1("stablehlo.convert", [offset], _with(ot, _F32))
            v = _bcast(rw, "multiply", v, cs, _with(ot, _F32))
            offset = rw.emit1("stablehlo.convert", [v], _with(ot, _I32))
    zp = rw.constant(np.int32(0 if oq.is_per_axis else oq.zero_points[0]), _I32)
    if offset is not None:
        zp = _bcast(rw, "subtract", zp, offset, it)
    v = _bcast(rw, "add", acc, zp, it)
    return rw.emit1("stablehlo.convert", [v], _with(res, oq.storage_type))


# --- type change, the qdq fallback, the pattern -----------------------------------------------


def _generic(rw: Rewriter, op: Operation) -> Sequence[Value] | None:
    if op.name not in GENERIC_OPS:
        raise _NoMatch
    if op.name in ("stablehlo.maximum", "stablehlo.minimum"):
        ts = [op.operands[0].type, op.operands[1].type, op.results[0].type]
        if not all(_per_tensor(t) for t in ts) or len({_qtype(t) for t in ts}) != 1:
            raise _NoMatch
    if op.name == "stablehlo.constant":
        attr = op.attr("value")
        t = _storage(op.results[0].type)
        assert isinstance(attr, DenseElementsAttr) and isinstance(t, TensorType)
        return [rw.emit1("stablehlo.constant", [], t,
                         {"value": DenseElementsAttr(t, attr.array, attr.hex)})]
    return None  # cloned with storage types, regions rewritten too


def _qdq(rw: Rewriter, op: Operation) -> list[Value]:
    """Upstream's QDQ fallback, each dequantize / quantize lowered as it is emitted."""
    if op.name not in QDQ_OPS:
        raise _NoMatch

    def quantize(rw: Rewriter, x: Value, t: Type) -> Value:
        return _quantize(rw, x, _tensor(x), _tensor(t), op)

    return expand_to_qdq(rw, op, _dequantize, quantize)


def _illegal(t: Type) -> bool:
    return map_type(t, storage_tensor_type) != t


def _pattern(rw: Rewriter, op: Operation) -> Sequence[Value] | None:
    name = op.name
    if name == "func.func":
        return None
    if not (any(_illegal(v.type) for v in op.operands)
            or any(_illegal(v.type) for v in op.results)):
        return None
    if name == "func.return":
        return None  # upstream's populateReturnOpTypeConversionPattern
    for pattern in (_specific, _generic, _qdq):
        try:
            return pattern(rw, op)
        except _NoMatch:
            continue
    raise PassError(f"failed to legalize operation '{name}' that was explicitly marked illegal",
                    op.location)


def _specific(rw: Rewriter, op: Operation) -> Sequence[Value]:
    if op.name == "stablehlo.uniform_quantize":
        return [_quantize(rw, rw.get(op.operands[0]), _tensor(op.operands[0]),
                          _tensor(op.results[0]), op)]
    if op.name == "stablehlo.uniform_dequantize":
        return [_dequantize(rw, rw.get(op.operands[0]), op.operands[0].type)]
    if op.name == "stablehlo.add":
        return [_add(rw, op)]
    return [_dot_like(rw, op)]


@register_pass("stablehlo-legalize-quant-to-math")
def legalize_quant_to_math(module: Module, options: dict[str, str] | None = None) -> Module:
    """Lower quantized ops to integer and f32 arithmetic on storage values as upstream does
    (see the module docstring); no quantized type is left.

    Fails (PassError, upstream's messages) on an op with quantized types that neither a
    lowering, the type change, nor the dequantize-op-quantize fallback covers.
    """
    return Rewriter(_pattern, _storage).module(module)
