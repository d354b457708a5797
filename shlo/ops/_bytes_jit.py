"""The compiled loops of the one-byte float formats (f8, f6, f4) for :mod:`shlo.ops._half`
(numba; imported only through ``_half_jit``, on first use): lookups in their ops' tables
(``gather16``, ``gather_pairs``, ``tree_pairs``, ``narrow_by_table``), some of them in AVX2
registers (f4's 16 x 16 table, ``nibble_pairs``; a product's factoring by exponents,
``scaled_pairs``), and tables computed instead (``exact_arithmetic``, ``fixed_sums``,
``widen_bytes``, ``narrow_by_rounding``). Each table is checked by its caller (``elementwise/_tables.py``)
before these loops read it, each computed form against its table
(``elementwise/_pair_forms.py``); a loop computes exactly the table's entries.
"""

from __future__ import annotations

import platform
from typing import Any, Callable

import llvmlite.binding as llvm
import numba as nb
import numpy as np
from llvmlite import ir
from numba import literal_unroll, types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["gather16", "gather_pairs", "nibble_pairs", "scaled_pairs", "exact_arithmetic",
           "ARITH_FORMS", "SCALED", "SCALED_SPEC", "narrow_by_table", "narrow_by_rounding",
           "sign_but_zero", "widen_bytes", "tree_pairs", "fixed_sums", "FIXED_SPEC"]

_JIT = dict(cache=True, nogil=True, error_model="numpy", boundscheck=False)


@nb.njit(**_JIT)
def gather16(table, idx, out):  # type: ignore[no-untyped-def]
    """``out[i] = table[idx[i]]`` for uint8/uint16 indices (no conversion of the indices to
    intp; compiled per index and table width)."""
    for i in range(idx.size):
        out[i] = table[idx[i]]


def _on_bytes(codegen: Any, table: Any, x: Any, y: Any, out: Any, n: Any) -> Any:
    """The typing of an intrinsic ``(table, x, y, out, n) -> done`` on contiguous uint8
    arrays, else None (numba then reports the call)."""
    ok = all(isinstance(t, types.Array) and t.dtype == types.uint8 and t.layout == "C"
             for t in (table, x, y, out))
    return (types.intp(table, x, y, out, n), codegen) if ok else None


def _lookup16(builder: Any, table: Any, index: Any) -> Any:
    """The bytes ``table[index[k]]`` of a <16 x i32> ``index`` as a <16 x i8> vector, each
    loaded by itself (LLVM's lowering of a gather on AMD Zen, without its 64-bit indices)."""
    i32, i64 = ir.IntType(32), ir.IntType(64)
    got = ir.Constant(ir.VectorType(ir.IntType(8), 16), ir.Undefined)
    for k in range(16):
        at = builder.zext(builder.extract_element(index, ir.Constant(i32, k)), i64)
        got = builder.insert_element(got, builder.load(builder.gep(table, [at])),
                                     ir.Constant(i32, k))
    return got


def _chained(b_: Any, pshufb: Any, chunks: list[Any], index: Any, c: Callable[[int], Any]
             ) -> Any:
    """IR: ``table[index]`` (``index`` < 16 * len(chunks)) of a table stored as xor-chained
    16-entry chunks: chunk k is read at index + 0x80 - 16 (k + 1), whose bit 7 (a zero for
    vpshufb) is clear for the chunks from index's on; their xor is index's own entry."""
    r = b_.call(pshufb, [chunks[-1], index])
    for k in range(len(chunks) - 1):
        r = b_.xor(r, b_.call(pshufb, [chunks[k], b_.add(index, c(0x70 - 16 * k))]))
    return r


