"""QR: geqrf, geqp3 (column pivoting), orgqr/ungqr (form Q), ormqr/unmqr (apply Q).

* `lapack_[sdcz]geqrf_ffi` (jnp.linalg.qr, mode="raw"): results the Householder vectors and R in
  place, and `tau` (min(m, n) per matrix). No info.
* `lapack_[sdcz]geqp3_ffi` (jax.scipy.linalg.qr(pivoting=True)): operands the matrices and
  `jpvt` (i32; non-zero entries pin columns), results the factors, `jpvt` (1-based) and `tau`.
* `lapack_[sd]orgqr_ffi` / `lapack_[cz]ungqr_ffi` (qr's Q, householder_product, hessenberg's
  Q): operands the reflectors and `tau` (k of them); result Q in place (m x n).
* `lapack_[sd]ormqr_ffi` / `lapack_[cz]unmqr_ffi` (lax.linalg.ormqr): operands `a`, `tau`, `c`;
  FFI attributes `left`, `transpose` (bools); result Q c, c Q, Q^H c, ... in place of `c`.

Workspaces are LAPACK's optimal sizes (an `lwork = -1` query), as jaxlib's.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..custom_call import CustomCall, custom_call_target
from ._core import (DTYPES, Batch, batch_count, char, each, i32, letter, lwork_of, new_result,
                    operand, real_dtype, result, routine)

GEQRF = tuple(f"lapack_{p}geqrf_ffi" for p in "sdcz")
GEQP3 = tuple(f"lapack_{p}geqp3_ffi" for p in "sdcz")
ORGQR = ("lapack_sorgqr_ffi", "lapack_dorgqr_ffi", "lapack_cungqr_ffi", "lapack_zungqr_ffi")
ORMQR = ("lapack_sormqr_ffi", "lapack_dormqr_ffi", "lapack_cunmqr_ffi", "lapack_zunmqr_ffi")
TARGETS = GEQRF + GEQP3 + ORGQR + ORMQR


def _q(p: str) -> str:
    return "un" if p in "cz" else "or"


@lru_cache(maxsize=None)
def _geqrf_lwork(p: str, m: int, n: int) -> int:
    work = np.zeros(1, DTYPES[p])
    each(routine(p + "geqrf", 8), 1, i32(m), i32(n), None, i32(max(1, m)), None, work, i32(-1),
         i32(0))
    return lwork_of(work)


@custom_call_target(*GEQRF, builtin=True)
def geqrf(call: CustomCall, x: np.ndarray) -> list[np.ndarray]:
    p = letter(call)
    m, n = x.shape[-2:]
    count = batch_count(x.shape)
    a, tau = operand(call, 0, x, count), new_result(call, 1, count)
    lwork = _geqrf_lwork(p, m, n)
    each(routine(p + "geqrf", 8), count, i32(m), i32(n), Batch(a), i32(max(1, m)), Batch(tau),
         np.zeros(lwork, DTYPES[p]), i32(lwork), i32(0))
    return [result(call, 0, a), result(call, 1, tau)]


@lru_cache(maxsize=None)
def _geqp3_lwork(p: str, m: int, n: int) -> int:
    work = np.zeros(1, DTYPES[p])
    args = [i32(m), i32(n), None, i32(max(1, m)), None, None, work, i32(-1)]
    if p in "cz":
        args.append(None)
    args.append(i32(0))
    each(routine(p + "geqp3", len(args)), 1, *args)
    return lwork_of(work)


@custom_call_target(*GEQP3, builtin=True)
def geqp3(call: CustomCall, x: np.ndarray, jpvt: np.ndarray) -> list[np.ndarray]:
    p = letter(call)
    m, n = x.shape[-2:]
    count = batch_count(x.shape)
    a, piv = operand(call, 0, x, count), operand(call, 1, jpvt, count)
    tau = new_result(call, 2, count)
    lwork = _geqp3_lwork(p, m, n)
    args = [i32(m), i32(n), Batch(a), i32(max(1, m)), Batch(piv), Batch(tau),
            np.zeros(lwork, DTYPES[p]), i32(lwork)]
    if p in "cz":
        args.append(np.zeros(2 * n, real_dtype(p)))
    args.append(i32(0))
    each(routine(p + "geqp3", len(args)), count, *args)
    return [result(call, 0, a), result(call, 1, piv), result(call, 2, tau)]


@lru_cache(maxsize=None)
def _orgqr_lwork(p: str, m: int, n: int, k: int) -> int:
    work = np.zeros(1, DTYPES[p])
    each(routine(p + _q(p) + "gqr", 9), 1, i32(m), i32(n), i32(k), None, i32(max(1, m)), None,
         work, i32(-1), i32(0))
    return lwork_of(work)


@custom_call_target(*ORGQR, builtin=True)
def orgqr(call: CustomCall, x: np.ndarray, taus: np.ndarray) -> list[np.ndarray]:
    p = letter(call)
    m, n = x.shape[-2:]
    k = taus.shape[-1]
    count = batch_count(x.shape)
    a, tau = operand(call, 0, x, count), operand(call, 1, taus, count)
    lwork = _orgqr_lwork(p, m, n, k)
    each(routine(p + _q(p) + "gqr", 9), count, i32(m), i32(n), i32(k), Batch(a),
         i32(max(1, m)), Batch(tau), np.zeros(lwork, DTYPES[p]), i32(lwork), i32(0))
    return [result(call, 0, a)]


@lru_cache(maxsize=None)
def _ormqr_lwork(p: str, side: str, trans: str, m: int, n: int, k: int, lda: int) -> int:
    work = np.zeros(1, DTYPES[p])
    args = [char(side), char(trans), i32(m), i32(n), i32(k), None, i32(max(1, lda)), None,
            None, i32(max(1, m)), work, i32(-1), i32(0)]
    each(routine(p + _q(p) + "mqr", 13), 1, *args)
    return lwork_of(work)


@custom_call_target(*ORMQR, builtin=True)
def ormqr(call: CustomCall, a_in: np.ndarray, taus: np.ndarray,
          c_in: np.ndarray) -> list[np.ndarray]:
    p = letter(call)
    cfg = call.backend_config
    left = bool(cfg.get("left", True)) if hasattr(cfg, "get") else True
    transpose = bool(cfg.get("transpose", False)) if hasattr(cfg, "get") else False
    side = "L" if left else "R"
    trans = ("C" if p in "cz" else "T") if transpose else "N"
    m, n = c_in.shape[-2:]
    k = taus.shape[-1]
    lda = a_in.shape[-2] if left else n
    count = batch_count(c_in.shape)
    a, tau = operand(call, 0, a_in, count), operand(call, 1, taus, count)
    c = operand(call, 2, c_in, count)
    lwork = _ormqr_lwork(p, side, trans, m, n, k, lda)
    each(routine(p + _q(p) + "mqr", 13), count, char(side), char(trans), i32(m), i32(n), i32(k),
         Batch(a), i32(max(1, lda)), Batch(tau), Batch(c), i32(max(1, m)),
         np.zeros(lwork, DTYPES[p]), i32(lwork), i32(0))
    return [result(call, 0, c)]
