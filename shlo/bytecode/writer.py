"""The MLIR bytecode writer: shlo IR -> bytecode of a chosen version (0 to 6), laid out as
MLIR's `BytecodeWriter` lays it out, so that the same IR gives the same bytes.

Numbering follows MLIR's `IRNumbering`: ops, attributes and types are numbered in the order the
IR is walked (regions from a last-in-first-out worklist, an attribute's nested attributes and
types right after it, in the order its encoding writes them), then sorted by use count and
grouped by dialect within each range of indices that encode in the same number of bytes.
Regions of an op whose regions use no value from outside (or whose op is isolated from above
by definition) are isolated: their values are numbered from zero and, from version 2, they are
written in a nested section.
"""

from __future__ import annotations

from typing import Any

from .._gc import paused_gc
from ..attributes import DictAttr, FloatAttr, IntegerAttr, OpaqueAttr, StringAttr
from ..ir import (
    Block, FileLineColLoc, Location, Module, Operation, Region, UNKNOWN_LOC, UnknownLoc, Value,
)
from ..types import OpaqueType, Type, element_type
from . import dialects
from .encoding import (
    ATTR_TYPE, ATTR_TYPE_OFFSET, DIALECT, DIALECT_VERSIONING, ELIDE_UNKNOWN_BLOCK_ARG_LOCATION,
    HAS_ATTRS, HAS_INLINE_REGIONS, HAS_OPERANDS, HAS_PROPERTIES, HAS_RESULTS, HAS_SUCCESSORS,
    HAS_USE_LIST_ORDERS, IR, LAZY_LOADING, MAGIC, MAX_VERSION, NATIVE_PROPERTIES, PROPERTIES, RESOURCE,
    RESOURCE_OFFSET, STRING, USE_LIST_ORDERING, Emitter, WriteError, 
)

from .vhlo.attrs import VhloAttr
from .vhlo.types import VhloType

__all__ = ["write_bytecode", "WriteError"]

_I64 = element_type("i64")
_F64 = element_type("f64")
_TRAIT_ISOLATED = frozenset({"builtin.module", "func.func"})


class _Entry:
    __slots__ = ("value", "dialect", "refcount", "number", "custom", "is_attr")

    def __init__(self, value: Any, dialect: "_Dialect", is_attr: bool) -> None:
        self.value = value
        self.dialect = dialect
        self.refcount = 1
        self.number = -1
        self.custom = False
        self.is_attr = is_attr


class _Dialect:
    __slots__ = ("name", "number", "codec")

    def __init__(self, name: str, number: int, codec: Any) -> None:
        self.name = name
        self.number = number
        self.codec = codec


def _norm_attr(a: Any) -> Any:
    t = type(a)
    if t is IntegerAttr and a.type is None:
        return IntegerAttr(a.value, _I64)
    if t is FloatAttr and a.type is None:
        return FloatAttr(a.value, _F64)
    return a


def attr_dialect(a: Any) -> str:
    """The dialect an attribute belongs to."""
    if isinstance(a, VhloAttr):
        return "vhlo"
    if isinstance(a, OpaqueAttr):
        return _text_dialect(a.text, "#")
    name = type(a).__name__
    if name == "EnumAttr":
        return a.dialect
    if name == "StructAttr":
        return a.name.split(".", 1)[0] if a.name else "builtin"
    if name == "ConvDimensionNumbers":
        return "stablehlo"
    return "builtin"


def type_dialect(t: Any) -> str:
    if isinstance(t, VhloType):
        return "vhlo"
    if isinstance(t, OpaqueType):
        if t.text == "none" or t.text.startswith(("memref<", "vector<", "f80", "f128")):
            return "builtin"
        return _text_dialect(t.text, "!")
    name = type(t).__name__
    if name in ("TokenType",):
        return "stablehlo"
    if name == "QuantizedType":
        return "quant"
    return "builtin"


def _text_dialect(text: str, sigil: str) -> str:
    s = text.lstrip()
    if s.startswith(sigil):
        s = s[1:]
        end = 0
        while end < len(s) and (s[end].isalnum() or s[end] == "_"):
            end += 1
        return s[:end] or "builtin"
    if s.startswith(("affine_map", "affine_set", "strided")):
        return "builtin"
    return "builtin"


