"""Complex numbers from and to their parts: complex, imag, real (spec order)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ...errors import Diagnostics
from ...ir import Operation
from ...registry import ELEMENTWISE, Kernel, define, inference, kernel, verifier
from ...syntax.directives import ATTRDICT, OPERANDS, declarative, types
from ...types import ComplexType, TensorType, Type
from .. import _constraints as _c
from ._common import UNARY, complex_part, operand_et, result_et, unsupported

if TYPE_CHECKING:  # pragma: no cover
    from ...interpreter.evaluator import PrepareContext

__all__: list[str] = []

# --- complex (spec "complex") ---------------------------------------------------------------------

define("stablehlo.complex", spec="complex", traits={ELEMENTWISE},
       syntax=declarative(OPERANDS, ATTRDICT, types("complex")))


@kernel("stablehlo.complex")
def complex_(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: complex: (lhs, rhs) -> lhs + i*rhs, exactly (also for inf and NaN parts)."""
    cdt = result_et(op).dtype

    def run(lhs: Any, rhs: Any) -> tuple[np.ndarray]:
        out = np.empty(np.broadcast_shapes(np.shape(lhs), np.shape(rhs)), cdt)
        out.real = lhs
        out.imag = rhs
        return (out,)

    return run


@inference("stablehlo.complex")
def _infer_complex(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """(C2) `shape(result) = shape(lhs)`, (C3) `element_type(result) =
    complex_type(element_type(lhs))`, after (C1) `type(lhs) = type(rhs)`."""
    lhs, rhs = op.operands[0].type, op.operands[1].type
    if not isinstance(lhs, TensorType) or not _c.compatible_all(op, diag, "C1", [lhs, rhs]):
        return None
    return [TensorType(lhs.shape, ComplexType(lhs.element_type))]  # type: ignore[arg-type]


_F32_F64 = _c.TC(only=frozenset({"f32", "f64"}),
                 description="ranked tensor of 32/64-bit float values")
_COMPLEX = _c.TC(_c.C)


@verifier("stablehlo.complex")
def _verify_complex(op: Operation, diag: Diagnostics) -> None:
    """(C1) `type(lhs) = type(rhs)`; (C2) `shape(result) = shape(lhs)`; (C3) the result element
    type is `complex<element_type(lhs)>`."""
    if not _c.signature(op, diag, [_F32_F64, _F32_F64], [_COMPLEX]):
        return
    inferred = _infer_complex(op, diag)
    if inferred is not None:
        _c.check_inferred(op, diag, "C2, C3", inferred)


# --- imag, real (spec "imag", "real") -------------------------------------------------------------

define("stablehlo.imag", spec="imag", traits={ELEMENTWISE}, syntax=UNARY)
define("stablehlo.real", spec="real", traits={ELEMENTWISE}, syntax=UNARY)


@kernel("stablehlo.imag")
def imag(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: imag: the imaginary part of complex values; 0 for floats."""
    et = operand_et(op)
    if et.is_complex:
        return lambda x: (np.imag(x),)
    if et.is_float:
        dt = et.dtype
        return lambda x: (np.zeros(np.shape(x), dt),)
    raise unsupported(op, et)


@kernel("stablehlo.real")
def real(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: real: the real part of complex values; floats are returned unchanged."""
    et = operand_et(op)
    if et.is_complex:
        return lambda x: (np.real(x),)
    if et.is_float:
        return lambda x: (x,)
    raise unsupported(op, et)


@inference("stablehlo.imag", "stablehlo.real")
def _infer_real_imag(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """(C1) `shape(result) = shape(operand)`; (C2) the result element type is the complex
    element type of a complex operand, else the operand's element type."""
    t = op.operands[0].type
    if not isinstance(t, TensorType):
        return None
    return [TensorType(t.shape, complex_part(t.element_type), t.encoding)]


@verifier("stablehlo.imag", "stablehlo.real")
def _verify_real_imag(op: Operation, diag: Diagnostics) -> None:
    """(C1, C2) the result type is the inferred one."""
    if not _c.signature(op, diag, [_c.FP_C_TENSOR], [_c.FP_TENSOR]):
        return
    _c.check_inferred(op, diag, "C1, C2", _infer_real_imag(op, diag))  # type: ignore[arg-type]
