"""gees (Schur decomposition) and gehrd (Hessenberg reduction).

* `lapack_[sdcz]gees_ffi` (jax.scipy.linalg.schur, sqrtm): FFI attributes `mode` ('V' Schur
  vectors, 'N' none) and `sort` ('N' only: jaxlib supplies no selection function). Results: T
  in place, the Schur vectors Z, the eigenvalues (real and imaginary parts for real input),
  `sdim` (0) and `info`.
* `lapack_[sdcz]gehrd_ffi` (jax.scipy.linalg.hessenberg): FFI attributes `low`, `high` (i32,
  1-based ilo/ihi). Results: H and the reflectors in place, `tau` (n - 1), `info`.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..custom_call import CustomCall, custom_call_target
from ._core import (DTYPES, Batch, batch_count, char, each, flag, i32, int_attr, letter, lwork_of,
                    new_result, operand, real_dtype, result, routine)

GEES = tuple(f"lapack_{p}gees_ffi" for p in "sdcz")
GEHRD = tuple(f"lapack_{p}gehrd_ffi" for p in "sdcz")
TARGETS = GEES + GEHRD


@lru_cache(maxsize=None)
def _gees_lwork(p: str, mode: str, sort: str, n: int) -> int:
    work = np.zeros(1, DTYPES[p])
    ld = i32(max(1, n))
    if p in "sd":
        args = [char(mode), char(sort), None, i32(n), None, ld, None, None, None, None, ld, work,
                i32(-1), None, i32(0)]
    else:
        args = [char(mode), char(sort), None, i32(n), None, ld, None, None, None, ld, work,
                i32(-1), None, None, i32(0)]
    each(routine(p + "gees", 15), 1, *args)
    return lwork_of(work)


@custom_call_target(*GEES, builtin=True)
def gees(call: CustomCall, x: np.ndarray) -> list[np.ndarray]:
    p = letter(call)
    mode, sort = flag(call, "mode", "VN"), flag(call, "sort", "NS")
    if sort != "N":
        raise call.error("ordering eigenvalues on the diagonal (sort = 'S') is not implemented "
                         "(nor is it in jaxlib: no selection function is passed)")
    n = x.shape[-1]
    count = batch_count(x.shape)
    a = operand(call, 0, x, count)
    lwork = _gees_lwork(p, mode, sort, n)
    ld = i32(max(1, n))
    work = np.zeros(lwork, DTYPES[p])
    if p in "sd":
        vs, wr, wi, sdim, info = (new_result(call, i, count) for i in range(1, 6))
        each(routine(p + "gees", 15), count, char(mode), char(sort), None, i32(n), Batch(a), ld,
             Batch(sdim), Batch(wr), Batch(wi), Batch(vs), ld, work, i32(lwork), None,
             Batch(info))
        bufs = (a, vs, wr, wi, sdim, info)
    else:
        vs, w, sdim, info = (new_result(call, i, count) for i in range(1, 5))
        each(routine(p + "gees", 15), count, char(mode), char(sort), None, i32(n), Batch(a), ld,
             Batch(sdim), Batch(w), Batch(vs), ld, work, i32(lwork),
             np.zeros(max(1, n), real_dtype(p)), None, Batch(info))
        bufs = (a, vs, w, sdim, info)
    return [result(call, i, b) for i, b in enumerate(bufs)]


@lru_cache(maxsize=None)
def _gehrd_lwork(p: str, m: int, n: int, low: int, high: int) -> int:
    work = np.zeros(1, DTYPES[p])
    each(routine(p + "gehrd", 9), 1, i32(n), i32(low), i32(high), None, i32(max(1, m)), None,
         work, i32(-1), i32(0))
    return lwork_of(work)


@custom_call_target(*GEHRD, builtin=True)
def gehrd(call: CustomCall, x: np.ndarray) -> list[np.ndarray]:
    p = letter(call)
    low, high = int_attr(call, "low"), int_attr(call, "high")
    m, n = x.shape[-2:]
    count = batch_count(x.shape)
    a = operand(call, 0, x, count)
    tau, info = new_result(call, 1, count), new_result(call, 2, count)
    lwork = _gehrd_lwork(p, m, n, low, high)
    each(routine(p + "gehrd", 9), count, i32(n), i32(low), i32(high), Batch(a), i32(max(1, m)),
         Batch(tau), np.zeros(lwork, DTYPES[p]), i32(lwork), Batch(info))
    return [result(call, 0, a), result(call, 1, tau), result(call, 2, info)]
