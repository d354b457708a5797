"""Dense element literals: the body of `dense<...>` -> numpy arrays, and scalar literal values.

The parser hands over the raw body of `dense<...>` (the text between `<` and `>`) and the tensor
type that follows it. :func:`classify_literal` says what the body is (the one place that
decides it): a hex string `"0x..."` (the raw little-endian bytes of the elements), a hex splat
`0x7FC00000` (the bit pattern of one element), empty, or a nested literal (`[[1, 2], [3, 4]]`,
`(1.0, 2.0)` complex elements, `true`, `nan`, ...). :func:`literal_to_array` then builds the
array of the type's storage dtype and shape (`bytes.fromhex` + `np.frombuffer` for hex).
:func:`scalar_value` is the value of a scalar literal attribute (`chlo.constant_like`'s value).

Printing is layer 0: :func:`shlo.attributes.format_dense_body` (the text between `dense<` and
`>`) and :func:`shlo.spelling.format_float` (MLIR's spelling of floats); they are re-exported
here.
"""

from __future__ import annotations

import binascii
import json
import re
from typing import Any

import numpy as np

from ..attributes import (
    HEX_THRESHOLD, BoolAttr, DenseElementsAttr, FloatAttr, IntegerAttr, OpaqueAttr,
    format_dense_body, format_element,
)
from ..resources import ResourceBlob
from ..dtypes import uint_of_size
from ..spelling import format_float
from ..types import ComplexType, ElementType, FloatType, IntegerType, QuantizedType, TensorType
from .lexer import LiteralError

__all__ = ["classify_literal", "literal_to_array", "scalar_value", "float_bits_to_value",
           "DenseLiteralError", "HEX_THRESHOLD", "format_dense_body", "format_float",
           "format_element", "HexBlob"]


class DenseLiteralError(LiteralError):
    """A malformed or ill-typed dense literal (the parser turns it into a ParseError)."""


_JSON_SAFE_RE = re.compile(r"[\s\[\],0-9eE.+\-]*\Z")
_TOKEN_RE = re.compile(
    r"\s*(?:(\[)|(\])|(\()|(\))|(,)|(true|false)"
    r"|([-+]?0x[0-9a-fA-F]+)"
    r"|([-+]?(?:nan|inf|NaN|Inf|INF|NAN)|[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?))"
)
_HEX_DIGITS_RE = re.compile(r"[0-9A-Fa-f]*\Z")
_HEX_SPLAT_RE = re.compile(r"0x[0-9A-Fa-f]+\Z")


_DECIMAL_INTEGER = re.compile(r"(?<![\w.+-])-?\d+(?![\w.])").search
"""A decimal integer token (not part of `1.5`, `2.`, `1e-5`, `0x7F`)."""
_INTEGER_FOR_FLOAT = ("unexpected decimal integer literal for a floating point value (add a "
                      "trailing dot to make the literal a float)")


def classify_literal(body: str) -> tuple[str, Any]:
    """What the body of a `dense<...>` literal is, and its payload:

    * ``("hex", raw)``: a hex string `"0x..."`; ``raw`` its bytes (None for an odd number of
      digits, which :func:`literal_to_array` reports);
    * ``("hexsplat", bits)``: `0x...` outside quotes, the bit pattern of one element;
    * ``("empty", "")``: `dense<>`;
    * ``("text", body)``: a nested literal.

    No errors here: a malformed body is reported by :func:`literal_to_array`."""
    s = body.strip()
    if not s:
        return "empty", ""
    c = s[0]
    if c == '"':
        if len(s) >= 4 and s.startswith('"0x') and s[-1] == '"':
            digits = s[3:-1]
            try:
                raw: bytes | None = bytes.fromhex(digits)
            except ValueError:
                raw = None
            if raw is not None and 2 * len(raw) == len(digits):  # (fromhex skips spaces)
                return "hex", raw
            if len(digits) % 2 and _HEX_DIGITS_RE.match(digits):
                return "hex", None
        return "text", body
    if c == "0" and _HEX_SPLAT_RE.match(s):
        return "hexsplat", int(s, 16)
    return "text", body


