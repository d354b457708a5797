"""The StableHLO and CHLO dialects' own bytecode encodings (plain, unversioned bytecode, as
`stablehlo-opt -emit-bytecode` and jaxlib's `Operation.write_bytecode` write it).

Portable artifacts use VHLO (shlo/bytecode/vhlo); these encodings are the ones of
StablehloBytecode.cpp / ChloBytecode.cpp, a varint code then the attribute's fields:

    stablehlo attributes                               stablehlo types
     1 channel_handle     svarint handle, svarint type  0 token
     2 comparison_direction  varint case               1 future   types
     3 comparison_type       varint case
     4 conv               svarint, svarint, svarints, svarint, svarint, svarints, svarint,
                          svarint, svarints (input b/f/spatial, kernel i/o/spatial, output ...)
     5 dot                svarints x4 (lhs/rhs batching, lhs/rhs contracting)
     6 fft_type           varint case
     7 gather             svarints x5, svarint index_vector_dim
     8 precision          varint case
     9 rng_algorithm      varint case
    10 rng_distribution   varint case
    11 scatter            svarints x5, svarint index_vector_dim
    12 transpose          varint case
    13 type_extensions    svarints bounds (INT64_MIN for `?`)
    14 output_operand_alias  svarints, svarint, svarints
    15 dot_algorithm      type, type, type, svarint x3, bool byte
    16 result_accuracy_mode  varint case
    17 result_accuracy    f64 atol, f64 rtol (64-bit APInt), svarint ulps, attr mode
    18 replica_group_mesh_axes  attr mesh, varint n, attr axes[n]
    19 sub_axis_info      svarint pre_size, svarint size
    20 axis_ref           string, bool byte, [attr sub_axis_info]
    21 mesh_axis          string, svarint size
    22 mesh               attr (array of mesh_axis), bool byte, [attr device_ids]
    chlo attributes: 0 comparison_direction, 1 comparison_type.

Decoded attributes are rebuilt as the objects shlo's text parser makes of their text, so a
program reads the same from text and from bytecode. Attributes without an encoding here are
written as text, as MLIR does for attributes its dialect cannot encode.
"""

from __future__ import annotations

import struct
from typing import Any

from ..attributes import (
    ArrayAttr, ConvDimensionNumbers, EnumAttr, OpaqueAttr, StringAttr,
    StructAttr, SymbolRefAttr, TypeAttr,
)
from ..types import F64, OpaqueType, TokenType, Type
from .encoding import Cursor, Emitter

__all__ = ["STABLEHLO", "CHLO", "ENUM_CASES"]

DYNAMIC_BOUND = -(1 << 63)

