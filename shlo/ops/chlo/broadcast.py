"""The broadcasting chlo ops: `chlo.broadcast_<op>` (add ... zeta, compare, complex) and
`chlo.broadcast_select`.

They broadcast their operands (XLA rules: `broadcast_dimensions` maps the lower-rank operand
into the result, numpy prefix padding when omitted, then size-1 dimensions expand) and then run
the non-broadcasting op's own kernel (`stablehlo.add` ...), exactly as the lowering
(`chlo-legalize-to-stablehlo`) rewrites them. Quantized operands are therefore handled as those
ops handle them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ...attributes import EnumAttr, ints, ints_attr
from ...errors import Diagnostics, ExecutionError
from ...ir import Operation, Value
from ...registry import QUANTIZED_AWARE, Kernel, define, inference, kernel, verifier
from ...syntax.directives import ATTRDICT, COMMA, OPERAND, OPERANDS, declarative, types
from ...types import ComplexType, TensorType, Type
from .. import _constraints as _c
from ._common import ANY, PRED, PRED_INT, F, I1, result_type, tensor_type

if TYPE_CHECKING:  # pragma: no cover
    from ...interpreter.evaluator import PrepareContext

__all__ = ["BROADCAST_TARGETS", "broadcast_operands"]

BROADCAST_TARGETS = {
    "chlo.broadcast_add": "stablehlo.add",
    "chlo.broadcast_and": "stablehlo.and",
    "chlo.broadcast_atan2": "stablehlo.atan2",
    "chlo.broadcast_complex": "stablehlo.complex",
    "chlo.broadcast_divide": "stablehlo.divide",
    "chlo.broadcast_maximum": "stablehlo.maximum",
    "chlo.broadcast_minimum": "stablehlo.minimum",
    "chlo.broadcast_multiply": "stablehlo.multiply",
    "chlo.broadcast_next_after": "chlo.next_after",
    "chlo.broadcast_or": "stablehlo.or",
    "chlo.broadcast_polygamma": "chlo.polygamma",
    "chlo.broadcast_power": "stablehlo.power",
    "chlo.broadcast_remainder": "stablehlo.remainder",
    "chlo.broadcast_shift_left": "stablehlo.shift_left",
    "chlo.broadcast_shift_right_arithmetic": "stablehlo.shift_right_arithmetic",
    "chlo.broadcast_shift_right_logical": "stablehlo.shift_right_logical",
    "chlo.broadcast_subtract": "stablehlo.subtract",
    "chlo.broadcast_xor": "stablehlo.xor",
    "chlo.broadcast_zeta": "chlo.zeta",
    "chlo.broadcast_compare": "stablehlo.compare",
}
"""Each binary broadcasting op and the op it applies once its operands are broadcast."""

# Operand and result constraints of the binary broadcasting ops (others: any tensor).
_KINDS = {
    "chlo.broadcast_and": (PRED_INT, ANY), "chlo.broadcast_or": (PRED_INT, ANY),
    "chlo.broadcast_xor": (PRED_INT, ANY), "chlo.broadcast_zeta": (F, F),
    "chlo.broadcast_complex": (F, _c.TC(_c.C, ranked=False)),
    "chlo.broadcast_compare": (ANY, PRED),
}

_FUNCTIONAL = declarative(OPERANDS, ATTRDICT, types("functional"))
for _name in BROADCAST_TARGETS:
    if _name == "chlo.broadcast_compare":
        define(_name, summary="ChloOps.td", traits={QUANTIZED_AWARE},
               inherent="broadcast_dimensions comparison_direction compare_type",
               syntax=declarative(OPERAND, COMMA, OPERAND, ATTRDICT, types("functional")))
    else:
        define(_name, summary="ChloOps.td", traits={QUANTIZED_AWARE},
               inherent="broadcast_dimensions", syntax=_FUNCTIONAL)


# --- broadcasting at run time ---------------------------------------------------------------------


def _expand_plan(rank: int, result_rank: int, dims: tuple[int, ...] | None) -> tuple[int, ...]:
    """Where each dimension of an operand of ``rank`` goes in the result."""
    if rank == result_rank:
        return tuple(range(rank))
    if dims is not None:
        if len(dims) != rank:
            raise ExecutionError(f"broadcast_dimensions {list(dims)} do not match an operand of "
                                 f"rank {rank}")
        if any(not 0 <= d < result_rank for d in dims) or len(set(dims)) != len(dims):
            raise ExecutionError(f"broadcast_dimensions {list(dims)} must be distinct "
                                 f"dimensions of the rank-{result_rank} result, in "
                                 f"[0, {result_rank})")
        return dims
    return tuple(range(result_rank - rank, result_rank))


def broadcast_operands(arrays: Sequence[np.ndarray], plans: Sequence[tuple[int, ...]],
                       result_rank: int) -> list[np.ndarray]:
    """Place each array's dimensions per its plan, then broadcast size-1 dimensions (views)."""
    placed = []
    for a, plan in zip(arrays, plans):
        a = np.asarray(a)
        if a.ndim != result_rank:
            shape = [1] * result_rank
            order = sorted(range(len(plan)), key=lambda i: plan[i])
            a = a.transpose(order) if order != list(range(len(plan))) else a
            for i in order:
                shape[plan[i]] = np.shape(arrays[len(placed)])[i]
            a = a.reshape(shape)
        placed.append(a)
    try:
        return list(np.broadcast_arrays(*placed))
    except ValueError as e:
        shapes = ", ".join(str(tuple(np.shape(a))) for a in arrays)
        raise ExecutionError(f"operands of shapes {shapes} are not broadcastable") from e


