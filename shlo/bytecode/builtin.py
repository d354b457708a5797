"""The builtin dialect's attribute and type encodings (llvm-project
`mlir/include/mlir/IR/BuiltinDialectBytecode.td`), read into and written from shlo's attributes,
types and locations.

Codes are the position in upstream's `BuiltinDialectAttributes` / `BuiltinDialectTypes` lists;
the float8/6/4 and tf32 types and `FileLineColRange` locations were appended to those lists
later (type codes 21-32, attribute code 22). Attributes shlo does not model (dense strings,
sparse elements, distinct, typed strings, vector/memref types) are kept as opaque text.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..attributes import (
    ArrayAttr, BoolAttr, DenseArrayAttr, DenseElementsAttr, DenseResourceAttr, DictAttr,
    FloatAttr, IntegerAttr, OpaqueAttr, StringAttr, SymbolRefAttr, TypeAttr, UnitAttr,
)
from ..ir import CallSiteLoc, FileLineColLoc, FusedLoc, Location, NameLoc, UNKNOWN_LOC, UnknownLoc
from ..types import (
    ComplexType, ElementType, FloatType, FunctionType, IndexType, IntegerType, OpaqueType,
    QuantizedType, TensorType, TupleType, Type, element_type,
)
from .encoding import BytecodeError, Cursor, Emitter

__all__ = ["read_attr", "read_type", "write_attr", "write_type", "attr_refs", "type_refs",
           "dense_from_raw", "FLOAT_CODES", "apint_width", "read_apint", "write_apint",
           "float_semantics_width", "is_builtin_attr", "is_builtin_type"]

# --- codes ----------------------------------------------------------------------------------------

A_ARRAY, A_DICT, A_STRING, A_STRING_TYPED, A_FLAT_SYMBOL, A_SYMBOL, A_TYPE, A_UNIT, A_INTEGER, \
    A_FLOAT, A_CALLSITE, A_FILE_LINE_COL, A_FUSED, A_FUSED_META, A_NAME, A_UNKNOWN, \
    A_DENSE_RESOURCE, A_DENSE_ARRAY, A_DENSE, A_DENSE_STRING, A_SPARSE, A_DISTINCT, \
    A_FILE_LINE_COL_RANGE = range(23)

T_INTEGER, T_INDEX, T_FUNCTION, T_BF16, T_F16, T_F32, T_F64, T_F80, T_F128, T_COMPLEX, \
    T_MEMREF, T_MEMREF_SPACE, T_NONE, T_TENSOR, T_TENSOR_ENC, T_TUPLE, T_UNRANKED_MEMREF, \
    T_UNRANKED_MEMREF_SPACE, T_UNRANKED, T_VECTOR, T_VECTOR_SCALABLE = range(21)

FLOAT_CODES: dict[int, str] = {
    T_BF16: "bf16", T_F16: "f16", T_F32: "f32", T_F64: "f64", 21: "tf32", 22: "f8E5M2",
    23: "f8E4M3", 24: "f8E4M3FN", 25: "f8E5M2FNUZ", 26: "f8E4M3FNUZ", 27: "f8E4M3B11FNUZ",
    28: "f8E3M4", 29: "f4E2M1FN", 30: "f6E2M3FN", 31: "f6E3M2FN", 32: "f8E8M0FNU",
}
_FLOAT_TO_CODE = {v: k for k, v in FLOAT_CODES.items()}
_SIGNEDNESS = ("signless", "signed", "unsigned")
_DYNAMIC = -(1 << 63)
_INDEX = element_type("index")
_I1 = element_type("i1")
_I64 = element_type("i64")


def float_semantics_width(t: Any) -> int:
    """The bit width of a float type's APFloat bit pattern (19 for tf32)."""
    name = t.name
    if name == "tf32":
        return 19
    if name in ("bf16", "f16"):
        return 16
    if name == "f32":
        return 32
    if name == "f64":
        return 64
    return int(name[1])


