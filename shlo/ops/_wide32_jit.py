"""The compiled loops of :mod:`shlo.ops._wide32` (numba; imported only through it, on first use).

Each loop evaluates a float32 function in float64, by its own formula, to within a relative
error well below :data:`E` of the float64 reference it stands for (numpy's ``exp``, scipy's
``erf`` and ``erfc``), and rounds ``t * (1 - E)`` and ``t * (1 + E)`` to float32. When the
two agree, the reference value, which lies between them, rounds to the same float32: that is
the result.
When they differ (the value is within ``E`` of a float32 rounding boundary) or the operand is
a NaN, the loop writes a NaN and records the element's index; :mod:`._wide32` computes those
few elements with the reference itself. The results are therefore the reference path's, bit
for bit, whatever the formula's last bits; ``benchmarks/wide32_exhaustive.py`` measures the
formulas' error against the references over all 2^32 float32 operands.

The loops are written to vectorise (LLVM, 4 float64 lanes on AVX2): no branches in the element
loop (both sides of a choice computed, then selected), powers of two made from their bits,
rounding to an integer by adding and subtracting 1.5 * 2^52. When an element was flagged, a
second pass finds the NaNs of the result (about 0.1 ns per element; blocks of a few hundred
elements, scanned again only where flagged, vectorised worse and cost more).
"""

from __future__ import annotations

import numba as nb
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from ._half_jit import _JIT
from ._tanh32_jit import AGREES as _TANH_AGREES, tanh_f32

__all__ = ["E", "FASTMATH", "LOOPS", "exp_f32", "erfc_f32", "erf_f32"]

E = 2.0 ** -45
"""Relative margin of the rounding test. The formulas below are within 2^-50.7 of the
references over every float32 operand (exp 2^-52.0, erfc 2^-50.7, erf 2^-50.8:
benchmarks/wide32_exhaustive.py), so the reference value always lies in
``[t (1 - E), t (1 + E)]``. Fewer than 1 result in 10^6 (and every NaN) fall back on the
reference."""

FASTMATH = {"exp": {"contract"}, "erfc": set(), "erf": {"contract"}}
"""Per loop, whether LLVM may fuse a multiply and an add into one fused multiply-add (one
rounding instead of two; no other fast-math liberty). The exp and erf loops ran 15-19%
faster with it (exp 2.2 -> 1.8 ms on 605,184 operands, one core); over all 2^32 operands
their formulas stay within 2^-52.0 and 2^-50.8 (was 2^-52.8) of the references
(benchmarks/wide32_exhaustive.py compiles each formula with these flags). erfc's error grew
to 2^-48.7 near x = 1 (1 - erf(x) cancels), above the benchmark's margin of E / 16, so its
loop keeps two roundings."""
_INNER = dict(error_model="numpy", boundscheck=False, inline="always")
"""The helpers, inlined into the loops in numba's IR (LLVM alone does not inline the larger
ones, and a loop with a call is not vectorised), with numpy's error model (a division by zero
gives inf instead of raising). Inlined code is compiled with its caller's flags: the
loop's :data:`FASTMATH` (and the exhaustive benchmark's formula's)."""

_LN2_HI = 6.93147180369123816490e-01  # ln 2 in 32 significant bits: k * _LN2_HI is exact
_LN2_LO = 1.90821492927058770002e-10
_INV_LN2 = 1.4426950408889634
_ROUND = 6755399441055744.0  # 1.5 * 2^52: (x + _ROUND) - _ROUND rounds x to an integer
_NAN32 = np.float32(np.nan)

# 1/n!, n = 2..13: exp(r) - 1 = r + r^2 (C2 + r C3 + ... + r^11 C13), |r| <= ln(2)/2
_C2, _C3, _C4, _C5, _C6, _C7, _C8, _C9, _C10, _C11, _C12, _C13 = (
    0.5, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040, 1.0 / 40320, 1.0 / 362880,
    1.0 / 3628800, 1.0 / 39916800, 1.0 / 479001600, 1.0 / 6227020800)

