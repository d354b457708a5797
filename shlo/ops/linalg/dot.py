"""dot_general (spec "dot_general") and the ops that are forms of it: `dot` and `einsum`
(spec "Not in HLO" ops).

Both kernels transpose their operands to ``(batch, free, contracted)`` and call one batched
matrix product (:class:`~shlo.ops.linalg.matmul.Matmul`, which owns the numeric choices,
docs/semantics/linalg.md). ``precision_config`` is ignored (CPU numerics do not depend on it); a
``dot_algorithm`` is honoured as :class:`~shlo.ops.linalg.matmul.DotAlgorithm` describes.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, NamedTuple, Sequence

import numpy as np

from ...attributes import ArrayAttr, DictAttr, EnumAttr, StructAttr, ints
from ...ir import Operation
from ...registry import DOT_LIKE, Kernel, define, inference, kernel, verifier
from ...syntax.directives import (
    ATTRDICT, COMMA, OPERAND, Format, declarative, named, parse_attrdict, parse_int_list,
    types, types_functional,
)
from ...syntax.parser import canonical_struct_params
from ...types import QuantizedType, TensorType, Type
from .. import _constraints as _c
from .contraction_checks import precision_config_ok, quantized_dot_like_ok, result_shape_ok
from .matmul import DotAlgorithm, Matmul, compiled_sequential, product_for, sequential_slabs

if TYPE_CHECKING:  # pragma: no cover
    from ...errors import Diagnostics
    from ...interpreter.evaluator import PrepareContext
    from ...syntax.parser import Parser
    from ...syntax.printer import Printer

__all__ = ["DotDimensionNumbers", "dot_dimension_numbers"]


# --- `precision = [DEFAULT, HIGH]` (the pretty forms of dot and dot_general) ----------------------


def _parse_precision(p: Parser, name: str) -> ArrayAttr:
    p.expect("[")
    vals: list[Any] = []
    if p.v != "]":
        while True:
            p.check_enum("precision", p.v)
            vals.append(EnumAttr(name.split(".", 1)[0], "precision", p.bare()))
            if not p.accept(","):
                break
    p.expect("]")
    return ArrayAttr(tuple(vals))


def _print_precision(pr: Printer, a: Any) -> str | None:
    if type(a) is not ArrayAttr or not all(type(x) is EnumAttr and x.enum == "precision"
                                           for x in a.values):
        return None
    return "precision = [" + ", ".join(x.value for x in a.values) + "]"


def _ilist(vals: Any) -> str:
    return "[" + ", ".join(str(int(v)) for v in vals) + "]"


# --- dot_general (spec "dot_general") -------------------------------------------------------------


class DotDimensionNumbers(NamedTuple):
    """`#stablehlo.dot<...>` decoded, with the spec's names."""

    lhs_batching_dimensions: tuple[int, ...]
    rhs_batching_dimensions: tuple[int, ...]
    lhs_contracting_dimensions: tuple[int, ...]
    rhs_contracting_dimensions: tuple[int, ...]


def dot_dimension_numbers(op: Operation) -> DotDimensionNumbers:
    """The `dot_dimension_numbers` of a dot_general (empty lists where absent): the parameters
    of the `#stablehlo.dot<...>` struct or, where an older producer flattened them, attributes
    of the same names."""
    dn = op.attr("dot_dimension_numbers")
    values = []
    for name in DotDimensionNumbers._fields:
        v = dn.get(name) if isinstance(dn, (StructAttr, DictAttr)) else None
        if v is None:
            v = op.attr(name)
        try:
            values.append(tuple(ints(v, ()) or ()))
        except (TypeError, ValueError):
            values.append(())
    return DotDimensionNumbers(*values)


