"""numpy's float32 tanh, compiled (numba; imported only by :mod:`shlo.interpreter.fusion_jit`).

shlo's f32 ``tanh`` is numpy's float32 ``tanh`` (docs/semantics/elementwise.md). On CPUs with
fused multiply-adds (AVX2 and FMA3, AVX-512, NEON) numpy computes it with an SVML-derived
formula (numpy/_core/src/umath/loops_hyperbolic.dispatch.cpp.src, ``simd_tanh_f32``):

* ``|x|`` falls in one of 32 intervals, picked from its exponent and top mantissa bits: the
  bits of ``x`` masked with ``0x7fe00000``, minus ``0x3d400000``, clamped to
  ``[0, 0x3e00000]``, shifted right by 21;
* with the interval's start ``b`` and coefficients ``c0..c6``, ``y = |x| - b`` and
  ``r = c0 + y (c1 + y (... + y c6))``, six fused multiply-adds;
* ``r = 1`` where the masked bits exceed ``0x7f000000`` (``|x| >= 1.25 * 2^127``, infinities;
  the last interval, ``|x| >= 10``, gives 1 already); the sign of ``x`` is or-ed into ``r``; a
  NaN operand gives the quiet NaN ``0x7fc00000``.

:func:`tanh32` takes the same steps on one element, with LLVM's ``fma`` (one rounding), so its
results are numpy's bit for bit where numpy runs that loop. Where it does not (a CPU without
FMA: numpy calls the C library's ``tanhf``), the results differ: the fusion evaluator's
load-time probe compares the two and compiles no tanh then. benchmarks/tanh32_exhaustive.py
compares all 2^32 operands (0 mismatches on this project's machine, numpy 2.4).

:func:`tanh_rows` computes a row 8 elements at a time, in LLVM vector code written here (LLVM
does not vectorise :func:`tanh32`'s table lookups): each lane's row of the table (its 8 values,
one 32-byte load) is loaded and the 8 rows are transposed into the 8 coefficient vectors by
shuffles; the arithmetic is the same, lane by lane. 1.2 ms on 10^6 elements on this project's
machine, against 2.3 ms for :func:`tanh32` in a loop and 2.7 ms for numpy (numpy picks its
coefficients by lane permutes; gathers took 3.0 ms). Only generic LLVM operations are used
(shuffles, ``llvm.fma``, ``llvm.fabs``), so it compiles for any target.
"""

from __future__ import annotations

import numba as nb
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, overload

__all__ = ["AGREES", "tanh32", "tanh_rows", "tanh_f32"]

