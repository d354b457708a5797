"""The parser: StableHLO/MLIR text -> IR (:class:`shlo.ir.Module`).

Recursive descent over the lazy lexer of :mod:`shlo.syntax.lexer`. It reads the generic op form
of every op, module/func structure, types, attributes and locations; the pretty (custom) forms of
ops are declared in :mod:`shlo.syntax.formats`, which this parser dispatches to by op name.

Ops inside a block are parsed in a loop (never by recursion), so long op chains cost no stack;
nesting (regions, nested literals) is recursive and a pathological depth raises
``ParseError("nesting too deep")``.

Speed: consecutive lines that each hold one common op in its usual spelling (what JAX emits:
constants, element-wise ops, compare, select, convert, broadcast_in_dim, ..., optionally with a
`loc(#alias)`) are read by one regular expression per line (:meth:`Parser._fast_ops`), building
exactly the IR the general path builds; hex constants are located with `str.find` and decoded
with `bytes.fromhex` + `np.frombuffer`. Everything else takes the general path.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import Any

from ..attributes import (
    ArrayAttr, BoolAttr, ConvDimensionNumbers, DenseArrayAttr, DenseElementsAttr, DictAttr,
    EnumAttr, FloatAttr, IntegerAttr, OpaqueAttr, StringAttr, StructAttr, SymbolRefAttr, TypeAttr,
    UnitAttr,
)
from ..errors import ParseError
from ..ir import (
    Block, CallSiteLoc, FileLineColLoc, FusedLoc, Location, Module, NameLoc, OpaqueLoc, Operation,
    Region, UNKNOWN_LOC, Value,
)
from ..types import (
    ComplexType, ElementType, FloatType, FunctionType, IntegerType, OpaqueType, QuantizedType,
    TensorType, TokenType, TupleType, Type, _ELEMENT_TYPES,
)
from ..registry import lookup
from .dense import DenseLiteralError, float_bits_to_value, literal_to_array
from .lexer import (
    AT, BANG, BARE, CARET, EOF, FLOAT, HASH, INTEGER, LineIndex, PUNCT, STRING,
    TENSOR, TOKEN_RE, VALUE, unescape_string,
)

__all__ = ["parse", "Parser", "LocRef"]

_MATCH = TOKEN_RE.match
_MISSING = object()
TOKEN = TokenType()
I64 = _ELEMENT_TYPES["i64"]
F64 = _ELEMENT_TYPES["f64"]

_DIMS_RE = re.compile(r"\s*<\s*((?:(?:\d+|\?|\*)\s*x\s*)*)")
_SIMPLE_TENSOR_RE = re.compile(r"tensor<((?:(?:\d+|\?)x)*)(.*)>\Z")
_DENSE_HEX_RE = re.compile(r'\s*<\s*"0x([0-9A-Fa-f]*)"\s*>')
_DENSE_OPEN_RE = re.compile(r"\s*<")
_HEX_SPLAT_RE = re.compile(r"\s*(0x[0-9A-Fa-f]+)\s*\Z")
_INT_TYPE_RE = re.compile(r"(si|ui|i)([1-9][0-9]*)\Z")
_QUANT_STORAGE_RE = re.compile(r"(si|ui|i|u)([1-9][0-9]*)\Z")
_NEXT_IS_EQ_RE = re.compile(r"\s*=")
_ENUM_DIALECTS = ("stablehlo", "chlo", "vhlo", "tosa", "mhlo", "check", "interpreter", "quant")
# The cases of the StableHLO/CHLO enums (an unknown case is a parse error, as upstream).
ENUM_CASES: dict[str, tuple[str, ...]] = {
    "comparison_direction": ("EQ", "NE", "GE", "GT", "LE", "LT"),
    "comparison_type": ("NOTYPE", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"),
    "precision": ("DEFAULT", "HIGH", "HIGHEST"),
    "fft_type": ("FFT", "IFFT", "RFFT", "IRFFT"),
    "transpose": ("TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"),
    "rng_distribution": ("UNIFORM", "NORMAL"),
    "rng_algorithm": ("DEFAULT", "THREE_FRY", "PHILOX"),
    "custom_call_api_version": ("API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL",
                                "API_VERSION_STATUS_RETURNING",
                                "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI"),
    "result_accuracy_mode": ("DEFAULT", "HIGHEST", "TOLERANCE"),
}
_DOTTED_ENUMS = {"stablehlo.result_accuracy_mode": ("stablehlo", "result_accuracy_mode")}
_UNQUALIFIED = {"module": "builtin.module", "func": "func.func", "call": "func.call",
                "return": None}


class LocRef(Location):
    """A reference to a location alias (`loc(#loc3)`), resolved when the whole file is read."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"LocRef({self.name})"


def parse(text: str, filename: str | None = None) -> Module:
    """Parse a whole file (pretty or generic form) into a :class:`Module`; raises ParseError."""
    p = Parser(text, filename)
    try:
        return p.parse_module()
    except RecursionError:
        raise p.make_error("nesting too deep") from None


