"""Checking the arguments of an entry function against its signature (spec "Execution").

Used by :func:`shlo.run` (interpreter/api.py) and by the process grid
(interpreter/process_grid.py) for the arguments of each process.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..errors import ExecutionError
from ..types import TOKEN, TensorType, TokenType, TupleType, Type

__all__ = ["check_argument"]


def check_argument(value: Any, type: Type, index: int, entry: str) -> Any:
    """Convert ``value`` to the run-time value of ``type`` or raise ExecutionError (a 0-d
    value of numpy's own dtypes becomes a numpy scalar)."""
    if isinstance(type, TokenType):
        return TOKEN
    if isinstance(type, TupleType):
        if not isinstance(value, (tuple, list)) or len(value) != len(type.types):
            raise ExecutionError(f"@{entry} argument {index}: expected a tuple of "
                                 f"{len(type.types)} values for {type}")
        return tuple(check_argument(v, t, index, entry) for v, t in zip(value, type.types))
    if not isinstance(type, TensorType):
        raise ExecutionError(f"@{entry} argument {index}: unsupported type {type}")
    arr = np.asarray(value)
    dtype = type.element_type.dtype
    if arr.dtype != dtype:
        if arr.dtype.kind in "biuf" and np.can_cast(arr.dtype, dtype, "same_kind") and \
                not isinstance(value, np.ndarray):
            arr = arr.astype(dtype)  # Python scalars and lists take the declared type
        else:
            raise ExecutionError(f"@{entry} argument {index}: expected dtype {dtype} for "
                                 f"{type}, got {arr.dtype}")
    if type.shape is not None:
        ok = len(arr.shape) == len(type.shape) and all(
            d is None or d == s for d, s in zip(type.shape, arr.shape))
        if not ok:
            raise ExecutionError(f"@{entry} argument {index}: expected shape "
                                 f"{_shape_str(type.shape)} for {type}, got "
                                 f"{_shape_str(arr.shape)}")
    if arr.ndim == 0 and arr.dtype.isbuiltin == 1:
        # a numpy scalar (immutable, as kernels' 0-d results and constants are): numpy's
        # scalar arithmetic is ~10x faster than on 0-d arrays, which scalar programs are made of
        return arr[()]
    return arr


def _shape_str(shape: Sequence[int | None]) -> str:
    return "(" + ", ".join("?" if d is None else str(d) for d in shape) + ")"