@intrinsic
def _pairs16(typingctx, table, x, y, out, n):  # type: ignore[no-untyped-def]
    """:func:`gather_pairs` on the first ``n - n % 16`` elements, 16 at a time: both operand
    rows widened to 32-bit indices in a vector register, then each entry loaded by itself into
    the result vector (LLVM does not vectorise the loop below, and on AMD Zen turns a vector
    gather into such loads anyway; vpgatherdd itself was slower, 604 us against 455). Returns
    how many elements it did. 1e6 f8 pairs: 7-9% faster than 8 lanes with 64-bit indices
    alone, 1% in issue17_bench's add row."""
    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        ts, xs, ys, os_ = (context.make_array(t)(context, builder, a)
                           for t, a in zip(signature.args[:4], args[:4]))
        i8, i32 = ir.IntType(8), ir.IntType(32)
        vb, vi = ir.VectorType(i8, 16), ir.VectorType(i32, 16)
        n = args[4]
        m = builder.and_(n, ir.Constant(n.type, ~15))
        with cgutils.for_range_slice(builder, ir.Constant(n.type, 0), m,
                                     ir.Constant(n.type, 16)) as (i, _):
            a, b = (builder.zext(builder.load(builder.bitcast(builder.gep(v.data, [i]),
                                                              vb.as_pointer()), align=1), vi)
                    for v in (xs, ys))
            index = builder.or_(builder.shl(a, ir.Constant(vi, [8] * 16)), b)
            builder.store(_lookup16(builder, ts.data, index),
                          builder.bitcast(builder.gep(os_.data, [i]), vb.as_pointer()), align=1)
        return m

    return _on_bytes(codegen, table, x, y, out, n)


@nb.njit(**_JIT)
def gather_pairs(table, x, y, out):  # type: ignore[no-untyped-def]
    """``out[i] = table[x[i] * 256 + y[i]]`` for uint8 ``x``, ``y`` (a 256 x 256 table;
    :func:`_pairs16` does the most of it)."""
    for i in range(_pairs16(table, x, y, out, x.size), x.size):
        out[i] = table[(np.uint16(x[i]) << np.uint16(8)) | np.uint16(y[i])]


SCALED = platform.machine().lower() in ("x86_64", "amd64") and \
    bool(llvm.get_host_cpu_features().get("avx2"))
"""Whether the loops in AVX2 registers run here (:func:`scaled_pairs`, :func:`nibble_pairs`,
:func:`exact_arithmetic`, :func:`widen_bytes`: byte shuffles, vpshufb, and F16C's
conversions, which every AVX2 processor has)."""
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


def _look_up_lanes(b_: Any, mask: Any, i: Any, lanes: int, index: Callable[[Any], Any],
                   ts: Any, os_: Any) -> None:
    """IR: ``out[i + k] = table[index(i + k)]`` for each set bit k of the i32 ``mask`` of a
    block of ``lanes`` (none, most often: one branch)."""
    i1, i32 = ir.IntType(1), ir.IntType(32)
    cttz = cgutils.get_or_insert_function(b_.module, ir.FunctionType(i32, [i32, i1]),
                                          "llvm.cttz.i32")
    with b_.if_then(b_.icmp_unsigned("!=", mask, ir.Constant(i32, 0)), likely=False):
        left = cgutils.alloca_once_value(b_, mask)
        with cgutils.loop_nest(b_, [ir.Constant(i32, lanes)], i32):
            cur = b_.load(left)
            with b_.if_then(b_.icmp_unsigned("!=", cur, ir.Constant(i32, 0))):
                at = b_.add(i, b_.zext(b_.call(cttz, [cur, ir.Constant(i1, 1)]), i.type))
                b_.store(b_.load(b_.gep(ts.data, [index(at)])), b_.gep(os_.data, [at]))
                b_.store(b_.and_(cur, b_.sub(cur, ir.Constant(i32, 1))), left)


def _byte_at(b_: Any, v: Any, at: Any) -> Any:
    """IR: the byte ``v[at]`` of an array as an i64."""
    return b_.zext(b_.load(b_.gep(v.data, [at])), ir.IntType(64))


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
            codes, sign, mags, coded = [], c(0), [], ir.Constant(ir.VectorType(i1, 32), [0] * 32)
            for v in (xs, ys):
                v = b_.load(b_.bitcast(b_.gep(v.data, [i]), vb.as_pointer()), align=1)
                mag = b_.and_(v, c(magmask))
                zero = b_.and_(zero, b_.icmp_unsigned("==", mag, c(0)))
                mags.append(mag)
                coded = b_.or_(coded, b_.icmp_unsigned("==", v, nan_code))
                # ml_dtypes: any bit above the magnitude is the sign
                negative = b_.sext(b_.icmp_unsigned(">", v, c(magmask)), vb)
                if unsigned:
                    sign, v = b_.xor(sign, negative), mag
                elif bits != 8:
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


