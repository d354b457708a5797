"""Facts about the run-time dtypes of element types (numpy and ml_dtypes), in one place.

Element types map to dtypes in :mod:`shlo.types`; this module answers the questions kernels,
the parser and the printer ask of a dtype: its same-width unsigned view, whether it is one of
ml_dtypes' sub-byte integers (int2/int4/uint2/uint4, which numpy's ufuncs do not know), its bit
width, and its ``finfo`` (numpy's for f16/f32/f64, ml_dtypes' for bf16, fp8, fp6, fp4, ...).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

__all__ = [
    "F16", "F32", "F64", "C64", "C128", "uint_of_size", "int_of_size", "sub_byte_int",
    "is_sub_byte_int", "bit_width", "finfo", "is_ml_float",
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
    float32."""
    dt = np.dtype(dtype)
    return dt.kind == "V" and dt.name not in _SUB_BYTE


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
