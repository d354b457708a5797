"""MLIR's spelling of scalar tokens: float values and string literals (layer 0).

Types (:mod:`shlo.types`), attributes (:mod:`shlo.attributes`) and locations (:mod:`shlo.ir`)
print themselves in MLIR syntax; this module holds the two spellings they share:

* :func:`format_float`: a float value as MLIR prints it (llvm::APFloat's `toString`), so that
  every value, NaN payloads and -0.0 included, reads back to the same bits;
* :func:`escape_string`: a string literal with MLIR's escapes (the lexer's `unescape_string` is
  its inverse).
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

import numpy as np

from .dtypes import finfo, uint_of_size

if TYPE_CHECKING:  # pragma: no cover
    from .types import FloatType

__all__ = ["format_float", "escape_string"]

_F64 = np.dtype(np.float64)
_INF = float("inf")
_PREC_CACHE: dict[Any, int] = {}


def format_float(value: Any, ftype: "FloatType | None" = None, integral_ok: bool = False) -> str:
    """MLIR's spelling of a float (as `printFloatValue` does it): llvm::APFloat's 6-digit
    scientific form (`1.000000e+00`) when it reads back to the same value, else APFloat's
    natural-precision form (`-23.8084774`, `3.26916253E+18`), else (NaN, Inf, or a plain integer
    form without a `.`) the hex bit pattern (`0x7FC00000`), so every value round-trips.

    ``ftype`` None means f64; ``integral_ok`` allows `5.0` for an integral value where a hex
    integer would not read back as a bit pattern (untyped contexts)."""
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
    bits = int(np.array([x], dtype=dtype).view(uint_of_size(dtype.itemsize))[0])
    digits = dtype.itemsize * 2
    if ftype is not None and ftype.width < 8:
        digits = 1 if ftype.width <= 4 else 2
    return "0x" + format(bits, f"0{digits}X")


def _precision_bits(dtype: np.dtype, ftype: "FloatType | None") -> int:
    key = ftype.name if ftype is not None else "f64"
    p = _PREC_CACHE.get(key)
    if p is None:
        p = 11 if key == "tf32" else int(finfo(dtype).nmant) + 1
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


_NEEDS_ESCAPE_RE = re.compile(r'[^\x20-\x7e]|["\\]')


def escape_string(value: str) -> str:
    """A string literal (with quotes) for ``value``, escaped as MLIR prints it (`\\\\`, `\\XX`);
    bytes kept by `surrogateescape` (binary payloads) come back as the original bytes."""
    if not _NEEDS_ESCAPE_RE.search(value):
        return '"' + value + '"'
    out = []
    for b in value.encode("utf-8", "surrogateescape"):
        if b == 0x5C:
            out.append("\\\\")
        elif 0x20 <= b < 0x7F and b != 0x22:
            out.append(chr(b))
        else:
            out.append("\\%02X" % b)
    return '"' + "".join(out) + '"'
