"""The binary ops of the one-byte float formats computed in AVX2 registers instead of read
from their 256 x 256 tables (numba; imported only through ``_half_jit``, on first use), each
form checked against its table on every pair by ``elementwise/_pair_forms.py`` before use:

* f4's 16 x 16 table of codes as 16 byte shuffles (``nibble_pairs``);
* products and quotients by their factoring by exponents (``scaled_pairs``);
* sums and differences (products and quotients of f6) in f16/f32 arithmetic
  (``exact_arithmetic``);
* f6E2M3FN sums and differences as signed bytes (``fixed_sums``).
"""

from __future__ import annotations

from typing import Any, Callable

import numba as nb
import numpy as np
from llvmlite import ir
from numba import literal_unroll, types
from numba.core import cgutils
from numba.extending import intrinsic

from ._bytes_jit import _JIT, _byte_at, _look_up_lanes, _on_bytes, gather_pairs

__all__ = ["nibble_pairs", "scaled_pairs", "exact_arithmetic", "ARITH_FORMS", "SCALED_SPEC",
           "fixed_sums", "FIXED_SPEC"]


def _chained(b_: Any, pshufb: Any, chunks: list[Any], index: Any, c: Callable[[int], Any]
             ) -> Any:
    """IR: ``table[index]`` (``index`` < 16 * len(chunks)) of a table stored as xor-chained
    16-entry chunks: chunk k is read at index + 0x80 - 16 (k + 1), whose bit 7 (a zero for
    vpshufb) is clear for the chunks from index's on; their xor is index's own entry."""
    r = b_.call(pshufb, [chunks[-1], index])
    for k in range(len(chunks) - 1):
        r = b_.xor(r, b_.call(pshufb, [chunks[k], b_.add(index, c(0x70 - 16 * k))]))
    return r


SCALED_SPEC = 140
"""Bytes of a :func:`scaled_pairs` spec: the mantissa table ``R`` in four 16-entry chunks,
each but the last xor the next one, each twice (vpshufb looks up within 16-byte halves;
128 bytes), then 12 one-byte fields:
``shift`` (mantissa bits M), ``offset`` (added to the exponent fields: -bias for a product,
+bias for a quotient), ``flip`` (0, or 0xFF to negate the second exponent), ``top`` (largest
exponent sum kept), ``low`` (smallest normal magnitude code), ``span`` (largest finite
magnitude code - low), ``sign`` (the sign bit), ``zero_sign`` (the sign bit if the format has
-0, else 0), ``both_zero`` (0xFF for a product: a zero either side gives zero), ``mant``
(2^M - 1), ``down`` and ``up`` (byte masks after shifting by M)."""
_SCALED_W = 32  # bytes per block (one AVX2 register)
_SCALED_K = 3  # fallback lanes per block looked up without a branch


