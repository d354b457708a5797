"""The IR: plain data mirroring MLIR's structure (spec section "Programs").

A :class:`Module` wraps a `builtin.module` :class:`Operation`. Functions are `func.func`
operations whose inherent attributes are `sym_name` (StringAttr), `function_type`
(TypeAttr of FunctionType), and optionally `sym_visibility`, `arg_attrs`, `res_attrs`.
Every op keeps its inherent attributes in ``properties`` (printed as `<{...}>` in generic form)
and its discardable ones in ``attributes`` (printed as `{...}`); :meth:`Operation.attr` looks in
both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

from .spelling import escape_string
from .types import FunctionType, Type

__all__ = [
    "Location", "FileLineColLoc", "NameLoc", "CallSiteLoc", "FusedLoc", "UnknownLoc", "OpaqueLoc",
    "Value", "Operation", "Block", "Region", "Module", "UNKNOWN_LOC", "format_location",
]


# --- locations ----------------------------------------------------------------------------------


class Location:
    """Base of source locations (MLIR `loc(...)`)."""

    __slots__ = ()

    def file_line_col(self) -> tuple[str, int, int] | None:
        """The first concrete `file:line:col` this location points to, if any."""
        return None

    def mlir(self) -> str:
        """This location in MLIR syntax, `loc(...)` (:func:`format_location`)."""
        return format_location(self)


@dataclass(frozen=True, slots=True)
class UnknownLoc(Location):
    def __str__(self) -> str:
        return "loc(unknown)"


UNKNOWN_LOC = UnknownLoc()


@dataclass(frozen=True, slots=True)
class FileLineColLoc(Location):
    """`"file":line:col`, optionally a range `to line:col` / `to :col` (kept verbatim in end)."""

    file: str
    line: int
    col: int
    end_line: int | None = None
    end_col: int | None = None

    def file_line_col(self) -> tuple[str, int, int]:
        return (self.file, self.line, self.col)


@dataclass(frozen=True, slots=True)
class NameLoc(Location):
    """`"name"` or `"name"(child)`."""

    name: str
    child: Location | None = None

    def file_line_col(self) -> tuple[str, int, int] | None:
        return self.child.file_line_col() if self.child else None


@dataclass(frozen=True, slots=True)
class CallSiteLoc(Location):
    """`callsite(callee at caller)`."""

    callee: Location
    caller: Location

    def file_line_col(self) -> tuple[str, int, int] | None:
        return self.callee.file_line_col() or self.caller.file_line_col()


@dataclass(frozen=True, slots=True)
class FusedLoc(Location):
    """`fused[a, b]` or `fused<metadata>[a, b]`."""

    locations: tuple[Location, ...]
    metadata: Any = None

    def file_line_col(self) -> tuple[str, int, int] | None:
        for loc in self.locations:
            flc = loc.file_line_col()
            if flc:
                return flc
        return None


@dataclass(frozen=True, slots=True)
class OpaqueLoc(Location):
    """Any other location syntax, kept verbatim (the text inside `loc(...)`)."""

    text: str


def format_location(loc: Location) -> str:
    """The MLIR text of a location: `loc("file":1:2)`, `loc("name"(...))`, `loc(fused[...])`.
    (:func:`shlo.errors.format_location` is the `file:line:col` prefix of a diagnostic.)"""
    return f"loc({_loc_inner(loc)})"


def _loc_inner(loc: Location) -> str:
    if isinstance(loc, FileLineColLoc):
        s = f"{escape_string(loc.file)}:{loc.line}:{loc.col}"
        if loc.end_line is not None or loc.end_col is not None:
            s += " to "
            if loc.end_line is not None:
                s += str(loc.end_line)
            if loc.end_col is not None:
                s += f":{loc.end_col}"
        return s
    if isinstance(loc, NameLoc):
        s = escape_string(loc.name)
        if loc.child is not None:
            s += f"({_loc_inner(loc.child)})"
        return s
    if isinstance(loc, CallSiteLoc):
        return f"callsite({_loc_inner(loc.callee)} at {_loc_inner(loc.caller)})"
    if isinstance(loc, FusedLoc):
        # the metadata is an attribute (shlo.attributes, beside this module): it prints itself
        meta = f"<{loc.metadata.mlir()}>" if loc.metadata is not None else ""
        return f"fused{meta}[" + ", ".join(_loc_inner(x) for x in loc.locations) + "]"
    if isinstance(loc, OpaqueLoc):
        return loc.text
    return "unknown"


# --- values, operations, blocks, regions -------------------------------------------------------


class Value:
    """An SSA value: the ``index``-th result of an Operation or argument of a Block."""

    __slots__ = ("type", "owner", "index", "name")

    def __init__(self, type: Type, owner: "Operation | Block | None" = None, index: int = 0,
                 name: str | None = None) -> None:
        self.type = type
        self.owner = owner
        self.index = index
        self.name = name  # name hint from the source text (without `%`), used by the printer

    def __repr__(self) -> str:
        return f"<Value %{self.name} : {self.type}>"


class Operation:
    """One op: name, operands, results, inherent properties, discardable attributes, regions."""

    __slots__ = ("name", "operands", "results", "properties", "attributes", "regions",
                 "successors", "location", "parent", "attr_locations")

    def __init__(self, name: str, operands: list[Value] | None = None,
                 result_types: list[Type] | None = None,
                 properties: dict[str, Any] | None = None,
                 attributes: dict[str, Any] | None = None,
                 regions: list["Region"] | None = None,
                 successors: list["Block"] | None = None,
                 location: Location = UNKNOWN_LOC) -> None:
        self.name = name
        self.operands: list[Value] = list(operands or [])
        self.results: list[Value] = [Value(t, self, i) for i, t in enumerate(result_types or [])]
        self.properties: dict[str, Any] = dict(properties or {})
        self.attributes: dict[str, Any] = dict(attributes or {})
        self.regions: list[Region] = list(regions or [])
        for r in self.regions:
            r.parent = self
        self.successors: list[Block] = list(successors or [])
        self.location = location
        self.parent: Block | None = None
        # Where each attribute of a generic op's `<{...}>` and `{...}` was written (name ->
        # location), kept by the parser so that verifiers can report an error on the attribute's
        # own line as MLIR does; None when unknown (pretty forms, ops built in code). Read it with
        # `attr_location` (the fast paths that build ops with __new__ leave it unset).
        self.attr_locations: dict[str, Location] | None = None

    # Attribute access: inherent first, then discardable.
    def attr(self, name: str, default: Any = None) -> Any:
        if name in self.properties:
            return self.properties[name]
        return self.attributes.get(name, default)

    def attr_location(self, name: str) -> Location:
        """Where attribute ``name`` was written, or the op's location when that is unknown."""
        locs = getattr(self, "attr_locations", None)
        return locs.get(name, self.location) if locs else self.location

    def has_attr(self, name: str) -> bool:
        return name in self.properties or name in self.attributes

    @property
    def result(self) -> Value:
        """The single result (asserts there is exactly one)."""
        assert len(self.results) == 1, f"{self.name} has {len(self.results)} results"
        return self.results[0]

    @property
    def operand_types(self) -> list[Type]:
        return [v.type for v in self.operands]

    @property
    def result_types(self) -> list[Type]:
        return [v.type for v in self.results]

    @property
    def dialect(self) -> str:
        return self.name.split(".", 1)[0]

    def walk(self) -> Iterator["Operation"]:
        """This op and every op nested in its regions, pre-order, without recursion."""
        stack: list[Operation] = [self]
        while stack:
            op = stack.pop()
            yield op
            for region in reversed(op.regions):
                for block in reversed(region.blocks):
                    stack.extend(reversed(block.operations))

    def __repr__(self) -> str:
        return f"<Operation {self.name} at {self.location}>"