def _element_dtype(et: ElementType) -> np.dtype:
    return et.storage_type.dtype if isinstance(et, QuantizedType) else et.dtype


def float_bits_to_value(bits: int, dtype: np.dtype) -> np.generic:
    """The element of ``dtype`` whose bit pattern is ``bits`` (LiteralError if it does not fit,
    as MLIR's "hexadecimal float constant out of range for type")."""
    if not 0 <= bits < 1 << (8 * dtype.itemsize):
        raise DenseLiteralError(f"hexadecimal float constant {bits:#x} out of range for type")
    return np.array([bits], dtype=uint_of_size(dtype.itemsize)).view(dtype)[0]


def _int_range(et: ElementType) -> tuple[int, int]:
    if isinstance(et, QuantizedType):
        et = et.storage_type
    if isinstance(et, IntegerType):
        if et.width == 1:
            return 0, 1
        return et.min, et.max
    return -(1 << 63), (1 << 63) - 1  # index


def mlir_integer(v: int, negative: bool, et: ElementType) -> int | None:
    """The value an integer literal ``v`` (``negative``: spelled with a `-`, so `-0` counts)
    has as an element of integer type ``et``, by MLIR's rule (`buildAttributeAPInt`): its
    magnitude fits the width; a negative value has the sign bit set after negation (so `-0` is
    out of range); a positive value of a signed type or `index` leaves the sign bit clear. A
    signless value above the signed range is a bit pattern (`9 : i4` is -7); None when out of
    range."""
    if isinstance(et, QuantizedType):
        et = et.storage_type
    width = et.width if isinstance(et, IntegerType) else 64
    m = -v if v < 0 else v
    if m >> width:
        return None
    if negative:
        if m == 0 or m > 1 << (width - 1):
            return None
        if width == 1:
            return 1
        return v if not (isinstance(et, IntegerType) and et.signedness == "unsigned") \
            else (1 << width) - m
    signed = not isinstance(et, IntegerType) or et.signedness == "signed"
    if signed and m >> (width - 1):
        return None
    if isinstance(et, IntegerType) and et.signedness == "signless" and width > 1 \
            and m >> (width - 1):
        return m - (1 << width)
    return m


def _wrap_int(v: int, et: ElementType) -> int:
    """Hex integer literals are bit patterns: wrap them into the type's range."""
    lo, hi = _int_range(et)
    if v > hi and lo < 0:
        width = (hi + 1).bit_length()
        v -= 1 << width
    return v


def _split_literal(body: str) -> tuple[list[Any], tuple[int, ...] | None]:
    """Tokenize a nested literal: flat leaf tokens and the nested shape (None for a scalar)."""
    leaves: list[Any] = []
    depth = 0
    counts: list[int] = []  # elements seen at each open depth
    shape: list[int | None] = []
    pos = 0
    n = len(body)
    in_pair: list[Any] | None = None
    expect_value = True
    saw_scalar = False
    while True:
        m = _TOKEN_RE.match(body, pos)
        if m is None:
            rest = body[pos:].strip()
            if not rest:
                break
            raise DenseLiteralError(f"unexpected '{rest[:20]}' in dense literal")
        pos = m.end()
        g = m.lastindex
        if g == 1:  # [
            if in_pair is not None:
                raise DenseLiteralError("unexpected '[' in complex element")
            if depth:
                counts[depth - 1] += 1
            depth += 1
            if len(counts) < depth:
                counts.append(0)
                shape.append(None)
            counts[depth - 1] = 0
            expect_value = True
        elif g == 2:  # ]
            if depth == 0:
                raise DenseLiteralError("unbalanced ']' in dense literal")
            c = counts[depth - 1]
            if shape[depth - 1] is None:
                shape[depth - 1] = c
            elif shape[depth - 1] != c:
                raise DenseLiteralError("dense literal has an inconsistent (ragged) shape")
            depth -= 1
            expect_value = False
        elif g == 3:  # (
            in_pair = []
        elif g == 4:  # )
            if in_pair is None or len(in_pair) != 2:
                raise DenseLiteralError("expected a complex element '(real, imag)'")
            leaves.append(tuple(in_pair))
            in_pair = None
            if depth:
                counts[depth - 1] += 1
            else:
                saw_scalar = True
            expect_value = False
        elif g == 5:  # ,
            if in_pair is None:
                expect_value = True
        else:
            tok = m.group(g)
            if in_pair is not None:
                in_pair.append(tok)
                continue
            leaves.append(tok)
            if depth:
                counts[depth - 1] += 1
            else:
                if saw_scalar:
                    raise DenseLiteralError("expected ',' or ']' in dense literal")
                saw_scalar = True
            expect_value = False
        if pos >= n:
            break
    if depth:
        raise DenseLiteralError("unbalanced '[' in dense literal")
    del expect_value
    if not shape:
        return leaves, None
    # The leaves must all sit at the innermost depth.
    total = 1
    for d in shape:
        total *= d or 0
    if any(d is None for d in shape):
        raise DenseLiteralError("malformed dense literal")
    if total != len(leaves):
        raise DenseLiteralError("dense literal has an inconsistent (ragged) shape")
    return leaves, tuple(shape)  # type: ignore[arg-type]


