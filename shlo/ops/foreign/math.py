"""MLIR's `math` dialect (mlir/include/mlir/Dialect/Math/IR/MathOps.td): elementwise functions
of floats (and `absi` of integers), on scalars and tensors, spelled `math.exp %x : f32` (with an
optional `fastmath<...>`, kept and ignored).

None of the torch-mlir exports measured (torchvision, transformers, static or dynamic shapes)
contains a math op: torch-mlir's StableHLO path lowers GELU/erf to `chlo.erf` and the rest to
StableHLO. They are here for hand-written and other exporters' modules. Each is computed in
float64 and rounded once to the result type (so f16/bf16 get correctly rounded results of the
float64 function); `round` rounds half away from zero, `roundeven` half to even.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .._lazy import special as sc
from ...ir import Operation
from ...registry import ELEMENTWISE, Kernel, define, kernel, verifier
from ...types import FloatType, IndexType, IntegerType, TensorType
from ._syntax import SAME_TYPE, check_same_types, dtype_of

if TYPE_CHECKING:  # pragma: no cover
    from ...interpreter.evaluator import PrepareContext

__all__ = ["FUNCTIONS"]


def _round_half_away(x: Any) -> Any:
    return np.copysign(np.floor(np.abs(x) + 0.5), x)


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "absf": np.abs, "ceil": np.ceil, "floor": np.floor, "round": _round_half_away,
    "roundeven": np.rint, "trunc": np.trunc, "sqrt": np.sqrt,
    "rsqrt": lambda x: 1.0 / np.sqrt(x), "cbrt": np.cbrt, "exp": np.exp, "exp2": np.exp2,
    "expm1": np.expm1, "log": np.log, "log2": np.log2, "log10": np.log10, "log1p": np.log1p,
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "tanh": np.tanh, "sinh": np.sinh,
    "cosh": np.cosh, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
    "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh, "erf": sc.later("erf"),
    "erfc": sc.later("erfc"),
    "powf": np.power, "atan2": np.arctan2, "copysign": np.copysign,
    "fma": lambda a, b, c: a * b + c,
}
"""Float functions by op name (`math.<name>`), as numpy/scipy compute them in float64."""


def _float_op(name: str, fn: Callable[..., Any]) -> None:
    full = f"math.{name}"
    define(full, summary=f"{name} of floats (MathOps.td)", traits={ELEMENTWISE},
           inherent="fastmath", syntax=SAME_TYPE)

    @kernel(full)
    def prepare(op: Operation, ctx: PrepareContext) -> Kernel:
        dt = dtype_of(op.results[0].type)
        scalar = not isinstance(op.results[0].type, TensorType)

        def run(*xs: Any) -> Sequence[Any]:
            r = np.asarray(fn(*(np.asarray(x, np.float64) for x in xs))).astype(dt)
            return (r[()] if scalar else r,)

        return run

    verifier(full)(lambda op, diag: check_same_types(
        op, diag, lambda et: isinstance(et, FloatType), "floating-point-like"))


for _name, _fn in FUNCTIONS.items():
    _float_op(_name, _fn)

define("math.absi", summary="absolute value of integers (MathOps.td; INT_MIN stays INT_MIN)",
       traits={ELEMENTWISE}, inherent="", syntax=SAME_TYPE)


@kernel("math.absi")
def _absi(op: Operation, ctx: PrepareContext) -> Kernel:
    def run(x: Any) -> Sequence[Any]:
        return (np.abs(x),)  # (wraps: |INT_MIN| is INT_MIN, as two's complement does)

    return run


verifier("math.absi")(lambda op, diag: check_same_types(
    op, diag, lambda et: isinstance(et, (IntegerType, IndexType)), "signless-integer-like"))