def _parse_dot_general(p: Parser, name: str, nres: int, start: int) -> Operation:
    lhs = p.operand()
    p.expect(",")
    rhs = p.operand()
    p.expect(",")
    params: list[tuple[str, Any]] = []
    lb = rb = ()
    if p.v == "batching_dims":
        p._advance()
        p.expect("=")
        lb = parse_int_list(p)
        p.keyword("x")
        rb = parse_int_list(p)
        p.expect(",")
    p.keyword("contracting_dims")
    p.expect("=")
    lc = parse_int_list(p)
    p.keyword("x")
    rc = parse_int_list(p)
    params += [("lhs_batching_dimensions", lb), ("rhs_batching_dimensions", rb),
               ("lhs_contracting_dimensions", lc), ("rhs_contracting_dimensions", rc)]
    props: dict[str, Any] = {"dot_dimension_numbers": StructAttr(
        "stablehlo.dot", canonical_struct_params("stablehlo.dot", params))}
    attrs: dict[str, Any] = {}
    while p.accept(","):
        if p.v == "precision":
            p._advance()
            p.expect("=")
            props["precision_config"] = _parse_precision(p, name)
        elif p.v == "algorithm":
            p._advance()
            p.expect("=")
            algo_loc = p.location_at(p.start)
            p.expect("<")
            algo = p.struct_params()
            p.expect(">")
            props["algorithm"] = StructAttr("stablehlo.dot_algorithm", tuple(algo))
        else:
            p.error("expected 'precision' or 'algorithm'")
    parse_attrdict(p, name, props, attrs)
    p.expect(":")
    res = types_functional(p, [lhs, rhs])
    op = Operation(name, [lhs, rhs], res, props, attrs)
    if "algorithm" in props:
        op.attr_locations = {"algorithm": algo_loc}
    return op


def _print_dot_general(pr: Printer, op: Operation) -> str | None:
    dn = op.attr("dot_dimension_numbers")
    if type(dn) is not StructAttr or dn.name != "stablehlo.dot" or len(op.operands) != 2 \
            or op.regions:
        return None
    if any(k not in DotDimensionNumbers._fields for k, _ in dn.params) or \
            dn.params != canonical_struct_params("stablehlo.dot", list(dn.params)):
        return None
    vals = {k: tuple(v) for k, v in dn.params}
    lb, rb = vals.get("lhs_batching_dimensions", ()), vals.get("rhs_batching_dimensions", ())
    s = f" {pr.val(op.operands[0])}, {pr.val(op.operands[1])}, "
    if lb or rb:
        s += f"batching_dims = {_ilist(lb)} x {_ilist(rb)}, "
    s += (f"contracting_dims = {_ilist(vals.get('lhs_contracting_dimensions', ()))} x "
          f"{_ilist(vals.get('rhs_contracting_dimensions', ()))}")
    pc = op.attr("precision_config")
    if pc is not None:
        t = _print_precision(pr, pc)
        if t is None:
            return None
        s += ", " + t
    algo = op.attr("algorithm")
    if algo is not None:
        if type(algo) is not StructAttr or algo.name != "stablehlo.dot_algorithm":
            return None
        s += ", algorithm = <" + pr.struct_params(algo) + ">"
    d = pr.attr_dict(op, {"dot_dimension_numbers", "precision_config", "algorithm"})
    return f"{s}{d} : {pr.functional(op.operand_types, op.result_types)}"


define("stablehlo.dot_general", spec="dot_general",
       summary="dot products between slices of lhs and slices of rhs",
       traits={DOT_LIKE},
       syntax=Format(_parse_dot_general, _print_dot_general,
                     frozenset({"dot_dimension_numbers", "precision_config", "algorithm"})))


