"""sytrd/hetrd (reduction to tridiagonal form) and gtsv (tridiagonal solve).

* `lapack_[sd]sytrd_ffi`, `lapack_[cz]hetrd_ffi` (lax.linalg.tridiagonal): FFI attribute
  `uplo`. Results: the reflectors in place, the diagonal and off-diagonal (real), `tau` (n - 1),
  `info`.
* `lapack_[sdcz]gtsv_ffi` (lax.linalg.tridiagonal_solve): operands `dl`, `d`, `du` (n each;
  `dl[0]` and `du[n-1]` unused, LAPACK gets `dl + 1`) and `b`; results the four overwritten by
  LAPACK (`b` is the solution) and `info` (> 0: singular).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..custom_call import CustomCall, custom_call_target
from ._core import (DTYPES, Batch, batch_count, char, each, flag, i32, letter, lwork_of, new_result,
                    operand, result, routine)

SYTRD = ("lapack_ssytrd_ffi", "lapack_dsytrd_ffi", "lapack_chetrd_ffi", "lapack_zhetrd_ffi")
GTSV = tuple(f"lapack_{p}gtsv_ffi" for p in "sdcz")
TARGETS = SYTRD + GTSV


def _trd(p: str) -> str:
    return p + ("hetrd" if p in "cz" else "sytrd")


@lru_cache(maxsize=None)
def _sytrd_lwork(p: str, m: int, n: int) -> int:
    work = np.zeros(1, DTYPES[p])
    each(routine(_trd(p), 10), 1, char("L"), i32(n), None, i32(max(1, m)), None, None, None, work,
         i32(-1), i32(0))
    return lwork_of(work)


@custom_call_target(*SYTRD, builtin=True)
def sytrd(call: CustomCall, x: np.ndarray) -> list[np.ndarray]:
    p = letter(call)
    uplo = flag(call, "uplo", "LU")
    m, n = x.shape[-2:]
    count = batch_count(x.shape)
    a = operand(call, 0, x, count)
    d, e, tau, info = (new_result(call, i, count) for i in range(1, 5))
    lwork = _sytrd_lwork(p, m, n)
    each(routine(_trd(p), 10), count, char(uplo), i32(n), Batch(a), i32(max(1, m)), Batch(d),
         Batch(e), Batch(tau), np.zeros(lwork, DTYPES[p]), i32(lwork), Batch(info))
    return [result(call, i, b) for i, b in enumerate((a, d, e, tau, info))]


@custom_call_target(*GTSV, builtin=True)
def gtsv(call: CustomCall, dl_in: np.ndarray, d_in: np.ndarray, du_in: np.ndarray,
         b_in: np.ndarray) -> list[np.ndarray]:
    p = letter(call)
    n, nrhs = b_in.shape[-2:]
    count = batch_count(b_in.shape)
    dl, d, du, b = (operand(call, i, v, count) for i, v in enumerate((dl_in, d_in, du_in, b_in)))
    info = new_result(call, 4, count)
    each(routine(p + "gtsv", 8), count, i32(n), i32(nrhs), Batch(dl, offset=1), Batch(d),
         Batch(du), Batch(b), i32(max(1, n)), Batch(info))
    return [result(call, i, v) for i, v in enumerate((dl, d, du, b, info))]