@intrinsic
def _scaled32(typingctx, spec, table, x, y, out, start, stop):  # type: ignore[no-untyped-def]
    """:func:`scaled_pairs` on the blocks of 32 elements from ``start`` to ``stop`` (below
    ``x.size``: a block may write element ``stop`` too, its right value). Returns how many
    lanes were looked up in ``table`` instead."""
    w = _SCALED_W

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        sp, ts, xs, ys, os_ = (context.make_array(t)(context, builder, a)
                               for t, a in zip(signature.args[:5], args[:5]))
        b_ = builder
        i1, i8, i16, i32, i64 = (ir.IntType(k) for k in (1, 8, 16, 32, 64))
        vb, vw = ir.VectorType(i8, w), ir.VectorType(i16, w // 2)
        pshufb = cgutils.get_or_insert_function(
            b_.module, ir.FunctionType(vb, [vb, vb]), "llvm.x86.avx2.pshuf.b")
        cttz = cgutils.get_or_insert_function(
            b_.module, ir.FunctionType(i32, [i32, i1]), "llvm.cttz.i32")
        ctpop = cgutils.get_or_insert_function(
            b_.module, ir.FunctionType(i32, [i32]), "llvm.ctpop.i32")
        start, stop = args[5], args[6]

        def splat(v: Any, vt: Any) -> Any:
            u = ir.Constant(vt, ir.Undefined)
            lanes = ir.Constant(ir.VectorType(i32, vt.count), [0] * vt.count)
            return b_.shuffle_vector(b_.insert_element(u, v, ir.Constant(i32, 0)), u, lanes)

        def at(base: Any, i: Any) -> Any:
            return b_.bitcast(b_.gep(base, [i]), vb.as_pointer())

        def c(v: int) -> Any:
            return ir.Constant(vb, [v] * w)

        chunks = [b_.load(at(sp.data, ir.Constant(stop.type, 32 * k)), align=1)
                  for k in range(4)]
        shift, offset, flip, top, low, span, sign, zero_sign, both_zero, mant, down, up = (
            b_.load(b_.gep(sp.data, [ir.Constant(i64, 128 + k)])) for k in range(12))
        by = splat(b_.zext(shift, i16), vw)
        offset, flip, top, low, span, sign, zero_sign, both_zero, mant, down, up = (
            splat(v, vb) for v in (offset, flip, top, low, span, sign, zero_sign, both_zero,
                                   mant, down, up))

        def shr(v: Any) -> Any:  # bytes >> M (AVX2 shifts 16-bit lanes: mask each byte)
            return b_.and_(b_.bitcast(b_.lshr(b_.bitcast(v, vw), by), vb), down)

        def shl(v: Any) -> Any:
            return b_.and_(b_.bitcast(b_.shl(b_.bitcast(v, vw), by), vb), up)

        def normal(v: Any) -> Any:  # low <= v <= low + span, unsigned
            return b_.icmp_unsigned("<=", b_.sub(v, low), span)

        def lookup(k: Any) -> None:  # out[k] = table[x[k] * 256 + y[k]]
            hi, lo = (b_.zext(b_.load(b_.gep(v.data, [k])), i64) for v in (xs, ys))
            index = b_.or_(b_.shl(hi, ir.Constant(i64, 8)), lo)
            b_.store(b_.load(b_.gep(ts.data, [index])), b_.gep(os_.data, [k]))

        fell = cgutils.alloca_once_value(b_, ir.Constant(i64, 0))
        with cgutils.for_range_slice(b_, start, stop, ir.Constant(stop.type, w)) as (i, _):
            a, b = (b_.load(at(v.data, i), align=1) for v in (xs, ys))
            not_sign = b_.xor(sign, c(0xFF))
            am, bm = b_.and_(a, not_sign), b_.and_(b, not_sign)
            index = b_.or_(shl(b_.and_(a, mant)), b_.and_(b, mant))
            r = _chained(b_, pshufb, chunks, index, c)  # R[index], index < 64
            e = b_.add(b_.add(shr(am), offset), b_.sub(b_.xor(shr(bm), flip), flip))
            code = b_.add(shl(e), r)
            a_normal, b_normal = normal(am), normal(bm)
            ok = b_.and_(b_.and_(a_normal, b_normal),
                         b_.and_(b_.icmp_unsigned("<=", e, top), normal(code)))
            zero_bits = b_.xor(zero_sign, c(0xFF))
            az, bz = (b_.icmp_unsigned("==", b_.and_(v, zero_bits), c(0)) for v in (a, b))
            either = b_.icmp_unsigned("!=", both_zero, c(0))
            zero = b_.or_(b_.and_(az, b_.or_(b_normal, b_.and_(bz, either))),
                          b_.and_(b_.and_(bz, a_normal), either))
            s = b_.and_(b_.xor(a, b), sign)
            b_.store(b_.select(ok, b_.or_(code, s), b_.and_(s, zero_sign)), at(os_.data, i),
                     align=1)
            bad = b_.not_(b_.bitcast(b_.or_(ok, zero), i32))
            b_.store(b_.add(b_.load(fell), b_.zext(b_.call(ctpop, [bad]), i64)), fell)
            mask = bad
            for _ in range(_SCALED_K):  # an exhausted mask's cttz is 32: element i + 32
                lookup(b_.add(i, b_.zext(b_.call(cttz, [mask, ir.Constant(i1, 0)]),
                                         stop.type)))
                mask = b_.and_(mask, b_.sub(mask, ir.Constant(i32, 1)))
            with cgutils.if_unlikely(b_, b_.icmp_unsigned("!=", mask, ir.Constant(i32, 0))):
                before = b_.block
                loop, after = b_.append_basic_block("more"), b_.append_basic_block("more.end")
                b_.branch(loop)
                b_.position_at_end(loop)
                left = b_.phi(i32)
                left.add_incoming(mask, before)
                lookup(b_.add(i, b_.zext(b_.call(cttz, [left, ir.Constant(i1, 1)]), stop.type)))
                rest = b_.and_(left, b_.sub(left, ir.Constant(i32, 1)))
                left.add_incoming(rest, loop)
                b_.cbranch(b_.icmp_unsigned("!=", rest, ir.Constant(i32, 0)), loop, after)
                b_.position_at_end(after)
        return b_.load(fell)

    ok = all(isinstance(t, types.Array) and t.dtype == types.uint8 and t.layout == "C"
             for t in (spec, table, x, y, out))
    ok = ok and isinstance(start, types.Integer) and start == stop
    return (types.int64(spec, table, x, y, out, start, stop), codegen) if ok else None


_SCALED_PROBE = 8192
"""Elements :func:`scaled_pairs` computes before deciding whether the rest is worth its
formula (a multiple of 32)."""


@nb.njit(**_JIT)
def scaled_pairs(spec, table, x, y, out, adaptive):  # type: ignore[no-untyped-def]
    """``out[i] = table[x[i] * 256 + y[i]]`` where ``table`` is a product or quotient of a
    one-byte float format with 1-3 mantissa bits, computed by its factoring by exponents
    (``spec``, :data:`SCALED_SPEC`): for normal operands and a normal result,

        code(a * b) = ((e(a) + e(b) - bias) << M) + R[m(a)][m(b)],  sign = sign(a) ^ sign(b)

    (for a quotient e(a) - e(b) + bias), with ``R`` the rounded product of two significands,
    looked up in registers 32 lanes at a time (vpshufb); zeros by their sign rule. The other
    lanes (subnormal operands or results, overflow, NaN, infinities) are looked up in
    ``table``. The caller checks the formula against ``table`` on every pair. 1e6 f8E4M3FN
    products of normal-distributed values (6.7% of lanes looked up): 315-340 us against the
    table's 410 alone, 356 against 451 us in issue17_bench. With ``adaptive``, when more than
    1 lane in 8 of the first :data:`_SCALED_PROBE` elements had to be looked up, the rest goes
    to :func:`gather_pairs` (uniformly random bytes: 2x slower by the formula)."""
    n = x.size
    stop = (n - 1) // _SCALED_W * _SCALED_W if n > 0 else 0
    first = min(stop, _SCALED_PROBE)
    fell = _scaled32(spec, table, x, y, out, 0, first)
    if stop > first:
        if adaptive and fell * 8 > first:
            gather_pairs(table, x, y, out)
            return
        _scaled32(spec, table, x, y, out, first, stop)
    for i in range(stop, n):
        out[i] = table[(np.uint16(x[i]) << np.uint16(8)) | np.uint16(y[i])]


@intrinsic
def _nibbles32(typingctx, table, x, y, out, n):  # type: ignore[no-untyped-def]
    """:func:`nibble_pairs` on the first ``n - n % 32`` elements, 32 at a time in AVX2
    registers. Returns how many it did."""
    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        ts, xs, ys, os_ = (context.make_array(t)(context, builder, a)
                           for t, a in zip(signature.args[:4], args[:4]))
        i8, i32 = ir.IntType(8), ir.IntType(32)
        vb, v16 = ir.VectorType(i8, 32), ir.VectorType(i8, 16)
        pshufb = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(vb, [vb, vb]), "llvm.x86.avx2.pshuf.b")

        def c(v: int) -> Any:
            return ir.Constant(vb, [v] * 32)

        def at(base: Any, i: Any, vt: Any = vb) -> Any:
            return builder.bitcast(builder.gep(base, [i]), vt.as_pointer())

        rows = []  # the table's 16 rows, each in both 128-bit halves of a register
        for k in range(16):
            row = builder.load(at(ts.data, ir.Constant(i32, 16 * k), v16), align=1)
            rows.append(builder.shuffle_vector(row, row, ir.Constant(
                ir.VectorType(i32, 32), list(range(16)) * 2)))
        n = args[4]
        m = builder.and_(n, ir.Constant(n.type, ~31))
        with cgutils.for_range_slice(builder, ir.Constant(n.type, 0), m,
                                     ir.Constant(n.type, 32)) as (i, _):
            # the code of each byte as ml_dtypes reads it: low 3 bits, any higher one the sign
            a, b = (builder.load(at(v.data, i), align=1) for v in (xs, ys))
            a, b = (builder.or_(builder.and_(v, c(7)), builder.and_(
                builder.sext(builder.icmp_unsigned(">", v, c(7)), vb), c(8))) for v in (a, b))
            r = c(0)
            for k in range(16):  # row k where a's code is k, b's code the column
                pick = builder.sext(builder.icmp_unsigned("==", a, c(k)), vb)
                r = builder.or_(r, builder.and_(pick, builder.call(pshufb, [rows[k], b])))
            builder.store(r, at(os_.data, i), align=1)
        return m

    return _on_bytes(codegen, table, x, y, out, n)