@intrinsic
def _widened16(typingctx, spec, table, x, out, n):  # type: ignore[no-untyped-def]
    """:func:`widen_bytes` on the first ``n - n % 16`` elements, 16 at a time. Returns how many
    it did."""
    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        sp, ts, xs, os_ = (context.make_array(t)(context, builder, a)
                           for t, a in zip(signature.args[:4], args[:4]))
        b_ = builder
        i8, i16, i32 = ir.IntType(8), ir.IntType(16), ir.IntType(32)
        vb, vw, vi = ir.VectorType(i8, 16), ir.VectorType(i16, 16), ir.VectorType(i32, 16)
        vf, vh = ir.VectorType(ir.FloatType(), 16), ir.VectorType(ir.HalfType(), 16)
        zeros = ir.Constant(vi, [0] * 16)

        def splat(v: Any, vt: Any) -> Any:
            u = ir.Constant(vt, ir.Undefined)
            return b_.shuffle_vector(b_.insert_element(u, v, ir.Constant(i32, 0)), u, zeros)

        fields = [b_.load(b_.gep(sp.data, [ir.Constant(i32, j)])) for j in range(6)]
        magmask, special_min, nan_code = (splat(b_.trunc(f, i8), vb) for f in fields[:3])
        coded = splat(b_.icmp_signed("!=", fields[3], ir.Constant(fields[3].type, 0)),
                      ir.VectorType(ir.IntType(1), 16))
        shift = splat(b_.trunc(fields[4], i16), vw)
        scale = splat(b_.bitcast(b_.trunc(fields[5], i32), ir.FloatType()), vf)
        n = args[4]
        end = b_.and_(n, ir.Constant(n.type, ~15))
        with cgutils.for_range_slice(b_, ir.Constant(n.type, 0), end,
                                     ir.Constant(n.type, 16)) as (i, _):
            v = b_.load(b_.bitcast(b_.gep(xs.data, [i]), vb.as_pointer()), align=1)
            mag = b_.and_(v, magmask)
            special = b_.or_(b_.icmp_unsigned(">=", mag, special_min),
                             b_.and_(coded, b_.icmp_unsigned("==", v, nan_code)))
            # sign << 15 | magnitude << (10 - M): the f16 of the value times 2^(bias - 15)
            # (ml_dtypes: any bit above the magnitude is the sign)
            h = b_.or_(b_.shl(b_.zext(mag, vw), shift),
                       b_.select(b_.icmp_unsigned(">", v, magmask), ir.Constant(vw, [0x8000] * 16),
                                 ir.Constant(vw, [0] * 16)))
            f = b_.fmul(b_.fpext(b_.bitcast(h, vh), vf), scale)  # exact: a power of two
            b_.store(b_.bitcast(f, vi), b_.bitcast(b_.gep(os_.data, [i]), vi.as_pointer()),
                     align=4)
            _look_up_lanes(b_, b_.zext(b_.bitcast(special, ir.IntType(16)), i32), i, 16,
                           lambda at: _byte_at(b_, xs, at), ts, os_)  # NaN, infinity lanes
        return end

    ok = all(isinstance(t, types.Array) and t.layout == "C" for t in (spec, table, x, out)) and \
        spec.dtype == types.int64 and table.dtype == types.uint32 and \
        x.dtype == types.uint8 and out.dtype == types.uint32
    return (types.intp(spec, table, x, out, n), codegen) if ok else None


@nb.njit(**_JIT)
def widen_bytes(spec, table, x, out):  # type: ignore[no-untyped-def]
    """``out[i] = table[x[i]]`` for the float32 bits ``table`` of a one-byte format's values,
    computed in AVX2 registers: the byte's bits placed as an f16's (sign << 15 | magnitude <<
    (10 - M): the value times 2^(bias - 15), subnormals included), widened (vcvtph2ps) and
    scaled by 2^(15 - bias) (``spec[5]``, float32 bits). Lanes of a NaN or infinity
    (magnitudes from ``spec[1]`` on, the pattern ``spec[2]`` when ``spec[3]``) are read from
    ``table``; ``spec[0]`` is the magnitude mask, ``spec[4]`` is 10 - M. The caller checks it
    against ``table`` on every byte."""
    for i in range(_widened16(spec, table, x, out, x.size), x.size):
        out[i] = table[x[i]]