def _synthetic(name: str, op: Operation, operand_types: list[TensorType]) -> Operation:
    """The non-broadcasting op the lowering would create, with same-shaped operands."""
    properties: dict[str, Any] = {}
    for key in ("comparison_direction", "compare_type"):
        a = op.attr(key)
        if isinstance(a, EnumAttr):
            properties[key] = EnumAttr("stablehlo", a.enum, a.value)
        elif a is not None:
            properties[key] = a
    operands = [Value(t, None, i) for i, t in enumerate(operand_types)]
    return Operation(name, operands, [v.type for v in op.results], properties=properties,
                     location=op.location)


def _same_shape_types(op: Operation) -> list[TensorType]:
    result = result_type(op)
    return [TensorType(result.shape, tensor_type(v).element_type) for v in op.operands]


# --- broadcast_add ... broadcast_zeta, broadcast_compare, broadcast_complex -----------------------


@kernel(*BROADCAST_TARGETS)
def broadcast_binary(op: Operation, ctx: PrepareContext) -> Kernel:
    """`chlo.broadcast_<op>(lhs, rhs)`: broadcast both operands, then apply `<op>`.

    With operands of different ranks, `broadcast_dimensions` says where the lower-rank
    operand's dimensions go in the result (numpy prefix padding when omitted); then size-1
    dimensions are expanded (XLA broadcasting semantics, of which the lowering supports the
    numpy subset).
    """
    lhs_t, rhs_t = tensor_type(op.operands[0]), tensor_type(op.operands[1])
    result_rank = result_type(op).rank
    dims = ints(op.attr("broadcast_dimensions"))
    plans = [_expand_plan(t.rank, result_rank, dims) for t in (lhs_t, rhs_t)]
    inner = ctx.prepare(_synthetic(BROADCAST_TARGETS[op.name], op, _same_shape_types(op)))
    if lhs_t.rank == rhs_t.rank == result_rank:
        # Equal ranks: the element-wise kernel's own (numpy) broadcasting expands size-1
        # dimensions, and arrays of any shape pass through, as in batched region bodies.
        return inner

    def run(lhs: Any, rhs: Any) -> Sequence[Any]:
        a, b = broadcast_operands([lhs, rhs], plans, result_rank)
        return inner(a, b)

    return run


def _broadcast_shape(op: Operation, diag: Diagnostics, lhs: Any, rhs: Any) -> tuple | None:
    """The shape of broadcasting ``lhs`` with ``rhs`` (numpy rules, or `broadcast_dimensions`
    mapping the lower-rank operand, the second one when ranks are equal), None when unknown.
    As upstream (`getBroadcastTypeWithBroadcastDimensions`), shapes that do not broadcast and
    broadcast_dimensions that map nothing make the result unknown (any result type is
    accepted), not an error: the ops' verifiers check element types only."""
    a, b = lhs.shape, rhs.shape
    if a is None or b is None:
        return None
    bdims = ints_attr(op, "broadcast_dimensions", None)
    if bdims is not None:
        small, large = (a, b) if len(a) < len(b) else (b, a)
        if len(bdims) != len(small) or any(not 0 <= d < len(large) for d in bdims):
            return None
        filtered = _broadcast_dims(small, tuple(large[d] for d in bdims))
        if filtered is None:
            return None
        out = list(large)
        for i, d in enumerate(bdims):
            out[d] = filtered[i]
        return tuple(out)
    n = max(len(a), len(b))
    return _broadcast_dims((1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b))


def _broadcast_dims(a: tuple, b: tuple) -> tuple | None:
    """MLIR's `getBroadcastedShape` of two shapes of one rank (`?` is None), None when they do
    not broadcast."""
    out = []
    for x, y in zip(a, b):
        if x is None or y is None:
            out.append(x if x is not None and x > 1 else y if y is not None and y > 1 else
                       y if x == 1 else x if y == 1 else None)
        elif x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            return None
    return tuple(out)


