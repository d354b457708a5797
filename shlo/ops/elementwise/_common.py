"""What the element-wise op modules share: the kernel helpers (decode the element type once,
compute wider and round once) and the declaration of the same-type unary and binary ops.

``unary_op("cbrt", FP_C_Q_TENSOR, DOQ, accuracy=True)`` declares `stablehlo.cbrt` in one line:
its definition (spec section, traits, the pretty form `stablehlo.cbrt %x : T`), its type
inference (the operand's type) and its verifier; the op's section then adds its kernel.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...attributes import StructAttr
from ...errors import Diagnostics, ExecutionError
from ...ir import Operation
from ...registry import ELEMENTWISE, Kernel, define, inference, verifier
from ...syntax.directives import ATTRDICT, COMMA, OPERAND, declarative, types
from ...types import ComplexType, ElementType, TensorType, Type
from .. import _constraints as _c
from .._numeric import C128, F32, F64, IntInfo, from_f64
from .. import _pool
from .._half import binary as half_binary, half_format, in_order, memory_order
from ._tables import tabled_binary, tabled_unary

__all__ = [
    "Fn", "UNARY", "BINARY", "unary_op", "binary_op", "infer_same", "most_specific",
    "complex_part", "operand_et", "result_et", "unsupported", "one", "on_wide", "via_f64",
    "via_c128", "via_f32", "on_cores", "float_unary", "narrow_unary", "narrow_binary",
    "narrow_pairwise",
]

Fn = Callable[..., Any]

# --- declarations ---------------------------------------------------------------------------------

UNARY = declarative(OPERAND, ATTRDICT, types("same"))
"""`stablehlo.op %x : T` (upstream `$operand attr-dict : custom<SameOperandsAndResultType>`)."""
BINARY = declarative(OPERAND, COMMA, OPERAND, ATTRDICT, types("same"))
"""`stablehlo.op %x, %y : T`."""


def most_specific(ts: list[Type]) -> Type:
    """The most specific of compatible types: the first, with the static sizes any of them has
    where it has `?` (upstream's inferMostSpecificType)."""
    first = ts[0]
    if all(t is first for t in ts):
        return first
    ranked = [t for t in ts if isinstance(t, TensorType) and t.shape is not None]
    if not ranked or any(len(t.shape) != len(ranked[0].shape) for t in ranked):  # type: ignore
        return first
    dims = tuple(next((t.shape[d] for t in ranked if t.shape[d] is not None), None)  # type: ignore
                 for d in range(len(ranked[0].shape)))  # type: ignore[arg-type]
    if isinstance(first, TensorType) and dims != first.shape:
        return TensorType(dims, first.element_type)
    return first


def infer_same(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """SameOperandsAndResultType: the result has the operands' type, the most specific of them
    where some dimension sizes are `?`. (Quantized results may differ from the operands in their
    scales and zero points: the operand's quantization is returned.)"""
    if not op.operands:
        return None
    return [most_specific([v.type for v in op.operands])]


def _result_accuracy(op: Operation, diag: Diagnostics, label: str = "") -> bool:
    """`result_accuracy` of the transcendental ops: tolerances are non-negative and all zero in
    modes other than TOLERANCE."""
    a = op.attr("result_accuracy")
    if not isinstance(a, StructAttr):
        return True

    def num(key: str) -> float:
        v = a.get(key, 0)
        v = getattr(v, "value", v)
        try:
            return float(v)
        except (TypeError, ValueError, OverflowError):
            return 0.0
    atol, rtol, ulps = num("atol"), num("rtol"), num("ulps")
    mode = a.get("mode")
    mode = getattr(mode, "value", mode)
    if isinstance(mode, StructAttr):
        mode = mode.get("value", mode)
    if min(atol, rtol, ulps) < 0:
        diag.error(op, label, f"Negative tolerance for ResultAccuracyAttr: atol = {atol}, "
                              f"rtol = {rtol}, ulps = {ulps}")
        return False
    if isinstance(mode, str) and not mode.endswith("TOLERANCE") and (atol or rtol or ulps):
        diag.error(op, label, "Invalid tolerances for ResultAccuracyAttr with mode "
                              f"{mode.rsplit(' ', 1)[-1].rsplit('.', 1)[-1]}, must be all zero.")
        return False
    return True


def unary_op(name: str, operand: _c.TC, *traits: str, accuracy: bool = False) -> None:
    """Declare `stablehlo.<name>`, a unary element-wise op whose result has its operand's type
    (``operand`` constrains both): definition, type inference and verifier. ``accuracy``: the op
    takes an optional `result_accuracy` attribute (the transcendental functions)."""
    full = "stablehlo." + name
    define(full, spec=name, traits={ELEMENTWISE, *traits}, syntax=UNARY)
    inference(full)(infer_same)

    def verify(op: Operation, diag: Diagnostics) -> None:
        if not _c.signature(op, diag, [operand], [operand],
                            optional_attrs={"result_accuracy": "any"}):
            return
        _c.compatible_all(op, diag, "C1")
        if accuracy:
            _result_accuracy(op, diag)

    verify.__name__ = f"_verify_{name}"
    verify.__doc__ = (f"`{name}` (C1) `baseline_type(operand) = baseline_type(result)`: the "
                      "written types are compatible (upstream's CompatibleOperandsAndResultType)"
                      + ("; a `result_accuracy` attribute is well formed." if accuracy else "."))
    verifier(full)(verify)


def binary_op(name: str, operands: _c.TC, *traits: str, result: _c.TC | None = None) -> None:
    """Declare `stablehlo.<name>`, a binary element-wise op whose operands and result have one
    type: definition, type inference and verifier. ``operands`` constrains the operands,
    ``result`` (default the same) the result."""
    full = "stablehlo." + name
    define(full, spec=name, traits={ELEMENTWISE, *traits}, syntax=BINARY)
    inference(full)(infer_same)
    res = operands if result is None else result

    def verify(op: Operation, diag: Diagnostics) -> None:
        if _c.signature(op, diag, [operands, operands], [res]):
            _c.compatible_all(op, diag, "C1")

    verify.__name__ = f"_verify_{name}"
    verify.__doc__ = (f"`{name}` (C1) `baseline_type(lhs) = baseline_type(rhs) = "
                      "baseline_type(result)`.")
    verifier(full)(verify)


def complex_part(et: Any) -> Any:
    """The element type of a complex type's parts; other element types as they are."""
    return et.element if isinstance(et, ComplexType) else et


# --- kernel helpers -------------------------------------------------------------------------------


def _etype(value_type: Any) -> ElementType:
    """The element type of a tensor type (quantized types are returned as they are)."""
    if isinstance(value_type, TensorType):
        return value_type.element_type
    raise ExecutionError(f"expected a tensor type, got {value_type}")


def operand_et(op: Operation, i: int = 0) -> ElementType:
    return _etype(op.operands[i].type)


def result_et(op: Operation, i: int = 0) -> ElementType:
    return _etype(op.results[i].type)


def unsupported(op: Operation, et: ElementType) -> ExecutionError:
    return ExecutionError(f"'{op.name}' is not defined for element type {et}", op.location)


def one(fn: Fn) -> Kernel:
    """Wrap a function returning one value into a kernel returning a 1-tuple; the function is
    the kernel's ``direct`` form (prepared code calls it without the tuple)."""
    k = lambda *args: (fn(*args),)  # noqa: E731
    k.direct = fn  # type: ignore[attr-defined]
    return k


def on_wide(fn: Fn, info: IntInfo) -> Fn:
    """Run integer ``fn`` on the native ``wide`` dtype and cast back (wrapping) when needed."""
    if info.native:
        return fn
    wide, dt = info.wide, info.dtype

    def run(*xs: Any) -> Any:
        return np.asarray(fn(*[np.asarray(x).astype(wide) for x in xs])).astype(dt)

    return run


def via_f64(fn: Fn, dt: np.dtype) -> Fn:
    """Compute float ``fn`` in float64 and round once to ``dt``. A numpy ufunc on f32 takes
    its float64 loop directly (``dtype=float64``: the same exact widening, the same loop, one
    call less: ~1.3 against ~1.9 us on 16 elements; tests/ops/test_fast_paths.py compares the
    two bit for bit)."""
    if dt == F64:
        return fn
    if dt == F32 and isinstance(fn, np.ufunc) and fn.nout == 1 and fn.nin in (1, 2):
        if fn.nin == 1:
            return lambda x: fn(x, dtype=F64).astype(F32)
        return lambda x, y: fn(x, y, dtype=F64).astype(F32)
    rnd = from_f64(dt)
    return lambda *xs: rnd(fn(*[np.asarray(x, F64) for x in xs]))


def via_c128(fn: Fn, dt: np.dtype) -> Fn:
    """Compute complex ``fn`` in complex128 and round once to ``dt``."""
    if dt == C128:
        return fn
    return lambda *xs: np.asarray(fn(*[np.asarray(x, C128) for x in xs])).astype(dt)


def via_f32(fn: Fn, dt: np.dtype) -> Fn:
    """Compute ``fn`` in float32 and cast back, for operations whose float32 result is exactly
    representable in the narrower format (rounding to integers, sign)."""
    if dt == F32 or dt == F64:
        return fn
    return lambda *xs: np.asarray(fn(*[np.asarray(x, F32) for x in xs])).astype(dt)


def on_cores(fn: Fn, dt: np.dtype) -> Fn:
    """``fn`` (an element-wise function of one ``dt`` operand, with a ``dt`` result) with large
    operands (:data:`._pool.COSTLY_MIN`) cut into pieces that the cores take in turn: element by
    element the same results
    (each element is computed from its own operand element, whatever the piece)."""
    ufunc = isinstance(fn, np.ufunc)

    def into(a: np.ndarray, o: np.ndarray) -> None:
        if ufunc:
            fn(a, out=o)
        else:
            o[...] = fn(a)

    def run(x: Any) -> Any:
        if getattr(x, "size", 0) < _pool.COSTLY_MIN or x.dtype != dt or _pool.cores() < 2:
            return fn(x)  # (small operands first, at one attribute's cost: loop bodies)
        v, perm = memory_order(x)
        if not v.flags.c_contiguous:
            return fn(x)
        out = np.empty(v.shape, dt)
        _pool.split(into, (v.reshape(-1), out.reshape(-1)), _pool.COSTLY_MIN // 2)
        return in_order(out, perm)

    return run


def float_unary(op: Operation, real_fn: Fn, complex_fn: Fn | None,
                native_f32: bool = False, f32: Fn | None = None) -> Kernel:
    """Kernel of a unary function of float or complex operands, computed wider, rounded once.

    ``native_f32``: on f32, use numpy's own float32 function instead (measured within 1 ulp of
    the correctly rounded value on 2e7 random inputs for tanh, sine and cosine, and 5x faster;
    docs/semantics/elementwise.md), or ``f32`` when given, which must give its bits.
    ``f32`` without ``native_f32``: on f32, this function instead, which must give
    ``via_f64(real_fn, f32)``'s bits (``real_fn`` with its first ufunc widening the f32
    operand itself, one call less; tests/ops/test_fast_paths.py compares them; it chooses its
    own cores). Otherwise large float32 and float64 operands are spread over the cores
    (:func:`on_cores`).
    """
    et = operand_et(op)
    dt = et.dtype
    if native_f32 and dt == F32:
        return one(on_cores(real_fn, dt) if f32 is None else f32)
    if f32 is not None and dt == F32:
        return one(f32)
    if et.is_float:
        wide = via_f64(real_fn, dt)
        return one(on_cores(wide, dt) if dt in (F32, F64) else narrow_unary(op, wide, dt))
    if et.is_complex and complex_fn is not None:
        return one(via_c128(complex_fn, dt))
    raise unsupported(op, et)


def narrow_unary(op: Operation, careful: Fn, dt: np.dtype) -> Fn:
    """``careful`` itself, or for a float type of at most 16 bits the same function as a lookup
    table over every bit pattern (bit for bit ``careful``'s results; ``_tables.py``)."""
    return tabled_unary(op.name, careful, dt) or careful


def narrow_binary(op: Operation, careful: Fn, dt: np.dtype) -> Fn:
    """``careful`` itself, or for a one-byte float type (f8, f6, f4) the same function as a
    256 x 256 lookup table (bit for bit ``careful``'s results; ``_tables.py``), or for f16 and
    bf16 add, subtract, multiply and divide the compiled f32 loop (``ops/_half.py``; bit for
    bit numpy's and ml_dtypes' own, which ``careful`` must be)."""
    return (tabled_binary(op.name, careful, dt) or
            half_binary(op.name.rpartition(".")[2], dt, careful) or careful)


def narrow_pairwise(key: str, careful: Fn, dt: np.dtype, half_loop: Fn, out: Any = None) -> Fn:
    """``careful`` (a binary function on floats of at most 16 bits returning ``out``, default
    ``dt``) as a 256 x 256 table for a one-byte format; for f16/bf16 ``half_loop(x, y)`` (a
    compiled loop of ``ops/_half.py``; None: ``careful``, for small arrays); else ``careful``."""
    tabled = tabled_binary(key, careful, dt, out)
    if tabled is not None:
        return tabled
    if half_format(dt) is None:
        return careful

    def run(x: Any, y: Any) -> Any:
        fast = half_loop(x, y)
        return careful(x, y) if fast is None else fast

    return run