def _convert_leaf(tok: Any, et: ElementType, dtype: np.dtype) -> Any:
    if isinstance(et, ComplexType):
        if not isinstance(tok, tuple):
            tok = (tok, "0")
        comp = et.element.dtype
        re_ = _convert_leaf(tok[0], et.element, comp)
        im = _convert_leaf(tok[1], et.element, comp)
        # Built from the parts' bytes: complex(float(re), float(im)) would quiet a signaling
        # NaN payload on the way through float64.
        return np.array([re_, im], dtype=comp).view(dtype)[0]
    if isinstance(tok, tuple):
        raise DenseLiteralError("complex element for a non-complex type")
    if isinstance(et, FloatType):
        if tok in ("true", "false"):
            raise DenseLiteralError(f"expected a floating point value for {et.name}")
        if tok[:3] in ("0x", "-0x", "+0x") or tok[:2] == "0x":
            if tok[0] in "+-":
                raise DenseLiteralError("hexadecimal float literal should not have a sign")
            return float_bits_to_value(int(tok, 16), dtype)
        low = tok.lower()
        if low.lstrip("+-") in ("nan", "inf"):
            return float(low)
        return float(tok)
    # integers and booleans
    if tok == "true":
        v = 1
    elif tok == "false":
        v = 0
    elif "x" in tok:
        v = _wrap_int(int(tok, 16), et)
    else:
        if "." in tok or "e" in tok or "E" in tok or "n" in tok.lower():
            raise DenseLiteralError(f"expected an integer value, got '{tok}'")
        v = int(tok)
        if v == 0 and tok.startswith("-"):  # MLIR: -0 negated keeps the sign bit clear
            raise DenseLiteralError("integer constant out of range for type")
    lo, hi = _int_range(et)
    if not lo <= v <= hi:
        wrapped = mlir_integer(v, tok.startswith("-"), et) \
            if isinstance(et, IntegerType) and et.signedness == "signless" else None
        if wrapped is not None:
            return wrapped
        if isinstance(et, IntegerType) and et.width == 1:
            raise DenseLiteralError(f"integer constant out of range for i1: {v}")
        raise DenseLiteralError(f"integer constant {v} out of range for {et}")
    return v


def _from_list(leaves: list[Any], et: ElementType, dtype: np.dtype) -> np.ndarray:
    values = [_convert_leaf(t, et, dtype) for t in leaves]
    out = np.empty(len(values), dtype=dtype)
    for i, v in enumerate(values):
        out[i] = v
    return out


_NEG_ZERO = re.compile(r"(?<![\w.])-0+(?![\w.])").search


