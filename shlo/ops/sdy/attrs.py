"""The Shardy (`sdy`) dialect's attributes: value objects, their parser and their text.

Spellings follow upstream's `shardy/dialect/sdy/ir/attrs.td` and its custom parsers/printers
(`parsers.cc`, `printers.cc`): the full form (`#sdy.sharding<@mesh, [{"x"}, {}]>`) wherever an
attribute may appear, and the stripped forms the sdy ops' pretty syntax uses
(`<@mesh, [{"x"}, {}]>`, `[<...>, <...>]`, `{"x", "y"}`).

* :class:`Mesh` `#sdy.mesh<["x"=2, "y"=4], device_ids=[...]>` (iota device ids are dropped,
  as upstream's builder does); :class:`MeshAxis`.
* :class:`AxisRef` `"x"` or a sub-axis `"x":(2)4` (pre-size 2, size 4).
* :class:`DimSharding` `{"x", "y", ?}p1` (open when it ends in `?`, optional priority).
* :class:`TensorSharding` `#sdy.sharding<@mesh | mesh<...>, [dims], replicated={...},
  unreduced=[max|min]{...}>`; :class:`ShardingPerValue` `#sdy.sharding_per_value<[...]>`.
* :class:`AxisList` the `ArrayOfAttr` attributes: `#sdy<manual_axes{"x"}>`,
  `#sdy<axis_ref_list{...}>`, `#sdy<list_of_axis_ref_lists[{...}, ...]>`,
  `#sdy<all_to_all_param_list[{"x"}: 0->2, ...]>`.
* :class:`SdyEnum` `#sdy<propagation_direction BOTH>`, `#sdy<reduction_op max>`.
* :class:`OpShardingRule` `#sdy.op_sharding_rule<([i, j])->([ij]) {i=2, j=4} reduction={j},
  custom>` (jaxlib's LAPACK custom calls carry one).

Other `#sdy.*` attributes (`#sdy.propagation_edges<...>`, debugging metadata) stay verbatim
(:class:`~shlo.attributes.OpaqueAttr`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Union

from ...attributes import DialectAttr, OpaqueAttr
from ...spelling import escape_string
from ...syntax.lexer import AT, BARE
from ...syntax.parse_attributes import DIALECT_ATTRIBUTE_HOOKS

if TYPE_CHECKING:  # pragma: no cover
    from ...syntax.parser import Parser

__all__ = [
    "MeshAxis", "Mesh", "AxisRef", "DimSharding", "TensorSharding", "ShardingPerValue",
    "AxisList", "SdyEnum", "OpShardingRule", "parse_sdy_attribute", "parse_mesh_body",
    "parse_sharding_body", "parse_stripped_per_value", "parse_axis_names", "parse_axis_refs",
    "parse_list_of_axis_lists", "parse_all_to_all_params", "factor_symbol", "axis_list_text",
]

PROPAGATION_DIRECTIONS = ("NONE", "FORWARD", "BACKWARD", "BOTH")
REDUCTION_OPS = ("sum", "max", "min")


def _q(s: str) -> str:
    return escape_string(s)


# --- meshes and axes -------------------------------------------------------------------------


@dataclass(frozen=True)
class MeshAxis(DialectAttr):
    """`"x"=4`: a named mesh axis."""

    name: str
    size: int

    def body(self) -> str:
        return f"{_q(self.name)}={self.size}"

    def format(self) -> str:
        return f"#sdy.mesh_axis<{self.body()}>"


@dataclass(frozen=True)
class Mesh(DialectAttr):
    """`<["x"=2, "y"=4], device_ids=[...]>`: axes (major to minor) and the device order.

    ``device_ids`` is empty for the implicit order iota(product of sizes); a mesh without axes
    and one device id is a maximal-sharding mesh (one device does the work)."""

    axes: tuple[MeshAxis, ...] = ()
    device_ids: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if self.axes and self.device_ids == tuple(range(self.size)):
            object.__setattr__(self, "device_ids", ())

    @property
    def size(self) -> int:
        """The number of devices (1 for a maximal mesh or an empty one)."""
        n = 1
        for a in self.axes:
            n *= a.size
        return n

    @property
    def devices(self) -> tuple[int, ...]:
        """Device ids in mesh order (row-major over the axes)."""
        return self.device_ids or tuple(range(self.size))

    def axis_size(self, name: str) -> int | None:
        for a in self.axes:
            if a.name == name:
                return a.size
        return None

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.axes)

    def body(self) -> str:
        s = "<[" + ", ".join(a.body() for a in self.axes) + "]"
        if self.device_ids:
            s += ", device_ids=[" + ", ".join(str(d) for d in self.device_ids) + "]"
        return s + ">"

    def format(self) -> str:
        return "#sdy.mesh" + self.body()


@dataclass(frozen=True)
class AxisRef(DialectAttr):
    """`"x"` (a whole axis) or `"x":(pre_size)size` (a sub-axis: the axis split as
    pre_size x size x rest, this ref being the middle factor)."""

    name: str
    pre_size: int | None = None
    size: int | None = None

    def body(self) -> str:
        s = _q(self.name)
        if self.size is not None:
            s += f":({self.pre_size}){self.size}"
        return s

    def format(self) -> str:
        return f"#sdy.axis_ref<{self.body()}>"

    def extent(self, mesh: Mesh) -> int:
        """How many shards this ref makes on ``mesh``."""
        if self.size is not None:
            return self.size
        n = mesh.axis_size(self.name)
        return 1 if n is None else n

    def coordinate(self, mesh: Mesh, coords: dict[str, int]) -> int:
        """This ref's index for a device whose axis coordinates are ``coords``."""
        c = coords.get(self.name, 0)
        if self.size is None:
            return c
        # `(pre)size`: the factor of the axis after its major factors of product pre.
        n = mesh.axis_size(self.name) or 1
        return (c // max(n // ((self.pre_size or 1) * self.size), 1)) % self.size


def axis_list_text(axes: tuple[AxisRef, ...]) -> str:
    return ", ".join(a.body() for a in axes)


@dataclass(frozen=True)
class DimSharding(DialectAttr):
    """`{"x", "y"}` (closed), `{"x", ?}` (open: may be sharded further), `{}p0` (priority)."""

    axes: tuple[AxisRef, ...] = ()
    closed: bool = True
    priority: int | None = None

    def body(self) -> str:
        s = "{" + axis_list_text(self.axes)
        if not self.closed:
            s += ", ?" if self.axes else "?"
        s += "}"
        if self.priority is not None:
            s += f"p{self.priority}"
        return s

    def format(self) -> str:
        return f"#sdy.dimension_sharding<{self.body()}>"


MeshOrRef = Union[str, Mesh]


@dataclass(frozen=True)
class TensorSharding(DialectAttr):
    """`<@mesh, [{"x"}, {}], replicated={"y"}, unreduced={"z"}>`: ``mesh`` is a mesh symbol
    name (str) or an inline :class:`Mesh`."""

    mesh: MeshOrRef
    dims: tuple[DimSharding, ...] = ()
    replicated: tuple[AxisRef, ...] = ()
    unreduced: tuple[AxisRef, ...] = ()
    reduction: str = "sum"

    def body(self) -> str:
        m = ("@" + self.mesh if _plain_symbol(self.mesh) else "@" + _q(self.mesh)) \
            if isinstance(self.mesh, str) else "mesh" + self.mesh.body()
        s = f"<{m}, [" + ", ".join(d.body() for d in self.dims) + "]"
        if self.replicated:
            s += ", replicated={" + axis_list_text(self.replicated) + "}"
        if self.unreduced:
            red = "" if self.reduction == "sum" else self.reduction
            s += f", unreduced={red}{{" + axis_list_text(self.unreduced) + "}"
        return s + ">"

    def format(self) -> str:
        return "#sdy.sharding" + self.body()


def _plain_symbol(s: str) -> bool:
    return bool(s) and (s[0].isalpha() or s[0] == "_") and all(
        c.isalnum() or c in "_$." for c in s)


@dataclass(frozen=True)
class ShardingPerValue(DialectAttr):
    """`#sdy.sharding_per_value<[<@mesh, ...>, ...]>`: one sharding per result/operand."""

    shardings: tuple[TensorSharding, ...] = ()

    def stripped(self) -> str:
        return "[" + ", ".join(s.body() for s in self.shardings) + "]"

    def format(self) -> str:
        return f"#sdy.sharding_per_value<{self.stripped()}>"


@dataclass(frozen=True)
class AxisList(DialectAttr):
    """Upstream's `ArrayOfAttr` attributes, spelled `#sdy<KIND BODY>`:

    * ``manual_axes``: ``items`` are axis names (str), body `{"x", "y"}`;
    * ``axis_ref_list``: :class:`AxisRef` items, body `{"x", "y":(1)2}`;
    * ``list_of_axis_ref_lists``: tuples of AxisRef, body `[{"x"}, {}]`;
    * ``all_to_all_param_list``: (axes, src_dim, tgt_dim) triples, body `[{"x"}: 0->2]`.
    """

    kind: str
    items: tuple[Any, ...] = ()

    def body(self) -> str:
        k = self.kind
        if k == "manual_axes":
            return "{" + ", ".join(_q(a) for a in self.items) + "}"
        if k == "axis_ref_list":
            return "{" + axis_list_text(self.items) + "}"
        if k == "list_of_axis_ref_lists":
            return "[" + ", ".join("{" + axis_list_text(x) + "}" for x in self.items) + "]"
        return "[" + ", ".join("{" + axis_list_text(a) + f"}}: {s}->{t}"
                               for a, s, t in self.items) + "]"

    def format(self) -> str:
        return f"#sdy<{self.kind}{self.body()}>"


@dataclass(frozen=True)
class SdyEnum(DialectAttr):
    """`#sdy<propagation_direction BOTH>`, `#sdy<reduction_op max>` (``value`` the case)."""

    enum: str
    value: str

    def format(self) -> str:
        return f"#sdy<{self.enum} {self.value}>"


# --- sharding rules ---------------------------------------------------------------------------


def factor_symbol(i: int) -> str:
    """Factor index to its symbol: 0..17 -> i..z, then z_1, z_2, ..."""
    return chr(ord("i") + i) if i < 18 else f"z_{i - 17}"


def _factor_indices(p: Parser, word: str) -> list[int]:
    """`ij` -> [0, 1]; `z_1z_2` -> [18, 19]; `zz_1` -> [17, 18]."""
    out: list[int] = []
    i = 0
    while i < len(word):
        if word.startswith("z_", i):
            j = i + 2
            while j < len(word) and word[j].isdigit():
                j += 1
            num = word[i + 2:j]
            if not num:
                p.error(f"expecting integer after 'z_'. Received: '{word[i:]}'", found=False)
            if num[0] == "0":
                p.error(f"expecting positive integer without leading zeros. Received: '{num}'",
                        found=False)
            out.append(17 + int(num))
            i = j
            continue
        c = word[i]
        if not "i" <= c <= "z":
            p.error(f"expecting symbol from 'i' to 'z'. Received: '{c}'", found=False)
        out.append(ord(c) - ord("i"))
        i += 1
    return out


_FACTOR_GROUPS = ("reduction", "need_replication", "permutation", "blocked_propagation")


@dataclass(frozen=True)
class OpShardingRule(DialectAttr):
    """`#sdy.op_sharding_rule<(operand mappings)->(result mappings) {factor sizes} ...>`.

    A mapping is a tuple per tensor of a tuple per dimension of factor indices; the special
    factor groups (reduction, need_replication, permutation, blocked_propagation) are tuples of
    factor indices; ``custom`` marks a rule of a `stablehlo.custom_call`."""

    operands: tuple[tuple[tuple[int, ...], ...], ...] = ()
    results: tuple[tuple[tuple[int, ...], ...], ...] = ()
    factor_sizes: tuple[int, ...] = ()
    groups: tuple[tuple[str, tuple[int, ...]], ...] = ()
    custom: bool = False

    def format(self) -> str:
        def mapping(ts: tuple) -> str:
            return ", ".join("[" + ", ".join("".join(factor_symbol(f) for f in dim)
                                             for dim in t) + "]" for t in ts)

        s = f"#sdy.op_sharding_rule<({mapping(self.operands)})->({mapping(self.results)})"
        if self.factor_sizes:
            s += " {" + ", ".join(f"{factor_symbol(i)}={n}"
                                  for i, n in enumerate(self.factor_sizes)) + "}"
        for name, fs in self.groups:
            s += f" {name}={{" + ", ".join(factor_symbol(f) for f in fs) + "}"
        if self.custom:
            s += ", custom"
        return s + ">"


def _parse_rule(p: Parser) -> OpShardingRule:
    p.expect("<")

    def mappings() -> tuple:
        p.expect("(")
        ts: list[tuple] = []
        if p.v != ")":
            while True:
                p.expect("[")
                dims: list[tuple[int, ...]] = []
                if p.v != "]":
                    while True:
                        if p.k == BARE:
                            dims.append(tuple(_factor_indices(p, p.bare())))
                        else:
                            dims.append(())
                        if not p.accept(","):
                            break
                p.expect("]")
                ts.append(tuple(dims))
                if not p.accept(","):
                    break
        p.expect(")")
        return tuple(ts)

    operands = mappings()
    p.expect("->")
    results = mappings()
    sizes: list[int] = []
    if p.v == "{":
        p._advance()
        if p.v != "}":
            while True:
                off = p.start
                idx = _factor_indices(p, p.bare())
                if len(idx) != 1:
                    p.error("expecting single factor symbol", off, found=False)
                if idx[0] != len(sizes):
                    p.error(f"expecting factor indices to be ordered like an iota ([0,1,2,...], "
                            f"e.g. {{i=#, j=#, ...}}). Expecting factor index symbol "
                            f"'{factor_symbol(len(sizes))}', received: "
                            f"'{factor_symbol(idx[0])}'", off, found=False)
                p.expect("=")
                sizes.append(p.integer())
                if not p.accept(","):
                    break
        p.expect("}")
    groups: list[tuple[str, tuple[int, ...]]] = []
    while p.k == BARE and p.v in _FACTOR_GROUPS:
        name = p.bare()
        p.expect("=")
        p.expect("{")
        fs: list[int] = []
        if p.v != "}":
            while True:
                fs.extend(_factor_indices(p, p.bare()))
                if not p.accept(","):
                    break
        p.expect("}")
        groups.append((name, tuple(fs)))
    custom = False
    if p.accept(","):
        if p.v != "custom":
            p.error("expected 'custom'")
        p._advance()
        custom = True
    p.expect(">")
    return OpShardingRule(operands, results, tuple(sizes), tuple(groups), custom)


# --- parsing ----------------------------------------------------------------------------------


def parse_axis_ref(p: Parser) -> AxisRef:
    """`"x"` or `"x":(pre)size`."""
    name = p.string()
    if p.v == ":" and p.text.startswith("(", p.pos):
        p._advance()
        p.expect("(")
        pre = p.integer()
        p.expect(")")
        size = p.integer()
        return AxisRef(name, pre, size)
    return AxisRef(name)


def parse_axis_refs(p: Parser, close: str = "}") -> tuple[AxisRef, ...]:
    """Axis refs up to (not including) ``close``."""
    axes: list[AxisRef] = []
    if p.v != close:
        while True:
            axes.append(parse_axis_ref(p))
            if not p.accept(","):
                break
    return tuple(axes)


def parse_axis_names(p: Parser) -> tuple[str, ...]:
    """`{"x", "y"}` (manual axes)."""
    p.expect("{")
    names: list[str] = []
    if p.v != "}":
        while True:
            names.append(p.string())
            if not p.accept(","):
                break
    p.expect("}")
    return tuple(names)


def parse_dim_sharding(p: Parser) -> DimSharding:
    p.expect("{")
    axes: list[AxisRef] = []
    closed = True
    while not p.accept("}"):
        if axes:
            p.expect(",")
        if p.accept("?"):
            closed = False
            p.expect("}")
            break
        axes.append(parse_axis_ref(p))
    priority = None
    if p.k == BARE:
        word = p.v
        num = word[1:]
        if len(word) < 2 or word[0] != "p" or not num.isdigit():
            p.error(f"expecting priority in format 'p<number>', got: {word}", found=False)
        if num.startswith("0") and len(num) > 1:
            p.error(f"priorities with leading zeros are not allowed, got: {word}", found=False)
        p._advance()
        priority = int(num)
    return DimSharding(tuple(axes), closed, priority)


def parse_mesh_body(p: Parser) -> Mesh:
    """`<["x"=2, ...], device_ids=[...]>`."""
    p.expect("<")
    p.expect("[")
    axes: list[MeshAxis] = []
    if p.v != "]":
        while True:
            name = p.string()
            p.expect("=")
            axes.append(MeshAxis(name, p.integer()))
            if not p.accept(","):
                break
    p.expect("]")
    ids: list[int] = []
    if p.accept(","):
        if p.v != "device_ids":
            p.error("expected 'device_ids'")
        p._advance()
        p.expect("=")
        p.expect("[")
        if p.v != "]":
            while True:
                ids.append(p.integer())
                if not p.accept(","):
                    break
        p.expect("]")
    p.expect(">")
    return Mesh(tuple(axes), tuple(ids))


def parse_sharding_body(p: Parser) -> TensorSharding:
    """`<@mesh, [{...}, ...], replicated={...}, unreduced={...}>` (also an inline `mesh<...>`)."""
    p.expect("<")
    mesh: MeshOrRef
    if p.k == AT:
        mesh = p.symbol_name()
    elif p.k == BARE and p.v == "mesh":
        p._advance()
        mesh = parse_mesh_body(p)
    else:
        p.error("expecting MeshAttr or FlatSymbolRefAttr")
    p.expect(",")
    p.expect("[")
    dims: list[DimSharding] = []
    if p.v != "]":
        while True:
            dims.append(parse_dim_sharding(p))
            if not p.accept(","):
                break
    p.expect("]")
    replicated: tuple[AxisRef, ...] = ()
    unreduced: tuple[AxisRef, ...] = ()
    reduction = "sum"
    while p.accept(","):
        if not replicated and p.v == "replicated" and p.k == BARE:
            p._advance()
            p.expect("=")
            p.expect("{")
            replicated = parse_axis_refs(p)
            p.expect("}")
        elif not unreduced and p.v == "unreduced" and p.k == BARE:
            p._advance()
            p.expect("=")
            if p.k == BARE and p.v in REDUCTION_OPS:
                reduction = p.bare()
            p.expect("{")
            unreduced = parse_axis_refs(p)
            p.expect("}")
        else:
            p.error("failed to parse Sdy_TensorSharding, expected valid named axis list after "
                    "comma")
    p.expect(">")
    return TensorSharding(mesh, tuple(dims), replicated, unreduced, reduction)


def parse_stripped_per_value(p: Parser) -> ShardingPerValue:
    """`[<@mesh, ...>, ...]`."""
    p.expect("[")
    items: list[TensorSharding] = []
    if p.v != "]":
        while True:
            items.append(parse_sharding_body(p))
            if not p.accept(","):
                break
    p.expect("]")
    return ShardingPerValue(tuple(items))


def parse_list_of_axis_lists(p: Parser) -> tuple[tuple[AxisRef, ...], ...]:
    """`[{"x"}, {}, {"y", "z"}]`."""
    p.expect("[")
    out: list[tuple[AxisRef, ...]] = []
    if p.v != "]":
        while True:
            p.expect("{")
            out.append(parse_axis_refs(p))
            p.expect("}")
            if not p.accept(","):
                break
    p.expect("]")
    return tuple(out)


def parse_all_to_all_params(p: Parser) -> tuple[tuple[tuple[AxisRef, ...], int, int], ...]:
    """`[{"x"}: 0->2, {"y"}: 1->3]`."""
    p.expect("[")
    out: list[tuple[tuple[AxisRef, ...], int, int]] = []
    if p.v != "]":
        while True:
            p.expect("{")
            axes = parse_axis_refs(p)
            p.expect("}")
            p.expect(":")
            src = p.integer()
            p.expect("->")
            out.append((axes, src, p.integer()))
            if not p.accept(","):
                break
    p.expect("]")
    return tuple(out)


_LIST_KINDS = {"manual_axes", "axis_ref_list", "list_of_axis_ref_lists", "all_to_all_param_list"}


def parse_axis_list(p: Parser, kind: str) -> AxisList:
    """The body of an `#sdy<KIND ...>` list attribute (after KIND)."""
    if kind == "manual_axes":
        return AxisList(kind, parse_axis_names(p))
    if kind == "axis_ref_list":
        p.expect("{")
        axes = parse_axis_refs(p)
        p.expect("}")
        return AxisList(kind, axes)
    if kind == "list_of_axis_ref_lists":
        return AxisList(kind, parse_list_of_axis_lists(p))
    return AxisList(kind, parse_all_to_all_params(p))


def parse_sdy_attribute(p: Parser, name: str) -> Any:
    """An `#sdy...` attribute at the current token (`name` is the token without `#`); the
    hook :mod:`shlo.syntax.parse_attributes` calls (registered by :mod:`shlo.ops.sdy`)."""
    if name == "sdy":
        p._advance()
        p.expect("<")
        if p.k != BARE:
            p.error("expected an sdy attribute mnemonic")
        kind = p.bare()
        if kind in _LIST_KINDS:
            a: Any = parse_axis_list(p, kind)
        elif kind == "propagation_direction":
            if p.k != BARE or p.v not in PROPAGATION_DIRECTIONS:
                p.error("expected propagation_direction to be one of: "
                        + ", ".join(PROPAGATION_DIRECTIONS))
            a = SdyEnum(kind, p.bare())
        elif kind in ("reduction_op", "edge_node_type"):
            a = SdyEnum(kind, p.bare())
        else:
            p.error(f"unknown sdy attribute '{kind}'", found=False)
        p.expect(">")
        return a
    mnemonic = name[4:]
    if mnemonic == "sharding":
        p._advance()
        return parse_sharding_body(p)
    if mnemonic == "sharding_per_value":
        p._advance()
        p.expect("<")
        v = parse_stripped_per_value(p)
        p.expect(">")
        return v
    if mnemonic == "mesh":
        p._advance()
        return parse_mesh_body(p)
    if mnemonic == "op_sharding_rule":
        p._advance()
        return _parse_rule(p)
    if mnemonic in ("axis_ref", "dimension_sharding", "mesh_axis"):
        p._advance()
        p.expect("<")
        if mnemonic == "axis_ref":
            r: Any = parse_axis_ref(p)
        elif mnemonic == "mesh_axis":
            n = p.string()
            p.expect("=")
            r = MeshAxis(n, p.integer())
        else:
            r = parse_dim_sharding(p)
        p.expect(">")
        return r
    return OpaqueAttr(p._capture_opaque())


DIALECT_ATTRIBUTE_HOOKS["sdy"] = parse_sdy_attribute