def apint_width(t: Any) -> int:
    if isinstance(t, IndexType) or getattr(t, "name", None) == "index":
        return 64
    if isinstance(t, IntegerType):
        return t.width
    if isinstance(t, FloatType):
        return float_semantics_width(t)
    raise ValueError(f"no integer width for {t}")


def read_apint(cur: Cursor, width: int) -> int:
    """An APInt of ``width`` bits (`readAPIntWithKnownWidth`), as its unsigned bit pattern."""
    mask = (1 << width) - 1
    if width <= 8:
        return cur.byte("APInt byte") & mask
    if width <= 64:
        return cur.svarint("APInt") & mask
    words = cur.count("APInt word count")
    v = 0
    for i in range(words):
        v |= (cur.svarint("APInt word") & 0xFFFFFFFFFFFFFFFF) << (64 * i)
    return v & mask


def write_apint(e: Emitter, bits: int, width: int) -> None:
    """`writeAPIntWithKnownWidth` of the unsigned bit pattern ``bits``."""
    bits &= (1 << width) - 1
    if width <= 8:
        e.byte(bits)
        return
    if width <= 64:
        s = bits - (1 << 64) if bits >> 63 else bits
        e.svarint(s)
        return
    words = []
    v = bits
    while v:
        words.append(v & 0xFFFFFFFFFFFFFFFF)
        v >>= 64
    e.varint(len(words) or 1)
    for w in words or [0]:
        e.svarint(w - (1 << 64) if w >> 63 else w)


def _signed(bits: int, width: int) -> int:
    return bits - (1 << width) if width and bits >> (width - 1) else bits


# --- reading ---------------------------------------------------------------------------------------


def read_type(r: Any, cur: Cursor) -> Type:
    code = cur.varint("builtin type code")
    name = FLOAT_CODES.get(code)
    if name is not None:
        return element_type(name)
    if code == T_INTEGER:
        ws = cur.varint("integer width")
        width, sign = ws >> 2, ws & 3
        if sign > 2 or width == 0 or width > 1 << 24:
            raise cur.error(f"invalid integer type encoding {ws}")
        if sign == 0 or width == 1:
            try:
                return element_type(("i" if sign == 0 else "si" if sign == 1 else "ui") +
                                    str(width))
            except KeyError:
                return IntegerType(width, _SIGNEDNESS[sign])
        return IntegerType(width, _SIGNEDNESS[sign])
    if code == T_INDEX:
        return _INDEX
    if code == T_FUNCTION:
        ins = tuple(r.type(i) for i in _indices(cur, "function inputs"))
        outs = tuple(r.type(i) for i in _indices(cur, "function results"))
        return FunctionType(ins, outs)
    if code == T_COMPLEX:
        el = r.type(cur.varint("complex element type"))
        if not isinstance(el, FloatType):
            return OpaqueType(f"complex<{_text(el)}>")
        return ComplexType(el)
    if code in (T_TENSOR, T_TENSOR_ENC):
        enc = r.attr(cur.varint("tensor encoding")) if code == T_TENSOR_ENC else None
        shape = _shape(cur)
        el = r.type(cur.varint("tensor element type"))
        if not isinstance(el, ElementType):
            return OpaqueType(f"tensor<{_dims_text(shape)}{_text(el)}" +
                              (f", {_attr_text(enc)}" if enc is not None else "") + ">")
        return TensorType(shape, el, enc)
    if code == T_UNRANKED:
        el = r.type(cur.varint("tensor element type"))
        return TensorType(None, el) if isinstance(el, ElementType) else \
            OpaqueType(f"tensor<*x{_text(el)}>")
    if code == T_TUPLE:
        return TupleType(tuple(r.type(i) for i in _indices(cur, "tuple types")))
    if code == T_NONE:
        return OpaqueType("none")
    if code in (T_F80, T_F128):
        return OpaqueType("f80" if code == T_F80 else "f128")
    if code in (T_VECTOR, T_VECTOR_SCALABLE):
        nscal = cur.varint("scalable dims") if code == T_VECTOR_SCALABLE else 0
        shape = _shape(cur)
        el = r.type(cur.varint("vector element type"))
        dims = "".join(("[" + str(d) + "]" if i >= len(shape) - nscal else str(d)) + "x"
                       for i, d in enumerate(shape))
        return OpaqueType(f"vector<{dims}{_text(el)}>")
    if code in (T_MEMREF, T_MEMREF_SPACE):
        space = r.attr(cur.varint("memory space")) if code == T_MEMREF_SPACE else None
        shape = _shape(cur)
        el = r.type(cur.varint("memref element type"))
        layout = r.attr(cur.varint("memref layout"))
        text = f"memref<{_dims_text(shape)}{_text(el)}"
        lt = _attr_text(layout)
        if lt and not _is_identity_map(lt):
            text += ", " + lt
        if space is not None:
            text += ", " + _attr_text(space)
        return OpaqueType(text + ">")
    if code in (T_UNRANKED_MEMREF, T_UNRANKED_MEMREF_SPACE):
        space = r.attr(cur.varint("memory space")) if code == T_UNRANKED_MEMREF_SPACE else None
        el = r.type(cur.varint("memref element type"))
        return OpaqueType(f"memref<*x{_text(el)}" +
                          (f", {_attr_text(space)}" if space is not None else "") + ">")
    raise cur.error(f"unknown builtin type code {code}")