class Parser:
    """State of one parse: lexer position, SSA scopes, aliases."""

    def __init__(self, text: str, filename: str | None = None) -> None:
        self.text = text
        self.filename = filename or "<string>"
        self.lines = LineIndex(text)
        self.pos = 0
        self.prev_end = 0
        self.k = 0
        self.v = ""
        self.m: Any = None
        self.values: dict[str, Any] = {}
        self.scopes: list[dict[str, Any]] = [{}]
        self.attr_aliases: dict[str, Any] = {}
        self.type_aliases: dict[str, Type] = {}
        self.loc_aliases: dict[str, Location] = {}
        self.alias_order: dict[str, Any] = {}
        self.has_loc_refs = False
        self.default_dialect = ["builtin"]
        self.type_cache: dict[str, Type] = {}
        self.sig_cache: dict[str, Any] = {}
        self.const_cache: dict[tuple[str, str], DenseElementsAttr] = {}
        self.fast_end = 0
        self.fast_loc: str | None = None
        self.block_labels: list[dict[str, Block]] = []
        self._advance()

    # --- tokens ---------------------------------------------------------------------------------

    def _advance(self) -> None:
        self.prev_end = self.pos
        m = _MATCH(self.text, self.pos)
        k = m.lastindex
        self.k = k
        self.v = m.group(k)
        self.m = m
        self.pos = m.end()

    def reset(self, pos: int) -> None:
        """Re-lex from raw text offset ``pos``."""
        self.pos = pos
        self._advance()

    def save(self) -> tuple:
        return (self.pos, self.k, self.v, self.m)

    def restore(self, state: tuple) -> None:
        self.pos, self.k, self.v, self.m = state

    @property
    def start(self) -> int:
        """Offset of the current token."""
        return self.m.start(self.k)

    def location_at(self, offset: int) -> FileLineColLoc:
        line, col = self.lines.line_col(offset)
        return FileLineColLoc(self.filename, line, col)

    def describe(self) -> str:
        if self.k == EOF:
            return "end of file"
        v = self.v
        if len(v) > 40:
            v = v[:37] + "..."
        return f"'{v}'"

    def make_error(self, msg: str, offset: int | None = None) -> ParseError:
        if offset is None:
            offset = self.start if self.m is not None else 0
        return ParseError(msg, self.location_at(offset), filename=self.filename)

    def error(self, msg: str, offset: int | None = None, found: bool = True) -> Any:
        """Raise a ParseError. For a wrong token (``found``) the message names it, and, as MLIR
        does, a token that starts a new line is reported at the end of the previous token."""
        if found:
            msg = f"{msg} but found {self.describe()}"
            if offset is None and self.m is not None:
                start = self.start
                if "\n" in self.text[self.prev_end:start]:
                    offset = self.prev_end
        raise self.make_error(msg, offset)

    def expect(self, p: str, what: str | None = None) -> None:
        if self.v != p or self.k == STRING:
            self.error(f"expected '{p}'" + (f" {what}" if what else ""))
        self._advance()

    def accept(self, p: str) -> bool:
        if self.v == p and self.k != STRING:
            self._advance()
            return True
        return False

    def keyword(self, kw: str) -> None:
        if self.v != kw or self.k != BARE:
            self.error(f"expected '{kw}'")
        self._advance()

    def integer(self) -> int:
        if self.k != INTEGER:
            self.error("expected integer value")
        v = int(self.v, 0)
        self._advance()
        return v

    def bare(self) -> str:
        if self.k != BARE:
            self.error("expected identifier")
        v = self.v
        self._advance()
        return v

    def string(self) -> str:
        if self.k != STRING:
            self.error("expected string")
        try:
            s = unescape_string(self.v)
        except ValueError as e:
            self.error(str(e), found=False)
        self._advance()
        return s

    def next_is_eq(self) -> bool:
        """Raw lookahead: is the token after the current one `=`?"""
        return _NEXT_IS_EQ_RE.match(self.text, self.pos) is not None

    # --- SSA values -----------------------------------------------------------------------------

    def push_scope(self) -> None:
        self.scopes.append({})

    def pop_scope(self) -> None:
        scope = self.scopes.pop()
        values = self.values
        for name, old in scope.items():
            if old is _MISSING:
                del values[name]
            else:
                values[name] = old

    def define(self, name: str, value: Any, offset: int | None = None) -> None:
        scope = self.scopes[-1]
        if name in scope:
            self.error(f"redefinition of SSA value '%{name}'", offset, found=False)
        scope[name] = self.values.get(name, _MISSING)
        self.values[name] = value

    def operand(self) -> Value:
        """The value named by the current VALUE token (which is consumed)."""
        if self.k != VALUE:
            self.error("expected SSA operand")
        val = self.values.get(self.v[1:])
        if val is None:
            val = self._lookup_slow(self.v)
        elif type(val) is list:
            val = val[0]
        self._advance()
        return val

    def _lookup_slow(self, tok: str) -> Value:
        name, _, idx = tok[1:].partition("#")
        val = self.values.get(name)
        if val is None:
            self.error(f"use of undeclared SSA value name '{tok}'", found=False)
        if not idx:
            return val[0] if type(val) is list else val
        i = int(idx)
        group = val if type(val) is list else [val]
        if i >= len(group):
            self.error(f"result number {i} of '%{name}' is out of range (it has {len(group)})",
                       found=False)
        return group[i]

    def operand_list(self, close: str | None = None) -> list[Value]:
        """`%a, %b, ...` (possibly empty when ``close`` is the next token)."""
        ops: list[Value] = []
        if self.k != VALUE:
            return ops
        while True:
            ops.append(self.operand())
            if self.v != "," or not self._value_follows():
                return ops
            self._advance()

    def _value_follows(self) -> bool:
        m = _MATCH(self.text, self.pos)
        return m.lastindex == VALUE

    def check_types(self, operands: list[Value], types: tuple | list, offset: int) -> None:
        if len(operands) != len(types):
            self.error(f"{len(operands)} operands present, but expected {len(types)}", offset,
                       found=False)
        for v, t in zip(operands, types):
            vt = v.type
            if vt is not t and vt != t:
                self.error(f"use of value '%{v.name}' expects different type than prior uses: "
                           f"'{t}' vs '{vt}'", offset, found=False)

    # --- types ----------------------------------------------------------------------------------

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
                self._advance()
                sign = {"i": "signless", "si": "signed", "ui": "unsigned"}[m.group(1)]
                return IntegerType(int(m.group(2)), sign)
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
        shape = tuple(None if d == "?" else int(d) for d in dims.split("x")[:-1]) if dims else ()
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
                shape = tuple(None if d == "?" else int(d) for d in parts)
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
        self.expect("(")
        inputs: list[Type] = []
        if self.v != ")":
            inputs.append(self.parse_type())
            while self.accept(","):
                inputs.append(self.parse_type())
        self.expect(")")
        self.expect("->", "in function type")
        return FunctionType(tuple(inputs), tuple(self.result_types()))

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
        unsigned = m.group(1) in ("u", "ui")
        storage = IntegerType(int(m.group(2)), "unsigned" if unsigned else "signless")
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
        return QuantizedType(storage, expressed, tuple(scales), tuple(zps), qdim, smin, smax)

    def _scale_zp(self) -> tuple[float, int]:
        if self.k == FLOAT:
            s = float(self.v)
        elif self.k == INTEGER:
            s = float(int(self.v, 0))
        else:
            self.error("expected scale value")
        self._advance()
        z = 0
        if self.accept(":"):
            z = self.integer()
        return s, z

    # --- attributes -----------------------------------------------------------------------------

    def parse_attribute(self, typed: bool = True) -> Any:
        """Any attribute value; ``typed`` allows a trailing `: type` on numbers."""
        k = self.k
        v = self.v
        if k == STRING:
            return StringAttr(self.string())
        if k == INTEGER:
            self._advance()
            if typed and self.v == ":":
                self._advance()
                t = self.parse_type()
                if isinstance(t, FloatType):
                    bits = int(v, 0)
                    return FloatAttr(float(float_bits_to_value(bits, t.dtype)), t)
                return IntegerAttr(int(v, 0), t)
            return IntegerAttr(int(v, 0), I64)  # an untyped integer is an i64 (as in MLIR)
        if k == FLOAT:
            self._advance()
            if typed and self.v == ":":
                self._advance()
                t = self.parse_type()
                return FloatAttr(_round_to(float(v), t), t)
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
            if v in ("dense_resource", "sparse", "affine_map", "affine_set", "strided",
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

    def dict_items(self) -> list[tuple[str, Any]]:
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
        p = self.pos
        m = _DENSE_HEX_RE.match(text, p)
        if m is not None:
            kind, payload, end = "hex", m.group(1), m.end()
        else:
            m = _DENSE_OPEN_RE.match(text, p)
            if m is None:
                self._advance()
                self.error("expected '<' after 'dense'")
            q = m.end()
            close = text.find(">", q)
            if close < 0:
                self.reset(q)
                self.error("expected '>' to close the dense literal", found=False)
            body = text[q:close]
            payload = body
            stripped = body.strip()
            if not stripped:
                kind = "empty"
            else:
                hm = _HEX_SPLAT_RE.match(body)
                if hm is not None:
                    kind, payload = "hexsplat", int(hm.group(1), 16)
                else:
                    kind = "text"
            end = close + 1
        self.reset(end)
        if self.v != ":":
            self.error("expected ':' after the dense literal")
        self._advance()
        t = self.parse_type()
        try:
            arr = literal_to_array(kind, payload, t)  # type: ignore[arg-type]
        except DenseLiteralError as e:
            self.error(str(e), start, found=False)
        except (ValueError, OverflowError, TypeError) as e:
            self.error(f"invalid dense literal: {e}", start, found=False)
        return DenseElementsAttr(t, arr, hex=(kind == "hex"))  # type: ignore[arg-type]

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
                return _round_to(float(v), et)
            if k == INTEGER:
                self._advance()
                if "x" in v:
                    return float(float_bits_to_value(int(v, 16), et.dtype))
                return _round_to(float(int(v)), et)
            if k == BARE and v in ("inf", "nan"):
                self._advance()
                return float(v)
            self.error("expected floating point value")
        if k != INTEGER:
            self.error("expected integer value")
        self._advance()
        return int(v, 0)

    def _hash_attr(self) -> Any:
        v = self.v
        alias = self.attr_aliases.get(v)
        if alias is not None:
            self._advance()
            return alias
        name = v[1:]
        angle = self.text.startswith("<", self.pos)
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
        if name in _DOTTED_ENUMS:
            dialect, enum = _DOTTED_ENUMS[name]
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
                params = dict(self.struct_params())
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
        if name in _STRUCT_ORDER:
            self._advance()
            self.expect("<")
            params = self.struct_params(_STRUCT_ORDER[name], name)
            self.expect(">")
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
                if self.k != BARE or self.v not in allowed:
                    self.error("expected one of: " + ", ".join(f"`{a}`" for a in allowed)
                               + f" (failed parsing {kind} dimension numbers)", self.start)
                if self.v in seen:
                    self.error(f"duplicated `{self.v}` entry (failed parsing {kind} dimension "
                               f"numbers)", found=False)
                seen.add(self.v)
            key = self.bare()
            self.expect("=")
            params.append((key, self.struct_value()))
            if not self.accept(","):
                return params
            if self.v == ">":  # trailing comma
                return params

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
                        ints.append(int(self.v, 0))
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
            return int(v, 0)
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
        """`[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`."""
        start = self.start
        inp = self._conv_list()
        if self.v != "x":
            self.error("expected 'x'")
        self._advance()
        ker = self._conv_list()
        self.expect("->")
        out = self._conv_list()

        def roles(items: list, letters: str, what: str) -> tuple[dict[str, int], tuple[int, ...]]:
            found: dict[str, int] = {}
            spatial: dict[int, int] = {}
            for pos, it in enumerate(items):
                if isinstance(it, int):
                    if it in spatial or it < 0:
                        self.error(f"duplicate or invalid spatial dimension {it} in {what}",
                                   start, found=False)
                    spatial[it] = pos
                else:
                    if it not in letters:
                        self.error(f"unexpected dimension {it}, expecting "
                                   f"{', '.join(letters)} in {what}", start, found=False)
                    if it in found:
                        self.error(f"duplicate dimension {it} in {what}", start, found=False)
                    found[it] = pos
            for c in letters:
                if c not in found:
                    self.error(f"expected dimension '{c}' in {what}", start, found=False)
            if sorted(spatial) != list(range(len(spatial))):
                self.error(f"spatial dimensions of {what} must be 0..{len(spatial) - 1}", start,
                           found=False)
            return found, tuple(spatial[i] for i in range(len(spatial)))

        fi, si = roles(inp, "bf", "input")
        fk, sk = roles(ker, "io", "kernel")
        fo, so = roles(out, "bf", "output")
        return ConvDimensionNumbers(fi["b"], fi["f"], si, fk["i"], fk["o"], sk, fo["b"], fo["f"],
                                    so)

    def _conv_list(self) -> list:
        self.expect("[")
        items: list = []
        if self.v != "]":
            while True:
                if self.k == INTEGER:
                    items.append(int(self.v))
                elif self.k == BARE:
                    items.append(self.v)
                else:
                    self.error("expected dimension")
                self._advance()
                if not self.accept(","):
                    break
        self.expect("]")
        return items

    def _capture_opaque(self) -> str:
        """Verbatim text of the current identifier plus a balanced `<...>` body if present."""
        start = self.start
        text = self.text
        i = self.pos
        if i < len(text) and text[i] == "<":
            depth = 0
            n = len(text)
            while i < n:
                c = text[i]
                if c == '"':
                    j = i + 1
                    while j < n and text[j] != '"':
                        j += 2 if text[j] == "\\" else 1
                    i = j + 1
                    continue
                if c in "<([{":
                    depth += 1
                elif c in ")]}":
                    depth -= 1
                elif c == ">":
                    if text[i - 1] != "-":
                        depth -= 1
                if depth == 0:
                    i += 1
                    break
                i += 1
            else:
                self.error("unbalanced '<' in dialect attribute or type", start, found=False)
        self.reset(i)
        return text[start:i]

    # --- locations ------------------------------------------------------------------------------

    def parse_location(self) -> Location:
        """`loc(...)` (current token is `loc`)."""
        self._advance()
        self.expect("(")
        loc = self._loc_inner()
        self.expect(")")
        return loc

    def _loc_inner(self) -> Location:
        k, v = self.k, self.v
        if k == STRING:
            s = self.string()
            if self.v == ":":
                self._advance()
                line = self.integer()
                col = 0
                if self.accept(":"):
                    col = self.integer()
                end_line = end_col = None
                if self.v == "to" and self.k == BARE:
                    self._advance()
                    if self.accept(":"):
                        end_col = self.integer()
                    else:
                        end_line = self.integer()
                        if self.accept(":"):
                            end_col = self.integer()
                return FileLineColLoc(s, line, col, end_line, end_col)
            if self.v == "(":
                self._advance()
                child = self._loc_inner()
                self.expect(")")
                return NameLoc(s, child)
            return NameLoc(s)
        if k == BARE:
            if v == "unknown":
                self._advance()
                return UNKNOWN_LOC
            if v == "callsite":
                self._advance()
                self.expect("(")
                callee = self._loc_inner()
                self.keyword("at")
                caller = self._loc_inner()
                self.expect(")")
                return CallSiteLoc(callee, caller)
            if v == "fused":
                self._advance()
                meta = None
                if self.accept("<"):
                    meta = self.parse_attribute()
                    self.expect(">")
                self.expect("[")
                locs: list[Location] = []
                if self.v != "]":
                    locs.append(self._loc_inner())
                    while self.accept(","):
                        locs.append(self._loc_inner())
                self.expect("]")
                return FusedLoc(tuple(locs), meta)
        if k == HASH:
            self._advance()
            self.has_loc_refs = True
            return LocRef(v)
        # anything else: keep verbatim up to the closing paren
        start = self.start
        depth = 0
        while not (depth == 0 and self.v == ")") and self.k != EOF:
            if self.v in "([{<" and self.k == PUNCT:
                depth += 1
            elif self.v in ")]}>" and self.k == PUNCT:
                depth -= 1
            self._advance()
        return OpaqueLoc(self.text[start:self.start].strip())

    def optional_location(self) -> Location | None:
        if self.v == "loc" and self.k == BARE:
            return self.parse_location()
        return None

    def resolve_location(self, loc: Location, memo: dict[str, Location],
                         active: set[str] | None = None) -> Location:
        """Replace alias references in ``loc`` by their definitions."""
        if isinstance(loc, LocRef):
            got = memo.get(loc.name)
            if got is not None:
                return got
            target = self.loc_aliases.get(loc.name)
            if target is None:
                return OpaqueLoc(loc.name)
            active = active or set()
            if loc.name in active:
                return OpaqueLoc(loc.name)
            active.add(loc.name)
            got = self.resolve_location(target, memo, active)
            active.discard(loc.name)
            memo[loc.name] = got
            return got
        if isinstance(loc, CallSiteLoc):
            return CallSiteLoc(self.resolve_location(loc.callee, memo, active),
                               self.resolve_location(loc.caller, memo, active))
        if isinstance(loc, NameLoc) and loc.child is not None:
            return NameLoc(loc.name, self.resolve_location(loc.child, memo, active))
        if isinstance(loc, FusedLoc):
            return FusedLoc(tuple(self.resolve_location(x, memo, active) for x in loc.locations),
                            loc.metadata)
        return loc

    # --- operations -----------------------------------------------------------------------------

    def parse_ops(self, block: Block) -> None:
        """Ops of a block, up to `}`, a block label or the end of input (a loop, no recursion).

        Lines holding one common op in its usual spelling (`%3 = stablehlo.add %1, %2 :
        tensor<4xf32>`) are read by a single regular expression (:meth:`_fast_op`); anything
        else goes through the general recursive-descent path."""
        ops = block.operations
        fast = self._fast_ops
        while True:
            k = self.k
            if k == VALUE:
                if fast(block):
                    continue
                op = self.parse_operation()
            elif k == PUNCT and self.v == "}" or k == CARET or k == EOF:
                return
            else:
                op = self.parse_operation()
            op.parent = block
            ops.append(op)

    def _fast_ops(self, block: Block) -> int:
        """Read as many consecutive one-line ops of a common simple shape as possible, starting
        at the current (VALUE) token, appending them to ``block``; returns how many were read
        (0: nothing consumed). Builds exactly the IR the general path builds; any line that
        does not fit (an attribute dict, a location, an unusual type) is left to the general
        path."""
        text = self.text
        pos = self.m.start(VALUE)
        values = self.values
        scope = self.scopes[-1]
        sig_cache = self.sig_cache
        fname = self.filename
        ops = block.operations
        match = _FAST_LINE.match
        starts = self.lines.starts()
        if starts[-1] != len(text) + 1:
            starts.append(len(text) + 1)  # sentinel: the loop below needs no bounds check
        line_i = bisect_right(starts, pos) - 1
        n = 0
        while True:
            m = match(text, pos)
            if m is None:
                break
            res, name = m.group(1, 2)
            kind = _FAST_KIND.get(name)
            if kind is None:
                break
            props: dict[str, Any] = {}
            self.fast_loc = None
            if kind == "constant":
                attr = self._fast_constant(m)
                if attr is None:
                    break
                props["value"] = attr
                operands: list[Value] = []
                rtypes = [attr.type]
                end = self.fast_end
            else:
                if kind == "compare":
                    direction, a, b, ctype, sig = m.group(7, 8, 9, 10, 11)
                    if direction is None or direction not in _CMP_DIRS or \
                            (ctype is not None and ctype not in _CMP_TYPES):
                        break
                    props["comparison_direction"] = _enum_attr("comparison_direction",
                                                               direction)
                    if ctype is not None:
                        props["compare_type"] = _enum_attr("comparison_type", ctype)
                    args = (a, b)
                    sig_off = m.start(11)
                    self.fast_loc = m.group(12)
                else:
                    args_text, mid, sig = m.group(13, 14, 15)
                    if sig is None:
                        break
                    args = args_text.split(", ") if args_text else ()
                    if mid:
                        spec = _FAST_MID.get(name)
                        if spec is None:
                            break
                        mm = spec[0].fullmatch(mid)
                        if mm is None:
                            break
                        for (attr_name, conv), g in zip(spec[1], mm.groups()):
                            props[attr_name] = conv(g, name)
                    elif name in _FAST_NEEDS_MID:
                        break
                    sig_off = m.start(15)
                    self.fast_loc = m.group(16)
                operands = []
                for a in args:
                    v = values.get(a[1:])
                    if v is None or type(v) is list:
                        operands = None  # type: ignore[assignment]
                        break
                    operands.append(v)
                if operands is None:
                    break
                parsed = sig_cache.get(sig)
                if parsed is None:
                    parsed = self._parse_signature(sig, sig_off)
                    if parsed is None:
                        break
                rtypes = None
                if type(parsed) is FunctionType:  # `(operand types) -> result`
                    ins = parsed.inputs
                    if len(ins) == len(operands) and len(parsed.results) == 1 and \
                            kind != "results0":
                        for v, t in zip(operands, ins):
                            if v.type is not t and v.type != t:
                                break
                        else:
                            rtypes = parsed.results
                elif type(parsed) is TensorType and kind in _SAME_KINDS and \
                        len(operands) == _SAME_KINDS[kind]:
                    for v in operands:
                        if v.type is not parsed and v.type != parsed:
                            break
                    else:
                        rtypes = (parsed,)
                else:
                    rtypes = _fast_result_types(kind, parsed, operands)  # type: ignore
                if rtypes is None:
                    break
                end = m.end()
            if res in scope:
                break
            start = m.start(1) - 1
            # the Operation and its result, built without the constructors' generality
            op = _op_new(Operation)
            r = _val_new(Value)
            r.type = rtypes[0]  # type: ignore[index]
            r.owner = op
            r.index = 0
            r.name = res
            op.name = name
            op.operands = operands
            op.results = [r]
            op.properties = props
            op.attributes = {}
            op.regions = []
            op.successors = []
            op.parent = block
            while starts[line_i + 1] <= start:
                line_i += 1
            alias = self.fast_loc
            if alias is None:
                loc = _new_loc(FileLineColLoc)
                loc.__dict__.update(file=fname, line=line_i + 1, col=start - starts[line_i] + 1,
                                    end_line=None, end_col=None)
                op.location = loc
            else:
                op.location = LocRef(alias)
                self.has_loc_refs = True
            ops.append(op)
            scope[res] = values.get(res, _MISSING)
            values[res] = r
            n += 1
            pos = end
        if n:
            self.reset(pos)
        return n

    def _fast_constant(self, m: Any) -> DenseElementsAttr | None:
        """The value of a fast-path `stablehlo.constant dense<...> : tensor<...>` line."""
        text = self.text
        if m.group(3) is not None:  # a hex string: find its end without a regex scan
            hs = m.end(3)
            he = text.find('"', hs)
            if he < 0:
                return None
            tm = _FAST_CONST_TYPE.match(text, he + 1)
            if tm is None:
                return None
            t = self.type_cache.get(tm.group(1))
            if t is None:
                return None
            try:
                arr = literal_to_array("hex", text[hs:he], t)
            except (DenseLiteralError, ValueError):
                return None
            self.fast_end = tm.end()
            self.fast_loc = tm.group(2)
            return DenseElementsAttr(t, arr, hex=True)
        body, ttext, self.fast_loc = m.group(4, 5, 6)
        if body is None:
            return None
        self.fast_end = m.end()
        key = (body, ttext)
        attr = self.const_cache.get(key)
        if attr is not None:
            return attr
        t = self.type_cache.get(ttext)
        if t is None:
            return None
        try:
            hm = _HEX_SPLAT_RE.match(body)
            if hm is not None:
                arr = literal_to_array("hexsplat", int(hm.group(1), 16), t)
            elif body.strip():
                arr = literal_to_array("text", body, t)
            else:
                arr = literal_to_array("empty", "", t)
        except (DenseLiteralError, ValueError, OverflowError, TypeError):
            return None
        attr = DenseElementsAttr(t, arr)
        if len(body) < 256:
            self.const_cache[key] = attr
        return attr

    def _parse_signature(self, sig: str, offset: int) -> Any:
        """Parse the type signature text of a fast-path op (cached by its text)."""
        st = self.save()
        try:
            self.reset(offset)
            types = self.type_list()
            ok = self.prev_end == offset + len(sig)
        except ParseError:
            ok = False
        self.restore(st)
        if not ok:
            return None
        parsed = types[0] if len(types) == 1 else tuple(types)
        self.sig_cache[sig] = parsed
        return parsed

    def parse_operation(self) -> Operation:
        start = self.start
        names: list[tuple[str, int]] | None = None
        if self.k == VALUE:
            names = []
            while True:
                name = self.v[1:]
                if "#" in name:
                    self.error("result name cannot contain '#'", found=False)
                self._advance()
                count = 1
                if self.v == ":":
                    self._advance()
                    count = self.integer()
                    if count < 1:
                        self.error("expected a positive result count", found=False)
                names.append((name, count))
                if self.v != ",":
                    break
                self._advance()
                if self.k != VALUE:
                    self.error("expected SSA value name")
            self.expect("=")
        nres = sum(c for _, c in names) if names else 0
        if self.k == STRING:
            op = self.parse_generic_op()
        elif self.k == BARE:
            op = self.parse_custom_op(nres)
        else:
            self.error("expected operation name")
        if self.v == "loc" and self.k == BARE:
            op.location = self.parse_location()
        else:
            op.location = self.location_at(start)
        if names:
            results = op.results
            if nres != len(results):
                self.error(f"operation defines {len(results)} results but was provided {nres} "
                           f"to bind", start, found=False)
            i = 0
            for name, count in names:
                if count == 1:
                    r = results[i]
                    r.name = name
                    self.define(name, r, start)
                else:
                    group = results[i:i + count]
                    for r in group:
                        r.name = name
                    self.define(name, group, start)
                i += count
        elif op.results:
            # results without names (legal in MLIR only when unused); give them hidden names
            pass
        return op

    def parse_custom_op(self, nres: int) -> Operation:
        name = self.v
        if "." not in name:
            mapped = _UNQUALIFIED.get(name, _MISSING)
            if mapped is None or mapped is _MISSING:
                name = f"{self.default_dialect[-1]}.{name}"
            else:
                name = mapped  # type: ignore[assignment]
        d = lookup(name)
        handler = d.syntax.parse if d is not None and d.syntax is not None else None
        if handler is None:
            self.error(f"custom op '{name}' is unknown (use the generic form "
                       f"\"{name}\"(...) for ops shlo does not know)", found=False)
        start = self.start
        self._advance()
        try:
            return handler(self, name, nres, start)
        except ParseError as e:
            if not getattr(e, "custom_op_prefixed", False):
                d = e.diagnostics[0]
                d.message = f"custom op '{name}' {d.message}"
                e.args = (d.message,)
                e.custom_op_prefixed = True  # type: ignore[attr-defined]
            raise

    def parse_generic_op(self) -> Operation:
        start = self.start
        name = self.string()
        self.expect("(", "to start the operand list")
        operands: list[Value] = []
        if self.v != ")":
            operands.append(self.operand())
            while self.accept(","):
                operands.append(self.operand())
        self.expect(")", "to end the operand list")
        successors: list[Block] = []
        if self.v == "[":
            self._advance()
            while True:
                successors.append(self.block_ref())
                if not self.accept(","):
                    break
            self.expect("]")
        props: dict[str, Any] = {}
        if self.v == "<" and self.k == PUNCT:
            self._advance()
            props = dict(self.dict_items())
            self.expect(">", "to end the properties")
        regions: list[Region] = []
        if self.v == "(" and self.k == PUNCT:
            self._advance()
            dialect = _region_dialect(name, self.default_dialect[-1])
            self.default_dialect.append(dialect)
            while True:
                regions.append(self.parse_region())
                if not self.accept(","):
                    break
            self.default_dialect.pop()
            self.expect(")", "to end the region list")
        attrs: dict[str, Any] = {}
        if self.v == "{" and self.k == PUNCT:
            attrs = dict(self.dict_items())
        self.expect(":", "followed by the op's function type")
        ft_off = self.start
        ft = self.parse_type()
        if not isinstance(ft, FunctionType):
            self.error("expected function type", ft_off, found=False)
        self.check_types(operands, ft.inputs, ft_off)
        return Operation(name, operands, list(ft.results), props, attrs, regions, successors)

    def block_ref(self) -> Block:
        if self.k != CARET:
            self.error("expected block name")
        label = self.v
        self._advance()
        labels = self.block_labels[-1] if self.block_labels else {}
        b = labels.get(label)
        if b is None:
            b = Block(label=label[1:])
            labels[label] = b
        return b

    # --- regions and blocks ---------------------------------------------------------------------

    def parse_region(self, entry_args: list[tuple[str, Type]] | None = None) -> Region:
        """`{ ops }` or `{ ^bb0(args): ops ^bb1: ... }`; ``entry_args`` names the entry block's
        arguments when the op's pretty form declares them outside the region."""
        self.expect("{")
        region = Region()
        self.push_scope()
        self.block_labels.append({})
        if self.v == "}" and not entry_args:
            self._advance()
            if entry_args is not None:
                region.append(Block())
            self.block_labels.pop()
            self.pop_scope()
            return region
        block = Block()
        if entry_args:
            for name, t in entry_args:
                a = block.add_argument(t, name)
                self.define(name, a)
        if self.k == CARET:
            if entry_args:
                self.error("invalid block name in region with named arguments", found=False)
            block = self._block_header()
        region.append(block)
        self.parse_ops(block)
        while self.k == CARET:
            block = self._block_header()
            region.append(block)
            self.parse_ops(block)
        self.expect("}", "to end the region")
        self.block_labels.pop()
        self.pop_scope()
        return region

    def _block_header(self) -> Block:
        label = self.v
        labels = self.block_labels[-1]
        block = labels.get(label)
        if block is None:
            block = Block(label=label[1:])
            labels[label] = block
        self._advance()
        if self.accept("("):
            if self.v != ")":
                while True:
                    if self.k != VALUE:
                        self.error("expected SSA value name")
                    name = self.v[1:]
                    off = self.start
                    self._advance()
                    self.expect(":")
                    t = self.parse_type()
                    self.optional_location()
                    a = block.add_argument(t, name)
                    self.define(name, a, off)
                    if not self.accept(","):
                        break
            self.expect(")")
        self.expect(":", "after the block header")
        return block

    # --- top level ------------------------------------------------------------------------------

    def parse_module(self) -> Module:
        top = Block()
        while self.k != EOF:
            k = self.k
            if (k == HASH or k == BANG) and self.next_is_eq():
                self._alias_definition()
            elif self.v == "{-#":
                self._skip_file_metadata()
            else:
                op = self.parse_operation()
                op.parent = top
                top.operations.append(op)
        ops = top.operations
        if len(ops) == 1 and ops[0].name == "builtin.module":
            mod_op = ops[0]
            mod_op.parent = None
        else:
            mod_op = Operation("builtin.module", regions=[Region([top])],
                               location=self.location_at(0))
        module = Module(mod_op, self.filename, dict(self.alias_order))
        if self.has_loc_refs:
            self._resolve_locations(module)
        return module

    def _alias_definition(self) -> None:
        name = self.v
        start = self.start
        is_type = self.k == BANG
        self._advance()
        self.expect("=")
        if is_type:
            if name in self.type_aliases:
                self.error(f"redefinition of type alias id '{name[1:]}'", start, found=False)
            t = self.parse_type()
            self.type_aliases[name] = t
            self.alias_order[name] = t
            return
        if name in self.attr_aliases or name in self.loc_aliases:
            self.error(f"redefinition of attribute alias id '{name[1:]}'", start, found=False)
        if self.v == "loc" and self.k == BARE:
            loc = self.parse_location()
            self.loc_aliases[name] = loc
            self.alias_order[name] = loc
            return
        a = self.parse_attribute()
        self.attr_aliases[name] = a
        self.alias_order[name] = a

    def _skip_file_metadata(self) -> None:
        end = self.text.find("#-}", self.pos)
        if end < 0:
            self.error("unterminated file metadata dictionary", found=False)
        self.reset(end + 3)

    def _resolve_locations(self, module: Module) -> None:
        memo: dict[str, Location] = {}
        for name, loc in list(module.aliases.items()):
            if isinstance(loc, Location):
                module.aliases[name] = self.resolve_location(loc, memo)
        for op in module.walk():
            loc = op.location
            if not isinstance(loc, (FileLineColLoc,)) and loc is not UNKNOWN_LOC:
                op.location = self.resolve_location(loc, memo)


# Known dialect attributes: parameter order and the parameters upstream omits when empty/zero.
_STRUCT_ORDER = {
    "stablehlo.gather": ("offset_dims", "collapsed_slice_dims", "operand_batching_dims",
                         "start_indices_batching_dims", "start_index_map", "index_vector_dim"),
    "stablehlo.scatter": ("update_window_dims", "inserted_window_dims", "input_batching_dims",
                          "scatter_indices_batching_dims", "scatter_dims_to_operand_dims",
                          "index_vector_dim"),
    "stablehlo.dot": ("lhs_batching_dimensions", "rhs_batching_dimensions",
                      "lhs_contracting_dimensions", "rhs_contracting_dimensions"),
    "chlo.ragged_dot": ("lhs_batching_dimensions", "rhs_batching_dimensions",
                        "lhs_contracting_dimensions", "rhs_contracting_dimensions",
                        "lhs_ragged_dimensions", "rhs_group_dimensions"),
    "stablehlo.result_accuracy": ("atol", "rtol", "ulps", "mode"),
}
_OMIT_EMPTY = {"stablehlo.gather", "stablehlo.scatter", "stablehlo.dot", "chlo.ragged_dot"}


def canonical_struct_params(name: str, params: list[tuple[str, Any]]) -> tuple:
    """Parameters of a known dialect attribute in upstream's order, without the ones upstream
    leaves out (empty dimension lists; zero tolerances of `result_accuracy`). Unknown names or
    duplicate keys are kept as written."""
    order = _STRUCT_ORDER.get(name)
    if order is None:
        return tuple(params)
    keys = [k for k, _ in params]
    if len(set(keys)) != len(keys) or any(k not in order for k in keys):
        return tuple(params)
    d = dict(params)
    out = []
    for k in order:
        if k not in d:
            continue
        v = d[k]
        if name in _OMIT_EMPTY and v == ():
            continue
        if k == "index_vector_dim" and v == 0:
            continue
        if name == "stablehlo.result_accuracy" and k != "mode" and v in (0, 0.0) \
                and not (isinstance(v, float) and str(v).startswith("-")):
            continue
        out.append((k, v))
    return tuple(out)


# --- the fast path for common one-line ops ----------------------------------------------------

_ID = r"%[\w$.\-]+"
_EOL = r"[ \t]*(?=\n|\Z)"
_OPND = _ID + r"(?:#\d+)?"
_SIG = r" : ([^\n\"{}@#]*?)"
_LOC_EOL = r"(?: loc\((#[\w$.\-]+)\))?[ \t\r]*(?=\n|\Z)\s*"
# One line holding one op: `%r = name <tail>`, where the tail is that of a constant, a compare
# or the common `operands [, kw = value] : signature` shape, optionally followed by a location
# alias reference `loc(#loc3)` (JAX's debug-info output); the whitespace up to the *next* line's
# first token is consumed too, so that consecutive lines chain without the lexer.
_FAST_LINE = re.compile(
    r"%([\w$.\-]+) = ((?:stablehlo|chlo)\.[a-z_0-9]+) "
    r"(?:"
    r'(?<=constant )dense<(?:("0x)|([^>"\n]*)> : (tensor<[0-9x?]*[a-z0-9]+>)' + _LOC_EOL + ")"
    r"|(?<=compare ) ?([A-Z]+), (" + _OPND + r"), (" + _OPND + r")(?:,  ?([A-Z]+))?" + _SIG +
    _LOC_EOL +
    r"|(" + _OPND + r"(?:, " + _OPND + r")*)?((?:,? ?[a-z_]+ = [^:\n\"{}]*?)?)" + _SIG +
    _LOC_EOL + r")")
_FAST_CONST_TYPE = re.compile(r"> : (tensor<[0-9x?]*[a-z0-9]+>)" + _LOC_EOL)
_CMP_DIRS = frozenset(ENUM_CASES["comparison_direction"])
_CMP_TYPES = frozenset(ENUM_CASES["comparison_type"])
_ENUM_CACHE: dict[tuple[str, str], EnumAttr] = {}


def _enum_attr(enum: str, value: str) -> EnumAttr:
    a = _ENUM_CACHE.get((enum, value))
    if a is None:
        a = _ENUM_CACHE[(enum, value)] = EnumAttr("stablehlo", enum, value)
    return a


_UNARY_FAST = ("abs cbrt ceil count_leading_zeros cosine exponential exponential_minus_one floor "
               "imag log log_plus_one logistic not negate popcnt real round_nearest_afz "
               "round_nearest_even rsqrt sign sine sqrt tan tanh convert "
               "uniform_quantize uniform_dequantize").split()
_BINARY_FAST = ("add atan2 divide maximum minimum multiply power remainder shift_left "
                "shift_right_arithmetic shift_right_logical subtract and or xor").split()
_FAST_KIND: dict[str, str] = {}
for _n in _UNARY_FAST:
    _FAST_KIND["stablehlo." + _n] = "same1"
for _n in _BINARY_FAST:
    _FAST_KIND["stablehlo." + _n] = "same2"
_FAST_KIND.update({
    "stablehlo.clamp": "same3", "stablehlo.select": "select",
    "stablehlo.reshape": "functional", "stablehlo.bitcast_convert": "functional",
    "stablehlo.dynamic_reshape": "functional", "stablehlo.is_finite": "functional",
    "stablehlo.broadcast_in_dim": "functional", "stablehlo.transpose": "functional",
    "stablehlo.dynamic_broadcast_in_dim": "functional", "stablehlo.broadcast": "functional",
    "stablehlo.concatenate": "functional", "stablehlo.get_dimension_size": "functional",
    "stablehlo.iota": "results0", "stablehlo.reverse": "same1",
    "stablehlo.compare": "compare", "stablehlo.constant": "constant",
})


def _i64_list(text: str, name: str) -> Any:
    body = text.strip()[1:-1].strip()
    return DenseArrayAttr(I64, tuple(int(x) for x in body.split(",")) if body else ())


def _i64(text: str, name: str) -> Any:
    return IntegerAttr(int(text), I64)


_INTS = r"(\[(?:-?\d+(?:, -?\d+)*)?\])"
_FAST_MID = {
    "stablehlo.broadcast_in_dim": (re.compile(r", dims = " + _INTS),
                                   (("broadcast_dimensions", _i64_list),)),
    "stablehlo.dynamic_broadcast_in_dim": (re.compile(r", dims = " + _INTS),
                                           (("broadcast_dimensions", _i64_list),)),
    "stablehlo.transpose": (re.compile(r", dims = " + _INTS), (("permutation", _i64_list),)),
    "stablehlo.reverse": (re.compile(r", dims = " + _INTS), (("dimensions", _i64_list),)),
    "stablehlo.broadcast": (re.compile(r", sizes = " + _INTS), (("broadcast_sizes", _i64_list),)),
    "stablehlo.concatenate": (re.compile(r", dim = (\d+)"), (("dimension", _i64),)),
    "stablehlo.get_dimension_size": (re.compile(r", dim = (\d+)"), (("dimension", _i64),)),
    "stablehlo.iota": (re.compile(r"dim = (\d+)"), (("iota_dimension", _i64),)),
}
_FAST_NEEDS_MID = frozenset(_FAST_MID)
_SAME_KINDS = {"same1": 1, "same2": 2, "same3": 3}
_OPERAND_COUNT = {"same1": 1, "same2": 2, "same3": 3, "select": 3, "results0": 0, "compare": 2}


def _fast_result_types(kind: str, parsed: Any, operands: list[Value]) -> list[Type] | None:
    n = _OPERAND_COUNT.get(kind)
    if n is not None and len(operands) != n:
        return None
    if kind == "results0":
        return [parsed] if isinstance(parsed, TensorType) else None
    if kind == "select":
        if type(parsed) is not tuple or len(parsed) != 2:
            if isinstance(parsed, FunctionType):
                return _fn_results(parsed, operands)
            return None
        want = (parsed[0], parsed[1], parsed[1])
        for v, t in zip(operands, want):
            if v.type is not t and v.type != t:
                return None
        return [parsed[1]]
    if isinstance(parsed, FunctionType):
        return _fn_results(parsed, operands)
    if kind == "functional" or kind == "compare" or type(parsed) is tuple:
        return None
    for v in operands:
        if v.type is not parsed and v.type != parsed:
            return None
    return [parsed]


def _fn_results(ft: FunctionType, operands: list[Value]) -> list[Type] | None:
    ins = ft.inputs
    if len(ins) != len(operands) or len(ft.results) != 1:
        return None
    for v, t in zip(operands, ins):
        if v.type is not t and v.type != t:
            return None
    return list(ft.results)


_op_new = Operation.__new__


_new_loc = object.__new__
_val_new = Value.__new__


def _round_to(v: float, t: Any) -> float:
    """``v`` rounded to the float type ``t`` (a FloatAttr holds its value in its own type)."""
    if isinstance(t, FloatType) and t.name != "f64":
        import numpy as np

        with np.errstate(over="ignore"):
            return float(t.dtype.type(v))
    return v


def _first(kv: tuple) -> Any:
    return kv[0]


def _region_dialect(op_name: str, current: str) -> str:
    if op_name == "func.func":
        return "func"
    if op_name == "builtin.module":
        return "builtin"
    return current
