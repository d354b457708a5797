"""The constraint checks the contractions share (dot_general, dot, convolution, dynamic_conv):
``precision_config``, the inferred result shape against the written one, and the quantization
constraints of dot-like ops. Each reports with the caller's label (the ops number them
differently)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from ...attributes import ArrayAttr
from ...types import QuantizedType, TensorType
from .. import _constraints as _c

if TYPE_CHECKING:  # pragma: no cover
    from ...errors import Diagnostics
    from ...ir import Operation

__all__ = ["precision_config_ok", "result_shape_ok", "quantized_dot_like_ok"]

_PRECISIONS = frozenset({"DEFAULT", "HIGH", "HIGHEST"})


def precision_config_ok(op: Operation, diag: Diagnostics, label: str) -> bool:
    """`precision_config` has at most 2 entries, each DEFAULT, HIGH or HIGHEST."""
    a = op.attr("precision_config")
    if a is None:
        return True
    values = list(a) if isinstance(a, (ArrayAttr, tuple, list)) else None
    if values is None:
        return True
    if len(values) > 2:
        diag.error(op, label, f"expects precision config to be empty or have <= 2 elements, got "
                              f"{len(values)}")
        return False
    for v in values:
        p = getattr(v, "value", v)
        if isinstance(p, str) and p not in _PRECISIONS:
            diag.error(op, label, f"'precision_config' failed to satisfy constraint: precision "
                                  f"must be one of DEFAULT, HIGH, HIGHEST, got {p}")
            return False
    return True


def result_shape_ok(op: Operation, diag: Diagnostics, label: str,
                    shape: Sequence[int | None] | None) -> bool:
    """Compare an inferred shape with the result's (upstream's "inferred shape" message)."""
    res = op.results[0].type
    if isinstance(res, TensorType) and not _c.compatible_shapes(shape, res.shape):
        diag.error(op, label, f"inferred shape '{_c.dims_str(shape)}' is incompatible with return "
                              f"type of operation '{_c.type_str(res)}'")
        return False
    return True


def quantized_dot_like_ok(op: Operation, diag: Diagnostics, lhs: TensorType, rhs: TensorType,
                          res: TensorType, label: str) -> bool:
    """The quantization constraints dot_general and convolution share: rhs quantized whenever
    anything is, storage/expressed types agree, a per-tensor rhs gives a per-tensor result,
    hybrid ops keep float lhs and result."""
    le, re_, oe = lhs.element_type, rhs.element_type, res.element_type
    lq, rq, oq = (isinstance(e, QuantizedType) for e in (le, re_, oe))
    if not (lq or rq or oq):
        return True
    if not rq or lq != oq:
        diag.error(op, label, "rhs should be quantized for quantized operations and "
                              "is_quantized(lhs)=is_quantized(result) should hold")
        return False
    if lq:
        if le.storage_type != re_.storage_type:  # (the type: storage ranges may differ)
            diag.error(op, label, "mismatched lhs and rhs quantization storage types: "
                                  + _c.types_str([lhs, rhs]))
            return False
        if not le.expressed_type == re_.expressed_type == oe.expressed_type:
            diag.error(op, label, "mismatched lhs, rhs and result quantization expressed types: "
                                  + _c.types_str([lhs, rhs, res]))
            return False
        if re_.quantization_dimension is None and oe.quantization_dimension is not None:
            diag.error(op, label, "mismatched rhs and result quantization granularity: "
                                  + _c.types_str([rhs, res]))
            return False
    elif not re_.expressed_type == le == oe:
        diag.error(op, label, "mismatched rhs quantization expressed type and lhs and result "
                              "element type: " + _c.types_str([lhs, rhs, res]))
        return False
    return True
