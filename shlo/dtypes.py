"""Facts about the run-time dtypes of element types (numpy and ml_dtypes), in one place.

Element types map to dtypes in :mod:`shlo.types`; this module answers the questions kernels,
the parser and the printer ask of a dtype: its same-width unsigned view, whether it is one of
ml_dtypes' sub-byte integers (int2/int4/uint2/uint4, which numpy's ufuncs do not know), its bit
width, and its ``finfo`` (numpy's for f16/f32/f64, ml_dtypes' for bf16, fp8, fp6, fp4, ...).
It also maps element type names to dtypes (:func:`element_dtype`); ml_dtypes (about 0.7 s to
import in version 0.7) is imported only when a type that needs it is first used.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

__all__ = [
    "F16", "F32", "F64", "C64", "C128", "uint_of_size", "int_of_size", "sub_byte_int",
    "is_sub_byte_int", "bit_width", "finfo", "is_ml_float", "element_dtype", "FLOAT_TYPE_NAMES",
]

F16 = np.dtype(np.float16)
F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)
C64 = np.dtype(np.complex64)
C128 = np.dtype(np.complex128)

_UNSIGNED = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32),
             8: np.dtype(np.uint64)}
_SIGNED = {1: np.dtype(np.int8), 2: np.dtype(np.int16), 4: np.dtype(np.int32),
           8: np.dtype(np.int64)}
_SUB_BYTE = {"int2": (2, True), "int4": (4, True), "uint2": (2, False), "uint4": (4, False)}
_NUMPY_FLOATS = frozenset({F16, F32, F64})

_NUMPY_ELEMENT_DTYPES = {
    "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
    "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
    "f16": np.float16, "tf32": np.float32,  # tf32 has no storage format: held in float32
    "f32": np.float32, "f64": np.float64,
}
_ML_ELEMENT_DTYPES = {  # name -> ml_dtypes attribute
    "int2": "int2", "int4": "int4", "uint2": "uint2", "uint4": "uint4",
    "f4E2M1FN": "float4_e2m1fn", "f6E2M3FN": "float6_e2m3fn", "f6E3M2FN": "float6_e3m2fn",
    "f8E3M4": "float8_e3m4", "f8E4M3": "float8_e4m3", "f8E4M3FN": "float8_e4m3fn",
    "f8E4M3FNUZ": "float8_e4m3fnuz", "f8E4M3B11FNUZ": "float8_e4m3b11fnuz",
    "f8E5M2": "float8_e5m2", "f8E5M2FNUZ": "float8_e5m2fnuz", "f8E8M0FNU": "float8_e8m0fnu",
    "bf16": "bfloat16",
}
FLOAT_TYPE_NAMES = ("f4E2M1FN", "f6E2M3FN", "f6E3M2FN", "f8E3M4", "f8E4M3", "f8E4M3FN",
                    "f8E4M3FNUZ", "f8E4M3B11FNUZ", "f8E5M2", "f8E5M2FNUZ", "f8E8M0FNU", "bf16",
                    "f16", "tf32", "f32", "f64")
"""The float element type names shlo knows."""


@lru_cache(maxsize=None)
def element_dtype(name: str) -> np.dtype:
    """The run-time dtype of the element type spelled ``name`` for floats (``"bf16"``,
    ``"f8E4M3FN"``, ...) or ``"[u]int<width>"`` for integers of width 2-64. numpy's own dtypes
    need nothing more; the others import ml_dtypes, on first use."""
    t = _NUMPY_ELEMENT_DTYPES.get(name)
    if t is not None:
        return np.dtype(t)
    import ml_dtypes

    return np.dtype(getattr(ml_dtypes, _ML_ELEMENT_DTYPES[name]))


def uint_of_size(nbytes: int) -> np.dtype:
    """The unsigned integer dtype of ``nbytes`` bytes (1, 2, 4 or 8): the bit-pattern view of a
    value of that size (``x.view(uint_of_size(x.dtype.itemsize))``)."""
    return _UNSIGNED[nbytes]


def int_of_size(nbytes: int) -> np.dtype:
    """The signed integer dtype of ``nbytes`` bytes (1, 2, 4 or 8)."""
    return _SIGNED[nbytes]


def sub_byte_int(dtype: Any) -> tuple[int, bool] | None:
    """``(bit width, signed)`` for ml_dtypes' int2/int4/uint2/uint4, else None. They are stored
    one per byte; numpy's ufuncs other than add/subtract/multiply promote them to int8."""
    return _SUB_BYTE.get(np.dtype(dtype).name)


def is_sub_byte_int(dtype: Any) -> bool:
    return np.dtype(dtype).name in _SUB_BYTE


def bit_width(dtype: Any) -> int:
    """The number of bits of a value of ``dtype`` (2 for int2, 4 for float4_e2m1fn, 6 for the
    fp6 types, otherwise 8 x itemsize)."""
    dt = np.dtype(dtype)
    sb = _SUB_BYTE.get(dt.name)
    if sb is not None:
        return sb[0]
    if dt.kind == "V" and dt.itemsize == 1:
        return _ml_float_width(dt)
    return dt.itemsize * 8


@lru_cache(maxsize=None)
def _ml_float_width(dt: np.dtype) -> int:
    name = dt.name
    if name.startswith("float4"):
        return 4
    if name.startswith("float6"):
        return 6
    return 8


def is_ml_float(dtype: Any) -> bool:
    """True for ml_dtypes' float types (bf16, fp8, fp6, fp4, ...), which numpy computes through
    float32. Their kind is 'V', except float8_e5m2's from ml_dtypes 0.7 on ('f', though its type
    is not a numpy floating type)."""
    dt = np.dtype(dtype)
    return (dt.kind == "V" or dt.kind == "f" and not issubclass(dt.type, np.floating)) and \
        dt.name not in _SUB_BYTE


@lru_cache(maxsize=None)
def finfo(dtype: Any) -> Any:
    """``finfo`` of a float dtype: numpy's for f16/f32/f64, ml_dtypes' for the others."""
    dt = np.dtype(dtype)
    if dt in _NUMPY_FLOATS:
        return np.finfo(dt)
    import ml_dtypes

    return ml_dtypes.finfo(dt)


def float_compute_dtype(dtype: Any) -> np.dtype:
    """The dtype a float or complex ``dtype`` is computed in when numpy works at no less than
    single precision (BLAS, LAPACK, sums): float64 and the complex types stay themselves, every
    other float (f16, bf16, fp8, ...) is computed in float32 and rounded once at the end."""
    dt = np.dtype(dtype)
    if dt == F64 or dt.kind == "c":
        return dt
    return F32
