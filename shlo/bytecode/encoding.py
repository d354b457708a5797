"""MLIR bytecode primitives (llvm-project `mlir/docs/BytecodeFormat.md`): prefix varints, zigzag
signed varints, sections, and the errors that locate a problem in a file.

:class:`Cursor` reads a byte range of the file; every read checks its bounds, and every failure
raises :class:`BytecodeError` naming the byte offset, the section being read and what was
expected. :class:`Emitter` writes: a growing ``bytearray`` with the same primitives, nested
sections and alignment padding (0xCB), as MLIR's ``EncodingEmitter`` does.
"""

from __future__ import annotations

from ..errors import ParseError

__all__ = [
    "MAGIC", "BytecodeError", "WriteError", "Cursor", "Emitter", "SECTION_NAMES", "STRING", "DIALECT",
    "ATTR_TYPE", "ATTR_TYPE_OFFSET", "IR", "RESOURCE", "RESOURCE_OFFSET", "DIALECT_VERSIONS",
    "PROPERTIES", "HAS_ATTRS", "HAS_RESULTS", "HAS_OPERANDS", "HAS_SUCCESSORS",
    "HAS_INLINE_REGIONS", "HAS_USE_LIST_ORDERS", "HAS_PROPERTIES", "MAX_VERSION",
    "DIALECT_VERSIONING", "LAZY_LOADING", "USE_LIST_ORDERING", "ELIDE_UNKNOWN_BLOCK_ARG_LOCATION",
    "NATIVE_PROPERTIES", "NATIVE_PROPERTIES_SEGMENT_SIZE", "ALIGNMENT_BYTE", "zigzag",
]

MAGIC = b"ML\xefR"

# Bytecode versions (Encoding.h): the feature each one introduced.
DIALECT_VERSIONING = 1
LAZY_LOADING = 2
USE_LIST_ORDERING = 3
ELIDE_UNKNOWN_BLOCK_ARG_LOCATION = 4
NATIVE_PROPERTIES = 5
NATIVE_PROPERTIES_SEGMENT_SIZE = 6
MAX_VERSION = 6
ALIGNMENT_BYTE = 0xCB

# Section ids.
STRING, DIALECT, ATTR_TYPE, ATTR_TYPE_OFFSET, IR, RESOURCE, RESOURCE_OFFSET, \
    DIALECT_VERSIONS, PROPERTIES = range(9)
SECTION_NAMES = ("string", "dialect", "attr_type", "attr_type_offset", "ir", "resource",
                 "resource_offset", "dialect_versions", "properties")

# Bits of an op's encoding mask.
HAS_ATTRS = 0x01
HAS_RESULTS = 0x02
HAS_OPERANDS = 0x04
HAS_SUCCESSORS = 0x08
HAS_INLINE_REGIONS = 0x10
HAS_USE_LIST_ORDERS = 0x20
HAS_PROPERTIES = 0x40


class BytecodeError(ParseError):
    """A malformed, truncated or unsupported bytecode file, located by byte offset and section."""

    def __init__(self, message: str, offset: int | None = None, section: str | None = None,
                 filename: str | None = None) -> None:
        self.offset = offset
        self.section = section
        self.reason = message
        where = []
        if offset is not None:
            where.append(f"byte {offset}")
        if section:
            where.append(f"section '{section}'")
        text = f"malformed bytecode ({', '.join(where)}): {message}" if where else message
        super().__init__(text, filename=filename)


def zigzag(value: int) -> int:
    """The signed value of a zigzag-encoded varint."""
    return (value >> 1) ^ -(value & 1)


class WriteError(BytecodeError):
    """The IR holds something the bytecode writer cannot encode."""