def _json_fast(body: str, et: ElementType, dtype: np.dtype) -> np.ndarray | None:
    """Nested lists of decimal numbers via json (C speed); None when not applicable."""
    if not _JSON_SAFE_RE.match(body):
        return None
    integers: list[str] = []  # (json's integer tokens in a float literal: MLIR's error)
    try:
        obj = json.loads(body, parse_int=lambda tok: integers.append(tok) or float(tok)) \
            if isinstance(et, FloatType) else json.loads(body)
    except ValueError:
        return None  # (`4.` is not json: the general path, which checks for integers too)
    if integers:
        raise DenseLiteralError(_INTEGER_FOR_FLOAT)
    try:
        if isinstance(et, FloatType):
            arr = np.array(obj, dtype=np.float64)
            if arr.dtype != object and dtype != np.float64:
                with np.errstate(over="ignore"):
                    arr = arr.astype(dtype)
            return arr
        if isinstance(et, ComplexType) or "-0" in body and _NEG_ZERO(body):
            return None  # (an integer `-0` is an error, reported element-wise)
        arr = np.array(obj)
        if arr.dtype.kind not in "iub":
            return None
        if arr.size:
            lo, hi = _int_range(et)
            if arr.dtype.kind == "i" or arr.dtype.kind == "u":
                if int(arr.min()) < lo or int(arr.max()) > hi:
                    return None  # (the element-wise path wraps or reports each value)
        return arr.astype(dtype)
    except (ValueError, OverflowError) as e:
        if isinstance(e, DenseLiteralError):
            raise
        return None


def literal_to_array(kind: str, payload: Any, type_: TensorType) -> np.ndarray:
    """Build the array of a `dense<...>` literal of tensor type ``type_``.

    ``kind`` and ``payload`` are what :func:`classify_literal` says of the literal's body: `hex`
    (the raw bytes), `hexsplat` (the integer bit pattern of one element), `empty` or `text`
    (the body's source text).
    """
    if not isinstance(type_, TensorType) or not type_.is_static:
        raise DenseLiteralError("elements literal type must have static shape")
    et = type_.element_type
    if not isinstance(et, QuantizedType) and getattr(et, "dtype", None) is None:
        raise DenseLiteralError(f"dense literal of element type {et} is not supported")
    dtype = _element_dtype(et)
    shape = tuple(type_.shape)  # type: ignore[arg-type]
    n = 1
    for d in shape:
        n *= d  # type: ignore[operator]
    if kind == "empty":
        if n != 0:
            raise DenseLiteralError(f"parsed zero elements, but type ({type_}) expected at least 1")
        return np.empty(shape, dtype=dtype)
    if kind == "hex":
        raw = payload
        if raw is None:
            raise DenseLiteralError("expected an even number of hex digits in dense literal")
        if isinstance(et, IntegerType) and et.width == 1:
            if len(raw) == n:
                arr = np.frombuffer(raw, dtype=np.uint8) != 0
                return arr.reshape(shape)
            if len(raw) == 1:
                return np.broadcast_to(np.array(raw[0] != 0), shape)
            if len(raw) == (n + 7) // 8:
                bits = np.unpackbits(np.frombuffer(raw, dtype=np.uint8), bitorder="little")
                return bits[:n].astype(np.bool_).reshape(shape)
            raise DenseLiteralError(f"elements hex data size is invalid for provided type: "
                                    f"got {len(raw)} bytes for {n} elements of i1")
        size = dtype.itemsize
        if len(raw) == n * size:
            return np.frombuffer(raw, dtype=dtype).reshape(shape)
        if len(raw) == size:
            return np.broadcast_to(np.frombuffer(raw, dtype=dtype).reshape(()), shape)
        raise DenseLiteralError(f"elements hex data size is invalid for provided type: got "
                                f"{len(raw)} bytes, expected {n * size}")
    if kind == "hexsplat":
        bits = payload
        if isinstance(et, FloatType):
            v = float_bits_to_value(bits, dtype)
            return np.broadcast_to(np.array(v, dtype=dtype), shape)
        if isinstance(et, ComplexType):
            raise DenseLiteralError("hex splat is not supported for complex types")
        v = _convert_leaf(hex(bits), et, dtype)
        return np.broadcast_to(np.array(v, dtype=dtype), shape)
    # text
    body = payload
    if "/" in body:  # comments inside a multi-line literal
        body = re.sub(r"//[^\n]*", "", body)
    arr = _json_fast(body, et, dtype)
    if arr is None:
        if (isinstance(et, FloatType) or isinstance(et, ComplexType)) and \
                _DECIMAL_INTEGER(body) is not None:  # (the json path's check, for the others)
            raise DenseLiteralError(_INTEGER_FOR_FLOAT)
        leaves, lit_shape = _split_literal(body)
        flat = _from_list(leaves, et, dtype)
        arr = flat.reshape(lit_shape if lit_shape is not None else ())
    if arr.shape == shape:
        return arr
    if arr.ndim == 0 or (arr.size == 1 and arr.ndim == 0):
        return np.broadcast_to(arr.reshape(()), shape)
    raise DenseLiteralError(
        f"inferred shape of elements literal ([{', '.join(map(str, arr.shape))}]) does not "
        f"match type ([{', '.join(map(str, shape))}])")


