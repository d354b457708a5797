"""Dense element literals: text <-> numpy arrays, and MLIR's spelling of float values.

Parsing: the parser hands over the raw body of `dense<...>` (a hex string, a hex splat, or a
nested literal) together with the tensor type that follows it; :func:`literal_to_array` returns
an array of the type's storage dtype and shape. Hex strings are the raw little-endian bytes of
the elements (`bytes.fromhex` + `np.frombuffer`), a hex splat is the bit pattern of one element.

Printing: :func:`format_dense_body` returns the text between `dense<` and `>`, as upstream
prints it: a splat as one element, more than 100 elements as a hex string, otherwise nested
lists; floats as `1.000000e+00` when 6 digits round-trip, else the shortest round-tripping
decimal, and NaN/Inf as hex bit patterns (so NaN payloads and -0.0 survive).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import numpy as np

from ..types import ComplexType, ElementType, FloatType, IntegerType, QuantizedType, TensorType

__all__ = ["literal_to_array", "format_dense_body", "format_float", "format_element",
           "HEX_THRESHOLD", "float_bits_to_value", "DenseLiteralError"]

HEX_THRESHOLD = 100
"""Non-splat literals with more elements than this print as hex strings (upstream's default)."""


class DenseLiteralError(ValueError):
    """A malformed or ill-typed dense literal (the parser turns it into a ParseError)."""


_UINT_OF_SIZE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}

_JSON_SAFE_RE = re.compile(r"[\s\[\],0-9eE.+\-]*\Z")
_TOKEN_RE = re.compile(
    r"\s*(?:(\[)|(\])|(\()|(\))|(,)|(true|false)"
    r"|([-+]?0x[0-9a-fA-F]+)"
    r"|([-+]?(?:nan|inf|NaN|Inf|INF|NAN)|[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?))"
)


def _element_dtype(et: ElementType) -> np.dtype:
    return et.storage_type.dtype if isinstance(et, QuantizedType) else et.dtype


def float_bits_to_value(bits: int, dtype: np.dtype) -> np.generic:
    """The element of ``dtype`` whose bit pattern is ``bits``."""
    size = dtype.itemsize
    return np.array([bits], dtype=_UINT_OF_SIZE[size]).view(dtype)[0]


def _int_range(et: ElementType) -> tuple[int, int]:
    if isinstance(et, QuantizedType):
        et = et.storage_type
    if isinstance(et, IntegerType):
        if et.width == 1:
            return 0, 1
        return et.min, et.max
    return -(1 << 63), (1 << 63) - 1  # index


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
    lo, hi = _int_range(et)
    if not lo <= v <= hi:
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


def _json_fast(body: str, et: ElementType, dtype: np.dtype) -> np.ndarray | None:
    """Nested lists of decimal numbers via json (C speed); None when not applicable."""
    if not _JSON_SAFE_RE.match(body):
        return None
    try:
        obj = json.loads(body)
    except ValueError:
        return None
    try:
        if isinstance(et, FloatType):
            arr = np.array(obj, dtype=np.float64)
            if arr.dtype != object and dtype != np.float64:
                with np.errstate(over="ignore"):
                    arr = arr.astype(dtype)
            return arr
        if isinstance(et, ComplexType):
            return None
        arr = np.array(obj)
        if arr.dtype.kind not in "iub":
            return None
        if arr.size:
            lo, hi = _int_range(et)
            if arr.dtype.kind == "i" or arr.dtype.kind == "u":
                if int(arr.min()) < lo or int(arr.max()) > hi:
                    raise DenseLiteralError(f"integer constant out of range for {et}")
        return arr.astype(dtype)
    except (ValueError, OverflowError) as e:
        if isinstance(e, DenseLiteralError):
            raise
        return None


def literal_to_array(kind: str, payload: Any, type_: TensorType) -> np.ndarray:
    """Build the array of a `dense<...>` literal of tensor type ``type_``.

    ``kind`` is `hex` (payload: hex digits of the raw bytes), `hexsplat` (payload: the integer
    bit pattern of one element), `empty` or `text` (payload: the literal's source text).
    """
    if not isinstance(type_, TensorType) or not type_.is_static:
        raise DenseLiteralError("elements literal type must have static shape")
    et = type_.element_type
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
        raw = bytes.fromhex(payload) if len(payload) % 2 == 0 else None
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


