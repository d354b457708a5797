"""The quant dialect's bytecode encodings (MLIR `QuantDialectBytecode.td`), for plain bytecode
holding quantized types (portable artifacts carry them as VHLO types instead).

    1 any_quantized           varint flags, type storage, svarint min, svarint max
    2 any_quantized+expressed varint flags, type storage, type expressed, svarint min, max
    3 calibrated              type expressed, f64 min, f64 max
    4 uniform                 varint flags, type storage, type expressed, f64 scale,
                              svarint zero point, svarint storage min, svarint storage max
    5 uniform per axis        varint flags, type storage, type expressed, varint dimension,
                              svarint min, svarint max, f64 scales[], svarint zero points[]
    6 uniform sub-channel     (not supported by shlo)

`flags` bit 0 is `Signed`; the storage type itself is signless. shlo models uniform types
(4, 5); the others are reported as unsupported.
"""

from __future__ import annotations

from typing import Any

from ..types import IntegerType, QuantizedType, Type
from .builtin import read_apint, write_apint
from .encoding import Cursor, Emitter

__all__ = ["QUANT"]


def _read_type(r: Any, cur: Cursor) -> Type:
    from .vhlo.text import to_builtin_type
    from .vhlo.types import TypeConversionError, VQuant, VQuantPerAxis

    start = cur.pos
    code = cur.varint("quant type code")
    if code not in (4, 5):
        names = {1: "!quant.any", 2: "!quant.any", 3: "!quant.calibrated",
                 6: "!quant.uniform (sub-channel)"}
        if code in names:
            raise cur.error(f"quantized type {names[code]} is not supported by shlo", start)
        raise cur.error(f"unknown quant type code: {code}", start)
    flags = cur.varint("quant flags")
    st = r.type(cur.varint("storage type"))
    et = r.type(cur.varint("expressed type"))
    if not isinstance(st, IntegerType):
        raise cur.error("quantized storage type is not an integer type", start)
    if code == 4:
        scale = read_apint(cur, 64)
        zp = cur.svarint("zero point")
        lo, hi = cur.svarint("storage min"), cur.svarint("storage max")
        v: Any = VQuant(flags, st, et, scale, zp, lo, hi)
    else:
        qdim = cur.varint("quantized dimension")
        lo, hi = cur.svarint("storage min"), cur.svarint("storage max")
        scales = tuple(read_apint(cur, 64) for _ in range(cur.count("scales")))
        zps = tuple(cur.svarint("zero point") for _ in range(cur.count("zero points")))
        v = VQuantPerAxis(flags, st, et, qdim, scales, zps, lo, hi)
    try:
        return to_builtin_type(v)
    except (TypeConversionError, ValueError) as e:
        raise cur.error(f"invalid quantized type: {e}", start) from None


def _parts(t: QuantizedType) -> tuple[int, IntegerType, Type]:
    return (0 if t.storage_type.is_unsigned else 1, IntegerType(t.storage_type.width),
            t.expressed_type)


def _write_type(w: Any, e: Emitter, t: Any) -> bool:
    from .vhlo.types import f64_bits

    if not isinstance(t, QuantizedType):
        return False
    flags, st, et = _parts(t)
    per_axis = t.quantization_dimension is not None
    e.varint(5 if per_axis else 4)
    e.varint(flags)
    e.varint(w.type_index(st))
    e.varint(w.type_index(et))
    if not per_axis:
        write_apint(e, f64_bits(t.scales[0]), 64)
        e.svarint(int(t.zero_points[0]))
        e.svarint(t.min)
        e.svarint(t.max)
        return True
    e.varint(int(t.quantization_dimension))
    e.svarint(t.min)
    e.svarint(t.max)
    e.varint(len(t.scales))
    for s in t.scales:
        write_apint(e, f64_bits(s), 64)
    e.varint(len(t.zero_points))
    for z in t.zero_points:
        e.svarint(int(z))
    return True


class _Codec:
    read_type = staticmethod(_read_type)
    write_type = staticmethod(_write_type)

    @staticmethod
    def read_attr(r: Any, cur: Cursor) -> Any:
        raise cur.error(f"unknown quant attribute code: {cur.varint('quant attribute code')}")

    @staticmethod
    def write_attr(w: Any, e: Emitter, a: Any) -> bool:
        return False

    @staticmethod
    def attr_refs(a: Any) -> tuple:
        return ()

    @staticmethod
    def type_refs(t: Any) -> tuple:
        if isinstance(t, QuantizedType):
            _, st, et = _parts(t)
            return (st, et)
        return ()

    @staticmethod
    def can_write_attr(a: Any) -> bool:
        return False

    @staticmethod
    def can_write_type(t: Any) -> bool:
        return isinstance(t, QuantizedType)


QUANT = _Codec()
