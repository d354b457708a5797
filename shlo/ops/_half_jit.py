"""The compiled loops of :mod:`shlo.ops._half` (numba; imported only through it, on first use).

Each loop works on flat contiguous arrays of bit patterns (uint16 for f16/bf16, float32 for the
wide side) and computes what numpy / ml_dtypes compute element by element, in the same order:

* f16 <-> f32: LLVM's ``fpext``/``fptrunc`` of ``half`` (F16C's vcvtph2ps/vcvtps2ph on x86):
  exact widening, round to nearest even. The hardware makes a signaling NaN quiet; numpy's
  casts keep it (sign and top payload bits kept; a payload whose kept bits are all zero gets
  its lowest bit set). The casts below do as numpy; the arithmetic needs no such care, since
  an f32 operation never returns a signaling NaN;
* bf16 <-> f32: a shift; round to nearest even on the bits, every NaN to the quiet NaN 0x7fc0
  with its sign (ml_dtypes' conversion);
* add, subtract, multiply, divide: the two operands widened to f32, one f32 operation, one
  rounding; a NaN operand's payload is propagated as numpy and ml_dtypes do (``_nan_rule``,
  in a second pass over arrays with a NaN result);
* compare, maximum, minimum: on the widened values, results picked from the operands' bits;
* reduction trees of add and multiply, nodes computed as the element-wise loops do.

The one-byte formats' loops (tables, conversions) are in :mod:`._bytes_jit`, their binary ops
computed in registers in :mod:`._pairs_jit`; this module gives :mod:`._half` their names too.
``select_bits`` serves every type.
"""

from __future__ import annotations

from typing import Any

import numba as nb
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from ._bytes_jit import (_JIT, SCALED, gather16, gather_pairs, narrow_by_rounding,
                         narrow_by_table, sign_but_zero, tree_pairs, widen_bytes)
from ._pairs_jit import (ARITH_FORMS, FIXED_SPEC, SCALED_SPEC, exact_arithmetic, fixed_sums,
                         nibble_pairs, scaled_pairs)

__all__ = ["f16_to_f32", "f32_to_f16", "bf16_to_f32", "f32_to_bf16", "BINARY", "gather16",
           "gather_pairs", "nibble_pairs", "scaled_pairs", "exact_arithmetic", "ARITH_FORMS",
           "SCALED", "SCALED_SPEC", "select_bits", "narrow_by_table", "narrow_by_rounding",
           "compare_keys", "MAX_MIN", "DIRECTIONS", "tree16", "tree_pairs", "sign_but_zero",
           "widen_bytes", "fixed_sums", "FIXED_SPEC"]

@intrinsic
def _h2f(typingctx, h):  # type: ignore[no-untyped-def]
    """The float32 value of the f16 bit pattern ``h`` (uint16)."""
    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.fpext(builder.bitcast(args[0], ir.HalfType()), ir.FloatType())
    return types.float32(types.uint16), codegen


@intrinsic
def _f2h(typingctx, f):  # type: ignore[no-untyped-def]
    """The f16 bit pattern (uint16) nearest to float32 ``f`` (ties to even)."""
    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.bitcast(builder.fptrunc(args[0], ir.HalfType()), ir.IntType(16))
    return types.uint16(types.float32), codegen


@intrinsic
def _b2f(typingctx, h):  # type: ignore[no-untyped-def]
    """The float32 value of the bf16 bit pattern ``h`` (uint16): its bits shifted left 16."""
    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        i32 = ir.IntType(32)
        u = builder.shl(builder.zext(args[0], i32), ir.Constant(i32, 16))
        return builder.bitcast(u, ir.FloatType())
    return types.float32(types.uint16), codegen