@nb.njit(**_JIT)
def nibble_pairs(table, x, y, out):  # type: ignore[no-untyped-def]
    """``out[i]`` = ``table[code(x[i]) * 16 + code(y[i])]`` for the 256-entry ``table`` of a
    4-bit format's binary op on its 16 codes (f4E2M1FN), where ``code`` reads a byte as
    ml_dtypes does (its low 3 bits, the sign from any higher bit): in AVX2 registers, each
    of the table's 16 rows a register shuffled by the second operand's code (vpshufb), kept
    where the first operand's code is the row's. 1e6 f4 products: 510 -> 190 us (the 256 x
    256 table's lookup). The caller checks it against that table on every byte pair."""
    for i in range(_nibbles32(table, x, y, out, x.size), x.size):
        a, b = x[i], y[i]
        ca = (a & np.uint8(7)) | (np.uint8(8) if a > np.uint8(7) else np.uint8(0))
        cb = (b & np.uint8(7)) | (np.uint8(8) if b > np.uint8(7) else np.uint8(0))
        out[i] = table[(np.uint16(ca) << np.uint16(4)) | np.uint16(cb)]


ARITH_FORMS = (0x62, 0x63, 0x82, 0x83, 0x84, 0x362, 0x363, 0x382, 0x383, 0x384, 0x162, 0x163,
               0x262, 0x263)
