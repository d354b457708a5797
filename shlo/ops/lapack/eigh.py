"""syevd/heevd: symmetric/Hermitian eigendecomposition, divide and conquer.

`lapack_[sd]syevd_ffi`, `lapack_[cz]heevd_ffi` (jnp.linalg.eigh/eigvalsh). FFI attributes
`mode` ('V' eigenvectors, 'N' values only) and `uplo`. Results: the eigenvectors in place (for
'N', the destroyed input), the eigenvalues ascending (real), `info`. Workspace sizes are the
formulas jaxlib uses (LAPACK's documented minimums), not a query.
"""

from __future__ import annotations

import numpy as np

from ..custom_call import CustomCall, custom_call_target
from ._core import (DTYPES, Batch, batch_count, char, each, flag, i32, letter, new_result, operand,
                    real_dtype, result, routine)

TARGETS = ("lapack_ssyevd_ffi", "lapack_dsyevd_ffi", "lapack_cheevd_ffi", "lapack_zheevd_ffi")


@custom_call_target(*TARGETS, builtin=True)
def syevd(call: CustomCall, x: np.ndarray) -> list[np.ndarray]:
    p = letter(call)
    mode, uplo = flag(call, "mode", "VN"), flag(call, "uplo", "LU")
    n = x.shape[-1]
    count = batch_count(x.shape)
    a, w, info = operand(call, 0, x, count), new_result(call, 1, count), new_result(call, 2, count)
    vectors = mode == "V"
    iwork = 3 + 5 * n if vectors else 1
    head = [char(mode), char(uplo), i32(n), Batch(a), i32(max(1, n)), Batch(w)]
    if p in "sd":
        lwork = 1 + 6 * n + 2 * n * n if vectors else 2 * n + 1
        each(routine(p + "syevd", 11), count, *head, np.zeros(lwork, DTYPES[p]), i32(lwork),
             np.zeros(iwork, np.int32), i32(iwork), Batch(info))
    else:
        lwork = 2 * n + n * n if vectors else n + 1
        lrwork = 1 + 5 * n + 2 * n * n if vectors else max(n, 1)
        each(routine(p + "heevd", 13), count, *head, np.zeros(lwork, DTYPES[p]), i32(lwork),
             np.zeros(lrwork, real_dtype(p)), i32(lrwork), np.zeros(iwork, np.int32), i32(iwork),
             Batch(info))
    return [result(call, 0, a), result(call, 1, w), result(call, 2, info)]