def _bf16_rounding(nan: bool) -> Any:
    """An intrinsic: the bf16 bit pattern (uint16) nearest to a float32 (ties to even), and
    with ``nan`` a NaN as the quiet NaN 0x7fc0 with its sign, as ml_dtypes (without, a NaN's
    pattern is meaningless). In 32-bit integer operations (numba's own integer arithmetic
    would widen them to 64 bits and vectorise half as well)."""
    @intrinsic
    def f2b(typingctx, f):  # type: ignore[no-untyped-def]
        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            i32 = ir.IntType(32)
            c = lambda v: ir.Constant(i32, v)  # noqa: E731
            u = builder.bitcast(args[0], i32)
            hi = builder.lshr(u, c(16))
            lsb = builder.and_(hi, c(1))
            r = builder.lshr(builder.add(builder.add(u, c(0x7FFF)), lsb), c(16))
            if nan:
                quiet = builder.or_(builder.and_(hi, c(0x8000)), c(0x7FC0))
                is_nan = builder.icmp_unsigned(">", builder.and_(u, c(0x7FFFFFFF)),
                                               c(0x7F800000))
                r = builder.select(is_nan, quiet, r)
            return builder.trunc(r, ir.IntType(16))
        return types.uint16(types.float32), codegen
    return f2b


_f2b = _bf16_rounding(True)
_f2b_even = _bf16_rounding(False)


@intrinsic
def _magnitude32(typingctx, f):  # type: ignore[no-untyped-def]
    """The bits of float32 ``f`` without its sign (uint32): above ``_F32_INF`` for a NaN."""
    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        i32 = ir.IntType(32)
        return builder.and_(builder.bitcast(args[0], i32), ir.Constant(i32, 0x7FFFFFFF))
    return types.uint32(types.float32), codegen


_F16_MAGNITUDE, _F16_INF, _F32_INF = np.uint16(0x7FFF), np.uint16(0x7C00), np.uint32(0x7F800000)


def _nan_rule(second: bool) -> Any:
    """An intrinsic ``(r, a, b) -> r``, except that when ``a`` or ``b`` is a NaN the result is
    that NaN made quiet, ``b``'s when both are (``second``) or ``a``'s. numpy's and ml_dtypes'
    loops follow that rule (add, multiply: the second operand's; subtract, divide: the
    first's); a compiled ``a + b`` alone may come out either way, since LLVM may commute the
    operands of a commutative operation differently in its vector and scalar loops."""
    @intrinsic
    def rule(typingctx, r, a, b):  # type: ignore[no-untyped-def]
        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            r, a, b = args
            i32 = ir.IntType(32)
            a_nan = builder.fcmp_unordered("uno", a, a)
            b_nan = builder.fcmp_unordered("uno", b, b)
            pick = builder.select(b_nan, b, a) if second else builder.select(a_nan, a, b)
            quiet = builder.bitcast(builder.or_(builder.bitcast(pick, i32),
                                                ir.Constant(i32, 0x400000)), ir.FloatType())
            return builder.select(builder.or_(a_nan, b_nan), quiet, r)
        return types.float32(types.float32, types.float32, types.float32), codegen
    return rule


_nan_second = _nan_rule(True)
_nan_first = _nan_rule(False)


@nb.njit(inline="always")
def _h2f_keep(h):  # type: ignore[no-untyped-def]
    """``_h2f``, keeping a signaling NaN signaling (numpy's cast; the hardware quiets it)."""
    nan = np.uint32(np.uint32(np.uint32(h & np.uint16(0x8000)) << np.uint32(16)) |
                    np.uint32(0x7F800000) | np.uint32(np.uint32(h & np.uint16(0x3FF)) << np.uint32(13)))
    f = _h2f(h)
    return nan.view(np.float32) if (h & np.uint16(0x7FFF)) > np.uint16(0x7C00) else f


@nb.njit(inline="always")
def _f2h_keep(f):  # type: ignore[no-untyped-def]
    """``_f2h``, with numpy's NaNs: sign and top payload bits kept, not made quiet."""
    u = np.float32(f).view(np.uint32)
    nan = np.uint32(np.uint32(np.uint32(u >> np.uint32(16)) & np.uint32(0x8000)) | np.uint32(0x7C00) |
                    np.uint32(np.uint32(u & np.uint32(0x7FFFFF)) >> np.uint32(13)))
    nan = np.uint32(nan + np.uint32(1)) if (nan & np.uint32(0x3FF)) == np.uint32(0) else nan
    h = _f2h(f)
    return np.uint16(nan) if (u & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000) else h