"""The op << 8 | bits << 4 | M that :func:`exact_arithmetic` compiles a loop for: sums (op 0)
and differences (op 3) of f6 and f8 formats with 2-4 mantissa bits, products (op 1) and
quotients (op 2) of f6 formats (f8 products and quotients have their factoring by exponents,
as fast or faster)."""


@intrinsic(prefer_literal=True)
def _arith32(typingctx, spec, table, x, y, out, n, form):  # type: ignore[no-untyped-def]
    """:func:`exact_arithmetic` on the first ``n - n % 32`` elements, 32 at a time, for the
    literal ``form`` (:data:`ARITH_FORMS`). Returns how many it did."""
    if not isinstance(form, types.IntegerLiteral) or form.literal_value not in ARITH_FORMS:
        return None
    op, bits, m = form.literal_value >> 8, form.literal_value >> 4 & 15, form.literal_value & 15
    magmask, shift = (1 << (bits - 1)) - 1, 10 - m

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        sp, ts, xs, ys, os_ = (context.make_array(t)(context, builder, a)
                               for t, a in zip(signature.args[:5], args[:5]))
        b_ = builder
        i1, i8, i16, i32, i64 = (ir.IntType(k) for k in (1, 8, 16, 32, 64))
        vb, vw = ir.VectorType(i8, 32), ir.VectorType(i16, 16)
        vf, vh = ir.VectorType(ir.FloatType(), 16), ir.VectorType(ir.HalfType(), 16)

        def splat(v: Any, vt: Any) -> Any:
            u = ir.Constant(vt, ir.Undefined)
            zero = ir.Constant(ir.VectorType(i32, vt.count), [0] * vt.count)
            return b_.shuffle_vector(b_.insert_element(u, v, ir.Constant(i32, 0)), u, zero)

        def w(v: int) -> Any:
            return ir.Constant(vw, [v] * 16)

        def c(v: int) -> Any:
            return ir.Constant(vb, [v] * 32)

        fields = [b_.load(b_.gep(sp.data, [ir.Constant(i32, k)])) for k in range(5)]
        below_special, nan_code, zero_by_zero = (splat(b_.trunc(f, i8), vb)
                                                 for f in (fields[0], fields[1], fields[4]))
        cap = splat(b_.trunc(fields[2], i16), vw)
        scale = splat(b_.trunc(fields[3], i32), ir.VectorType(i32, 16))
        unpack = []  # each byte as a 16-bit lane's high byte (lanes 0-7 + 16-23, 8-15 + 24-31)
        for first in (0, 8):
            unpack.append(ir.Constant(ir.VectorType(i32, 32), [
                k for half in (0, 16) for j in range(8) for k in (32, half + first + j)]))
        # and back: vpackuswb packs within 128-bit halves as the unpacking took them apart
        # (one instruction; the results are bytes, so its saturation never acts)
        packus = cgutils.get_or_insert_function(
            b_.module, ir.FunctionType(vb, [vw, vw]), "llvm.x86.avx2.packuswb")
        n = args[5]
        end = b_.and_(n, ir.Constant(n.type, -32))
        with cgutils.for_range_slice(b_, ir.Constant(n.type, 0), end,
                                     ir.Constant(n.type, 32)) as (i, _):
            zero = ir.Constant(ir.VectorType(i1, 32), [1] * 32)
            # f6 products and quotients: magnitudes only, the sign the xor of the operands'
            # (five instructions fewer per operand than placing signed codes)
            unsigned = bits == 6 and op in (1, 2)
            codes, sign, mags = [], c(0), []
            coded = ir.Constant(ir.VectorType(i1, 32), [0] * 32)  # spec[1] either side
            for v in (xs, ys):
                v = b_.load(b_.bitcast(b_.gep(v.data, [i]), vb.as_pointer()), align=1)
                mag = b_.and_(v, c(magmask))
                zero = b_.and_(zero, b_.icmp_unsigned("==", mag, c(0)))
                if bits == 8:  # the byte placed as it is; NaN, infinity lanes found below
                    mags.append(mag)
                    coded = b_.or_(coded, b_.icmp_unsigned("==", v, nan_code))
                else:  # ml_dtypes: any bit above an f6 magnitude is the sign
                    negative = b_.sext(b_.icmp_unsigned(">", v, c(magmask)), vb)
                    if unsigned:
                        sign, v = b_.xor(sign, negative), mag
                    else:
                        v = b_.or_(mag, b_.and_(negative, c(0x80)))
                codes.append(v)
            results = []
            for order in unpack:
                # sign << 15 | magnitude << (10 - M): the f16 of the value times 2^(bias - 15)
                # (subnormals too: both formats' exponent field 0 is their subnormal binade)
                if unsigned:
                    ha, hb = (b_.lshr(b_.bitcast(b_.shuffle_vector(v, c(0), order), vw),
                                      w(m - 2)) for v in codes)
                else:
                    ha, hb = (b_.and_(b_.ashr(b_.bitcast(b_.shuffle_vector(v, c(0), order), vw),
                                              w(m - 2)), w(0x8000 | magmask << shift))
                              for v in codes)
                if op == 3:  # a difference: the second's sign flipped
                    hb = b_.xor(hb, w(0x8000))
                fa, fb = (b_.fpext(b_.bitcast(v, vh), vf) for v in (ha, hb))
                if op in (0, 3):
                    total = b_.fadd(fa, fb)
                elif op == 2:  # the quotient placed by 2^(bias - 15)
                    total = b_.fmul(b_.fdiv(fa, fb), b_.bitcast(scale, vf))
                else:  # both scaled by 2^(bias - 15): the product scaled back (exact)
                    total = b_.fmul(b_.fmul(fa, fb), b_.bitcast(scale, vf))
                h = b_.bitcast(b_.fptrunc(total, vh), vw)  # (exact, or innocuous: exact_arithmetic)
                mag = h if unsigned else b_.and_(h, w(0x7FFF))
                lsb = b_.and_(b_.lshr(mag, w(shift)), w(1))
                code = b_.lshr(b_.add(b_.add(mag, w((1 << (shift - 1)) - 1)), lsb), w(shift))
                code = b_.select(b_.icmp_unsigned("<", code, cap), code, cap)
                results.append(code if unsigned else
                               b_.or_(code, b_.lshr(b_.and_(h, w(0x8000)), w(16 - bits))))
            result = b_.call(packus, results)
            if unsigned:
                result = b_.or_(result, b_.and_(sign, c(magmask + 1)))
            if op == 2:  # 0 / 0, a NaN: the table's entry (ml_dtypes' for f6 is a zero)
                result = b_.select(zero, zero_by_zero, result)
            b_.store(result, b_.bitcast(b_.gep(os_.data, [i]), vb.as_pointer()), align=1)
            if bits == 8:  # (f6 has no NaN or infinity)
                # a NaN or infinity either side: the larger magnitude from spec[0] + 1 on
                # (signed: magnitudes are at most 0x7F), or the code spec[1]
                larger = b_.select(b_.icmp_unsigned(">=", mags[0], mags[1]), *mags)
                special = b_.or_(b_.icmp_signed(">", larger, below_special), coded)
                _look_up_lanes(b_, b_.bitcast(special, i32),
                               i, 32, lambda at: b_.or_(b_.shl(_byte_at(b_, xs, at),
                                                               ir.Constant(i64, 8)),
                                                        _byte_at(b_, ys, at)), ts, os_)
        return end

    ok = isinstance(spec, types.Array) and spec.dtype == types.int64 and all(
        isinstance(t, types.Array) and t.dtype == types.uint8 and t.layout == "C"
        for t in (table, x, y, out))
    return (types.intp(spec, table, x, y, out, n, form), codegen) if ok else None


