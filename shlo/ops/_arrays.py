"""Array helpers of the data-movement kernels (shape, indexing and dynamic-shape ops).

They know no op: a read-only view, the static type of a result, a dtype conversion that does not
copy when it need not. Kernels call them while preparing or on the run-time path, so each is a
few numpy attribute reads.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ir import Operation
from ..types import TensorType

__all__ = ["readonly", "result_type", "static_shape", "as_dtype"]


def readonly(a: np.ndarray) -> np.ndarray:
    """A read-only view of ``a`` (kernels hand out constants that nobody may mutate)."""
    v = a.view()
    v.flags.writeable = False
    return v


def result_type(op: Operation, i: int = 0) -> TensorType:
    """The tensor type of result ``i`` of ``op`` (kernels read static types from the IR)."""
    t = op.results[i].type
    assert isinstance(t, TensorType), f"{op.name}: result {i} is not a tensor"
    return t


def static_shape(t: Any) -> tuple[int, ...] | None:
    """The shape of tensor type ``t`` when fully static, else None."""
    if isinstance(t, TensorType) and t.is_static:
        return t.shape  # type: ignore[return-value]
    return None


def as_dtype(x: Any, dtype: np.dtype) -> np.ndarray:
    """``x`` as an array of exactly ``dtype`` (no copy when it already is)."""
    a = np.asarray(x)
    return a if a.dtype == dtype else a.astype(dtype)
