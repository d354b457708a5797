"""The matrix decompositions: cholesky (spec "cholesky") and triangular_solve (spec
"triangular_solve").

Both run in at least single precision (LAPACK's f32/f64/c64/c128; triangular_solve substitutes
in double and rounds once) and read only the triangle of `a` they are told to. Undefined
behaviour is as XLA's: a matrix that is not Hermitian positive-definite factors to NaN, a zero on
the diagonal of a triangular solve gives inf/NaN.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ...attributes import bool_attr, enum_attr
from ...dtypes import C64, C128, F32, F64, float_compute_dtype
from ...ir import Operation
from ...registry import DOQ, Kernel, define, inference, kernel, verifier
from ...syntax.directives import ATTRDICT, COMMA, OPERAND, declarative, named, opt, types
from ...types import TensorType, Type
from .. import _constraints as _c
from .matmul import blas_matmul, finisher

if TYPE_CHECKING:  # pragma: no cover
    from ...errors import Diagnostics
    from ...interpreter.evaluator import PrepareContext


def _dims(shape: Sequence[int | None]) -> str:
    return _c.dims_str(shape)[1:-1]


# --- cholesky (spec "cholesky") -------------------------------------------------------------------

define("stablehlo.cholesky", spec="cholesky", summary="Cholesky decomposition of a batch of "
       "matrices", traits={DOQ},
       syntax=declarative(OPERAND, opt("lower", COMMA, *named("lower", "lower", "bool")),
                          ATTRDICT, types("same")))


@kernel("stablehlo.cholesky")
def cholesky(op: Operation, ctx: PrepareContext) -> Kernel:
    """Spec "cholesky": Cholesky factor of each matrix `a[..., :, :]`.

    Only the `lower` (or upper) triangle of `a` is read: the Hermitian matrix is rebuilt from it.
    The opposite triangle of the result is zero. A matrix that is not Hermitian positive-definite
    (undefined behaviour in the spec) gives a result filled with NaN, as XLA does.
    """
    lower = bool_attr(op, "lower", False)
    compute = float_compute_dtype(op.operands[0].type.dtype)
    result_dtype = op.results[0].type.dtype

    def factor(h: np.ndarray) -> np.ndarray:
        try:
            return np.linalg.cholesky(h)
        except np.linalg.LinAlgError:
            # Some matrix of the batch is not positive-definite: factor them one by one.
            flat = h.reshape((-1,) + h.shape[-2:])
            out = np.empty_like(flat)
            for i in range(flat.shape[0]):  # a loop over matrices, on the error path only
                try:
                    out[i] = np.linalg.cholesky(flat[i])
                except np.linalg.LinAlgError:
                    out[i] = np.nan
            return out.reshape(h.shape)

    def run(a: Any) -> Sequence[Any]:
        x = np.asarray(a).astype(compute)
        if x.shape[-1] == 0:
            return (x.astype(result_dtype),)
        t = np.tril(x) if lower else np.triu(x)
        strict = np.tril(x, -1) if lower else np.triu(x, 1)
        h = t + np.conj(np.swapaxes(strict, -1, -2))  # Hermitian: lower factor reads tril only
        with np.errstate(all="ignore"):
            factor_lower = factor(h)
            if lower:
                res = factor_lower
            else:
                res = np.conj(np.swapaxes(factor_lower, -1, -2))
        return (res.astype(result_dtype),)

    return run


@inference("stablehlo.cholesky")
def _infer_cholesky(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """(C2) `2 <= rank(a)`; (C3) `dim(a, -2) = dim(a, -1)`; the result has `a`'s type (C1)."""
    if len(op.operands) != 1 or not isinstance(op.operands[0].type, TensorType):
        return None
    a = op.operands[0].type
    if a.shape is not None:
        if len(a.shape) < 2:
            diag.error(op, "C2", f"argument 'a' must have rank >= 2, got shape {_dims(a.shape)}")
            return None
        if not _c.compatible_dims(a.shape[-2], a.shape[-1]):
            diag.error(op, "C3", f"minor dimensions of 'a' must have equal size, got shape "
                                 f"{_dims(a.shape)}")
            return None
    return [a]


@verifier("stablehlo.cholesky")
def _verify_cholesky(op: Operation, diag: Diagnostics) -> None:
    """(C1) `baseline_type(a) = baseline_type(result)`; (C2) `2 <= rank(a)`;
    (C3) `dim(a, -2) = dim(a, -1)`."""
    if not _c.signature(op, diag, [_c.FP_C_Q_TENSOR], [_c.FP_C_Q_TENSOR],
                        optional_attrs={"lower": "bool"}):
        return
    inferred = _infer_cholesky(op, diag)
    if inferred is not None:
        _c.check_inferred(op, diag, "C1", inferred)


# --- triangular_solve (spec "triangular_solve") ---------------------------------------------------

define("stablehlo.triangular_solve", spec="triangular_solve",
       summary="solves systems of linear equations with triangular coefficient matrices",
       traits={DOQ}, inherent="left_side lower unit_diagonal transpose_a")


def _substitute(t: np.ndarray, b: np.ndarray, lower: bool, unit_diagonal: bool) -> np.ndarray:
    """Solve ``t @ x = b`` for triangular ``t`` (..., M, M), ``b`` (..., M, N) by substitution.

    A loop over the M rows, each step vectorized over the batch and the N right-hand sides.
    """
    m = t.shape[-1]
    x = np.empty(b.shape, dtype=np.result_type(t, b))
    rows = range(m) if lower else range(m - 1, -1, -1)
    for i in rows:
        r = b[..., i, :]
        done = slice(0, i) if lower else slice(i + 1, m)
        if (i if lower else m - 1 - i) > 0:
            r = r - blas_matmul(t[..., i:i + 1, done], x[..., done, :])[..., 0, :]
        x[..., i, :] = r if unit_diagonal else r / t[..., i, i][..., None]
    return x