class Cursor:
    """Reads ``data[pos:end]``; ``section`` names what is being read (for errors)."""

    __slots__ = ("data", "pos", "end", "section", "filename")

    def __init__(self, data: bytes, pos: int = 0, end: int | None = None,
                 section: str = "header", filename: str | None = None) -> None:
        self.data = data
        self.pos = pos
        self.end = len(data) if end is None else end
        self.section = section
        self.filename = filename

    def error(self, message: str, offset: int | None = None) -> BytecodeError:
        return BytecodeError(message, self.pos if offset is None else offset, self.section,
                             self.filename)

    def sub(self, start: int, length: int, section: str) -> "Cursor":
        """A cursor over ``length`` bytes from ``start`` (which must lie inside this one)."""
        if start < 0 or length < 0 or start + length > self.end:
            raise self.error(f"{section} data of {length} bytes runs past the end of the "
                             f"enclosing data ({self.end - start} bytes left)", start)
        return Cursor(self.data, start, start + length, section, self.filename)

    @property
    def remaining(self) -> int:
        return self.end - self.pos

    def at_end(self) -> bool:
        return self.pos >= self.end

    def byte(self, what: str = "byte") -> int:
        p = self.pos
        if p >= self.end:
            raise self.error(f"expected {what}, found the end of the data")
        self.pos = p + 1
        return self.data[p]

    def bytes(self, n: int, what: str = "bytes") -> memoryview:
        p = self.pos
        if n < 0 or n > self.end - p:
            raise self.error(f"expected {n} bytes of {what}, only {self.end - p} left")
        self.pos = p + n
        return memoryview(self.data)[p:p + n]

    def varint(self, what: str = "varint") -> int:
        data = self.data
        p = self.pos
        if p >= self.end:
            raise self.error(f"expected {what}, found the end of the data")
        b = data[p]
        if b & 1:
            self.pos = p + 1
            return b >> 1
        return self._multi_byte_varint(b, what)

    def _multi_byte_varint(self, b: int, what: str) -> int:
        p = self.pos
        data = self.data
        if b & 2:  # two bytes (values below 2^14): the common case after one byte
            if p + 2 <= self.end:
                self.pos = p + 2
                return (b | (data[p + 1] << 8)) >> 2
        elif b & 4:  # three bytes
            if p + 3 <= self.end:
                self.pos = p + 3
                return (b | (data[p + 1] << 8) | (data[p + 2] << 16)) >> 3
        if b == 0:
            n = 9
        else:
            n = (b & -b).bit_length()  # 1 + trailing zero bits: total bytes
        if p + n > self.end:
            raise self.error(f"truncated {what}: needs {n} bytes, {self.end - p} left")
        raw = int.from_bytes(self.data[p:p + n], "little")
        self.pos = p + n
        if n == 9:
            return raw >> 8
        return raw >> n

    def svarint(self, what: str = "signed varint") -> int:
        v = self.varint(what)
        return (v >> 1) ^ -(v & 1)

    def varint_flag(self, what: str = "varint") -> tuple[int, bool]:
        v = self.varint(what)
        return v >> 1, bool(v & 1)

    def count(self, what: str, min_size: int = 1) -> int:
        """A varint count of items that take at least ``min_size`` bytes each: larger than the
        data left means the file is corrupt (so nothing is allocated for it)."""
        n = self.varint(what)
        if n * min_size > self.end - self.pos:
            raise self.error(f"{what} {n} exceeds the {self.end - self.pos} bytes left")
        return n

    def cstring(self, what: str = "string") -> str:
        data = self.data
        p = self.pos
        i = data.find(b"\0", p, self.end)
        if i < 0:
            raise self.error(f"expected a nul-terminated {what}")
        self.pos = i + 1
        try:
            return bytes(data[p:i]).decode("utf-8")
        except UnicodeDecodeError:
            raise self.error(f"{what} is not valid UTF-8", p) from None

    def align(self, alignment: int) -> None:
        """Skip the 0xCB padding up to ``alignment`` (a power of two) from the file start."""
        if alignment & (alignment - 1) or alignment == 0 or alignment > 1 << 32:
            raise self.error(f"alignment {alignment} is not a power of two")
        pad = (-self.pos) % alignment
        if pad > self.end - self.pos:
            raise self.error("alignment padding runs past the end of the data")
        for i in range(self.pos, self.pos + pad):
            if self.data[i] != ALIGNMENT_BYTE:
                raise self.error("expected alignment padding byte 0xCB", i)
        self.pos += pad

    def read_section(self) -> tuple[int, "Cursor"]:
        """One section: its id and a cursor over its data."""
        start = self.pos
        code = self.byte("section id")
        sid = code & 0x7F
        has_align = bool(code & 0x80)
        if sid >= len(SECTION_NAMES):
            raise self.error(f"unknown section id {sid}", start)
        length = self.varint("section length")
        if has_align:
            self.align(self.varint("section alignment"))
        if length > self.end - self.pos:
            raise self.error(f"section '{SECTION_NAMES[sid]}' of {length} bytes runs past the "
                             f"end of the file ({self.end - self.pos} bytes left)", start)
        sub = Cursor(self.data, self.pos, self.pos + length, SECTION_NAMES[sid], self.filename)
        self.pos += length
        return sid, sub


class Emitter:
    """Writes bytecode primitives to a ``bytearray`` (``out``); ``alignment`` is the largest
    alignment the written data needs relative to its start."""

    __slots__ = ("out", "alignment")

    def __init__(self) -> None:
        self.out = bytearray()
        self.alignment = 1

    def __len__(self) -> int:
        return len(self.out)

    def byte(self, b: int) -> None:
        self.out.append(b)

    def raw(self, data: bytes | bytearray | memoryview) -> None:
        self.out += data

    def varint(self, value: int) -> None:
        if value < 0x80:
            self.out.append((value << 1) | 1)
        elif value < 0x4000:  # two and three bytes (the next usual cases), inlined
            self.out += ((value << 2) | 2).to_bytes(2, "little")
        elif value < 0x200000:
            self.out += ((value << 3) | 4).to_bytes(3, "little")
        else:
            self.out += encode_varint(value)

    def svarint(self, value: int) -> None:
        self.varint(((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF)

    def varint_flag(self, value: int, flag: bool) -> None:
        self.varint((value << 1) | (1 if flag else 0))

    def cstring(self, s: str | bytes) -> None:
        self.out += s.encode("utf-8") if isinstance(s, str) else s
        self.out.append(0)

    def align(self, alignment: int) -> None:
        if alignment < 2:
            return
        pad = (-len(self.out)) % alignment
        self.out += bytes([ALIGNMENT_BYTE]) * pad
        self.alignment = max(self.alignment, alignment)

    def section(self, sid: int, body: "Emitter") -> None:
        """Append ``body`` as section ``sid`` (with alignment when the body needs it)."""
        code_at = len(self.out)
        self.out.append(sid)
        self.varint(len(body.out))
        if body.alignment > 1:
            if len(self.out) & (body.alignment - 1):
                self.varint(body.alignment)
                self.align(body.alignment)
                self.out[code_at] |= 0x80
            else:
                self.alignment = max(self.alignment, body.alignment)
        self.out += body.out


def encode_varint(value: int) -> bytes:
    """The prefix-varint encoding of ``value`` (0 <= value < 2**64)."""
    if value < 0x80:
        return bytes(((value << 1) | 1,))
    for n in range(2, 9):
        if value >> (7 * n) == 0:
            return (((value << 1) | 1) << (n - 1)).to_bytes(n, "little")
    return b"\0" + value.to_bytes(8, "little")