@nb.njit(**_JIT)
def exact_arithmetic(spec, table, x, y, out, form):  # type: ignore[no-untyped-def]
    """``out[i] = table[x[i] * 256 + y[i]]`` where ``table`` is a sum or difference of a
    6- or 8-bit float format with M = 2-4 mantissa bits, or a product or quotient of an f6
    format (``form``, one of :data:`ARITH_FORMS`), computed in AVX2 registers: each operand's
    bits placed as an f16's (sign << 15 | magnitude << (10 - M): its value times
    2^(bias - 15), subnormals included, as both formats' exponent field 0 is their subnormal
    binade), widened to f32 (vcvtph2ps), added (for a difference the second's sign flipped),
    or multiplied or divided and scaled (``spec[3]``, float32 bits of 2^(15 - bias), of
    2^(bias - 15) for a quotient), rounded to f16 (vcvtps2ph) and then to M bits on the
    integer bits, ties to even, the magnitude capped at ``spec[2]``, the overflow code (a NaN,
    the infinity, f6's largest finite). A sum or product in f32 is exact (f8E5M2's widest sums
    excepted, where it rounds), a quotient correctly rounded; rounding to 24, to 11 then to
    M + 1 <= 5 bits is the single rounding (p >= 2q + 2 at each step: the double-rounding
    theorem), so this is the careful result; the caller checks it against the table on every
    pair all the same. Lanes with a NaN or an infinity operand (a magnitude above ``spec[0]``,
    the byte ``spec[1]``: FNUZ's NaN; f6 has neither) are looked up in ``table``; 0 / 0 gives
    ``spec[4]``. f6 products and quotients are computed on the magnitudes, their
    sign the xor of the operands'. 1e6 f8E4M3FN sums: 405 -> 330 -> 298 us (the special
    lanes found from the larger magnitude, the results packed by one vpackuswb); f6E2M3FN
    products 409 -> 318 us, quotients 447 -> 358 us."""
    done = 0
    for literal in literal_unroll(ARITH_FORMS):  # (numba: a loop compiled per literal form)
        if form == literal:
            done = _arith32(spec, table, x, y, out, x.size, literal)
    for i in range(done, x.size):
        out[i] = table[(np.uint16(x[i]) << np.uint16(8)) | np.uint16(y[i])]