# The casts, as the binary loops below: the hardware's first, then numpy's NaNs in a second
# pass where there is a NaN (1e6 f16 -> f32 214 -> 103 us, f32 -> f16 258 -> 100 us,
# f32 -> bf16 144 -> 114 us).


@nb.njit(**_JIT)
def f16_to_f32(x, out):  # type: ignore[no-untyped-def]
    top = np.uint16(0)
    for i in range(x.size):
        out[i] = _h2f(x[i])
        top = max(top, np.uint16(x[i] & _F16_MAGNITUDE))
    if top > _F16_INF:
        for i in range(x.size):
            out[i] = _h2f_keep(x[i])


@nb.njit(**_JIT)
def f32_to_f16(x, out):  # type: ignore[no-untyped-def]
    top = np.uint32(0)
    for i in range(x.size):
        out[i] = _f2h(x[i])
        top = max(top, _magnitude32(x[i]))
    if top > _F32_INF:
        for i in range(x.size):
            out[i] = _f2h_keep(x[i])


@nb.njit(**_JIT)
def bf16_to_f32(x, out):  # type: ignore[no-untyped-def]
    for i in range(x.size):
        out[i] = _b2f(x[i])


@nb.njit(**_JIT)
def f32_to_bf16(x, out):  # type: ignore[no-untyped-def]
    top = np.uint32(0)
    for i in range(x.size):
        out[i] = _f2b_even(x[i])
        top = max(top, _magnitude32(x[i]))
    if top > _F32_INF:
        for i in range(x.size):
            out[i] = _f2b(x[i])


@nb.njit(**_JIT)
def select_bits(pred, x, y, out):  # type: ignore[no-untyped-def]
    """``out[i] = x[i] if pred[i] else y[i]`` on unsigned views of one width (``pred``: the
    bytes of a bool array), as a bit blend LLVM vectorises: numpy's ``where`` branches on
    every element, 4.2 ms for 1e6 float32 with a random mask, this 0.25 ms."""
    for i in range(pred.size):
        out[i] = y[i] ^ ((x[i] ^ y[i]) & -x.dtype.type(pred[i]))


# The binary loops compute the plain operation first, noting the largest magnitude; only when
# it shows a NaN do they run again with the NaN rule (``_nan_rule``; bf16: with the NaN
# pattern), which per element cost the loops 1.5-3x (1e6 sums: f16 276 -> 91 us, bf16
# 280 -> 183 us).


@nb.njit(**_JIT)
def _add_f16(x, y, out):  # type: ignore[no-untyped-def]
    top = np.uint16(0)
    for i in range(x.size):
        h = _f2h(_h2f(x[i]) + _h2f(y[i]))
        out[i] = h
        top = max(top, np.uint16(h & _F16_MAGNITUDE))
    if top > _F16_INF:
        for i in range(x.size):
            a, b = _h2f(x[i]), _h2f(y[i])
            out[i] = _f2h(_nan_second(a + b, a, b))


@nb.njit(**_JIT)
def _subtract_f16(x, y, out):  # type: ignore[no-untyped-def]
    top = np.uint16(0)
    for i in range(x.size):
        h = _f2h(_h2f(x[i]) - _h2f(y[i]))
        out[i] = h
        top = max(top, np.uint16(h & _F16_MAGNITUDE))
    if top > _F16_INF:
        for i in range(x.size):
            a, b = _h2f(x[i]), _h2f(y[i])
            out[i] = _f2h(_nan_first(a - b, a, b))