# --- printing -----------------------------------------------------------------------------------


def format_float(value: Any, ftype: FloatType | None = None, integral_ok: bool = False) -> str:
    """MLIR's spelling of a float (as `printFloatValue` does it): llvm::APFloat's 6-digit
    scientific form (`1.000000e+00`) when it reads back to the same value, else APFloat's
    natural-precision form (`-23.8084774`, `3.26916253E+18`), else (NaN, Inf, or a plain integer
    form without a `.`) the hex bit pattern (`0x7FC00000`), so every value round-trips."""
    dtype = ftype.dtype if ftype is not None else _F64
    x = value if isinstance(value, np.generic) and value.dtype == dtype else dtype.type(value)
    xf = float(x)
    if xf == xf and xf not in (_INF, -_INF):
        prec_bits = _precision_bits(dtype, ftype)
        s = _apfloat_to_string(xf, prec_bits, 6, 0, False)
        if _reads_back(s, xf, dtype):
            return s
        s = _apfloat_to_string(xf, prec_bits, 0, 3, True)
        if "." in s:
            return s
        if integral_ok:  # contexts where a hex integer would not read as a bit pattern
            return s + ".0"
    bits = int(np.array([x], dtype=dtype).view(_UINT_OF_SIZE[dtype.itemsize])[0])
    digits = dtype.itemsize * 2
    if ftype is not None and ftype.width < 8:
        digits = 1 if ftype.width <= 4 else 2
    return "0x" + format(bits, f"0{digits}X")


_F64 = np.dtype(np.float64)
_INF = float("inf")
_PREC_CACHE: dict[Any, int] = {}


def _precision_bits(dtype: np.dtype, ftype: FloatType | None) -> int:
    key = ftype.name if ftype is not None else "f64"
    p = _PREC_CACHE.get(key)
    if p is None:
        if key == "tf32":
            p = 11
        else:
            import ml_dtypes

            p = int(ml_dtypes.finfo(dtype).nmant) + 1
        _PREC_CACHE[key] = p
    return p


def _reads_back(s: str, xf: float, dtype: np.dtype) -> bool:
    v = float(s)
    if dtype != _F64:
        with np.errstate(over="ignore"):
            v = float(dtype.type(v))
    return v == xf and (v != 0.0 or s.startswith("-") == (math.copysign(1.0, xf) < 0))


def _apfloat_to_string(x: float, semantics_precision: int, precision: int, max_padding: int,
                       truncate_zero: bool) -> str:
    """llvm::APFloat::toString for a finite value (its digit generation truncates, then rounds
    half up on one digit, exactly as upstream prints)."""
    out = "-" if math.copysign(1.0, x) < 0 else ""
    if x == 0.0:
        if not max_padding:
            if truncate_zero:
                return out + "0.0E+0"
            return out + "0." + "0" * precision + "e+00"
        return out + "0.0"
    if not precision:
        precision = 2 + semantics_precision * 59 // 196
    num, den = abs(x).as_integer_ratio()
    k = den.bit_length() - 1  # den == 2**k
    sig = num * 5 ** k if k else num
    exp = -k
    # AdjustToPrecision on the integer: drop surplus digits by truncation
    bits = sig.bit_length()
    bits_required = (precision * 196 + 58) // 59
    if bits > bits_required:
        tens = (bits - bits_required) * 59 // 196
        if tens:
            exp += tens
            sig //= 10 ** tens
    digits = str(sig)
    stripped = digits.rstrip("0")
    exp += len(digits) - len(stripped)
    digits = stripped
    # AdjustToPrecision on the digits: round half up looking at one digit
    n = len(digits)
    if n > precision:
        drop = n - precision
        if digits[precision] < "5":
            kept = digits[:precision].rstrip("0")
            exp += n - len(kept)
            digits = kept
        else:
            kept = str(int(digits[:precision]) + 1)
            if len(kept) > precision:  # carried through: one digit
                exp += drop + (len(kept) - precision)
                kept = kept[:precision]
            else:
                exp += drop
            stripped = kept.rstrip("0")
            exp += len(kept) - len(stripped)
            digits = stripped
    nd = len(digits)
    if not max_padding:
        scientific = True
    elif exp >= 0:
        scientific = exp > max_padding or nd + exp > precision
    else:
        msd = exp + nd - 1
        scientific = msd < 0 and -msd > max_padding
    if scientific:
        e = exp + nd - 1
        mant = digits[0] + "."
        if nd == 1 and truncate_zero:
            mant += "0"
        else:
            mant += digits[1:]
        if not truncate_zero and precision > nd - 1:
            mant += "0" * (precision - nd + 1)
        es = str(abs(e))
        if not truncate_zero and len(es) < 2:
            es = "0" + es
        return f"{out}{mant}{'E' if truncate_zero else 'e'}{'+' if e >= 0 else '-'}{es}"
    if exp >= 0:
        return out + digits + "0" * exp
    whole = exp + nd
    if whole > 0:
        return f"{out}{digits[:whole]}.{digits[whole:]}"
    return f"{out}0.{'0' * -whole}{digits}"


