"""``stablehlo-quant-legalize-to-tosa-rescale`` and ``tosa-rescale-legalize-to-stablehlo``
(upstream stablehlo/conversions/tosa/transforms/StablehloQuantLegalizeToTosaRescale.cpp and
TosaRescaleLegalizeToStablehlo.cpp; tests legalize_quant_ops_to_tosa_rescale.mlir,
legalize_tosa_rescale_to_stablehlo.mlir, rescale_interpreter.mlir).

The ``tosa.rescale`` op itself (semantics, verifier) is in shlo/ops/quantization.py. It is
emitted in its TOSA 1.0 form: ``tosa.rescale %input, %multiplier, %shift, %input_zp,
%output_zp {input_unsigned, output_unsigned, per_channel, rounding_mode, scale32}`` with the
four parameters as ``tosa.const`` ops.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..attributes import BoolAttr, DenseElementsAttr, EnumAttr
from ..ir import Module, Operation, Value
from ..ops.quantization import quantized_type
from ..ops.tosa import (integer_storage, multiplier_and_shift, rescale_flag, rescale_int_attr,
                        rescale_rounding_mode)
from ..types import IntegerType, QuantizedType, TensorType, element_type, is_quantized
from . import register_pass
from ._rewrite import PassError, Rewriter, const_attr

__all__ = ["quant_legalize_to_tosa_rescale", "tosa_rescale_legalize_to_stablehlo"]

_I8, _I32, _I64 = element_type("i8"), element_type("i32"), element_type("i64")
_SHIFT_8_BIT, _SHIFT_16_BIT = 20, 15


class _ConstCache:
    """The ``tosa.const`` ops the pass creates. Upstream's greedy driver folds equal constants
    into one and moves them to the top of the function: :meth:`hoist` does that afterwards."""

    def __init__(self) -> None:
        self.created: set[int] = set()

    def get(self, rw: Rewriter, values: Any, et: Any) -> Value:
        attr = const_attr(np.asarray(values).reshape(1), et)
        v = rw.emit1("tosa.const", [], attr.type, {"values": attr})
        assert isinstance(v.owner, Operation)
        self.created.add(id(v.owner))
        return v

    def hoist(self, module: Module) -> Module:
        for func in module.walk():
            if func.name != "func.func" or not func.regions or not func.regions[0].blocks:
                continue
            entry = func.regions[0].blocks[0]
            canonical: dict[Any, Operation] = {}
            replace: dict[Value, Value] = {}
            for op in list(func.walk()):
                if id(op) not in self.created or op.parent is None:
                    continue
                op.parent.operations.remove(op)
                key = op.properties["values"]
                keep = canonical.setdefault(key, op)
                if keep is not op:
                    replace[op.results[0]] = keep.results[0]
            for i, op in enumerate(canonical.values()):
                entry.operations.insert(i, op)
                op.parent = entry
            for op in func.walk():
                op.operands = [replace.get(v, v) for v in op.operands]
        return module


def _rescale(rw: Rewriter, consts: _ConstCache, x: Value, out_t: TensorType, scale: float,
             input_zp: int, output_zp: int) -> Value:
    in_t = x.type
    assert isinstance(in_t, TensorType)
    in_storage = integer_storage(in_t)
    out_storage = integer_storage(out_t)
    multiplier, shift = multiplier_and_shift(scale, 32)
    operands = [x, consts.get(rw, multiplier, _I32), consts.get(rw, shift, _I8),
                consts.get(rw, input_zp, in_storage), consts.get(rw, output_zp, out_storage)]
    props = {"input_unsigned": BoolAttr(False), "output_unsigned": BoolAttr(False),
             "per_channel": BoolAttr(False),
             "rounding_mode": EnumAttr("tosa", "rounding_mode", "SINGLE_ROUND"),
             "scale32": BoolAttr(True)}
    return rw.emit1("tosa.rescale", operands, out_t, props)


def _i32(t: Any) -> TensorType:
    assert isinstance(t, TensorType)
    return TensorType(t.shape, _I32, t.encoding)


def _scales(op: Operation) -> list[tuple[float, int]] | None:
    """(scale, zero point) of every operand and result, all per-tensor quantized; else None."""
    out = []
    for v in list(op.operands) + list(op.results):
        if not is_quantized(v.type):
            if op.name == "stablehlo.compare" and v in op.results:
                continue
            return None
        qt = quantized_type(v.type)
        if qt.is_per_axis:
            return None
        out.append((qt.scales[0], qt.zero_points[0]))
    return out


def _input_shift(qt: QuantizedType) -> int:
    return _SHIFT_16_BIT if qt.storage_type.width == 16 else _SHIFT_8_BIT


def _pattern_for(consts: _ConstCache):
    def pattern(rw: Rewriter, op: Operation) -> Sequence[Value] | None:
        name = op.name
        if name not in _HANDLED:
            return None
        params = _scales(op)
        if params is None:
            return None
        operands = [rw.get(v) for v in op.operands]
        if name == "stablehlo.abs":
            (s_in, z_in), (s_out, z_out) = params
            a = _rescale(rw, consts, operands[0], _i32(op.operands[0].type), 1.0, z_in, 0)
            r = rw.emit1(name, [a], _i32(op.results[0].type))
            return [_rescale(rw, consts, r, op.results[0].type, s_in / s_out, 0, z_out)]
        if name == "stablehlo.compare":
            (sl, zl), (sr, zr) = params
            shift = _input_shift(quantized_type(op.operands[0].type))
            m = max(sl, sr)
            a = _rescale(rw, consts, operands[0], _i32(op.operands[0].type),
                         sl / m * (1 << shift), zl, 0)
            b = _rescale(rw, consts, operands[1], _i32(op.operands[1].type),
                         sr / m * (1 << shift), zr, 0)
            return [rw.emit1(name, [a, b], op.results[0].type, dict(op.properties))]
        if any(quantized_type(v.type).storage_type.is_unsigned
               for v in list(op.operands) + list(op.results)):
            return None  # upstream: signed storage types only
        (sl, zl), (sr, zr), (so, zo) = params
        res_qt = quantized_type(op.results[0].type)
        if name in ("stablehlo.add", "stablehlo.subtract", "stablehlo.maximum",
                    "stablehlo.minimum"):
            shift = _input_shift(res_qt)
            m = max(sl, sr) * (2.0 if name in ("stablehlo.add", "stablehlo.subtract") else 1.0)
            ls, rs = sl / m * (1 << shift), sr / m * (1 << shift)
            out_scale = m / (so * (1 << shift))
        else:  # multiply and divide: upstream's GetMulDivRescaleScales, sl * sr / so for both
            ls = rs = 1.0
            out_scale = sl * sr / so
        a = _rescale(rw, consts, operands[0], _i32(op.operands[0].type), ls, zl, 0)
        b = _rescale(rw, consts, operands[1], _i32(op.operands[1].type), rs, zr, 0)
        r = rw.emit1(name, [a, b], _i32(op.results[0].type))
        return [_rescale(rw, consts, r, op.results[0].type, out_scale, 0, zo)]

    return pattern


_HANDLED = frozenset("stablehlo." + n for n in
                     "add subtract multiply divide maximum minimum abs compare".split())


@register_pass("stablehlo-quant-legalize-to-tosa-rescale")
def quant_legalize_to_tosa_rescale(module: Module, options: dict[str, str] | None = None
                                   ) -> Module:
    """Quantized add, subtract, multiply, divide, maximum, minimum, abs and compare (per-tensor
    types) become the op on i32 between ``tosa.rescale`` ops, as upstream:

    * add/subtract: operands rescaled to ``2 * max(sl, sr)`` with 20 extra bits (15 for 16-bit
      storage), the result by ``2 * max(sl, sr) / (so * 2**20)``;
    * maximum/minimum/compare: the same with ``max(sl, sr)``;
    * multiply and divide: operands minus their zero points (scale 1), the result by
      ``sl * sr / so`` (for divide as upstream, though the quotient's scale is
      ``sl / (sr * so)``: see docs/quantization.md);
    * abs: operand minus its zero point, the result by ``s_in / s_out``.

    compare keeps its attributes (a ``FLOAT``/``TOTALORDER`` compare_type now on i32 operands,
    as upstream). Binary ops need signed storage types. Multipliers and shifts are TOSA's
    (``computeMultiplierAndShift``, 32-bit), rounding is SINGLE_ROUND; the ``tosa.const`` ops
    are deduplicated and moved to the top of each function, as upstream's greedy driver does.
    """
    consts = _ConstCache()
    return consts.hoist(Rewriter(_pattern_for(consts)).module(module))


# --- tosa-rescale-legalize-to-stablehlo ----------------------------------------------------------


def _param_values(op: Operation, rw: Rewriter) -> tuple[np.ndarray, np.ndarray, int, int]:
    if len(op.operands) == 5:
        vals = []
        for v in op.operands[1:]:
            src = rw.get(v)
            owner = src.owner
            attr = None
            if isinstance(owner, Operation) and owner.name in ("tosa.const", "stablehlo.constant"):
                attr = owner.attr("values") or owner.attr("value")
            if not isinstance(attr, DenseElementsAttr):
                raise PassError("tosa.rescale: multiplier, shift and zero points must be "
                                "constants to be lowered", op.location)
            a = np.asarray(attr.array)
            vals.append(a.astype(np.int16).astype(np.int64) if a.dtype.kind not in "iub"
                        else a.astype(np.int64))
        return vals[0].reshape(-1), vals[1].reshape(-1), int(vals[2].reshape(-1)[0]), \
            int(vals[3].reshape(-1)[0])
    from ..attributes import ints

    mult = np.asarray(ints(op.attr("multiplier"), ()), np.int64)
    shift = np.asarray(ints(op.attr("shift"), ()), np.int64)
    return mult, shift, rescale_int_attr(op, "input_zp"), rescale_int_attr(op, "output_zp")


def _lower_rescale(rw: Rewriter, op: Operation) -> Sequence[Value] | None:
    if op.name != "tosa.rescale":
        return None
    x = rw.get(op.operands[0])
    in_t, out_t = op.operands[0].type, op.results[0].type
    if not (isinstance(in_t, TensorType) and isinstance(out_t, TensorType) and in_t.is_static):
        raise PassError("tosa.rescale: only static shapes can be lowered", op.location)
    shape = tuple(in_t.shape)
    in_int, out_int = integer_storage(in_t), integer_storage(out_t)
    if in_int is None or out_int is None:
        raise PassError("tosa.rescale: integer or quantized input and output required",
                        op.location)
    mult, shift, izp, ozp = _param_values(op, rw)
    per_channel = rescale_flag(op, "per_channel")
    mode = rescale_rounding_mode(op)
    in_unsigned = rescale_flag(op, "input_unsigned")
    out_unsigned = rescale_flag(op, "output_unsigned") or out_int.is_unsigned

    def full(values: np.ndarray, et: Any) -> Value:
        v = np.asarray(values)
        if per_channel and v.size > 1:
            v = np.broadcast_to(v.reshape(-1), shape)
        else:
            v = np.broadcast_to(v.reshape(-1)[:1].reshape(()), shape)
        return rw.constant(np.ascontiguousarray(v), et)

    if isinstance(in_t.element_type, QuantizedType):
        x = rw.emit1("stablehlo.bitcast_convert", [x], TensorType(shape, in_int, in_t.encoding))
    if in_unsigned and not in_int.is_unsigned:
        x = rw.emit1("stablehlo.bitcast_convert", [x],
                     TensorType(shape, IntegerType(in_int.width, "unsigned")))
        izp &= (1 << in_int.width) - 1
    if out_unsigned and not out_int.is_unsigned:
        ozp &= (1 << out_int.width) - 1
    multiplier = full(mult, _I32 if rescale_flag(op, "scale32", True) else element_type("i16"))
    shift_v = full(shift, _I8)
    # i32 constants converted to i64, as upstream (i64 where an unsigned zero point needs it)
    input_zp32 = full(np.int64(izp), _I32 if -2**31 <= izp < 2**31 else _I64)
    output_zp32 = full(np.int64(ozp), _I32 if -2**31 <= ozp < 2**31 else _I64)
    ones = full(np.int64(1), _I64)
    w = out_int.width
    lo, hi = (0, (1 << w) - 1) if out_unsigned else (-(1 << (w - 1)), (1 << (w - 1)) - 1)
    lo_v, hi_v = full(np.int64(lo), _I64), full(np.int64(hi), _I64)
    m64 = rw.convert(multiplier, _I64)
    s64 = rw.convert(shift_v, _I64)
    input_zp = rw.convert(input_zp32, _I64)
    output_zp = rw.convert(output_zp32, _I64)
    v = rw.convert(x, _I64)
    v = rw.binary("stablehlo.subtract", v, input_zp)
    rnd = rw.binary("stablehlo.shift_left", ones, rw.binary("stablehlo.subtract", s64, ones))
    if mode == "DOUBLE_ROUND" and (shift > 31).any():
        zero = full(np.int64(0), _I64)
        bump = full(np.int64(1 << 30), _I64)
        nonneg = rw.emit1("stablehlo.compare", [v, zero], TensorType(shape, element_type("i1")),
                          {"comparison_direction": EnumAttr("stablehlo", "comparison_direction",
                                                            "GE")})
        signed_bump = rw.emit1("stablehlo.select",
                               [nonneg, bump, rw.unary("stablehlo.negate", bump)],
                               TensorType(shape, _I64))
        big = rw.emit1("stablehlo.compare", [s64, full(np.int64(31), _I64)],
                       TensorType(shape, element_type("i1")),
                       {"comparison_direction": EnumAttr("stablehlo", "comparison_direction",
                                                         "GT")})
        rnd = rw.binary("stablehlo.add", rnd,
                        rw.emit1("stablehlo.select", [big, signed_bump, zero],
                                 TensorType(shape, _I64)))
    r = rw.binary("stablehlo.multiply", v, m64)
    r = rw.binary("stablehlo.add", r, rnd)
    r = rw.binary("stablehlo.shift_right_arithmetic", r, s64)
    r = rw.binary("stablehlo.add", r, output_zp)
    r = rw.clamp(lo_v, r, hi_v)
    if out_unsigned and not out_int.is_unsigned:
        r = rw.convert(r, IntegerType(w, "unsigned"))
        r = rw.emit1("stablehlo.bitcast_convert", [r], TensorType(shape, out_int))
    else:
        r = rw.convert(r, out_int)
    if isinstance(out_t.element_type, QuantizedType):
        r = rw.emit1("stablehlo.bitcast_convert", [r], out_t)
    return [r]


@register_pass("tosa-rescale-legalize-to-stablehlo")
def tosa_rescale_legalize_to_stablehlo(module: Module, options: dict[str, str] | None = None
                                       ) -> Module:
    """``tosa.rescale`` (constant parameters, static shapes) to StableHLO integer arithmetic in
    i64, as upstream: ``clamp((value - input_zp) * multiplier + (1 << (shift - 1)) >> shift +
    output_zp)``, converted to the output storage type (bitcast back to a quantized output
    type). Also handles what upstream refuses: per-channel parameters, DOUBLE_ROUND,
    ``scale32 = false`` and unsigned input/output.
    """
    from ._rewrite import dead_code_elimination

    return dead_code_elimination(Rewriter(_lower_rescale).module(module))
