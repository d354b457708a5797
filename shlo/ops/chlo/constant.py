"""chlo.constant and chlo.constant_like (lowered to stablehlo.constant / a splat upstream)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ...attributes import DenseElementsAttr, FloatAttr, IntegerAttr
from ...errors import Diagnostics, ExecutionError
from ...ir import Operation
from ...registry import Kernel, define, inference, kernel, verifier
from ...syntax.dense import scalar_value
from ...syntax.directives import Format, parse_attrdict
from ...types import TensorType, Type
from .. import _constraints as _c
from .._numeric import round_from_wide
from ._common import ANY, result_type, wide_dtype

if TYPE_CHECKING:  # pragma: no cover
    from ...interpreter.evaluator import PrepareContext
    from ...syntax.parser import Parser
    from ...syntax.printer import Printer

__all__: list[str] = []

# --- constant -------------------------------------------------------------------------------------


def _parse_constant(p: Parser, name: str, nres: int, start: int) -> Operation:
    """`chlo.constant {attrs} dense<...> : T` (upstream `attr-dict $value`): the result has the
    value's type."""
    props: dict[str, Any] = {}
    attrs: dict[str, Any] = {}
    parse_attrdict(p, name, props, attrs)
    value = p.parse_attribute()
    t = getattr(value, "type", None)
    if t is None:
        p.error("expected a typed constant value", found=False)
    props["value"] = value
    return Operation(name, [], [t], props, attrs)


def _print_constant(pr: Printer, op: Operation) -> str | None:
    v = op.attr("value")
    if op.operands or len(op.results) != 1 or getattr(v, "type", None) != op.results[0].type \
            or type(v) not in (DenseElementsAttr, IntegerAttr, FloatAttr):
        return None
    return f"{pr.attr_dict(op, {'value'})} {pr.attr(v)}"


define("chlo.constant", summary="ChloOps.td", inherent="value",
       syntax=Format(_parse_constant, _print_constant, frozenset({"value"})))


@kernel("chlo.constant")
def constant(op: Operation, ctx: PrepareContext) -> Kernel:
    """`chlo.constant`: the `value` attribute (lowered to stablehlo.constant upstream)."""
    value = op.attr("value")
    if not isinstance(value, DenseElementsAttr):
        raise ExecutionError("chlo.constant: `value` must be a dense elements attribute",
                             op.location)
    t = result_type(op)
    a = np.asarray(value.array)
    if a.dtype != t.dtype:
        a = a.astype(t.dtype)
    if t.is_static and a.shape != tuple(t.shape):  # type: ignore[arg-type]
        a = np.broadcast_to(a, t.shape) if a.size == 1 else a.reshape(t.shape)
    a = a.view()
    a.flags.writeable = False
    out = (a,)
    return lambda: out


@inference("chlo.constant")
def _infer_constant(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """The type of `value`."""
    vt = getattr(op.attr("value"), "type", None)
    return [vt] if isinstance(vt, TensorType) else None


@verifier("chlo.constant")
def _verify_chlo_constant(op: Operation, diag: Diagnostics) -> None:
    """`chlo.constant`: the value's type is the result type (C1)."""
    if not _c.signature(op, diag, [], [_c.TC(_c.F | _c.B | _c.I | _c.C | _c.Q, static=True)],
                        attrs={"value": "any"}):
        return
    inferred = _infer_constant(op, diag)
    if inferred is not None and not _c.same_type(inferred[0], op.results[0].type):
        diag.error(op, "C1", f"inferred type(s) {_c.types_str(inferred)} are incompatible with "
                             f"return type(s) of operation {_c.types_str(op.result_types)}")


# --- constant_like --------------------------------------------------------------------------------

define("chlo.constant_like", summary="ChloOps.td", inherent="value")


def _scalar_value(attr: Any) -> Any:
    """The Python value of the scalar `value` attribute (integer, float, bool or complex)."""
    try:
        return scalar_value(attr)
    except ValueError as e:
        raise ExecutionError(f"chlo.constant_like: {e}") from None


@kernel("chlo.constant_like")
def constant_like(op: Operation, ctx: PrepareContext) -> Kernel:
    """`chlo.constant_like`: a splat of `value` with the operand's (run-time) shape."""
    dtype = result_type(op).dtype
    value = np.asarray(_scalar_value(op.attr("value")))
    scalar = round_from_wide(value.astype(wide_dtype(dtype)) if value.dtype.kind in "fc"
                             else value, dtype)

    def run(x: Any) -> Sequence[Any]:
        return (np.full(np.shape(x), scalar, dtype=dtype),)

    return run


@inference("chlo.constant_like")
def _infer_constant_like(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """The operand's shape, the element type of `value`."""
    t = op.operands[0].type
    vt = getattr(op.attr("value"), "type", None)
    if isinstance(vt, TensorType):
        vt = vt.element_type
    if not isinstance(t, TensorType) or vt is None:
        return None
    return [TensorType(t.shape, vt)]


@verifier("chlo.constant_like")
def _verify_chlo_constant_like(op: Operation, diag: Diagnostics) -> None:
    """`chlo.constant_like`: a scalar value of the result's element type, the operand's
    shape."""
    if not _c.signature(op, diag, [ANY], [ANY], attrs={"value": "any"}):
        return
    vt = getattr(op.attr("value"), "type", None)
    res = op.results[0].type
    if vt is not None and not isinstance(vt, TensorType) and \
            not _c.same_element_type(vt, res.element_type):
        diag.error(op, "C1", f"value's type doesn't match element return type: "
                             f"'{_c.type_str(vt)}' vs '{_c.type_str(res.element_type)}'")
        return
    _c.same_shapes(op, diag, "C1")
