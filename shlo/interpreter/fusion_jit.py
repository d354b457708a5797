"""The compiled evaluator of small element-wise chains (numba; imported only through
:func:`shlo.interpreter.fusion.compiled_evaluator`, once a process has run enough of them).

:func:`run` interprets a program of ``(opcode, dst, a, b)`` rows over a register file ``regs``
(one row of the chain's elements per register, float32 or float64): each instruction loops over
the elements. LLVM vectorises these loops (AVX2 on this project's machine) behind a test that
the result's row does not overlap an operand's: :class:`shlo.interpreter.fusion._Program` never
gives a result its operand's register (when it did, 64 adds on 1024 elements took 4x longer).
The opcodes are the positions in :data:`shlo.interpreter.fusion.COMPILED_OPS`:

====  ==========  ============================================================================
 0    add         ``a + b``, one IEEE operation in the registers' type (no contraction into
 1    subtract    fused multiply-adds, no reassociation: numba's default, without fastmath),
 2    multiply    so every non-NaN result is numpy's bit for bit
 3    divide
 4    maximum     IEEE maximum: the greater; of two equal values +0 for (-0, +0); NaN if either
 5    minimum     is (with whatever payload: see below)
 6    negate      ``-a``
 7    abs         ``abs(a)``
 8    sqrt        ``sqrt(a)`` (correctly rounded, as numpy's)
 9    splat       every element ``scalars[a]``
====  ==========  ============================================================================

NaN payloads are the one thing a compiled loop may choose differently from numpy (LLVM may
commute the operands of ``fadd``; numpy's maximum keeps its own operand's NaN): :func:`run`
returns True when an output row holds a NaN, and the caller then computes the chain again
through the members' own kernels. A NaN inside the chain reaches an output through any of these
ops (they all propagate it), or it is dead.
"""

from __future__ import annotations

import math

import numba as nb

__all__ = ["run"]


@nb.njit(cache=True, nogil=True, error_model="numpy", boundscheck=False)
def run(code, regs, scalars, outs):  # type: ignore[no-untyped-def]
    """Run ``code`` on ``regs``; whether a row of ``outs`` holds a NaN."""
    n = regs.shape[1]
    for k in range(code.shape[0]):
        op = code[k, 0]
        z, x, y = regs[code[k, 1]], regs[code[k, 2]], regs[code[k, 3]]
        if op == 0:
            for i in range(n):
                z[i] = x[i] + y[i]
        elif op == 1:
            for i in range(n):
                z[i] = x[i] - y[i]
        elif op == 2:
            for i in range(n):
                z[i] = x[i] * y[i]
        elif op == 3:
            for i in range(n):
                z[i] = x[i] / y[i]
        elif op == 4:
            for i in range(n):
                u, v = x[i], y[i]
                if u > v:
                    z[i] = u
                elif u < v:
                    z[i] = v
                elif u == v:  # of -0 and +0, +0
                    z[i] = v if math.copysign(1.0, u) < 0 else u
                else:  # a NaN
                    z[i] = u + v
        elif op == 5:
            for i in range(n):
                u, v = x[i], y[i]
                if u < v:
                    z[i] = u
                elif u > v:
                    z[i] = v
                elif u == v:  # of -0 and +0, -0
                    z[i] = u if math.copysign(1.0, u) < 0 else v
                else:
                    z[i] = u + v
        elif op == 6:
            for i in range(n):
                z[i] = -x[i]
        elif op == 7:
            for i in range(n):
                z[i] = abs(x[i])
        elif op == 8:
            for i in range(n):
                z[i] = math.sqrt(x[i])
        else:
            s = scalars[code[k, 2]]
            for i in range(n):
                z[i] = s
    for j in range(outs.size):
        r = outs[j]
        for i in range(n):
            if regs[r, i] != regs[r, i]:
                return True
    return False