@inference(*BROADCAST_TARGETS)
def _infer_broadcast_binary(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """The broadcast shape of the operands; their element type (i1 for compare, its complex
    type for complex). The operands' element types must be compatible (C1)."""
    lhs, rhs = op.operands[0].type, op.operands[1].type
    if not isinstance(lhs, TensorType) or not isinstance(rhs, TensorType):
        return None
    if not _c.compatible_element_types(lhs.element_type, rhs.element_type):
        what = "mismatched operand types" if op.name == "chlo.broadcast_complex" else \
            "requires compatible element types for all operands and results"
        diag.error(op, "C1", f"{what}: {_c.types_str([lhs, rhs])}")
        return None
    if op.name == "chlo.broadcast_compare":
        et = I1
    elif op.name == "chlo.broadcast_complex":
        et = ComplexType(lhs.element_type)  # type: ignore[arg-type]
    else:
        et = lhs.element_type
    shape = _broadcast_shape(op, diag, lhs, rhs)
    return None if shape is None else [TensorType(shape, et)]


_NO_RESULT_ELEMENT = ("chlo.broadcast_compare", "chlo.broadcast_complex")


@verifier(*BROADCAST_TARGETS)
def _verify_chlo_broadcast_binary(op: Operation, diag: Diagnostics) -> None:
    """`chlo.broadcast_*`: compatible element types and broadcastable shapes; the result has
    the inferred type (the broadcast shape; i1 for compare, complex for complex)."""
    operand, result = _KINDS.get(op.name, (ANY, ANY))
    if not _c.signature(op, diag, [operand, operand], [result],
                        optional_attrs={"broadcast_dimensions": "ints",
                                        "comparison_direction": "any", "compare_type": "any"}):
        return
    lhs, rhs = op.operands[0].type, op.operands[1].type
    res = op.results[0].type
    if op.name not in _NO_RESULT_ELEMENT and \
            _c.compatible_element_types(lhs.element_type, rhs.element_type) and \
            not _c.compatible_element_types(lhs.element_type, res.element_type):
        diag.error(op, "C1", f"requires compatible element types for all operands and "
                             f"results: {_c.types_str([lhs, rhs, res])}")
        return
    inferred = _infer_broadcast_binary(op, diag)
    if inferred is not None:
        _c.check_inferred(op, diag, "C1", inferred)


# --- broadcast_select -----------------------------------------------------------------------------

define("chlo.broadcast_select", summary="ChloOps.td", traits={QUANTIZED_AWARE},
       inherent="broadcast_dimensions", syntax=_FUNCTIONAL)


@kernel("chlo.broadcast_select")
def broadcast_select(op: Operation, ctx: PrepareContext) -> Kernel:
    """`chlo.broadcast_select(pred, on_true, on_false)`: numpy-broadcast all three, select."""
    result_rank = result_type(op).rank
    plans = [_expand_plan(tensor_type(v).rank, result_rank, None) for v in op.operands]
    dtype = result_type(op).dtype
    same_rank = all(tensor_type(v).rank == result_rank for v in op.operands)

    def run(pred: Any, on_true: Any, on_false: Any) -> Sequence[Any]:
        if same_rank:  # numpy broadcasting suffices (and keeps batched region bodies working)
            return (np.asarray(np.where(pred, on_true, on_false)).astype(dtype, copy=False),)
        p, t, f = broadcast_operands([pred, on_true, on_false], plans, result_rank)
        return (np.where(p, t, f).astype(dtype, copy=False),)

    return run


@inference("chlo.broadcast_select")
def _infer_broadcast_select(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """The numpy broadcast shape of the three operands, the element type of `on_true`, after
    (C1) the element types of `on_true` and `on_false` agree. (Shapes that do not broadcast give
    None without a diagnostic: upstream's verifier does not reject them.)"""
    pred, on_true, on_false = (v.type for v in op.operands)
    if not all(isinstance(t, TensorType) for t in (pred, on_true, on_false)):
        return None
    if not _c.compatible_element_types(on_true.element_type, on_false.element_type):
        diag.error(op, "C1", f"mismatched operand types: {_c.types_str([on_true, on_false])}")
        return None
    shapes = [t.shape for t in (pred, on_true, on_false)]
    if any(s is None for s in shapes):
        return None
    n = max(len(s) for s in shapes)
    out = []
    for dims in zip(*[(1,) * (n - len(s)) + tuple(s) for s in shapes]):
        sizes = {d for d in dims if d != 1}
        if len(sizes - {None}) > 1:
            return None
        known = sizes - {None}
        out.append(known.pop() if known else (None if None in sizes else 1))
    return [TensorType(tuple(out), on_true.element_type)]


@verifier("chlo.broadcast_select")
def _verify_chlo_broadcast_select(op: Operation, diag: Diagnostics) -> None:
    """`chlo.broadcast_select`: an i1 predicate, two operands of one element type (C1)."""
    if not _c.signature(op, diag, [_c.TC(_c.B), ANY, ANY], [ANY]):
        return
    _infer_broadcast_select(op, diag)