# erfc, Cephes' ndtr.c rational approximations (S. L. Moshier): for 1 <= x < 8,
# erfc(x) = exp(-x^2) P(x) / Q(x); for x >= 8, exp(-x^2) R(x) / S(x); for |x| < 1,
# erf(x) = x T(x^2) / U(x^2). Q, S and U have a leading coefficient 1 (not listed).
_P = (2.46196981473530512524E-10, 5.64189564831068821977E-1, 7.46321056442269912687E0,
      4.86371970985681366614E1, 1.96520832956077098242E2, 5.26445194995477358631E2,
      9.34528527171957607540E2, 1.02755188689515710272E3, 5.57535335369399327526E2)
_Q = (1.32281951154744992508E1, 8.67072140885989742329E1, 3.54937778887819891062E2,
      9.75708501743205489753E2, 1.82390916687909736289E3, 2.24633760818710981792E3,
      1.65666309194161350182E3, 5.57535340817727675546E2)
_R = (5.64189583547755073984E-1, 1.27536670759978104416E0, 5.01905042251180477414E0,
      6.16021097993053585195E0, 7.40974269950448939160E0, 2.97886665372100240670E0)
_S = (2.26052863220117276590E0, 9.39603524938001434673E0, 1.20489539808096656605E1,
      1.70814450747565897222E1, 9.60896809063285878198E0, 3.36907645100081516050E0)
_T = (9.60497373987051638749E0, 9.00260197203842689217E1, 2.23200534594684319226E3,
      7.00332514112805075473E3, 5.55923013010394962768E4)
_U = (3.35617141647503099647E1, 5.21357949780152679795E2, 4.59432382970980127987E3,
      2.26290000613890934246E4, 4.92673942608635921086E4)
(_P0, _P1, _P2, _P3, _P4, _P5, _P6, _P7, _P8) = _P
(_Q1, _Q2, _Q3, _Q4, _Q5, _Q6, _Q7, _Q8) = _Q
(_R0, _R1, _R2, _R3, _R4, _R5) = _R
(_S1, _S2, _S3, _S4, _S5, _S6) = _S
(_T0, _T1, _T2, _T3, _T4) = _T
(_U1, _U2, _U3, _U4, _U5) = _U


@intrinsic
def _pow2(typingctx, k):  # type: ignore[no-untyped-def]
    """2.0 ** k for an int32 ``k`` in [-1022, 1023], made from its bits."""
    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        i64 = ir.IntType(64)
        e = builder.add(builder.sext(args[0], i64), ir.Constant(i64, 1023))
        return builder.bitcast(builder.shl(e, ir.Constant(i64, 52)), ir.DoubleType())
    return types.float64(types.int32), codegen


@nb.njit(**_INNER)
def _exp64(y):  # type: ignore[no-untyped-def]
    """exp(y) for y in [-160, 89]: y = k ln 2 + r (Cody and Waite), exp(r) by its Taylor
    polynomial of degree 13 (Estrin's scheme), times 2^k."""
    k = (y * _INV_LN2 + _ROUND) - _ROUND
    r = (y - k * _LN2_HI) - k * _LN2_LO
    r2 = r * r
    r4 = r2 * r2
    q = ((_C2 + r * _C3) + r2 * (_C4 + r * _C5)) + r4 * (
        ((_C6 + r * _C7) + r2 * (_C8 + r * _C9)) +
        r4 * ((_C10 + r * _C11) + r2 * (_C12 + r * _C13)))
    s = _pow2(np.int32(k))
    return s + s * (r + r2 * q)


@nb.njit(**_INNER)
def _round_checked(t, x):  # type: ignore[no-untyped-def]
    """(float32 result, 1 when it must come from the reference instead)."""
    lo = np.float32(t * (1.0 - E))
    hi = np.float32(t * (1.0 + E))
    ok = (lo == hi) & (x == x)
    return (lo if ok else _NAN32), np.int64(0 if ok else 1)


@nb.njit(**_INNER)
def _indices(out, idx):  # type: ignore[no-untyped-def]
    """Write the indices of the NaNs of ``out`` (the flagged elements) to ``idx``: how many."""
    count = 0
    for j in range(out.size):
        if out[j] != out[j]:
            idx[count] = j
            count += 1
    return count


