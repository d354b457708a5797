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
from ...types import OpaqueType, Type
from . import attrs as A
from . import types as T

__all__ = ["parse_attr", "parse_type", "from_ir_attr", "from_ir_type", "VhloTextError",
           "split_top", "parse_builtin_shaped"]


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


def _struct(inner: str) -> dict[str, str]:
    out: dict[str, str] = {}
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
        t = T.to_vhlo_type(a.type if a.type is not None else _builtin_type("i64"))
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
        return A.VTensorAttr(T.to_vhlo_type(d.type), d)
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