def format_element(v: Any, et: ElementType) -> str:
    """One element of a dense literal."""
    if isinstance(et, QuantizedType):
        et = et.storage_type
    if isinstance(et, ComplexType):
        c = complex(v)
        comp = et.element
        re_ = np.asarray(v).real.astype(comp.dtype)
        im = np.asarray(v).imag.astype(comp.dtype)
        del c
        return f"({format_float(re_[()], comp)},{format_float(im[()], comp)})"
    if isinstance(et, FloatType):
        return format_float(v, et)
    if isinstance(et, IntegerType) and et.width == 1:
        return "true" if v else "false"
    return str(int(v))


def _nested(flat: list[str], shape: tuple[int, ...]) -> str:
    if not shape:
        return flat[0]
    if len(shape) == 1:
        return "[" + ", ".join(flat) + "]"
    step = len(flat) // shape[0] if shape[0] else 0
    return "[" + ", ".join(_nested(flat[i * step:(i + 1) * step], shape[1:])
                           for i in range(shape[0])) + "]"


def _is_splat(arr: np.ndarray) -> bool:
    if arr.size <= 1:
        return arr.size == 1
    if arr.strides and all(s == 0 for s in arr.strides):
        return True
    flat = np.ascontiguousarray(arr).reshape(-1)
    b = flat.view(np.uint8).reshape(flat.size, -1)
    return bool((b == b[0]).all())


def format_dense_body(arr: np.ndarray, et: ElementType, hex_threshold: int = HEX_THRESHOLD) -> str:
    """The text inside `dense<...>` for ``arr`` with element type ``et``."""
    if arr.size == 0:
        # `dense<>`, unless the literal was a splat (kept as a zero-stride view of its value),
        # which upstream keeps printing as a splat: `dense<5> : tensor<0x3xi32>`
        b = arr.base
        while isinstance(b, np.ndarray) and b.size == 0:
            b = b.base
        if isinstance(b, np.ndarray) and b.dtype == arr.dtype:
            return format_element(b.reshape(-1)[0], et)
        return ""
    if _is_splat(arr):
        first = arr.reshape(-1)[0] if arr.ndim else arr[()]
        return format_element(first, et)
    base = et.storage_type if isinstance(et, QuantizedType) else et
    is_bool = isinstance(base, IntegerType) and base.width == 1
    sub_byte = isinstance(base, IntegerType) and base.width in (2, 4) or \
        isinstance(base, FloatType) and base.width < 8 or \
        isinstance(base, FloatType) and base.name == "tf32"
    if arr.size > hex_threshold and not sub_byte:
        data = np.ascontiguousarray(arr).tobytes()
        return '"0x' + data.hex().upper() + '"'
    flat = arr.reshape(-1)
    if isinstance(base, IntegerType) and not is_bool:
        texts = [str(int(x)) for x in flat.astype(np.int64 if base.is_signed or base.width < 64
                                                  else np.uint64).tolist()]
    elif isinstance(base, FloatType) and base.name in ("f32", "f64"):
        texts = _format_floats_fast(flat, base)
    else:
        texts = [format_element(x, et) for x in flat]
    return _nested(texts, arr.shape)


def _format_floats_fast(flat: np.ndarray, ft: FloatType) -> list[str]:
    out = []
    for x in flat:
        out.append(format_float(x, ft))
    return out
