"""numpy's float32 tanh, compiled (numba; imported by :mod:`shlo.interpreter.fusion_jit` and
:mod:`shlo.ops._wide32_jit`, themselves imported on first need).

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
FMA: numpy calls the C library's ``tanhf``), the results differ: :data:`AGREES`, checked at
import, is then False and nothing uses these loops. benchmarks/tanh32_exhaustive.py compares
all 2^32 operands (0 mismatches on this project's machine, numpy 2.4).

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

__all__ = ["AGREES", "bits_of", "tanh32", "tanh_rows", "tanh_f32"]

# Per interval: its start b, then c0 .. c6 (float32 bit patterns; numpy's lut32x8, transposed)
_TABLE = np.array([[int(h, 16) for h in row.split()] for row in (
    "00000000 00000000 3f800000 b0343c7b beaaaaa5 b76dd6b9 3e0910e9 bc0e2f66",
    "3d700000 3d6fb9c9 3f7f1f84 bd6ee69d beab0612 be1c276d 43761143 460bda12",
    "3d900000 3d8fc35f 3f7ebd11 bd8f0da7 bea7f01f 3c1dcf2f 4165ecdc 43d638ef",
    "3db00000 3daf9169 3f7e1e5f bdae477d bea4e120 3dc1a78d c190f756 c3e11c3e",
    "3dd00000 3dcf49ab 3f7d609f bdcd2a1f bea387b7 3d96f985 c08c097d c2baa4e9",
    "3df00000 3deee849 3f7c842d bdeba80d bea15962 3da2b61b c02ba813 c249da2d",
    "3e100000 3e0f0ee8 3f7b00e5 be0c443b be9d57f7 3dc13397 bf7f6bda c1859b82",
    "3e300000 3e2e4984 3f789580 be293cf3 be976b5a 3dd2f670 3f2b1dc0 40dd5b57",
    "3e500000 3e4d2f8e 3f75b8ad be44f282 be90230d 3df48a0a 3ece105d 40494640",
    "3e700000 3e6bb32e 3f726fd9 be5f3651 be880dff 3e06c5a8 3f426a94 40c730a8",
    "3e900000 3e8c51cd 3f6cc59b be81c7c0 be7479b3 3e1a3aba badb0dc4 bf0f160e",
    "3eb00000 3ea96163 3f63fb92 be96d7ca be4c3d88 3e27c405 3da43b17 3e30e76f",
    "3ed00000 3ec543f1 3f59ff97 bea7fb8e be212482 3e2e78d0 bd51ab88 bea81387",
    "3ef00000 3edfd735 3f4f11d7 beb50e9e bdeb8cba 3e2c3e44 bcaea23d bdb26a1c",
    "3f100000 3f028438 3f3d7573 bec12efe bd5e78ad 3e1d3097 bd3b6d8d bd351e57",
    "3f300000 3f18abf0 3f24f360 bec4be92 3c6b5e6e 3df4a8f4 bd6caaad bb4c01a0",
    "3f500000 3f2bc480 3f0cbfe7 bebce070 3d839143 3da38508 bd795bed 3c1d7bfb",
    "3f700000 3f3bec1c 3eec1a69 bead510e 3dc21ee1 3d31416a bd5fddda 3c722cd1",
    "3f900000 3f4f2e5b 3eb0a801 be8ef7d6 3de347af 3b562657 bd038f3b 3c973f1c",
    "3fb00000 3f613c53 3e6753a2 be4b8704 3dcbec96 bcaeeac9 bc1cad63 3c33a31b",
    "3fd00000 3f6ce37d 3e132f1a be083237 3d99ef2d bcce9419 3abb4766 3b862ef4",
    "3ff00000 3f743c4f 3db7e7d3 bdaf7449 3d542ea1 bcaaeac4 3b95f10b 3a27b3d0",
    "40100000 3f7a5feb 3d320845 bd2e1ec4 3cdde701 bc49e7d0 3b825873 ba3b5907",
    "40300000 3f7dea85 3c84d3d4 bc83bf06 3c2cca67 bba71ddd 3afaea66 ba0efc22",
    "40500000 3f7f3b3d 3bc477b7 bbc3e0b5 3b81cb27 bb003b0e 3a49f878 b97f9f0f",
    "40700000 3f7fb78c 3b10d3da bb10aadc 3ac073a1 ba3f9a05 39996bf3 b8c8af50",
    "40900000 3f7fefd4 3a01601e ba0157db 39ac3032 b92c08a7 388f3e6c b7bdddfb",
    "40b00000 3f7ffdd0 388c1a3b b88c18f2 383a94d9 b7ba9232 371bb0e3 b64f2950",
    "40d00000 3f7fffb4 3717b0da b717b096 36ca081d b64a0b0f 35a8a5e6 b4e085b1",
    "40f00000 3f7ffff6 35a43bce b5a43bae 355abd4c b4dac169 34369b17 b3731dfa",
    "41100000 3f7fffff 338306c6 b383012c 332b3cb6 b2ab78ac 322487b0 b15a1f04",
    "00000000 3f800000 00000000 00000000 00000000 00000000 00000000 00000000",
)], np.uint32).view(np.float32)
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
def bits_of(typingctx, a):  # type: ignore[no-untyped-def]
    """The bit pattern of float ``a`` as a signed integer of its width."""
    width = {types.float32: 32, types.float64: 64}.get(a)
    if width is None:
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.bitcast(args[0], ir.IntType(width))
    return getattr(types, f"int{width}")(a), codegen


@nb.njit(error_model="numpy", boundscheck=False, inline="always")
def tanh32(v):  # type: ignore[no-untyped-def]
    """numpy's float32 tanh of float32 ``v`` (the module docstring's steps)."""
    bits = bits_of(v)
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
        vf, vi = ir.VectorType(f32, 8), ir.VectorType(i32, 8)
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