# enum mnemonic -> (attribute code, cases in value order)
ENUM_CASES: dict[str, tuple[str, ...]] = {
    "comparison_direction": ("EQ", "NE", "GE", "GT", "LE", "LT"),
    "comparison_type": ("NOTYPE", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"),
    "fft_type": ("FFT", "IFFT", "RFFT", "IRFFT"),
    "precision": ("DEFAULT", "HIGH", "HIGHEST"),
    "rng_algorithm": ("DEFAULT", "THREE_FRY", "PHILOX"),
    "rng_distribution": ("", "UNIFORM", "NORMAL"),  # the cases start at 1
    "transpose": ("TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"),
    "result_accuracy_mode": ("DEFAULT", "HIGHEST", "TOLERANCE"),
}
_STABLEHLO_ENUM_CODES = {"comparison_direction": 2, "comparison_type": 3, "fft_type": 6,
                         "precision": 8, "rng_algorithm": 9, "rng_distribution": 10,
                         "transpose": 12, "result_accuracy_mode": 16}
_CHLO_ENUM_CODES = {"comparison_direction": 0, "comparison_type": 1}

_GATHER = ("offset_dims", "collapsed_slice_dims", "operand_batching_dims",
           "start_indices_batching_dims", "start_index_map")
_SCATTER = ("update_window_dims", "inserted_window_dims", "input_batching_dims",
            "scatter_indices_batching_dims", "scatter_dims_to_operand_dims")
_DOT = ("lhs_batching_dimensions", "rhs_batching_dimensions", "lhs_contracting_dimensions",
        "rhs_contracting_dimensions")
_STRUCT_CODES = {"stablehlo.channel_handle": 1, "stablehlo.dot": 5, "stablehlo.gather": 7,
                 "stablehlo.scatter": 11, "stablehlo.bounds": 13,
                 "stablehlo.output_operand_alias": 14, "stablehlo.dot_algorithm": 15,
                 "stablehlo.result_accuracy": 17, "stablehlo.replica_group_mesh_axes": 18,
                 "stablehlo.sub_axis_info": 19, "stablehlo.mesh_axis": 21, "stablehlo.mesh": 22}


# --- reading ------------------------------------------------------------------------------------


def _svarints(cur: Cursor, what: str) -> tuple[int, ...]:
    n = cur.count(what)
    return tuple(cur.svarint(what) for _ in range(n))


def _bool(cur: Cursor, what: str) -> bool:
    b = cur.byte(what)
    if b > 1:
        raise cur.error(f"invalid boolean {b} for {what}")
    return b == 1


def _enum(cur: Cursor, dialect: str, enum: str) -> EnumAttr:
    v = cur.varint(f"{enum} value")
    cases = ENUM_CASES[enum]
    if v >= len(cases) or not cases[v]:
        raise cur.error(f"invalid {dialect} {enum} value {v}")
    return EnumAttr(dialect, enum, cases[v])


def _list(xs: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(x) for x in xs) + "]"


def _parse(text: str, cur: Cursor) -> Any:
    from ..errors import ParseError
    from ..syntax.parser import Parser

    try:
        return Parser(text, "<bytecode>").parse_attribute()
    except ParseError as e:
        raise cur.error(f"cannot rebuild attribute {text}: {e.message}") from None


def _text(a: Any) -> str:
    if isinstance(a, OpaqueAttr):
        return a.text
    from ..syntax.printer import format_attr

    return format_attr(a)


def _read_stablehlo_attr(r: Any, cur: Cursor) -> Any:
    code = cur.varint("stablehlo attribute code")
    enum = next((k for k, c in _STABLEHLO_ENUM_CODES.items() if c == code), None)
    if enum is not None:
        return _enum(cur, "stablehlo", enum)
    if code == 1:
        h, t = cur.svarint("handle"), cur.svarint("type")
        return _parse(f"#stablehlo.channel_handle<handle = {h}, type = {t}>", cur)
    if code == 4:
        f = [cur.svarint("input batch dimension"), cur.svarint("input feature dimension"),
             _svarints(cur, "input spatial dimensions"),
             cur.svarint("kernel input feature dimension"),
             cur.svarint("kernel output feature dimension"),
             _svarints(cur, "kernel spatial dimensions"),
             cur.svarint("output batch dimension"), cur.svarint("output feature dimension"),
             _svarints(cur, "output spatial dimensions")]
        return ConvDimensionNumbers(*f)  # type: ignore[arg-type]
    if code == 5:
        lists = [_svarints(cur, n) for n in _DOT]
        body = ", ".join(f"{n} = {_list(v)}" for n, v in zip(_DOT, lists) if v)
        return _parse(f"#stablehlo.dot<{body}>", cur)
    if code in (7, 11):
        names = _GATHER if code == 7 else _SCATTER
        lists = [_svarints(cur, n) for n in names]
        ivd = cur.svarint("index_vector_dim")
        parts = [f"{n} = {_list(v)}" for n, v in zip(names, lists) if v]
        parts.append(f"index_vector_dim = {ivd}")
        kind = "gather" if code == 7 else "scatter"
        return _parse(f"#stablehlo.{kind}<{', '.join(parts)}>", cur)
    if code == 13:
        b = _svarints(cur, "bounds")
        return _parse("#stablehlo.bounds<" + ", ".join(
            "?" if x == DYNAMIC_BOUND else str(x) for x in b) + ">", cur)
    if code == 14:
        out = _svarints(cur, "output tuple indices")
        idx = cur.svarint("operand index")
        opd = _svarints(cur, "operand tuple indices")
        return _parse(f"#stablehlo.output_operand_alias<output_tuple_indices = {_list(out)}, "
                      f"operand_index = {idx}, operand_tuple_indices = {_list(opd)}>", cur)
    if code == 15:
        from ..syntax.printer import format_type

        ts = [format_type(r.type(cur.varint(n))) for n in
              ("lhs precision type", "rhs precision type", "accumulation type")]
        counts = [cur.svarint(n) for n in ("lhs component count", "rhs component count",
                                           "num primitive operations")]
        imprecise = _bool(cur, "allow imprecise accumulation")
        return _parse(
            f"#stablehlo.dot_algorithm<lhs_precision_type = {ts[0]}, rhs_precision_type = "
            f"{ts[1]}, accumulation_type = {ts[2]}, lhs_component_count = {counts[0]}, "
            f"rhs_component_count = {counts[1]}, num_primitive_operations = {counts[2]}, "
            f"allow_imprecise_accumulation = {'true' if imprecise else 'false'}>", cur)
    if code == 17:
        from ..syntax.dense import format_float

        atol, rtol = (_f64(cur.svarint(n)) for n in ("atol", "rtol"))
        ulps = cur.svarint("ulps")
        mode = r.attr(cur.varint("result accuracy mode"))
        return _parse(f"#stablehlo.result_accuracy<atol = {format_float(atol, F64)}, rtol = "
                      f"{format_float(rtol, F64)}, ulps = {ulps}, mode = {_text(mode)}>", cur)
    if code == 18:
        mesh = r.attr(cur.varint("mesh"))
        axes = [r.attr(cur.varint("axis")) for _ in range(cur.count("axes"))]
        m = _text(mesh)  # a symbol reference (`@mesh`) or a #stablehlo.mesh
        return _parse(f"#stablehlo.replica_group_mesh_axes<mesh = {m}, axes = ["
                      + ", ".join(_text(x) for x in axes) + "]>", cur)
    if code == 19:
        pre, size = cur.svarint("pre_size"), cur.svarint("size")
        return StructAttr("stablehlo.sub_axis_info", (("pre_size", pre), ("size", size)))
    if code == 20:
        from ..syntax.lexer import escape_string

        name = r.string(cur.varint("axis name"))
        s = f"#stablehlo.axis_ref<name = {escape_string(name)}"
        if _bool(cur, "has sub axis info"):
            sub = r.attr(cur.varint("sub axis info"))
            if not (isinstance(sub, StructAttr) and sub.name == "stablehlo.sub_axis_info"):
                raise cur.error("axis_ref's sub_axis_info is not a #stablehlo.sub_axis_info")
            s += f", sub_axis_info = ({sub.get('pre_size')}){sub.get('size')}"
        return _parse(s + ">", cur)
    if code == 21:
        from ..syntax.lexer import escape_string

        name = r.string(cur.varint("axis name"))
        size = cur.svarint("axis size")
        return _parse(f"#stablehlo.mesh_axis<name = {escape_string(name)}, size = {size}>", cur)
    if code == 22:
        axes = r.attr(cur.varint("mesh axes"))
        if not isinstance(axes, ArrayAttr):
            raise cur.error("mesh axes are not an array attribute")
        s = "#stablehlo.mesh<axes = [" + ", ".join(_text(x) for x in axes.values) + "]"
        if _bool(cur, "has device ids"):
            s += f", device_ids = {_text(r.attr(cur.varint('device ids')))}"
        return _parse(s + ">", cur)
    raise cur.error(f"unknown stablehlo attribute code: {code}")


def _f64(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits & 0xFFFFFFFFFFFFFFFF))[0]