class _Numbering:
    """MLIR's IRNumberingState for one root op."""

    def __init__(self, root: Operation, version: int) -> None:
        self.version = version
        self._codec = dialects.codec
        self.dialects: dict[str, _Dialect] = {}
        self.attrs: dict[Any, _Entry] = {}
        self.types: dict[Any, _Entry] = {}
        self.ordered_attrs: list[_Entry] = []
        self.ordered_types: list[_Entry] = []
        self.op_names: dict[tuple[str, bool], _Entry] = {}
        self.ordered_op_names: list[_Entry] = []
        self.value_ids: dict[int, int] = {}
        self.attr_dicts: dict[int, DictAttr] = {}  # op id -> its attribute dictionary
        self.op_props: dict[int, dict[str, Any]] = {}  # op id -> its inherent attributes
        self.block_ids: dict[int, int] = {}
        self.block_op_counts: dict[int, int] = {}
        self.region_counts: dict[int, tuple[int, int]] = {}
        self.isolated: dict[int, bool] = {}
        # the entry of each attribute/type object seen (by identity: the IR shares its
        # attribute and type objects, and hashing a nested one costs a walk of it); the object
        # is kept with its entry, so that its id is not reused meanwhile
        self.attr_ids: dict[int, tuple[Any, _Entry]] = {}
        self.type_ids: dict[int, tuple[Any, _Entry]] = {}
        self.file_attrs: dict[str, StringAttr] = {}
        # op name -> (writes only properties when all its attributes are inherent, the
        # names of its properties, their layout)
        self.op_info: dict[str, tuple] = {}
        self._compute_isolation(root)
        self.next_value = 0
        self._op(root)
        work: list[tuple[Region, int]] = []
        self._push_regions(root, work)
        while work:
            region, self.next_value = work.pop()
            self._region(region)
            for b in region.blocks:
                for op in b.operations:
                    self._push_regions(op, work)
        key = _refcount_key
        self.ordered_attrs.sort(key=key)
        self.ordered_op_names.sort(key=key)
        self.ordered_types.sort(key=key)
        _group_by_dialect_per_byte(self.ordered_attrs)
        _group_by_dialect_per_byte(self.ordered_op_names)
        _group_by_dialect_per_byte(self.ordered_types)

    # --- isolation ----------------------------------------------------------------------------

    def _compute_isolation(self, root: Operation) -> None:
        """An op with regions is isolated unless something inside uses a value defined
        outside it (ops isolated by definition always are)."""
        iso = self.isolated
        owner: dict[int, Operation] = {}  # id(region) -> op
        stack: list[tuple[Operation, int]] = [(root, 0)]
        depth_of: dict[int, int] = {}
        chain: list[Operation] = []
        # iterative pre-order walk keeping the chain of enclosing ops
        todo: list[Any] = [root]
        while todo:
            item = todo.pop()
            if item is None:
                chain.pop()
                continue
            op = item
            if chain:
                parent_region = op.parent.parent if op.parent is not None else None
                for v in op.operands:
                    r = _defining_region(v)
                    if r is parent_region or r is None:
                        continue
                    container = owner.get(id(r))
                    stop = depth_of.get(id(container), -1) if container is not None else -1
                    for k in range(len(chain) - 1, stop, -1):
                        c = chain[k]
                        if c.name in _TRAIT_ISOLATED:
                            break
                        iso[id(c)] = False
            if op.regions:
                if id(op) not in iso:
                    iso[id(op)] = True
                for r in op.regions:
                    owner[id(r)] = op
                depth_of[id(op)] = len(chain)
                chain.append(op)
                todo.append(None)
                for r in reversed(op.regions):
                    for b in reversed(r.blocks):
                        todo.extend(reversed(b.operations))
        del stack

    def is_isolated(self, op: Operation) -> bool:
        return op.name in _TRAIT_ISOLATED or self.isolated.get(id(op), True)

    # --- walking --------------------------------------------------------------------------------

    def _push_regions(self, op: Operation, work: list) -> None:
        if not op.regions:
            return
        first = 0 if self.is_isolated(op) else self.next_value
        for r in op.regions:
            work.append((r, first))

    def _region(self, region: Region) -> None:
        if not region.blocks:
            return
        first = self.next_value
        for i, b in enumerate(region.blocks):
            self.block_ids[id(b)] = i
            self._block(b)
        self.region_counts[id(region)] = (len(region.blocks), self.next_value - first)

    def _block(self, block: Block) -> None:
        for a in block.arguments:
            self.value_ids[id(a)] = self.next_value
            self.next_value += 1
            self.attr(_arg_loc(a))
            self.type(a.type)
        n = 0
        for op in block.operations:
            self._op(op)
            n += 1
        self.block_op_counts[id(block)] = n

    def _op(self, op: Operation) -> None:
        registered = dialects.is_registered(op.name)
        self.op_name(op.name, registered)
        for r in op.results:
            self.value_ids[id(r)] = self.next_value
            self.next_value += 1
            self.type(r.type)
        info = self.op_info.get(op.name)
        if info is None:
            layout = dialects.property_layout(op.name) if registered else None
            info = self.op_info[op.name] = (
                registered and bool(layout),
                frozenset(n for n, _ in layout or ()), layout)
        props = op.properties
        if info[0] and not op.attributes and self.version >= NATIVE_PROPERTIES and \
                info[1].issuperset(props):
            # the usual case: properties only, all inherent (what split + attr_dict +
            # property_refs come to, without their copies)
            self.op_props[id(op)] = props
            for n, _ in info[2]:
                if n in props:
                    self.attr(props[n])
        else:
            props, disc = dialects.split(op)  # (not copies: read only)
            d = attr_dict(op, self.version, props, disc)
            if d is not None:
                self.attr(d)
                self.attr_dicts[id(op)] = d
            if self.version >= NATIVE_PROPERTIES:
                self.op_props[id(op)] = props
                for a in dialects.property_refs(op, registered, props):
                    self.attr(a)
        self.location(op.location if op.location is not None else UNKNOWN_LOC)

    def location(self, a: Any) -> None:
        """:meth:`attr` of an op's location, `"file":line:col` (one per op) made short."""
        if type(a) is not FileLineColLoc:
            self.attr(a)
            return
        e = self.attrs.get(a)
        if e is not None:
            e.refcount += 1
            return
        e = _Entry(a, self.dialect("builtin"), True)
        self.attrs[a] = e
        self.attr_ids[id(a)] = (a, e)
        self.ordered_attrs.append(e)
        codec = e.dialect.codec
        if codec is not None and _can_encode(codec, a, True):
            e.custom = True
            f = self.file_attrs.get(a.file)
            if f is None:
                f = self.file_attrs[a.file] = StringAttr(a.file)
            self.attr(f)

    def op_name(self, name: str, registered: bool) -> None:
        key = (name, registered)
        e = self.op_names.get(key)
        if e is not None:
            e.refcount += 1
            return
        e = _Entry(key, self.dialect(name.split(".", 1)[0]), False)
        self.op_names[key] = e
        self.ordered_op_names.append(e)

    def dialect(self, name: str) -> _Dialect:
        d = self.dialects.get(name)
        if d is None:
            d = self.dialects[name] = _Dialect(name, len(self.dialects), self._codec(name))
        return d

    def attr(self, a: Any) -> None:
        hit = self.attr_ids.get(id(a))
        if hit is not None and hit[0] is a:
            hit[1].refcount += 1
            return
        orig = a
        a = _norm_attr(a)
        e = self.attrs.get(a)
        if e is not None:
            e.refcount += 1
            self.attr_ids[id(orig)] = (orig, e)
            return
        e = _Entry(a, self.dialect(attr_dialect(a)), True)
        self.attrs[a] = e
        self.attr_ids[id(orig)] = (orig, e)
        self.ordered_attrs.append(e)
        codec = e.dialect.codec
        if codec is not None and _can_encode(codec, a, True):
            e.custom = True
            for x in codec.attr_refs(a):
                if isinstance(x, Type):
                    self.type(x)
                else:
                    self.attr(x)

    def type(self, t: Any) -> None:
        hit = self.type_ids.get(id(t))
        if hit is not None and hit[0] is t:
            hit[1].refcount += 1
            return
        e = self.types.get(t)
        if e is not None:
            e.refcount += 1
            self.type_ids[id(t)] = (t, e)
            return
        e = _Entry(t, self.dialect(type_dialect(t)), False)
        self.types[t] = e
        self.type_ids[id(t)] = (t, e)
        self.ordered_types.append(e)
        codec = e.dialect.codec
        if codec is not None and _can_encode(codec, t, False):
            e.custom = True
            for x in codec.type_refs(t):
                if isinstance(x, Type):
                    self.type(x)
                else:
                    self.attr(x)