def _is_identity_map(text: str) -> bool:
    import re

    m = re.fullmatch(r"affine_map<\(([^)]*)\) -> \(([^)]*)\)>", text.strip())
    return bool(m) and m.group(1).replace(" ", "") == m.group(2).replace(" ", "")


def _indices(cur: Cursor, what: str) -> list[int]:
    n = cur.count(what)
    return [cur.varint(what) for _ in range(n)]


def _shape(cur: Cursor) -> tuple:
    n = cur.count("tensor rank")
    out = []
    for _ in range(n):
        d = cur.svarint("dimension")
        if d == _DYNAMIC:
            out.append(None)
        elif d < 0:
            raise cur.error(f"negative dimension {d}")
        else:
            out.append(d)
    return tuple(out)


def _dims_text(shape: tuple) -> str:
    return "".join(("?" if d is None else str(d)) + "x" for d in shape)


def _text(t: Any) -> str:
    from ..syntax.printer import format_type

    try:
        return format_type(t)
    except (AttributeError, TypeError, KeyError, ValueError):  # a malformed type
        return repr(t)


def _attr_text(a: Any) -> str:
    if a is None:
        return ""
    from ..syntax.printer import format_attr

    try:
        return format_attr(a)
    except TypeError:
        return str(a)


def read_attr(r: Any, cur: Cursor) -> Any:
    code = cur.varint("builtin attribute code")
    if code == A_FILE_LINE_COL:  # first: one per op
        f = _str_attr(r, cur)
        return FileLineColLoc(f, cur.varint("line"), cur.varint("column"))
    if code == A_STRING:
        return StringAttr(r.string(cur.varint("string index")))
    if code == A_UNKNOWN:
        return UNKNOWN_LOC
    if code == A_DICT:
        n = cur.count("dictionary size", 2)
        items = []
        for _ in range(n):
            k = r.attr(cur.varint("dictionary key"))
            v = r.attr(cur.varint("dictionary value"))
            if not isinstance(k, StringAttr):
                raise cur.error("dictionary key is not a string attribute")
            items.append((k.value, v))
        return DictAttr(tuple(items))
    if code == A_ARRAY:
        return ArrayAttr(tuple(r.attr(i) for i in _indices(cur, "array size")))
    if code == A_INTEGER:
        t = r.type(cur.varint("integer type"))
        try:
            width = apint_width(t)
        except ValueError:
            raise cur.error(f"integer attribute of non-integer type {_text(t)}") from None
        bits = read_apint(cur, width)
        if isinstance(t, IntegerType) and t.width == 1:
            return BoolAttr(bool(bits))
        value = bits if isinstance(t, IntegerType) and t.is_unsigned else _signed(bits, width)
        return IntegerAttr(value, t)
    if code == A_FLOAT:
        t = r.type(cur.varint("float type"))
        if not isinstance(t, FloatType):
            raise cur.error(f"float attribute of non-float type {_text(t)}")
        bits = read_apint(cur, float_semantics_width(t))
        return FloatAttr(_float_from_bits(t, bits), t)
    if code == A_TYPE:
        return TypeAttr(r.type(cur.varint("type")))
    if code == A_UNIT:
        return UnitAttr()
    if code == A_FLAT_SYMBOL:
        return SymbolRefAttr(_str_attr(r, cur))
    if code == A_SYMBOL:
        root = _str_attr(r, cur)
        nested = []
        for i in _indices(cur, "nested references"):
            a = r.attr(i)
            if not isinstance(a, SymbolRefAttr):
                raise cur.error("nested symbol reference is not a symbol reference")
            nested.append(a.root)
        return SymbolRefAttr(root, tuple(nested))
    if code == A_STRING_TYPED:
        s = r.string(cur.varint("string index"))
        t = r.type(cur.varint("string type"))
        from ..syntax.lexer import escape_string

        return OpaqueAttr(f"{escape_string(s)} : {_text(t)}")
    if code == A_FILE_LINE_COL_RANGE:
        f = _str_attr(r, cur)
        n = cur.varint("location parameter count")
        if n > 4:
            raise cur.error(f"invalid file:line:col range with {n} parameters")
        v = [cur.varint("location") for _ in range(n)]
        if n == 0:
            return FileLineColLoc(f, 0, 0)
        if n == 1:
            return FileLineColLoc(f, v[0], 0)
        if n == 2:
            return FileLineColLoc(f, v[0], v[1])
        if n == 3:
            return FileLineColLoc(f, v[0], v[1], None, v[2])
        return FileLineColLoc(f, v[0], v[1], v[2], v[3])
    if code == A_NAME:
        name = _str_attr(r, cur)
        child = _loc(r, cur)
        return NameLoc(name, None if isinstance(child, UnknownLoc) else child)
    if code == A_CALLSITE:
        return CallSiteLoc(_loc(r, cur), _loc(r, cur))
    if code in (A_FUSED, A_FUSED_META):
        locs = tuple(_loc_of(cur, r.attr(i)) for i in _indices(cur, "fused locations"))
        meta = r.attr(cur.varint("fused metadata")) if code == A_FUSED_META else None
        return FusedLoc(locs, meta)
    if code == A_DENSE:
        t = r.type(cur.varint("dense type"))
        n = cur.varint("blob size")
        blob = cur.bytes(n, "dense elements data")
        return dense_from_raw(t, blob, cur)
    if code == A_DENSE_ARRAY:
        t = r.type(cur.varint("dense array type"))
        size = cur.varint("dense array size")
        n = cur.varint("blob size")
        blob = cur.bytes(n, "dense array data")
        return _dense_array(t, size, blob, cur)
    if code == A_DENSE_RESOURCE:
        t = r.type(cur.varint("dense resource type"))
        handle = cur.varint("resource handle")
        return r.dense_resource(t, handle, cur)
    if code == A_DENSE_STRING:
        t = r.type(cur.varint("dense string type"))
        splat = cur.varint("splat flag")
        count = 1 if splat else _num_elements(t)
        if count * 1 > cur.remaining:
            raise cur.error("dense string count exceeds the data")
        strs = [r.string(cur.varint("string")) for _ in range(count)]
        from ..syntax.lexer import escape_string

        body = escape_string(strs[0]) if splat else \
            "[" + ", ".join(escape_string(s) for s in strs) + "]"
        return OpaqueAttr(f"dense<{body}> : {_text(t)}")
    if code == A_SPARSE:
        t = r.type(cur.varint("sparse type"))
        idx = r.attr(cur.varint("sparse indices"))
        vals = r.attr(cur.varint("sparse values"))
        return OpaqueAttr(f"sparse<{_attr_text(idx)}, {_attr_text(vals)}> : {_text(t)}")
    if code == A_DISTINCT:
        a = r.attr(cur.varint("distinct attribute"))
        return OpaqueAttr(f"distinct[0]<{_attr_text(a)}>")
    raise cur.error(f"unknown builtin attribute code {code}")


