"""The `check` test dialect and the `@check.*` custom_call targets (conformance/SOURCE.md).

A failing check does not stop the program: it appends a message to
``ProcessContext.check_failures`` and running goes on, so a test file reports every mismatch.
Tolerances follow the upstream tools:

* `expect_eq`, `expect_eq_const`: element-wise `==` (NaN never equals NaN, +0 == -0).
* `expect_almost_eq`, `expect_almost_eq_const`: |actual - expected| <= tolerance (default 1e-4;
  1e-3 for the custom_call form), NaN matches NaN; complex parts are compared separately.
* `expect_close`: ULP distance within [min_ulp_difference, max_ulp_difference] (op default
  [0, 1], custom_call [0, 3]); for complex the larger of the part distances counts.
* custom_call `@check.eq`: integers exactly, everything else as almost_eq with 1e-4; its i1
  result says whether they matched.
"""

from __future__ import annotations

import sys
import threading
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ..attributes import float_attr, int_attr, str_attr
from ..dtypes import uint_of_size
from ..errors import format_location
from ..ir import Operation
from ..registry import QUANTIZED_AWARE, SIDE_EFFECTS, Kernel, define, kernel
from ..syntax.directives import ATTRDICT, COMMA, OPERAND, attr, declarative, named, opt, types
from ..types import TOKEN, FloatType, TensorType
from .values import format_value

if TYPE_CHECKING:  # pragma: no cover
    from ..interpreter.evaluator import PrepareContext

__all__ = ["compare_eq", "compare_almost_eq", "compare_close", "ulp_distance", "mismatch_report",
           "CHECK_TARGETS"]

# --- comparisons: each returns a boolean mask of matching elements ---------------------------


def _wide(x: np.ndarray) -> np.ndarray:
    """A float64/complex128/int/bool view of ``x`` suitable for arithmetic comparisons."""
    x = np.asarray(x)
    if x.dtype.kind == "c":
        return x.astype(np.complex128)
    if x.dtype.kind in "biu":
        return x
    return x.astype(np.float64)


def compare_eq(actual: np.ndarray, expected: np.ndarray) -> np.ndarray:
    a, e = _wide(actual), _wide(expected)
    if a.dtype.kind in "iu" and e.dtype.kind in "iu":
        return a.astype(object) == e.astype(object) if a.dtype != e.dtype else a == e
    return a == e


def compare_almost_eq(actual: np.ndarray, expected: np.ndarray, tolerance: float) -> np.ndarray:
    a, e = _wide(actual), _wide(expected)
    if a.dtype.kind in "biu" and e.dtype.kind in "biu":
        return a == e
    if a.dtype.kind == "c" or e.dtype.kind == "c":
        a, e = a.astype(np.complex128), e.astype(np.complex128)
        return (_almost(a.real, e.real, tolerance)) & (_almost(a.imag, e.imag, tolerance))
    return _almost(a, e, tolerance)


def _almost(a: np.ndarray, e: np.ndarray, tol: float) -> np.ndarray:
    with np.errstate(invalid="ignore", over="ignore"):
        close = np.abs(a - e) <= tol
    return close | (np.isnan(a) & np.isnan(e)) | ((a == e) & np.isinf(a))


def _sign_magnitude(x: np.ndarray, width: int, signed: bool) -> tuple[np.ndarray, np.ndarray]:
    """(sign bit set, magnitude bits as int64) of a float array's bit patterns."""
    bits = x.view(uint_of_size(x.dtype.itemsize)).astype(np.uint64)
    if not signed:
        return np.zeros(bits.shape, dtype=bool), bits.astype(np.int64)
    sign = np.uint64(1) << np.uint64(width - 1)
    return (bits & sign) != 0, (bits & (sign - np.uint64(1))).astype(np.int64)