def _prepare_dot(op: Operation, dims: DotDimensionNumbers,
                 algorithm: DotAlgorithm | None = None) -> Kernel:
    lhs_t, rhs_t = op.operands[0].type, op.operands[1].type
    lb, rb = dims.lhs_batching_dimensions, dims.rhs_batching_dimensions
    lc, rc = dims.lhs_contracting_dimensions, dims.rhs_contracting_dimensions
    lhs_result_dimensions = [d for d in range(lhs_t.rank) if d not in lb and d not in lc]
    rhs_result_dimensions = [d for d in range(rhs_t.rank) if d not in rb and d not in rc]
    lhs_perm = lb + tuple(lhs_result_dimensions) + lc
    rhs_perm = rb + rc + tuple(rhs_result_dimensions)
    nb, nm, nc = len(lb), len(lhs_result_dimensions), len(lc)
    matmul = Matmul(lhs_t.element_type, rhs_t.element_type, op.results[0].type.element_type,
                    algorithm)
    prod = math.prod

    def direct(lhs: Any, rhs: Any) -> Any:
        a = np.asarray(lhs).transpose(lhs_perm)
        b = np.asarray(rhs).transpose(rhs_perm)
        batch, free_l, contract = a.shape[:nb], a.shape[nb:nb + nm], a.shape[nb + nm:]
        free_r = b.shape[nb + nc:]
        g, m, k, n = prod(batch), prod(free_l), prod(contract), prod(free_r)
        out = matmul(a.reshape(g, m, k), b.reshape(g, k, n))
        return out.reshape(batch + free_l + free_r)

    if lhs_t.is_static and rhs_t.is_static and lhs_t.rank and rhs_t.rank:
        # static shapes (loop bodies): the shapes of the matrix product are known here
        ls, rs = lhs_t.shape, rhs_t.shape
        g, m = prod(ls[d] for d in lb), prod(ls[d] for d in lhs_result_dimensions)
        k, n = prod(ls[d] for d in lc), prod(rs[d] for d in rhs_result_dimensions)
        lshape, rshape = (g, m, k), (g, k, n)
        out_shape = tuple(ls[d] for d in lb) + tuple(ls[d] for d in lhs_result_dimensions) + \
            tuple(rs[d] for d in rhs_result_dimensions)
        lid, rid = lhs_perm == tuple(range(lhs_t.rank)), rhs_perm == tuple(range(rhs_t.rank))

        product = product_for(matmul, lhs_t.dtype, rhs_t.dtype)

        def direct(lhs: Any, rhs: Any) -> Any:  # noqa: F811
            a = (lhs if lid else lhs.transpose(lhs_perm)).reshape(lshape)
            b = (rhs if rid else rhs.transpose(rhs_perm)).reshape(rshape)
            return product(a, b).reshape(out_shape)

        if g == 1 and sequential_slabs(matmul, m, k, n, lhs_t.dtype, rhs_t.dtype):
            # one product of small matrices (an RNN's vector @ matrix, a matrix @ vector):
            # matmul's sequential sum of all products without its generic (G, K, M, N)
            # layout, and no reshape where the operands already have the shapes needed
            direct = _sequential_product(matmul, m, k, n, ls if lid else None,
                                         rs if rid else None, lhs_perm, rhs_perm, out_shape)

    def run(lhs: Any, rhs: Any) -> Sequence[Any]:
        return (direct(lhs, rhs),)

    run.direct = direct  # type: ignore[attr-defined]
    return run


def _sequential_product(matmul: Matmul, m: int, k: int, n: int, lhs_shape: tuple[int, ...] | None,
                        rhs_shape: tuple[int, ...] | None, lhs_perm: tuple[int, ...],
                        rhs_perm: tuple[int, ...], out_shape: tuple[int, ...]) -> Any:
    """``lhs @ rhs`` for one (M, K) x (K, N) product that :func:`sequential_slabs` allows:
    ``add.reduce(A.T[:, :, None] * B[:, None, :], axis=0, initial=+0)`` with the (K, M, N)
    products shaped (K, N) when M = 1 and (K, M) when N = 1. ``lhs_shape``/``rhs_shape``: the
    operand's shape when it needs no transpose (None: transpose by the perm first)."""
    zero, add_reduce, multiply = matmul.compute.type(0), np.add.reduce, np.multiply
    dtype, contiguous = matmul.compute, np.ascontiguousarray
    compilable = dtype in (np.float32, np.float64)
    # the operand shapes the product takes: A.T as (K, M) (a transposed view), B as (K, N)
    if m == 1:
        lshape, rshape, at = (k, 1), (k, n), False
    elif n == 1:
        lshape, rshape, at = (m, k), (k, 1), True
    else:
        lshape, rshape, at = (m, k), (k, 1, n), True
    lkeep, rkeep = lhs_shape == lshape, rhs_shape == rshape
    reshaped = (n,) if m == 1 else (m,) if n == 1 else (m, n)
    okeep = reshaped == out_shape
    lperm = None if lhs_shape is not None else lhs_perm
    rperm = None if rhs_shape is not None else rhs_perm
    general = m > 1 and n > 1
    # the compiled product's (M, K), (K, N) and (M, N) arrays: reshaped unless already so
    mk, kn, mn = lhs_shape == (m, k), rhs_shape == (k, n), out_shape == (m, n)

    def direct(lhs: Any, rhs: Any) -> Any:
        a = lhs if lperm is None else lhs.transpose(lperm)
        b = rhs if rperm is None else rhs.transpose(rperm)
        compiled = compiled_sequential() if compilable else None
        if compiled is not None:  # one compiled call (no NaN in the result: numpy's bits)
            out = np.empty(out_shape, dtype)
            if not compiled(contiguous(a) if mk else contiguous(a).reshape(m, k),
                            contiguous(b) if kn else contiguous(b).reshape(k, n),
                            out if mn else out.reshape(m, n)):
                return out
        if not lkeep:
            a = a.reshape(lshape)
        if at:
            a = a.T[:, :, None] if general else a.T
        # order="C": K outermost in memory even when an operand is a transposed view
        p = multiply(a, b if rkeep else b.reshape(rshape), order="C")
        out = add_reduce(p, axis=0, initial=zero)
        return out if okeep else out.reshape(out_shape)

    return direct