def _str_attr(r: Any, cur: Cursor) -> str:
    a = r.attr(cur.varint("string attribute"))
    if not isinstance(a, StringAttr):
        raise cur.error("expected a string attribute")
    return a.value


def _loc(r: Any, cur: Cursor) -> Location:
    return _loc_of(cur, r.attr(cur.varint("location")))


def _loc_of(cur: Cursor, a: Any) -> Location:
    if not isinstance(a, Location):
        raise cur.error("expected a location attribute")
    return a


def _num_elements(t: Any) -> int:
    if isinstance(t, TensorType) and t.shape is not None:
        n = 1
        for d in t.shape:
            n *= d or 0
        return n
    return 1


def _float_from_bits(t: FloatType, bits: int) -> float:
    if t.name == "tf32":
        return float(np.uint32(bits << 13).view(np.float32))
    dt = t.dtype
    u = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize]
    return float(np.array([bits], dtype=u).view(dt)[0])


def _elem_dtype(et: Any) -> np.dtype:
    if isinstance(et, QuantizedType):
        return et.storage_type.dtype
    return et.dtype


def dense_from_raw(t: Any, blob: memoryview | bytes, cur: Cursor | None = None) -> Any:
    """A DenseElementsAttr of type ``t`` from MLIR's raw data: all elements, or one element
    for a splat (kept as a broadcast view: nothing larger than the data is allocated). Bools
    may be one byte per element or packed bits (older MLIR)."""
    if not isinstance(t, TensorType) or t.shape is None or not t.is_static:
        raise _err(cur, f"dense elements of type {_text(t)} (not a static tensor)")
    et = t.element_type
    try:
        dt = _elem_dtype(et)
    except Exception:
        raise _err(cur, f"dense elements of element type {_text(et)}") from None
    n = t.num_elements
    size = dt.itemsize
    nbytes = len(blob)
    if isinstance(et, IntegerType) and et.width == 1:
        raw = np.frombuffer(blob, np.uint8)
        if nbytes == 1 and n > 1 and raw[0] in (0, 0xFF):
            return DenseElementsAttr(t, np.broadcast_to(np.bool_(raw[0] != 0), t.shape))
        if nbytes == n:
            arr = raw.astype(np.bool_)
        elif nbytes == (n + 7) // 8:
            arr = np.unpackbits(raw, bitorder="little")[:n].astype(np.bool_)
        else:
            raise _err(cur, f"dense i1 data of {nbytes} bytes for {n} elements")
        return DenseElementsAttr(t, arr.reshape(t.shape))
    if nbytes == size * n:
        arr = np.frombuffer(blob, dt) if n else np.zeros(0, dt)
        return DenseElementsAttr(t, arr.reshape(t.shape))
    if nbytes == size:
        return DenseElementsAttr(t, np.broadcast_to(np.frombuffer(blob, dt)[0], t.shape))
    raise _err(cur, f"dense data of {nbytes} bytes does not fit {_text(t)} "
                    f"({n} elements of {size} bytes)")