def ulp_distance(actual: np.ndarray, expected: np.ndarray, ftype: FloatType) -> np.ndarray:
    """ULP distance between same-typed float arrays (float64; inf when not comparable).

    Bitwise-equal values and two NaNs are 0 apart; a finite and a non-finite value are
    infinitely far apart; values of different signs are |a| + |b| ULPs apart.
    """
    a, e = np.asarray(actual), np.asarray(expected)
    width = 32 if ftype.name == "tf32" else ftype.width
    signed = ftype.name != "f8E8M0FNU"
    sa, ma = _sign_magnitude(a, width, signed)
    se, me = _sign_magnitude(e, width, signed)
    same = np.abs(ma - me).astype(np.float64)
    dist = np.where(sa == se, same, ma.astype(np.float64) + me.astype(np.float64))
    fa, fe = a.astype(np.float64), e.astype(np.float64)
    nan_a, nan_e = np.isnan(fa), np.isnan(fe)
    fin_a, fin_e = np.isfinite(fa), np.isfinite(fe)
    dist = np.where((fin_a != fin_e) | ((~fin_a) & (fa != fe)), np.inf, dist)
    dist = np.where(nan_a & nan_e, 0.0, dist)
    return np.where((sa == se) & (ma == me), 0.0, dist)


def compare_close(actual: np.ndarray, expected: np.ndarray, ftype: Any, min_ulp: int,
                  max_ulp: int) -> np.ndarray:
    a, e = np.asarray(actual), np.asarray(expected)
    if a.dtype.kind == "c":
        part = FloatType("f32" if a.dtype == np.complex64 else "f64")
        d = np.maximum(ulp_distance(np.ascontiguousarray(a.real), np.ascontiguousarray(e.real),
                                    part),
                       ulp_distance(np.ascontiguousarray(a.imag), np.ascontiguousarray(e.imag),
                                    part))
    elif a.dtype.kind in "biu":
        d = np.abs(a.astype(np.float64) - e.astype(np.float64))
    else:
        d = ulp_distance(np.ascontiguousarray(a), np.ascontiguousarray(e), ftype)
    return (d >= min_ulp) & (d <= max_ulp)


def mismatch_report(actual: np.ndarray, expected: np.ndarray, ok: np.ndarray, what: str,
                    limit: int = 3) -> str | None:
    """None when every element matched, else a message naming the first mismatches."""
    ok = np.asarray(ok)
    a, e = np.asarray(actual), np.asarray(expected)
    if a.shape != e.shape:
        return f"{what}: shape mismatch: actual {a.shape}, expected {e.shape}"
    if ok.all():
        return None
    bad = np.argwhere(~ok) if ok.ndim else np.zeros((1, 0), dtype=int)
    parts = []
    for idx in bad[:limit]:
        i = tuple(int(k) for k in idx)
        parts.append(f"at index {list(i)}: actual {a[i]}, expected {e[i]}")
    more = f" (and {len(bad) - limit} more)" if len(bad) > limit else ""
    return f"{what} failed: {len(bad)} of {max(a.size, 1)} elements differ; " + "; ".join(
        parts) + more


# --- the ops ---------------------------------------------------------------------------------
# A check changes no value; its effect is the failure it records (SIDE_EFFECTS: never removed).

_CHECK = {QUANTIZED_AWARE, SIDE_EFFECTS}


def _float_type(op: Operation) -> Any:
    t = op.operands[0].type
    return t.element_type if isinstance(t, TensorType) else None


def _reporter(op: Operation, ctx: PrepareContext) -> Callable[[str | None], None]:
    """Record a failure message (None: the check passed) at the op's location."""
    failures = ctx.process.check_failures
    where = format_location(op.location)

    def report(msg: str | None) -> None:
        if msg is not None:
            failures.append(f"{where}: {msg}")

    return report


# --- check.expect_eq, check.expect_eq_const ---------------------------------------------------

define("check.expect_eq", traits=_CHECK, summary="actual == expected, element-wise",
       syntax=declarative(OPERAND, COMMA, OPERAND, ATTRDICT, types("operand_types_same")))
