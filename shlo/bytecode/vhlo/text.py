"""Reading VHLO attributes and types from their text (`#vhlo.integer_v1<1 : i64>`,
`!vhlo.tensor_v1<2x!vhlo.f32_v1>`).

shlo's text parser keeps attributes and types of dialects it does not model as opaque text (or,
for `#vhlo.x<k = v>` and `#vhlo<kind CASE>`, as generic struct/enum attributes);
:func:`from_ir_attr` and :func:`from_ir_type` turn those back into the VHLO classes, so that
VHLO programs given as text (`stablehlo-opt` output, hand-written tests) can be converted and
serialized. Builtin pieces (`dense<...> : tensor<...>`, `1 : i64`) are read by shlo's parser.
"""

from __future__ import annotations

import re
from typing import Any

from ...attributes import (
    ArrayAttr, BoolAttr, DenseElementsAttr, EnumAttr, FloatAttr, IntegerAttr, OpaqueAttr,
    StringAttr, StructAttr,
)
from ...types import (
    ComplexType, ElementType, FloatType, FunctionType, IndexType, IntegerType, OpaqueType, QuantizedType,
    TensorType, TokenType, TupleType, Type, element_type,
)
from . import attrs as A
from . import types as T
from .attrs import VTypeExtensions, VhloAttr
from .types import (
    _BUILTIN_TO_SCALAR, NONE, SCALARS, TypeConversionError, VBuffer, VComplex, VFunction,
    VFuture, VhloType, VQuant, VQuantPerAxis, VScalar, VTensor, VTuple, VUnranked, bits_f64,
    f64_bits, type_text,
)

__all__ = ["parse_attr", "parse_type", "from_ir_attr", "from_ir_type", "VhloTextError",
           "split_top", "parse_builtin_shaped", "to_vhlo_type", "to_builtin_type", "index_type"]


class VhloTextError(ValueError):
    """Malformed VHLO attribute or type text."""


_OPEN = {"<": ">", "(": ")", "[": "]", "{": "}"}


def _match(text: str, i: int) -> int:
    """The index just past the bracket group that starts at ``text[i]``."""
    stack = [_OPEN[text[i]]]
    j = i + 1
    n = len(text)
    while j < n:
        c = text[j]
        if c == '"':
            j += 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
        elif c in _OPEN:
            stack.append(_OPEN[c])
        elif c == ">" and j > 0 and text[j - 1] == "-":
            pass  # the arrow of `->`
        elif c in ")]}>":
            if not stack or c != stack[-1]:
                raise VhloTextError(f"unbalanced '{c}' in {text!r}")
            stack.pop()
            if not stack:
                return j + 1
        j += 1
    raise VhloTextError(f"unterminated '{text[i]}' in {text!r}")


def split_top(text: str, sep: str = ",") -> list[str]:
    """Split ``text`` at top-level ``sep`` characters (outside brackets and strings)."""
    out: list[str] = []
    depth = 0
    start = 0
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c in "<([{":
            depth += 1
        elif c == ">" and i > 0 and text[i - 1] == "-":
            pass
        elif c in ">)]}":
            depth -= 1
        elif c == sep and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
        i += 1
    last = text[start:].strip()
    if last or out:
        out.append(last)
    return out