def _err(cur: Cursor | None, msg: str) -> BytecodeError:
    return cur.error(msg) if cur is not None else BytecodeError(msg)


def _dense_array(t: Any, size: int, blob: memoryview, cur: Cursor) -> DenseArrayAttr:
    if isinstance(t, IntegerType) and t.width == 1:
        raw = np.frombuffer(blob, np.uint8)
        if len(raw) == size:
            vals = tuple(bool(x) for x in raw)
        elif len(raw) == (size + 7) // 8:
            vals = tuple(bool(x) for x in np.unpackbits(raw, bitorder="little")[:size])
        else:
            raise cur.error(f"dense bool array of {len(raw)} bytes for {size} elements")
        return DenseArrayAttr(t, vals)
    if not isinstance(t, (IntegerType, FloatType)):
        raise cur.error(f"dense array of element type {_text(t)}")
    try:
        dt = t.dtype
    except (KeyError, TypeError, ValueError):
        raise cur.error(f"dense array of element type {_text(t)}") from None
    if len(blob) != size * dt.itemsize:
        raise cur.error(f"dense array data of {len(blob)} bytes for {size} elements")
    arr = np.frombuffer(blob, dt)
    if isinstance(t, FloatType):
        return DenseArrayAttr(t, tuple(float(x) for x in arr))
    return DenseArrayAttr(t, tuple(int(x) for x in arr))