@nb.njit(**_JIT)
def _multiply_f16(x, y, out):  # type: ignore[no-untyped-def]
    top = np.uint16(0)
    for i in range(x.size):
        h = _f2h(_h2f(x[i]) * _h2f(y[i]))
        out[i] = h
        top = max(top, np.uint16(h & _F16_MAGNITUDE))
    if top > _F16_INF:
        for i in range(x.size):
            a, b = _h2f(x[i]), _h2f(y[i])
            out[i] = _f2h(_nan_second(a * b, a, b))


@nb.njit(**_JIT)
def _divide_f16(x, y, out):  # type: ignore[no-untyped-def]
    top = np.uint16(0)
    for i in range(x.size):
        h = _f2h(_h2f(x[i]) / _h2f(y[i]))
        out[i] = h
        top = max(top, np.uint16(h & _F16_MAGNITUDE))
    if top > _F16_INF:
        for i in range(x.size):
            a, b = _h2f(x[i]), _h2f(y[i])
            out[i] = _f2h(_nan_first(a / b, a, b))


@nb.njit(**_JIT)
def _add_bf16(x, y, out):  # type: ignore[no-untyped-def]
    top = np.uint32(0)
    for i in range(x.size):
        r = _b2f(x[i]) + _b2f(y[i])
        out[i] = _f2b_even(r)
        top = max(top, _magnitude32(r))
    if top > _F32_INF:
        for i in range(x.size):
            a, b = _b2f(x[i]), _b2f(y[i])
            out[i] = _f2b(_nan_second(a + b, a, b))


@nb.njit(**_JIT)
def _subtract_bf16(x, y, out):  # type: ignore[no-untyped-def]
    top = np.uint32(0)
    for i in range(x.size):
        r = _b2f(x[i]) - _b2f(y[i])
        out[i] = _f2b_even(r)
        top = max(top, _magnitude32(r))
    if top > _F32_INF:
        for i in range(x.size):
            a, b = _b2f(x[i]), _b2f(y[i])
            out[i] = _f2b(_nan_first(a - b, a, b))


@nb.njit(**_JIT)
def _multiply_bf16(x, y, out):  # type: ignore[no-untyped-def]
    top = np.uint32(0)
    for i in range(x.size):
        r = _b2f(x[i]) * _b2f(y[i])
        out[i] = _f2b_even(r)
        top = max(top, _magnitude32(r))
    if top > _F32_INF:
        for i in range(x.size):
            a, b = _b2f(x[i]), _b2f(y[i])
            out[i] = _f2b(_nan_second(a * b, a, b))


@nb.njit(**_JIT)
def _divide_bf16(x, y, out):  # type: ignore[no-untyped-def]
    top = np.uint32(0)
    for i in range(x.size):
        r = _b2f(x[i]) / _b2f(y[i])
        out[i] = _f2b_even(r)
        top = max(top, _magnitude32(r))
    if top > _F32_INF:
        for i in range(x.size):
            a, b = _b2f(x[i]), _b2f(y[i])
            out[i] = _f2b(_nan_first(a / b, a, b))


BINARY = {
    ("add", "f16"): _add_f16, ("subtract", "f16"): _subtract_f16,
    ("multiply", "f16"): _multiply_f16, ("divide", "f16"): _divide_f16,
    ("add", "bf16"): _add_bf16, ("subtract", "bf16"): _subtract_bf16,
    ("multiply", "bf16"): _multiply_bf16, ("divide", "bf16"): _divide_bf16,
}
"""(op, format) -> loop ``(x, y, out)`` over uint16 bit patterns."""


DIRECTIONS = {"LT": (1, 0, 0, 0), "LE": (1, 0, 1, 0), "GT": (0, 1, 0, 0), "GE": (0, 1, 1, 0),
              "EQ": (0, 0, 1, 0), "NE": (1, 1, 0, 1)}
"""comparison_direction -> which of (less, greater, equal, unordered) make it true (IEEE
quiet comparisons: NE is the only one an unordered pair, a NaN, satisfies)."""