@kernel("stablehlo.dot_general")
def dot_general(op: Operation, ctx: PrepareContext) -> Kernel:
    """Spec "dot_general": dot products between slices of `lhs` and `rhs`.

    ``result = transpose(lhs, batching + result + contracting) @ transpose(rhs, batching +
    contracting + result)`` as one batched matrix product. ``precision_config`` is ignored;
    ``algorithm`` is honoured as described in :class:`DotAlgorithm`.
    """
    algo = op.attr("algorithm")
    return _prepare_dot(op, dot_dimension_numbers(op),
                        DotAlgorithm(algo) if algo is not None else None)


@inference("stablehlo.dot_general")
def _infer_dot_general(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """(C1-C11) and the result shape: `dim(lhs, lhs_batching_dimensions...)`, the free
    dimensions of `lhs`, then those of `rhs` (upstream's inferDotGeneralOp). The element type
    is not determined (upstream accepts `i8 x i8 -> i32`, `bf16 x f32`...): the inferred one is
    `lhs`'s."""
    if len(op.operands) != 2 or not all(isinstance(v.type, TensorType) for v in op.operands):
        return None
    lhs, rhs = op.operands[0].type, op.operands[1].type
    lb, rb, lc, rc = dot_dimension_numbers(op)
    if len(lb) != len(rb):
        diag.error(op, "C1", f"lhs and rhs should have the same number of batching dimensions: "
                             f"{len(lb)} vs {len(rb)}")
        return None
    if len(lc) != len(rc):
        diag.error(op, "C2", f"lhs and rhs should have the same number of contracting "
                             f"dimensions: {len(lc)} vs {len(rc)}")
        return None
    for side, b, c, label in (("lhs", lb, lc, "C3"), ("rhs", rb, rc, "C4")):
        if not _c._disjoint(op, diag, label, b, c, f"{side}_batching_dimensions",
                            f"{side}_contracting_dimensions"):
            return None
    for name, dims, t, label in (("lhs_batching_dimensions", lb, lhs, "C5"),
                                 ("lhs_contracting_dimensions", lc, lhs, "C6"),
                                 ("rhs_batching_dimensions", rb, rhs, "C7"),
                                 ("rhs_contracting_dimensions", rc, rhs, "C8")):
        if t.shape is None:
            continue
        for d in dims:
            if not 0 <= d < len(t.shape):
                diag.error(op, label, f"{name} value: {d} is out of range: [0, {len(t.shape)})")
                return None
    if lhs.shape is not None and rhs.shape is not None:
        for a, b in zip(lb, rb):
            if not _c.compatible_dims(lhs.shape[a], rhs.shape[b]):
                diag.error(op, "C9", f"batching dimension sizes must match for lhs/rhs: "
                                     f"dim(lhs, {a}) = {lhs.shape[a]}, dim(rhs, {b}) = "
                                     f"{rhs.shape[b]}")
                return None
        for a, b in zip(lc, rc):
            if not _c.compatible_dims(lhs.shape[a], rhs.shape[b]):
                diag.error(op, "C10", f"contracting dimension sizes must match for lhs/rhs: "
                                      f"dim(lhs, {a}) = {lhs.shape[a]}, dim(rhs, {b}) = "
                                      f"{rhs.shape[b]}")
                return None
    if not precision_config_ok(op, diag, "C11"):
        return None
    if lhs.shape is None or rhs.shape is None:
        return [TensorType(None, lhs.element_type)]
    shape = tuple([lhs.shape[d] for d in lb] +
                  [s for d, s in enumerate(lhs.shape) if d not in lb and d not in lc] +
                  [s for d, s in enumerate(rhs.shape) if d not in rb and d not in rc])
    return [TensorType(shape, lhs.element_type)]


@verifier("stablehlo.dot_general")
def _verify_dot_general(op: Operation, diag: Diagnostics) -> None:
    """dot_general (C1-C20): batching and contracting dimensions pair up, are unique, in range
    and of equal sizes; precision_config has at most 2 entries; the result shape (C12); the
    quantization constraints; a known `algorithm` (C21-C24).

    `element_type(lhs) = element_type(rhs)` for non-quantized operands is not enforced: upstream
    accepts mixed element types (for example `i8 x i8 -> i32`, `bf16 x f32`)."""
    if not _check_dot_algorithm(op, diag):
        return
    if not _c.signature(op, diag, [_c.TENSOR, _c.TENSOR_QA], [_c.TENSOR_QA],
                        attrs={"dot_dimension_numbers": "any"},
                        optional_attrs={"precision_config": "any", "algorithm": "any"}):
        return
    if not isinstance(op.attr("dot_dimension_numbers"), StructAttr):
        return
    inferred = _infer_dot_general(op, diag)
    if inferred is None or not result_shape_ok(op, diag, "C12", inferred[0].shape):
        return
    if op.attr("algorithm") is not None and any(
            getattr(p, "value", p) != "DEFAULT"
            for p in getattr(op.attr("precision_config"), "values", ())):
        diag.error(op, "C21", "must specify DEFAULT precision config when algorithm is set.")
        return
    lhs, rhs = op.operands[0].type, op.operands[1].type
    re_ = rhs.element_type
    if isinstance(re_, QuantizedType):
        if re_.quantization_dimension is None:
            if re_.zero_points and re_.zero_points[0] != 0:
                diag.error(op, "C17", f"Zero point of rhs should be 0, got {re_.zero_points[0]}")
                return
        else:
            if any(z != 0 for z in re_.zero_points):
                diag.error(op, "C17", "Zero points of rhs should be 0")
                return
            if re_.quantization_dimension in dot_dimension_numbers(op).rhs_contracting_dimensions:
                diag.error(op, "C18", "Quantization dimension of rhs should not be in the "
                                      "contracting dimension of rhs")
                return
    quantized_dot_like_ok(op, diag, lhs, rhs, op.results[0].type, "C14")


def _type_name(t: Any) -> str:
    t = getattr(t, "type", t)
    return getattr(t, "name", str(t))


def _check_dot_algorithm(op: Operation, diag: Diagnostics) -> bool:
    """(C22-C24) of a `#stablehlo.dot_algorithm<...>`: positive counts, and a combination of
    types and operation count known to some hardware (upstream's list; imprecise accumulation
    only for f8 operands). MLIR checks these when it builds the attribute, so they come first
    and are reported on the attribute's own line."""
    a = op.attr("algorithm")
    if not isinstance(a, StructAttr):
        return True
    n = len(diag)
    loc = op.attr_location("algorithm")
    lp, rp = _type_name(a.get("lhs_precision_type")), _type_name(a.get("rhs_precision_type"))
    acc = _type_name(a.get("accumulation_type"))
    lcc = _c.struct_int(a, "lhs_component_count", 1)
    rcc = _c.struct_int(a, "rhs_component_count", 1)
    nops = _c.struct_int(a, "num_primitive_operations", 1)
    imprecise = _c.struct_int(a, "allow_imprecise_accumulation", 0)
    if lcc < 1:
        diag.error(op, "C22", "lhs component count must be positive", location=loc)
        return False
    if rcc < 1:
        diag.error(op, "C23", "rhs component count must be positive", location=loc)
        return False
    if nops < 1:
        diag.error(op, "C24", "num primitive operations must be positive", location=loc)
        return False
    f8 = lambda t: t.startswith("f8")  # noqa: E731
    known = lcc == 1 and rcc == 1 and (
        f8(lp) and f8(rp) and acc == "f32" and nops == 1 or not imprecise and (
        lp == rp == "f16" and acc in ("f16", "f32") and nops == 1 or
        lp == rp == "bf16" and acc in ("bf16", "f32") and nops in (1, 3, 6, 9) or
        lp == rp == "tf32" and acc == "f32" and nops in (1, 3) or
        lp == rp == "f32" and acc == "f32" and nops == 1 or
        lp == rp == "f64" and acc == "f64" and nops == 1))
    if not known:
        diag.error(op, "C24", f"dot algorithm not known to be supported on any hardware: "
                              f"{{lhs:'{lp}', rhs:'{rp}', accum:'{acc}', lhs_components:{lcc}, "
                              f"rhs_components:{rcc}, primitive_ops:{nops}, "
                              f"imprecise:{int(imprecise)}}}", location=loc)
    return len(diag) == n


# --- dot (spec "Not in HLO" ops: a dot_general of rank-1/rank-2 operands) -------------------------


def _parse_dot(p: Parser, name: str, nres: int, start: int) -> Operation:
    lhs = p.operand()
    p.expect(",")
    rhs = p.operand()
    props: dict[str, Any] = {}
    attrs: dict[str, Any] = {}
    if p.accept(","):
        p.keyword("precision")
        p.expect("=")
        props["precision_config"] = _parse_precision(p, name)
    parse_attrdict(p, name, props, attrs)
    p.expect(":")
    res = types_functional(p, [lhs, rhs])
    return Operation(name, [lhs, rhs], res, props, attrs)


def _print_dot(pr: Printer, op: Operation) -> str | None:
    if len(op.operands) != 2 or op.regions:
        return None
    s = f" {pr.val(op.operands[0])}, {pr.val(op.operands[1])}"
    pc = op.attr("precision_config")
    if pc is not None:
        t = _print_precision(pr, pc)
        if t is None:
            return None
        s += ", " + t
    d = pr.attr_dict(op, {"precision_config"})
    return f"{s}{d} : {pr.functional(op.operand_types, op.result_types)}"


define("stablehlo.dot", spec=None, summary="vector/matrix product (a form of dot_general)",
       traits={DOT_LIKE},
       syntax=Format(_parse_dot, _print_dot, frozenset({"precision_config"})))


@kernel("stablehlo.dot")
def dot(op: Operation, ctx: PrepareContext) -> Kernel:
    """Legacy `stablehlo.dot` (spec "Not in HLO" ops): vector/matrix products of rank-1 or rank-2
    operands, i.e. `dot_general` contracting the last dimension of `lhs` with the first of `rhs`.
    """
    lhs_rank = op.operands[0].type.rank
    return _prepare_dot(op, DotDimensionNumbers((), (), (lhs_rank - 1,), (0,)))


@inference("stablehlo.dot")
def _infer_dot(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """Ranks 1 or 2 (C1), `dim(lhs, -1) = dim(rhs, 0)` (C2); the result shape is
    `shape(lhs)[:-1] + shape(rhs)[1:]` (its element type, not determined, is `lhs`'s)."""
    if len(op.operands) != 2 or not all(isinstance(v.type, TensorType) for v in op.operands):
        return None
    lhs, rhs = op.operands[0].type, op.operands[1].type
    if not precision_config_ok(op, diag, "C1"):
        return None
    if lhs.shape is None or rhs.shape is None:
        return [TensorType(None, lhs.element_type)]
    if len(lhs.shape) not in (1, 2) or len(rhs.shape) not in (1, 2):
        diag.error(op, "C1", f"expected both lhs/rhs ranks to be either 1 or 2, got "
                             f"{len(lhs.shape)} and {len(rhs.shape)}")
        return None
    if not _c.compatible_dims(lhs.shape[-1], rhs.shape[0]):
        diag.error(op, "C2", f"expected lhs dimension {len(lhs.shape) - 1} ({lhs.shape[-1]}) "
                             f"and rhs dimension 0 ({rhs.shape[0]}) to match")
        return None
    return [TensorType(tuple(lhs.shape[:-1]) + tuple(rhs.shape[1:]), lhs.element_type)]


@verifier("stablehlo.dot")
def _verify_dot(op: Operation, diag: Diagnostics) -> None:
    """`dot` (beyond the seed spec): ranks 1 or 2, matching contracting dimensions, and the
    result shape of the matrix/vector product (C3)."""
    if not _c.signature(op, diag, [_c.TENSOR, _c.TENSOR_QA], [_c.TENSOR_QA],
                        optional_attrs={"precision_config": "any"}):
        return
    inferred = _infer_dot(op, diag)
    if inferred is not None and inferred[0].shape is not None:
        result_shape_ok(op, diag, "C3", inferred[0].shape)


# --- einsum, unary_einsum (spec "Not in HLO" ops; no kernel: programs use dot_general) ------------

define("stablehlo.einsum", summary="Einstein summation of two operands (deprecated)",
       syntax=declarative(OPERAND, COMMA, OPERAND, COMMA, *named("config", "einsum_config", "str"),
                          ATTRDICT, types("functional")))
define("stablehlo.unary_einsum", summary="Einstein summation of one operand (deprecated)",
       syntax=declarative(OPERAND, COMMA, *named("config", "einsum_config", "str"), ATTRDICT,
                          types("functional")))


@verifier("stablehlo.einsum", "stablehlo.unary_einsum")
def _verify_einsum(op: Operation, diag: Diagnostics) -> None:
    """The generated checks of upstream's einsum ops: the operands and the string attribute
    `einsum_config` they require."""
    n = 2 if op.name == "stablehlo.einsum" else 1
    _c.signature(op, diag, [_c.TENSOR_QA] * n, [_c.TENSOR_QA], attrs={"einsum_config": "str"})