class _P:
    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0

    def ws(self) -> None:
        while self.i < len(self.s) and self.s[self.i].isspace():
            self.i += 1

    def peek(self, lit: str) -> bool:
        self.ws()
        return self.s.startswith(lit, self.i)

    def eat(self, lit: str) -> None:
        self.ws()
        if not self.s.startswith(lit, self.i):
            raise VhloTextError(f"expected '{lit}' at {self.s[self.i:self.i + 30]!r} in "
                                f"{self.s!r}")
        self.i += len(lit)

    def word(self) -> str:
        self.ws()
        m = re.compile(r"[\w.$\-]+").match(self.s, self.i)
        if not m:
            raise VhloTextError(f"expected a name at {self.s[self.i:self.i + 30]!r}")
        self.i = m.end()
        return m.group(0)

    def group(self) -> str:
        """The text inside the bracket group at the cursor (the cursor moves past it)."""
        self.ws()
        j = _match(self.s, self.i)
        inner = self.s[self.i + 1:j - 1]
        self.i = j
        return inner

    def integer(self) -> int:
        self.ws()
        m = re.compile(r"[-+]?\d+").match(self.s, self.i)
        if not m:
            raise VhloTextError(f"expected an integer at {self.s[self.i:self.i + 30]!r}")
        self.i = m.end()
        return int(m.group(0))

    def at_end(self) -> bool:
        self.ws()
        return self.i >= len(self.s)

    # --- types ----------------------------------------------------------------------------------

    def type(self) -> Any:
        self.ws()
        if self.s.startswith("!vhlo.", self.i):
            self.i += 6
            mn = self.word()
            if mn in T.SCALARS:
                return T.SCALARS[mn]
            inner = self.group()
            return _composite_type(mn, inner)
        # a builtin or other-dialect type: up to the next top-level delimiter
        start = self.i
        depth = 0
        while self.i < len(self.s):
            c = self.s[self.i]
            if c in "<([{":
                depth += 1
            elif c in ">)]}" and not (c == ">" and self.s[self.i - 1] == "-"):
                if depth == 0:
                    break
                depth -= 1
            elif c == "," and depth == 0:
                break
            self.i += 1
        return _builtin_type(self.s[start:self.i].strip())

    # --- attributes -----------------------------------------------------------------------------

    def attr(self) -> Any:
        self.ws()
        s = self.s
        if s.startswith("#vhlo<", self.i):
            self.i += 5
            inner = self.group().strip()
            kind, _, case = inner.partition(" ")
            return A.VEnum(kind.strip(), case.strip())
        if s.startswith("#vhlo.", self.i):
            self.i += 6
            mn = self.word()
            inner = self.group()
            return _composite_attr(mn, inner)
        start = self.i
        depth = 0
        while self.i < len(s):
            c = s[self.i]
            if c == '"':
                self.i += 1
                while self.i < len(s) and s[self.i] != '"':
                    self.i += 2 if s[self.i] == "\\" else 1
            elif c in "<([{":
                depth += 1
            elif c in ">)]}" and not (c == ">" and s[self.i - 1] == "-"):
                if depth == 0:
                    break
                depth -= 1
            elif c in ",=" and depth == 0:
                break
            self.i += 1
        return _builtin_attr(s[start:self.i].strip())


def _builtin_type(text: str) -> Type:
    from ...syntax.parser import Parser

    return Parser(text).parse_type()


def _builtin_attr(text: str) -> Any:
    from ...syntax.parser import Parser

    return Parser(text).parse_attribute()


def _dims(text: str) -> tuple:
    text = text.strip()
    if not text:
        return ()
    return tuple(None if d.strip() == "?" else int(d) for d in text.split(","))


def _shape_and_rest(text: str) -> tuple[tuple, str]:
    m = re.compile(r"((?:(?:\d+|\?)x)*)").match(text.strip())
    dims = m.group(1) if m else ""
    shape = tuple(None if d == "?" else int(d) for d in dims.split("x")[:-1]) if dims else ()
    return shape, text.strip()[len(dims):]


def parse_builtin_shaped(text: str) -> tuple[tuple, Any]:
    """`2x?xf32` (the inside of `memref<...>`) -> ((2, None), f32)."""
    shape, rest = _shape_and_rest(text)
    return shape, _builtin_type(rest.strip())


def _composite_type(mn: str, inner: str) -> Any:
    p = _P(inner)
    if mn == "tensor_v1":
        shape, rest = _shape_and_rest(inner)
        p = _P(rest)
        el = p.type()
        enc = None
        if p.peek(","):
            p.eat(",")
            enc = p.attr()
        return T.VTensor(shape, el, enc)
    if mn == "buffer_v1":
        shape, rest = _shape_and_rest(inner)
        return T.VBuffer(shape, _P(rest).type())
    if mn == "complex_v1":
        return T.VComplex(p.type())
    if mn == "unranked_tensor_v1":
        return T.VUnranked(p.type())
    if mn in ("tuple_v1", "future_v1"):
        items = tuple(parse_type(x) for x in split_top(inner))
        return T.VTuple(items) if mn == "tuple_v1" else T.VFuture(items)
    if mn == "func_v1":
        ins_text = p.group().strip()
        p.eat("->")
        outs_text = inner[p.i:].strip()
        ins = () if ins_text == "()" else tuple(parse_type(x) for x in split_top(ins_text))
        outs = () if outs_text == "()" else tuple(parse_type(x) for x in split_top(outs_text))
        return T.VFunction(ins, outs)
    if mn == "quant_v1":
        parts = split_top(inner)
        st, et = [parse_type(x) for x in _colon_pair(parts[0])]
        scale, zp = _colon_pair(parts[1])
        lo, hi = _colon_pair(parts[2])
        return T.VQuant(int(parts[3]), st, et, T.f64_bits(float(scale)), int(zp), int(lo),
                        int(hi))
    if mn == "quant_per_axis_v1":
        parts = split_top(inner)
        st, et = [parse_type(x) for x in _colon_pair(parts[0])]
        scales = tuple(T.f64_bits(float(x)) for x in split_top(parts[2].strip()[1:-1]))
        zps = tuple(int(x) for x in split_top(parts[3].strip()[1:-1]))
        lo, hi = _colon_pair(parts[4])
        return T.VQuantPerAxis(int(parts[5]), st, et, int(parts[1]), scales, zps, int(lo),
                               int(hi))
    raise VhloTextError(f"unknown vhlo type: {mn}")


