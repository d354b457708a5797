"""gesdd (divide and conquer) and gesvd (QR iteration): singular value decomposition.

`lapack_[sdcz]gesdd_ffi` (jnp.linalg.svd, svdvals, pinv, lstsq, matrix_rank, norm(ord=2), cond,
polar) and `lapack_[sdcz]gesvd_ffi` (lax.linalg.svd(algorithm=QR)). FFI attribute `mode`: 'A'
(full U and V^H), 'S' (thin), 'N' (values only; U and V^H are not written). Results: the
destroyed input, the singular values (real, descending), U, V^H and `info`.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..custom_call import CustomCall, custom_call_target
from ._core import (DTYPES, Batch, batch_count, char, each, flag, i32, letter, lwork_of, new_result,
                    operand, real_dtype, result, routine)

GESDD = tuple(f"lapack_{p}gesdd_ffi" for p in "sdcz")
GESVD = tuple(f"lapack_{p}gesvd_ffi" for p in "sdcz")
TARGETS = GESDD + GESVD


@lru_cache(maxsize=None)
def _lwork(p: str, qr: bool, mode: str, m: int, n: int) -> int:
    work = np.zeros(1, DTYPES[p])
    ldvt = n if mode == "A" else min(m, n)
    jobs = [char(mode), char(mode)] if qr else [char(mode)]
    args = [*jobs, i32(m), i32(n), None, i32(max(1, m)), None, None, i32(max(1, m)), None,
            i32(max(1, ldvt)), work, i32(-1)]
    if p in "cz":
        args.append(None)  # rwork
    if not qr:
        args.append(None)  # iwork
    args.append(i32(0))
    each(routine(p + ("gesvd" if qr else "gesdd"), len(args)), 1, *args)
    return lwork_of(work)


def _svd(call: CustomCall, x: np.ndarray, qr: bool) -> list[np.ndarray]:
    p = letter(call)
    mode = flag(call, "mode", "ASN")
    m, n = x.shape[-2:]
    k = min(m, n)
    count = batch_count(x.shape)
    a = operand(call, 0, x, count)
    s, u, vt, info = (new_result(call, i, count) for i in (1, 2, 3, 4))
    ldvt = call.result_types[3].shape[-2]  # type: ignore[union-attr, index]
    lwork = _lwork(p, qr, mode, m, n)
    jobs = [char(mode), char(mode)] if qr else [char(mode)]
    args = [*jobs, i32(m), i32(n), Batch(a), i32(max(1, m)), Batch(s), Batch(u), i32(max(1, m)),
            Batch(vt), i32(max(1, ldvt)), np.zeros(lwork, DTYPES[p]), i32(lwork)]
    if p in "cz":
        if qr:
            rwork = 5 * k
        elif mode == "N":
            rwork = 7 * k
        else:
            rwork = max(5 * k * k + 5 * k, 2 * max(m, n) * k + 2 * k * k + k)
        args.append(np.zeros(max(1, rwork), real_dtype(p)))
    if not qr:
        args.append(np.zeros(max(1, 8 * k), np.int32))
    args.append(Batch(info))
    each(routine(p + ("gesvd" if qr else "gesdd"), len(args)), count, *args)
    return [result(call, i, b) for i, b in enumerate((a, s, u, vt, info))]


@custom_call_target(*GESDD, builtin=True)
def gesdd(call: CustomCall, x: np.ndarray) -> list[np.ndarray]:
    return _svd(call, x, qr=False)


@custom_call_target(*GESVD, builtin=True)
def gesvd(call: CustomCall, x: np.ndarray) -> list[np.ndarray]:
    return _svd(call, x, qr=True)
