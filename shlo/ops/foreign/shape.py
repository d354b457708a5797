"""MLIR's `shape` dialect (mlir/include/mlir/Dialect/Shape/IR/ShapeOps.td) on extent tensors, as
torch-mlir emits it for dynamic shapes: every implicit broadcast of an elementwise op becomes
`shape_of` + `broadcast` (+ `cstr_broadcastable` / `assuming` when both sides are dynamic)
feeding `stablehlo.dynamic_broadcast_in_dim`.

Values: a shape (`tensor<?xindex>` or `!shape.shape`) is a 1-d int64 array of extents, a size
(`index` / `!shape.size`) an int64, a `!shape.witness` the constant :data:`WITNESS`. A
constraint (`cstr_*`) that does not hold is an error at run time (upstream lowers it to an
assertion), so the `assuming` region it guards always runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ...attributes import BoolAttr, DenseElementsAttr
from ...errors import Diagnostics
from ...ir import Operation
from ...registry import TERMINATOR, Kernel, define, kernel, verifier
from ...syntax.directives import Format, parse_attrdict
from ...types import IndexType, OpaqueType, TensorType, Type
from ._syntax import check_counts

if TYPE_CHECKING:  # pragma: no cover
    from ...interpreter.evaluator import PrepareContext
    from ...syntax.parser import Parser
    from ...syntax.printer import Printer

__all__ = ["WITNESS", "broadcast_shapes"]

WITNESS = True
"""The run-time value of a `!shape.witness` (constraints that fail raise instead)."""
_WITNESS_T = OpaqueType("!shape.witness")
_INDEX = IndexType()


def _shape(v: Any) -> tuple[int, ...]:
    return tuple(int(d) for d in np.asarray(v).reshape(-1))


def broadcast_shapes(shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...] | None:
    """NumPy's rule, which ShapeOps.td's `broadcast` uses: shapes aligned at the right, an
    extent 1 stretches to the other; None when two extents differ and neither is 1."""
    rank = max((len(s) for s in shapes), default=0)
    out = [1] * rank
    for s in shapes:
        for i, d in enumerate(s, rank - len(s)):
            if out[i] == 1:
                out[i] = d
            elif d != 1 and d != out[i]:
                return None
    return tuple(out)


# --- `%a, %b {attrs} : T1, T2 [-> R]`: the common form ------------------------------------------


def _format(result: Type | None, arrow: bool = True) -> Format:
    """Operands, attr-dict, `:` their types, and `-> result type` (or the fixed ``result``)."""

    def parse(p: Parser, name: str, nres: int, start: int) -> Operation:
        operands = p.operand_list()
        props: dict[str, Any] = {}
        attrs: dict[str, Any] = {}
        parse_attrdict(p, name, props, attrs)
        p.expect(":")
        off = p.start
        types = [p.parse_type()]
        while p.accept(","):
            types.append(p.parse_type())
        p.check_types(operands, types, off)
        rt = result
        if arrow:
            p.expect("->")
            rt = p.parse_type()
        return Operation(name, operands, [rt], props, attrs)

    def print_(pr: Printer, op: Operation) -> str | None:
        if len(op.results) != 1 or not op.operands:
            return None
        s = (" " + ", ".join(pr.val(v) for v in op.operands) + pr.attr_dict(op, set()) + " : "
             + ", ".join(pr.type(v.type) for v in op.operands))
        return s + f" -> {pr.type(op.results[0].type)}" if arrow else s

    return Format(parse, print_, frozenset())


def _simple(name: str, summary: str, fn: Callable[..., Any], fmt: Format,
            check: Callable[[Operation, Diagnostics], None]) -> None:
    full = f"shape.{name}"
    define(full, summary=f"{summary} (ShapeOps.td)", inherent="error", syntax=fmt)

    @kernel(full)
    def prepare(op: Operation, ctx: PrepareContext) -> Kernel:
        def run(*xs: Any) -> Sequence[Any]:
            return (fn(op, *xs),)

        return run

    verifier(full)(check)


def _extents(op: Operation, diag: Diagnostics, results: int = 1) -> None:
    if not check_counts(op, diag, None, results):
        return
    for v in op.operands:
        t = v.type
        if isinstance(t, TensorType) and (t.shape is None or len(t.shape) != 1
                                          or not isinstance(t.element_type, IndexType)):
            diag.error(op, "", f"a shape must be a 1-d tensor of index, got '{t}'")


def _shape_of(op: Operation, x: Any) -> Any:
    return np.asarray(np.shape(x), dtype=np.int64)


def _broadcast(op: Operation, *shapes: Any) -> Any:
    out = broadcast_shapes([_shape(s) for s in shapes])
    if out is None:
        raise ValueError(f"shapes {[list(_shape(s)) for s in shapes]} are not broadcastable")
    return np.asarray(out, dtype=np.int64)


def _cstr_broadcastable(op: Operation, *shapes: Any) -> Any:
    if broadcast_shapes([_shape(s) for s in shapes]) is None:
        raise ValueError(f"required broadcastable shapes: {[list(_shape(s)) for s in shapes]}")
    return WITNESS


def _cstr_eq(op: Operation, *shapes: Any) -> Any:
    if len({_shape(s) for s in shapes}) > 1:
        raise ValueError(f"required equal shapes: {[list(_shape(s)) for s in shapes]}")
    return WITNESS


_simple("shape_of", "the shape of a tensor, as an extent tensor", _shape_of, _format(None),
        lambda op, diag: check_counts(op, diag, 1, 1) and None)
_simple("broadcast", "the shape both operands broadcast to", _broadcast, _format(None),
        _extents)
_simple("cstr_broadcastable", "a witness that the shapes broadcast", _cstr_broadcastable,
        _format(_WITNESS_T, arrow=False), _extents)
_simple("cstr_eq", "a witness that the shapes are equal", _cstr_eq,
        _format(_WITNESS_T, arrow=False), _extents)
_simple("num_elements", "the product of the extents", lambda op, s: np.int64(
    np.prod(_shape(s), dtype=np.int64)), _format(None), _extents)
_simple("rank", "the number of extents", lambda op, s: np.int64(len(_shape(s))), _format(None),
        _extents)


# --- get_extent %s, %d : T, index -> index ---------------------------------------------------------

define("shape.get_extent", summary="one extent of a shape (ShapeOps.td)", inherent="",
       syntax=_format(None))


@kernel("shape.get_extent")
def _get_extent(op: Operation, ctx: PrepareContext) -> Kernel:
    def run(s: Any, d: Any) -> Sequence[Any]:
        ext = _shape(s)
        if not 0 <= int(d) < len(ext):
            raise IndexError(f"dimension {int(d)} is out of bounds for a shape of rank {len(ext)}")
        return (np.int64(ext[int(d)]),)

    return run


verifier("shape.get_extent")(lambda op, diag: check_counts(op, diag, 2, 1) and None)


# --- const_shape [1, 2] : T;  const_witness true;  assuming_all %w... --------------------------------


def _parse_const_shape(p: Parser, name: str, nres: int, start: int) -> Operation:
    props: dict[str, Any] = {}
    attrs: dict[str, Any] = {}
    parse_attrdict(p, name, props, attrs)  # MLIR prints the attributes before the shape
    p.expect("[")
    dims: list[int] = []
    if p.v != "]":
        dims.append(p.integer())
        while p.accept(","):
            dims.append(p.integer())
    p.expect("]")
    parse_attrdict(p, name, props, attrs)
    p.expect(":")
    t = p.parse_type()
    props["shape"] = DenseElementsAttr(TensorType((len(dims),), _INDEX),
                                       np.asarray(dims, dtype=np.int64))
    return Operation(name, [], [t], props, attrs)


def _print_const_shape(pr: Printer, op: Operation) -> str | None:
    s = op.attr("shape")
    if not isinstance(s, DenseElementsAttr):
        return None
    dims = ", ".join(str(int(d)) for d in np.asarray(s.array).reshape(-1))
    # ConstShapeOp::print: " ", the optional attribute dictionary, then the shape
    return f" {pr.attr_dict(op, {'shape'})}[{dims}] : {pr.type(op.results[0].type)}"


define("shape.const_shape", summary="a constant shape (ShapeOps.td)", inherent="shape",
       syntax=Format(_parse_const_shape, _print_const_shape, frozenset({"shape"})))


@kernel("shape.const_shape")
def _const_shape(op: Operation, ctx: PrepareContext) -> Kernel:
    out = (np.asarray(op.attr("shape").array, dtype=np.int64).reshape(-1),)
    out[0].flags.writeable = False

    def run() -> Sequence[Any]:
        return out

    return run


@verifier("shape.const_shape")
def _verify_const_shape(op: Operation, diag: Diagnostics) -> None:
    if check_counts(op, diag, 0, 1) and not isinstance(op.attr("shape"), DenseElementsAttr):
        diag.error(op, "", "requires a `shape` attribute of index elements")


def _parse_const_witness(p: Parser, name: str, nres: int, start: int) -> Operation:
    v = p.bare()
    if v not in ("true", "false"):
        p.error("expected 'true' or 'false'", found=False)
    props: dict[str, Any] = {"passing": BoolAttr(v == "true")}
    attrs: dict[str, Any] = {}
    parse_attrdict(p, name, props, attrs)
    return Operation(name, [], [_WITNESS_T], props, attrs)


def _print_const_witness(pr: Printer, op: Operation) -> str | None:
    v = op.attr("passing")
    if not isinstance(v, BoolAttr):
        return None
    return f" {'true' if v.value else 'false'}{pr.attr_dict(op, {'passing'})}"


define("shape.const_witness", summary="a witness that holds or not (ShapeOps.td)",
       inherent="passing", syntax=Format(_parse_const_witness, _print_const_witness,
                                         frozenset({"passing"})))


@kernel("shape.const_witness")
def _const_witness(op: Operation, ctx: PrepareContext) -> Kernel:
    passing = bool(op.attr("passing").value)

    def run() -> Sequence[Any]:
        if not passing:
            raise ValueError("the constraint `shape.const_witness false` does not hold")
        return (WITNESS,)

    return run


verifier("shape.const_witness")(lambda op, diag: check_counts(op, diag, 0, 1) and None)


def _parse_assuming_all(p: Parser, name: str, nres: int, start: int) -> Operation:
    operands = p.operand_list()
    props: dict[str, Any] = {}
    attrs: dict[str, Any] = {}
    parse_attrdict(p, name, props, attrs)
    return Operation(name, operands, [_WITNESS_T], props, attrs)


def _print_assuming_all(pr: Printer, op: Operation) -> str | None:
    return " " + ", ".join(pr.val(v) for v in op.operands) + pr.attr_dict(op, set())


define("shape.assuming_all", summary="a witness that all of its witnesses hold (ShapeOps.td)",
       inherent="", syntax=Format(_parse_assuming_all, _print_assuming_all, frozenset()))


@kernel("shape.assuming_all")
def _assuming_all(op: Operation, ctx: PrepareContext) -> Kernel:
    def run(*ws: Any) -> Sequence[Any]:
        return (WITNESS,)  # (each operand's constraint already held, or raised)

    return run


verifier("shape.assuming_all")(lambda op, diag: check_counts(op, diag, None, 1) and None)


# --- shape.assuming %w -> (T...) { ... shape.assuming_yield %x : T } -----------------------------


def _parse_assuming(p: Parser, name: str, nres: int, start: int) -> Operation:
    w = p.operand()
    results: list[Type] = []
    if p.accept("->"):
        p.expect("(")
        if p.v != ")":
            results.append(p.parse_type())
            while p.accept(","):
                results.append(p.parse_type())
        p.expect(")")
    region = p.parse_region()
    props: dict[str, Any] = {}
    attrs: dict[str, Any] = {}
    parse_attrdict(p, name, props, attrs)
    return Operation(name, [w], results, props, attrs, [region])


def _print_assuming(pr: Printer, op: Operation) -> str | None:
    if len(op.operands) != 1 or len(op.regions) != 1:
        return None
    res = ""
    if op.results:
        res = " -> (" + ", ".join(pr.type(r.type) for r in op.results) + ")"
    return f" {pr.val(op.operands[0])}{res} {pr.region(op.regions[0], False)}" + \
        pr.attr_dict(op, set())


define("shape.assuming", summary="the values its region yields, once its witness holds "
       "(ShapeOps.td)", inherent="", syntax=Format(_parse_assuming, _print_assuming,
                                                   frozenset()))


@kernel("shape.assuming")
def _assuming(op: Operation, ctx: PrepareContext) -> Kernel:
    body = ctx.region(op.regions[0]).run

    def run(w: Any) -> Sequence[Any]:
        return body()

    return run


@verifier("shape.assuming")
def _verify_assuming(op: Operation, diag: Diagnostics) -> None:
    if len(op.operands) != 1 or len(op.regions) != 1 or not op.regions[0].blocks:
        diag.error(op, "", "expects one witness operand and one region")
        return
    ops = op.regions[0].blocks[0].operations
    term = ops[-1] if ops else None
    if term is None or term.name != "shape.assuming_yield":
        diag.error(op, "", "the region must end with shape.assuming_yield")
    elif [v.type for v in term.operands] != [r.type for r in op.results]:
        diag.error(op, "", "the types yielded must be the op's result types")


def _parse_yield(p: Parser, name: str, nres: int, start: int) -> Operation:
    props: dict[str, Any] = {}
    attrs: dict[str, Any] = {}
    parse_attrdict(p, name, props, attrs)
    operands = p.operand_list()
    if operands:
        p.expect(":")
        off = p.start
        types = [p.parse_type()]
        while p.accept(","):
            types.append(p.parse_type())
        p.check_types(operands, types, off)
    return Operation(name, operands, [], props, attrs)


def _print_yield(pr: Printer, op: Operation) -> str | None:
    if not op.operands:
        return pr.attr_dict(op, set())
    return (pr.attr_dict(op, set()) + " " + ", ".join(pr.val(v) for v in op.operands) + " : "
            + ", ".join(pr.type(v.type) for v in op.operands))


define("shape.assuming_yield", summary="the results of a shape.assuming region (ShapeOps.td)",
       traits={TERMINATOR}, inherent="", syntax=Format(_parse_yield, _print_yield, frozenset()))
verifier("shape.assuming_yield")(lambda op, diag: None)
