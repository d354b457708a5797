"""trsm: triangular solve, BLAS level 3 (`lapack_[sdcz]trsm_ffi`).

jax.scipy.linalg.solve_triangular, and the triangular steps of solve/inv/lu_solve/cho_solve.
Operands: `a` (triangular) and `b`; the result is `b` overwritten by the solution of
op(a) x = b (side 'L') or x op(a) = b (side 'R'). FFI attributes `side`, `uplo`, `trans_x`
('N', 'T', 'C') and `diag` ('N', 'U'); alpha is 1.
"""

from __future__ import annotations

import numpy as np

from ..custom_call import CustomCall, custom_call_target
from ._core import DTYPES, Batch, batch_count, char, each, flag, i32, letter, operand, result, routine

TARGETS = tuple(f"lapack_{p}trsm_ffi" for p in "sdcz")


@custom_call_target(*TARGETS, builtin=True)
def trsm(call: CustomCall, a: np.ndarray, b: np.ndarray) -> list[np.ndarray]:
    p = letter(call)
    side, uplo = flag(call, "side", "LR"), flag(call, "uplo", "LU")
    trans, diag = flag(call, "trans_x", "NTC"), flag(call, "diag", "NU")
    m, n = b.shape[-2:]
    count = batch_count(b.shape)
    x = operand(call, 0, a, count)
    y = operand(call, 1, b, count)
    lda = m if side == "L" else n
    alpha = np.ones(1, dtype=DTYPES[p])
    each(routine(p + "trsm", 11), count, char(side), char(uplo), char(trans), char(diag), i32(m),
         i32(n), alpha, Batch(x), i32(max(1, lda)), Batch(y), i32(max(1, m)))
    return [result(call, 0, y)]