define("check.expect_eq_const", traits=_CHECK, summary="actual == a constant, element-wise",
       syntax=declarative(OPERAND, COMMA, attr("value", "dense"), ATTRDICT))


@kernel("check.expect_eq")
def _expect_eq(op: Operation, ctx: PrepareContext) -> Kernel:
    report = _reporter(op, ctx)

    def run(actual: Any, expected: Any) -> tuple:
        report(mismatch_report(actual, expected, compare_eq(actual, expected), "expect_eq"))
        return ()

    return run


@kernel("check.expect_eq_const")
def _expect_eq_const(op: Operation, ctx: PrepareContext) -> Kernel:
    expected = op.attr("value").array
    report = _reporter(op, ctx)

    def run(actual: Any) -> tuple:
        report(mismatch_report(actual, expected, compare_eq(actual, expected),
                               "expect_eq_const"))
        return ()

    return run


# --- check.expect_almost_eq, check.expect_almost_eq_const -------------------------------------

_TOLERANCE = opt("tolerance", COMMA, *named("tolerance", "tolerance", "f64"))
define("check.expect_almost_eq", traits=_CHECK,
       summary="|actual - expected| <= tolerance, element-wise",
       syntax=declarative(OPERAND, COMMA, OPERAND, _TOLERANCE, ATTRDICT,
                          types("operand_types_same")))
define("check.expect_almost_eq_const", traits=_CHECK,
       summary="|actual - constant| <= tolerance, element-wise",
       syntax=declarative(OPERAND, COMMA, attr("value", "dense"), _TOLERANCE, ATTRDICT))


@kernel("check.expect_almost_eq")
def _expect_almost_eq(op: Operation, ctx: PrepareContext) -> Kernel:
    tol = float_attr(op, "tolerance", 1e-4)
    report = _reporter(op, ctx)

    def run(actual: Any, expected: Any) -> tuple:
        report(mismatch_report(actual, expected, compare_almost_eq(actual, expected, tol),
                               f"expect_almost_eq (tolerance {tol})"))
        return ()

    return run


@kernel("check.expect_almost_eq_const")
def _expect_almost_eq_const(op: Operation, ctx: PrepareContext) -> Kernel:
    tol = float_attr(op, "tolerance", 1e-4)
    expected = op.attr("value").array
    report = _reporter(op, ctx)

    def run(actual: Any) -> tuple:
        report(mismatch_report(actual, expected, compare_almost_eq(actual, expected, tol),
                               f"expect_almost_eq_const (tolerance {tol})"))
        return ()

    return run


# --- check.expect_close -----------------------------------------------------------------------

define("check.expect_close", traits=_CHECK,
       summary="ULP distance of actual and expected in [min, max], element-wise",
       syntax=declarative(OPERAND, COMMA, OPERAND, COMMA,
                          *named("max_ulp_difference", "max_ulp_difference", "ui64"),
                          opt("min_ulp_difference", COMMA,
                              *named("min_ulp_difference", "min_ulp_difference", "ui64")),
                          ATTRDICT, types("operand_types")))


@kernel("check.expect_close")
def _expect_close(op: Operation, ctx: PrepareContext) -> Kernel:
    lo = int_attr(op, "min_ulp_difference", 0)
    hi = int_attr(op, "max_ulp_difference", 1)
    ftype = _float_type(op)
    report = _reporter(op, ctx)

    def run(actual: Any, expected: Any) -> tuple:
        report(mismatch_report(actual, expected, compare_close(actual, expected, ftype, lo, hi),
                               f"expect_close (ULP distance in [{lo}, {hi}])"))
        return ()

    return run


# --- check.expect_serialized_eq, interpreter.probe --------------------------------------------

define("check.expect_serialized_eq", traits=_CHECK,
       summary="actual has the bytes of a probe's value at an iteration",
       syntax=declarative(OPERAND, COMMA, *named("probe_id", "probe_id", "str"),
                          opt("iter", COMMA, *named("iter", "iter", "ui64")), ATTRDICT,
                          types("operand_types")))