def _colon_pair(text: str) -> list[str]:
    parts = split_top(text, ":")
    if len(parts) != 2:
        raise VhloTextError(f"expected 'a:b' in {text!r}")
    return parts


class _Struct(dict):
    """The `key = value` parameters of a VHLO struct attribute; a missing one is an error of
    the text (:class:`VhloTextError`), not a KeyError."""

    def __init__(self, inner: str) -> None:
        super().__init__()
        self.inner = inner

    def __missing__(self, key: str) -> str:
        raise VhloTextError(f"expected a parameter '{key}' in <{self.inner.strip()}>")


def _struct(inner: str) -> dict[str, str]:
    out = _Struct(inner)
    for part in split_top(inner):
        k, _, v = part.partition("=")
        out[k.strip()] = v.strip()
    return out


def _composite_attr(mn: str, inner: str) -> Any:
    if mn == "array_v1":
        body = inner.strip()
        if not (body.startswith("[") and body.endswith("]")):
            raise VhloTextError(f"expected [...] in #vhlo.array_v1<{inner}>")
        return A.VArray(tuple(parse_attr(x) for x in split_top(body[1:-1])))
    if mn == "bool_v1":
        return A.VBool(inner.strip() == "true")
    if mn == "string_v1":
        from ...syntax.lexer import unescape_string

        return A.VString(unescape_string(inner.strip()))
    if mn == "dict_v1":
        body = inner.strip()[1:-1]
        items = []
        for part in split_top(body):
            p = _P(part)
            k = p.attr()
            p.eat("=")
            items.append((k, p.attr()))
        return A.VDict(tuple(items))
    if mn == "integer_v1":
        a = _builtin_attr(inner)
        t = to_vhlo_type(a.type if a.type is not None else _builtin_type("i64"))
        return A.VInteger(t, int(a.value))
    if mn == "float_v1":
        value, _, ty = inner.rpartition(":")
        t = parse_type(ty.strip())
        v = value.strip()
        if v.startswith("0x"):
            return A.VFloat(t, int(v, 16))
        return A.VFloat(t, A.float_bits(t, float(v)))
    if mn == "tensor_v1":
        d = _builtin_attr(inner)
        if not isinstance(d, DenseElementsAttr):
            raise VhloTextError(f"expected a dense elements attribute in {inner!r}")
        return A.VTensorAttr(to_vhlo_type(d.type), d)
    if mn == "type_v1":
        return A.VTypeAttr(parse_type(inner.strip()))
    if mn == "type_extensions_v1":
        return A.VTypeExtensions(_dims(_struct(inner)["bounds"].strip()[1:-1]))
    if mn == "output_operand_alias_v1":
        s = _struct(inner)
        return A.VOutputOperandAlias(_dims(s["outputTupleIndices"].strip()[1:-1]),
                                     int(s["operandIndex"]),
                                     _dims(s["operandTupleIndices"].strip()[1:-1]))
    if mn == "result_accuracy_v1":
        s = _struct(inner)
        return A.VResultAccuracy(T.f64_bits(float(s["atol"])), T.f64_bits(float(s["rtol"])),
                                 int(s["ulps"]), parse_attr(s["mode"]))
    if mn == "sub_axis_info_v1":
        s = _struct(inner)
        return A.VSubAxisInfo(int(s["pre_size"]), int(s["size"]))
    if mn == "axis_ref_v1":
        s = _struct(inner)
        sub = parse_attr(s["sub_axis_info"]) if "sub_axis_info" in s else None
        return A.VAxisRef(parse_attr(s["name"]), sub)
    if mn == "replica_group_mesh_axes_v1":
        s = _struct(inner)
        return A.VReplicaGroupMeshAxes(parse_attr(s["mesh"]), parse_attr(s["axes"]))
    if mn == "mesh_axis_v1":
        s = _struct(inner)
        return A.VMeshAxis(parse_attr(s["name"]), int(s["size"]))
    if mn == "mesh_v1":
        s = _struct(inner)
        ids = parse_attr(s["device_ids"]) if "device_ids" in s else None
        return A.VMesh(parse_attr(s["axes"]), ids)
    raise VhloTextError(f"unknown vhlo attribute: {mn}")


