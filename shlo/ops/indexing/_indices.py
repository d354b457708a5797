"""What gather and scatter share: integer index arrays, and the checks of dimension lists.

Gather and scatter evaluate the spec's index formulas for all result (or update) elements at
once as broadcast integer arrays, one per operand dimension; these helpers build them. The list
checks report in upstream's words (`Expects each element of ... to be in range ...`).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ...attributes import StructAttr, int_or_none, ints
from ...errors import Diagnostics
from ...ir import Operation

__all__ = ["to_index", "index_vectors", "line", "is_sorted", "in_range", "dimension_fields"]

_INT64_MAX = np.iinfo(np.int64).max


def to_index(a: Any) -> np.ndarray:
    """Integer index values of any integer dtype (ml_dtypes included) as int64.

    Unsigned values above the int64 range saturate to INT64_MAX (they are clamped or out of
    bounds anyway).
    """
    a = np.asarray(a)
    if a.dtype == np.int64:
        return a
    if a.dtype == np.uint64:
        return np.minimum(a, np.uint64(_INT64_MAX)).astype(np.int64)
    return a.astype(np.int64)


def index_vectors(indices: np.ndarray, index_vector_dim: int) -> np.ndarray:
    """The index tensor with its index vector dimension moved last (added when implicit)."""
    indices = to_index(indices)
    if index_vector_dim >= indices.ndim:
        return indices[..., None]
    if index_vector_dim == indices.ndim - 1:
        return indices
    axes = [d for d in range(indices.ndim) if d != index_vector_dim] + [index_vector_dim]
    return indices.transpose(axes)


def line(n: int, rank: int, axis: int) -> np.ndarray:
    """``arange(n)`` shaped to broadcast along ``axis`` of a rank-``rank`` index space."""
    shape = [1] * rank
    shape[axis] = n
    return np.arange(n, dtype=np.int64).reshape(shape)


def is_sorted(xs: Sequence[int]) -> bool:
    return all(a <= b for a, b in zip(xs, xs[1:]))


def in_range(op: Operation, diag: Diagnostics, label: str, name: str, xs: Sequence[int],
             hi: int, of: str) -> bool:
    """Every element of the dimension list ``name`` is in ``[0, hi)`` (``of`` names ``hi``)."""
    for x in xs:
        if not 0 <= x < hi:
            diag.error(op, label, f"Expects each element of {name} to be in range [0, {of}) i.e. "
                                  f"[0, {hi}). got: {x}.")
            return False
    return True


def dimension_fields(attr: Any, lists: Sequence[str], kind: str, strict: bool
                     ) -> tuple[list[tuple[int, ...]], int]:
    """The dimension lists ``lists`` and ``index_vector_dim`` of a `#stablehlo.gather<...>` or
    `#stablehlo.scatter<...>` attribute (absent lists are empty, an absent index_vector_dim 0).

    Not a struct attribute, or (``strict``) a malformed field, raises TypeError; with ``strict``
    False a malformed field reads as absent (the verifier then reports what it breaks).
    """
    if not isinstance(attr, StructAttr):
        raise TypeError(f"expected #stablehlo.{kind}<...>, got {attr!r}")
    out = []
    for name in lists:
        try:
            out.append(ints(attr.get(name), ()))
        except (TypeError, ValueError):
            if strict:
                raise
            out.append(())
    try:
        index_vector_dim = int_or_none(attr.get("index_vector_dim")) or 0
    except (TypeError, ValueError):
        if strict:
            raise
        index_vector_dim = 0
    return out, index_vector_dim  # type: ignore[return-value]
