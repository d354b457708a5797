"""Parsing types: element types, `tensor<...>`, `!quant.uniform<...>`, tuples, function types.

:class:`TypeParser` is one part of the parser (:class:`shlo.syntax.parser.Parser` combines the
parts). Simple tensor types (`tensor<2x3xf32>`, one lexer token) are cached by their text; a
tensor's encoding is an attribute (``parse_attribute``, :mod:`shlo.syntax.parse_attributes`);
other dialects' types are kept verbatim (:class:`shlo.types.OpaqueType`).
"""

from __future__ import annotations

import re
import struct
from typing import Any

from ..attributes import StructAttr
from ..types import (
    _ELEMENT_TYPES, ComplexType, ElementType, FloatType, FunctionType, IntegerType, OpaqueType,
    QuantizedType, TensorType, TokenType, TupleType, Type,
)
from .cursor import Cursor
from .lexer import BANG, BARE, FLOAT, INTEGER, PUNCT, TENSOR, int_value

__all__ = ["TypeParser"]

TOKEN = TokenType()
_DIMS_RE = re.compile(r"\s*<\s*((?:(?:\d+|\?|\*)\s*x\s*)*)")
_SIMPLE_TENSOR_RE = re.compile(r"tensor<((?:(?:\d+|\?)x)*)(.*)>\Z")
_INT_TYPE_RE = re.compile(r"(si|ui|i)([1-9][0-9]*)\Z")
_T = r"tensor<[0-9x?]*[a-z][a-z0-9]*>"
# a function type of simple tensor types (the signature most ops print), not followed by `->`
_SIMPLE_SIG_RE = re.compile(
    rf"\((?:{_T}(?:, {_T})*)?\) -> (?:{_T}|\((?:{_T}(?:, {_T})*)?\))(?!\s*(?://[^\n]*\s*)*->)")
_QUANT_STORAGE_RE = re.compile(r"(si|ui|i|u)([1-9][0-9]*)\Z")