# --- writing ---------------------------------------------------------------------------------------
# ``w`` is the writer: w.attr_index(a), w.type_index(t), w.string_index(s), w.blob(e, data).


def is_builtin_type(t: Any) -> bool:
    return isinstance(t, (ElementType, FunctionType, TensorType, TupleType)) and \
        not isinstance(t, QuantizedType) or (isinstance(t, OpaqueType) and t.text == "none")


def is_builtin_attr(a: Any) -> bool:
    return isinstance(a, (ArrayAttr, DictAttr, StringAttr, SymbolRefAttr, TypeAttr, UnitAttr,
                          IntegerAttr, BoolAttr, FloatAttr, DenseArrayAttr, DenseElementsAttr,
                          Location))


def type_refs(t: Any) -> tuple:
    """The attributes and types a builtin type's encoding refers to, in write order."""
    if isinstance(t, TensorType):
        el = (t.element_type,)
        return ((t.encoding,) + el) if t.encoding is not None else el
    if isinstance(t, ComplexType):
        return (t.element,)
    if isinstance(t, FunctionType):
        return t.inputs + t.results
    if isinstance(t, TupleType):
        return t.types
    return ()


def _key_attrs(d: DictAttr) -> tuple:
    out: list[Any] = []
    for k, v in sorted(d.items, key=lambda kv: kv[0]):
        out.append(StringAttr(k))
        out.append(v)
    return tuple(out)


def attr_refs(a: Any) -> tuple:
    """The attributes and types a builtin attribute's encoding refers to, in write order."""
    t = type(a)
    if t is ArrayAttr:
        return a.values
    if t is DictAttr:
        return _key_attrs(a)
    if t is IntegerAttr:
        return (a.type if a.type is not None else _I64,)
    if t is BoolAttr:
        return (_I1,)
    if t is FloatAttr:
        return (a.type if a.type is not None else element_type("f64"),)
    if t is TypeAttr:
        return (a.type,)
    if t is SymbolRefAttr:
        return (StringAttr(a.root),) + tuple(SymbolRefAttr(n) for n in a.nested)
    if t is DenseElementsAttr or t is DenseArrayAttr or t is DenseResourceAttr:
        return (a.element_type if t is DenseArrayAttr else a.type,)
    if t is FileLineColLoc:
        return (StringAttr(a.file),)
    if t is NameLoc:
        return (StringAttr(a.name), a.child if a.child is not None else UNKNOWN_LOC)
    if t is CallSiteLoc:
        return (a.callee, a.caller)
    if t is FusedLoc:
        return a.locations + ((a.metadata,) if a.metadata is not None else ())
    return ()


