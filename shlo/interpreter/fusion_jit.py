"""The compiled evaluator of element-wise chains (numba; imported only through
:func:`shlo.interpreter.fusion.compiled_evaluator`, once a process has run enough of them).

A chain is a program of ``(opcode, dst, a, b)`` rows over a register file ``regs`` (one row
of elements per register, float32 or float64): each instruction loops over the elements.
:func:`run` runs it over whole small tensors (:func:`run_exact` again where an output holds a
NaN); :func:`run_blocks` over large ones, block by block inside the compiled code (the
registers are one block long and stay in L1: the inputs' block is copied in, the program
runs, the outputs' block is copied out). LLVM vectorises the loops (AVX2 on this project's
machine) behind a test that the result's row does not overlap an operand's:
:class:`shlo.interpreter.fusion._Program` never gives a result its operand's register (when it
did, 64 adds on 1024 elements took 4x longer). The opcodes are the positions in
:data:`shlo.interpreter.fusion.COMPILED_OPS`:

====  ==========  ============================================================================
 0    add         ``a + b``, one IEEE operation in the registers' type (no contraction into
 1    subtract    fused multiply-adds, no reassociation: numba's default, without fastmath),
 2    multiply    so every non-NaN result is numpy's bit for bit
 3    divide
 4    maximum     IEEE maximum: the greater; of two equal values +0 for (-0, +0)
 5    minimum     IEEE minimum: the lesser; of two equal values -0 for (-0, +0)
 6    negate      ``-a``
 7    abs         ``abs(a)``
 8    sqrt        ``sqrt(a)`` (correctly rounded, as numpy's)
 9    tanh        numpy's float32 tanh (:func:`shlo.ops._tanh32_jit.tanh_rows`; float32 only)
10    splat       every element ``scalars[a]``
====  ==========  ============================================================================

NaNs are numpy's bit for bit too, as numpy computes them on this project's machine (x86; the
evaluator's load-time probe checks each rule against numpy where it runs):

* an arithmetic op with one NaN operand returns it made quiet. LLVM may swap the operands of
  ``fadd`` and ``fmul`` and rewrite ``a - b`` (``1 - sNaN`` came out with its sign flipped),
  so an arithmetic op's loop that made a NaN runs again with the rule spelled out: ``a + a``
  for the NaN ``a`` (``a`` made quiet). (Selecting so in every loop made the loops 1.5-2x
  slower; whether a NaN was made is an or-reduction of the loop, which vectorises);
* where two NaNs of different bit patterns meet in a binary op, which one numpy returns depends
  on its code path (numpy's multiply returned the first of two in arrays of 64 elements and the
  second in one of 200): :func:`run_exact` and :func:`run_blocks` return True and the caller
  computes the chain through the members' kernels;
* maximum and minimum return their NaN operand unchanged (numpy's);
* an invalid operation (``sqrt(-1)``, ``0 / 0``, ``inf - inf``) gives the hardware's default NaN,
  the same instruction's as numpy's; negate and abs flip and clear the sign bit of a NaN too.
"""

from __future__ import annotations

import math

import numba as nb

from ..ops._tanh32_jit import bits_of, tanh_rows

__all__ = ["run", "run_exact", "run_blocks"]

_JIT = dict(cache=True, nogil=True, error_model="numpy", boundscheck=False)


@nb.njit(error_model="numpy", boundscheck=False, inline="always")
def _two_nans(u, v):  # type: ignore[no-untyped-def]
    """Whether ``u`` and ``v`` are NaNs of different bit patterns."""
    return (u != u) & (v != v) & (bits_of(u) != bits_of(v))


@nb.njit(error_model="numpy", boundscheck=False, nogil=True)
def _nan_exact(regs, op, d, a, b, n):  # type: ignore[no-untyped-def]
    """Arithmetic op ``op`` (0-3) of registers ``a`` and ``b`` into ``d`` again, with NaN
    operands' rule: whether two different NaNs met (numpy's choice between them is not
    known)."""
    z, x, y = regs[d], regs[a], regs[b]
    met = False
    for i in range(n):
        u, v = x[i], y[i]
        if (u == u) & (v == v):
            z[i] = u + v if op == 0 else (u - v if op == 1 else (u * v if op == 2 else u / v))
        else:  # the NaN made quiet (a + a of a NaN a)
            z[i] = u + u if u != u else v + v
            met |= _two_nans(u, v)
    return met


@nb.njit(error_model="numpy", boundscheck=False, nogil=True)
def _nans_met(regs, d, a, b, n):  # type: ignore[no-untyped-def]
    """Whether two different NaNs met in registers ``a`` and ``b``, whose maximum or minimum is
    register ``d`` (looked for only where ``d`` holds a NaN)."""
    z, x, y = regs[d], regs[a], regs[b]
    nan = False
    for i in range(n):
        nan |= z[i] != z[i]
    met = False
    if nan:
        for i in range(n):
            met |= _two_nans(x[i], y[i])
    return met


@nb.njit(error_model="numpy", boundscheck=False, nogil=True)
def _tanh_row(regs, d, a, n):  # type: ignore[no-untyped-def]
    tanh_rows(regs[a], regs[d], n)


@nb.njit(inline="always")
def _is_nan(r):  # type: ignore[no-untyped-def]
    return r != r


@nb.njit(inline="always")
def _no_nan(r):  # type: ignore[no-untyped-def]
    return False


@nb.njit(inline="always")
def _no_nan_exact(regs, op, d, a, b, n):  # type: ignore[no-untyped-def]
    return False


