"""Element-wise unary chlo ops: the inverse trigonometric and hyperbolic functions, tan, cosh,
sinh, conj, square, the special functions (lgamma, digamma, erf, erfc, erf_inv, bessel_i1e)
and the predicates is_inf, is_pos_inf, is_neg_inf.

They are computed with numpy/scipy in float64 (complex128) and rounded once to the result
type, so they are at least as accurate as the lowering's polynomial approximations. Edge cases
(poles, domain errors, infinities) follow the lowering, which is what upstream computes. Real
cosh and sinh evaluate the formula of their definition step by step in the lowering's precision
(see :func:`_hyperbolic`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from .._lazy import special as sc
from ...dtypes import F32, F64
from ...errors import ExecutionError
from ...ir import Operation
from ...registry import ELEMENTWISE, Kernel, define, kernel
from .._numeric import round_from_wide
from .._wide32 import compiled
from ..elementwise._common import on_cores
from ._common import FC, PRED, F, as_wide, elementwise_op, is_int, result_type

if TYPE_CHECKING:  # pragma: no cover
    from ...interpreter.evaluator import PrepareContext

__all__ = ["lgamma", "digamma"]

Real = Callable[[np.ndarray], np.ndarray]


# --- the special functions, with the lowering's edge cases ---------------------------------------


def lgamma(x: np.ndarray) -> np.ndarray:
    """log|Γ(x)|; +inf at the poles (0, -1, -2, ...) and at ±inf, as the lowering."""
    out = sc.gammaln(x)
    # scipy overflows to inf below ~1e-308 (subnormal x), where lgamma(x) = -log|x| - γx + ...
    with np.errstate(divide="ignore"):
        tiny = -np.log(np.abs(x))
    out = np.where((x != 0) & (np.abs(x) < 1e-300), tiny, out)
    return np.where(np.isinf(x), np.inf, out)


def digamma(x: np.ndarray) -> np.ndarray:
    """ψ(x); NaN at the poles 0 (either sign) and the negative integers, as the lowering (and
    XLA)."""
    out = sc.psi(x)
    return np.where((x <= 0) & is_int(x), np.nan, out)


def _erf_inv(x: np.ndarray) -> np.ndarray:
    return sc.erfinv(x)


def _square(x: np.ndarray) -> np.ndarray:
    if x.dtype.kind == "c":  # (a+bi)^2 = (a-b)(a+b) + 2ab i, avoiding a*a - b*b cancellation
        a, b = x.real, x.imag
        out = np.empty(x.shape, dtype=x.dtype)
        # as the lowering: 0 when |a| = |b| (finite), so (a-b)(a+b) cannot give 0 * inf;
        # 2 * (a*b), so a*b near the largest float does not overflow through 2a
        out.real = np.where(np.isfinite(a) & (np.abs(a) == np.abs(b)), 0.0, (a - b) * (a + b))
        out.imag = 2.0 * (a * b)
        return out
    return x * x


# --- ops computed wide and rounded once -----------------------------------------------------------

# name: (operand/result constraint, real function, complex function or None)
_WIDE: dict[str, tuple[Any, Real, Real | None]] = {
    "acos": (FC, np.arccos, np.arccos),
    "acosh": (FC, np.arccosh, np.arccosh),
    "asin": (FC, np.arcsin, np.arcsin),
    "asinh": (FC, np.arcsinh, np.arcsinh),
    "atan": (FC, np.arctan, np.arctan),
    "atanh": (FC, np.arctanh, np.arctanh),
    "bessel_i1e": (FC, sc.later("i1e"), None),
    "conj": (FC, lambda x: x, np.conj),
    "digamma": (F, digamma, None),
    "erf": (F, sc.later("erf"), None),
    "erf_inv": (F, _erf_inv, None),
    "erfc": (F, sc.later("erfc"), None),
    "lgamma": (F, lgamma, None),
    "square": (FC, _square, _square),
    "tan": (FC, np.tan, np.tan),
}


_COMPILED = ("erf", "erfc")
"""Functions whose float32 kernel runs through a compiled loop (:mod:`.._wide32`)."""


def _wide_kernel(name: str, real: Real, complex_: Real | None) -> None:
    """Register the kernel of `chlo.<name>`: computed wide (float64/complex128), rounded once."""

    def prepare(op: Operation, ctx: PrepareContext) -> Kernel:
        t = result_type(op)
        dtype = t.dtype
        fn = complex_ if dtype.kind == "c" else real
        if fn is None:
            raise ExecutionError(f"'chlo.{name}' does not support element type {t.element_type}",
                                 op.location)

        def wide(x: Any) -> Any:
            with np.errstate(all="ignore"):
                y = fn(as_wide(x))
            return round_from_wide(y, dtype)

        if dtype == F32 and name in _COMPILED:
            wide = compiled(name, wide)  # (it chooses its own cores)
        elif dtype in (F32, F64):
            wide = on_cores(wide, dtype)  # large operands in pieces, one per core in turn

        def run(x: Any) -> Sequence[Any]:
            return (wide(x),)

        return run

    prepare.__name__ = name
    prepare.__doc__ = f"`chlo.{name}` computed in float64/complex128 and rounded once."
    kernel(f"chlo.{name}")(prepare)


for _name, (_operands, _real, _complex) in _WIDE.items():
    elementwise_op(_name, _operands)
    _wide_kernel(_name, _real, _complex)


# --- cosh, sinh -----------------------------------------------------------------------------------


def _hyperbolic(name: str) -> None:
    """Register `chlo.cosh` / `chlo.sinh` with the formulas of their definition (ChloOps.td).

    Real operands are evaluated as the lowering does, in f32 for narrower types and in the
    operand's own type otherwise, every step rounded to that type:
    ``cosh(x) = e^(x + log(1/2)) + e^(-x + log(1/2))``; ``sinh(x)`` the same with a
    difference for |x| >= 1 and ``(expm1(x) + expm1(x) / (expm1(x) + 1)) / 2`` for |x| < 1.
    The correctly rounded value differs by a few ulp for large |x| (the rounding of
    x + log(1/2)); the corpus's expected values carry that error, so shlo keeps it.
    Complex operands are computed in complex128 and rounded once.
    """

    def prepare(op: Operation, ctx: PrepareContext) -> Kernel:
        dtype = result_type(op).dtype
        if dtype.kind == "c":
            fn = np.cosh if name == "cosh" else np.sinh

            def run_complex(x: Any) -> Sequence[Any]:
                with np.errstate(all="ignore"):
                    return (fn(as_wide(x)).astype(dtype),)

            return run_complex
        t = F64 if dtype == np.float64 else F32

        def r(v: np.ndarray) -> np.ndarray:  # round a float64 intermediate to the work type
            return np.asarray(v).astype(t).astype(np.float64)

        log_half = float(r(np.log(0.5)))

        def run(x: Any) -> Sequence[Any]:
            x = np.asarray(x).astype(np.float64)
            with np.errstate(all="ignore"):
                up = r(np.exp(r(x + log_half)))
                down = r(np.exp(r(log_half - x)))
                if name == "cosh":
                    y = r(up + down)
                else:
                    large = r(up - down)
                    e = r(np.expm1(x))
                    small = r(0.5 * r(e + r(e / r(e + 1.0))))
                    y = np.where(np.abs(x) < 1, small, large)
            return (round_from_wide(y, dtype),)

        return run

    prepare.__name__ = name
    prepare.__doc__ = _hyperbolic.__doc__
    kernel(f"chlo.{name}")(prepare)


for _name in ("cosh", "sinh"):
    elementwise_op(_name, FC)
    _hyperbolic(_name)


# --- is_inf, is_pos_inf, is_neg_inf ---------------------------------------------------------------

_PREDICATES: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "is_inf": np.isinf, "is_pos_inf": np.isposinf, "is_neg_inf": np.isneginf,
}


def _predicate_kernel(name: str, fn: Callable[[np.ndarray], np.ndarray]) -> None:
    def prepare(op: Operation, ctx: PrepareContext) -> Kernel:
        def run(x: Any) -> Sequence[Any]:
            return (np.asarray(fn(as_wide(x)), dtype=np.bool_),)

        return run

    prepare.__name__ = name
    prepare.__doc__ = f"`chlo.{name}`: a boolean tensor of the operand's shape."
    kernel(f"chlo.{name}")(prepare)


for _name, _fn in _PREDICATES.items():
    elementwise_op(_name, F, PRED)
    _predicate_kernel(_name, _fn)


# --- _asin_acos_kernel ----------------------------------------------------------------------------

define("chlo._asin_acos_kernel", summary="ChloOps.td: a helper of the asin/acos lowerings "
       "(no kernel: exporters do not emit it)", traits={ELEMENTWISE})
