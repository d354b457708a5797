"""Tables of the one-byte float formats computed in AVX2 registers instead of read.

A lookup costs ~1.2 cycles per element on this project's machine whatever the loop
(docs/performance.md, "Issue 17, stop 30"), about twice a float32 kernel's time. Where a table
has a form that registers compute, that form runs instead (``_bytes_jit``, ``_pairs_jit``):

* the widening to float32 (``convert``): the bits placed as an f16's, widened and scaled
  (``widen_bytes``); the narrowing from float32: subnormal results rounded by the float32
  adder, normal ones on the integer bits (``narrow_by_rounding``);

* f4 (16 codes): its 16 x 16 table of codes as 16 byte shuffles (``nibble_pairs``);
* sums and differences of f6E2M3FN as signed bytes, its values being multiples of 1/8 up to
  60/8 (``fixed_sums``, :func:`fixed_spec`);
* sums and differences of other f6/f8 formats with 2-4 mantissa bits, products and quotients
  of f6 formats: in f16/f32 arithmetic, the operands' bits placed as f16's
  (``exact_arithmetic``);
* products and quotients of formats with 1-3 mantissa bits: the factoring by exponents
  (``scaled_pairs``, :func:`scaled_form`).

Each form is compared with its table on every entry (all 65,536 pairs of a binary table)
before it is used, once per (op, dtype); a form that differs anywhere is dropped and the table
is read. Same table, same
results. docs/semantics/elementwise.md ("Narrow floats").
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Tuple

import numpy as np

from ...dtypes import is_ml_float
from .. import _half

__all__ = ["register_form", "widening_form", "narrowing_form", "scaled_form", "fixed_spec"]

Loop = Callable[[np.ndarray, np.ndarray, np.ndarray], Any]
"""``loop(x, y, out)`` on flat uint8 bit patterns."""
Form = Optional[Tuple[Loop, Loop]]
"""A candidate: (the loop to check on every pair, the loop to use), or None."""

_FORMS: dict[tuple[str, np.dtype], Loop | None] = {}


def register_form(key: str, dt: np.dtype, table: np.ndarray) -> Loop | None:
    """The loop computing ``table`` (of the op ``key`` on one-byte ``dt``) in registers, the
    first form that equals it on every pair, made once per (op, dtype); None (no form, x86
    without AVX2, no compiled loops: asked again while those are off)."""
    if (key, dt) not in _FORMS:
        mod = _half.loops()
        if mod is None:
            return None
        found = None
        if mod.SCALED and _format(dt) is not None:
            for make in (_nibble_form, _fixed_form, _arithmetic_form, _factored_form):
                form = make(key, dt, table, mod)
                if form is not None and agrees(form[0], table):
                    found = form[1]
                    break
        _FORMS.setdefault((key, dt), found)
    return _FORMS[(key, dt)]


_WIDENINGS: dict[tuple[str, np.dtype], Callable[[np.ndarray, np.ndarray], Any] | None] = {}


def widening_form(key: str, dt: np.dtype, table: np.ndarray
                  ) -> Callable[[np.ndarray, np.ndarray], Any] | None:
    """The loop ``(codes, out)`` computing the float32 ``table`` of one-byte ``dt`` (a
    conversion's) in registers (``_bytes_jit.widen_bytes``), if it gives every entry; made once
    per (key, dtype); None (another table, no form, no compiled loops)."""
    found = _WIDENINGS.get((key, dt), _UNKNOWN)
    if found is not _UNKNOWN:
        return found  # type: ignore[return-value]
    mod = _half.loops()
    if mod is None:
        return None
    info = _format(dt) if table.dtype == np.float32 else None
    found = None
    if mod.SCALED and info is not None and int(info.nmant) >= 1:
        magnitude, special_min, fnuz = _codes(dt)
        spec = np.array([magnitude, special_min, magnitude + 1, int(fnuz), 10 - int(info.nmant),
                         _scale(15 - (1 - int(info.minexp)))], np.int64)
        t = table.view(np.uint32)

        def loop(codes: np.ndarray, out: np.ndarray) -> None:
            mod.widen_bytes(spec, t, codes, out)

        every = np.tile(np.arange(256, dtype=np.uint8), 16)  # (the vector loop's blocks)
        got = np.empty(every.size, np.uint32)
        loop(every, got)
        found = loop if np.array_equal(got, t[every]) else None
    _WIDENINGS.setdefault((key, dt), found)
    return _WIDENINGS[(key, dt)]


_UNKNOWN = object()


def narrowing_spec(dt: np.dtype) -> np.ndarray | None:
    """The spec of ``_bytes_jit.narrow_by_rounding`` for one-byte ``dt``, or None (no mantissa
    bits: f8E8M0FNU)."""
    info = _format(dt)
    m, bits, bias = int(info.nmant), int(info.bits), 1 - int(info.minexp)
    if m < 1:
        return None
    magnitude, special_min, fnuz = _codes(dt)
    top = magnitude if special_min == 0xFF else special_min - 1
    offset = (1 << (22 - m)) - 1 - ((127 - bias) << 23)
    return np.array([_scale(24 - bias - m), _scale(1 - bias), 23 - m, offset & 0xFFFFFFFF,
                     top, 32 - bits, 0 if fnuz else 0xFFFFFFFF], np.int64)


def rounding_agrees(loop: Callable[[np.ndarray, np.ndarray], Any], table: np.ndarray,
                    shift: int) -> bool:
    """Whether ``loop(bits, out)`` gives the narrowing table's entry on four float32s of each
    entry: its low ``shift`` bits 0, 1, the first dropped bit alone, all ones."""
    mod = _half.loops()
    entry = np.arange(table.size >> 1, dtype=np.uint32) << shift
    low = np.array([0, 1, 1 << (shift - 1), (1 << shift) - 1], np.uint32)
    every = (entry[:, None] | low[None, :]).reshape(-1)
    got = np.empty(every.size, np.uint8)
    loop(every, got)
    return bool(np.array_equal(
        got, mod.narrow_by_table(table, shift, every, np.empty(every.size, np.uint8))))


_NARROWINGS: dict[np.dtype, Callable[[np.ndarray, np.ndarray], Any] | None] = {}


def narrowing_form(dt: np.dtype, table: np.ndarray, shift: int
                   ) -> Callable[[np.ndarray, np.ndarray], Any] | None:
    """The loop ``(bits, out)`` computing the narrowing table (``_tables.tabled_narrowing``:
    float32 bits -> one-byte ``dt``, ``shift`` its low bits) on the float32 bits
    (``_bytes_jit.narrow_by_rounding``) if :func:`rounding_agrees`; made once per dtype; None
    (no :func:`narrowing_spec`, no compiled loops)."""
    found = _NARROWINGS.get(dt, _UNKNOWN)
    if found is not _UNKNOWN:
        return found  # type: ignore[return-value]
    mod = _half.loops()
    if mod is None:
        return None
    spec = narrowing_spec(dt)
    found = None
    if spec is not None:
        def loop(b: np.ndarray, out: np.ndarray) -> None:
            mod.narrow_by_rounding(spec, table, shift, b, out)

        found = loop if rounding_agrees(loop, table, shift) else None
    _NARROWINGS.setdefault(dt, found)
    return _NARROWINGS[dt]


def _codes(dt: np.dtype) -> tuple[int, int, bool]:
    """(the magnitude mask, the first magnitude code of a NaN or infinity or 0xFF, whether the
    format's 0x80 is its one NaN (FNUZ: no -0)) of a signed one-byte format."""
    magnitude = (1 << (int(_format(dt).bits) - 1)) - 1
    with np.errstate(all="ignore"):
        values = np.arange(magnitude + 2, dtype=np.uint8).view(dt).astype(np.float32)
    special = ~np.isfinite(values[:magnitude + 1])
    return (magnitude, int(np.argmax(special)) if special.any() else 0xFF,
            bool(np.isnan(values[magnitude + 1])))


def _scale(k: int) -> int:
    """The float32 bits of 2^k."""
    return int(np.float32(2.0 ** k).view(np.uint32))


def agrees(loop: Loop, table: np.ndarray) -> bool:
    """Whether ``loop`` gives ``table``'s entry on all 65,536 pairs."""
    v = np.arange(256, dtype=np.uint8)
    got = _half.gather_pairs(table, np.repeat(v, 256), np.tile(v, 256), loop)
    return got is not None and np.array_equal(got.view(np.uint8), table.view(np.uint8))


def _format(dt: np.dtype) -> Any:
    """ml_dtypes' finfo of a one-byte ml_dtypes float, else None."""
    if np.dtype(dt).itemsize != 1 or not is_ml_float(dt):
        return None
    import ml_dtypes

    return ml_dtypes.finfo(dt)


def _nibble_form(key: str, dt: np.dtype, table: np.ndarray, mod: Any) -> Form:
    """f4: the table's 16 x 16 corner (its codes' pairs) in registers."""
    if int(_format(dt).bits) != 4:
        return None
    corner = np.ascontiguousarray(table.view(np.uint8).reshape(256, 256)[:16, :16]).reshape(-1)

    def loop(a: np.ndarray, b: np.ndarray, o: np.ndarray) -> None:
        mod.nibble_pairs(corner, a, b, o)

    return loop, loop


_ARITH_OPS = {"add": 0, "multiply": 1, "divide": 2, "subtract": 3}


def _arithmetic_form(key: str, dt: np.dtype, table: np.ndarray, mod: Any) -> Form:
    """add/subtract (f6/f8 with 2-4 mantissa bits), multiply and divide (f6) in f16/f32
    arithmetic (``_pairs_jit.exact_arithmetic``): NaN and infinity operands looked up, the
    overflow code the cast's of a large float32 (a NaN, the infinity, f6's largest finite),
    0 / 0 the table's."""
    op, info = key.rpartition(".")[2], _format(dt)
    m, bits, bias = int(info.nmant), int(info.bits), 1 - int(info.minexp)
    form = _ARITH_OPS.get(op, 15) << 8 | bits << 4 | m
    if form not in mod.ARITH_FORMS:
        return None
    magnitude, special_min, fnuz = _codes(dt)
    t = table.view(np.uint8)
    with np.errstate(all="ignore"):
        over = int(np.array(np.float32(1e30)).astype(dt).view(np.uint8))
    # lanes looked up: a magnitude above spec[0], or the byte spec[1] (FNUZ's NaN; else a
    # code that is above spec[0] already)
    nan_code = magnitude + 1 if fnuz or special_min > magnitude else special_min
    spec = np.array([min(special_min, magnitude + 1) - 1, nan_code,
                     over & (0xFF if fnuz else magnitude),
                     _scale(bias - 15 if op == "divide" else 15 - bias), t[0]], np.int64)

    def loop(a: np.ndarray, b: np.ndarray, o: np.ndarray) -> None:
        mod.exact_arithmetic(spec, t, a, b, o, form)

    return loop, loop


def _factored_form(key: str, dt: np.dtype, table: np.ndarray, mod: Any) -> Form:
    """multiply/divide by the factoring by exponents: checked on every pair, then used
    adaptively (the plain lookup when the first elements rarely fit it)."""
    spec = scaled_form(key, table, dt)
    if spec is None:
        return None
    t = table.view(np.uint8)
    return (lambda a, b, o: mod.scaled_pairs(spec, t, a, b, o, False),
            lambda a, b, o: mod.scaled_pairs(spec, t, a, b, o, True))


def _chained(entries: np.ndarray, chunks: int) -> np.ndarray:
    """A table of up to 16 * ``chunks`` byte ``entries`` as ``_pairs_jit._chained`` reads
    it: 16-entry chunks, each but the last xor the next one, each twice."""
    table = np.zeros((chunks, 16), np.uint8)
    table.reshape(-1)[:entries.size] = entries
    table[:-1] ^= table[1:]
    return np.repeat(table[:, None, :], 2, axis=1).reshape(-1)


def fixed_spec(key: str, dt: np.dtype) -> np.ndarray | None:
    """The spec of ``_pairs_jit.fixed_sums`` for add/subtract (``key``) of an f6 format whose
    values are multiples of its least subnormal q up to 63 q (f6E2M3FN), else None: each
    magnitude code's multiple of q, and each multiple's code (the float32 cast's, ties to
    even)."""
    op, info = key.rpartition(".")[2], _format(dt)
    if op not in ("add", "subtract") or info is None or int(info.bits) != 6:
        return None
    q = float(info.smallest_subnormal)
    units = np.arange(32, dtype=np.uint8).view(dt).astype(np.float64) / q
    if not (np.isfinite(units).all() and (units == np.round(units)).all() and units.max() <= 63):
        return None
    with np.errstate(all="ignore"):
        encode = (np.arange(128) * q).astype(np.float32).astype(dt).view(np.uint8) & 0x1F
    return np.concatenate([_chained(units.astype(np.uint8), 2), _chained(encode, 8)])


def _fixed_form(key: str, dt: np.dtype, table: np.ndarray, mod: Any) -> Form:
    """add/subtract of f6E2M3FN as signed bytes (:func:`fixed_spec`)."""
    spec = fixed_spec(key, dt)
    if spec is None:
        return None
    t, subtract = table.view(np.uint8), key.endswith("subtract")

    def loop(a: np.ndarray, b: np.ndarray, o: np.ndarray) -> None:
        mod.fixed_sums(spec, t, a, b, o, subtract)

    return loop, loop


def scaled_form(key: str, table: np.ndarray, dt: np.dtype) -> np.ndarray | None:
    """The spec of ``_pairs_jit.scaled_pairs`` for a product (``key`` ends in "multiply") or
    quotient ("divide") ``table`` of a signed 6- or 8-bit float format with 1-3 mantissa bits,
    derived from the table itself: ``R`` is the table at operands of fixed exponents. None for
    other ops and formats (and where the compiled loop cannot run)."""
    op, mod, info = key.rpartition(".")[2], _half.loops(), _format(dt)
    if op not in ("multiply", "divide") or info is None or mod is None or not mod.SCALED:
        return None
    m, bits = int(info.nmant), int(info.bits)
    if not 1 <= m <= 3 or bits == 4:  # (f8E3M4: a 256-entry R; f8E8M0FNU: no mantissa, no
        return None  # sign; f4: all 16 x 16 pairs in registers, :func:`_nibble_form`)
    bias = 1 - int(info.minexp)
    sign = 1 << (bits - 1)
    top = int(np.array(info.max, dt).view(np.uint8))  # the largest finite magnitude's code
    t = table.view(np.uint8).reshape(256, 256).astype(np.int64)
    frac = np.arange(1 << m)
    p, q = (bias, bias) if op == "multiply" else (bias + 1, bias)  # results stay normal
    e0 = p + q - bias if op == "multiply" else p - q + bias
    r = t[((p << m) | frac)[:, None], ((q << m) | frac)[None, :]] - (e0 << m)
    spec = np.zeros(mod.SCALED_SPEC, np.uint8)
    spec[:128] = _chained(r.reshape(-1) & 0xFF, 4)
    negative_zero = float(np.array(sign, np.uint8).view(dt)) == 0.0
    spec[128:140] = [m, (-bias if op == "multiply" else bias) & 0xFF,
                     0 if op == "multiply" else 0xFF, (top >> m) + 1, 1 << m, top - (1 << m),
                     sign, sign if negative_zero else 0, 0xFF if op == "multiply" else 0,
                     (1 << m) - 1, 0xFF >> m, (0xFF << m) & 0xFF]
    return spec