# Per interval: its start b, then c0 .. c6 (float32 bit patterns; numpy's lut32x8, transposed)
_TABLE = np.array([
    (0x00000000, 0x00000000, 0x3f800000, 0xb0343c7b, 0xbeaaaaa5, 0xb76dd6b9, 0x3e0910e9, 0xbc0e2f66),
    (0x3d700000, 0x3d6fb9c9, 0x3f7f1f84, 0xbd6ee69d, 0xbeab0612, 0xbe1c276d, 0x43761143, 0x460bda12),
    (0x3d900000, 0x3d8fc35f, 0x3f7ebd11, 0xbd8f0da7, 0xbea7f01f, 0x3c1dcf2f, 0x4165ecdc, 0x43d638ef),
    (0x3db00000, 0x3daf9169, 0x3f7e1e5f, 0xbdae477d, 0xbea4e120, 0x3dc1a78d, 0xc190f756, 0xc3e11c3e),
    (0x3dd00000, 0x3dcf49ab, 0x3f7d609f, 0xbdcd2a1f, 0xbea387b7, 0x3d96f985, 0xc08c097d, 0xc2baa4e9),
    (0x3df00000, 0x3deee849, 0x3f7c842d, 0xbdeba80d, 0xbea15962, 0x3da2b61b, 0xc02ba813, 0xc249da2d),
    (0x3e100000, 0x3e0f0ee8, 0x3f7b00e5, 0xbe0c443b, 0xbe9d57f7, 0x3dc13397, 0xbf7f6bda, 0xc1859b82),
    (0x3e300000, 0x3e2e4984, 0x3f789580, 0xbe293cf3, 0xbe976b5a, 0x3dd2f670, 0x3f2b1dc0, 0x40dd5b57),
    (0x3e500000, 0x3e4d2f8e, 0x3f75b8ad, 0xbe44f282, 0xbe90230d, 0x3df48a0a, 0x3ece105d, 0x40494640),
    (0x3e700000, 0x3e6bb32e, 0x3f726fd9, 0xbe5f3651, 0xbe880dff, 0x3e06c5a8, 0x3f426a94, 0x40c730a8),
    (0x3e900000, 0x3e8c51cd, 0x3f6cc59b, 0xbe81c7c0, 0xbe7479b3, 0x3e1a3aba, 0xbadb0dc4, 0xbf0f160e),
    (0x3eb00000, 0x3ea96163, 0x3f63fb92, 0xbe96d7ca, 0xbe4c3d88, 0x3e27c405, 0x3da43b17, 0x3e30e76f),
    (0x3ed00000, 0x3ec543f1, 0x3f59ff97, 0xbea7fb8e, 0xbe212482, 0x3e2e78d0, 0xbd51ab88, 0xbea81387),
    (0x3ef00000, 0x3edfd735, 0x3f4f11d7, 0xbeb50e9e, 0xbdeb8cba, 0x3e2c3e44, 0xbcaea23d, 0xbdb26a1c),
    (0x3f100000, 0x3f028438, 0x3f3d7573, 0xbec12efe, 0xbd5e78ad, 0x3e1d3097, 0xbd3b6d8d, 0xbd351e57),
    (0x3f300000, 0x3f18abf0, 0x3f24f360, 0xbec4be92, 0x3c6b5e6e, 0x3df4a8f4, 0xbd6caaad, 0xbb4c01a0),
    (0x3f500000, 0x3f2bc480, 0x3f0cbfe7, 0xbebce070, 0x3d839143, 0x3da38508, 0xbd795bed, 0x3c1d7bfb),
    (0x3f700000, 0x3f3bec1c, 0x3eec1a69, 0xbead510e, 0x3dc21ee1, 0x3d31416a, 0xbd5fddda, 0x3c722cd1),
    (0x3f900000, 0x3f4f2e5b, 0x3eb0a801, 0xbe8ef7d6, 0x3de347af, 0x3b562657, 0xbd038f3b, 0x3c973f1c),
    (0x3fb00000, 0x3f613c53, 0x3e6753a2, 0xbe4b8704, 0x3dcbec96, 0xbcaeeac9, 0xbc1cad63, 0x3c33a31b),
    (0x3fd00000, 0x3f6ce37d, 0x3e132f1a, 0xbe083237, 0x3d99ef2d, 0xbcce9419, 0x3abb4766, 0x3b862ef4),
    (0x3ff00000, 0x3f743c4f, 0x3db7e7d3, 0xbdaf7449, 0x3d542ea1, 0xbcaaeac4, 0x3b95f10b, 0x3a27b3d0),
    (0x40100000, 0x3f7a5feb, 0x3d320845, 0xbd2e1ec4, 0x3cdde701, 0xbc49e7d0, 0x3b825873, 0xba3b5907),
    (0x40300000, 0x3f7dea85, 0x3c84d3d4, 0xbc83bf06, 0x3c2cca67, 0xbba71ddd, 0x3afaea66, 0xba0efc22),
    (0x40500000, 0x3f7f3b3d, 0x3bc477b7, 0xbbc3e0b5, 0x3b81cb27, 0xbb003b0e, 0x3a49f878, 0xb97f9f0f),
    (0x40700000, 0x3f7fb78c, 0x3b10d3da, 0xbb10aadc, 0x3ac073a1, 0xba3f9a05, 0x39996bf3, 0xb8c8af50),
    (0x40900000, 0x3f7fefd4, 0x3a01601e, 0xba0157db, 0x39ac3032, 0xb92c08a7, 0x388f3e6c, 0xb7bdddfb),
    (0x40b00000, 0x3f7ffdd0, 0x388c1a3b, 0xb88c18f2, 0x383a94d9, 0xb7ba9232, 0x371bb0e3, 0xb64f2950),
    (0x40d00000, 0x3f7fffb4, 0x3717b0da, 0xb717b096, 0x36ca081d, 0xb64a0b0f, 0x35a8a5e6, 0xb4e085b1),
    (0x40f00000, 0x3f7ffff6, 0x35a43bce, 0xb5a43bae, 0x355abd4c, 0xb4dac169, 0x34369b17, 0xb3731dfa),
    (0x41100000, 0x3f7fffff, 0x338306c6, 0xb383012c, 0x332b3cb6, 0xb2ab78ac, 0x322487b0, 0xb15a1f04),
    (0x00000000, 0x3f800000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000),
], np.uint32).view(np.float32)
_B, _C0, _C1, _C2, _C3, _C4, _C5, _C6 = (np.ascontiguousarray(_TABLE[:, i]) for i in range(8))
_NAN = np.float32(np.nan)  # 0x7fc00000: numpy's NPY_NAN