FIXED_SPEC = 2 * 32 + 8 * 32
"""Bytes of a :func:`fixed_sums` spec: the decoding table (magnitude code -> multiple of the
least subnormal) in 2 chunks, then the encoding table (such a multiple, 0-127 -> magnitude
code) in 8; 16-entry chunks, each but the last xor the next one, each twice (vpshufb looks
up within 16-byte halves)."""


@intrinsic
def _fixed32(typingctx, spec, x, y, out, n, subtract):  # type: ignore[no-untyped-def]
    """:func:`fixed_sums` on the first ``n - n % 32`` elements, 32 at a time. Returns how
    many it did."""
    if not isinstance(subtract, types.BooleanLiteral):
        return None
    minus = subtract.literal_value

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        sp, xs, ys, os_ = (context.make_array(t)(context, builder, a)
                           for t, a in zip(signature.args[:4], args[:4]))
        b_ = builder
        i32 = ir.IntType(32)
        vb = ir.VectorType(ir.IntType(8), 32)
        pshufb = cgutils.get_or_insert_function(
            b_.module, ir.FunctionType(vb, [vb, vb]), "llvm.x86.avx2.pshuf.b")

        def c(v: int) -> Any:
            return ir.Constant(vb, [v] * 32)

        def at(base: Any, i: Any) -> Any:
            return b_.bitcast(b_.gep(base, [i]), vb.as_pointer())

        tables = [b_.load(at(sp.data, ir.Constant(i32, 32 * k)), align=1) for k in range(10)]
        decode, encode = tables[:2], tables[2:]
        n = args[4]
        end = b_.and_(n, ir.Constant(n.type, -32))
        with cgutils.for_range_slice(b_, ir.Constant(n.type, 0), end,
                                     ir.Constant(n.type, 32)) as (i, _):
            values, signs = [], []
            for v in (xs, ys):
                v = b_.load(at(v.data, i), align=1)
                # ml_dtypes: any bit above the 5-bit magnitude is the sign
                negative = b_.sext(b_.icmp_unsigned(">", v, c(0x1F)), vb)
                units = _chained(b_, pshufb, decode, b_.and_(v, c(0x1F)), c)
                values.append(b_.sub(b_.xor(units, negative), negative))
                signs.append(negative)
            if minus:
                total, b_negative = b_.sub(*values), b_.not_(signs[1])
            else:
                total, b_negative = b_.add(*values), signs[1]
            below = b_.icmp_signed("<", total, c(0))
            magnitude = b_.select(below, b_.sub(c(0), total), total)
            code = _chained(b_, pshufb, encode, magnitude, c)
            # an exact zero is -0 only when both operands are (ties to even: IEEE 754 6.3)
            zero = b_.and_(b_.icmp_unsigned("==", total, c(0)),
                           b_.icmp_unsigned("!=", b_.and_(signs[0], b_negative), c(0)))
            sign = b_.and_(b_.sext(b_.or_(below, zero), vb), c(0x20))
            b_.store(b_.or_(code, sign), at(os_.data, i), align=1)
        return end

    ok = all(isinstance(t, types.Array) and t.dtype == types.uint8 and t.layout == "C"
             for t in (spec, x, y, out))
    return (types.intp(spec, x, y, out, n, subtract), codegen) if ok else None


@nb.njit(**_JIT)
def fixed_sums(spec, table, x, y, out, subtract):  # type: ignore[no-untyped-def]
    """``out[i] = table[x[i] * 256 + y[i]]`` where ``table`` is the sum (``subtract``: the
    difference) of an f6 format whose values are multiples of its least subnormal q up to
    63 q (f6E2M3FN: 60 q), in AVX2 registers as signed bytes: each operand's magnitude code
    decoded to its multiple of q (``spec``, :data:`FIXED_SPEC`; vpshufb), signed, added (at
    most 126 q: no overflow), and the exact sum's magnitude encoded back by the table of the
    float32 cast of each multiple (ties to even), with the result's sign, -0 only from two
    negative zeros. The caller checks it against ``table`` on every pair."""
    done = 0
    if subtract:
        done = _fixed32(spec, x, y, out, x.size, True)
    else:
        done = _fixed32(spec, x, y, out, x.size, False)
    for i in range(done, x.size):
        out[i] = table[(np.uint16(x[i]) << np.uint16(8)) | np.uint16(y[i])]