def _can_encode(codec: Any, x: Any, is_attr: bool) -> bool:
    """Whether the dialect's codec has a custom encoding for ``x``."""
    return bool(codec.can_write_attr(x) if is_attr else codec.can_write_type(x))


def _refcount_key(e: _Entry) -> int:
    return -e.refcount


def _group_by_dialect_per_byte(entries: list[_Entry]) -> None:
    """MLIR's `groupByDialectPerByte`, then number the entries by position."""
    if entries:
        first = 0
        in_group = 0
        start = 0
        n = len(entries)
        for i in range(1, 9):
            in_group = (1 << (7 * i)) - in_group
            end = min(n, start + in_group)
            sub = entries[start:end]
            f = first
            sub.sort(key=lambda e: (e.dialect.number != f, e.dialect.number))
            entries[start:end] = sub
            first = sub[-1].dialect.number
            start = end
            if start >= n:
                break
    for i, e in enumerate(entries):
        e.number = i


def _arg_loc(v: Value) -> Location:
    loc = getattr(v, "location", None)
    return loc if isinstance(loc, Location) else UNKNOWN_LOC


def _defining_region(v: Value) -> Region | None:
    owner = v.owner
    if isinstance(owner, Block):
        return owner.parent
    if isinstance(owner, Operation):
        b = owner.parent
        return b.parent if b is not None else None
    return None