@nb.njit(**_INNER)
def _exp_clamped(d):  # type: ignore[no-untyped-def]
    """exp(d); outside [-110, 89] the float32 result is 0 or inf, and the bounds round to
    those too."""
    c = d if d > -110.0 else -110.0
    return _exp64(c if c < 89.0 else 89.0)


@nb.njit(**_INNER)
def _erf_parts(d):  # type: ignore[no-untyped-def]
    """(|d| < 1, erf(d) there, else erfc(|d|)): Cephes' formulas above, one division (the
    numerator and denominator of the branch ``d`` falls in are selected). |d| is capped at
    10.5, beyond which erfc's float32 value is 0 and erf's 1."""
    a = -d if d < 0.0 else d
    a = a if a < 10.5 else 10.5
    z = a * a  # exact: a has 24 significant bits
    # |d| < 1: erf(d) = d T(z) / U(z)
    tn = d * ((((_T0 * z + _T1) * z + _T2) * z + _T3) * z + _T4)
    td = ((((z + _U1) * z + _U2) * z + _U3) * z + _U4) * z + _U5
    # 1 <= |d| < 8 and |d| >= 8: erfc(a) = exp(-z) P(a) / Q(a), exp(-z) R(a) / S(a)
    pn = (((((((_P0 * a + _P1) * a + _P2) * a + _P3) * a + _P4) * a + _P5) * a + _P6) * a +
          _P7) * a + _P8
    pd = (((((((a + _Q1) * a + _Q2) * a + _Q3) * a + _Q4) * a + _Q5) * a + _Q6) * a + _Q7) * a + _Q8
    rn = ((((_R0 * a + _R1) * a + _R2) * a + _R3) * a + _R4) * a + _R5
    rd = (((((a + _S1) * a + _S2) * a + _S3) * a + _S4) * a + _S5) * a + _S6
    small = a < 1.0
    big = a >= 8.0
    e = _exp64(-z)
    num = tn if small else e * (rn if big else pn)
    den = td if small else (rd if big else pd)
    return small, num / den


@nb.njit(**_INNER)
def _erfc64(d):  # type: ignore[no-untyped-def]
    """erfc(d): 1 - erf(d) for |d| < 1, erfc(|d|) or 2 - erfc(|d|) beyond."""
    small, q = _erf_parts(d)
    return 1.0 - q if small else (2.0 - q if d < 0.0 else q)


@nb.njit(**_INNER)
def _erf64(d):  # type: ignore[no-untyped-def]
    """erf(d): d T(z) / U(z) for |d| < 1, ±(1 - erfc(|d|)) beyond."""
    small, q = _erf_parts(d)
    r = 1.0 - q
    return q if small else (r if d >= 0.0 else -r)


def _loop(fn, name):  # type: ignore[no-untyped-def]
    """The loop ``(x, out, idx) -> count`` of the float64 function ``fn`` (the function
    ``name``): ``out`` the float32 results, ``idx`` the indices of the elements left for the
    reference (their ``out`` a NaN), ``count`` how many."""
    @nb.njit(**_JIT, fastmath=FASTMATH[name])
    def loop(x, out, idx):  # type: ignore[no-untyped-def]
        flagged = 0
        for i in range(x.size):
            d = np.float64(x[i])
            v, f = _round_checked(fn(d), d)
            out[i] = v
            flagged += f
        return _indices(out, idx) if flagged else 0

    return loop


exp_f32 = _loop(_exp_clamped, "exp")
erfc_f32 = _loop(_erfc64, "erfc")
erf_f32 = _loop(_erf64, "erf")
LOOPS = {"exp": exp_f32, "erfc": erfc_f32, "erf": erf_f32}
"""function name -> loop ``(x, out, idx) -> count`` over float32 arrays; also "tanh", numpy's
float32 tanh (:mod:`._tanh32_jit`), where it gives numpy's bits."""
if _TANH_AGREES:
    LOOPS["tanh"] = tanh_f32