# --- scalar literal values ----------------------------------------------------------------------

_NUMBER_RE = re.compile(r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|inf|nan|0x[0-9A-Fa-f]+)")


def scalar_value(attr: Any) -> Any:
    """The value of a scalar literal attribute: an integer, float or bool attribute's value, the
    first element of a dense literal, the complex value of `#complex.number<:f32 1.0, 2.0>`
    (kept verbatim by the parser), or a Python number as is; ValueError for anything else."""
    if isinstance(attr, (IntegerAttr, FloatAttr, BoolAttr)):
        return attr.value
    if isinstance(attr, DenseElementsAttr):
        return attr.array.reshape(-1)[0]
    if isinstance(attr, OpaqueAttr):
        nums = _NUMBER_RE.findall(attr.text.split(">")[0].split(":", 1)[-1])
        if len(nums) >= 2:
            return complex(float(nums[-2]), float(nums[-1]))
    if isinstance(attr, (int, float, bool, complex)):
        return attr
    raise ValueError(f"unsupported value attribute {attr!r}")


# --- resource blobs in the text: `key: "0x<alignment><data>"` -----------------------------------

_DECODE_CHUNK = 1 << 24  # bytes decoded at a time: the text is never copied whole


class HexBlob(ResourceBlob):
    """A resource blob still in the program's text: `"0x` + 8 hex digits of alignment (u32, little
    endian) + the data's hex digits + `"`. Nothing is decoded until :meth:`data` is first called;
    it then decodes in chunks into one read-only buffer (the text is never sliced whole) and lets
    go of the text. Printing before that copies the original digits."""

    __slots__ = ("_text", "_start", "_end")

    def __init__(self, text: str, start: int, end: int) -> None:
        """``text[start:end]`` is the quoted string, quotes included."""
        digits = end - start - 4  # without `"0x` and `"`
        if digits < 8 or digits % 2 or text[start:start + 3] != '"0x':
            raise DenseLiteralError("expected a hex string `\"0x...\"` of an even number of digits, "
                                    "starting with the 4-byte alignment")
        try:
            alignment = int.from_bytes(bytes.fromhex(text[start + 3:start + 11]), "little")
        except ValueError:
            raise DenseLiteralError("invalid hex digits in the resource blob's alignment") from None
        self.alignment = alignment
        self._data = None
        self._text: str | None = text
        self._start = start + 11
        self._end = end - 1

    @property
    def nbytes(self) -> int:
        if self._data is not None:
            return len(self._data)
        return (self._end - self._start) // 2

    def data(self) -> np.ndarray:
        if self._data is None:
            text, s, n = self._text, self._start, self.nbytes
            out = np.empty(n, np.uint8)
            try:
                for i in range(0, n, _DECODE_CHUNK):
                    j = min(n, i + _DECODE_CHUNK)
                    out[i:j] = np.frombuffer(binascii.a2b_hex(text[s + 2 * i:s + 2 * j]), np.uint8)
            except (binascii.Error, ValueError):
                raise ValueError("the resource blob has characters that are not hex digits") \
                    from None
            out.flags.writeable = False
            self._data, self._text = out, None
        return self._data

    def hex(self) -> str:
        if self._text is not None:
            return self._text[self._start - 11:self._end + 1]
        return super().hex()
