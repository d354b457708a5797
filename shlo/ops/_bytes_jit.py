"""The compiled loops of the one-byte float formats (f8, f6, f4) for :mod:`shlo.ops._half`
(numba; imported only through ``_half_jit``, on first use): lookups in their ops' tables
(``gather16``, ``gather_pairs``, ``tree_pairs``, ``narrow_by_table``) and the conversions
computed instead of read (``widen_bytes``, ``narrow_by_rounding``); the binary ops computed in
registers are :mod:`._pairs_jit`'s. Each table is checked by its caller
(``elementwise/_tables.py``) before these loops read it, each computed form against its table
(``elementwise/_pair_forms.py``); a loop computes exactly the table's entries.
"""

from __future__ import annotations

import platform
from typing import Any, Callable

import llvmlite.binding as llvm
import numba as nb
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["gather16", "gather_pairs", "SCALED", "narrow_by_table", "narrow_by_rounding",
           "sign_but_zero", "widen_bytes", "tree_pairs"]

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
"""Whether the loops in AVX2 registers run here (:mod:`._pairs_jit`'s, :func:`widen_bytes`,
:func:`narrow_by_rounding`: byte shuffles, vpshufb, and F16C's conversions, which every AVX2
processor has)."""


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