def write_type(w: Any, e: Emitter, t: Any) -> bool:
    """Encode builtin type ``t``; False when it has no builtin encoding."""
    if isinstance(t, FloatType):
        code = _FLOAT_TO_CODE.get(t.name)
        if code is None:
            return False
        e.varint(code)
        return True
    if isinstance(t, IntegerType):
        e.varint(T_INTEGER)
        e.varint((t.width << 2) | _SIGNEDNESS.index(t.signedness) if t.width != 1 else 4)
        return True
    if isinstance(t, IndexType):
        e.varint(T_INDEX)
        return True
    if isinstance(t, TensorType):
        if t.shape is None:
            e.varint(T_UNRANKED)
        else:
            if t.encoding is not None:
                e.varint(T_TENSOR_ENC)
                e.varint(w.attr_index(t.encoding))
            else:
                e.varint(T_TENSOR)
            e.varint(len(t.shape))
            for d in t.shape:
                e.svarint(_DYNAMIC if d is None else d)
        e.varint(w.type_index(t.element_type))
        return True
    if isinstance(t, ComplexType):
        e.varint(T_COMPLEX)
        e.varint(w.type_index(t.element))
        return True
    if isinstance(t, FunctionType):
        e.varint(T_FUNCTION)
        e.varint(len(t.inputs))
        for x in t.inputs:
            e.varint(w.type_index(x))
        e.varint(len(t.results))
        for x in t.results:
            e.varint(w.type_index(x))
        return True
    if isinstance(t, TupleType):
        e.varint(T_TUPLE)
        e.varint(len(t.types))
        for x in t.types:
            e.varint(w.type_index(x))
        return True
    if isinstance(t, OpaqueType) and t.text == "none":
        e.varint(T_NONE)
        return True
    return False