_TRANSPOSE_A = ("NO_TRANSPOSE", "TRANSPOSE", "ADJOINT")


@kernel("stablehlo.triangular_solve")
def triangular_solve(op: Operation, ctx: PrepareContext) -> Kernel:
    """Spec "triangular_solve": solves `op(a) @ x = b` (`left_side`) or `x @ op(a) = b`.

    `op(a)` is `a`, `transpose(a)` or `adjoint(a)` (`transpose_a`); only the `lower` (or upper)
    triangle of `a` is read, and with `unit_diagonal` its diagonal is taken as ones (not read).
    A zero on the diagonal (undefined behaviour) gives inf/NaN as IEEE division does.
    """
    left_side = bool_attr(op, "left_side", False)
    lower = bool_attr(op, "lower", False)
    unit_diagonal = bool_attr(op, "unit_diagonal", False)
    transpose_a = enum_attr(op, "transpose_a", "NO_TRANSPOSE")
    if transpose_a not in _TRANSPOSE_A:
        raise ValueError(f"triangular_solve: unknown transpose_a {transpose_a}")
    compute = float_compute_dtype(op.operands[0].type.dtype)
    if compute == F32:
        compute = F64  # accuracy: substitution in double, rounded once
    elif compute == C64:
        compute = C128
    finish = finisher(compute, op.results[0].type.element_type)
    # op(a) is lower-triangular iff `lower` xor transposed; right side solves the transpose.
    effective_lower = lower != (transpose_a != "NO_TRANSPOSE")
    if not left_side:
        effective_lower = not effective_lower

    def run(a: Any, b: Any) -> Sequence[Any]:
        x = np.asarray(a).astype(compute)
        t = np.tril(x) if lower else np.triu(x)
        if transpose_a != "NO_TRANSPOSE":
            t = np.swapaxes(t, -1, -2)
            if transpose_a == "ADJOINT":
                t = np.conj(t)
        rhs = np.asarray(b).astype(compute)
        if not left_side:  # x @ t = b  <=>  t^T @ x^T = b^T
            t, rhs = np.swapaxes(t, -1, -2), np.swapaxes(rhs, -1, -2)
        with np.errstate(all="ignore"):
            res = _substitute(t, rhs, effective_lower, unit_diagonal)
        if not left_side:
            res = np.swapaxes(res, -1, -2)
        return (finish(np.ascontiguousarray(res)),)

    return run


@inference("stablehlo.triangular_solve")
def _infer_triangular_solve(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """(C1) baseline element types agree; (C2) `2 <= rank(a) = rank(b)`; (C3) `a` is square
    and shares its size with `b` on the side given by `left_side`, batch dimensions agree; the
    result has `b`'s type (C4)."""
    if len(op.operands) != 2 or not all(isinstance(v.type, TensorType) for v in op.operands):
        return None
    a, b = op.operands[0].type, op.operands[1].type
    t = enum_attr(op, "transpose_a", None)
    if t is not None and t not in _TRANSPOSE_A:
        diag.error(op, "I6", f"Invalid transpose option value for triangular solve: {t}")
        return None
    if not _c.compatible_element_types(a.element_type, b.element_type):
        diag.error(op, "C1", f"expects a and b to have the same element type: "
                             f"{_c.types_str([a, b])}")
        return None
    if a.shape is not None:
        if len(a.shape) < 2:
            diag.error(op, "C2", f"operand 'a' must have rank >= 2, but got '{_c.type_str(a)}'")
            return None
        if not _c.compatible_dims(a.shape[-2], a.shape[-1]):
            diag.error(op, "C3", f"two minor dimensions of operand 'a' must be compatible, but got"
                                 f" '{_c.type_str(a)}'")
            return None
    if a.shape is not None and b.shape is not None:
        if len(a.shape) != len(b.shape):
            diag.error(op, "C2", f"operands must have equal rank, but got '{_c.type_str(a)}' and "
                                 f"'{_c.type_str(b)}'")
            return None
        left = bool_attr(op, "left_side", True)
        shared = b.shape[-2] if left else b.shape[-1]
        if not _c.compatible_dims(a.shape[-1], shared):
            diag.error(op, "C3", f"shared dimension of operands 'a' and 'b' must be compatible, "
                                 f"but got '{_c.type_str(a)}' and '{_c.type_str(b)}'")
            return None
        if not _c.compatible_shapes(a.shape[:-2], b.shape[:-2]):
            diag.error(op, "C3", f"batch dimensions of the operands must be compatible, but got "
                                 f"'{_c.type_str(a)}' and '{_c.type_str(b)}'")
            return None
    return [b]


@verifier("stablehlo.triangular_solve")
def _verify_triangular_solve(op: Operation, diag: Diagnostics) -> None:
    """triangular_solve (C1-C4) and a known `transpose_a` (I6)."""
    if not _c.signature(op, diag, [_c.FP_C_Q_TENSOR, _c.FP_C_Q_TENSOR], [_c.FP_C_Q_TENSOR],
                        attrs={"left_side": "bool", "lower": "bool", "unit_diagonal": "bool",
                               "transpose_a": "any"}):
        return
    inferred = _infer_triangular_solve(op, diag)
    if inferred is not None:
        _c.check_inferred(op, diag, "C4", inferred)
