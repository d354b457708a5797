"""The VHLO dialect's bytecode encoding of attributes and types (upstream `VhloBytecode.cpp`):
a leading varint code, then the parameters.

``r`` (reader) provides ``attr(i)``, ``type(i)``, ``string(i)``; ``w`` (writer) provides
``attr_index``, ``type_index``, ``string_index`` and ``blob``. Booleans in tensors are packed
eight to a byte (0xFF for a true splat), as upstream writes them; both that and one byte per
element are read.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...attributes import DenseElementsAttr
from ..builtin import dense_from_raw, read_apint, write_apint
from ..encoding import Cursor, Emitter
from . import attrs as A
from . import types as T
from .text import to_builtin_type
from .types import bits_f64, f64_bits

__all__ = ["read_attr", "read_type", "write_attr", "write_type", "attr_refs", "type_refs"]

_FUTURE = 42


def read_type(r: Any, cur: Cursor) -> Any:
    code = cur.varint("vhlo type code")
    s = T.SCALAR_CODES.get(code)
    if s is not None:
        return s
    if code == 20 or code == 21:
        enc = r.attr(cur.varint("tensor encoding")) if code == 21 else None
        n = cur.count("tensor rank")
        shape = []
        for _ in range(n):
            d = cur.svarint("dimension")
            if d == -(1 << 63):
                shape.append(None)
            elif d < 0:
                raise cur.error(f"negative dimension {d}")
            else:
                shape.append(d)
        return T.VTensor(tuple(shape), r.type(cur.varint("tensor element type")), enc)
    if code == 1:
        return T.VComplex(r.type(cur.varint("complex element type")))
    if code == 8:
        ins = tuple(r.type(cur.varint("input type")) for _ in range(cur.count("inputs")))
        outs = tuple(r.type(cur.varint("output type")) for _ in range(cur.count("outputs")))
        return T.VFunction(ins, outs)
    if code == 23:
        return T.VTuple(tuple(r.type(cur.varint("tuple type")) for _ in range(cur.count("size"))))
    if code == _FUTURE:
        return T.VFuture(tuple(r.type(cur.varint("future type"))
                               for _ in range(cur.count("size"))))
    if code == 25:
        return T.VUnranked(r.type(cur.varint("tensor element type")))
    if code == 24:
        flags = cur.varint("quant flags")
        st = r.type(cur.varint("storage type"))
        et = r.type(cur.varint("expressed type"))
        scale = read_apint(cur, 64)
        zp = cur.svarint("zero point")
        lo = cur.svarint("storage min")
        hi = cur.svarint("storage max")
        return T.VQuant(flags, st, et, scale, zp, lo, hi)
    if code == 30:
        flags = cur.varint("quant flags")
        st = r.type(cur.varint("storage type"))
        et = r.type(cur.varint("expressed type"))
        qdim = cur.varint("quantized dimension")
        lo = cur.svarint("storage min")
        hi = cur.svarint("storage max")
        scales = tuple(read_apint(cur, 64) for _ in range(cur.count("scales")))
        zps = tuple(cur.svarint("zero point") for _ in range(cur.count("zero points")))
        return T.VQuantPerAxis(flags, st, et, qdim, scales, zps, lo, hi)
    if code == 41:
        n = cur.count("buffer rank")
        shape = []
        for _ in range(n):
            d = cur.svarint("dimension")
            shape.append(None if d == -(1 << 63) else d)
        return T.VBuffer(tuple(shape), r.type(cur.varint("buffer element type")))
    raise cur.error(f"unknown vhlo type code: {code}")


def read_attr(r: Any, cur: Cursor) -> Any:
    code = cur.varint("vhlo attribute code")
    if code == 9:
        t = r.type(cur.varint("integer type"))
        try:
            width = A.integer_width(t)
        except ValueError:
            raise cur.error(f"integer attribute of type {T.type_text(t)}") from None
        return A.VInteger.from_bits(t, read_apint(cur, width))
    if code == 1:
        return A.VArray(tuple(r.attr(cur.varint("array element"))
                              for _ in range(cur.count("array size"))))
    if code == 14:
        return A.VString(r.string(cur.varint("string")))
    if code == 15:
        t = r.type(cur.varint("tensor type"))
        n = cur.varint("blob size")
        blob = cur.bytes(n, "tensor data")
        return A.VTensorAttr(t, _tensor_data(t, blob, cur))
    if code == 2:
        v = cur.varint("bool value")
        if v not in (0, 1):
            raise cur.error(f"unsupported value: {v}")
        return A.VBool(v == 1)
    enum = A.ENUM_BY_CODE.get(code)
    if enum is not None:
        kind, cases = enum
        v = cur.varint(f"{kind} value")
        case = cases.get(v)
        if case is None:
            raise cur.error(f"invalid {kind} value {v}")
        return A.VEnum(kind, case)
    if code == 17:
        return A.VTypeAttr(r.type(cur.varint("type")))
    if code == 6:
        items = []
        for _ in range(cur.count("dictionary size", 2)):
            k = r.attr(cur.varint("dictionary key"))
            items.append((k, r.attr(cur.varint("dictionary value"))))
        return A.VDict(tuple(items))
    if code == 8:
        t = r.type(cur.varint("float type"))
        try:
            width = A.float_width(t)
        except ValueError:
            raise cur.error(f"float attribute of type {T.type_text(t)}") from None
        return A.VFloat(t, read_apint(cur, width))
    if code == 10:
        outs = tuple(cur.svarint("index") for _ in range(cur.count("output tuple indices")))
        idx = cur.svarint("operand index")
        ins = tuple(cur.svarint("index") for _ in range(cur.count("operand tuple indices")))
        return A.VOutputOperandAlias(outs, idx, ins)
    if code == 18:
        bounds = []
        for _ in range(cur.count("bounds")):
            d = cur.svarint("bound")
            bounds.append(None if d == -(1 << 63) else d)
        return A.VTypeExtensions(tuple(bounds))
    if code == 20:
        atol = read_apint(cur, 64)
        rtol = read_apint(cur, 64)
        ulps = cur.svarint("ulps")
        mode = r.attr(cur.varint("mode"))
        return A.VResultAccuracy(atol, rtol, ulps, mode)
    if code == 21:
        return A.VSubAxisInfo(cur.svarint("pre_size"), cur.svarint("size"))
    if code == 22:
        name = r.attr(cur.varint("name"))
        has = cur.varint("has sub axis info")
        sub = r.attr(cur.varint("sub axis info")) if has else None
        return A.VAxisRef(name, sub)
    if code == 23:
        return A.VReplicaGroupMeshAxes(r.attr(cur.varint("mesh")), r.attr(cur.varint("axes")))
    if code == 24:
        return A.VMeshAxis(r.attr(cur.varint("name")), cur.svarint("size"))
    if code == 25:
        axes = r.attr(cur.varint("axes"))
        v = cur.varint("device ids")
        ids = r.attr(v >> 1) if v else None
        return A.VMesh(axes, ids)
    raise cur.error(f"unknown vhlo attribute code: {code}")


def _tensor_data(t: Any, blob: memoryview, cur: Cursor) -> DenseElementsAttr:
    try:
        bt = to_builtin_type(t)
    except T.TypeConversionError as e:
        raise cur.error(f"invalid tensor attribute type: {e}") from None
    if isinstance(t, T.VTensor) and t.element is T.BOOL and bt.is_static:
        n = t.num_elements
        packed = (n + 7) // 8
        if len(blob) == 1 and blob[0] == 0xFF:
            return DenseElementsAttr(bt, np.broadcast_to(np.bool_(True), bt.shape))
        if len(blob) == packed and len(blob) != n:
            raw = np.frombuffer(blob, np.uint8)
            arr = np.unpackbits(raw, bitorder="little")[:n].astype(np.bool_)
            return DenseElementsAttr(bt, arr.reshape(bt.shape))
        if len(blob) == 1 and n > 1:  # an unpacked splat (one byte per element)
            return DenseElementsAttr(bt, np.broadcast_to(np.bool_(blob[0] != 0), bt.shape))
        if len(blob) != n:
            raise cur.error(f"boolean tensor data of {len(blob)} bytes for {n} elements")
        arr = np.frombuffer(blob, np.uint8).astype(np.bool_)
        return DenseElementsAttr(bt, arr.reshape(bt.shape))
    return dense_from_raw(bt, blob, cur)


# --- writing ---------------------------------------------------------------------------------------


def type_refs(t: Any) -> tuple:
    if isinstance(t, T.VTensor):
        return ((t.encoding, t.element) if t.encoding is not None else (t.element,))
    return t.children()


def attr_refs(a: Any) -> tuple:
    return a.refs()


def write_type(w: Any, e: Emitter, t: Any) -> bool:
    e.varint(t.code)
    if isinstance(t, T.VScalar):
        return True
    if isinstance(t, T.VTensor):
        if t.encoding is not None:
            e.varint(w.attr_index(t.encoding))
        _dims(e, t.shape)
        e.varint(w.type_index(t.element))
    elif isinstance(t, (T.VComplex, T.VUnranked)):
        e.varint(w.type_index(t.element))
    elif isinstance(t, T.VFunction):
        e.varint(len(t.inputs))
        for x in t.inputs:
            e.varint(w.type_index(x))
        e.varint(len(t.outputs))
        for x in t.outputs:
            e.varint(w.type_index(x))
    elif isinstance(t, (T.VTuple, T.VFuture)):
        e.varint(len(t.types))
        for x in t.types:
            e.varint(w.type_index(x))
    elif isinstance(t, T.VQuant):
        e.varint(t.flags)
        e.varint(w.type_index(t.storage))
        e.varint(w.type_index(t.expressed))
        write_apint(e, t.scale_bits, 64)
        e.svarint(t.zero_point)
        e.svarint(t.storage_min)
        e.svarint(t.storage_max)
    elif isinstance(t, T.VQuantPerAxis):
        e.varint(t.flags)
        e.varint(w.type_index(t.storage))
        e.varint(w.type_index(t.expressed))
        e.varint(t.quantized_dimension)
        e.svarint(t.storage_min)
        e.svarint(t.storage_max)
        e.varint(len(t.scale_bits))
        for b in t.scale_bits:
            write_apint(e, b, 64)
        e.varint(len(t.zero_points))
        for z in t.zero_points:
            e.svarint(z)
    elif isinstance(t, T.VBuffer):
        _dims(e, t.shape)
        e.varint(w.type_index(t.element))
    else:
        return False
    return True


def _dims(e: Emitter, dims: tuple) -> None:
    e.varint(len(dims))
    for d in dims:
        e.svarint(-(1 << 63) if d is None else d)


def write_attr(w: Any, e: Emitter, a: Any) -> bool:
    e.varint(a.code)
    t = type(a)
    if t is A.VInteger:
        e.varint(w.type_index(a.type))
        write_apint(e, a.bits, A.integer_width(a.type))
    elif t is A.VArray:
        e.varint(len(a.values))
        for x in a.values:
            e.varint(w.attr_index(x))
    elif t is A.VString:
        e.varint(w.string_index(a.value))
    elif t is A.VTensorAttr:
        e.varint(w.type_index(a.type))
        w.blob(e, tensor_blob(a))
    elif t is A.VBool:
        e.varint(1 if a.value else 0)
    elif t is A.VEnum:
        e.varint(a.number)
    elif t is A.VTypeAttr:
        e.varint(w.type_index(a.value))
    elif t is A.VDict:
        e.varint(len(a.items))
        for k, v in a.items:
            e.varint(w.attr_index(k))
            e.varint(w.attr_index(v))
    elif t is A.VFloat:
        e.varint(w.type_index(a.type))
        write_apint(e, a.bits, A.float_width(a.type))
    elif t is A.VOutputOperandAlias:
        _svarints(e, a.output_tuple_indices)
        e.svarint(a.operand_index)
        _svarints(e, a.operand_tuple_indices)
    elif t is A.VTypeExtensions:
        _dims(e, a.bounds)
    elif t is A.VResultAccuracy:
        write_apint(e, a.atol_bits, 64)
        write_apint(e, a.rtol_bits, 64)
        e.svarint(a.ulps)
        e.varint(w.attr_index(a.mode))
    elif t is A.VSubAxisInfo:
        e.svarint(a.pre_size)
        e.svarint(a.size)
    elif t is A.VAxisRef:
        e.varint(w.attr_index(a.name))
        if a.sub_axis_info is not None:
            e.varint(1)
            e.varint(w.attr_index(a.sub_axis_info))
        else:
            e.varint(0)
    elif t is A.VReplicaGroupMeshAxes:
        e.varint(w.attr_index(a.mesh))
        e.varint(w.attr_index(a.axes))
    elif t is A.VMeshAxis:
        e.varint(w.attr_index(a.name))
        e.svarint(a.size)
    elif t is A.VMesh:
        e.varint(w.attr_index(a.axes))
        if a.device_ids is None:
            e.varint(0)
        else:
            e.varint((w.attr_index(a.device_ids) << 1) | 1)
    else:
        return False
    return True


def _svarints(e: Emitter, xs: tuple) -> None:
    e.varint(len(xs))
    for x in xs:
        e.svarint(x)


def tensor_blob(a: A.VTensorAttr) -> bytes:
    """The data of a VHLO tensor: MLIR's raw data, with booleans packed (0xFF: a true splat)."""
    raw = a.raw()
    t = a.type
    if isinstance(t, T.VTensor) and t.element is T.BOOL:
        n = t.num_elements
        if len(raw) == 1 and n > 1:
            return b"\xff" if raw[0] else b"\x00"
        arr = np.frombuffer(raw, np.uint8).astype(np.bool_)
        return np.packbits(arr, bitorder="little").tobytes()
    return raw


_ = (bits_f64, f64_bits)


def can_write_attr(a: Any) -> bool:
    return isinstance(a, A.VhloAttr)


def can_write_type(t: Any) -> bool:
    return isinstance(t, T.VhloType)