def parse_type(text: str) -> Any:
    p = _P(text)
    t = p.type()
    if not p.at_end():
        raise VhloTextError(f"trailing text after type in {text!r}")
    return t


def parse_attr(text: str) -> Any:
    p = _P(text)
    a = p.attr()
    if not p.at_end():
        raise VhloTextError(f"trailing text after attribute in {text!r}")
    return a


_attr_cache: dict[Any, Any] = {}


def from_ir_attr(a: Any) -> Any:
    """The VHLO attribute that shlo IR attribute ``a`` spells (VHLO text kept opaque by shlo's
    parser), or ``a`` itself when it is not VHLO."""
    if isinstance(a, A.VhloAttr):
        return a
    if isinstance(a, OpaqueAttr) and a.text.startswith("#vhlo"):
        r = _attr_cache.get(a.text)
        if r is None:
            r = _attr_cache[a.text] = parse_attr(a.text)
        return r
    if isinstance(a, (StructAttr, EnumAttr)) and (getattr(a, "name", "") or "").startswith(
            "vhlo.") or (isinstance(a, EnumAttr) and a.dialect == "vhlo"):
        from ...syntax.printer import format_attr

        return parse_attr(format_attr(a))
    return a


def from_ir_type(t: Any) -> Any:
    """The VHLO type that shlo IR type ``t`` spells, or ``t`` itself when it is not VHLO."""
    if isinstance(t, OpaqueType) and t.text.startswith("!vhlo."):
        return parse_type(t.text)
    return t


_ = (ArrayAttr, BoolAttr, FloatAttr, IntegerAttr, StringAttr)


# --- builtin <-> VHLO -----------------------------------------------------------------------------

_to_vhlo_cache: dict[Any, Any] = {}
_to_builtin_cache: dict[Any, Any] = {}


def to_vhlo_type(t: Any, allow_other: bool = False) -> Any:
    """The VHLO type of shlo type ``t`` (as `stablehlo-legalize-to-vhlo` converts it).

    A type without counterpart raises :class:`TypeConversionError`, unless ``allow_other``
    (other dialects allowed) and it is not a builtin or StableHLO type: then it stays as is."""
    try:
        r = _to_vhlo_cache.get(t)
    except TypeError:
        r = None
    if r is not None:
        return r
    r = _to_vhlo(t, allow_other)
    if len(_to_vhlo_cache) < 200_000:
        try:
            _to_vhlo_cache[t] = r
        except TypeError:
            pass
    return r


def _to_vhlo(t: Any, allow_other: bool) -> Any:
    if isinstance(t, VhloType):
        return t
    s = _BUILTIN_TO_SCALAR.get(t) if isinstance(t, (ElementType, TokenType)) else None
    if s is not None:
        return s
    if isinstance(t, TensorType):
        el = to_vhlo_type(t.element_type, allow_other)
        if t.shape is None:
            return VUnranked(el)
        enc = None
        if t.encoding is not None:
            enc = _convert_encoding(t.encoding)
        return VTensor(t.shape, el, enc)
    if isinstance(t, QuantizedType):
        # quant storage types are signless in MLIR; signedness is the `Signed` flag.
        st = to_vhlo_type(IntegerType(t.storage_type.width))
        et = to_vhlo_type(t.expressed_type)
        flags = 0 if t.storage_type.is_unsigned else 1
        if t.quantization_dimension is None:
            return VQuant(flags, st, et, f64_bits(t.scales[0]), int(t.zero_points[0]), t.min,
                          t.max)
        return VQuantPerAxis(flags, st, et, t.quantization_dimension,
                             tuple(f64_bits(s) for s in t.scales),
                             tuple(int(z) for z in t.zero_points), t.min, t.max)
    if isinstance(t, ComplexType):
        return VComplex(to_vhlo_type(t.element, allow_other))
    if isinstance(t, TupleType):
        return VTuple(tuple(to_vhlo_type(x, allow_other) for x in t.types))
    if isinstance(t, FunctionType):
        return VFunction(tuple(to_vhlo_type(x, allow_other) for x in t.inputs),
                         tuple(to_vhlo_type(x, allow_other) for x in t.results))
    if isinstance(t, OpaqueType):
        return _opaque_to_vhlo(t, allow_other)
    if isinstance(t, IntegerType):
        raise TypeConversionError(f"type {t} has no VHLO counterpart (signed integers are "
                                  "not StableHLO types)")
    raise TypeConversionError(f"type {type_text(t)} has no VHLO counterpart")


