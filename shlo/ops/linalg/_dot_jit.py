"""The compiled small matrix product of :mod:`.matmul` (numba; imported only through
:func:`.matmul.compiled_sequential`, once a process has computed enough small products).

Each element is matmul's sequential sum (:func:`.matmul._float_matmul`): ``acc = +0``, then
``acc += a[m, k] * b[k, n]`` for k = 0, 1, ... in the operands' float dtype, each product and
each sum rounded (numba contracts nothing into a fused multiply-add without ``fastmath``). One
call where numpy takes three (the products, their sum, the +0) and allocates the (K, M, N)
products: a 16 x 16 @ 16 product in a loop body ~5 -> ~1 us.
"""

from __future__ import annotations

import numba as nb

__all__ = ["sequential_matmul"]


@nb.njit(cache=True, nogil=True, error_model="numpy", boundscheck=False)
def sequential_matmul(a, b, out):  # type: ignore[no-untyped-def]
    """``out = a @ b`` for C-contiguous (M, K) x (K, N) operands and (M, N) ``out`` of one
    float dtype, each element summed over k in index order from +0. Returns whether an
    element of ``out`` is a NaN: which NaN numpy's path gives depends on its operand order,
    so the caller takes that path then."""
    m, k = a.shape
    n = b.shape[1]
    for i in range(m):
        for j in range(n):
            out[i, j] = 0.0
        for p in range(k):
            x = a[i, p]
            for j in range(n):
                out[i, j] += x * b[p, j]
    nan = False
    for i in range(m):
        for j in range(n):
            nan |= out[i, j] != out[i, j]
    return nan
