"""float32 functions computed through float64, compiled: numpy's and scipy's bits, 3-10x faster.

shlo computes ``exponential``, ``chlo.erf`` and ``chlo.erfc`` on float32 as the float64
function rounded once (docs/semantics/elementwise.md). numpy's float64 ``exp`` and scipy's
``erfc`` are scalar C on this project's machines (~7 and ~25 ns per element; the conversions
add two passes), which made them a third of the time of transformer models (softmax, exact
GELU).

The loops of :mod:`._wide32_jit` evaluate the function by their own float64 formulas, check
that the rounding cannot depend on the formula's last bits, and leave the elements where it
could (fewer than 1 in 10^6, and NaNs) to the reference function itself: the result is the
reference path's, bit for bit (:mod:`._wide32_jit` explains the check;
tests/ops/test_wide32.py compares the two paths; benchmarks/wide32_exhaustive.py every float32
operand). Whether compiled loops run at all is :mod:`._half`'s decision (numba installed, not
disabled, not a forked child, not within :func:`._half.numpy_only`); arrays smaller than
:data:`._half.MIN_SIZE` take the reference path.

The same wrapper runs float32 ``tanh`` through :mod:`._tanh32_jit`'s copy of numpy's own
float32 formula (its reference is numpy's float32 tanh, not a float64 function; no element is
left to it), where that copy gives numpy's bits.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..dtypes import F32
from . import _half, _pool
from ._lazy import Once

__all__ = ["compiled"]

Fn = Callable[..., Any]


def _load() -> Any:
    try:
        from ._wide32_jit import LOOPS

        return LOOPS
    except Exception:  # a compile or import error on this platform
        return False


_LOOPS = Once(_load)  # _wide32_jit.LOOPS


def compiled(name: str, reference: Fn) -> Fn:
    """``reference`` (a float32 -> float32 element-wise function: the float64 function
    rounded once; for "tanh", numpy's float32 tanh) through the compiled loop ``name`` ("exp",
    "erf", "erfc", "tanh") where it runs."""

    def run(x: Any) -> Any:
        x = np.asarray(x)
        if x.dtype != F32 or x.size < _half.MIN_SIZE or not _half.available():
            return reference(x)
        loop = (_LOOPS.get() or {}).get(name)
        if loop is None:
            return reference(x)
        x, perm = _half.memory_order(x)
        flat = np.ascontiguousarray(x).reshape(-1)
        out = np.empty(flat.size, F32)
        idx = np.empty(flat.size, np.intp)  # pages touched only for the few flagged elements
        for lo, count in _pool.split(loop, (flat, out, idx), _pool.COSTLY_MIN // 2):
            if count:
                where = idx[lo:lo + count] + lo
                out[where] = reference(flat[where])
        return _half.in_order(out.reshape(x.shape), perm)

    return run