@nb.njit(**_JIT)
def sign_but_zero(x, out, sign, flip):  # type: ignore[no-untyped-def]
    """``out[i]`` = ``x[i]`` with its ``sign`` bit flipped (``flip``: negate) or cleared (abs)
    where its magnitude is not zero: negate and abs of a FNUZ format, whose 0x80 is its NaN
    (numpy's three passes for it took 1.9x float32's abs; LLVM vectorises this one)."""
    for i in range(x.size):
        v = x[i]
        bit = sign if (v & ~sign) != 0 else x.dtype.type(0)
        out[i] = v ^ bit if flip else v & ~bit


@intrinsic
def _narrow16(typingctx, table, shift, bits, out, n):  # type: ignore[no-untyped-def]
    """:func:`narrow_by_table` on the first ``n - n % 16`` elements, 16 at a time: the
    indices computed in a vector register, each entry loaded by itself into the result vector
    (as :func:`_pairs16`; numba's loop took 862 us for 1e6, this 0.4-0.5 ms). Returns how many
    elements it did."""
    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        ts, bs, os_ = (context.make_array(t)(context, builder, a)
                       for t, a in zip((signature.args[0], signature.args[2], signature.args[3]),
                                       (args[0], args[2], args[3])))
        i8, i32 = ir.IntType(8), ir.IntType(32)
        vb, vi = ir.VectorType(i8, 16), ir.VectorType(i32, 16)
        u = ir.Constant(vi, ir.Undefined)
        sh = builder.shuffle_vector(builder.insert_element(u, builder.trunc(args[1], i32),
                                                           ir.Constant(i32, 0)),
                                    u, ir.Constant(vi, [0] * 16))
        low = builder.sub(builder.shl(ir.Constant(vi, [1] * 16), sh), ir.Constant(vi, [1] * 16))
        n = args[4]
        m = builder.and_(n, ir.Constant(n.type, ~15))
        with cgutils.for_range_slice(builder, ir.Constant(n.type, 0), m,
                                     ir.Constant(n.type, 16)) as (i, _):
            b = builder.load(builder.bitcast(builder.gep(bs.data, [i]), vi.as_pointer()), align=4)
            sticky = builder.zext(builder.icmp_unsigned("!=", builder.and_(b, low),
                                                        ir.Constant(vi, [0] * 16)), vi)
            index = builder.or_(builder.shl(builder.lshr(b, sh), ir.Constant(vi, [1] * 16)),
                                sticky)
            builder.store(_lookup16(builder, ts.data, index),
                          builder.bitcast(builder.gep(os_.data, [i]), vb.as_pointer()), align=1)
        return m

    ok = all(isinstance(t, types.Array) and t.layout == "C" for t in (table, bits, out)) and \
        table.dtype == types.uint8 and bits.dtype == types.uint32 and out.dtype == types.uint8 \
        and isinstance(shift, types.Integer)
    return (types.intp(table, shift, bits, out, n), codegen) if ok else None


@nb.njit(**_JIT)
def narrow_by_table(table, shift, bits, out):  # type: ignore[no-untyped-def]
    """``out[i] = table[(bits[i] >> shift) * 2 + (any bit below shift set)]`` for float32 bit
    patterns ``bits``: a rounding to a one-byte format by its table (``_tables.
    tabled_narrowing``; :func:`_narrow16` does the most of it). Returns ``out``."""
    low = (np.uint32(1) << np.uint32(shift)) - np.uint32(1)
    for i in range(_narrow16(table, shift, bits, out, bits.size), bits.size):
        b = bits[i]
        out[i] = table[((b >> np.uint32(shift)) << np.uint32(1)) | np.uint32((b & low) != 0)]
    return out


