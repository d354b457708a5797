"""geev: eigendecomposition of a general matrix (`lapack_[sdcz]geev_ffi`).

jnp.linalg.eig/eigvals. FFI attributes `compute_left`, `compute_right` ('V'/'N'). Results for
real input: the real and imaginary parts of the eigenvalues, the left and right eigenvectors
(complex: LAPACK's packed conjugate pairs unpacked, as jaxlib does) and `info`; for complex
input: the eigenvalues, both eigenvector sets, `info`. A matrix with a non-finite entry is not
passed to LAPACK: its `info` is -4, as in jaxlib.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..custom_call import CustomCall, custom_call_target
from ._core import (DTYPES, Batch, batch_count, char, each, flag, i32, letter, lwork_of, new_result,
                    operand, real_dtype, result, routine)

TARGETS = tuple(f"lapack_{p}geev_ffi" for p in "sdcz")


@lru_cache(maxsize=None)
def _lwork(p: str, left: str, right: str, n: int) -> int:
    work = np.zeros(1, DTYPES[p])
    ld = i32(max(1, n))
    if p in "sd":
        args = [char(left), char(right), i32(n), None, ld, None, None, None, ld, None, ld, work,
                i32(-1), i32(0)]
    else:
        args = [char(left), char(right), i32(n), None, ld, None, None, ld, None, ld, work, i32(-1),
                np.zeros(max(1, n), real_dtype(p)), i32(0)]
    each(routine(p + "geev", 14), 1, *args)
    return lwork_of(work)


def unpack_eigenvectors(wi: np.ndarray, packed: np.ndarray) -> np.ndarray:
    """LAPACK's real packing of complex eigenvectors, unpacked (jaxlib's UnpackEigenvectors):
    ``packed`` holds per matrix the columns as rows (buffer order, ``[b, column, row]``); a
    conjugate pair (wi[j] > 0, wi[j+1] < 0) stores re in column j and im in column j + 1."""
    out = packed.astype(np.result_type(packed.dtype, np.complex64))
    n = wi.shape[-1]
    b, j = np.nonzero(wi[:, : max(n - 1, 0)] > 0)
    re, im = packed[b, j], packed[b, j + 1]
    out[b, j] = re + 1j * im
    out[b, j + 1] = re - 1j * im
    return out


@custom_call_target(*TARGETS, builtin=True)
def geev(call: CustomCall, x: np.ndarray) -> list[np.ndarray]:
    p = letter(call)
    left, right = flag(call, "compute_left", "VN"), flag(call, "compute_right", "VN")
    n = x.shape[-1]
    count = batch_count(x.shape)
    a = operand(call, 0, x, count)
    finite = np.isfinite(a).all(axis=1)
    todo = np.nonzero(finite)[0].tolist()
    lwork = _lwork(p, left, right, n)
    ld = i32(max(1, n))
    work = np.zeros(lwork, DTYPES[p])
    if p in "sd":
        wr, wi, vl, vr, info = (new_result(call, i, count) for i in range(5))
        pl, pr = np.zeros((count, n * n), DTYPES[p]), np.zeros((count, n * n), DTYPES[p])
        each(routine(p + "geev", 14), count, char(left), char(right), i32(n), Batch(a), ld,
             Batch(wr), Batch(wi), Batch(pl), ld, Batch(pr), ld, work, i32(lwork), Batch(info),
             only=todo)
        info[~finite] = -4
        ok = (info[:, 0] == 0) & finite
        for out, packed in ((vl, pl), (vr, pr)):
            unpacked = unpack_eigenvectors(wi[ok], packed[ok].reshape(-1, n, n))
            out[ok] = unpacked.reshape(-1, n * n)
        return [result(call, i, buf) for i, buf in enumerate((wr, wi, vl, vr, info))]
    w, vl, vr, info = (new_result(call, i, count) for i in range(4))
    each(routine(p + "geev", 14), count, char(left), char(right), i32(n), Batch(a), ld, Batch(w),
         Batch(vl), ld, Batch(vr), ld, work, i32(lwork), np.zeros(max(1, 2 * n), real_dtype(p)),
         Batch(info), only=todo)
    info[~finite] = -4
    return [result(call, i, buf) for i, buf in enumerate((w, vl, vr, info))]
