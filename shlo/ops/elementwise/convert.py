"""Conversions between element types: bitcast_convert, convert, reduce_precision (spec order).

convert rounds once to nearest even (float -> integer truncates and saturates, integer ->
integer wraps); bitcast_convert reinterprets bits (little-endian); reduce_precision rounds the
significand and the exponent range as XLA does.
"""

from __future__ import annotations

import re
import sys
from typing import TYPE_CHECKING, Any

import numpy as np

from ...attributes import IntegerAttr, int_attr
from ...dtypes import uint_of_size
from ...errors import Diagnostics, ExecutionError
from ...ir import Operation
from ...registry import (
    DOQ, ELEMENTWISE, QUANTIZED_AWARE, QUANTIZED_STORAGE, Kernel, define, inference, kernel,
    verifier,
)
from ...syntax.directives import (
    I32, ATTRDICT, OPERANDS, Format, check_attr_kind, declarative, parse_attrdict, print_types,
    types, types_same,
)
from ...types import ComplexType, ElementType, FloatType, IntegerType, QuantizedType, element_type
from .. import _constraints as _c, _half
from .._half import half_format
from .._numeric import (
    F32, F64, float_info, float_to_int, int_info, int_to_float, round_f64_to, rto_f32,
)
from ._common import UNARY, Fn, infer_same, one, operand_et, result_et, unsupported
from ._tables import table_eligible, tabled_narrowing, tabled_unary

if TYPE_CHECKING:  # pragma: no cover
    from ...interpreter.evaluator import PrepareContext
    from ...syntax.parser import Parser
    from ...syntax.printer import Printer

__all__ = ["convert_fn"]

# --- bitcast_convert (spec "bitcast_convert") -----------------------------------------------------

define("stablehlo.bitcast_convert", spec="bitcast_convert",
       traits={ELEMENTWISE, QUANTIZED_AWARE, QUANTIZED_STORAGE},
       syntax=declarative(OPERANDS, ATTRDICT, types("functional")))


def _storage(et: Any) -> Any:
    """The storage type of a quantized element type; other element types as they are."""
    return et.storage_type if isinstance(et, QuantizedType) else et


def _num_bits(et: ElementType) -> int:
    """num_bits(E) of the spec (storage type of a quantized type)."""
    n = _c.num_bits(et)
    if n is None:
        raise TypeError(f"no bit width for {et}")
    return n


def _byte_exact(et: ElementType) -> bool:
    """True when the numpy storage holds exactly the type's bits (no i1, no sub-byte types)."""
    return not et.is_bool and _num_bits(et) == 8 * et.dtype.itemsize


