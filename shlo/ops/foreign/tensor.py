"""MLIR's `tensor` dialect (mlir/include/mlir/Dialect/Tensor/IR/TensorOps.td): the ops that
build and read tensors from scalars. torch-mlir emits `tensor.dim` (a dynamic dimension as an
`index`) and `tensor.from_elements` (a shape operand for `dynamic_reshape` /
`dynamic_broadcast_in_dim`) with dynamic shapes; upstream's StableHLO tests use `tensor.cast`.

Indices out of bounds (`dim`, `extract`, `insert`) are undefined behaviour upstream: here they
raise an error that names the op. `tensor.empty` has unspecified contents: zeros here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ...errors import Diagnostics
from ...ir import Operation
from ...registry import Kernel, define, kernel, verifier
from ...syntax.directives import Format, parse_attrdict
from ...types import IndexType, TensorType, Type
from ._syntax import CAST_TO, check_counts, element_of

if TYPE_CHECKING:  # pragma: no cover
    from ...interpreter.evaluator import PrepareContext
    from ...syntax.parser import Parser
    from ...syntax.printer import Printer

__all__: list[str] = []

_INDEX = IndexType()


def _check_index(i: Any, n: int, what: str) -> int:
    i = int(i)
    if not 0 <= i < n:
        raise IndexError(f"{what} {i} is out of bounds for size {n}")
    return i


def _attrs(p: Parser, name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    props: dict[str, Any] = {}
    attrs: dict[str, Any] = {}
    parse_attrdict(p, name, props, attrs)
    return props, attrs


# --- tensor.dim %t, %i : T ------------------------------------------------------------------------


def _parse_dim(p: Parser, name: str, nres: int, start: int) -> Operation:
    src = p.operand()
    p.expect(",")
    idx = p.operand()
    props, attrs = _attrs(p, name)
    p.expect(":")
    off = p.start
    p.check_types([src, idx], [p.parse_type(), _INDEX], off)
    return Operation(name, [src, idx], [_INDEX], props, attrs)


def _print_dim(pr: Printer, op: Operation) -> str | None:
    if len(op.operands) != 2:
        return None
    return (f" {pr.val(op.operands[0])}, {pr.val(op.operands[1])}{pr.attr_dict(op, set())} : "
            f"{pr.type(op.operands[0].type)}")


define("tensor.dim", summary="the size of one dimension, as an index (TensorOps.td DimOp)",
       inherent="", syntax=Format(_parse_dim, _print_dim, frozenset()))


@kernel("tensor.dim")
def _dim(op: Operation, ctx: PrepareContext) -> Kernel:
    def run(t: Any, i: Any) -> Sequence[Any]:
        shape = np.shape(t)
        return (np.int64(shape[_check_index(i, len(shape), "dimension")]),)

    return run


@verifier("tensor.dim")
def _verify_dim(op: Operation, diag: Diagnostics) -> None:
    if check_counts(op, diag, 2, 1) and not isinstance(op.operands[0].type, TensorType):
        diag.error(op, "", "the source must be a tensor")


# --- tensor.from_elements %a, %b : tensor<2xT> ---------------------------------------------------


def _parse_from_elements(p: Parser, name: str, nres: int, start: int) -> Operation:
    operands = p.operand_list()
    props, attrs = _attrs(p, name)
    p.expect(":")
    off = p.start
    t = p.parse_type()
    if not isinstance(t, TensorType):
        p.error("expected a tensor type", off, found=False)
    p.check_types(operands, [t.element_type] * len(operands), off)
    return Operation(name, operands, [t], props, attrs)


def _print_result_type(pr: Printer, op: Operation) -> str | None:
    return (" " + ", ".join(pr.val(v) for v in op.operands) + pr.attr_dict(op, set()) + " : "
            + pr.type(op.results[0].type))


define("tensor.from_elements", summary="a static tensor of the operands, in row-major order "
       "(TensorOps.td FromElementsOp)", inherent="",
       syntax=Format(_parse_from_elements, _print_result_type, frozenset()))


@kernel("tensor.from_elements")
def _from_elements(op: Operation, ctx: PrepareContext) -> Kernel:
    t = op.results[0].type
    assert isinstance(t, TensorType)
    shape, dt = tuple(t.shape), t.dtype  # type: ignore[arg-type]

    def run(*xs: Any) -> Sequence[Any]:
        return (np.array(xs, dtype=dt).reshape(shape),)

    return run


@verifier("tensor.from_elements")
def _verify_from_elements(op: Operation, diag: Diagnostics) -> None:
    if not check_counts(op, diag, None, 1):
        return
    t = op.results[0].type
    if not isinstance(t, TensorType) or not t.is_static:
        diag.error(op, "", "the result must be a statically shaped tensor")
    elif t.num_elements != len(op.operands):
        diag.error(op, "", f"has {len(op.operands)} operands, but {t} holds "
                           f"{t.num_elements} elements")
    elif any(v.type != t.element_type for v in op.operands):
        diag.error(op, "", "operands must have the result's element type")


# --- tensor.extract %t[%i, %j] : T;  tensor.insert %v into %t[%i] : T ---------------------------


def _index_list(p: Parser) -> list:
    p.expect("[")
    idx = p.operand_list()
    p.expect("]")
    return idx


def _parse_extract(p: Parser, name: str, nres: int, start: int) -> Operation:
    src = p.operand()
    idx = _index_list(p)
    props, attrs = _attrs(p, name)
    p.expect(":")
    off = p.start
    t = p.parse_type()
    p.check_types([src] + idx, [t] + [_INDEX] * len(idx), off)
    return Operation(name, [src] + idx, [element_of(t)], props, attrs)


def _print_extract(pr: Printer, op: Operation) -> str | None:
    src, *idx = op.operands
    return (f" {pr.val(src)}[{', '.join(pr.val(v) for v in idx)}]{pr.attr_dict(op, set())} : "
            f"{pr.type(src.type)}")


define("tensor.extract", summary="one element of a tensor, as a scalar (TensorOps.td ExtractOp)",
       inherent="", syntax=Format(_parse_extract, _print_extract, frozenset()))


@kernel("tensor.extract")
def _extract(op: Operation, ctx: PrepareContext) -> Kernel:
    def run(t: Any, *idx: Any) -> Sequence[Any]:
        a = np.asarray(t)
        i = tuple(_check_index(x, n, "index") for x, n in zip(idx, a.shape))
        return (a[i],)

    return run


def _parse_insert(p: Parser, name: str, nres: int, start: int) -> Operation:
    value = p.operand()
    p.keyword("into")
    dest = p.operand()
    idx = _index_list(p)
    props, attrs = _attrs(p, name)
    p.expect(":")
    off = p.start
    t = p.parse_type()
    p.check_types([value, dest] + idx, [element_of(t), t] + [_INDEX] * len(idx), off)
    return Operation(name, [value, dest] + idx, [t], props, attrs)


def _print_insert(pr: Printer, op: Operation) -> str | None:
    value, dest, *idx = op.operands
    return (f" {pr.val(value)} into {pr.val(dest)}[{', '.join(pr.val(v) for v in idx)}]"
            f"{pr.attr_dict(op, set())} : {pr.type(dest.type)}")


define("tensor.insert", summary="a copy of a tensor with one element replaced (TensorOps.td "
       "InsertOp)", inherent="", syntax=Format(_parse_insert, _print_insert, frozenset()))


@kernel("tensor.insert")
def _insert(op: Operation, ctx: PrepareContext) -> Kernel:
    def run(v: Any, t: Any, *idx: Any) -> Sequence[Any]:
        a = np.array(t)
        a[tuple(_check_index(x, n, "index") for x, n in zip(idx, a.shape))] = v
        return (a,)

    return run


def _verify_indexed(op: Operation, diag: Diagnostics, first: int, results: int) -> None:
    if not check_counts(op, diag, None, results):
        return
    t = op.operands[first].type
    n = len(op.operands) - first - 1
    if not isinstance(t, TensorType) or t.shape is None or len(t.shape) != n:
        diag.error(op, "", f"needs one index per dimension of '{t}', got {n}")


verifier("tensor.extract")(lambda op, diag: _verify_indexed(op, diag, 0, 1))
verifier("tensor.insert")(lambda op, diag: _verify_indexed(op, diag, 1, 1))


# --- tensor.splat %v[%d...] : T;  tensor.empty(%d...) : T -------------------------------------------


def _dynamic_shape(t: TensorType, sizes: Sequence[Any]) -> tuple[int, ...]:
    it = iter(sizes)
    return tuple(int(next(it)) if d is None else d for d in t.shape)  # type: ignore[union-attr]


def _parse_splat(p: Parser, name: str, nres: int, start: int) -> Operation:
    value = p.operand()
    sizes = _index_list(p) if p.v == "[" else []
    props, attrs = _attrs(p, name)
    p.expect(":")
    off = p.start
    t = p.parse_type()
    p.check_types([value] + sizes, [element_of(t)] + [_INDEX] * len(sizes), off)
    return Operation(name, [value] + sizes, [t], props, attrs)


def _print_splat(pr: Printer, op: Operation) -> str | None:
    value, *sizes = op.operands
    dyn = f"[{', '.join(pr.val(v) for v in sizes)}]" if sizes else ""
    return f" {pr.val(value)}{dyn}{pr.attr_dict(op, set())} : {pr.type(op.results[0].type)}"


define("tensor.splat", summary="a tensor with every element the operand (TensorOps.td SplatOp)",
       inherent="", syntax=Format(_parse_splat, _print_splat, frozenset()))


@kernel("tensor.splat")
def _splat(op: Operation, ctx: PrepareContext) -> Kernel:
    t = op.results[0].type
    assert isinstance(t, TensorType)

    def run(v: Any, *sizes: Any) -> Sequence[Any]:
        return (np.full(_dynamic_shape(t, sizes), v, dtype=t.dtype),)

    return run


def _parse_empty(p: Parser, name: str, nres: int, start: int) -> Operation:
    p.expect("(")
    sizes = p.operand_list()
    p.expect(")")
    props, attrs = _attrs(p, name)
    p.expect(":")
    off = p.start
    t = p.parse_type()
    p.check_types(sizes, [_INDEX] * len(sizes), off)
    return Operation(name, sizes, [t], props, attrs)


def _print_empty(pr: Printer, op: Operation) -> str | None:
    return (f"({', '.join(pr.val(v) for v in op.operands)}){pr.attr_dict(op, set())} : "
            f"{pr.type(op.results[0].type)}")


define("tensor.empty", summary="a tensor of unspecified contents (zeros here; TensorOps.td "
       "EmptyOp)", inherent="", syntax=Format(_parse_empty, _print_empty, frozenset()))


@kernel("tensor.empty")
def _empty(op: Operation, ctx: PrepareContext) -> Kernel:
    t = op.results[0].type
    assert isinstance(t, TensorType)

    def run(*sizes: Any) -> Sequence[Any]:
        return (np.zeros(_dynamic_shape(t, sizes), dtype=t.dtype),)

    return run


def _verify_sized(op: Operation, diag: Diagnostics, first: int) -> None:
    if not check_counts(op, diag, None, 1):
        return
    t = op.results[0].type
    if not isinstance(t, TensorType) or t.shape is None:
        diag.error(op, "", "the result must be a ranked tensor")
        return
    dynamic = sum(d is None for d in t.shape)
    if len(op.operands) - first != dynamic:
        diag.error(op, "", f"needs one size per dynamic dimension of '{t}' ({dynamic}), got "
                           f"{len(op.operands) - first}")


verifier("tensor.splat")(lambda op, diag: _verify_sized(op, diag, 1))
verifier("tensor.empty")(lambda op, diag: _verify_sized(op, diag, 0))


# --- tensor.reshape %src(%shape) : (T, S) -> R -----------------------------------------------------


def _parse_reshape(p: Parser, name: str, nres: int, start: int) -> Operation:
    src = p.operand()
    p.expect("(")
    shape = p.operand()
    p.expect(")")
    props, attrs = _attrs(p, name)
    p.expect(":")
    off = p.start
    ft = p.parse_type()
    ins = list(getattr(ft, "inputs", ()))
    p.check_types([src, shape], ins, off)
    return Operation(name, [src, shape], list(ft.results), props, attrs)  # type: ignore[attr-defined]


def _print_reshape(pr: Printer, op: Operation) -> str | None:
    if len(op.operands) != 2:
        return None
    src, shape = op.operands
    return (f" {pr.val(src)}({pr.val(shape)}){pr.attr_dict(op, set())} : "
            f"{pr.functional([src.type, shape.type], [op.results[0].type])}")


define("tensor.reshape", summary="the elements in row-major order under a shape given as a 1-d "
       "tensor (TensorOps.td ReshapeOp)", inherent="",
       syntax=Format(_parse_reshape, _print_reshape, frozenset()))


@kernel("tensor.reshape")
def _reshape(op: Operation, ctx: PrepareContext) -> Kernel:
    def run(a: Any, shape: Any) -> Sequence[Any]:
        return (np.reshape(a, tuple(int(d) for d in np.asarray(shape).reshape(-1))),)

    return run


@verifier("tensor.reshape")
def _verify_reshape(op: Operation, diag: Diagnostics) -> None:
    if check_counts(op, diag, 2, 1):
        a, r = op.operands[0].type, op.results[0].type
        if isinstance(a, TensorType) and isinstance(r, TensorType) and \
                a.element_type != r.element_type:
            diag.error(op, "", "element types of source and result must match")


# --- tensor.cast %x : T to R;  builtin.unrealized_conversion_cast ------------------------------------

define("tensor.cast", summary="the same tensor under a more or less static type (TensorOps.td "
       "CastOp)", inherent="", syntax=CAST_TO)
define("builtin.unrealized_conversion_cast", summary="MLIR's placeholder conversion (no "
       "semantics: it is not run)", inherent="", syntax=CAST_TO)


@kernel("tensor.cast")
def _cast(op: Operation, ctx: PrepareContext) -> Kernel:
    """The value itself; its shape must fit the result type's static dimensions."""
    t = op.results[0].type
    want = t.shape if isinstance(t, TensorType) else None

    def run(a: Any) -> Sequence[Any]:
        if want is not None and (len(want) != np.ndim(a) or any(
                d is not None and d != s for d, s in zip(want, np.shape(a)))):
            raise ValueError(f"a tensor of shape {list(np.shape(a))} is not a {t}")
        return (a,)

    return run


@verifier("tensor.cast")
def _verify_cast(op: Operation, diag: Diagnostics) -> None:
    if not check_counts(op, diag, 1, 1):
        return
    a, r = op.operands[0].type, op.results[0].type
    if not (isinstance(a, TensorType) and isinstance(r, TensorType)) or \
            a.element_type != r.element_type or a.shape is not None and r.shape is not None and (len(a.shape) != len(r.shape) or any(
            x is not None and y is not None and x != y for x, y in zip(a.shape, r.shape))):
        diag.error(op, "", f"operand type '{a}' and result type '{r}' are cast incompatible")


_ = Type
