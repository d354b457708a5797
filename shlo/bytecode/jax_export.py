"""`jax.export` artifacts: `Exported.serialize()` is a flatbuffer (jax's `serialization.fbs`)
around the portable artifact `mlir_module_serialized`, plus what is needed to call it.

:func:`read_exported` reads the flatbuffer (with its own small reader: the optional
`flatbuffers` package is not needed); :func:`shlo.translate.run_exported` runs the module with
jax's module calling convention (https://docs.jax.dev/en/latest/export/export.html#module-calling-convention):
`@main` takes an optional platform index (when exported for several platforms), one
`!stablehlo.token` per ordered effect, then the arguments that the function uses
(`module_kept_var_idx`); it returns one token per ordered effect, then the results.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Sequence

from ..ir import Module
from .encoding import BytecodeError

__all__ = ["Exported", "Aval", "read_exported", "is_jax_exported", "load_exported"]

# jax's DType enum (serialization.fbs)
_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float16", "float32", "float64", "complex64", "complex128", "bfloat16", "int4",
           "uint4", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
           "float8_e5m2fnuz", "float0", "float8_e4m3", "float8_e3m4", "float8_e8m0fnu",
           "float4_e2m1fn", "key<fry>", "key<rbg>", "key<unsafe_rbg>"]


@dataclass
class Aval:
    shape: tuple[str, ...]   # dimension sizes (symbolic ones as their expressions)
    dtype: str
    token: bool = False

    def __str__(self) -> str:
        return "token" if self.token else f"{self.dtype}[{','.join(self.shape)}]"


@dataclass
class Exported:
    """What `jax.export.Exported.serialize()` holds (the fields shlo needs)."""

    serialization_version: int
    function_name: str
    in_avals: list[Aval]
    out_avals: list[Aval]
    platforms: list[str]
    ordered_effects: list[str]
    unordered_effects: list[str]
    mlir_module_serialized: bytes
    calling_convention_version: int
    module_kept_var_idx: list[int]
    uses_global_constants: bool
    nr_devices: int
    disabled_checks: list[str] = field(default_factory=list)


class _FB:
    """A bounds-checked flatbuffer reader."""

    def __init__(self, data: bytes) -> None:
        self.d = data

    def _need(self, pos: int, n: int) -> None:
        if pos < 0 or pos + n > len(self.d):
            raise BytecodeError(f"jax export flatbuffer: read of {n} bytes at {pos} is past the "
                                f"end ({len(self.d)} bytes)", pos, "jax_export")

    def u8(self, p: int) -> int:
        self._need(p, 1)
        return self.d[p]

    def u16(self, p: int) -> int:
        self._need(p, 2)
        return struct.unpack_from("<H", self.d, p)[0]

    def i16(self, p: int) -> int:
        self._need(p, 2)
        return struct.unpack_from("<h", self.d, p)[0]

    def u32(self, p: int) -> int:
        self._need(p, 4)
        return struct.unpack_from("<I", self.d, p)[0]

    def i32(self, p: int) -> int:
        self._need(p, 4)
        return struct.unpack_from("<i", self.d, p)[0]

    def root(self) -> int:
        return self.u32(0)

    def field(self, table: int, voffset: int) -> int:
        """The position of a table field (0 when absent)."""
        vt = table - self.i32(table)
        vsize = self.u16(vt)
        if voffset >= vsize:
            return 0
        off = self.u16(vt + voffset)
        return table + off if off else 0

    def indirect(self, p: int) -> int:
        return p + self.u32(p)

    def string(self, table: int, voffset: int) -> str | None:
        p = self.field(table, voffset)
        if not p:
            return None
        s = self.indirect(p)
        n = self.u32(s)
        self._need(s + 4, n)
        return self.d[s + 4:s + 4 + n].decode("utf-8", "replace")

    def vector(self, table: int, voffset: int) -> tuple[int, int]:
        """(position of the first element, length); (0, 0) when absent."""
        p = self.field(table, voffset)
        if not p:
            return 0, 0
        v = self.indirect(p)
        n = self.u32(v)
        if n > len(self.d):
            raise BytecodeError(f"jax export flatbuffer: vector of {n} elements is longer than "
                                "the file", v, "jax_export")
        return v + 4, n

    def tables(self, table: int, voffset: int) -> list[int]:
        start, n = self.vector(table, voffset)
        return [self.indirect(start + 4 * i) for i in range(n)]

    def strings(self, table: int, voffset: int) -> list[str]:
        out = []
        for s in self.tables(table, voffset):
            n = self.u32(s)
            self._need(s + 4, n)
            out.append(self.d[s + 4:s + 4 + n].decode("utf-8", "replace"))
        return out


def _aval(fb: _FB, t: int) -> Aval:
    kind_p = fb.field(t, 4)
    kind = fb.u8(kind_p) if kind_p else 0
    shape = tuple(fb.strings(t, 6))
    dt_p = fb.field(t, 8)
    dt = fb.u8(dt_p) if dt_p else 0
    return Aval(shape, _DTYPES[dt] if dt < len(_DTYPES) else f"dtype#{dt}", kind == 1)


def is_jax_exported(data: bytes) -> bool:
    """Whether ``data`` looks like `Exported.serialize()` output (a flatbuffer whose root
    table has a function name and an embedded MLIR bytecode module)."""
    if len(data) < 16 or data[:4] == b"ML\xefR":
        return False
    try:
        e = read_exported(data)
    except (BytecodeError, UnicodeDecodeError, struct.error, IndexError):
        return False
    return e.mlir_module_serialized[:4] == b"ML\xefR"


def read_exported(data: bytes) -> Exported:
    """The fields of a serialized `jax.export.Exported`."""
    fb = _FB(bytes(data))
    t = fb.root()

    def u16(vo: int, default: int = 0) -> int:
        p = fb.field(t, vo)
        return fb.u16(p) if p else default

    uniques = [_aval(fb, x) for x in fb.tables(t, 42)]

    def avals(direct: int, idxs: int) -> list[Aval]:
        start, n = fb.vector(t, idxs)
        if n:
            out = []
            for i in range(n):
                k = fb.u32(start + 4 * i)
                if k >= len(uniques):
                    raise BytecodeError(f"jax export flatbuffer: aval index {k} out of range",
                                        start + 4 * i, "jax_export")
                out.append(uniques[k])
            return out
        return [_aval(fb, x) for x in fb.tables(t, direct)]

    def effects(vo: int) -> list[str]:
        return [fb.string(x, 4) or "" for x in fb.tables(t, vo)]

    mstart, mlen = fb.vector(t, 30)
    fb._need(mstart, mlen)
    kstart, klen = fb.vector(t, 34)
    kept = [fb.u16(kstart + 2 * i) for i in range(klen)]
    nd_p = fb.field(t, 40)
    nds_p = fb.field(t, 16)
    ugc = fb.field(t, 36)
    return Exported(
        serialization_version=u16(4), function_name=fb.string(t, 6) or "",
        in_avals=avals(10, 48), out_avals=avals(14, 50), platforms=fb.strings(t, 22),
        ordered_effects=effects(24), unordered_effects=effects(26),
        mlir_module_serialized=fb.d[mstart:mstart + mlen],
        calling_convention_version=u16(32), module_kept_var_idx=kept,
        uses_global_constants=bool(fb.u8(ugc)) if ugc else False,
        nr_devices=(fb.u32(nd_p) if nd_p else 0) or (fb.i16(nds_p) if nds_p else 1),
    )


def load_exported(data: bytes, filename: str | None = None) -> tuple[Module, Exported]:
    """The StableHLO module of a serialized `jax.export.Exported`, and its description."""
    from .portable import deserialize_portable_artifact

    e = read_exported(data)
    return deserialize_portable_artifact(e.mlir_module_serialized, filename), e


_ = Sequence
