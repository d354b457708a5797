"""potrf: Cholesky factorization (`lapack_[sdcz]potrf_ffi`).

jnp.linalg.cholesky, jax.scipy.linalg.cho_factor/cho_solve. FFI attribute `uplo` ('L'/'U').
Results: the factor in place (the other triangle keeps the input, as LAPACK leaves it; JAX masks
it) and `info` (> 0: not positive definite).
"""

from __future__ import annotations

import numpy as np

from ..custom_call import CustomCall, custom_call_target
from ._core import (Batch, batch_count, char, each, flag, i32, letter, new_result, operand, result,
                    routine)

TARGETS = tuple(f"lapack_{p}potrf_ffi" for p in "sdcz")


@custom_call_target(*TARGETS, builtin=True)
def potrf(call: CustomCall, x: np.ndarray) -> list[np.ndarray]:
    p = letter(call)
    uplo = flag(call, "uplo", "LU")
    n = x.shape[-1]
    count = batch_count(x.shape)
    a = operand(call, 0, x, count)
    info = new_result(call, 1, count)
    each(routine(p + "potrf", 5), count, char(uplo), i32(n), Batch(a), i32(max(1, n)),
         Batch(info))
    return [result(call, 0, a), result(call, 1, info)]