class Block:
    """A block: arguments and a list of operations (the last one is the terminator)."""

    __slots__ = ("arguments", "operations", "parent", "label")

    def __init__(self, arg_types: list[Type] | None = None,
                 operations: list[Operation] | None = None, label: str | None = None) -> None:
        self.arguments: list[Value] = [Value(t, self, i) for i, t in enumerate(arg_types or [])]
        self.operations: list[Operation] = []
        self.parent: Region | None = None
        self.label = label  # `bb0` etc. from the source, for the printer
        for op in operations or []:
            self.append(op)

    def append(self, op: Operation) -> Operation:
        op.parent = self
        self.operations.append(op)
        return op

    def add_argument(self, type: Type, name: str | None = None) -> Value:
        v = Value(type, self, len(self.arguments), name)
        self.arguments.append(v)
        return v

    @property
    def terminator(self) -> Operation | None:
        return self.operations[-1] if self.operations else None


class Region:
    """A region: a list of blocks (StableHLO regions have exactly one)."""

    __slots__ = ("blocks", "parent")

    def __init__(self, blocks: list[Block] | None = None) -> None:
        self.blocks: list[Block] = []
        self.parent: Operation | None = None
        for b in blocks or []:
            self.append(b)

    def append(self, block: Block) -> Block:
        block.parent = self
        self.blocks.append(block)
        return block

    @property
    def block(self) -> Block:
        """The entry block."""
        return self.blocks[0]


@dataclass
class Module:
    """A parsed program: the `builtin.module` op plus what the source defined around it.

    ``aliases`` keeps top-level alias definitions (`#loc0 = loc(...)`, `!t = type`,
    `#a = attr`) in source order so that printing can reproduce them; ``filename`` is used in
    diagnostics.
    """

    op: Operation
    filename: str | None = None
    aliases: dict[str, Any] = field(default_factory=dict)

    @property
    def body(self) -> Block:
        return self.op.regions[0].blocks[0]

    @property
    def name(self) -> str | None:
        a = self.op.attr("sym_name")
        return a.value if a is not None else None

    @property
    def functions(self) -> dict[str, Operation]:
        """`func.func` ops by symbol name (without `@`)."""
        out: dict[str, Operation] = {}
        for op in self.body.operations:
            if op.name == "func.func":
                out[op.attr("sym_name").value] = op
        return out

    def function(self, name: str) -> Operation:
        try:
            return self.functions[name]
        except KeyError:
            raise KeyError(f"no function @{name} in module") from None

    def walk(self) -> Iterator[Operation]:
        return self.op.walk()


def function_type(func: Operation) -> FunctionType:
    """The FunctionType of a `func.func` op."""
    return func.attr("function_type").type


def function_body(func: Operation) -> Block:
    """The entry block of a `func.func` op."""
    return func.regions[0].blocks[0]
