"""getrf: LU factorization with partial pivoting (`lapack_[sdcz]getrf_ffi`).

jnp.linalg.inv/solve/det/slogdet, jax.scipy.linalg.lu/lu_factor/lu_solve, lax.linalg.lu, expm.
Operand: the matrices. Results: the factors L\\U in place, `ipiv` (i32, LAPACK's 1-based row
interchanges, min(m, n) per matrix) and `info` (i32 per matrix; > 0: U is exactly singular).
"""

from __future__ import annotations

import numpy as np

from ..custom_call import CustomCall, custom_call_target
from ._core import Batch, batch_count, each, i32, letter, new_result, operand, result, routine

TARGETS = tuple(f"lapack_{p}getrf_ffi" for p in "sdcz")


@custom_call_target(*TARGETS, builtin=True)
def getrf(call: CustomCall, x: np.ndarray) -> list[np.ndarray]:
    p = letter(call)
    m, n = x.shape[-2:]
    count = batch_count(x.shape)
    a = operand(call, 0, x, count)
    ipiv, info = new_result(call, 1, count), new_result(call, 2, count)
    each(routine(p + "getrf", 6), count, i32(m), i32(n), Batch(a), i32(max(1, m)), Batch(ipiv),
         Batch(info))
    return [result(call, 0, a), result(call, 1, ipiv), result(call, 2, info)]