@intrinsic
def _rounded16(typingctx, spec, table, shift, bits, out, n):  # type: ignore[no-untyped-def]
    """:func:`narrow_by_rounding` on the first ``n - n % 16`` elements, 16 at a time. Returns
    how many it did."""
    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        sp, ts, bs, os_ = (context.make_array(t)(context, builder, a)
                           for t, a in zip((*signature.args[:2], *signature.args[3:5]),
                                           (*args[:2], *args[3:5])))
        b_ = builder
        i16, i32, i64 = ir.IntType(16), ir.IntType(32), ir.IntType(64)
        vi, vf, vb = (ir.VectorType(t, 16) for t in (i32, ir.FloatType(), ir.IntType(8)))

        def splat(v: Any) -> Any:
            u = ir.Constant(vi, ir.Undefined)
            return b_.shuffle_vector(b_.insert_element(u, v, ir.Constant(i32, 0)), u,
                                     ir.Constant(vi, [0] * 16))

        def c(v: int) -> Any:
            return ir.Constant(vi, [v] * 16)

        magic, least_normal, m_shift, offset, top, sign_shift, signed_zero = (
            splat(b_.trunc(b_.load(b_.gep(sp.data, [ir.Constant(i32, k)])), i32))
            for k in range(7))
        n = args[5]
        end = b_.and_(n, ir.Constant(n.type, -16))
        with cgutils.for_range_slice(b_, ir.Constant(n.type, 0), end,
                                     ir.Constant(n.type, 16)) as (i, _):
            v = b_.load(b_.bitcast(b_.gep(bs.data, [i]), vi.as_pointer()), align=4)
            mag = b_.and_(v, c(0x7FFFFFFF))
            # a subnormal result: the float32 adder rounds |x| + 2^(emin - M + 23) at the
            # format's subnormal step, and the sum's low bits are the code
            tiny = b_.sub(b_.bitcast(b_.fadd(b_.bitcast(mag, vf), b_.bitcast(magic, vf)), vi),
                          magic)
            # a normal one: to nearest even at bit 23 - M, the exponent rebiased (``offset``)
            lsb = b_.and_(b_.lshr(mag, m_shift), c(1))
            normal = b_.lshr(b_.add(b_.add(mag, offset), lsb), m_shift)
            code = b_.select(b_.icmp_unsigned("<", mag, least_normal), tiny, normal)
            # the sign, but on a zero of a format without -0 (FNUZ)
            keep = b_.or_(b_.sext(b_.icmp_unsigned("!=", code, c(0)), vi), signed_zero)
            sign = b_.and_(b_.lshr(b_.and_(v, c(-1 << 31)), sign_shift), keep)
            b_.store(b_.trunc(b_.or_(code, sign), vb),
                     b_.bitcast(b_.gep(os_.data, [i]), vb.as_pointer()), align=1)
            over = b_.icmp_unsigned(">", code, top)  # overflow, infinity, NaN: the table

            def index(at: Any) -> Any:
                x, s = b_.zext(b_.load(b_.gep(bs.data, [at])), i64), args[2]
                low = b_.and_(x, b_.sub(b_.shl(ir.Constant(i64, 1), s), ir.Constant(i64, 1)))
                return b_.or_(b_.shl(b_.lshr(x, s), ir.Constant(i64, 1)),
                              b_.zext(b_.icmp_unsigned("!=", low, ir.Constant(i64, 0)), i64))

            _look_up_lanes(b_, b_.zext(b_.bitcast(over, i16), i32), i, 16, index, ts, os_)
        return end

    ok = shift == types.int64 and spec == types.Array(types.int64, 1, "C") and all(
        isinstance(t, types.Array) and t.layout == "C" for t in (table, bits, out)) and \
        table.dtype == types.uint8 and bits.dtype == types.uint32 and out.dtype == types.uint8
    return (types.intp(spec, table, shift, bits, out, n), codegen) if ok else None


@nb.njit(**_JIT)
def narrow_by_rounding(spec, table, shift, bits, out):  # type: ignore[no-untyped-def]
    """:func:`narrow_by_table`'s result computed on the float32 bits, 16 lanes at a time: a
    magnitude below the format's least normal (``spec[1]``, float32 bits) plus ``spec[0]`` =
    2^(emin - M + 23) in float32, which rounds it to nearest even at the format's subnormal
    step, the sum's bits less ``spec[0]``'s being the code (2^M, the least normal's, when it
    rounds up); a larger one rounded to nearest even at bit ``spec[2]`` = 23 - M on the
    integer bits, ``spec[3]`` (2^(22 - M) - 1 less the exponent's rebiasing) added before the
    shift. The sign moves down by ``spec[5]`` (32 - the format's bits), but on a zero when
    ``spec[6]`` is 0 (FNUZ: no -0; else all ones). Lanes whose code is over ``spec[4]`` (an
    overflow, an infinity, a NaN) are read from the table. The caller checks it against the
    table. 1e6 float32 -> f8E4M3FN: 408 -> 297 us."""
    done = _rounded16(spec, table, shift, bits, out, bits.size)
    low = (np.uint32(1) << np.uint32(shift)) - np.uint32(1)
    for i in range(done, bits.size):
        b = bits[i]
        out[i] = table[((b >> np.uint32(shift)) << np.uint32(1)) | np.uint32((b & low) != 0)]
    return out