def _convert_encoding(enc: Any) -> Any:
    if isinstance(enc, VhloAttr):
        return enc
    name = getattr(enc, "name", None)
    if name == "stablehlo.bounds":
        bounds = enc.get("bounds", ())
        return VTypeExtensions(tuple(bounds))
    raise TypeConversionError("tensor encoding is not a VHLO encoding or #stablehlo.bounds")


def _opaque_to_vhlo(t: OpaqueType, allow_other: bool) -> Any:
    text = t.text.strip()
    if text == "none":
        return NONE
    if text == "!shape.witness":
        return SCALARS["witness_v1"]
    if text.startswith("!vhlo."):
        return parse_type(text)
    if text.startswith("memref<"):
        shape, el = parse_builtin_shaped(text[len("memref<"):-1])
        return VBuffer(shape, to_vhlo_type(el, allow_other))
    if text.startswith("!stablehlo.future<"):
        inner = text[len("!stablehlo.future<"):-1]
        return VFuture(tuple(to_vhlo_type(_builtin_type(x), allow_other)
                             for x in split_top(inner)))
    if allow_other and not text.startswith("!stablehlo."):
        return t
    raise TypeConversionError(f"type {text} has no VHLO counterpart")


def to_builtin_type(t: Any) -> Any:
    """The shlo type of VHLO type ``t`` (`vhlo-legalize-to-stablehlo`); non-VHLO types pass."""
    if type(t) is VScalar:
        return t.builtin
    try:
        r = _to_builtin_cache.get(t)
    except TypeError:
        r = None
    if r is None:
        r = _to_builtin(t)
        if len(_to_builtin_cache) < 200_000:
            try:
                _to_builtin_cache[t] = r
            except TypeError:
                pass
    return r


def _to_builtin(t: Any) -> Any:
    if isinstance(t, VScalar):
        return t.builtin
    if isinstance(t, VTensor):
        enc = t.encoding
        if enc is not None:
            from ...attributes import StructAttr

            if isinstance(enc, VTypeExtensions):
                enc = StructAttr("stablehlo.bounds", (("bounds", enc.bounds),))
        return TensorType(t.shape, _element(t.element), enc)
    if isinstance(t, VUnranked):
        return TensorType(None, _element(t.element))
    if isinstance(t, VComplex):
        el = to_builtin_type(t.element)
        if not isinstance(el, FloatType):
            raise TypeConversionError(f"complex element type {type_text(t.element)} is not a "
                                      "float type")
        return ComplexType(el)
    if isinstance(t, VTuple):
        return TupleType(tuple(to_builtin_type(x) for x in t.types))
    if isinstance(t, VFunction):
        return FunctionType(tuple(to_builtin_type(x) for x in t.inputs),
                            tuple(to_builtin_type(x) for x in t.outputs))
    if isinstance(t, VQuant):
        st = to_builtin_type(t.storage)
        if t.flags == 0 and isinstance(st, IntegerType) and st.signedness == "signless":
            st = IntegerType(st.width, "unsigned")
        return QuantizedType(st, to_builtin_type(t.expressed), (bits_f64(t.scale_bits),),
                             (t.zero_point,), None, _opt_min(st, t.storage_min),
                             _opt_max(st, t.storage_max))
    if isinstance(t, VQuantPerAxis):
        st = to_builtin_type(t.storage)
        if t.flags == 0 and isinstance(st, IntegerType) and st.signedness == "signless":
            st = IntegerType(st.width, "unsigned")
        return QuantizedType(st, to_builtin_type(t.expressed),
                             tuple(bits_f64(b) for b in t.scale_bits), t.zero_points,
                             t.quantized_dimension, _opt_min(st, t.storage_min),
                             _opt_max(st, t.storage_max))
    if isinstance(t, VFuture):
        from ...syntax.printer import format_type

        return OpaqueType("!stablehlo.future<" + ", ".join(
            format_type(to_builtin_type(x)) for x in t.types) + ">")
    if isinstance(t, VBuffer):
        from ...syntax.printer import format_type

        return OpaqueType(f"memref<{T._dims(t.shape)}{format_type(to_builtin_type(t.element))}>")
    return t


def _element(t: Any) -> Any:
    b = to_builtin_type(t)
    if not isinstance(b, ElementType):
        from ...syntax.printer import format_type

        raise TypeConversionError(f"tensor element type {format_type(b)} is not an element "
                                  "type shlo supports")
    return b


def _opt_min(st: Any, v: int) -> int | None:
    return None if isinstance(st, IntegerType) and v == st.min else v


def _opt_max(st: Any, v: int) -> int | None:
    return None if isinstance(st, IntegerType) and v == st.max else v


def index_type() -> IndexType:
    return element_type("index")  # type: ignore[return-value]
