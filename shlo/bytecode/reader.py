"""The MLIR bytecode reader (`mlir/docs/BytecodeFormat.md`, versions 0 to 6): header, string,
dialect, attr_type (+ offsets), ir, resource (+ offsets), dialect_versions and properties
sections, into shlo's IR.

Attributes and types are decoded on first use by their dialect's codec (:mod:`.dialects`) and
cached by index. Every count and length is checked against the bytes that are left before
anything is allocated for it, and every failure is a :class:`BytecodeError` that names the byte
offset, the section and what was expected.
"""

from __future__ import annotations

from typing import Any

from .._gc import paused_gc
from ..attributes import DenseResourceAttr, DictAttr, StringAttr
from ..resources import ResourceBlob, ResourceHandle
from ..errors import Diagnostic
from ..ir import Block, FileLineColLoc, Location, Module, Operation, Region, UNKNOWN_LOC, Value
from ..types import TensorType
from .encoding import (
    ATTR_TYPE, ATTR_TYPE_OFFSET, DIALECT, DIALECT_VERSIONING, ELIDE_UNKNOWN_BLOCK_ARG_LOCATION,
    HAS_ATTRS, HAS_INLINE_REGIONS, HAS_OPERANDS, HAS_PROPERTIES, HAS_RESULTS, HAS_SUCCESSORS,
    HAS_USE_LIST_ORDERS, IR, LAZY_LOADING, MAGIC, MAX_VERSION, NATIVE_PROPERTIES, PROPERTIES,
    RESOURCE, RESOURCE_OFFSET, SECTION_NAMES, STRING, USE_LIST_ORDERING, BytecodeError, Cursor,
)
from .builtin import A_FILE_LINE_COL
from .vhlo.ops import STABLEHLO_OP
from .vhlo.text import to_builtin_type
from .vhlo.to_stablehlo import convert_attr, legalize_parts
from .vhlo.verify import arity_problem, attrs_problem, op_shape

__all__ = ["BytecodeReader", "read_module", "is_bytecode", "header"]


def is_bytecode(data: bytes | bytearray | memoryview) -> bool:
    return bytes(data[:4]) == MAGIC


def header(data: bytes, filename: str | None = None) -> tuple[int, str]:
    """The bytecode version and producer string of ``data``."""
    cur = Cursor(data, filename=filename)
    if bytes(cur.bytes(4, "magic number")) != MAGIC:
        raise cur.error("not MLIR bytecode (the file does not start with 'ML\\xefR')", 0)
    version = cur.varint("bytecode version")
    producer = cur.cstring("producer string")
    return version, producer


class _NotConverted(Exception):
    """The program cannot be converted to StableHLO as it is read (an op of an older version,
    a malformed op, a mixed program): it is read as written and converted step by step."""


class _Dialect:
    __slots__ = ("name", "version", "codec")

    def __init__(self, name: str, version: bytes | None, codec: Any) -> None:
        self.name = name
        self.version = version
        self.codec = codec