@intrinsic
def _quads(typingctx, swapped, src, dst, h):  # type: ignore[no-untyped-def]
    """``dst[i] = swapped[src[2i] | src[2i + 1] << 8]`` (:func:`tree_pairs`' nodes) for the
    first ``h - h % 4``: four pairs a 64-bit load, four results a 32-bit store (unaligned;
    ``dst`` may be ``src``: each step loads its pairs before it stores below them), one memory
    access per result besides the lookup. Returns how many it did."""
    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        ts, ss, ds = (context.make_array(t)(context, builder, a)
                      for t, a in zip(signature.args[:3], args[:3]))
        b_ = builder
        i32, i64 = ir.IntType(32), ir.IntType(64)
        h = args[3]
        quads = b_.lshr(h, ir.Constant(h.type, 2))
        with cgutils.for_range(b_, quads) as loop:
            j = loop.index
            at = b_.gep(ss.data, [b_.shl(j, ir.Constant(j.type, 3))])
            pairs = b_.load(b_.bitcast(at, i64.as_pointer()), align=1)
            four = ir.Constant(i32, 0)
            for k in range(4):
                index = b_.and_(b_.lshr(pairs, ir.Constant(i64, 16 * k)),
                                ir.Constant(i64, 0xFFFF))
                node = b_.zext(b_.load(b_.gep(ts.data, [index])), i32)
                four = b_.or_(four, b_.shl(node, ir.Constant(i32, 8 * k)))
            at = b_.gep(ds.data, [b_.shl(j, ir.Constant(j.type, 2))])
            b_.store(four, b_.bitcast(at, i32.as_pointer()), align=1)
        return b_.shl(quads, ir.Constant(h.type, 2))

    ok = all(isinstance(t, types.Array) and t.dtype == types.uint8 and t.layout == "C"
             for t in (swapped, src, dst)) and isinstance(h, types.Integer)
    return (types.intp(swapped, src, dst, h), codegen) if ok else None


@nb.njit(inline="always", **_JIT)
def _tree_level(swapped, src, dst, h):  # type: ignore[no-untyped-def]
    """One level of :func:`tree_pairs`: ``dst[i] = swapped[src[2i] | src[2i + 1] << 8]`` for
    ``i < h``, four at a time (:func:`_quads`), the rest one by one."""
    for i in range(_quads(swapped, src, dst, h), h):
        dst[i] = swapped[(np.uint16(src[2 * i + 1]) << np.uint16(8)) | np.uint16(src[2 * i])]


@nb.njit(**_JIT)
def tree_pairs(swapped, x, out, scratch):  # type: ignore[no-untyped-def]
    """The pairwise tree of each row of the uint8 (rows, n) ``x`` into ``out`` by the 256 x 256
    table of a one-byte format's op with its operands swapped (entry ``y * 256 + x``: a pair
    of adjacent bytes read as one little-endian word is its index); ``scratch``: uint8, an
    even n // 2 + 2 elements. The first level reads the row, the others work in place; four
    nodes at a time (:func:`_quads`: 1e6-element f8 trees 376 -> ~330 us, rows of 1000
    560 -> 360 us)."""
    rows, n = x.shape
    for r in range(rows):
        if n == 1:
            out[r] = x[r, 0]
            continue
        h = n // 2
        _tree_level(swapped, x[r], scratch, h)
        if n % 2:
            scratch[h] = x[r, n - 1]
        m = h + n % 2
        while m > 1:
            h = m // 2
            _tree_level(swapped, scratch, scratch, h)
            if m % 2:
                scratch[h] = scratch[m - 1]
            m = h + m % 2
        out[r] = scratch[0]