@intrinsic(prefer_literal=True)
def _compare_blocks(typingctx, x, y, out, spec, n, flags):  # type: ignore[no-untyped-def]
    """:func:`compare_keys` on the first ``n - n % W`` elements in LLVM vector code over the
    operands' own integer width (W = 32 one-byte or 16 two-byte lanes: numba widens small
    integers to 64 bits, and its loop ran at 1 ms for 1e6 against float32's 0.17), for the
    direction whose :data:`DIRECTIONS` flags are the literal ``flags`` (LLVM folds the others
    away: 1.8x -> 1.3x float32's time for f16). Returns how many elements it did."""
    width = x.dtype.bitwidth if isinstance(x, types.Array) else 0
    if not isinstance(flags, types.IntegerLiteral):
        return None
    constants = [(flags.literal_value >> (3 - k)) & 1 for k in range(4)]  # lt, gt, eq, un

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        xs, ys, os_, sp = (context.make_array(t)(context, builder, a)
                           for t, a in zip(signature.args[:4], args[:4]))
        lanes = 256 // width
        it, i1, i8, i32 = ir.IntType(width), ir.IntType(1), ir.IntType(8), ir.IntType(32)
        vt, vb, vo = ir.VectorType(it, lanes), ir.VectorType(i1, lanes), ir.VectorType(i8, lanes)
        zeros = ir.Constant(ir.VectorType(i32, lanes), [0] * lanes)

        def splat(v: Any, vtype: Any) -> Any:
            u = ir.Constant(vtype, ir.Undefined)
            return builder.shuffle_vector(builder.insert_element(u, v, ir.Constant(i32, 0)), u,
                                          zeros)

        fields = [builder.load(builder.gep(sp.data, [ir.Constant(i32, k)])) for k in range(4)]
        sign, top, nan_code = (splat(builder.trunc(f, it), vt) for f in fields[:3])
        coded = splat(builder.icmp_signed("!=", fields[3], ir.Constant(fields[3].type, 0)), vb)
        lt, gt, eq, un = (ir.Constant(vb, [v] * lanes) for v in constants)
        n = args[4]
        m = builder.and_(n, ir.Constant(n.type, -lanes))
        zero = ir.Constant(vt, [0] * lanes)
        with cgutils.for_range_slice(builder, ir.Constant(n.type, 0), m,
                                     ir.Constant(n.type, lanes)) as (i, _):
            a, b = (builder.load(builder.bitcast(builder.gep(v.data, [i]), vt.as_pointer()),
                                 align=1) for v in (xs, ys))
            not_sign = builder.xor(sign, ir.Constant(vt, [-1] * lanes))
            am, bm = builder.and_(a, not_sign), builder.and_(b, not_sign)
            coded_nan = builder.and_(coded, builder.or_(builder.icmp_unsigned("==", a, nan_code),
                                                        builder.icmp_unsigned("==", b, nan_code)))
            if width == 8:
                # keys offset by the sign bits, compared unsigned (f8E8M0FNU has no sign bit
                # and magnitudes up to 0xFE; f6/f4 several sign bits)
                ka, kb = (builder.add(builder.select(
                    builder.icmp_unsigned("!=", builder.and_(v, sign), zero),
                    builder.sub(zero, vm), vm), sign) for v, vm in ((a, am), (b, bm)))
                cmp, above = builder.icmp_unsigned, builder.icmp_unsigned(">", am, top)
                above = builder.or_(above, builder.icmp_unsigned(">", bm, top))
            else:
                # f16/bf16 (the top bit their sign): magnitudes and keys compared signed, what
                # AVX2 compares in one instruction; the key is the magnitude's two's complement
                # where the arithmetic shift of the sign gives all ones (-0 = +0)
                ka, kb = (builder.sub(builder.xor(vm, s), s) for vm, s in (
                    (am, builder.ashr(a, ir.Constant(vt, [width - 1] * lanes))),
                    (bm, builder.ashr(b, ir.Constant(vt, [width - 1] * lanes)))))
                cmp = builder.icmp_signed
                above = builder.or_(cmp(">", am, top), cmp(">", bm, top))
            nan = builder.or_(above, coded_nan)
            r = builder.or_(builder.or_(builder.and_(cmp("<", ka, kb), lt),
                                        builder.and_(cmp(">", ka, kb), gt)),
                            builder.and_(builder.icmp_unsigned("==", ka, kb), eq))
            r = builder.select(nan, un, r)
            builder.store(builder.zext(r, vo), builder.bitcast(builder.gep(os_.data, [i]),
                                                               vo.as_pointer()), align=1)
        return m

    ok = width in (8, 16) and all(
        isinstance(t, types.Array) and t.layout == "C" for t in (x, y, out, spec)) and \
        y.dtype == x.dtype and out.dtype in (types.boolean, types.uint8) and \
        spec.dtype == types.int64
    return (types.intp(x, y, out, spec, n, flags), codegen) if ok else None