class BytecodeReader:
    """One bytecode file; :meth:`module` reads its IR."""

    def __init__(self, data: bytes | bytearray | memoryview, filename: str | None = None,
                 to_stablehlo: bool = False) -> None:
        """``to_stablehlo``: convert the ops of a VHLO program of the current version to
        StableHLO as they are read (see :meth:`module`)."""
        from . import dialects

        self._to_stablehlo = to_stablehlo

        self._dialects = dialects
        if isinstance(data, (bytearray, memoryview)):
            data = bytes(data)
        self.data = data
        self.filename = filename
        cur = Cursor(data, filename=filename)
        if len(data) < 4 or bytes(cur.bytes(4, "magic number")) != MAGIC:
            raise cur.error("not MLIR bytecode (the file does not start with 'ML\\xefR')", 0)
        self.version = cur.varint("bytecode version")
        if self.version > MAX_VERSION:
            raise cur.error(f"bytecode version {self.version} is newer than the current "
                            f"version {MAX_VERSION}")
        self.producer = cur.cstring("producer string")
        self.sections: dict[int, Cursor] = {}
        while not cur.at_end():
            start = cur.pos
            sid, sub = cur.read_section()
            if sid in self.sections:
                raise cur.error(f"duplicate section '{SECTION_NAMES[sid]}'", start)
            self.sections[sid] = sub
        for sid in (STRING, DIALECT, ATTR_TYPE, ATTR_TYPE_OFFSET, IR):
            if sid not in self.sections:
                raise cur.error(f"missing required section '{SECTION_NAMES[sid]}'")
        if self.version >= NATIVE_PROPERTIES and PROPERTIES not in self.sections:
            raise cur.error("missing required section 'properties'")
        self._read_strings()
        self._read_dialects()
        self._read_attr_type_offsets()
        self._read_resource_offsets()
        self._read_properties()

    # --- sections ------------------------------------------------------------------------------

    def _read_strings(self) -> None:
        cur = self.sections[STRING]
        n = cur.count("string count")
        sizes = [cur.varint("string size") for _ in range(n)]
        sizes.reverse()
        offsets = []
        pos = cur.pos
        for size in sizes:
            if size == 0 or size > cur.end - pos:
                raise cur.error(f"string of {size} bytes runs past the end of the section", pos)
            if self.data[pos + size - 1] != 0:
                raise cur.error("string is not nul-terminated", pos + size - 1)
            offsets.append((pos, pos + size - 1))
            pos += size
        self._string_offsets = offsets
        self._strings: list[str | None] = [None] * n

    def string(self, i: int) -> str:
        try:
            s = self._strings[i]
        except IndexError:
            raise BytecodeError(f"string index {i} out of range ({len(self._strings)} strings)",
                                None, "string", self.filename) from None
        if s is None:
            a, b = self._string_offsets[i]
            s = self.data[a:b].decode("utf-8", "surrogateescape")
            self._strings[i] = s
        return s

    def _read_dialects(self) -> None:
        cur = self.sections[DIALECT]
        n = cur.count("dialect count")
        self.dialects: list[_Dialect] = []
        for _ in range(n):
            if self.version < DIALECT_VERSIONING:
                name_id, versioned = cur.varint("dialect name"), False
            else:
                name_id, versioned = cur.varint_flag("dialect name")
            name = self.string(name_id)
            version = None
            if versioned:
                sid, sub = cur.read_section()
                version = bytes(sub.bytes(sub.remaining, "dialect version"))
            self.dialects.append(_Dialect(name, version, self._dialects.codec(name)))
        if self.version >= ELIDE_UNKNOWN_BLOCK_ARG_LOCATION:
            cur.count("op name count")
        self.op_names: list[tuple[str, bool]] = []
        while not cur.at_end():
            d = self._dialect(cur.varint("dialect of op names"), cur)
            for _ in range(cur.count("op name count")):
                if self.version < NATIVE_PROPERTIES:
                    sid, registered = cur.varint("op name"), True
                else:
                    sid, registered = cur.varint_flag("op name")
                self.op_names.append((f"{d.name}.{self.string(sid)}", registered))

    def _dialect(self, i: int, cur: Cursor) -> _Dialect:
        if i >= len(self.dialects):
            raise cur.error(f"dialect index {i} out of range ({len(self.dialects)} dialects)")
        return self.dialects[i]

    def _read_attr_type_offsets(self) -> None:
        cur = self.sections[ATTR_TYPE_OFFSET]
        data_cur = self.sections[ATTR_TYPE]
        n_attrs = cur.count("attribute count")
        n_types = cur.count("type count")
        total = n_attrs + n_types
        if total > data_cur.remaining + cur.remaining:
            raise cur.error(f"{total} attributes and types exceed the section sizes")
        entries: list[tuple[int, int, int, bool]] = []
        pos = data_cur.pos
        while not cur.at_end() and len(entries) < total:
            d = cur.varint("dialect of attributes/types")
            self._dialect(d, cur)
            count = cur.count("group size")
            data = self.data
            limit = data_cur.end
            append = entries.append
            for _ in range(count):
                q = cur.pos
                b = data[q] if q < cur.end else 0
                if b & 1:  # one-byte varint (the usual case), inlined
                    cur.pos = q + 1
                    v = b >> 1
                else:
                    v = cur.varint("attribute/type size")
                size = v >> 1
                if size > limit - pos:
                    raise cur.error("attribute/type entry runs past the end of the "
                                    "attr_type section")
                append((d, pos, size, bool(v & 1)))
                pos += size
        if len(entries) != total:
            raise cur.error(f"expected {total} attribute/type entries, found {len(entries)}")
        self._attr_entries = entries[:n_attrs]
        self._type_entries = entries[n_attrs:]
        self._attrs: list[Any] = [None] * n_attrs
        self._types: list[Any] = [None] * n_types
        self._depth = 0

    def _read_resource_offsets(self) -> None:
        self._dialect_resources: list[tuple[int, int, int, str]] = []
        self._resource_handles: dict[int, Any] = {}
        if RESOURCE_OFFSET not in self.sections:
            return
        cur = self.sections[RESOURCE_OFFSET]
        data_cur = self.sections.get(RESOURCE)
        if data_cur is None:
            raise cur.error("resource offsets without a resource section")
        pos = data_cur.pos
        n_external = cur.count("external resource groups")
        groups = 0
        while not cur.at_end():
            key = cur.varint("resource group key")
            external = groups < n_external
            if external:
                self.string(key)
            else:
                self._dialect(key, cur)
            groups += 1
            for _ in range(cur.count("resource count")):
                rkey = self.string(cur.varint("resource key"))
                size = cur.varint("resource size")
                kind = cur.byte("resource kind")
                if size > data_cur.end - pos:
                    raise cur.error("resource entry runs past the end of the resource section")
                if not external:
                    self._dialect_resources.append((pos, size, kind, rkey))
                pos += size

    def dense_resource(self, t: Any, handle: int, cur: Cursor) -> Any:
        """The `dense_resource<key>` attribute a handle refers to: a DenseResourceAttr, as the
        text parser makes it, whose blob is a view of the bytecode's bytes (nothing copied)."""
        if handle >= len(self._dialect_resources):
            raise cur.error(f"dense resource handle {handle} has no resource data")
        h = self._resource_handles.get(handle)
        if h is None:
            pos, size, kind, key = self._dialect_resources[handle]
            if kind != 0:
                raise cur.error("dense resource is not a blob")
            rc = Cursor(self.data, pos, pos + size, "resource", self.filename)
            align = rc.varint("blob alignment")
            n = rc.varint("blob size")
            rc.align(align)
            blob = ResourceBlob(rc.bytes(n, "resource blob"), align)
            h = self._resource_handles[handle] = ResourceHandle(key, blob)
        if not isinstance(t, TensorType) or not t.is_static:
            raise cur.error("dense resource of a type that is not a static tensor")
        attr = DenseResourceAttr(t, h)
        problem = attr.problem()
        if problem is not None:
            raise cur.error(problem)
        return attr

    def _read_properties(self) -> None:
        self._props: list[tuple[int, int]] = []
        cur = self.sections.get(PROPERTIES)
        if cur is None:
            return
        n = cur.count("properties count")
        for _ in range(n):
            size = cur.varint("properties size")
            start = cur.pos
            cur.bytes(size, "properties")
            self._props.append((start, size))

    # --- attributes and types ------------------------------------------------------------------

    def attr(self, i: int) -> Any:
        try:
            a = self._attrs[i]
        except (IndexError, TypeError):
            raise BytecodeError(f"attribute index {i} out of range ({len(self._attrs)} "
                                "attributes)", None, "attr_type", self.filename) from None
        if a is None:
            a = self._attrs[i] = self._decode(self._attr_entries[i], True, i)
        return a

    def type(self, i: int) -> Any:
        try:
            t = self._types[i]
        except (IndexError, TypeError):
            raise BytecodeError(f"type index {i} out of range ({len(self._types)} types)",
                                None, "attr_type", self.filename) from None
        if t is None:
            t = self._types[i] = self._decode(self._type_entries[i], False, i)
        return t

    def _location(self, i: int, cur: Cursor) -> Location:
        """Attribute ``i``, which must be a location: `"file":line:col` (one per op, usually)
        is decoded inline."""
        data = self.data
        d, pos, size, custom = self._attr_entries[i] if i < len(self._attr_entries) else \
            (0, 0, 0, False)
        if custom and 4 <= size <= 10 and data[pos] == (A_FILE_LINE_COL << 1) | 1 and \
                self.dialects[d].name == "builtin":
            # three varints of one to three bytes: file (a string attribute), line, column
            end = pos + size
            p = pos + 1
            vals = [-1, -1, -1]
            for k in range(3):
                b = data[p] if p < end else 0
                if b & 1:
                    vals[k] = b >> 1
                    p += 1
                elif b & 2 and p + 1 < end:
                    vals[k] = (b | (data[p + 1] << 8)) >> 2
                    p += 2
                elif b & 4 and p + 2 < end:
                    vals[k] = (b | (data[p + 1] << 8) | (data[p + 2] << 16)) >> 3
                    p += 3
                else:
                    break
            fi, line, col = vals
            if p == end and fi >= 0 and line >= 0 and col >= 0:
                f = self._attrs[fi] if fi < len(self._attrs) else None
                if f is None:
                    f = self.attr(fi)
                if type(f) is StringAttr:
                    loc = self._attrs[i] = FileLineColLoc(f.value, line, col)
                    return loc
        loc = self.attr(i)
        if not isinstance(loc, Location):
            raise cur.error("op location is not a location attribute")
        return loc

    def _decode(self, entry: tuple[int, int, int, bool], is_attr: bool, index: int) -> Any:
        d, pos, size, custom = entry
        dialect = self.dialects[d]
        what = "attribute" if is_attr else "type"
        cur = Cursor(self.data, pos, pos + size, "attr_type", self.filename)
        self._depth += 1
        if self._depth > 200:
            self._depth = 0
            raise cur.error(f"{what} nesting too deep (or a cycle of {what} references)")
        try:
            if custom:
                codec = dialect.codec
                if codec is None:
                    raise cur.error(f"{what} #{index} of dialect '{dialect.name}' uses a custom "
                                    "bytecode encoding shlo does not know")
                value = codec.read_attr(self, cur) if is_attr else codec.read_type(self, cur)
            else:
                text = cur.cstring(f"{what} assembly text")
                value = self._dialects.parse_text(text, is_attr, cur)
            if custom and not cur.at_end():
                raise cur.error(f"{cur.end - cur.pos} unread bytes at the end of {what} #{index}")
            return value
        finally:
            self._depth -= 1

    # --- IR --------------------------------------------------------------------------------------

    def module(self) -> Module:
        """The module. When the reader converts to StableHLO, a program it cannot convert as
        it reads (see :class:`_NotConverted`) raises _NotConverted; a program without VHLO ops
        does too (it is not a portable artifact)."""
        cur = self.sections[IR]
        n, has_args = cur.varint_flag("top-level block")
        if n != 1 or has_args:
            raise cur.error("the IR section must hold a single block with one op and no "
                            "arguments")
        self._values: list[Any] = []
        self._fixups: list[tuple[Operation, int, int]] = []
        self._blocks: list[list[Block]] = []
        self._scope: list[int] = [0, 0]
        self._plans: list[Any] = [None] * len(self.op_names)
        self._enclosing: list[Operation] = []
        self._parts_memo: dict[tuple, tuple] = {}
        self._btypes: list[Any] = [None] * len(self._types)
        self._vhlo_ops = False
        self._arity_ok: set[tuple[int, int, int, int]] = set()
        op = self._op(cur)
        if self._to_stablehlo and not self._vhlo_ops:
            raise _NotConverted("no VHLO ops")
        if self._fixups:
            self._resolve_fixups(cur)
        if op.name == "builtin.module" and (len(op.regions) != 1 or
                                            len(op.regions[0].blocks) != 1):
            raise cur.error("'builtin.module' op must have one region with one block")
        if op.name != "builtin.module":
            wrapper = Operation("builtin.module", regions=[Region([Block(operations=[op])])])
            op = wrapper
        return Module(op, filename=self.filename)

    def _resolve_fixups(self, cur: Cursor) -> None:
        for op, k, vid in self._fixups:
            v = self._values[vid] if vid < len(self._values) else None
            if not isinstance(v, Value):
                raise cur.error(f"operand refers to value #{vid}, which is never defined")
            op.operands[k] = v

    def _op(self, cur: Cursor) -> Operation:
        data = self.data
        start = p = cur.pos
        end = cur.end
        # varints of one or two bytes (the usual cases) are read inline, others by the cursor
        b = data[p] if p < end else 0
        if b & 1:
            idx = b >> 1
            p += 1
        elif b & 2 and p + 1 < end:
            idx = (b | (data[p + 1] << 8)) >> 2
            p += 2
        else:
            idx = cur.varint("op name")
            p = cur.pos
        if idx >= len(self.op_names):
            raise cur.error(f"op name index {idx} out of range ({len(self.op_names)} names)",
                            start)
        name, registered = self.op_names[idx]
        if p >= end:
            cur.pos = p
            raise cur.error("expected op encoding mask, found the end of the data")
        mask = data[p]
        p += 1
        if mask & 0x80:
            cur.pos = p
            raise cur.error(f"invalid op encoding mask {mask:#x}")
        plans = self._plans
        plan = plans[idx]
        if plan is None:
            cur.pos = p
            self._dialects.check_op(self, name, registered, cur, start)
            plan = plans[idx] = self._plan(name)
        b = data[p] if p < end else 0
        if b & 1:
            li = b >> 1
            p += 1
        elif b & 2 and p + 1 < end:
            li = (b | (data[p + 1] << 8)) >> 2
            p += 2
        else:
            cur.pos = p
            li = cur.varint("op location")
            p = cur.pos
        loc = self._attrs[li] if li < len(self._attrs) else None
        if loc is None:
            cur.pos = p
            loc = self._location(li, cur)
        elif not isinstance(loc, Location):
            cur.pos = p
            raise cur.error("op location is not a location attribute")
        ai = pi = -1
        if mask & HAS_ATTRS:
            b = data[p] if p < end else 0
            if b & 1:
                ai = b >> 1
                p += 1
            elif b & 2 and p + 1 < end:
                ai = (b | (data[p + 1] << 8)) >> 2
                p += 2
            else:
                cur.pos = p
                ai = cur.varint("op attribute dictionary")
                p = cur.pos
        if mask & HAS_PROPERTIES:
            if self.version < NATIVE_PROPERTIES:
                cur.pos = p
                raise cur.error("op properties in bytecode version < 5")
            b = data[p] if p < end else 0
            if b & 1:
                pi = b >> 1
                p += 1
            elif b & 2 and p + 1 < end:
                pi = (b | (data[p + 1] << 8)) >> 2
                p += 2
            else:
                cur.pos = p
                pi = cur.varint("op properties")
                p = cur.pos
            if pi >= len(self._props):
                cur.pos = p
                raise cur.error(f"properties index {pi} out of range ({len(self._props)})")
        cur.pos = p
        if plan is True:  # as written
            properties, attributes = self._parts(name, registered, ai, pi, cur)
        else:  # converted to StableHLO as read (a memo of the op's parts, per what they are)
            key = (idx, ai, pi, plan[2] and self._in_func())
            hit = self._parts_memo.get(key)
            if hit is None:
                hit = self._parts_memo[key] = self._legal_parts(plan, key[3], name, registered,
                                                                ai, pi, cur)
            name = hit[0]
            properties = dict(hit[1]) if hit[1] else {}
            attributes = dict(hit[2]) if hit[2] else {}
        op = Operation.__new__(Operation)  # (what Operation() does, without its copies)
        op.name = name
        op.properties = properties
        op.attributes = attributes
        op.regions = []
        op.successors = []
        op.location = loc
        op.parent = None
        results: list[Value] = []
        if mask & HAS_RESULTS:
            p = cur.pos
            b = data[p] if p < end else 0
            if b & 1 and (b >> 1) < end - p:  # a one-byte count (the usual case), inlined
                n = b >> 1
                cur.pos = p + 1
            else:
                n = cur.count("result count")
            types = self._types if plan is True else self._btypes
            for k in range(n):
                p = cur.pos
                b = data[p] if p < end else 0
                if b & 1:
                    ti = b >> 1
                    cur.pos = p + 1
                elif b & 2 and p + 1 < end:
                    ti = (b | (data[p + 1] << 8)) >> 2
                    cur.pos = p + 2
                else:
                    ti = cur.varint("result type")
                t = types[ti] if ti < len(types) else None
                if t is None:
                    t = self.type(ti) if plan is True else self._btype(ti)
                results.append(Value(t, op, k))
        op.results = results
        operands: list[Any] = []
        if mask & HAS_OPERANDS:
            p = cur.pos
            b = data[p] if p < end else 0
            if b & 1 and (b >> 1) < end - p:  # a one-byte count (the usual case), inlined
                n = b >> 1
                cur.pos = p + 1
            else:
                n = cur.count("operand count")
            values = self._values
            nvals = len(values)
            for k in range(n):
                p = cur.pos
                b = data[p] if p < end else 0
                if b & 1:
                    vid = b >> 1
                    cur.pos = p + 1
                elif b & 2 and p + 1 < end:
                    vid = (b | (data[p + 1] << 8)) >> 2
                    cur.pos = p + 2
                elif b & 4 and p + 2 < end:
                    vid = (b | (data[p + 1] << 8) | (data[p + 2] << 16)) >> 3
                    cur.pos = p + 3
                else:
                    vid = cur.varint("operand")
                v = values[vid] if vid < nvals else None
                if v is None:
                    if vid >= nvals:
                        raise cur.error(f"operand refers to value #{vid}, outside the "
                                        f"{nvals} values in scope")
                    operands.append(None)
                    self._fixups.append((op, k, vid))
                else:
                    operands.append(v)
        op.operands = operands
        successors: list[int] = []
        if mask & HAS_SUCCESSORS:
            n = cur.count("successor count")
            successors = [cur.varint("successor") for _ in range(n)]
        if mask & HAS_USE_LIST_ORDERS:
            if self.version < USE_LIST_ORDERING:
                raise cur.error("use-list orders in bytecode version < 3")
            self._skip_use_lists(cur, len(results))
        if results:
            scope = self._scope
            i = scope[0]
            if i + len(results) > scope[1]:
                raise cur.error("more values defined in the region than it declares")
            self._values[i:i + len(results)] = results
            scope[0] = i + len(results)
        if successors:
            blocks = self._blocks[-1] if self._blocks else []
            for b in successors:
                if b >= len(blocks):
                    raise cur.error(f"successor block #{b} out of range")
            op.successors = [blocks[b] for b in successors]
        if mask & HAS_INLINE_REGIONS:
            n, isolated = cur.varint_flag("region count")
            if n > cur.remaining + 1:
                raise cur.error(f"region count {n} exceeds the data")
            self._enclosing.append(op)
            if isolated and self.version >= LAZY_LOADING:
                sid, sub = cur.read_section()
                if sid != IR:
                    raise sub.error("expected an 'ir' section for isolated regions")
                regions = self._regions(sub, n, True)
                if not sub.at_end():
                    raise sub.error("unread bytes after isolated regions")
            else:
                regions = self._regions(cur, n, isolated)
            self._enclosing.pop()
            op.regions = regions
            for r in regions:
                r.parent = op
        if plan is not True and plan[0] is not None:
            sig = (idx, len(operands), len(op.regions), len(results))
            if sig not in self._arity_ok:
                if arity_problem(plan[0], sig[1], sig[2], sig[3]):
                    raise _NotConverted("VHLO op structure")
                self._arity_ok.add(sig)
        return op

    # --- reading StableHLO from VHLO: ops converted as they are read -----------------------------

    def _plan(self, name: str) -> Any:
        """What is done with each op called ``name``: True, read as written; otherwise
        ``(VHLO op shape or None, is a VHLO op, may be a func.return)`` for the conversion to
        StableHLO (`vhlo-legalize-to-stablehlo`) as the op is read."""
        if not self._to_stablehlo:
            return True
        if name.startswith("vhlo."):
            if name not in STABLEHLO_OP:
                raise _NotConverted(f"{name} is not a current VHLO op")
            self._vhlo_ops = True
            return (op_shape(name), True, name == "vhlo.return_v1")
        if name == "builtin.unrealized_conversion_cast":
            raise _NotConverted("a mixed VHLO/StableHLO program")
        return (None, False, False)

    def _in_func(self) -> bool:
        enc = self._enclosing
        return bool(enc) and enc[-1].name in ("vhlo.func_v1", "func.func")

    def _parts(self, name: str, registered: bool, ai: int, pi: int,
               cur: Cursor) -> tuple[dict[str, Any], dict[str, Any]]:
        """The op's properties and attributes as written."""
        attributes: dict[str, Any] = {}
        properties: dict[str, Any] = {}
        if ai >= 0:
            d = self.attr(ai)
            if not isinstance(d, DictAttr):
                raise cur.error("op attributes are not a dictionary")
            attributes = dict(d.items)
            if self.version < NATIVE_PROPERTIES:
                self._dialects.split_inherent(name, attributes, properties)
        if pi >= 0:
            pstart, psize = self._props[pi]
            pc = Cursor(self.data, pstart, pstart + psize, "properties", self.filename)
            self._dialects.read_properties(self, name, registered, pc, properties, attributes)
        return properties, attributes

    def _legal_parts(self, plan: tuple, in_func: bool, name: str, registered: bool, ai: int,
                     pi: int, cur: Cursor) -> tuple[str, dict[str, Any], dict[str, Any]]:
        """The StableHLO name, properties and attributes of an op (once per distinct op name,
        attributes, properties and context). Anything the conversion would report is left to
        the step-by-step path (:class:`_NotConverted`), which reports it as it always has."""
        properties, attributes = self._parts(name, registered, ai, pi, cur)
        shape, is_vhlo, _ = plan
        if not is_vhlo:
            return name, properties, {k: convert_attr(v) for k, v in attributes.items()}
        if shape is not None and attrs_problem(shape[0], properties, attributes):
            raise _NotConverted("VHLO op attributes")
        try:
            return legalize_parts(name, properties, attributes, in_func)
        except Exception as e:
            raise _NotConverted(f"{name}: {e}") from None

    def _btype(self, i: int) -> Any:
        """Type ``i`` converted to its builtin type."""
        if 0 <= i < len(self._btypes) and self._btypes[i] is not None:
            return self._btypes[i]
        t = self.type(i)
        try:
            b = to_builtin_type(t)
        except Exception as e:
            raise _NotConverted(f"type: {e}") from None
        self._btypes[i] = b
        return b

    def _define(self, v: Value, cur: Cursor) -> None:
        scope = self._scope
        i = scope[0]
        if i >= scope[1]:
            raise cur.error("more values defined in the region than it declares")
        self._values[i] = v
        scope[0] = i + 1

    def _regions(self, cur: Cursor, n: int, isolated: bool) -> list[Region]:
        saved_values = saved_fix = None
        if isolated:
            saved_values, self._values = self._values, []
            saved_fix, self._fixups = self._fixups, []
        saved_scope = self._scope
        base = len(self._values)
        out = []
        for _ in range(n):
            out.append(self._region(cur, base))
        self._scope = saved_scope
        if isolated:
            if self._fixups:
                self._resolve_fixups(cur)
            self._values = saved_values  # type: ignore[assignment]
            self._fixups = saved_fix  # type: ignore[assignment]
        else:
            del self._values[base:]
        return out

    def _region(self, cur: Cursor, base: int) -> Region:
        nblocks = cur.count("block count")
        region = Region()
        if nblocks == 0:
            return region
        nvalues = cur.varint("region value count")
        if nvalues > cur.remaining * 2 + 1:
            raise cur.error(f"region value count {nvalues} exceeds the data")
        del self._values[base:]
        self._values.extend([None] * nvalues)
        self._scope = [base, base + nvalues]
        blocks = [Block() for _ in range(nblocks)]
        for b in blocks:
            region.append(b)
        self._blocks.append(blocks)
        try:
            for b in blocks:
                self._block(cur, b)
        finally:
            self._blocks.pop()
        return region

    def _block(self, cur: Cursor, block: Block) -> None:
        nops, has_args = cur.varint_flag("block op count")
        if nops > cur.remaining:
            raise cur.error(f"block op count {nops} exceeds the data")
        if has_args:
            nargs = cur.count("block argument count")
            for _ in range(nargs):
                if self.version >= ELIDE_UNKNOWN_BLOCK_ARG_LOCATION:
                    t, has_loc = cur.varint_flag("block argument type")
                    loc = self.attr(cur.varint("block argument location")) if has_loc else \
                        UNKNOWN_LOC
                else:
                    t = cur.varint("block argument type")
                    loc = self.attr(cur.varint("block argument location"))
                v = block.add_argument(self._btype(t) if self._to_stablehlo else self.type(t))
                if not isinstance(loc, Location):
                    raise cur.error("block argument location is not a location")
                self._define(v, cur)
            if self.version >= USE_LIST_ORDERING:
                m = cur.byte("block use-list mask")
                if m & HAS_USE_LIST_ORDERS:
                    self._skip_use_lists(cur, nargs)
        ops = block.operations
        for _ in range(nops):
            op = self._op(cur)
            op.parent = block
            ops.append(op)

    def _skip_use_lists(self, cur: Cursor, nvalues: int) -> None:
        n = cur.count("use-list count") if nvalues != 1 else 1
        for _ in range(n):
            if nvalues != 1:
                cur.varint("use-list value index")
            k, pairs = cur.varint_flag("use-list size")
            for _ in range(k):
                cur.varint("use-list index")


def read_module(data: bytes, filename: str | None = None) -> Module:
    """The IR of bytecode ``data``, as written (VHLO stays VHLO; see
    :func:`shlo.bytecode.load_bytecode` for the conversion to StableHLO)."""
    try:
        with paused_gc():
            return BytecodeReader(data, filename).module()
    except RecursionError:
        raise BytecodeError("IR nesting too deep", None, "ir", filename) from None


_ = (Diagnostic, StringAttr)