def attr_dict(op: Operation, version: int, props: dict[str, Any] | None = None,
              items: dict[str, Any] | None = None) -> DictAttr | None:
    """The attribute dictionary the op writes: its discardable attributes (version >= 5),
    or all its attributes (older versions), sorted by name; None when empty. (``props``,
    ``items``: the op's :func:`dialects.split`, when made already.)"""
    if props is None or items is None:
        props, items = dialects.split(op)  # (not copies: read only)
    if version < NATIVE_PROPERTIES or not dialects.has_properties(op):
        items = {**items, **props}
    if not items:
        return None
    return DictAttr(tuple(sorted(items.items(), key=lambda kv: kv[0])))


# --- emission -------------------------------------------------------------------------------------


class _Writer:
    def __init__(self, root: Operation, version: int, producer: str,
                 rewritten: list[Operation] | None = None, trace: Any = None) -> None:
        from .uselists import simulate

        self.trace = trace
        self.version = version
        self.producer = producer
        self.n = _Numbering(root, version)
        self.orders = simulate(root, rewritten or []) if version >= USE_LIST_ORDERING else {}
        self.op_ids = {id(op): i for i, op in enumerate(root.walk())} if self.orders else {}
        self.strings: dict[str, int] = {}
        self.props: list[bytes] = []
        self.props_index: dict[bytes, int] = {}
        self.props_memo: dict[tuple, int] = {}
        self.root = root

    # services used by the dialect codecs
    def attr_index(self, a: Any) -> int:
        hit = self.n.attr_ids.get(id(a))
        if hit is not None and hit[0] is a:
            return hit[1].number
        e = self.n.attrs.get(_norm_attr(a))
        if e is None:
            raise WriteError(f"attribute {a!r} was not numbered")
        return e.number

    def type_index(self, t: Any) -> int:
        hit = self.n.type_ids.get(id(t))
        if hit is not None and hit[0] is t:
            return hit[1].number
        e = self.n.types.get(t)
        if e is None:
            raise WriteError(f"type {t!r} was not numbered")
        return e.number

    def string_index(self, s: str) -> int:
        i = self.strings.get(s)
        if i is None:
            i = self.strings[s] = len(self.strings)
        return i

    def blob(self, e: Emitter, data: bytes) -> None:
        e.varint(len(data))
        e.raw(data)

    # sections
    def write(self) -> bytes:
        if not 0 <= self.version <= MAX_VERSION:
            raise WriteError(f"unsupported version requested {self.version}, must be in range "
                             f"[0, {MAX_VERSION}]")
        out = Emitter()
        out.raw(MAGIC)
        out.varint(self.version)
        out.cstring(self.producer)
        self._dialect_section(out)
        self._attr_type_sections(out)
        ir = Emitter()
        ir.varint_flag(1, False)
        self._op(ir, self.root)
        out.section(IR, ir)
        self._resource_sections(out)
        strings = Emitter()
        strings.varint(len(self.strings))
        keys = list(self.strings)
        for s in reversed(keys):
            strings.varint(len(s.encode("utf-8", "surrogateescape")) + 1)
        for s in keys:
            strings.cstring(s.encode("utf-8", "surrogateescape"))
        out.section(STRING, strings)
        if self.version >= NATIVE_PROPERTIES:
            p = Emitter()
            p.varint(len(self.props))
            for data in self.props:
                p.raw(data)
            out.section(PROPERTIES, p)
        elif self.props:
            raise WriteError("unexpected properties emitted incompatible with bytecode <5")
        return bytes(out.out)

    def _dialect_section(self, out: Emitter) -> None:
        e = Emitter()
        dialects = list(self.n.dialects.values())
        e.varint(len(dialects))
        for d in dialects:
            sid = self.string_index(d.name)
            if self.version < DIALECT_VERSIONING:
                e.varint(sid)
            else:
                e.varint_flag(sid, False)
        names = self.n.ordered_op_names
        if self.version >= ELIDE_UNKNOWN_BLOCK_ARG_LOCATION:
            e.varint(len(names))

        def emit(entry: _Entry) -> None:
            name, registered = entry.value
            sid = self.string_index(name.split(".", 1)[1])
            if self.version < NATIVE_PROPERTIES:
                e.varint(sid)
            else:
                e.varint_flag(sid, registered)

        _grouped(e, names, emit)
        out.section(DIALECT, e)

    def _attr_type_sections(self, out: Emitter) -> None:
        data = Emitter()
        offsets = Emitter()
        offsets.varint(len(self.n.ordered_attrs))
        offsets.varint(len(self.n.ordered_types))
        prev = [0]

        def emit(entry: _Entry) -> None:
            custom = False
            codec = entry.dialect.codec
            if entry.custom and codec is not None:
                ok = codec.write_attr(self, data, entry.value) if entry.is_attr else \
                    codec.write_type(self, data, entry.value)
                custom = bool(ok)
                if self.trace is not None and entry.dialect.name == "vhlo":
                    self.trace.write(f"Called: write(mlir::vhlo::{_trace_name(entry)}, "
                                     "mlir::DialectBytecodeWriter &) const\n")
            if not custom:
                data.cstring(_text(entry.value, entry.is_attr))
            cur = len(data)
            offsets.varint_flag(cur - prev[0], custom)
            prev[0] = cur

        _grouped(offsets, self.n.ordered_attrs, emit)
        _grouped(offsets, self.n.ordered_types, emit)
        out.section(ATTR_TYPE_OFFSET, offsets)
        out.section(ATTR_TYPE, data)

    def _resource_sections(self, out: Emitter) -> None:
        offsets = Emitter()
        offsets.varint(0)  # no external resource printers
        out.section(RESOURCE_OFFSET, offsets)
        out.section(RESOURCE, Emitter())

    # IR
    def _op(self, e: Emitter, op: Operation) -> None:
        n = self.n
        out = e.out
        varint = e.varint
        registered = dialects.is_registered(op.name)
        varint(n.op_names[(op.name, registered)].number)
        mask_at = len(out)
        out.append(0)
        mask = 0
        varint(self.attr_index(op.location if op.location is not None else UNKNOWN_LOC))
        d = n.attr_dicts.get(id(op))
        if d is not None:
            mask |= HAS_ATTRS
            varint(self.attr_index(d))
        if self.version >= NATIVE_PROPERTIES:
            props = n.op_props[id(op)]
            # ops with the same name and property objects write the same properties
            key = (op.name, tuple((k, id(v)) for k, v in props.items()))
            pi = self.props_memo.get(key)
            if pi is None:
                raw = dialects.write_properties(self, op, registered, props)
                pi = -1 if raw is None else self._properties(raw)
                self.props_memo[key] = pi
            if pi >= 0:
                mask |= HAS_PROPERTIES
                varint(pi)
        # (varints below 128, the usual case, are appended directly)
        if op.results:
            mask |= HAS_RESULTS
            k = len(op.results)
            if k < 128:
                out.append((k << 1) | 1)
            else:
                varint(k)
            type_ids = n.type_ids
            for r in op.results:
                t = r.type
                hit = type_ids.get(id(t))
                i = hit[1].number if hit is not None and hit[0] is t else self.type_index(t)
                if i < 128:
                    out.append((i << 1) | 1)
                else:
                    varint(i)
        if op.operands:
            mask |= HAS_OPERANDS
            k = len(op.operands)
            if k < 128:
                out.append((k << 1) | 1)
            else:
                varint(k)
            ids = n.value_ids
            for v in op.operands:
                vid = ids.get(id(v))
                if vid is None:
                    raise WriteError(f"operand of {op.name} is not defined in the IR")
                if vid < 0x80:
                    out.append((vid << 1) | 1)
                elif vid < 0x4000:
                    out += ((vid << 2) | 2).to_bytes(2, "little")
                else:
                    varint(vid)
        if op.successors:
            mask |= HAS_SUCCESSORS
            e.varint(len(op.successors))
            for b in op.successors:
                e.varint(n.block_ids[id(b)])
        if self.orders and op.results:
            from .uselists import encode

            if encode(e, op.results, self.orders, self.op_ids):
                mask |= HAS_USE_LIST_ORDERS
        if op.regions:
            mask |= HAS_INLINE_REGIONS
        out[mask_at] = mask
        if op.regions:
            isolated = n.is_isolated(op)
            e.varint_flag(len(op.regions), isolated)
            if isolated and self.version >= LAZY_LOADING:
                sub = Emitter()
                for r in op.regions:
                    self._region(sub, r)
                e.section(IR, sub)
            else:
                for r in op.regions:
                    self._region(e, r)

    def _properties(self, raw: bytes) -> int:
        size = Emitter()
        size.varint(len(raw))
        data = bytes(size.out) + raw
        i = self.props_index.get(data)
        if i is None:
            i = self.props_index[data] = len(self.props)
            self.props.append(data)
        return i

    def _region(self, e: Emitter, region: Region) -> None:
        if not region.blocks:
            e.varint(0)
            return
        nb, nv = self.n.region_counts[id(region)]
        e.varint(nb)
        e.varint(nv)
        for b in region.blocks:
            self._block(e, b)

    def _block(self, e: Emitter, block: Block) -> None:
        args = block.arguments
        e.varint_flag(len(block.operations), bool(args))
        if args:
            e.varint(len(args))
            for a in args:
                loc = _arg_loc(a)
                t = self.type_index(a.type)
                if self.version >= ELIDE_UNKNOWN_BLOCK_ARG_LOCATION:
                    unknown = isinstance(loc, UnknownLoc)
                    e.varint_flag(t, not unknown)
                    if not unknown:
                        e.varint(self.attr_index(loc))
                else:
                    e.varint(t)
                    e.varint(self.attr_index(loc))
            if self.version >= USE_LIST_ORDERING:
                at = len(e.out)
                e.byte(0)
                if self.orders:
                    from .uselists import encode

                    if encode(e, args, self.orders, self.op_ids):
                        e.out[at] = HAS_USE_LIST_ORDERS
        for op in block.operations:
            self._op(e, op)