@nb.njit(**_JIT)
def compare_keys(x, y, out, spec):  # type: ignore[no-untyped-def]
    """``out[i]`` = the IEEE comparison of the floats of bit patterns ``x[i]``, ``y[i]``
    (uint8 or uint16) by integer keys: ``spec`` (int64) = (the sign bits: every bit at or
    above the format's sign bit, which ml_dtypes reads as the sign in the spare high bits of
    f6/f4 bytes; the largest non-NaN magnitude; the one NaN pattern of a format without -0
    and 1, or 0 and 0; then :data:`DIRECTIONS`' four flags). The key of a value is its
    magnitude, negated when a sign bit is set (so -0 = +0); a NaN makes the pair unordered.
    ``_tables.compare_form`` checks a spec before it is used."""
    sign, top, nan_code, coded = spec[0], spec[1], spec[2], spec[3] != 0
    lt, gt, eq, un = spec[4] != 0, spec[5] != 0, spec[6] != 0, spec[7] != 0
    flags = (lt << 3) | (gt << 2) | (eq << 1) | un
    if flags == 8:  # one vector loop for each direction (LT, LE, GT, GE, EQ, NE)
        done = _compare_blocks(x, y, out, spec, x.size, 8)
    elif flags == 10:
        done = _compare_blocks(x, y, out, spec, x.size, 10)
    elif flags == 4:
        done = _compare_blocks(x, y, out, spec, x.size, 4)
    elif flags == 6:
        done = _compare_blocks(x, y, out, spec, x.size, 6)
    elif flags == 2:
        done = _compare_blocks(x, y, out, spec, x.size, 2)
    elif flags == 13:
        done = _compare_blocks(x, y, out, spec, x.size, 13)
    else:
        done = 0
    for i in range(done, x.size):
        a, b = np.int64(x[i]), np.int64(y[i])
        am, bm = a & ~sign, b & ~sign
        nan = (am > top) | (bm > top) | (coded & ((a == nan_code) | (b == nan_code)))
        ka = -am if a & sign else am
        kb = -bm if b & sign else bm
        r = ((ka < kb) & lt) | ((ka > kb) & gt) | ((ka == kb) & eq)
        out[i] = un if nan else r


@nb.njit(inline="always")
def _picked(x, y, a, b, is_max):  # type: ignore[no-untyped-def]
    """``_float_max_min`` of arithmetic.py on bit patterns ``x``, ``y`` of values ``a``, ``b``:
    a NaN operand (the first when both are), else the larger (smaller); equal values (the two
    zeros) give ``x & y`` (``x | y``), so that +0 > -0."""
    first = (a != a) | ((a > b) if is_max else (a < b))
    r = x if first else y
    both = (x & y) if is_max else (x | y)
    return both if a == b else r


@nb.njit(**_JIT)
def _max_min_f16(x, y, out, is_max):  # type: ignore[no-untyped-def]
    for i in range(x.size):
        out[i] = _picked(x[i], y[i], _h2f(x[i]), _h2f(y[i]), is_max)