@intrinsic
def _fma(typingctx, a, b, c):  # type: ignore[no-untyped-def]
    """``a * b + c`` rounded once (float32)."""
    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        f = ir.FloatType()
        fn = builder.module.declare_intrinsic("llvm.fma", [f], ir.FunctionType(f, [f] * 3))
        return builder.call(fn, args)
    return types.float32(types.float32, types.float32, types.float32), codegen


@intrinsic
def _bits(typingctx, a):  # type: ignore[no-untyped-def]
    """The bit pattern of float32 ``a`` as an int32."""
    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.bitcast(args[0], ir.IntType(32))
    return types.int32(types.float32), codegen


@nb.njit(error_model="numpy", boundscheck=False, inline="always")
def tanh32(v):  # type: ignore[no-untyped-def]
    """numpy's float32 tanh of float32 ``v`` (the module docstring's steps)."""
    bits = _bits(v)
    masked = bits & np.int32(0x7FE00000)
    k = min(max(masked - np.int32(0x3D400000), np.int32(0)), np.int32(0x3E00000))
    j = np.uint32(k) >> np.uint32(21)
    y = abs(v) - _B[j]
    r = _fma(_C6[j], y, _C5[j])
    r = _fma(r, y, _C4[j])
    r = _fma(r, y, _C3[j])
    r = _fma(r, y, _C2[j])
    r = _fma(r, y, _C1[j])
    r = _fma(r, y, _C0[j])
    r = r if masked <= np.int32(0x7F000000) else np.float32(1.0)
    r = r if bits >= 0 else -abs(r)  # the sign bit or-ed in
    return r if v == v else _NAN