def _trace_name(entry: _Entry) -> str:
    """`FloatF32V1Type`, `IntegerV1Attr`, ... (as upstream's -debug-only=vhlo-bytecode)."""
    x = entry.value
    mn = getattr(x, "mnemonic", "") or type(x).__name__
    words = "".join(w[:1].upper() + w[1:] for w in mn.replace("_v1", "").split("_"))
    return words + ("V1Attr" if entry.is_attr else "V1Type")


def _grouped(e: Emitter, entries: list[_Entry], emit: Any) -> None:
    """`writeDialectGrouping`: runs of entries of one dialect, each run prefixed by its dialect
    number and length."""
    i = 0
    n = len(entries)
    while i < n:
        d = entries[i].dialect
        j = i + 1
        while j < n and entries[j].dialect is d:
            j += 1
        e.varint(d.number)
        e.varint(j - i)
        for k in range(i, j):
            emit(entries[k])
        i = j


def _text(x: Any, is_attr: bool) -> str:
    """The assembly text of an attribute or type (the bytecode fallback encoding)."""
    from ..syntax.printer import format_attr, format_type

    if is_attr:
        if isinstance(x, OpaqueAttr):
            return x.text
        if isinstance(x, Location):
            from ..syntax.printer import format_location

            return format_location(x)
        return format_attr(x)
    return format_type(x)


def write_bytecode(module: Module | Operation, version: int = MAX_VERSION,
                   producer: str = "MLIR", rewritten: list[Operation] | None = None,
                   trace: Any = None) -> bytes:
    """The bytecode of ``module`` in bytecode format ``version`` with ``producer``;
    ``rewritten`` lists ops replaced by rewrites (for their use-list orders); ``trace``, a
    text stream, receives a line per VHLO attribute/type written (`-debug-only=vhlo-bytecode`)."""
    root = module.op if isinstance(module, Module) else module
    with paused_gc():
        return _Writer(root, version, producer, rewritten, trace).write()


_ = (StringAttr, RESOURCE)