@nb.njit(**_JIT)
def _max_min_bf16(x, y, out, is_max):  # type: ignore[no-untyped-def]
    for i in range(x.size):
        out[i] = _picked(x[i], y[i], _b2f(x[i]), _b2f(y[i]), is_max)


MAX_MIN = {"f16": _max_min_f16, "bf16": _max_min_bf16}
"""format -> loop ``(x, y, out, is_max)`` over uint16 bit patterns: maximum / minimum."""


# --- the pairwise tree of a reduction (``_regions.tree_reduce_last``) ----------------------------
# Level by level adjacent elements combine, an odd last element moving up unchanged; every node
# rounded to the format. Each row is taken down in ``scratch`` (the first level reads the row).


@intrinsic
def _pair_sums_f16(typingctx, words, dst, h):  # type: ignore[no-untyped-def]
    """:func:`_level_f16`'s sums on the first ``h - h % 8`` words, 8 at a time: 16 halves
    widened (vcvtph2ps), each pair's elements swapped, then AVX's horizontal add (vhaddps),
    whose first operand's NaN wins and is made quiet: the second element's, as ``_nan_second``
    picks, with no compare or blend (and LLVM does not commute it as it may a vector fadd);
    the sums back in order and rounded (vcvtps2ph). 1e6 f16: 495 -> 173 us. Elsewhere than
    x86 with AVX2, the even and odd lanes added with ``_nan_second``'s selects. Returns how
    many it did."""
    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        ws, ds = (context.make_array(t)(context, builder, a)
                  for t, a in zip(signature.args[:2], args[:2]))
        i16, i32, f32 = ir.IntType(16), ir.IntType(32), ir.FloatType()
        v16, v8f, v8h = ir.VectorType(i16, 16), ir.VectorType(f32, 8), ir.VectorType(i16, 8)

        def lanes(*k: int) -> Any:
            return ir.Constant(ir.VectorType(i32, len(k)), list(k))

        h = args[2]
        m = builder.and_(h, ir.Constant(h.type, ~7))
        with cgutils.for_range_slice(builder, ir.Constant(h.type, 0), m,
                                     ir.Constant(h.type, 8)) as (i, _):
            v = builder.load(builder.bitcast(builder.gep(ws.data, [i]), v16.as_pointer()),
                             align=4)
            f = builder.fpext(builder.bitcast(v, ir.VectorType(ir.HalfType(), 16)),
                              ir.VectorType(f32, 16))
            if SCALED:
                lo = builder.shuffle_vector(f, f, lanes(1, 0, 3, 2, 5, 4, 7, 6))
                hi = builder.shuffle_vector(f, f, lanes(9, 8, 11, 10, 13, 12, 15, 14))
                hadd = cgutils.get_or_insert_function(
                    builder.module, ir.FunctionType(v8f, [v8f, v8f]), "llvm.x86.avx.hadd.ps.256")
                r = builder.call(hadd, [lo, hi])
                r = builder.shuffle_vector(r, r, lanes(0, 1, 4, 5, 2, 3, 6, 7))
            else:  # pragma: no cover - AVX2 machines take the branch above
                a = builder.shuffle_vector(f, f, lanes(0, 2, 4, 6, 8, 10, 12, 14))
                b = builder.shuffle_vector(f, f, lanes(1, 3, 5, 7, 9, 11, 13, 15))
                a_nan = builder.fcmp_unordered("uno", a, a)
                b_nan = builder.fcmp_unordered("uno", b, b)
                pick = builder.bitcast(builder.select(b_nan, b, a), ir.VectorType(i32, 8))
                quiet = builder.bitcast(builder.or_(pick, ir.Constant(ir.VectorType(i32, 8),
                                                                      [0x400000] * 8)), v8f)
                r = builder.select(builder.or_(a_nan, b_nan), quiet, builder.fadd(a, b))
            out = builder.bitcast(builder.fptrunc(r, ir.VectorType(ir.HalfType(), 8)), v8h)
            builder.store(out, builder.bitcast(builder.gep(ds.data, [i]), v8h.as_pointer()),
                          align=2)
        return m

    ok = isinstance(words, types.Array) and words.dtype == types.uint32 and \
        isinstance(dst, types.Array) and dst.dtype == types.uint16 and \
        words.layout == dst.layout == "C"
    return (types.intp(words, dst, h), codegen) if ok else None


