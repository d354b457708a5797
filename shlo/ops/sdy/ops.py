"""The Shardy (`sdy`) dialect's ops (upstream `shardy/dialect/sdy/ir/ops.td`): their pretty
syntax, structural checks and kernels.

Shardings are metadata: they say how a value is laid out over a mesh of devices, never what
it is. So every op here that only attaches or changes a sharding (`sharding_constraint`,
`reshard`, `propagation_barrier`, `data_flow_edge`, `func_data_flow_edge`, and the sdy
collectives `all_gather`, `all_slice`, `all_to_all`, `collective_permute`, `all_reduce`,
`reduce_scatter`, `sharded_to_unreduced`, `replicated_to_unreduced`, which move a global value
from one sharding to another) returns its operand unchanged; `sharding_group` has no result;
`named_computation` runs its body where it stands; `sdy.mesh` declares a mesh. The one op that
changes what runs where is `manual_computation` (:mod:`.manual`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from ...attributes import DenseElementsAttr, IntegerAttr, StringAttr
from ...errors import Diagnostics
from ...ir import Operation, Region
from ...registry import TERMINATOR, Kernel, define, kernel, verifier
from ...syntax.directives import Format, parse_attrdict, types_functional
from ...syntax.lexer import AT, BARE, VALUE
from ...types import Type
from ..shape.constant import _parse_constant
from .attrs import (
    PROPAGATION_DIRECTIONS, REDUCTION_OPS, AxisList, Mesh, SdyEnum, ShardingPerValue,
    TensorSharding, axis_list_text, parse_all_to_all_params, parse_axis_refs,
    parse_list_of_axis_lists, parse_mesh_body, parse_sharding_body, parse_stripped_per_value,
)

if TYPE_CHECKING:  # pragma: no cover
    from ...interpreter.evaluator import PrepareContext
    from ...syntax.parser import Parser
    from ...syntax.printer import Printer

__all__ = ["parse_region_with_args", "print_region_with_args", "IDENTITY_OPS"]


# --- shared pieces of the formats ------------------------------------------------------------


def _one_type(p: Parser) -> Type:
    p.expect(":")
    return p.parse_type()


def parse_region_with_args(p: Parser) -> Region:
    """`(%arg1: T loc(...), ...) { ops }` (upstream's `SingleBlockRegionNoBlockId`)."""
    p.expect("(")
    args: list[tuple[str, Type]] = []
    if p.v != ")":
        while True:
            if p.k != VALUE:
                p.error("expected SSA value name")
            name = p.v[1:]
            p._advance()
            p.expect(":")
            args.append((name, p.parse_type()))
            p.optional_location()
            if not p.accept(","):
                break
    p.expect(")")
    # Isolated from above upstream, but with no default dialect: ops inside keep their
    # dialect prefix (so the registry's ISOLATED trait, which implies one, is not set).
    return p.parse_region(args)


def print_region_with_args(pr: Printer, region: Region) -> str | None:
    if len(region.blocks) != 1:
        return None
    b = region.blocks[0]
    args = ", ".join(f"{pr.val(a)}: {pr.type(a.type)}" for a in b.arguments)
    return f"({args}) " + pr.region(region, False)


def _functional_tail(p: Parser, name: str, operands: list, props: dict[str, Any]
                     ) -> tuple[dict[str, Any], list[Type]]:
    attrs: dict[str, Any] = {}
    parse_attrdict(p, name, props, attrs)
    p.expect(":")
    return attrs, types_functional(p, operands)


# --- sdy.mesh ---------------------------------------------------------------------------------


def _parse_mesh(p: Parser, name: str, nres: int, start: int) -> Operation:
    """`sdy.mesh @name = <["x"=2, ...]> attr-dict`."""
    if p.k != AT:
        p.error("expected mesh name")
    props: dict[str, Any] = {"sym_name": StringAttr(p.symbol_name())}
    p.expect("=")
    props["mesh"] = parse_mesh_body(p)
    attrs: dict[str, Any] = {}
    parse_attrdict(p, name, props, attrs)
    return Operation(name, [], [], props, attrs)


def _print_mesh(pr: Printer, op: Operation) -> str | None:
    sym, mesh = op.attr("sym_name"), op.attr("mesh")
    if type(sym) is not StringAttr or not isinstance(mesh, Mesh) or op.operands or op.results:
        return None
    return f" {pr.symbol(sym.value)} = {mesh.body()}{pr.attr_dict(op, {'sym_name', 'mesh'})}"


define("sdy.mesh", summary="a named mesh of devices (a symbol of the module)",
       inherent="sym_name mesh", syntax=Format(_parse_mesh, _print_mesh, frozenset()))


@verifier("sdy.mesh")
def _verify_mesh(op: Operation, diag: Diagnostics) -> None:
    """Mesh constraints (attrs.td `Sdy_Mesh`): unique axis names, positive sizes, device ids a
    permutation of iota(size) (or one id for a maximal mesh)."""
    mesh = op.attr("mesh")
    if mesh is None and op.attr("stablehlo.mesh") is not None:
        return  # StableHLO's own spelling of the mesh (a dictionary), as its tests write it
    if not isinstance(mesh, Mesh):
        diag.error(op, "", "requires a `mesh` attribute #sdy.mesh<...>")
        return
    check_mesh(op, diag, mesh)


def check_mesh(op: Operation, diag: Diagnostics, mesh: Mesh) -> bool:
    names = [a.name for a in mesh.axes]
    if len(set(names)) != len(names):
        diag.error(op, "", f"duplicate axis name in mesh {mesh.body()}")
        return False
    for a in mesh.axes:
        if a.size <= 0:
            diag.error(op, "", f"axis size must be at least 1, got: {a.size}")
            return False
    ids = list(mesh.device_ids)
    if any(d < 0 for d in ids):
        diag.error(op, "", "device id must be non-negative")
        return False
    if not mesh.axes:
        if len(ids) > 1:
            diag.error(op, "", "mesh without axes must have at most one device id, got "
                               f"{len(ids)}")
            return False
        return True
    if ids and sorted(ids) != list(range(mesh.size)):
        diag.error(op, "", f"sorted device ids must be iota(product_of_axis_sizes) = "
                           f"iota({mesh.size}), got {ids}")
        return False
    return True


# --- ops of one operand and a sharding --------------------------------------------------------


def _sharded_unary(keyword: str | None, before: str | None = None
                   ) -> tuple[Callable[..., Operation], Callable[..., str | None]]:
    """`[BEFORE] %x [KEYWORD=]<sharding> attr-dict : type` formats; BEFORE is one of
    `axes_lists` (`[{...}, ...]`), `axes` (`{...}`), `a2a` (`[{"x"}: 0->1]`), with an optional
    leading reduction op (`max`) for the reductions."""
    def parse(p: Parser, name: str, nres: int, start: int) -> Operation:
        props: dict[str, Any] = {}
        if before is not None:
            if name in _REDUCING and p.k == BARE and p.v in REDUCTION_OPS:
                props["reduction_op"] = SdyEnum("reduction_op", p.bare())
            attr_name = _BEFORE_ATTR[name]
            if before == "axes_lists":
                props[attr_name] = AxisList("list_of_axis_ref_lists",
                                            parse_list_of_axis_lists(p))
            elif before == "axes":
                p.expect("{")
                props[attr_name] = AxisList("axis_ref_list", parse_axis_refs(p))
                p.expect("}")
            else:
                props[attr_name] = AxisList("all_to_all_param_list", parse_all_to_all_params(p))
        operand = p.operand()
        key = _SHARDING_ATTR.get(name, "sharding")
        if keyword is not None:
            if p.v != keyword:
                if name == "sdy.data_flow_edge":
                    attrs: dict[str, Any] = {}
                    parse_attrdict(p, name, props, attrs)
                    return Operation(name, [operand], [_one_type(p)], props, attrs)
                p.error(f"expected '{keyword}'")
            p._advance()
            p.expect("=")
        if name == "sdy.propagation_barrier":
            if p.k != BARE or p.v not in PROPAGATION_DIRECTIONS:
                p.error("expected one of " + ", ".join(PROPAGATION_DIRECTIONS))
            props["allowed_direction"] = SdyEnum("propagation_direction", p.bare())
        elif name == "sdy.sharding_group":
            props["group_id"] = IntegerAttr(p.integer(), None)
        elif name != "sdy.func_data_flow_edge":
            props[key] = parse_sharding_body(p)
        attrs = {}
        parse_attrdict(p, name, props, attrs)
        t = _one_type(p)
        results = [] if name == "sdy.sharding_group" else [t]
        return Operation(name, [operand], results, props, attrs)

    def print_(pr: Printer, op: Operation) -> str | None:
        if len(op.operands) != 1 or op.regions:
            return None
        name = op.name
        s = ""
        elided: set[str] = set()
        if before is not None:
            red = op.attr("reduction_op")
            if red is not None:
                if not isinstance(red, SdyEnum):
                    return None
                if red.value != "sum":
                    s += " " + red.value
                elided.add("reduction_op")
            a = op.attr(_BEFORE_ATTR[name])
            if not isinstance(a, AxisList):
                return None
            s += " " + (a.body() if before != "axes" else "{" + axis_list_text(a.items) + "}")
            elided.add(_BEFORE_ATTR[name])
        s += " " + pr.val(op.operands[0])
        key = _SHARDING_ATTR.get(name, "sharding")
        if name == "sdy.propagation_barrier":
            d = op.attr("allowed_direction")
            if not isinstance(d, SdyEnum):
                return None
            s += f" allowed_direction={d.value}"
            elided.add("allowed_direction")
        elif name == "sdy.sharding_group":
            g = op.attr("group_id")
            if not isinstance(g, IntegerAttr):
                return None
            s += f" group_id={g.value}"
            elided.add("group_id")
        elif name != "sdy.func_data_flow_edge":
            sh = op.attr(key)
            if isinstance(sh, TensorSharding):
                s += (f" {keyword}=" if keyword else " ") + sh.body()
                elided.add(key)
            elif sh is not None or name != "sdy.data_flow_edge":
                return None
        t = op.operands[0].type
        if op.results and op.results[0].type != t:
            return None
        return s + pr.attr_dict(op, elided) + " : " + pr.type(t)

    return parse, print_


_REDUCING = {"sdy.all_reduce", "sdy.reduce_scatter"}
_BEFORE_ATTR = {"sdy.all_gather": "gathering_axes", "sdy.all_slice": "slicing_axes",
                "sdy.all_to_all": "params", "sdy.all_reduce": "reduction_axes",
                "sdy.reduce_scatter": "reduce_scatter_axes", "sdy.sharded_to_unreduced": "axes",
                "sdy.replicated_to_unreduced": "axes"}
_SHARDING_ATTR = {n: "out_sharding" for n in _BEFORE_ATTR} | {
    "sdy.collective_permute": "out_sharding"}

_UNARY: list[tuple[str, str | None, str | None, str, str]] = [
    ("sdy.sharding_constraint", None, None, "sharding",
     "constrain a tensor to a sharding (identity on its value)"),
    ("sdy.reshard", None, None, "sharding",
     "reshard a tensor to another sharding (identity on its value)"),
    ("sdy.data_flow_edge", "sharding", None, "sharding",
     "the sharding of a data flow edge (identity on its value)"),
    ("sdy.func_data_flow_edge", None, None, "",
     "a func argument/call result data flow edge (identity on its value)"),
    ("sdy.propagation_barrier", "allowed_direction", None, "allowed_direction",
     "stop sharding propagation in some directions (identity on its value)"),
    ("sdy.sharding_group", "group_id", None, "group_id",
     "put a tensor in a sharding group (no result)"),
    ("sdy.all_gather", "out_sharding", "axes_lists", "gathering_axes out_sharding",
     "all-gather a global value along mesh axes (identity on its value)"),
    ("sdy.all_slice", "out_sharding", "axes_lists", "slicing_axes out_sharding",
     "slice a global value along mesh axes (identity on its value)"),
    ("sdy.all_to_all", "out_sharding", "a2a", "params out_sharding",
     "move mesh axes between dimensions (identity on its value)"),
    ("sdy.collective_permute", "out_sharding", None, "out_sharding",
     "replace the axes sharding a value (identity on its value)"),
    ("sdy.all_reduce", "out_sharding", "axes", "reduction_axes reduction_op out_sharding",
     "reduce an unreduced value along axes (identity on its global value)"),
    ("sdy.reduce_scatter", "out_sharding", "axes_lists",
     "reduce_scatter_axes reduction_op out_sharding",
     "reduce-scatter along axes (identity on its global value)"),
    ("sdy.sharded_to_unreduced", "out_sharding", "axes_lists", "axes out_sharding",
     "make sharded axes unreduced (identity on its global value)"),
    ("sdy.replicated_to_unreduced", "out_sharding", "axes", "axes out_sharding",
     "make replicated axes unreduced (identity on its global value)"),
]

for _name, _kw, _before, _inherent, _summary in _UNARY:
    _parse, _print = _sharded_unary(_kw, _before)
    define(_name, summary=_summary, inherent=_inherent,
           syntax=Format(_parse, _print, frozenset()))

IDENTITY_OPS = tuple(n for n, *_ in _UNARY if n != "sdy.sharding_group")


@kernel(*IDENTITY_OPS)
def identity(op: Operation, ctx: PrepareContext) -> Kernel:
    """A sharding is metadata: the value passes through unchanged."""
    def run(x: Any) -> tuple[Any, ...]:
        return (x,)

    return run


@kernel("sdy.sharding_group")
def sharding_group(op: Operation, ctx: PrepareContext) -> Kernel:
    """Only for propagation: nothing to compute."""
    def run(x: Any) -> tuple[Any, ...]:
        return ()

    return run


@verifier(*IDENTITY_OPS)
def _verify_identity(op: Operation, diag: Diagnostics) -> None:
    """SameOperandsAndResultType; a sharding's rank matches the tensor's."""
    if len(op.operands) != 1 or len(op.results) != 1:
        diag.error(op, "", "expects one operand and one result")
        return
    if op.operands[0].type != op.results[0].type:
        diag.error(op, "", "requires the same type for all operands and results")
        return
    key = _SHARDING_ATTR.get(op.name, "sharding")
    sh = op.attr(key)
    if isinstance(sh, TensorSharding):
        check_sharding_rank(op, diag, sh, op.operands[0].type, key)


def check_sharding_rank(op: Operation, diag: Diagnostics, sh: TensorSharding, t: Type,
                        what: str) -> bool:
    rank = len(getattr(t, "shape", ()) or ()) if getattr(t, "shape", None) is not None else 0
    if len(sh.dims) != rank:
        diag.error(op, "", f"{what}: sharding doesn't match tensor rank: {len(sh.dims)} != "
                           f"{rank}")
        return False
    return True


# --- sdy.return -------------------------------------------------------------------------------


def _parse_return(p: Parser, name: str, nres: int, start: int) -> Operation:
    """`sdy.return attr-dict (%a, %b : T0, T1)?`."""
    props: dict[str, Any] = {}
    attrs: dict[str, Any] = {}
    parse_attrdict(p, name, props, attrs)
    operands = p.operand_list() if p.k == VALUE else []
    if operands:
        p.expect(":")
        off = p.start
        p.check_types(operands, p.type_list(), off)
    return Operation(name, operands, [], props, attrs)


def _print_return(pr: Printer, op: Operation) -> str | None:
    if op.results or op.regions:
        return None
    d = pr.attr_dict(op, set())
    if not op.operands:
        return d
    return (f"{d} {', '.join(pr.val(v) for v in op.operands)} : "
            f"{', '.join(pr.type(t) for t in op.operand_types)}")


define("sdy.return", traits={TERMINATOR}, inherent="",
       summary="terminate the region of an sdy op",
       syntax=Format(_parse_return, _print_return, frozenset()))


# --- sdy.constant -----------------------------------------------------------------------------


def _print_constant(pr: Printer, op: Operation) -> str | None:
    v = op.attr("value")
    if op.operands or len(op.results) != 1 or not isinstance(v, DenseElementsAttr) \
            or v.type != op.results[0].type:
        return None
    return f"{pr.attr_dict(op, {'value'})} {pr.attr(v)}"


define("sdy.constant", summary="a tensor literal that propagation may duplicate",
       inherent="value", syntax=Format(_parse_constant, _print_constant, frozenset({"value"})))


@kernel("sdy.constant")
def constant(op: Operation, ctx: PrepareContext) -> Kernel:
    """``output = value`` (a read-only view of the literal)."""
    a = np.asarray(op.attr("value").array).view()
    a.flags.writeable = False
    out = (a,)

    def run() -> tuple[Any, ...]:
        return out

    return run


# --- sdy.named_computation -------------------------------------------------------------------


def _parse_named(p: Parser, name: str, nres: int, start: int) -> Operation:
    """`sdy.named_computation<"name">(%x) [in_shardings=[...]] [out_shardings=[...]]
    (%arg: T) { body } attr-dict : (T) -> R`."""
    p.expect("<")
    props: dict[str, Any] = {"name": StringAttr(p.string())}
    p.expect(">")
    p.expect("(")
    operands = p.operand_list()
    p.expect(")")
    for key in ("in_shardings", "out_shardings"):
        if p.k == BARE and p.v == key:
            p._advance()
            p.expect("=")
            props[key] = parse_stripped_per_value(p)
    region = parse_region_with_args(p)
    attrs, results = _functional_tail(p, name, operands, props)
    return Operation(name, operands, results, props, attrs, [region])


def _print_named(pr: Printer, op: Operation) -> str | None:
    nm = op.attr("name")
    if type(nm) is not StringAttr or len(op.regions) != 1:
        return None
    s = f"<{pr.attr(nm)}>({', '.join(pr.val(v) for v in op.operands)})"
    for key in ("in_shardings", "out_shardings"):
        a = op.attr(key)
        if a is not None:
            if not isinstance(a, ShardingPerValue):
                return None
            s += f" {key}={a.stripped()}"
    body = print_region_with_args(pr, op.regions[0])
    if body is None:
        return None
    d = pr.attr_dict(op, {"name", "in_shardings", "out_shardings"})
    return f"{s} {body}{d} : {pr.functional(op.operand_types, op.result_types)}"


define("sdy.named_computation", inherent="name in_shardings out_shardings",
       summary="a named group of ops (runs in place)",
       syntax=Format(_parse_named, _print_named, frozenset()))


@kernel("sdy.named_computation")
def named_computation(op: Operation, ctx: PrepareContext) -> Kernel:
    """Run the body on the operands, where the op stands."""
    body = ctx.region(op.regions[0])

    def run(*args: Any) -> Sequence[Any]:
        return body(*args)

    return run


@verifier("sdy.named_computation")
def _verify_named(op: Operation, diag: Diagnostics) -> None:
    """Block arguments and returned values have the operand and result types."""
    check_body_types(op, diag, [v.type for v in op.operands], [v.type for v in op.results])


def check_body_types(op: Operation, diag: Diagnostics, args: list[Type],
                     rets: list[Type]) -> bool:
    if len(op.regions) != 1 or len(op.regions[0].blocks) != 1:
        diag.error(op, "", "expects one region with one block")
        return False
    b = op.regions[0].blocks[0]
    got = [a.type for a in b.arguments]
    if got != list(args):
        diag.error(op, "", f"expected the block arguments to have types "
                           f"{', '.join(map(str, args))}, got {', '.join(map(str, got))}")
        return False
    term = b.operations[-1] if b.operations else None
    if term is None or term.name != "sdy.return":
        diag.error(op, "", "expects the body to end with sdy.return")
        return False
    got = [v.type for v in term.operands]
    if got != list(rets):
        diag.error(op, "", f"expected the returned values to have types "
                           f"{', '.join(map(str, rets))}, got {', '.join(map(str, got))}")
        return False
    return True

