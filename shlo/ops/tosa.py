"""The TOSA ops StableHLO programs meet: `tosa.rescale` (TOSA 1.0 spec, "RESCALE"), the integer
rescaling that StableHLO's quantized ops lower to (passes/tosa_rescale.py), `tosa.const`, and the
ops `stablehlo-legalize-to-tosa` emits (shlo/ops/tosa_ops.py: elementwise ops, concat, reshape,
matmul, const_shape, tile, gather, reduce_sum/max, slice, transpose, while_loop, yield).

`tosa.rescale` and `tosa.const` work on storage values (QUANTIZED_AWARE, QUANTIZED_STORAGE).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from ..attributes import DenseElementsAttr, EnumAttr, bool_attr, int_attr, ints
from ..errors import Diagnostics
from ..ir import Operation, Value
from ..registry import QUANTIZED_AWARE, QUANTIZED_STORAGE, Kernel, define, kernel, verifier
from ..types import IntegerType, QuantizedType, TensorType, Type
from . import _constraints as _c
from .quantization import storage_int64
from .tosa_ops import tosa_format  # (also defines the ops the legalization emits)

if TYPE_CHECKING:  # pragma: no cover
    from ..interpreter.evaluator import PrepareContext

__all__ = ["multiplier_and_shift", "apply_rescale", "rescale_int_attr", "rescale_flag",
           "rescale_rounding_mode", "integer_storage"]

_I64 = np.dtype(np.int64)
_TOSA = {QUANTIZED_AWARE, QUANTIZED_STORAGE}


def _shape_of(t: Type) -> tuple | None:
    return t.shape if isinstance(t, TensorType) else None


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
    """An integer attribute of the older ``tosa.rescale`` form (``input_zp = -1 : i32``; a
    dense attribute gives its first element)."""
    v = op.attr(name)
    if isinstance(v, DenseElementsAttr) and v.array.size:
        return int(v.array.reshape(-1)[0])
    return int_attr(op, name, default)


def rescale_flag(op: Operation, name: str, default: bool = False) -> bool:
    """A boolean attribute of ``tosa.rescale`` (``scale32``, ``per_channel``, ...)."""
    return bool_attr(op, name, default)


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


define("tosa.const", traits=_TOSA, summary="TOSA's constant")


@kernel("tosa.const")
def tosa_const(op: Operation, ctx: PrepareContext) -> Kernel:
    """TOSA ``const``: ``output = values`` (older spelling: ``value``)."""
    attr = op.attr("values") or op.attr("value")
    arr = np.asarray(attr.array)
    arr.flags.writeable = False
    return lambda: (arr,)


define("tosa.rescale", traits=_TOSA, inherent="", summary="TOSA's integer rescale",
       syntax=tosa_format)


@kernel("tosa.rescale")
def tosa_rescale(op: Operation, ctx: PrepareContext) -> Kernel:
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
        v = storage_int64(x)
        if in_unsigned and in_width < 64:
            v = v & np.int64((1 << in_width) - 1)
        return v

    def run(x: Any, *params: Any) -> list[np.ndarray]:
        if operand_form:
            mult = storage_int64(params[0]).reshape(-1)
            shift = storage_int64(params[1]).reshape(-1)
            izp = int(storage_int64(params[2]).reshape(-1)[0])
            ozp = int(storage_int64(params[3]).reshape(-1)[0])
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
def _verify_tosa_rescale(op: Operation, diag: Diagnostics) -> None:
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
    if not _c.compatible_shapes(_shape_of(in_t), _shape_of(out_t)):
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