def _bits_dtype(nbits: int) -> np.dtype:
    """The smallest unsigned dtype holding ``nbits`` bits."""
    return uint_of_size(max(8, 1 << (max(nbits, 1) - 1).bit_length()) // 8)


def _to_bits(x: Any, et: ElementType) -> np.ndarray:
    """Unsigned integers holding the type's bits in their low ``num_bits`` bits."""
    x = np.asarray(x)
    if et.is_bool:
        return x.astype(np.uint8)
    if isinstance(et, IntegerType) and not int_info(et).native:
        return np.bitwise_and(x.astype(int_info(et).wide).view(np.uint8), int_info(et).mask)
    return x.view(_bits_dtype(_num_bits(et)))


def _from_bits(bits: np.ndarray, et: ElementType) -> np.ndarray:
    """The values of type ``et`` whose bits are the low ``num_bits`` bits of ``bits``."""
    if et.is_bool:
        return bits != 0
    n = _num_bits(et)
    b = bits.astype(_bits_dtype(n))
    if isinstance(et, IntegerType) and not int_info(et).native:
        info = int_info(et)
        if info.signed:  # sign-extend the low `width` bits into int8
            sign = 1 << (info.width - 1)
            v = np.subtract(np.bitwise_xor(b, sign).astype(np.int8), np.int8(sign))
            return v.astype(info.dtype)
        return b.astype(np.int64).astype(info.dtype)
    return b.view(et.dtype)


def _contiguous(x: Any) -> np.ndarray:
    x = np.asarray(x)
    return x if x.flags.c_contiguous else x.copy()


@kernel("stablehlo.bitcast_convert")
def bitcast_convert(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: bitcast_convert. Little-endian: with a narrower result, element ``[..., j]`` holds
    bits ``j*num_bits(E')`` upward of the operand element (the spec's example). Quantized
    tensors are reinterpreted through their storage type."""
    src, dst = _storage(operand_et(op)), _storage(result_et(op))
    n_in, n_out = _num_bits(src), _num_bits(dst)
    rdt = dst.dtype
    if src == dst:
        return lambda x: (x,)
    if _byte_exact(src) and _byte_exact(dst) and sys.byteorder == "little":
        if n_in == n_out:
            return lambda x: (np.asarray(x).view(rdt),)
        if n_out < n_in:
            k = n_in // n_out

            def split(x: Any) -> tuple[np.ndarray]:
                x = _contiguous(x)
                return (x.reshape(x.shape + (1,)).view(rdt).reshape(x.shape + (k,)),)

            return split

        def join(x: Any) -> tuple[np.ndarray]:
            x = _contiguous(x)
            return (x.view(rdt).reshape(x.shape[:-1]),)

        return join

    if n_in == n_out:
        return lambda x: (_from_bits(_to_bits(x, src), dst),)
    if n_out < n_in:
        k = n_in // n_out
        wdt = _bits_dtype(n_in)
        shifts = (np.arange(k) * n_out).astype(wdt)
        mask = wdt.type((1 << n_out) - 1)

        def split_bits(x: Any) -> tuple[np.ndarray]:
            b = _to_bits(x, src)[..., None]
            return (_from_bits(np.bitwise_and(np.right_shift(b, shifts), mask), dst),)

        return split_bits
    k = n_out // n_in
    wdt = _bits_dtype(n_out)
    shifts = (np.arange(k) * n_in).astype(wdt)

    def join_bits(x: Any) -> tuple[np.ndarray]:
        b = _to_bits(x, src).astype(wdt)
        return (_from_bits(np.bitwise_or.reduce(np.left_shift(b, shifts), axis=-1), dst),)

    return join_bits


@verifier("stablehlo.bitcast_convert")
def _verify_bitcast_convert(op: Operation, diag: Diagnostics) -> None:
    """(C1) shapes agree, with one extra innermost dimension on the side of the narrower
    element type, whose size times its width is the wider width; (C2) complex converts only to
    complex."""
    if not _c.signature(op, diag, [_c.TENSOR_QA], [_c.TENSOR_QA]):
        return
    operand, result = op.operands[0].type, op.results[0].type
    e, e2 = _storage(operand.element_type), _storage(result.element_type)
    if isinstance(e, ComplexType) != isinstance(e2, ComplexType):
        diag.error(op, "C2", "cannot convert between real and complex types: "
                             + _c.types_str([operand, result]))
        return
    if operand.shape is None or result.shape is None:
        return
    w, w2 = _c.num_bits(e), _c.num_bits(e2)
    if w is None or w2 is None:
        return
    got = f"Got: '{_c.type_str(operand)}' and '{_c.type_str(result)}'"
    if w == w2:
        if not _c.compatible_shapes(operand.shape, result.shape):
            diag.error(op, "C1", "operand and result shapes must match except for the innermost"
                                 " dimension of the shape with the smaller element type. " + got
                                 + ".")
        return
    small, large = (operand, result) if w < w2 else (result, operand)
    ws, wl = min(w, w2), max(w, w2)
    if len(small.shape) != len(large.shape) + 1:
        diag.error(op, "C1", f"rank of smaller element type ({len(small.shape)}) should be 1 "
                             f"more than rank of larger element type ({len(large.shape)}), but "
                             f"{len(small.shape)} != {len(large.shape)} + 1.")
        return
    if not _c.compatible_shapes(small.shape[:-1], large.shape):
        diag.error(op, "C1", "operand and result shapes must match except for the innermost "
                             "dimension of the shape with the smaller element type. " + got + ".")
        return
    last = small.shape[-1]
    if last is not None and last * ws != wl:
        diag.error(op, "C1", f"requires compatible bit widths. {got}, but {ws} * {last} != "
                             f"{wl}.")


# --- convert (spec "convert") ---------------------------------------------------------------------

define("stablehlo.convert", spec="convert", traits={ELEMENTWISE}, syntax=UNARY)


def _float_to_float(src: np.dtype, dst: np.dtype) -> Fn:
    """Float-to-float conversion rounding once to nearest even."""
    if src == dst:
        return lambda x: x
    if src == F64 and dst != F32:
        return lambda x: round_f64_to(x, dst)

    def cast(x: Any) -> Any:
        with np.errstate(over="ignore", invalid="ignore"):
            return np.asarray(x).astype(dst)

    if (src == F32 and half_format(dst)) or (dst == F32 and half_format(src)):
        # f32 <-> f16/bf16 through the compiled loops (numpy's and ml_dtypes' bits)
        def fast(x: Any) -> Any:
            r = _half.narrow(x, dst) if src == F32 else _half.widen(x)
            return cast(x) if r is None else r

        return fast
    return cast


def convert_fn(src: ElementType, dst: ElementType) -> Fn:
    """The conversion of spec `convert` from element type ``src`` to ``dst`` (x -> array).

    From a float of at most 16 bits (but f16/bf16 -> f32, a compiled loop) it is a lookup
    table of :func:`careful_convert` over every source bit pattern (``_tables.tabled_unary``;
    ml_dtypes' casts take ~5 ns an element); float32, f16/bf16 (widened exactly) and float64
    (rounded to odd in float32 first) to a one-byte format round through
    ``_tables.tabled_narrowing``. Results are :func:`careful_convert`'s, bit for bit."""
    careful = careful_convert(src, dst)
    if src == dst or not src.is_float:
        return careful
    sdt, ddt = src.dtype, dst.dtype
    if table_eligible(sdt) and not (ddt == F32 and half_format(sdt)):
        return tabled_unary(f"convert to {dst}", careful, sdt, ddt) or careful
    if not (dst.is_float and ddt.itemsize == 1 and sdt in (F32, F64) or half_format(sdt)):
        return careful
    narrow = tabled_narrowing(ddt)
    if narrow is None:
        return careful
    if sdt == F64:
        return lambda x: narrow(rto_f32(np.asarray(x, F64)))
    if sdt == F32:
        return narrow
    widen = convert_fn(src, element_type("f32"))
    return lambda x: narrow(widen(x))


def careful_convert(src: ElementType, dst: ElementType) -> Fn:
    """The conversion of spec `convert` from ``src`` to ``dst``, by numpy's and ml_dtypes' casts
    (and shlo's careful rounding where they round twice)."""
    if src == dst:
        return lambda x: x
    sdt, ddt = src.dtype, dst.dtype
    if src.is_complex:
        if dst.is_complex:
            return lambda x: np.asarray(x).astype(ddt)
        # complex -> real: the imaginary part is dropped, the real part converts as a float
        inner = careful_convert(src.element, dst)  # type: ignore[attr-defined]
        return lambda x: inner(np.real(x))
    if dst.is_bool:
        return lambda x: np.not_equal(x, 0)
    if src.is_bool:
        return lambda x: np.asarray(x).astype(ddt)
    if dst.is_complex:
        inner = careful_convert(src, dst.element)  # type: ignore[attr-defined]
        return lambda x: np.asarray(inner(x)).astype(ddt)
    if src.is_integer and dst.is_integer:
        si, di = int_info(src), int_info(dst)  # type: ignore[arg-type]
        if si.native and di.native:
            return lambda x: np.asarray(x).astype(ddt)  # wraps
        return lambda x: np.asarray(x).astype(np.int64).astype(ddt)
    if src.is_integer and dst.is_float:
        if ddt == F64 or (ddt == F32 and sdt.itemsize < 8):
            return lambda x: x.astype(ddt)  # exact, or one rounding by numpy's C cast
        if ddt == F32:
            return lambda x: int_to_float(x, ddt)

        def narrow(x: Any) -> Any:
            with np.errstate(over="ignore", invalid="ignore"):
                return int_to_float(x, ddt)

        return narrow
    if src.is_float and dst.is_integer:
        info = int_info(dst)  # type: ignore[arg-type]
        return lambda x: float_to_int(x, info)
    if src.is_float and dst.is_float:
        return _float_to_float(sdt, ddt)
    raise TypeError(f"no conversion from {src} to {dst}")


@kernel("stablehlo.convert")
def convert(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: convert. Rounds once to nearest even; float -> integer truncates and saturates
    (NaN -> 0); integer -> integer wraps; -> i1 is `!= 0`; complex -> real keeps the real part."""
    src, dst = operand_et(op), result_et(op)
    try:
        fn = convert_fn(src, dst)
    except TypeError as e:
        raise ExecutionError(f"'stablehlo.convert': {e}", op.location) from None
    return one(fn)


_CONVERTIBLE = _c.TC(_c.F | _c.B | _c.I | _c.C)


@verifier("stablehlo.convert")
def _verify_convert(op: Operation, diag: Diagnostics) -> None:
    """(C1) `shape(operand) = shape(result)`."""
    if _c.signature(op, diag, [_CONVERTIBLE], [_CONVERTIBLE]):
        _c.same_shapes(op, diag, "C1")


# --- reduce_precision (spec "reduce_precision") ---------------------------------------------------


def _parse_reduce_precision(p: Parser, name: str, nres: int, start: int) -> Operation:
    """`stablehlo.reduce_precision %x, format = e5m10 : T`."""
    operand = p.operand()
    p.expect(",")
    p.keyword("format")
    p.expect("=")
    off = p.start
    em = p.bare()
    m = re.fullmatch(r"e([0-9]{1,12})m([0-9]{1,12})", em)
    if not m:
        p.error(f"expected exponent mantissa in format e#m#, saw {em[:40]}", off, found=False)
    e_, m_ = int(m.group(1)), int(m.group(2))  # type: ignore[union-attr]
    if e_ >= 2 ** 31 or m_ >= 2 ** 31:
        p.error("unable to parse exponent or mantissa", off, found=False)
    props: dict[str, Any] = {"exponent_bits": IntegerAttr(e_, I32),
                             "mantissa_bits": IntegerAttr(m_, I32)}
    attrs: dict[str, Any] = {}
    parse_attrdict(p, name, props, attrs)
    p.expect(":")
    res = types_same(p, [operand])
    return Operation(name, [operand], res, props, attrs)


def _print_reduce_precision(pr: Printer, op: Operation) -> str | None:
    e_, m_ = op.attr("exponent_bits"), op.attr("mantissa_bits")
    if not (check_attr_kind(e_, "i32") and check_attr_kind(m_, "i32")) \
            or len(op.operands) != 1 or op.regions or e_.value < 0 or m_.value < 0:
        return None  # (the generic form: `e1m-1` would not parse back)
    d = pr.attr_dict(op, {"exponent_bits", "mantissa_bits"})
    return (f" {pr.val(op.operands[0])}, format = e{e_.value}m{m_.value}{d} : "
            f"{print_types(pr, op, 'same')}")


define("stablehlo.reduce_precision", spec="reduce_precision", traits={ELEMENTWISE, DOQ},
       syntax=Format(_parse_reduce_precision, _print_reduce_precision,
                     frozenset({"exponent_bits", "mantissa_bits"})))
inference("stablehlo.reduce_precision")(infer_same)


def _reduce_precision_bits(x: Any, width: int, src_mantissa: int, bits_dt: np.dtype,
                           exponent_bits: int, mantissa_bits: int) -> np.ndarray:
    """XLA's / the upstream interpreter's bit algorithm on an IEEE-like format."""
    xb = np.asarray(x)
    v = xb.view(bits_dt)
    t = bits_dt.type
    if mantissa_bits < src_mantissa:
        shift = src_mantissa - mantissa_bits
        last_bit_mask = 1 << shift
        base_bias = (last_bit_mask >> 1) - 1
        last_bit = np.right_shift(np.bitwise_and(v, t(last_bit_mask)), shift)
        v = np.add(v, np.add(last_bit, t(base_bias)))
        v = np.bitwise_and(v, t(~(last_bit_mask - 1) & ((1 << (8 * bits_dt.itemsize)) - 1)))
    src_exponent = width - src_mantissa - 1
    if exponent_bits < src_exponent:
        sign_mask = t(1 << (width - 1))
        exp_mask = t(((1 << src_exponent) - 1) << src_mantissa)
        bias = (1 << (src_exponent - 1)) - 1
        reduced_bias = (1 << (exponent_bits - 1)) - 1
        max_exp, min_exp = bias + reduced_bias, bias - reduced_bias
        x_exp = np.bitwise_and(v, exp_mask)
        overflows = x_exp > t(max_exp << src_mantissa)
        underflows = x_exp <= t(min_exp << src_mantissa)
        signed_zero = np.bitwise_and(v, sign_mask)
        signed_inf = np.bitwise_or(signed_zero, exp_mask)
        v = np.where(overflows, signed_inf, np.where(underflows, signed_zero, v))
    if width < 8 * bits_dt.itemsize:  # f4/f6 live in the low bits of a byte
        v = np.bitwise_and(v, t((1 << width) - 1))
    r = np.asarray(v).view(xb.dtype)
    nan = np.isnan(xb)
    if mantissa_bits > 0:
        return np.where(nan, xb, r)
    return np.where(nan, np.asarray(np.inf, xb.dtype), r)


@kernel("stablehlo.reduce_precision")
def reduce_precision(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: reduce_precision. Rounds the significand to `mantissa_bits` (nearest even), then
    overflows to inf / flushes to zero outside the range of `exponent_bits` (no subnormals).
    Works on the bits of f16, bf16, f32 and f64 values, as XLA and the upstream interpreter do;
    one-byte formats (f8, f6, f4) are reduced as f16 values (f32 for f8E8M0FNU) and converted
    back, as XLA does (the upstream interpreter works on their own bits, which differs for their
    subnormals and for formats without inf). NaN stays NaN (+inf when mantissa_bits = 0)."""
    et = operand_et(op)
    if not et.is_float:
        raise unsupported(op, et)
    exponent_bits = int_attr(op, "exponent_bits", None)
    mantissa_bits = int_attr(op, "mantissa_bits", None)
    if exponent_bits is None or mantissa_bits is None:
        raise ExecutionError("reduce_precision needs exponent_bits and mantissa_bits",
                             op.location)
    info = float_info(et)
    if info.width >= 16:
        args = (info.width, info.mantissa_bits, info.bits, exponent_bits, mantissa_bits)
        return lambda x: (_reduce_precision_bits(x, *args),)
    dt = et.dtype
    wider = np.dtype(np.float16) if info.has_sign else F32  # holds every value exactly
    w = float_info(FloatType("f16" if wider == np.float16 else "f32"))
    args = (w.width, w.mantissa_bits, w.bits, exponent_bits, mantissa_bits)

    def narrow(x: Any) -> tuple[np.ndarray]:
        r = _reduce_precision_bits(np.asarray(x, wider), *args)
        with np.errstate(over="ignore", invalid="ignore"):
            return (r.astype(dt),)

    return narrow


@verifier("stablehlo.reduce_precision")
def _verify_reduce_precision(op: Operation, diag: Diagnostics) -> None:
    """(C1) `baseline_type(operand) = baseline_type(output)`; (C2) `1 <= exponent_bits`;
    (C3) `0 <= mantissa_bits`."""
    if not _c.signature(op, diag, [_c.FP_Q_TENSOR], [_c.FP_Q_TENSOR],
                        attrs={"exponent_bits": "int", "mantissa_bits": "int"}):
        return
    e = int_attr(op, "exponent_bits", None)
    m = int_attr(op, "mantissa_bits", None)
    if e is not None and e < 1:
        diag.error(op, "C2", f"attribute 'exponent_bits' failed to satisfy constraint: 32-bit "
                             f"signless integer attribute whose value is positive (got {e})")
    if m is not None and m < 0:
        diag.error(op, "C3", f"attribute 'mantissa_bits' failed to satisfy constraint: 32-bit "
                             f"signless integer attribute whose value is non-negative (got {m})")
    _c.compatible_all(op, diag, "C1")
