"""Run-time values as text, the way the upstream interpreter prints them (`interpreter.print`,
``shlo run``, check failures)::

    tensor<2x2xi8> {
      [
        [1, 2],
        [3, 4]
      ]
    }

0-d tensors print on one line (`tensor<ui8> {1}`); complex elements as `[re, im]`; floats as
`1.000000e+00` (at least 7 significant digits, more where an f32/f64 value needs them to
read back exactly). Tensors with more than ``threshold`` elements are summarised like numpy
(first and last elements of each dimension around `...`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..types import TensorType, Token, Type, element_type_for_dtype

__all__ = ["format_value"]


def _scalar_formatter(dtype: np.dtype):
    if dtype == np.bool_:
        return lambda x: "true" if x else "false"
    if dtype.kind == "c":
        return lambda x: f"[{_float(x.real)}, {_float(x.imag)}]"
    if dtype.kind in "iu" or (dtype.kind == "V" and "int" in dtype.name):
        return lambda x: str(int(x))
    if dtype in (np.float32, np.float64):  # shortest digits that read back as the same value
        return lambda x: _float(x)
    return lambda x: _float(float(x))  # narrow floats: 7 significant digits always suffice


def _float(x: Any) -> str:
    if np.isnan(x):
        return "nan"
    if np.isinf(x):
        return "inf" if x > 0 else "-inf"
    if isinstance(x, (np.float32, np.float64)):
        return np.format_float_scientific(x, unique=True, min_digits=6, exp_digits=2)
    return f"{x:.6e}"


def _elements(arr: np.ndarray, threshold: int, edge: int) -> Any:
    """Nested lists of formatted strings, with '...' where a dimension is summarised."""
    fmt = _scalar_formatter(arr.dtype)
    summarise = arr.size > threshold

    def rec(a: np.ndarray) -> Any:
        if a.ndim == 0:
            return fmt(a[()])
        n = a.shape[0]
        idx = list(range(n)) if not summarise or n <= 2 * edge else \
            list(range(edge)) + [None] + list(range(n - edge, n))
        return ["..." if i is None else rec(a[i]) for i in idx]

    return rec(arr)


def _render(nested: Any, depth: int, rank: int, indent: int) -> list[str]:
    pad = "  " * indent
    if rank - depth == 1:  # innermost dimension on one line
        return [pad + "[" + ", ".join(nested) + "]"]
    if not nested:
        return [pad + "[]"]
    lines = [pad + "["]
    for k, item in enumerate(nested):
        sub = [pad + "  ..."] if item == "..." else _render(item, depth + 1, rank, indent + 1)
        if k < len(nested) - 1:
            sub[-1] += ","
        lines.extend(sub)
    lines.append(pad + "]")
    return lines


def format_value(value: Any, type: Type | None = None, threshold: int = 1000,
                 edge: int = 3) -> str:
    """Text of a run-time value (tensor, tuple or token) in the upstream interpreter's style."""
    if isinstance(value, Token):
        return "!stablehlo.token"
    if isinstance(value, tuple):
        types = getattr(type, "types", [None] * len(value))
        return "(" + ",\n".join(format_value(v, t, threshold, edge)
                                for v, t in zip(value, types)) + ")"
    arr = np.asarray(value)
    if type is None:
        type = TensorType(arr.shape, element_type_for_dtype(arr.dtype))
    head = str(type)
    if arr.ndim == 0:
        return f"{head} {{{_scalar_formatter(arr.dtype)(arr[()])}}}"
    if arr.size == 0 and arr.shape[0] == 0:
        return f"{head} {{\n  []\n}}"
    body = _render(_elements(arr, threshold, edge), 0, arr.ndim, 1)
    return f"{head} {{\n" + "\n".join(body) + "\n}"