@nb.njit(inline="always")
def _no_nans_met(regs, d, a, b, n):  # type: ignore[no-untyped-def]
    return False


def _executor(exact: bool):  # type: ignore[no-untyped-def]
    """The loop over ``code``'s rows: with ``exact``, following the NaN rules (the module
    docstring); without, plain IEEE loops, exact only where no NaN is made or met. What is
    not a plain loop (tanh, the NaN rules) is a call taking register numbers: array views
    passed to a call, or tanh's code inlined, made every op of a chain of tiny ops 1.4-2x
    slower (10,000 ops on 16 elements: 120-200 against 81-86 us), and so did the NaN rules'
    calls and checks in the plain loop, even in branches of a constant False: there they are
    functions returning False, inlined (folded away by LLVM)."""
    made, again, check = ((_is_nan, _nan_exact, _nans_met) if exact else
                          (_no_nan, _no_nan_exact, _no_nans_met))

    @nb.njit(error_model="numpy", boundscheck=False, inline="always")
    def execute(code, regs, scalars, n):  # type: ignore[no-untyped-def]
        """Run ``code`` on the first ``n`` elements of the registers ``regs``: (exact) whether
        two different NaNs met in a binary op."""
        met = False
        for k in range(code.shape[0]):
            op, d, a, b = code[k, 0], code[k, 1], code[k, 2], code[k, 3]
            z, x, y = regs[d], regs[a], regs[b]
            nan = False  # (checked in each arithmetic op's branch: once after them all, it
            # kept the plain loop 1.3x slower; and one loop per op, which LLVM vectorises,
            # rather than a loop choosing the op per element)
            if op == 0:
                for i in range(n):
                    r = x[i] + y[i]
                    z[i] = r
                    nan |= made(r)
                if nan:  # it made a NaN: again with the rule
                    met |= again(regs, op, d, a, b, n)
            elif op == 1:
                for i in range(n):
                    r = x[i] - y[i]
                    z[i] = r
                    nan |= made(r)
                if nan:  # it made a NaN: again with the rule
                    met |= again(regs, op, d, a, b, n)
            elif op == 2:
                for i in range(n):
                    r = x[i] * y[i]
                    z[i] = r
                    nan |= made(r)
                if nan:  # it made a NaN: again with the rule
                    met |= again(regs, op, d, a, b, n)
            elif op == 3:
                for i in range(n):
                    r = x[i] / y[i]
                    z[i] = r
                    nan |= made(r)
                if nan:  # it made a NaN: again with the rule
                    met |= again(regs, op, d, a, b, n)
            elif op == 4:
                for i in range(n):
                    u, v = x[i], y[i]
                    if u > v:
                        z[i] = u
                    elif u < v:
                        z[i] = v
                    elif u == v:  # of -0 and +0, +0
                        z[i] = v if math.copysign(1.0, u) < 0 else u
                    else:  # a NaN: the first
                        z[i] = u if u != u else v
                met |= check(regs, d, a, b, n)
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
                        z[i] = u if u != u else v
                met |= check(regs, d, a, b, n)
            elif op == 6:
                for i in range(n):
                    z[i] = -x[i]
            elif op == 7:
                for i in range(n):
                    z[i] = abs(x[i])
            elif op == 8:
                for i in range(n):
                    z[i] = math.sqrt(x[i])
            elif op == 9:
                _tanh_row(regs, d, a, n)
            else:
                s = scalars[a]
                for i in range(n):
                    z[i] = s
        return met

    return execute


_plain = _executor(False)
_exact = _executor(True)


@nb.njit(**_JIT)
def run(code, regs, scalars, outs):  # type: ignore[no-untyped-def]
    """Run ``code`` on the whole registers ``regs``, plainly: whether an output register
    (``outs``) holds a NaN (then :func:`run_exact` gives the results)."""
    _plain(code, regs, scalars, regs.shape[1])
    for j in range(outs.size):
        r = regs[outs[j]]
        for i in range(r.size):
            if r[i] != r[i]:
                return True
    return False


@nb.njit(**_JIT)
def run_exact(code, regs, scalars):  # type: ignore[no-untyped-def]
    """Run ``code`` on the whole registers ``regs`` with the NaN rules: whether two different
    NaNs met (the results are then not known to be numpy's)."""
    return _exact(code, regs, scalars, regs.shape[1])


@nb.njit(**_JIT)
def run_blocks(code, ins, loads, scalars, outs, stores, regs):  # type: ignore[no-untyped-def]
    """Run ``code`` over flat arrays block by block (a block: ``regs``'s row length): input
    ``j < len(loads)`` of the tuple ``ins`` is copied into register ``loads[j]``, and register
    ``stores[j]`` into output ``j < len(stores)`` of ``outs`` (the tuples' other arrays are
    padding: :data:`shlo.interpreter.fusion.MAX_INPUTS`, ``MAX_OUTPUTS``). Whether two
    different NaNs met (then it stops: the results are not known to be numpy's)."""
    n = outs[0].size
    b = regs.shape[1]
    for start in range(0, n, b):
        m = min(b, n - start)
        for j in range(loads.size):  # (views indexed from 0: the copies vectorise)
            src, dst = ins[j][start:start + m], regs[loads[j]]
            for i in range(m):
                dst[i] = src[i]
        if _exact(code, regs, scalars, m):
            return True
        for j in range(stores.size):
            src, dst = regs[stores[j]], outs[j][start:start + m]
            for i in range(m):
                dst[i] = src[i]
    return False
