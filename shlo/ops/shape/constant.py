"""constant and iota (spec "constant", "iota"): the tensors a program writes down.

Their results are computed once, when the op is prepared, and handed out read-only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ...attributes import DenseElementsAttr, int_attr
from ...errors import Diagnostics
from ...ir import Operation
from ...registry import QUANTIZED_STORAGE, Kernel, define, inference, kernel, verifier
from ...syntax.directives import (
    ATTRDICT, Format, declarative, named, parse_attrdict, types,
)
from ...syntax.lexer import PUNCT
from ...types import FunctionType, QuantizedType, TensorType, Type
from .. import _constraints as _c
from .._arrays import readonly, result_type

if TYPE_CHECKING:  # pragma: no cover
    from ...interpreter.evaluator import PrepareContext
    from ...syntax.parser import Parser
    from ...syntax.printer import Printer

__all__ = ["constant", "iota", "iota_array"]

# --- constant (spec "constant") ------------------------------------------------------------------


def _parse_constant(p: Parser, name: str, nres: int, start: int) -> Operation:
    """`stablehlo.constant dense<...> : tensor<...>`, or for a quantized result (whose literal
    holds storage values) `stablehlo.constant() <{value = ...}> : () -> type`."""
    props: dict[str, Any] = {}
    attrs: dict[str, Any] = {}
    if p.v == "(" and p.k == PUNCT:
        p._advance()
        p.expect(")")
        if p.v == "<" and p.k == PUNCT:
            p._advance()
            props.update(p.dict_items())
            p.expect(">")
        parse_attrdict(p, name, props, attrs)
        p.expect(":")
        off = p.start
        ft = p.parse_type()
        if not isinstance(ft, FunctionType) or ft.inputs or len(ft.results) != 1:
            p.error("expected '() -> type'", off, found=False)
        return Operation(name, [], list(ft.results), props, attrs)
    parse_attrdict(p, name, props, attrs)
    off = p.start
    if p.v != "dense":
        value = p.parse_attribute()
    else:
        value = p.dense_attr()
    if not isinstance(value, DenseElementsAttr):
        t = getattr(value, "type", None)
        if t is None:
            p.error("expected a typed elements attribute", off, found=False)
    else:
        t = value.type
    props["value"] = value
    return Operation(name, [], [t], props, attrs)


def _print_constant(pr: Printer, op: Operation) -> str | None:
    v = op.attr("value")
    if op.operands or len(op.results) != 1 or op.regions or v is None:
        return None
    rt = op.results[0].type
    if isinstance(v, DenseElementsAttr) and v.type == rt:
        d = pr.attr_dict(op, {"value"})
        return f"{d} {pr.attr(v)}"
    # quantized constants (value type differs from result type) print in the generic-like form
    props = "<{value = " + pr.attr(v) + "}>"
    d = pr.attr_dict(op, {"value"})
    return f"(){' ' + props}{d} : () -> {pr.type(rt)}"


define("stablehlo.constant", spec="constant", summary="a tensor literal",
       traits={QUANTIZED_STORAGE},
       syntax=Format(_parse_constant, _print_constant, frozenset({"value"})))


@kernel("stablehlo.constant", quantized_aware=True)
def constant(op: Operation, ctx: PrepareContext) -> Kernel:
    """Spec "constant": ``output = value``.

    The result is a read-only view of the attribute's array (for quantized results, its storage
    values), so no caller can mutate the program's constant.
    """
    value = op.attr("value")
    if not isinstance(value, DenseElementsAttr):
        raise TypeError(f"constant: `value` must be a dense elements attribute, got {value!r}")
    t = op.results[0].type
    a = np.asarray(value.array)
    if isinstance(t, TensorType):
        if a.dtype != t.dtype:
            a = a.astype(t.dtype)
        if t.is_static and a.shape != t.shape:
            a = np.broadcast_to(a, t.shape) if a.size == 1 else a.reshape(t.shape)
    # A 0-d constant of numpy's own types is a numpy scalar (immutable): scalar arithmetic on
    # numpy scalars is ~10x faster than on 0-d arrays, which matters in scalar `while` loops.
    out = (a[()] if a.ndim == 0 and a.dtype.isbuiltin == 1 else readonly(a),)

    def run() -> Sequence[Any]:
        return out

    run.constant = out[0]  # type: ignore[attr-defined]  # prepared code reads the value itself
    return run


@inference("stablehlo.constant")
def _infer_constant(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """`type(output) = type(value)` (a quantized output's literal holds its storage values, so
    its type is not the value's: the verifier allows that)."""
    vt = getattr(op.attr("value"), "type", None)
    return [vt] if isinstance(vt, TensorType) else None


_STATIC_CONSTANT = _c.TC(_c.F | _c.B | _c.I | _c.C | _c.Q | _c.QA, static=True)


@verifier("stablehlo.constant")
def _verify_constant(op: Operation, diag: Diagnostics) -> None:
    """(C1) `type(value) = type(output)` (for a quantized output, the literal holds storage
    values); the output is statically shaped."""
    if not _c.signature(op, diag, [], [_STATIC_CONSTANT], attrs={"value": "any"}):
        return
    inferred = _infer_constant(op, diag)
    out = op.results[0].type
    if inferred is None or _c.same_type(inferred[0], out):
        return
    vt = inferred[0]
    oe = out.element_type
    if isinstance(oe, QuantizedType) and vt.shape == out.shape and \
            _c.same_element_type(vt.element_type, oe.storage_type):
        return
    diag.error(op, "C1", f"inferred type(s) {_c.types_str([vt])} are incompatible with return "
                         f"type(s) of operation {_c.types_str([out])}")


# --- iota (spec "iota") --------------------------------------------------------------------------

define("stablehlo.iota", spec="iota", summary="increasing values along one dimension",
       syntax=declarative(*named("dim", "iota_dimension", "i64"), ATTRDICT, types("results")))


def iota_array(shape: tuple[int, ...], iota_dimension: int, dtype: np.dtype) -> np.ndarray:
    """``output[i] = i[iota_dimension]`` as a read-only array of ``dtype``."""
    n = shape[iota_dimension]
    if dtype == np.bool_:
        line = np.arange(n) != 0
    else:
        line = np.arange(n, dtype=np.int64).astype(dtype)
    view = [1] * len(shape)
    view[iota_dimension] = n
    a = np.broadcast_to(line.reshape(view), shape)
    return readonly(np.ascontiguousarray(a))


@kernel("stablehlo.iota")
def iota(op: Operation, ctx: PrepareContext) -> Kernel:
    """Spec "iota": fills the result with increasing values along ``iota_dimension``."""
    t = result_type(op)
    dim = int_attr(op, "iota_dimension")
    if not t.is_static:
        raise TypeError("iota: the result type must be static (use dynamic_iota)")
    shape, dtype = t.shape, t.dtype
    if int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize > KEEP_IOTA_BYTES:
        # built when it runs, like any result: a prepared function kept per process (64
        # threads of a grid, every MPI rank) does not hold a copy of a large iota forever
        def build() -> Sequence[Any]:
            return (iota_array(shape, dim, dtype),)  # type: ignore[arg-type]

        return build
    out = (iota_array(shape, dim, dtype),)  # type: ignore[arg-type]

    def run() -> Sequence[Any]:
        return out

    return run


KEEP_IOTA_BYTES = 1 << 22
"""An iota up to this size (4 MiB) is built once, when its function is prepared."""


_STATIC_IOTA = _c.TC(_c.I | _c.F | _c.C | _c.Q, static=True)


@verifier("stablehlo.iota")
def _verify_iota(op: Operation, diag: Diagnostics) -> None:
    """(C1) `0 <= iota_dimension < rank(output)`."""
    if not _c.signature(op, diag, [], [_STATIC_IOTA], attrs={"iota_dimension": "int"}):
        return
    d = int_attr(op, "iota_dimension", None)
    shape = op.results[0].type.shape
    if d < 0:
        diag.error(op, "C1", f"attribute 'iota_dimension' failed to satisfy constraint: 64-bit "
                             f"signless integer attribute whose value is non-negative (got {d})")
    elif not shape:
        diag.error(op, "C1", "does not support scalars")
    elif d >= len(shape):
        diag.error(op, "C1", f"iota dimension cannot go beyond the output rank: iota_dimension "
                             f"= {d}, rank = {len(shape)}")
