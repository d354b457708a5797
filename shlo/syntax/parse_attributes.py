"""Parsing attributes: builtin attributes, dense literals, dialect enums and structs.

:class:`AttributeParser` is one part of the parser (:class:`shlo.syntax.parser.Parser` combines
the parts): integers, floats, strings, arrays, dictionaries, `array<i64: ...>`, `dense<...>`
(the body is classified and converted by :mod:`shlo.syntax.dense`), symbol references, the
StableHLO/CHLO enums (`#stablehlo<comparison_direction LT>`, cases from
:data:`shlo.attributes.ENUM_CASES`), dialect structs (`#stablehlo.gather<...>`, parameters
ordered by :func:`shlo.attributes.canonical_struct_params`) and `#stablehlo.conv<...>`. Other
dialects' attributes are kept verbatim (:class:`shlo.attributes.OpaqueAttr`).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ..attributes import (
    DOTTED_ENUMS, ENUM_CASES, STRUCT_ORDER, ArrayAttr, BoolAttr, ConvDimensionNumbers,
    DenseArrayAttr, DenseElementsAttr, DenseResourceAttr, DictAttr, EnumAttr, FloatAttr,
    IntegerAttr, OpaqueAttr, StringAttr, StructAttr, SymbolRefAttr, TypeAttr, UnitAttr,
    canonical_struct_params,
)
from ..resources import ResourceHandle
from ..errors import Diagnostic, ParseError
from ..registry import load_extension
from ..types import _ELEMENT_TYPES, FloatType, IndexType, IntegerType, OpaqueType, TensorType, Type
from .dense import (DenseLiteralError, classify_literal, float_bits_to_value, literal_to_array,
                    mlir_integer)
from .lexer import (AT, BANG, BARE, FLOAT, HASH, INTEGER, PUNCT, STRING, TENSOR, int_value,
                    unescape_string)
from .parse_types import TypeParser

__all__ = ["AttributeParser", "ENUM_CASES", "DIALECT_ATTRIBUTE_HOOKS"]

# --- dialect attribute hooks (the `sdy` dialect registers one: shlo.ops.sdy) -----------------
DIALECT_ATTRIBUTE_HOOKS: dict[str, Any] = {}
"""Parsers of other dialects' attributes, by dialect: ``hook(parser, name)`` reads the
attribute at the current `#name` token (``name`` without `#`), returning its value."""


def _dialect_hook(dialect: str) -> Any:
    """The attribute parser of ``dialect``; the module that registers it (the op index says
    which) is imported on first use."""
    hook = DIALECT_ATTRIBUTE_HOOKS.get(dialect)
    if hook is None and dialect not in _NO_HOOK:
        if load_extension("attribute_dialect", dialect):
            hook = DIALECT_ATTRIBUTE_HOOKS.get(dialect)
        else:
            _NO_HOOK.add(dialect)
    return hook


_NO_HOOK: set[str] = set()  # dialects the index registers no attribute parser for

I64 = _ELEMENT_TYPES["i64"]
F64 = _ELEMENT_TYPES["f64"]
_DENSE_OPEN_RE = re.compile(r"\s*<")
# `#dialect<enum CASE>` is read as an enum for these dialects
# dialect attributes whose parameters are integers (lists, or one for index_vector_dim)
_DIMENSION_NUMBERS = ("stablehlo.gather", "stablehlo.scatter", "stablehlo.dot", "chlo.ragged_dot")
_ENUM_DIALECTS = ("stablehlo", "chlo", "vhlo", "tosa", "mhlo", "check", "interpreter", "quant")


_STRING_ELEMENTS_RE = re.compile(r'[\s\[\],]*"(?:[^"\\]|\\.)*"(?:[\s\[\],]*"(?:[^"\\]|\\.)*")*[\s\[\],]*')
"""The body of a `dense<...>` of strings (nested lists of string literals)."""

class AttributeParser(TypeParser):
    """Attribute values, from the current token. Uses the parser's ``attr_aliases``
    (`#a = ...`)."""

    attr_aliases: dict[str, Any]

    def parse_attribute(self, typed: bool = True) -> Any:
        """Any attribute value; ``typed`` allows a trailing `: type` on numbers."""
        k = self.k
        v = self.v
        if k == STRING:
            return StringAttr(self.string())
        if k == INTEGER:
            start = self.start
            self._advance()
            if typed and self.v == ":":
                self._advance()
                t = self.parse_type()
                if isinstance(t, FloatType):
                    if "x" not in v:  # as MLIR: an integer literal of a float is its bits, in hex
                        self.error("unexpected decimal integer literal for a floating point value "
                                   "(add a trailing dot to make the literal a float)", found=False)
                    bits = int_value(v)
                    return FloatAttr(float(float_bits_to_value(bits, t.dtype)), t)
                return IntegerAttr(self._typed_integer(v, t, start), t)
            # an untyped integer is an i64 (as in MLIR)
            return IntegerAttr(self._typed_integer(v, I64, start), I64)
        if k == FLOAT:
            start = self.start
            self._advance()
            if typed and self.v == ":":
                self._advance()
                t = self.parse_type()
                if not isinstance(t, FloatType):
                    self.error("floating point value not valid for specified type", start,
                               found=False)
                return FloatAttr(round_to(float(v), t), t)
            return FloatAttr(float(v), F64)  # an untyped float is an f64 (as in MLIR)
        if k == BARE:
            if v == "true" or v == "false":
                self._advance()
                return BoolAttr(v == "true")
            if v == "dense":
                return self.dense_attr()
            if v == "array":
                return self._dense_array()
            if v == "unit":
                self._advance()
                return UnitAttr()
            if v == "dense_resource":
                return self.dense_resource_attr()
            if v in ("sparse", "affine_map", "affine_set", "strided",
                     "opaque", "distinct", "dense_array"):
                return OpaqueAttr(self._capture_opaque())
            if v in ("inf", "nan"):
                self._advance()
                return FloatAttr(float(v), F64)
            return TypeAttr(self.parse_type())
        if k == TENSOR or k == BANG:
            return TypeAttr(self.parse_type())
        if k == AT:
            return self.symbol_ref()
        if k == HASH:
            return self._hash_attr()
        if v == "[":
            self._advance()
            items: list[Any] = []
            if self.v != "]":
                items.append(self.parse_attribute())
                while self.accept(","):
                    items.append(self.parse_attribute())
            self.expect("]", "in array attribute")
            return ArrayAttr(tuple(items))
        if v == "{":
            return self.dict_attr()
        if v == "(":
            return TypeAttr(self.parse_type())
        if v == "-" and self.k == PUNCT:
            self.error("expected attribute value")
        self.error("expected attribute value")

    def symbol_ref(self) -> SymbolRefAttr:
        root = self.symbol_name()
        nested: list[str] = []
        while self.v == "::":
            self._advance()
            nested.append(self.symbol_name())
        return SymbolRefAttr(root, tuple(nested))

    def symbol_name(self) -> str:
        if self.k != AT:
            self.error("expected symbol reference")
        v = self.v[1:]
        if v.startswith('"'):
            v = unescape_string(v)
        self._advance()
        return v

    def dict_attr(self) -> DictAttr:
        """`{...}` as a DictAttr; entries are sorted by name, as MLIR dictionaries are."""
        items = self.dict_items()
        items.sort(key=_first)
        return DictAttr(tuple(items))

    def dict_items(self, offsets: list[tuple[str, int]] | None = None) -> list[tuple[str, Any]]:
        """`{name = value, ...}`; with ``offsets``, each value's (name, text offset) too."""
        self.expect("{")
        items: list[tuple[str, Any]] = []
        if self.v != "}":
            while True:
                if self.k == BARE:
                    name = self.v
                    self._advance()
                elif self.k == STRING:
                    name = self.string()
                else:
                    self.error("expected attribute name")
                if self.v == "=":
                    self._advance()
                    if offsets is not None:
                        offsets.append((name, self.start))
                    items.append((name, self.parse_attribute()))
                else:
                    items.append((name, UnitAttr()))
                if not self.accept(","):
                    break
        self.expect("}", "in attribute dictionary")
        return items

    def dense_attr(self) -> DenseElementsAttr:
        """`dense<...> : tensor<...>` (current token is `dense`)."""
        start = self.start
        text = self.text
        m = _DENSE_OPEN_RE.match(text, self.pos)
        if m is None:
            self._advance()
            self.error("expected '<' after 'dense'")
        q = m.end()
        close = text.find(">", q)
        if close < 0:
            self.reset(q)
            self.error("expected '>' to close the dense literal", found=False)
        kind, payload = classify_literal(text[q:close])
        self.reset(close + 1)
        if self.v != ":":
            self.error("expected ':' after the dense literal")
        self._advance()
        t = self.parse_type()
        if isinstance(t, TensorType) and isinstance(t.element_type, OpaqueType) and \
                _STRING_ELEMENTS_RE.fullmatch(text[q:close]):
            # strings of another dialect's type (`dense<"a"> : tensor<!tf_type.string>`, MLIR's
            # DenseStringElementsAttr): kept verbatim
            return OpaqueAttr(text[start:self.prev_end])
        try:
            arr = literal_to_array(kind, payload, t)  # type: ignore[arg-type]
        except DenseLiteralError as e:
            self.error(str(e), start, found=False)
        except (ValueError, OverflowError, TypeError) as e:
            self.error(f"invalid dense literal: {e}", start, found=False)
        return DenseElementsAttr(t, arr, hex=(kind == "hex"))  # type: ignore[arg-type]

    # --- dense_resource<key> : tensor<...> (the blob is in the file's `{-# ... #-}` section) ---

    resources: dict[str, ResourceHandle]
    resource_uses: list[tuple[DenseResourceAttr, int]]

    def dense_resource_attr(self) -> DenseResourceAttr:
        """`dense_resource<key> : type` (current token is `dense_resource`): the handle of
        ``key``, shared by every use; the section at the end of the file fills its blob."""
        start = self.start
        self._advance()
        self.expect("<", "after 'dense_resource'")
        if self.k == STRING:
            key = self.string()
        elif self.k == BARE:
            key = self.bare()
        else:
            self.error("expected a resource key")
        self.expect(">", "to close the resource handle")
        self.expect(":", "after dense_resource<...>")
        off = self.start
        t = self.parse_type()
        if not isinstance(t, TensorType) or not t.is_static:
            self.error("dense_resource needs a statically shaped tensor type", off, found=False)
        handle = self.resources.get(key)
        if handle is None:
            handle = self.resources[key] = ResourceHandle(key)
        attr = DenseResourceAttr(t, handle)
        self.resource_uses.append((attr, start))
        return attr

    def _dense_array(self) -> DenseArrayAttr:
        self._advance()
        self.expect("<")
        et = self.parse_type()
        values: list[Any] = []
        if self.accept(":"):
            while True:
                values.append(self._array_element(et))
                if not self.accept(","):
                    break
        self.expect(">", "in dense array")
        return DenseArrayAttr(et, tuple(values))

    def _array_element(self, et: Type) -> Any:
        k, v = self.k, self.v
        if isinstance(et, IntegerType) and et.width == 1:
            if v in ("true", "false"):
                self._advance()
                return v == "true"
            if k == INTEGER and v in ("0", "1"):
                self._advance()
                return v == "1"
            self.error("expected 'true' or 'false'")
        if isinstance(et, FloatType):
            if k == FLOAT:
                self._advance()
                return round_to(float(v), et)
            if k == INTEGER:
                self._advance()
                if "x" in v:
                    return float(float_bits_to_value(int(v, 16), et.dtype))
                return round_to(float(int_value(v)), et)
            if k == BARE and v in ("inf", "nan"):
                self._advance()
                return float(v)
            self.error("expected floating point value")
        if k != INTEGER:
            self.error("expected integer value")
        value = mlir_integer(int_value(v), v.startswith("-"), et) \
            if isinstance(et, (IntegerType, IndexType)) else int_value(v)
        if value is None:
            self.error("integer constant out of range", found=False)
        self._advance()
        return value

    def _hash_attr(self) -> Any:
        v = self.v
        alias = self.attr_aliases.get(v)
        if alias is not None:
            self._advance()
            return alias
        name = v[1:]
        angle = self.text.startswith("<", self.pos)
        hook = _dialect_hook(name.split(".", 1)[0]) if angle else None
        if hook is not None:
            return hook(self, name)
        if not angle:
            if "." in name:
                self._advance()
                return OpaqueAttr(v)
            if name.startswith("loc"):
                self.error(f"undefined symbol alias id '{name}'", found=False)
            self.error(f"undefined symbol alias id '{name}'", found=False)
        if name in _ENUM_DIALECTS:
            st = self.save()
            self._advance()
            self._advance()  # '<'
            if self.k == BARE:
                enum = self.v
                self._advance()
                if self.k == BARE:
                    value = self.v
                    if name in ("stablehlo", "chlo"):
                        self.check_enum(enum, value)
                    self._advance()
                    if self.v == ">":
                        self._advance()
                        return EnumAttr(name, enum, value)
            self.restore(st)
            return OpaqueAttr(self._capture_opaque())
        if name in DOTTED_ENUMS:
            dialect, enum = DOTTED_ENUMS[name]
            self._advance()
            self.expect("<")
            self.check_enum(enum, self.v)
            value = self.bare()
            self.expect(">")
            return EnumAttr(dialect, enum, value)
        if name == "stablehlo.conv":
            self._advance()
            self.expect("<")
            if self.v == "raw":
                self._advance()
                start = self.start
                params = dict(self.struct_params())
                for v2 in params.values():  # integers, or lists of them (spatial dimensions)
                    items = v2 if isinstance(v2, tuple) else (v2,)
                    if not all(isinstance(x, int) and not isinstance(x, bool) for x in items):
                        self.error("expected integer value (failed parsing convolution "
                                   "dimension numbers)", start, found=False)
                try:
                    cdn = ConvDimensionNumbers(**{
                        k2: (tuple(v2) if isinstance(v2, tuple) else v2)
                        for k2, v2 in params.items()})
                except TypeError as e:
                    self.error(f"invalid #stablehlo.conv: {e}", found=False)
            else:
                cdn = self.conv_dims()
            self.expect(">")
            return cdn
        if name == "stablehlo.bounds":
            self._advance()
            self.expect("<")
            dims: list[int | None] = []
            if self.v != ">":
                dims.append(self._dim_or_q())
                while self.accept(","):
                    dims.append(self._dim_or_q())
            self.expect(">")
            return StructAttr("stablehlo.bounds", (("bounds", tuple(dims)),))
        if name == "stablehlo.type_extensions":
            self._advance()
            self.expect("<")
            params = self.struct_params()
            self.expect(">")
            bounds = dict(params).get("bounds", ())
            return StructAttr("stablehlo.bounds", (("bounds", tuple(bounds)),))
        if name in STRUCT_ORDER:
            self._advance()
            self.expect("<")
            try:
                params = self.struct_params(STRUCT_ORDER[name], name)
                self.expect(">")
            except ParseError as e:
                if name in _DIMENSION_NUMBERS[:3]:  # MLIR adds where the attribute failed
                    e.diagnostics.append(Diagnostic(
                        f"failed parsing {name[10:]} dimension numbers attribute",
                        self.location_at(self.start)))
                raise
            return StructAttr(name, canonical_struct_params(name, params))
        if name.startswith(("stablehlo.", "chlo.", "vhlo.")):
            st = self.save()
            try:
                self._advance()
                self.expect("<")
                params = self.struct_params()
                self.expect(">")
                return StructAttr(name, canonical_struct_params(name, params))
            except ParseError:
                self.restore(st)
                return OpaqueAttr(self._capture_opaque())
        return OpaqueAttr(self._capture_opaque())

    def check_enum(self, enum: str, value: str) -> None:
        """Error unless ``value`` (the current token) is a case of the known enum ``enum``."""
        cases = ENUM_CASES.get(enum)
        if cases is not None and value not in cases:
            self.error(f"expected {enum} to be one of: {', '.join(cases)}")

    def _dim_or_q(self) -> int | None:
        if self.accept("?"):
            return None
        return self.integer()

    def struct_params(self, allowed: tuple[str, ...] | None = None,
                      what: str = "") -> list[tuple[str, Any]]:
        """`name = value, ...` inside a dialect attribute's `<...>` (stops before `>`); with
        ``allowed``, unknown and duplicated names are errors."""
        params: list[tuple[str, Any]] = []
        if self.v == ">":
            return params
        seen: set[str] = set()
        while True:
            if allowed is not None:
                kind = what.split(".")[-1]
                kind = {"dot": "dot", "gather": "gather", "scatter": "scatter"}.get(kind, kind)
                failed = f" (failed parsing {kind} dimension numbers)" \
                    if what in _DIMENSION_NUMBERS else ""
                if self.k != BARE or self.v not in allowed:
                    self.error("expected one of: " + ", ".join(f"`{a}`" for a in allowed)
                               + failed, self.start)
                if self.v in seen:
                    self.error(f"duplicated `{self.v}` entry{failed}", found=False)
                seen.add(self.v)
            key = self.bare()
            self.expect("=")
            start = self.start
            value = self.struct_value()
            if allowed is not None and what in _DIMENSION_NUMBERS:  # integers only, as MLIR
                items = (value,) if key == "index_vector_dim" else \
                    value if isinstance(value, tuple) else (None,)  # (a list is expected)
                for x in items:
                    self._int64(x, start, f" (failed parsing {kind} dimension numbers)")
            elif what == "stablehlo.result_accuracy":  # atol, rtol: APFloat; ulps: int64_t
                if key in ("atol", "rtol") and isinstance(value, int) and \
                        not isinstance(value, bool) and self.text[start:start + 2] in ("0x", "0X") \
                        and 0 <= value < 1 << 64:  # a hexadecimal f64 bit pattern (NaN, inf)
                    value = float(np.array(value, np.uint64).view(np.float64))
                if key in ("atol", "rtol") and not isinstance(value, float):
                    self.error("unexpected decimal integer literal for a floating point value "
                               "(add a trailing dot to make the literal a float)", start,
                               found=False)
                if key == "ulps":
                    self._int64(value, start)
            elif what == "stablehlo.channel_handle":  # handle, type: int64_t
                self._int64(value, start)
            params.append((key, value))
            if not self.accept(","):
                return params
            if self.v == ">":  # trailing comma
                return params

    def _int64(self, value: Any, start: int, context: str = "") -> None:
        """A struct parameter MLIR reads as an `int64_t` (parseInteger): an error otherwise."""
        if not isinstance(value, int) or isinstance(value, bool):
            self.error(f"expected integer value{context}", start, found=False)
        if not -(1 << 63) <= value < 1 << 63:
            self.error("integer value too large", start, found=False)

    def struct_value(self) -> Any:
        k, v = self.k, self.v
        if v == "[" and k == PUNCT:
            st = self.save()
            self._advance()
            ints: list[int | None] = []
            ok = True
            if self.v != "]":
                while True:
                    if self.k == INTEGER:
                        ints.append(int_value(self.v))
                        self._advance()
                    elif self.v == "?":
                        ints.append(None)
                        self._advance()
                    else:
                        ok = False
                        break
                    if not self.accept(","):
                        break
            if ok and self.v == "]":
                self._advance()
                return tuple(ints)
            self.restore(st)
            return self.parse_attribute()
        if k == INTEGER:
            self._advance()
            return int_value(v)
        if k == FLOAT:
            self._advance()
            return float(v)
        if k == BARE:
            if v in ("true", "false"):
                self._advance()
                return v == "true"
        if v == "<":  # a nested unnamed struct (`algorithm = <...>`)
            self._advance()
            params = self.struct_params()
            self.expect(">")
            return StructAttr("", tuple(params))
        return self.parse_attribute(typed=False)

    def conv_dims(self) -> ConvDimensionNumbers:
        """`[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`, checked as upstream's
        parseConvolutionDimensions checks it (and with its messages)."""
        fi, si = self._conv_list("bf")
        if self.v != "x":
            self.error("expected 'x'")
        self._advance()
        fk, sk = self._conv_list("io")
        self.expect("->")
        fo, so = self._conv_list("bf")
        return ConvDimensionNumbers(fi["b"], fi["f"], si, fk["i"], fk["o"], sk, fo["b"], fo["f"],
                                    so)

    def _conv_list(self, letters: str) -> tuple[dict[str, int], tuple[int, ...]]:
        """One `[...]` of conv_dims: each of ``letters`` once, spatial dimensions 0..n-1 once."""
        self.expect("[")
        allowed = list(letters)
        found: dict[str, int] = {}
        spatial: dict[int, int] = {}
        pos = 0
        while True:
            at = self.start
            if self.k == INTEGER:
                d = int_value(self.v)
                if d < 0:
                    self.error(f"Unexpected dimension {d}", at, found=False)
                if d in spatial:
                    self.error(f"Duplicate entries for spatial dimension {d}", at, found=False)
                spatial[d] = pos
            elif self.k == BARE:
                word = self.v
                if len(word) != 1 or not allowed:
                    self.error(f"Unexpected keyword {word}", at, found=False)
                if word not in allowed:
                    self.error(f"Unexpected dimension {word}, expecting {', '.join(allowed)}",
                               at, found=False)
                allowed.remove(word)
                found[word] = pos
            else:
                self.error("expected dimension")
            self._advance()
            pos += 1
            if not self.accept(","):
                break
        if allowed:
            self.error(f"Expected dimensions {', '.join(allowed)} not specified", found=False)
        self.expect("]")
        n = max(spatial, default=-1) + 1
        missing: list[int] = []  # the first ten (never a walk over range(n): n may be 2^64)
        d = 0
        while len(missing) < 10 and d < n:
            if d not in spatial:
                missing.append(d)
            d += 1
        if missing:
            self.error(f"Expected spatial dimensions {', '.join(map(str, missing))} not "
                       f"specified", found=False)
        return found, tuple(spatial[d] for d in range(n))

    def _typed_integer(self, literal: str, t: Any, start: int) -> int:
        """The value of `literal : t` as MLIR reads it (:func:`mlir_integer`), or an error."""
        if not isinstance(t, (IntegerType, IndexType)):
            self.error("integer literal not valid for specified type", start, found=False)
        negative = literal.startswith("-")
        if negative and isinstance(t, IntegerType) and t.signedness == "unsigned":
            self.error("negative integer literal not valid for unsigned integer type", start,
                       found=False)
        v = mlir_integer(int_value(literal), negative, t)
        if v is None:
            self.error("integer constant out of range for attribute", start, found=False)
        return v


def round_to(v: float, t: Any) -> float:
    """``v`` rounded to the float type ``t`` (a FloatAttr holds its value in its own type)."""
    if isinstance(t, FloatType) and t.name != "f64":
        with np.errstate(over="ignore"):
            return float(t.dtype.type(v))
    return v


def _first(kv: tuple) -> Any:
    return kv[0]
