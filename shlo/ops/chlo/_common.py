"""What the chlo op modules share: static types of values, the wide dtypes kernels compute in,
the type constraints of upstream's CHLO definitions and the declaration of the element-wise
chlo ops."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...dtypes import C128, F64, is_ml_float
from ...errors import Diagnostics, ExecutionError
from ...ir import Operation, Value
from ...registry import ELEMENTWISE, define, inference, verifier
from ...syntax.directives import ATTRDICT, COMMA, OPERAND, declarative, types
from ...types import TensorType, Type, element_type
from .. import _constraints as _c
from ..elementwise._common import infer_same

__all__ = ["tensor_type", "result_type", "wide_dtype", "as_wide", "is_int", "FC", "F", "ANY",
           "PRED", "PRED_INT", "I1", "elementwise_op"]

# --- types ----------------------------------------------------------------------------------------

FC = _c.TC(_c.F | _c.C, ranked=False)
F = _c.TC(_c.F, ranked=False)
ANY = _c.TC(_c.F | _c.B | _c.I | _c.C | _c.Q | _c.QA, ranked=False)
PRED = _c.TC(_c.B, ranked=False)
PRED_INT = _c.TC(_c.B | _c.I, ranked=False)
I1 = element_type("i1")


def tensor_type(v: Value | Any) -> TensorType:
    t = v.type if isinstance(v, Value) else v
    if not isinstance(t, TensorType):
        raise ExecutionError(f"expected a tensor type, got {t}")
    return t


def result_type(op: Operation, i: int = 0) -> TensorType:
    return tensor_type(op.results[i])


def wide_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype kernels compute in: float64 for floats, complex128 for complex, else itself."""
    if dtype.kind == "c":
        return C128
    if dtype.kind == "f" or is_ml_float(dtype):
        return F64
    return dtype


def as_wide(x: Any) -> np.ndarray:
    x = np.asarray(x)
    return x.astype(wide_dtype(x.dtype), copy=False)


def is_int(x: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return np.floor(x) == x


# --- element-wise chlo ops ------------------------------------------------------------------------

_UNARY = declarative(OPERAND, ATTRDICT, types("chlo_unary"))
"""`chlo.op %x : T -> R` (upstream `$operand attr-dict : type($operand) -> type($result)`)."""
_BINARY = declarative(OPERAND, COMMA, OPERAND, ATTRDICT, types("chlo_binary"))
"""`chlo.op %x, %y : T, T -> R`."""


def _infer_predicate(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """A tensor of i1 of the operand's shape."""
    t = op.operands[0].type
    return [TensorType(t.shape, I1)] if isinstance(t, TensorType) else None


def elementwise_op(name: str, operands: _c.TC, result: _c.TC | None = None,
                   arity: int = 1) -> None:
    """Declare `chlo.<name>`, an element-wise op of ``arity`` operands constrained by
    ``operands`` whose result has their type (``result`` None) or is a tensor of i1 of their
    shape (``result`` PRED): definition (ChloOps.td's pretty form), type inference and verifier.
    """
    full = "chlo." + name
    define(full, summary="ChloOps.td", traits={ELEMENTWISE},
           syntax=_UNARY if arity == 1 else _BINARY)
    predicate = result is PRED
    inference(full)(_infer_predicate if predicate else infer_same)
    spec = [operands] * arity
    res = [operands if result is None else result]

    def verify(op: Operation, diag: Diagnostics) -> None:
        if not _c.signature(op, diag, spec, res):
            return
        if predicate:
            _c.same_shapes(op, diag, "C1")
        else:
            _c.compatible_all(op, diag, "C1")

    verify.__name__ = f"_verify_{name}"
    verify.__doc__ = (f"`chlo.{name}`: the result has the operand's shape (and element type"
                      f"{', or i1 for a predicate' if predicate else ''}).")
    verifier(full)(verify)