class TypeParser(Cursor):
    """Types, from the current token. Uses the parser's ``type_aliases`` (`!t = ...`) and
    ``type_cache`` (simple tensor types by text)."""

    type_aliases: dict[str, Type]
    type_cache: dict[str, Type]
    sig_cache: dict[str, FunctionType]

    def parse_attribute(self, typed: bool = True) -> Any:
        """A tensor encoding is an attribute: defined by the subclass
        :class:`shlo.syntax.parse_attributes.AttributeParser`."""
        raise NotImplementedError

    def parse_type(self) -> Type:
        k = self.k
        v = self.v
        if k == TENSOR:
            t = self.type_cache.get(v)
            if t is None:
                t = self._simple_tensor(v)
            self._advance()
            return t
        if k == BARE:
            et = _ELEMENT_TYPES.get(v)
            if et is not None:
                self._advance()
                return et
            if v == "tensor":
                return self._tensor_type()
            if v == "complex":
                self._advance()
                self.expect("<")
                inner = self.parse_type()
                self.expect(">")
                if not isinstance(inner, FloatType):
                    self.error("invalid element type for complex", found=False)
                t = _ELEMENT_TYPES.get(f"complex<{inner.name}>") or ComplexType(inner)
                return t
            if v == "tuple":
                self._advance()
                self.expect("<")
                types: list[Type] = []
                if self.v != ">":
                    types.append(self.parse_type())
                    while self.accept(","):
                        types.append(self.parse_type())
                self.expect(">")
                return TupleType(tuple(types))
            m = _INT_TYPE_RE.match(v)
            if m:
                # (the widths shlo holds as arrays; others are refused as in `tensor<2xi6>`)
                et = _ELEMENT_TYPES.get(v)
                if not isinstance(et, IntegerType):
                    self.error(f"unknown element type '{v}'", found=False)
                self._advance()
                return et
            if v in ("none", "vector", "memref", "index", "f80", "f128") or v.startswith("!"):
                return OpaqueType(self._capture_opaque())
            self.error("expected type")
        if k == BANG:
            if v == "!stablehlo.token":
                self._advance()
                return TOKEN
            if v == "!quant.uniform":
                return self._quant_type()
            alias = self.type_aliases.get(v)
            if alias is not None:
                self._advance()
                return alias
            if v.startswith("!stablehlo.") and v != "!stablehlo.future":
                self.error(f"unknown stablehlo type: {v[11:]}", found=False)
            if "." not in v:
                self.error(f"undefined symbol alias id '{v[1:]}'", found=False)
            return OpaqueType(self._capture_opaque())
        if v == "(" and k == PUNCT:
            return self._function_type()
        self.error("expected type")

    def _simple_tensor(self, text: str) -> TensorType:
        m = _SIMPLE_TENSOR_RE.match(text)
        dims = m.group(1)
        et = _ELEMENT_TYPES.get(m.group(2))
        if et is None:
            self.error(f"unknown element type '{m.group(2)}'", found=False)
        shape = tuple(None if d == "?" else int_value(d) for d in dims.split("x")[:-1]) if dims else ()
        t = TensorType(shape, et)
        self.type_cache[text] = t
        return t

    def _tensor_type(self) -> TensorType:
        m = _DIMS_RE.match(self.text, self.pos)
        if m is None:
            self._advance()
            self.error("expected '<' in tensor type")
        dims_text = m.group(1)
        shape: tuple | None
        if dims_text:
            parts = [d.strip() for d in dims_text.split("x")[:-1]]
            if "*" in parts:
                if parts != ["*"]:
                    self.reset(m.start(1))
                    self.error("unranked tensor must be '*x' followed by the element type",
                               found=False)
                shape = None
            else:
                shape = tuple(None if d == "?" else int_value(d) for d in parts)
        else:
            shape = ()
        self.reset(m.end())
        et = self.parse_type()
        if not isinstance(et, ElementType) and not isinstance(et, OpaqueType):
            self.error("invalid tensor element type", found=False)
        encoding = None
        if self.accept(","):
            enc_off = self.start
            encoding = self.parse_attribute()
            if type(encoding) is StructAttr and encoding.name == "stablehlo.bounds" \
                    and shape is not None:
                bounds = encoding.get("bounds", ())
                if len(bounds) != len(shape):
                    self.error(f"Bounds length is {len(bounds)}, expected to be equal to rank"
                               f"({len(shape)}) of the tensor", enc_off, found=False)
                for i, (d, b) in enumerate(zip(shape, bounds)):
                    if d is not None and b is not None:
                        self.error(f"Static dimension {i} cannot have a bound, use "
                                   f"ShapedType::kDynamic to indicate a missing bound", enc_off,
                                   found=False)
        self.expect(">", "in tensor type")
        return TensorType(shape, et, encoding)  # type: ignore[arg-type]

    def _function_type(self) -> FunctionType:
        """`(inputs) -> results`; one spelled as before (a signature of simple tensor types,
        ``sig_cache``) is not read again."""
        m = _SIMPLE_SIG_RE.match(self.text, self.start)
        if m is not None:
            got = self.sig_cache.get(m.group())
            if got is not None:
                self.reset(m.end())
                return got
        self.expect("(")
        inputs: list[Type] = []
        if self.v != ")":
            inputs.append(self.parse_type())
            while self.accept(","):
                inputs.append(self.parse_type())
        self.expect(")")
        self.expect("->", "in function type")
        ft = FunctionType(tuple(inputs), tuple(self.result_types()))
        if m is not None and self.prev_end == m.end():
            self.sig_cache[m.group()] = ft
        return ft

    def result_types(self) -> list[Type]:
        """`type` or `(type, ...)` after `->`."""
        if self.v == "(" and self.k == PUNCT:
            st = self.save()
            self._advance()
            res: list[Type] = []
            if self.v != ")":
                res.append(self.parse_type())
                while self.accept(","):
                    res.append(self.parse_type())
            if self.v != ")":
                # `(a) -> b` as a single function-typed result: re-parse as a type
                self.restore(st)
                return [self.parse_type()]
            self._advance()
            if self.v == "->":  # a function type used as the single result
                self.restore(st)
                return [self.parse_type()]
            return res
        return [self.parse_type()]

    def type_list(self) -> list[Type]:
        types = [self.parse_type()]
        while self.accept(","):
            types.append(self.parse_type())
        return types

    def _quant_type(self) -> QuantizedType:
        start = self.start
        self._advance()
        self.expect("<")
        st = self.bare()
        m = _QUANT_STORAGE_RE.match(st)
        if not m:
            self.error(f"illegal storage type prefix '{st}'", start, found=False)
        prefix = m.group(1)
        storage = IntegerType(int(m.group(2)), "unsigned" if prefix in ("u", "ui") else
                              "signed" if prefix == "si" else "signless")
        storage = _ELEMENT_TYPES.get(storage.name, storage)  # type: ignore[assignment]
        smin = smax = None
        if self.accept("<"):
            smin = self.integer()
            self.expect(":")
            smax = self.integer()
            self.expect(">")
        self.expect(":")
        expressed = self.parse_type()
        if not isinstance(expressed, FloatType):
            self.error("expressed type must be a floating point type", found=False)
        qdim = None
        if self.accept(":"):
            qoff = self.start
            qdim = self.integer()
            if qdim < 0:
                self.error(f"illegal quantized dimension: {qdim}", qoff, found=False)
        self.expect(",")
        scales: list[float] = []
        zps: list[int] = []
        if self.accept("{"):
            while True:
                s, z = self._scale_zp()
                scales.append(s)
                zps.append(z)
                if not self.accept(","):
                    break
            self.expect("}")
        else:
            s, z = self._scale_zp()
            scales.append(s)
            zps.append(z)
        self.expect(">")
        if qdim is None and len(scales) != 1:
            self.error("per-tensor quantization takes one scale", start, found=False)
        if smin == storage.min and smax == storage.max:
            smin = smax = None  # the storage type's full range is the default (as upstream)
        return QuantizedType(storage, expressed, tuple(scales), tuple(zps), qdim, smin, smax,
                             "ui" if prefix == "ui" else None)

    def _scale_zp(self) -> tuple[float, int]:
        if self.k == FLOAT:
            s = float(self.v)
        elif self.k == INTEGER:
            v = int_value(self.v)
            if self.v.lstrip("-").startswith("0x"):  # the bits of an f64, as MLIR's parseFloat
                if v >> 64 or v < 0:
                    self.error("hexadecimal float constant out of range for type", found=False)
                s = struct.unpack("<d", v.to_bytes(8, "little"))[0]
            else:
                self.error("unexpected decimal integer literal for a floating point value "
                           "(add a trailing dot to make the literal a float)", found=False)
        else:
            self.error("expected scale value")
        self._advance()
        z = 0
        if self.accept(":"):
            z = self.integer()
        return s, z