define("interpreter.probe", traits=_CHECK, summary="record the operand's value under probe_id",
       syntax=declarative(OPERAND, COMMA, *named("probe_id", "probe_id", "str"), ATTRDICT,
                          types("same")))


@kernel("check.expect_serialized_eq")
def _expect_serialized_eq(op: Operation, ctx: PrepareContext) -> Kernel:
    probe_id = str_attr(op, "probe_id")
    iteration = int_attr(op, "iter", 0)
    probes = ctx.process.probes
    report = _reporter(op, ctx)

    def run(actual: Any) -> tuple:
        recorded = probes.get(probe_id, [])
        if iteration >= len(recorded):
            report(f"expect_serialized_eq: probe '{probe_id}' has no value for iteration "
                   f"{iteration}")
        else:
            expected = recorded[iteration]
            same = np.asarray(actual).tobytes() == np.asarray(expected).tobytes()
            report(None if same else f"expect_serialized_eq: value differs from probe "
                   f"'{probe_id}' iteration {iteration}")
        return ()

    return run


@kernel("interpreter.probe")
def _probe(op: Operation, ctx: PrepareContext) -> Kernel:
    probe_id = str_attr(op, "probe_id")
    probes = ctx.process.probes

    def run(x: Any) -> tuple:
        probes.setdefault(probe_id, []).append(np.array(x, copy=True))
        return (x,)

    return run


# --- interpreter.print ------------------------------------------------------------------------

define("interpreter.print", traits=_CHECK, summary="print the operand (upstream's format)",
       syntax=declarative(OPERAND, ATTRDICT, types("operand_types")))

_PRINT_LOCK = threading.Lock()


@kernel("interpreter.print")
def _print(op: Operation, ctx: PrepareContext) -> Kernel:
    """`interpreter.print %x`: print the value in the upstream interpreter's format."""
    t = op.operands[0].type
    name = op.operands[0].name
    prefix = f"%{name} = " if name else ""

    def run(x: Any) -> tuple:
        with _PRINT_LOCK:
            sys.stdout.write(prefix + format_value(x, t) + "\n")
        return ()

    return run


# --- custom_call targets: fn(op, ctx) -> run ---------------------------------------------------


def _cc_expect(compare: Callable[[Any, Any, Any], np.ndarray], what: str
               ) -> Callable[[Operation, PrepareContext], Kernel]:
    def prepare(op: Operation, ctx: PrepareContext) -> Kernel:
        report = _reporter(op, ctx)
        ftype = _float_type(op)
        nres = len(op.results)

        def run(actual: Any, expected: Any) -> tuple:
            report(mismatch_report(actual, expected, compare(actual, expected, ftype), what))
            return (TOKEN,) * nres

        return run

    return prepare


def _cc_eq(op: Operation, ctx: PrepareContext) -> Kernel:
    report = _reporter(op, ctx)

    def run(expected: Any, actual: Any) -> tuple:
        a = np.asarray(actual)
        ok = compare_eq(actual, expected) if a.dtype.kind in "biu" else compare_almost_eq(
            actual, expected, 1e-4)
        msg = mismatch_report(actual, expected, ok, "check.eq")
        report(msg)
        return (np.asarray(msg is None),)

    return run


CHECK_TARGETS: dict[str, Callable[[Operation, PrepareContext], Kernel]] = {
    "check.expect_eq": _cc_expect(lambda a, e, t: compare_eq(a, e), "check.expect_eq"),
    "check.expect_almost_eq": _cc_expect(lambda a, e, t: compare_almost_eq(a, e, 1e-3),
                                         "check.expect_almost_eq"),
    "check.expect_close": _cc_expect(lambda a, e, t: compare_close(a, e, t, 0, 3),
                                     "check.expect_close"),
    "check.eq": _cc_eq,
}
"""custom_call targets handled by shlo itself (see :mod:`shlo.ops.custom_call`)."""
