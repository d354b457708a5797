"""reduce (spec "reduce"): applies a reduction function `body` to `inputs` and `init_values`
along `dimensions`.

Evaluated over whole arrays (ARCHITECTURE.md principle 3) by
:func:`shlo.ops._regions.reduce_with_body`: a single-op body (add, multiply, maximum, minimum,
and, or, xor) becomes a numpy reduction, and so does a projected body ``op(g(a), g(b))``
(``max(|a|, |b|)``...) over ``g(inputs)`` (:func:`_projected_body`); any other body is
evaluated as a pairwise tree, one batched body call per level (schedule:
``body(init, tree(x0, ..., xn-1))``, adjacent pairs first; large inputs block by block).
Implementation-defined choices are written in docs/semantics/reduction.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ...attributes import DenseArrayAttr, ints_attr
from ...ir import Block, Operation, Region, Value
from ...registry import COMMUTATIVE, QUANTIZED_STORAGE, Kernel, define, inference, kernel, \
    names_with, verifier
from ...syntax.directives import Format, check_attr_kind, parse_attrdict, parse_int_list
from ...syntax.lexer import BARE, VALUE
from ...types import FloatType, FunctionType, IntegerType, TensorType, Type, element_type
from .. import _constraints as _c
from .._regions import Body, as_dtype, call_body, check_reducer, clone_subgraph, \
    reduce_with_body

if TYPE_CHECKING:  # pragma: no cover
    from ...errors import Diagnostics
    from ...interpreter.evaluator import PrepareContext
    from ...syntax.parser import Parser
    from ...syntax.printer import Printer

__all__ = ["inputs_compatible"]

_I64 = element_type("i64")


# --- the pretty form: `(%x init: %i) applies stablehlo.add across dimensions = [1]` or with a
# `reducer(%a: ..., %b: ...) {...}` body --------------------------------------------------------


def _parse_reduce(p: Parser, name: str, nres: int, start: int) -> Operation:
    inputs: list[Value] = []
    inits: list[Value] = []
    while True:
        p.expect("(")
        inputs.append(p.operand())
        p.keyword("init")
        p.expect(":")
        inits.append(p.operand())
        p.expect(")")
        if not p.accept(","):
            break
    operands = inputs + inits
    props: dict[str, Any] = {}
    attrs: dict[str, Any] = {}
    dialect = name.split(".", 1)[0]
    if p.v == "applies" and p.k == BARE:
        p._advance()
        inner_off = p.start
        inner = p.bare() if p.k == BARE else p.string()
        if inner.split(".", 1)[0] != dialect or inner not in names_with(COMMUTATIVE):
            p.error(f"expected the inner-op to be a commutative binary-op from the {dialect} "
                    f"dialect, with zero region, producing single result", inner_off,
                    found=False)
        p.keyword("across")
        p.keyword("dimensions")
        p.expect("=")
        props["dimensions"] = DenseArrayAttr(_I64, parse_int_list(p))
        parse_attrdict(p, name, props, attrs)
        p.expect(":")
        off = p.start
        ft = p.parse_type()
        if not isinstance(ft, FunctionType) or not ft.inputs:
            p.error("expected function type with inputs", off, found=False)
        p.check_types(operands, ft.inputs, off)
        loc = p.optional_location()
        et = ft.inputs[0]
        et = et.element_type if isinstance(et, TensorType) else et
        st = TensorType((), et)  # type: ignore[arg-type]
        block = Block([st, st])
        inner_op = Operation(inner, list(block.arguments), [st])
        ret = Operation(f"{dialect}.return", [inner_op.results[0]])
        opl = loc if loc is not None else p.location_at(start)
        inner_op.location = ret.location = opl
        block.append(inner_op)
        block.append(ret)
        op = Operation(name, operands, list(ft.results), props, attrs, [Region([block])])
        if loc is not None:
            op.location = loc
        return op
    p.keyword("across")
    p.keyword("dimensions")
    p.expect("=")
    props["dimensions"] = DenseArrayAttr(_I64, parse_int_list(p))
    parse_attrdict(p, name, props, attrs)
    p.expect(":")
    off = p.start
    ft = p.parse_type()
    if not isinstance(ft, FunctionType):
        p.error("expected function type", off, found=False)
    p.check_types(operands, ft.inputs, off)
    p.keyword("reducer")
    lhs: list[tuple[str, Type]] = []
    rhs: list[tuple[str, Type]] = []
    while p.accept("("):
        for side in (lhs, rhs):
            if p.k != VALUE:
                p.error("expected SSA value name")
            n = p.v[1:]
            p._advance()
            p.expect(":")
            t = p.parse_type()
            p.optional_location()
            side.append((n, t))
            if side is lhs:
                p.expect(",")
        p.expect(")")
    region = p.parse_region(lhs + rhs)
    return Operation(name, operands, list(ft.results), props, attrs, [region])


def _reduce_compact(op: Operation) -> str | None:
    """The inner op name when the body is eligible for `applies` (upstream E1-E5)."""
    if len(op.regions) != 1 or len(op.regions[0].blocks) != 1:
        return None
    block = op.regions[0].blocks[0]
    if len(block.operations) != 2 or not op.operands:
        return None
    inner, ret = block.operations
    dialect = op.name.split(".", 1)[0]
    if inner.name.split(".", 1)[0] != dialect or inner.name not in names_with(COMMUTATIVE):
        return None
    if inner.regions or len(inner.results) != 1 or len(inner.operands) != 2 \
            or inner.properties or inner.attributes:
        return None
    t = inner.results[0].type
    if any(v.type != t for v in inner.operands):
        return None
    it = op.operands[0].type
    et = it.element_type if isinstance(it, TensorType) else None
    if t != TensorType((), et):  # type: ignore[arg-type]
        return None
    if list(block.arguments) != list(inner.operands):
        return None
    if ret.name.split(".", 1)[-1] != "return" or list(ret.operands) != list(inner.results):
        return None
    if len(op.operands) != 2:
        return None
    return inner.name


def _print_reduce(pr: Printer, op: Operation) -> str | None:
    dims = op.attr("dimensions")
    n = len(op.operands)
    if not check_attr_kind(dims, "i64list") or n % 2 or not n or len(op.regions) != 1 \
            or len(op.regions[0].blocks) != 1:
        return None
    half = n // 2
    block = op.regions[0].blocks[0]
    if len(block.arguments) != n:
        return None
    pairs = ", ".join(f"({pr.val(op.operands[i])} init: {pr.val(op.operands[i + half])})"
                      for i in range(half))
    s = pairs
    compact = _reduce_compact(op)
    if compact is not None:
        s += f" applies {compact}"
    s += f" across dimensions = {_ilist(dims.values)}"
    s += pr.attr_dict(op, {"dimensions"})
    s += " : " + pr.functional(op.operand_types, op.result_types)
    if compact is None:
        args = block.arguments
        red = "".join(f"({pr.val(args[i])}: {pr.type(args[i].type)}, "
                      f"{pr.val(args[i + half])}: {pr.type(args[i + half].type)}) "
                      for i in range(half))
        s += f"\n{pr.indent_str()} reducer{red} " + pr.region(op.regions[0], False)
    return s



def _ilist(vals: Any) -> str:
    return "[" + ", ".join(str(int(v)) for v in vals) + "]"


define("stablehlo.reduce", spec="reduce", summary="reduces inputs along dimensions with body",
       traits={QUANTIZED_STORAGE},
       syntax=Format(_parse_reduce, _print_reduce, frozenset({"dimensions"})))


# --- the kernel -----------------------------------------------------------------------------------


@kernel("stablehlo.reduce")
def reduce(op: Operation, ctx: PrepareContext) -> Kernel:
    """Spec "reduce": ``results[:][j] = reduce(inputs[:][j0, ..., :, ..., jR-1])``, the ``:`` at
    ``dimensions``.

    Inputs and init values are converted to the result element types (the body's types, which
    newer spec versions allow to be wider than the inputs'). See :func:`reduce_with_body`; a
    body ``op(g(a), g(b))`` of a projection ``g`` is reduced as ``op`` over ``g(inputs)``
    (:func:`_projected_body`).
    """
    n = len(op.results)
    dimensions = ints_attr(op, "dimensions") if op.attr("dimensions") is not None else ()
    body = ctx.region(op.regions[0])
    dtypes = [r.type.element_type.dtype for r in op.results]
    projected = _projected_body(op.regions[0].blocks[0], ctx) if n == 1 else None

    def run(*args: Any) -> list[np.ndarray]:
        inputs = [as_dtype(a, dt) for a, dt in zip(args[:n], dtypes)]
        inits = [as_dtype(a, dt) for a, dt in zip(args[n:], dtypes)]
        if projected is not None and inputs[0].size:
            return [_reduce_projected(body, *projected, inputs[0], inits[0], dimensions)]
        return reduce_with_body(body, inputs, inits, dimensions)

    return run


def _reduce_projected(body: Body, g: Body, op_name: str, x: np.ndarray, init: np.ndarray,
                      dimensions: Sequence[int]) -> np.ndarray:
    """``op`` reduced over ``g(x)`` and ``g(init)`` (see :func:`_projected_body`); large inputs
    block by block (``g`` of a block stays in cache), the block results then reduced again."""
    dt = [x.dtype]
    ginit = call_body(g, [init], init.shape, dt)[0]
    if x.size <= 2 * _BLOCK:
        gx = call_body(g, [x], x.shape, dt)[0]
        return reduce_with_body(body, [gx], [ginit], dimensions, single_op=op_name)[0]
    axes = sorted(d % x.ndim for d in dimensions)
    keep = [d for d in range(x.ndim) if d not in axes]
    moved = np.transpose(x, keep + axes)
    out_shape = moved.shape[:len(keep)]
    rows = int(np.prod(out_shape, dtype=np.int64))
    flat = moved.reshape(rows, -1)
    n = flat.shape[1]
    block_rows = max(1, _BLOCK // n)
    cols = n if block_rows > 1 else _BLOCK
    partials = []
    for r in range(0, rows, block_rows):
        row = []
        for c in range(0, n, cols):
            piece = flat[r:r + block_rows, c:c + cols]
            gp = call_body(g, [piece], piece.shape, dt)[0]
            row.append(reduce_with_body(body, [gp], None, (1,), single_op=op_name)[0])
        partials.append(np.stack(row, axis=-1))
    part = np.concatenate(partials, axis=0) if len(partials) > 1 else partials[0]
    out = reduce_with_body(body, [part], [ginit], (1,), single_op=op_name)[0]
    return out.reshape(out_shape)


_BLOCK = 1 << 18  # elements of g(x) computed at once: cache-resident


# Unary ops g with g(g(x)) = g(x), by the binary ops op for which g(op(g(a), g(b))) =
# op(g(a), g(b)) holds for every element type the fast path accepts (floats for all; integers
# only for maximum/minimum, whose result is one of their operands: an integer sum of
# absolute values may wrap negative).
_PROJECTIONS = {
    "stablehlo.abs": ("stablehlo.maximum", "stablehlo.minimum", "stablehlo.add",
                      "stablehlo.multiply"),
    "stablehlo.floor": ("stablehlo.maximum", "stablehlo.minimum"),
    "stablehlo.ceil": ("stablehlo.maximum", "stablehlo.minimum"),
    "stablehlo.round_nearest_even": ("stablehlo.maximum", "stablehlo.minimum"),
    "stablehlo.round_nearest_afz": ("stablehlo.maximum", "stablehlo.minimum"),
    "stablehlo.sign": ("stablehlo.maximum", "stablehlo.minimum"),
}


def _projected_body(block: Block, ctx: PrepareContext) -> tuple[Body, str] | None:
    """``(g, op)`` when the reducer is ``return op(g(a), g(b))`` for a projection ``g``.

    Then every node of the reduction tree is ``op`` of projected leaves (``g`` leaves the
    partial results unchanged), so the reduction is ``op`` reduced over ``g(inputs)`` and
    ``g(init)``: the inf-norm ``max(|a|, |b|)`` and the L1 norm ``|a| + |b|`` become one
    projection and a numpy reduction instead of a tree of body calls.
    """
    ops = block.operations
    if len(ops) != 4 or len(block.arguments) != 2 or len(ops[3].operands) != 1:
        return None
    g1, g2, comb = ops[0], ops[1], ops[2]
    a, b = block.arguments
    et = a.type.element_type if isinstance(a.type, TensorType) else None
    if et is None or not isinstance(et, (FloatType, IntegerType)) \
            or b.type != a.type or ops[3].operands[0] is not comb.results[0]:
        return None
    if g1.name != g2.name or g1.name not in _PROJECTIONS or g1.regions \
            or g1.properties != g2.properties or g1.attributes != g2.attributes:
        return None
    if len(g1.operands) != 1 or len(g2.operands) != 1 \
            or {id(g1.operands[0]), id(g2.operands[0])} != {id(a), id(b)}:
        return None
    if g1.results[0].type != a.type or g2.results[0].type != a.type \
            or comb.results[0].type != a.type:
        return None
    if comb.name not in _PROJECTIONS[g1.name] or len(comb.operands) != 2 \
            or {id(v) for v in comb.operands} != {id(g1.results[0]), id(g2.results[0])}:
        return None
    if isinstance(et, IntegerType) and comb.name not in ("stablehlo.maximum",
                                                          "stablehlo.minimum"):
        return None
    g_of_a = g1.results[0] if g1.operands[0] is a else g2.results[0]
    region = clone_subgraph(g_of_a, a)
    if region is None:
        return None
    return ctx.region(region), comb.name



# --- the constraints ------------------------------------------------------------------------------


def inputs_compatible(op: Operation, diag: Diagnostics, label: str,
                      types: Sequence[TensorType]) -> bool:
    """All `inputs` of compatible shapes (reduce (C1), reduce_window (C2))."""
    for i, t in enumerate(types[1:], 1):
        if not _c.compatible_shapes(types[0].shape, t.shape):
            diag.error(op, label, f"expects all inputs to have compatible shapes. Shape at "
                                  f"input-index {i} is not compatible with shape at input-index 0")
            return False
    return True


def _inputs_and_inits(op: Operation) -> tuple[list[TensorType], list[TensorType]] | None:
    """`inputs` and `init_values` (the two halves of the operands), or None when they are not
    tensors."""
    if not all(isinstance(v.type, TensorType) for v in op.operands):
        return None
    n = len(op.operands) // 2
    return [v.type for v in op.operands[:n]], [v.type for v in op.operands[n:]]


@inference("stablehlo.reduce")
def _infer_reduce(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """(C1) inputs of one shape; (C3) at least one; (C4, C5) unique in-range `dimensions`; (C6)
    `body` a reducer; (C7, C8) the results: the input shape without `dimensions`, with the
    element types `body` returns."""
    operands = _inputs_and_inits(op)
    if operands is None or not op.regions:
        return None
    inputs, inits = operands
    if not inputs:
        diag.error(op, "C3", "expects at least one input")
        return None
    if not inputs_compatible(op, diag, "C1", inputs):
        return None
    dims = ints_attr(op, "dimensions", None)
    if dims is None:
        return None
    shape = next((t.shape for t in inputs if t.shape is not None), None)
    seen: set[int] = set()
    for d in dims:
        if shape is not None and not 0 <= d < len(shape):
            diag.error(op, "C4", f"Out-of-bounds dimension {d}, expected to be in range "
                                 f"[0, {len(shape)})")
            return None
        if d in seen:
            diag.error(op, "C5", f"Duplicate reduction dimension: {d}")
            return None
        seen.add(d)
    kept = None if shape is None else [s for i, s in enumerate(shape) if i not in dims]
    rets = check_reducer(op, diag, "C6", 0, inputs, inits, kept)
    if rets is None:
        return None
    result_shape = None if kept is None else tuple(kept)
    return [TensorType(result_shape, r.element_type) for r in rets]


@verifier("stablehlo.reduce")
def _verify_reduce(op: Operation, diag: Diagnostics) -> None:
    """reduce (C1-C8): same input shapes, matching init values, unique in-range dimensions, a
    reducer `body` of the right type, and the result types the spec determines."""
    block = _c.region_block(op, 0)
    if len(op.operands) % 2 and block is not None and \
            len(block.arguments) != len(op.operands) // 2 * 2:
        # MLIR splits an odd number of operands into two groups of n // 2 (and ignores the last
        # operand): its first complaint is then the region's
        diag.error(op, "C6", f"Reduction-region must take {len(op.operands) // 2 * 2} "
                             f"parameters, but takes {len(block.arguments)} parameter(s)")
        return
    if not _c.signature(op, diag, [(_c.TENSOR, "*"), (_c.TENSOR, "*")], [(_c.TENSOR, "*")],
                        attrs={"dimensions": "ints"}, regions=1):
        return
    inferred = _infer_reduce(op, diag)
    if inferred is not None:
        _c.check_inferred(op, diag, "C7, C8", inferred)
