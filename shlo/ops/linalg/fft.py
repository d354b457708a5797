"""fft (spec "fft"): FFT, IFFT, RFFT and IRFFT over the trailing `size(fft_length)` dimensions,
computed by ``scipy.fft`` (pocketfft)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from .._lazy import fft as scipy_fft
from ...attributes import enum_attr, ints_attr
from ...dtypes import C64, C128, F32, F64
from ...ir import Operation
from ...registry import Kernel, define, inference, kernel, verifier
from ...syntax.directives import ATTRDICT, COMMA, OPERAND, declarative, named, types
from ...types import ComplexType, FloatType, TensorType, Type
from .. import _constraints as _c

if TYPE_CHECKING:  # pragma: no cover
    from ...errors import Diagnostics
    from ...interpreter.evaluator import PrepareContext

define("stablehlo.fft", spec="fft", summary="forward and inverse Fourier transforms",
       syntax=declarative(OPERAND, COMMA, *named("type", "fft_type", "enum:fft_type"), COMMA,
                          *named("length", "fft_length", "i64list"), ATTRDICT,
                          types("functional")))

_FFT_TYPES = ("FFT", "IFFT", "RFFT", "IRFFT")


def _half(n: int) -> int:
    """The number of complex values of the RFFT of `n` real ones (spec: `n / 2 + 1`; 0 for 0)."""
    return 0 if n == 0 else n // 2 + 1


def _result_shape(shape: tuple[int, ...], fft_type: str,
                  fft_length: tuple[int, ...]) -> tuple[int, ...]:
    """The result shape (spec (C4), (C5)): RFFT keeps `fft_length[-1] / 2 + 1` complex values of
    the last dimension, IRFFT produces `fft_length[-1]` real ones."""
    if not fft_length:
        return shape
    if fft_type == "RFFT":
        return shape[:-1] + (_half(fft_length[-1]),)
    if fft_type == "IRFFT":
        return shape[:-1] + (fft_length[-1],)
    return shape


@kernel("stablehlo.fft")
def fft(op: Operation, ctx: PrepareContext) -> Kernel:
    """Spec "fft": FFT, IFFT, RFFT, IRFFT over the trailing `size(fft_length)` dimensions.

    Computed by ``scipy.fft`` (pocketfft) in the operand's own precision (complex64/f32 stay
    single precision), which agrees bit for bit with XLA CPU's FFT on the test corpus; IFFT and
    IRFFT are normalized by 1/prod(fft_length), as the spec's inverse transforms are.
    """
    fft_type = enum_attr(op, "fft_type", "FFT")
    fft_length = tuple(ints_attr(op, "fft_length") if op.attr("fft_length") is not None else ())
    axes = tuple(range(-len(fft_length), 0))
    result_dtype = op.results[0].type.dtype
    double = op.operands[0].type.dtype in (F64, C128)
    real_dtype, complex_dtype = (F64, C128) if double else (F32, C64)
    transforms = {"FFT": (scipy_fft.fftn, complex_dtype), "IFFT": (scipy_fft.ifftn, complex_dtype),
                  "RFFT": (scipy_fft.rfftn, real_dtype), "IRFFT": (scipy_fft.irfftn, complex_dtype)}
    if fft_type not in transforms:
        raise ValueError(f"fft: unknown fft_type {fft_type}")
    transform, operand_dtype = transforms[fft_type]

    def run(operand: Any) -> Sequence[Any]:
        x = np.asarray(operand)
        if x.size == 0 or 0 in fft_length:
            return (np.zeros(_result_shape(x.shape, fft_type, fft_length), result_dtype),)
        out = transform(x.astype(operand_dtype, copy=False), s=fft_length, axes=axes)
        return (out.astype(result_dtype, copy=False),)

    return run


@inference("stablehlo.fft")
def _infer_fft(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """(C1) `size(fft_length) <= rank(operand)`; (C2) the element types per `fft_type`; (C3)
    `1 <= size(fft_length) <= 3`; (C4) the innermost dimensions match `fft_length`; (C5) the
    result shape (:func:`_result_shape`)."""
    if len(op.operands) != 1 or not isinstance(op.operands[0].type, TensorType):
        return None
    operand = op.operands[0].type
    kind = enum_attr(op, "fft_type", None)
    length = ints_attr(op, "fft_length", None)
    if kind not in _FFT_TYPES:
        diag.error(op, "I2", f"fft_type must be one of FFT, IFFT, RFFT, IRFFT, got {kind}")
        return None
    if length is None:
        return None
    k = len(length)
    if not 1 <= k <= 3:
        diag.error(op, "C3", f"rank must be between 1 and 3, but got {k}.")
        return None
    shape = operand.shape
    if shape is not None and len(shape) < k:
        diag.error(op, "C1", f"operand rank must not be less than fft rank of {k} for operand of"
                             f" type '{_c.type_str(operand)}'")
        return None
    et = operand.element_type
    if kind == "RFFT":
        if not isinstance(et, FloatType) or et.name not in ("f32", "f64"):
            diag.error(op, "C2", f"RFFT requires f32 or f64 input type, but is given "
                                 f"'{_c.type_str(et)}'.")
            return None
    elif not isinstance(et, ComplexType):
        diag.error(op, "C2", f"FFT/IFFT/IRFFT take a complex tensor as input, but is given "
                             f"'{_c.type_str(operand)}'")
        return None
    result_et = ComplexType(et) if kind == "RFFT" else et.element if kind == "IRFFT" else et
    if shape is None:
        return [TensorType(None, result_et)]
    inner = list(shape[len(shape) - k:])
    # (upstream's messages print the whole operand shape, an unknown size as kDynamic)
    full = ", ".join(map(_c.size_str, shape))
    wanted = ", ".join(map(str, length))
    if kind == "RFFT" and not _c.compatible_shapes(inner, length):
        diag.error(op, "C4", f"RFFT requires innermost dimensions to be compatible with "
                             f"fft_length. Got: {full} but wanted {wanted}.")
        return None
    if kind == "IRFFT":
        for a, b in zip(inner[:-1], length):
            if not _c.compatible_dims(a, b):
                diag.error(op, "C4", f"IRFFT requires non-final dimensions to be compatible "
                                     f"with fft_length. Got: {full} but wanted {wanted}, and "
                                     f"{a} != {b}.")
                return None
        n = inner[-1]
        if n is not None and n != length[-1] // 2 + 1 and not n == 0 == length[-1]:
            diag.error(op, "C5", f"IRFFT requires innermost dimension to be compatible with "
                                 f"fft_length[-1]/2+1. Got: {inner[-1]} but fft_length is "
                                 f"{wanted}.")
            return None
    return [TensorType(_result_shape(tuple(shape), kind, tuple(length)), result_et)]


@verifier("stablehlo.fft")
def _verify_fft(op: Operation, diag: Diagnostics) -> None:
    """fft (C1-C5) and a known `fft_type` (I2)."""
    if not _c.signature(op, diag, [_c.FP_C_TENSOR], [_c.FP_C_TENSOR],
                        attrs={"fft_type": "any", "fft_length": "ints"}):
        return
    inferred = _infer_fft(op, diag)
    if inferred is not None and inferred[0].shape is not None:
        _c.check_inferred(op, diag, "C2, C5", inferred)
