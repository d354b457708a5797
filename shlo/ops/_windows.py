"""Window arithmetic of the windowed ops (reduce_window, select_and_scatter, convolution), in
one place; it knows no op.

* :func:`num_windows`, :func:`dilated_size`: the spec's formulas (spec "reduce_window",
  "convolution": ``num_windows = (padded - dilated_window) // stride + 1``);
* :func:`pad`: the padded, base-dilated input the windows slide over (spec "pad" as those ops
  apply it: ``pad(x, value, padding_low, padding_high, base_dilations - 1)``);
* :func:`window_view`: every window of an array as a strided view (``sliding_window_view``, no
  copy), also for the ml_dtypes types (bf16, fp8, int4, ...), which numpy's ``as_strided`` does
  not keep: they slide as the unsigned integers of the same width and are viewed back;
* :func:`padding_pairs_of`, :func:`pairs`, :func:`window_attr`: the kernels' reading of the
  window attributes (`padding` as pairs, strides and dilations with their defaults);
* the verifiers' checks of the window attributes (:func:`check_padding`,
  :func:`positive_window`, :func:`window_list`), which report with the caller's label.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..attributes import DenseElementsAttr, ints_attr
from ..dtypes import uint_of_size

if TYPE_CHECKING:  # pragma: no cover
    from ..errors import Diagnostics
    from ..ir import Operation

__all__ = [
    "check_padding",
    "dilated_size",
    "num_windows",
    "pad",
    "padding_pairs_of",
    "pairs",
    "positive_window",
    "window_list",
    "window_view",
]


# --- arithmetic -----------------------------------------------------------------------------------


def dilated_size(size: int, dilation: int) -> int:
    """``(size - 1) * dilation + 1`` (0 for an empty dimension): the extent of a dilated
    window or of a base-dilated input dimension."""
    return 0 if size == 0 else (size - 1) * dilation + 1


def num_windows(size: int | None, window: int, stride: int, padding: tuple[int, int] = (0, 0),
                base_dilation: int = 1, window_dilation: int = 1) -> int | None:
    """Spec `num_windows` for one dimension of ``size`` elements (None when it is dynamic)."""
    if size is None:
        return None
    padded = padding[0] + dilated_size(size, base_dilation) + padding[1]
    dilated_window = dilated_size(window, window_dilation)
    if padded <= 0 or dilated_window > padded:
        return 0
    return (padded - dilated_window) // stride + 1


# --- arrays ---------------------------------------------------------------------------------------


def pad(x: np.ndarray, value: Any, padding: Sequence[tuple[int, int]],
        interior: Sequence[int] | None = None, axes: Sequence[int] | None = None) -> np.ndarray:
    """``x`` padded on ``axes`` (default all): ``padding[i] = (low, high)`` elements of ``value``
    at the edges (negative values remove elements) and ``interior[i]`` between neighbours.
    ``value`` None pads with zero bits (``np.zeros``). Returns ``x`` itself when there is
    nothing to pad."""
    axes = tuple(range(x.ndim)) if axes is None else tuple(axes)
    interior = (0,) * len(axes) if interior is None else tuple(interior)
    if all(p == (0, 0) for p in padding) and not any(interior):
        return x
    shape, place, crop = list(x.shape), [slice(None)] * x.ndim, [slice(None)] * x.ndim
    for a, (lo, hi), it in zip(axes, padding, interior):
        core = dilated_size(x.shape[a], it + 1)
        size = max(lo, 0) + core + max(hi, 0)
        shape[a] = size
        place[a] = slice(max(lo, 0), max(lo, 0) + core, it + 1)
        crop[a] = slice(max(-lo, 0), max(size - max(-hi, 0), max(-lo, 0)))
    buf = np.zeros(shape, dtype=x.dtype) if value is None else np.full(shape, value, x.dtype)
    buf[tuple(place)] = x
    return buf[tuple(crop)]


def window_view(x: np.ndarray, window_dimensions: Sequence[int], window_strides: Sequence[int],
                window_dilations: Sequence[int], axes: Sequence[int] | None = None) -> np.ndarray:
    """Every window of ``x`` over ``axes`` (default all), as a view: the axes of ``x`` (``axes``
    now counting windows, ``num_windows`` of them) followed by one axis per window dimension.

    The caller makes sure every dimension has at least one window."""
    axes = tuple(range(x.ndim)) if axes is None else tuple(axes)
    dilated = [dilated_size(w, d) for w, d in zip(window_dimensions, window_dilations)]
    raw = x if x.dtype.isbuiltin == 1 else x.view(uint_of_size(x.dtype.itemsize))
    v = sliding_window_view(raw, dilated, axis=axes)
    stride = dict(zip(axes, window_strides))
    v = v[tuple(slice(None, None, stride.get(a, 1)) for a in range(x.ndim))
          + tuple(slice(None, None, d) for d in window_dilations)]
    return v if raw is x else v.view(x.dtype)


# --- attributes -----------------------------------------------------------------------------------


def pairs(flat: Sequence[int], n: int) -> list[tuple[int, int]]:
    """``[lo0, hi0, lo1, hi1, ...]`` (``2 * n`` values) as ``n`` pairs."""
    v = [int(x) for x in flat]
    if len(v) != 2 * n:
        raise ValueError(f"padding has {len(v)} values, expected {2 * n}")
    return [(v[2 * i], v[2 * i + 1]) for i in range(n)]


def padding_pairs_of(op: Operation, n: int, name: str = "padding") -> list[tuple[int, int]]:
    """Attribute ``name`` (an `Nx2` dense, or a flat list) as ``n`` (low, high) pairs; no
    padding when it is absent or empty (AttributeProblem when it is not a list of integers)."""
    flat = ints_attr(op, name) if op.attr(name) is not None else ()
    return pairs(flat, n) if flat else [(0, 0)] * n


def window_attr(op: Operation, name: str, n: int, default: int = 1) -> tuple[int, ...]:
    """Per-dimension window attribute ``name`` (strides, dilations, reversal) for ``n``
    dimensions: ``default`` for each when it is absent or empty (AttributeProblem when it is
    not a list of integers)."""
    values = ints_attr(op, name) if op.attr(name) is not None else ()
    return tuple(values) or (default,) * n


# --- checks of the window attributes (verifiers) --------------------------------------------------


def check_padding(op: Operation, diag: Diagnostics, label: str, n: int,
                  name: str = "padding") -> list[tuple[int, int]] | None:
    """The `padding` attribute as ``n`` pairs (zeros when absent); None after a violation: it
    must have shape `[n, 2]`."""
    a = op.attr(name)
    if a is None:
        return [(0, 0)] * n
    flat = ints_attr(op, name, None)
    if not flat:  # absent, empty or unreadable: no padding
        return [(0, 0)] * n
    shape = tuple(a.array.shape) if isinstance(a, DenseElementsAttr) else (len(flat),)
    if len(shape) != 2 or shape[1] != 2:
        diag.error(op, label, f"expects the shape of padding-attribute to be {{N, 2}}, but got "
                              f"{{{', '.join(map(str, shape))}}}.")
        return None
    if shape[0] != n:
        diag.error(op, label, f"expects padding-entries to have same dimension-size as size of "
                              f"window dimensions ({n}), but got: {shape[0]}.")
        return None
    return [(flat[2 * i], flat[2 * i + 1]) for i in range(n)]


def positive_window(op: Operation, diag: Diagnostics, label: str,
                    window: Sequence[int | None]) -> bool:
    """Every window dimension is positive (`?` sizes pass); reports the first that is not."""
    for i, w in enumerate(window):
        if w is not None and w <= 0:
            diag.error(op, label, f"expects window to have positive value for {i}-th window "
                                  f"dimension, but got {w}.")
            return False
    return True


def window_list(op: Operation, diag: Diagnostics, label: str, name: str, what: str, n: int,
                default: int = 1, positive: str | None = None,
                check_size: bool = True) -> list[int] | None:
    """An optional per-dimension window attribute (strides, dilations): its size must be ``n``
    and, when ``positive`` names it, its entries positive."""
    v = ints_attr(op, name, None)
    if not v:  # absent or empty: the default
        return [default] * n
    if len(v) != n and check_size:
        diag.error(op, label, f"expects {what} to have same dimension-size as size of window "
                              f"dimensions ({n}), but got: {len(v)}.")
        return None
    if len(v) != n:
        v = (list(v) + [default] * n)[:n]
    if positive:
        for i, x in enumerate(v):
            if x <= 0:
                diag.error(op, label, f"expects window to have positive {positive} for {i}-th "
                                      f"window dimension, but got {x}.")
                return None
    return list(v)