def write_attr(w: Any, e: Emitter, a: Any) -> bool:
    """Encode builtin attribute ``a``; False when it has no builtin encoding."""
    t = type(a)
    if t is FileLineColLoc and a.end_line is None and a.end_col is None:  # first: one per op
        e.varint(A_FILE_LINE_COL)
        e.varint(w.attr_index(StringAttr(a.file)))
        e.varint(a.line)
        e.varint(a.col)
    elif t is StringAttr:
        e.varint(A_STRING)
        e.varint(w.string_index(a.value))
    elif t is UnknownLoc:
        e.varint(A_UNKNOWN)
    elif t is DictAttr:
        e.varint(A_DICT)
        refs = _key_attrs(a)
        e.varint(len(refs) // 2)
        for x in refs:
            e.varint(w.attr_index(x))
    elif t is ArrayAttr:
        e.varint(A_ARRAY)
        e.varint(len(a.values))
        for x in a.values:
            e.varint(w.attr_index(x))
    elif t is IntegerAttr or t is BoolAttr:
        ty = _I1 if t is BoolAttr else (a.type if a.type is not None else _I64)
        e.varint(A_INTEGER)
        e.varint(w.type_index(ty))
        write_apint(e, int(a.value), apint_width(ty))
    elif t is FloatAttr:
        ty = a.type if a.type is not None else element_type("f64")
        e.varint(A_FLOAT)
        e.varint(w.type_index(ty))
        from .vhlo.attrs import float_bits

        write_apint(e, float_bits(ty, a.value), float_semantics_width(ty))
    elif t is TypeAttr:
        e.varint(A_TYPE)
        e.varint(w.type_index(a.type))
    elif t is UnitAttr:
        e.varint(A_UNIT)
    elif t is SymbolRefAttr:
        if a.nested:
            e.varint(A_SYMBOL)
            e.varint(w.attr_index(StringAttr(a.root)))
            e.varint(len(a.nested))
            for n in a.nested:
                e.varint(w.attr_index(SymbolRefAttr(n)))
        else:
            e.varint(A_FLAT_SYMBOL)
            e.varint(w.attr_index(StringAttr(a.root)))
    elif t is FileLineColLoc:
        if a.end_line is None and a.end_col is None:
            e.varint(A_FILE_LINE_COL)
            e.varint(w.attr_index(StringAttr(a.file)))
            e.varint(a.line)
            e.varint(a.col)
        else:
            e.varint(A_FILE_LINE_COL_RANGE)
            e.varint(w.attr_index(StringAttr(a.file)))
            if a.end_line is None or a.end_line == a.line:
                e.varint(3)
                e.varint(a.line)
                e.varint(a.col)
                e.varint(a.end_col if a.end_col is not None else a.col)
            else:
                e.varint(4)
                e.varint(a.line)
                e.varint(a.col)
                e.varint(a.end_line)
                e.varint(a.end_col if a.end_col is not None else 0)
    elif t is NameLoc:
        e.varint(A_NAME)
        e.varint(w.attr_index(StringAttr(a.name)))
        e.varint(w.attr_index(a.child if a.child is not None else UNKNOWN_LOC))
    elif t is CallSiteLoc:
        e.varint(A_CALLSITE)
        e.varint(w.attr_index(a.callee))
        e.varint(w.attr_index(a.caller))
    elif t is FusedLoc:
        e.varint(A_FUSED_META if a.metadata is not None else A_FUSED)
        e.varint(len(a.locations))
        for x in a.locations:
            e.varint(w.attr_index(x))
        if a.metadata is not None:
            e.varint(w.attr_index(a.metadata))
    elif t is DenseElementsAttr or t is DenseResourceAttr:  # resources are written inline
        e.varint(A_DENSE)
        e.varint(w.type_index(a.type))
        w.blob(e, builtin_dense_raw(a))
    elif t is DenseArrayAttr:
        e.varint(A_DENSE_ARRAY)
        e.varint(w.type_index(a.element_type))
        e.varint(len(a.values))
        et = a.element_type
        if isinstance(et, IntegerType) and et.width == 1:
            data = np.array(a.values, dtype=np.bool_).tobytes()
        else:
            data = np.array(a.values, dtype=et.dtype).tobytes()
        w.blob(e, data)
    else:
        return False
    return True


def builtin_dense_raw(a: DenseElementsAttr) -> bytes:
    """The raw data of a builtin dense elements attribute as MLIR writes it (bools as packed
    bits, 0xFF for a true splat, as the MLIR in jaxlib does)."""
    from .vhlo.attrs import dense_raw

    et = a.type.element_type
    if isinstance(et, IntegerType) and et.width == 1:
        arr = np.asarray(a.array, dtype=np.bool_).reshape(-1)
        if arr.size > 1 and (arr == arr[0]).all():
            return b"\xff" if arr[0] else b"\x00"
        if arr.size == 1:
            return b"\x01" if arr[0] else b"\x00"
        return np.packbits(arr, bitorder="little").tobytes()
    return dense_raw(a)


_ = (Any, IntegerAttr)


_WRITABLE_ATTRS = frozenset({StringAttr, UnknownLoc, DictAttr, ArrayAttr, IntegerAttr, BoolAttr,
                             FloatAttr, TypeAttr, UnitAttr, SymbolRefAttr, FileLineColLoc,
                             NameLoc, CallSiteLoc, FusedLoc, DenseElementsAttr, DenseArrayAttr})


def can_write_attr(a: Any) -> bool:
    return type(a) in _WRITABLE_ATTRS


def can_write_type(t: Any) -> bool:
    if isinstance(t, FloatType):
        return t.name in _FLOAT_TO_CODE
    if isinstance(t, QuantizedType):
        return False
    return isinstance(t, (IntegerType, IndexType, TensorType, ComplexType, FunctionType,
                          TupleType)) or (isinstance(t, OpaqueType) and t.text == "none")