def _read_stablehlo_type(r: Any, cur: Cursor) -> Type:
    code = cur.varint("stablehlo type code")
    if code == 0:
        return TokenType()
    if code == 1:
        from ..syntax.printer import format_type

        types = [r.type(cur.varint("future type")) for _ in range(cur.count("future types"))]
        return OpaqueType("!stablehlo.future<" + ", ".join(format_type(t) for t in types) + ">")
    raise cur.error(f"unknown stablehlo type code: {code}")


def _read_chlo_attr(r: Any, cur: Cursor) -> Any:
    code = cur.varint("chlo attribute code")
    for enum, c in _CHLO_ENUM_CODES.items():
        if c == code:
            return _enum(cur, "chlo", enum)
    raise cur.error(f"unknown chlo attribute code: {code}")


def _read_chlo_type(r: Any, cur: Cursor) -> Type:
    raise cur.error(f"unknown chlo type code: {cur.varint('chlo type code')}")


# --- writing ------------------------------------------------------------------------------------


def _ints(v: Any) -> tuple[int, ...]:
    from ..attributes import ints

    return tuple(ints(v, ()) or ())


def _axis_ref_parts(a: OpaqueAttr) -> tuple[str, Any] | None:
    """(name, sub_axis_info StructAttr or None) of `#stablehlo.axis_ref<...>` text."""
    from .vhlo.to_vhlo import _axis_ref_text

    try:
        v = _axis_ref_text(a.text)
    except (ValueError, AttributeError):
        return None
    sub = v.sub_axis_info
    if sub is not None:
        sub = StructAttr("stablehlo.sub_axis_info", (("pre_size", sub.pre_size),
                                                     ("size", sub.size)))
    return v.name.value, sub


