"""jaxlib's CPU LAPACK custom calls (`lapack_<p><routine>_ffi`), as built-in custom_call targets.

JAX lowers `jnp.linalg` / `jax.scipy.linalg` / `lax.linalg` on CPU to these calls. Each module
here implements one routine family for s/d/c/z with the operands, results, FFI attributes
(`mhlo.backend_config`), layouts, batch dimensions and `info` outputs of jaxlib's kernels
(jaxlib/cpu/lapack_kernels.cc), by calling the same LAPACK routines (scipy's cython_lapack):

=============  =========================================================================
lu             getrf
cholesky       potrf
qr             geqrf, geqp3, orgqr/ungqr, ormqr/unmqr
eigh           syevd/heevd
svd            gesdd, gesvd
triangular     trsm
eig            geev
schur          gees, gehrd
tridiagonal    sytrd/hetrd, gtsv
=============  =========================================================================
"""

from __future__ import annotations

from . import cholesky, eig, eigh, lu, qr, schur, svd, triangular, tridiagonal

__all__ = ["TARGETS"]

TARGETS: tuple[str, ...] = (lu.TARGETS + cholesky.TARGETS + qr.TARGETS + eigh.TARGETS
                            + svd.TARGETS + triangular.TARGETS + eig.TARGETS + schur.TARGETS
                            + tridiagonal.TARGETS)
"""Every LAPACK target shlo runs: the 60 `lapack_*_ffi` targets jaxlib 0.10.2 registers for CPU."""