@nb.njit(inline="always")
def _level_f16(words, dst, h, mul):  # type: ignore[no-untyped-def]
    """One level of the tree: ``dst[i]`` = the f16 sum (product) of the two halves of
    ``words[i]`` (two adjacent elements read as one little-endian uint32)."""
    start = 0 if mul else _pair_sums_f16(words, dst, h)
    top = np.uint16(0)  # (as the binary loops: the NaN rule in a second pass)
    for i in range(start, h):
        a, b = _h2f(np.uint16(words[i] & np.uint32(0xFFFF))), _h2f(np.uint16(words[i] >> 16))
        d = _f2h(a * b if mul else a + b)
        dst[i] = d
        top = max(top, np.uint16(d & _F16_MAGNITUDE))
    if top > _F16_INF:
        for i in range(start, h):
            a = _h2f(np.uint16(words[i] & np.uint32(0xFFFF)))
            b = _h2f(np.uint16(words[i] >> 16))
            dst[i] = _f2h(_nan_second(a * b if mul else a + b, a, b))


@nb.njit(inline="always")
def _level_bf16(words, dst, h, mul):  # type: ignore[no-untyped-def]
    top = np.uint32(0)
    for i in range(h):
        a, b = _b2f(np.uint16(words[i] & np.uint32(0xFFFF))), _b2f(np.uint16(words[i] >> 16))
        r = a * b if mul else a + b
        dst[i] = _f2b_even(r)
        top = max(top, _magnitude32(r))
    if top > _F32_INF:
        for i in range(h):
            a = _b2f(np.uint16(words[i] & np.uint32(0xFFFF)))
            b = _b2f(np.uint16(words[i] >> 16))
            dst[i] = _f2b(_nan_second(a * b if mul else a + b, a, b))


@nb.njit(inline="always")
def _level16(words, dst, h, mul, bf16):  # type: ignore[no-untyped-def]
    if bf16:
        _level_bf16(words, dst, h, mul)
    else:
        _level_f16(words, dst, h, mul)


@nb.njit(**_JIT)
def tree16(x, out, scratch, mul, bf16):  # type: ignore[no-untyped-def]
    """The pairwise sum (product, ``mul``) of each row of the uint16 (rows, n) f16 (``bf16``:
    bf16) ``x`` into ``out``; ``scratch``: uint16, two halves of an even n // 2 + 2 elements
    each. Pairs are read as aligned uint32 words (LLVM did not vectorise strided reads: 1.06
    ms for 1e6): the row itself when it starts on a 4-byte boundary, else a copy. A node is
    the float32 sum (product) rounded to the format, a NaN operand's payload as the
    element-wise loops propagate it: numpy's and ml_dtypes' own element-wise results."""
    rows, n = x.shape
    half = scratch.size // 2
    row = np.empty(n - n % 2, np.uint16)  # (a misaligned row's copy)
    for r in range(rows):
        if n == 1:
            out[r] = x[r, 0]
            continue
        src, dst = scratch[:half], scratch[half:]  # levels alternate between the two halves
        h = n // 2
        if (r * n) % 2 == 0:
            _level16(x[r, :2 * h].view(np.uint32), src, h, mul, bf16)
        else:
            row[:] = x[r, :2 * h]
            _level16(row.view(np.uint32), src, h, mul, bf16)
        if n % 2:
            src[h] = x[r, n - 1]
        m = h + n % 2
        while m > 1:
            h = m // 2
            _level16(src[:2 * h].view(np.uint32), dst, h, mul, bf16)
            if m % 2:
                dst[h] = src[m - 1]
            src, dst = dst, src
            m = h + m % 2
        out[r] = src[0]