def _mesh_axes(a: StructAttr) -> ArrayAttr:
    axes = a.get("axes", ArrayAttr(()))
    return axes if isinstance(axes, ArrayAttr) else ArrayAttr(tuple(axes))


def _default_mode() -> EnumAttr:
    return EnumAttr("stablehlo", "result_accuracy_mode", "DEFAULT")


def _stablehlo_code(a: Any) -> int | None:
    t = type(a)
    if t is EnumAttr:
        if a.dialect != "stablehlo" or a.value not in ENUM_CASES.get(a.enum, ()):
            return None
        return _STABLEHLO_ENUM_CODES.get(a.enum)
    if t is ConvDimensionNumbers:
        return 4
    if t is StructAttr:
        code = _STRUCT_CODES.get(a.name)
        if code == 18 and not isinstance(a.get("mesh"), (SymbolRefAttr, StructAttr)):
            return None
        return code
    if t is OpaqueAttr and a.text.startswith("#stablehlo.axis_ref<"):
        return 20 if _axis_ref_parts(a) is not None else None
    return None


def _stablehlo_attr_refs(a: Any) -> tuple:
    code = _stablehlo_code(a)
    if code == 15:
        return tuple(_type_of(a.get(n)) for n in
                     ("lhs_precision_type", "rhs_precision_type", "accumulation_type"))
    if code == 17:
        return (a.get("mode", _default_mode()),)
    if code == 18:
        return (a.get("mesh"),) + tuple(_mesh_axes(a).values)
    if code == 20:
        parts = _axis_ref_parts(a)
        return () if parts is None or parts[1] is None else (parts[1],)
    if code == 22:
        ids = a.get("device_ids")
        return (_mesh_axes(a),) + (() if ids is None else (ids,))
    return ()


def _type_of(x: Any) -> Type:
    return x.type if isinstance(x, TypeAttr) else x


def _write_stablehlo_attr(w: Any, e: Emitter, a: Any) -> bool:
    code = _stablehlo_code(a)
    if code is None:
        return False
    e.varint(code)
    if type(a) is EnumAttr:
        e.varint(ENUM_CASES[a.enum].index(a.value))
    elif code == 1:
        e.svarint(int(a.get("handle", 0)))
        e.svarint(int(a.get("type", 0)))
    elif code == 4:
        for f in (a.input_batch_dimension, a.input_feature_dimension,
                  a.input_spatial_dimensions, a.kernel_input_feature_dimension,
                  a.kernel_output_feature_dimension, a.kernel_spatial_dimensions,
                  a.output_batch_dimension, a.output_feature_dimension,
                  a.output_spatial_dimensions):
            if isinstance(f, int):
                e.svarint(f)
            else:
                _put(e, f)
    elif code == 5:
        for n in _DOT:
            _put(e, _ints(a.get(n, ())))
    elif code in (7, 11):
        for n in (_GATHER if code == 7 else _SCATTER):
            _put(e, _ints(a.get(n, ())))
        e.svarint(int(a.get("index_vector_dim", 0)))
    elif code == 13:
        _put(e, tuple(DYNAMIC_BOUND if x is None else int(x) for x in a.get("bounds", ())))
    elif code == 14:
        _put(e, _ints(a.get("output_tuple_indices", ())))
        e.svarint(int(a.get("operand_index", 0)))
        _put(e, _ints(a.get("operand_tuple_indices", ())))
    elif code == 15:
        for t in _stablehlo_attr_refs(a):
            e.varint(w.type_index(t))
        for n in ("lhs_component_count", "rhs_component_count", "num_primitive_operations"):
            e.svarint(int(a.get(n, 0)))
        e.byte(1 if a.get("allow_imprecise_accumulation", False) else 0)
    elif code == 17:
        for n in ("atol", "rtol"):
            bits = struct.unpack("<q", struct.pack("<d", float(a.get(n, 0.0))))[0]
            e.svarint(bits)
        e.svarint(int(a.get("ulps", 0)))
        e.varint(w.attr_index(a.get("mode", _default_mode())))
    elif code == 18:
        refs = _stablehlo_attr_refs(a)
        e.varint(w.attr_index(refs[0]))
        e.varint(len(refs) - 1)
        for x in refs[1:]:
            e.varint(w.attr_index(x))
    elif code == 19:
        e.svarint(int(a.get("pre_size")))
        e.svarint(int(a.get("size")))
    elif code == 20:
        name, sub = _axis_ref_parts(a)  # type: ignore[misc]
        e.varint(w.string_index(name))
        e.byte(0 if sub is None else 1)
        if sub is not None:
            e.varint(w.attr_index(sub))
    elif code == 21:
        name = a.get("name")
        e.varint(w.string_index(name.value if isinstance(name, StringAttr) else str(name)))
        e.svarint(int(a.get("size", 0)))
    elif code == 22:
        refs = _stablehlo_attr_refs(a)
        e.varint(w.attr_index(refs[0]))
        e.byte(1 if len(refs) > 1 else 0)
        if len(refs) > 1:
            e.varint(w.attr_index(refs[1]))
    return True