@intrinsic
def _tanh8(typingctx, x, z, table, n):  # type: ignore[no-untyped-def]
    """numpy's tanh of ``x[:m]`` into ``z[:m]``, 8 elements at a time, ``m = n - n % 8``
    (contiguous float32 arrays; ``table`` is :data:`_TABLE`): returns ``m``."""
    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        xs, zs, ts = (context.make_array(t)(context, builder, a)
                      for t, a in zip(signature.args[:3], args[:3]))
        f32, i32, i64 = ir.FloatType(), ir.IntType(32), ir.IntType(64)
        vf, vi, vb = ir.VectorType(f32, 8), ir.VectorType(i32, 8), ir.VectorType(ir.IntType(1), 8)
        mod = builder.module
        fma = cgutils.get_or_insert_function(mod, ir.FunctionType(vf, [vf] * 3), "llvm.fma.v8f32")
        fabs = cgutils.get_or_insert_function(mod, ir.FunctionType(vf, [vf]), "llvm.fabs.v8f32")

        def ints(v: int) -> ir.Constant:
            return ir.Constant(vi, [v] * 8)

        def shuffle(a, b, mask):  # type: ignore[no-untyped-def]
            return builder.shuffle_vector(a, b, ir.Constant(vi, mask))

        n = args[3]
        m = builder.and_(n, ir.Constant(n.type, ~7))
        with cgutils.for_range_slice(builder, ir.Constant(n.type, 0), m,
                                     ir.Constant(n.type, 8)) as (i, _):
            v = builder.load(builder.bitcast(builder.gep(xs.data, [i]), vf.as_pointer()), align=4)
            bits = builder.bitcast(v, vi)
            masked = builder.and_(bits, ints(0x7FE00000))
            k = builder.sub(masked, ints(0x3D400000))
            k = builder.select(builder.icmp_signed(">", k, ints(0)), k, ints(0))
            k = builder.select(builder.icmp_signed("<", k, ints(0x3E00000)), k, ints(0x3E00000))
            j = builder.lshr(k, ints(21))
            rows = []  # lane l's interval: its b, c0 .. c6
            for lane in range(8):
                jl = builder.zext(builder.extract_element(j, ir.Constant(i32, lane)), i64)
                at = builder.gep(ts.data, [builder.shl(jl, ir.Constant(i64, 3))])
                rows.append(builder.load(builder.bitcast(at, vf.as_pointer()), align=4))
            # transpose 8 x 8: pairs of rows interleaved, then pairs of pairs, then halves
            t = []
            for q in range(0, 8, 2):
                t += [shuffle(rows[q], rows[q + 1], [0, 8, 1, 9, 4, 12, 5, 13]),
                      shuffle(rows[q], rows[q + 1], [2, 10, 3, 11, 6, 14, 7, 15])]
            u = []
            for q in (0, 4):
                for a, b in ((t[q], t[q + 2]), (t[q + 1], t[q + 3])):
                    u += [shuffle(a, b, [0, 1, 8, 9, 4, 5, 12, 13]),
                          shuffle(a, b, [2, 3, 10, 11, 6, 7, 14, 15])]
            c = [shuffle(u[q % 4], u[q % 4 + 4], [0, 1, 2, 3, 8, 9, 10, 11] if q < 4 else
                         [4, 5, 6, 7, 12, 13, 14, 15]) for q in range(8)]
            y = builder.fsub(builder.call(fabs, [v]), c[0])
            r = builder.call(fma, [c[7], y, c[6]])
            for q in (5, 4, 3, 2, 1):
                r = builder.call(fma, [r, y, c[q]])
            r = builder.select(builder.icmp_signed("<=", masked, ints(0x7F000000)), r,
                               ir.Constant(vf, [1.0] * 8))
            r = builder.select(builder.icmp_signed("<", bits, ints(0)),
                               builder.fneg(builder.call(fabs, [r])), r)
            r = builder.select(builder.fcmp_unordered("uno", v, v),
                               ir.Constant(vf, [float("nan")] * 8), r)
            builder.store(r, builder.bitcast(builder.gep(zs.data, [i]), vf.as_pointer()), align=4)
        return m

    ok = all(isinstance(a, types.Array) and a.dtype == types.float32 and a.layout == "C" and
             a.ndim == nd for a, nd in ((x, 1), (z, 1), (table, 2)))
    return (types.intp(x, z, table, n), codegen) if ok else None


def tanh_rows(x, z, n):  # type: ignore[no-untyped-def]
    """``z[:n] = tanh(x[:n])``, numpy's float32 tanh (compiled code only)."""
    raise NotImplementedError


@overload(tanh_rows, inline="always")
def _tanh_rows(x, z, n):  # type: ignore[no-untyped-def]
    if x.dtype == types.float32 and x.layout == "C" and z.layout == "C":
        def rows(x, z, n):  # type: ignore[no-untyped-def]
            for i in range(_tanh8(x, z, _TABLE, n), n):
                z[i] = tanh32(x[i])
    else:  # (float64 registers: the evaluator never runs tanh on them)
        def rows(x, z, n):  # type: ignore[no-untyped-def]
            for i in range(n):
                z[i] = tanh32(np.float32(x[i]))
    return rows


@nb.njit(cache=True, nogil=True, error_model="numpy", boundscheck=False)
def tanh_f32(x, out, idx):  # type: ignore[no-untyped-def]
    """The loop of :func:`shlo.ops._wide32.compiled`: ``out = tanh(x)`` (contiguous float32);
    no element is left to the reference (0)."""
    tanh_rows(x, out, x.size)
    return 0


def _agrees() -> bool:
    """Whether :func:`tanh_f32` gives numpy's float32 tanh bit for bit on every 65521st float32
    bit pattern (every interval, both signs, subnormals, infinities, NaNs) and on a few
    elements less than a vector."""
    x = np.arange(0, 1 << 32, 65521, dtype=np.uint64).astype(np.uint32).view(np.float32)
    out = np.empty_like(x)
    for part in (x, x[:13]):
        tanh_f32(part, out[:part.size], out)
        with np.errstate(all="ignore"):
            if out[:part.size].view(np.uint32).tolist() != np.tanh(part).view(np.uint32).tolist():
                return False
    return True


AGREES = _agrees()
"""Whether numpy computes float32 tanh with the formula copied here (on this CPU, with this
numpy): checked at import. Where it does not, nothing uses these loops."""