def _put(e: Emitter, xs: Any) -> None:
    xs = tuple(xs)
    e.varint(len(xs))
    for x in xs:
        e.svarint(int(x))


def _future_types(t: OpaqueType) -> tuple | None:
    text = t.text.strip()
    if not (text.startswith("!stablehlo.future<") and text.endswith(">")):
        return None
    from ..syntax.parser import Parser
    from .vhlo.text import split_top

    inner = text[len("!stablehlo.future<"):-1]
    try:
        return tuple(Parser(x).parse_type() for x in split_top(inner) if x.strip())
    except (ValueError, Exception):  # noqa: BLE001 - any parse failure means: write as text
        return None


def _write_stablehlo_type(w: Any, e: Emitter, t: Any) -> bool:
    if isinstance(t, TokenType):
        e.varint(0)
        return True
    if isinstance(t, OpaqueType):
        types = _future_types(t)
        if types is None:
            return False
        e.varint(1)
        e.varint(len(types))
        for x in types:
            e.varint(w.type_index(x))
        return True
    return False


def _write_chlo_attr(w: Any, e: Emitter, a: Any) -> bool:
    if not _chlo_can(a):
        return False
    e.varint(_CHLO_ENUM_CODES[a.enum])
    e.varint(ENUM_CASES[a.enum].index(a.value))
    return True


def _chlo_can(a: Any) -> bool:
    return type(a) is EnumAttr and a.dialect == "chlo" and a.enum in _CHLO_ENUM_CODES \
        and a.value in ENUM_CASES[a.enum]


class _Codec:
    def __init__(self, read_attr: Any, read_type: Any, write_attr: Any, write_type: Any,
                 attr_refs: Any, type_refs: Any, can_write_attr: Any,
                 can_write_type: Any) -> None:
        self.read_attr = read_attr
        self.read_type = read_type
        self.write_attr = write_attr
        self.write_type = write_type
        self.attr_refs = attr_refs
        self.type_refs = type_refs
        self.can_write_attr = can_write_attr
        self.can_write_type = can_write_type


STABLEHLO = _Codec(
    _read_stablehlo_attr, _read_stablehlo_type, _write_stablehlo_attr, _write_stablehlo_type,
    _stablehlo_attr_refs,
    lambda t: (_future_types(t) or ()) if isinstance(t, OpaqueType) else (),
    lambda a: _stablehlo_code(a) is not None,
    lambda t: isinstance(t, TokenType) or (isinstance(t, OpaqueType)
                                          and _future_types(t) is not None))

CHLO = _Codec(_read_chlo_attr, _read_chlo_type, _write_chlo_attr, lambda w, e, t: False,
              lambda a: (), lambda t: (), _chlo_can, lambda t: False)
