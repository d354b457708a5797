"""Every float32 operand through the compiled float32 functions of shlo.ops._wide32.

    python benchmarks/wide32_exhaustive.py [--only exp|erfc] [--step K]

For each function and each of the 2^32 float32 bit patterns (every K-th with --step), checks
that the compiled path (shlo.ops._wide32: the loop of _wide32_jit and its fix-up) gives the
reference path's bits (the float64 function rounded once), and measures what the compiled
loop's correctness rests on: the largest relative difference between its float64 formula and
the float64 reference, which must stay below _wide32_jit.E / 16 (E = 2^-45). Prints, per function: the
elements compared, mismatches (must be 0), elements left to the reference (flagged), and that
largest difference as a power of two. About 10 minutes per function on one core.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numba as nb
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from shlo.ops import _wide32, _wide32_jit as J  # noqa: E402
from shlo.ops._lazy import special as sc  # noqa: E402

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)


def _formula(fn, name):  # type: ignore[no-untyped-def]
    """The float64 values of a loop's formula ``fn`` (before its rounding check), compiled
    with the loop's own fast-math flags."""
    @nb.njit(error_model="numpy", nogil=True, fastmath=J.FASTMATH[name])
    def values(x, out):  # type: ignore[no-untyped-def]
        for i in range(x.size):
            out[i] = fn(np.float64(x[i]))

    return values


FUNCTIONS = {
    "exp": (np.exp, _formula(J._exp_clamped, "exp")),
    "erfc": (sc.erfc, _formula(J._erfc64, "erfc")),
    "erf": (sc.erf, _formula(J._erf64, "erf")),
}


def check(name: str, step: int, chunk: int = 1 << 24) -> None:
    ref64, formula = FUNCTIONS[name]
    reference = lambda x: ref64(x.astype(F64)).astype(F32)  # noqa: E731
    fast = _wide32.compiled(name, reference)
    compared = mismatches = flagged = 0
    worst, worst_x = 0.0, 0.0
    t0 = time.perf_counter()
    with np.errstate(all="ignore"):
        for start in range(0, 1 << 32, chunk):
            bits = np.arange(start, start + chunk, step, dtype=np.uint64).astype(np.uint32)
            x = bits.view(F32)
            got, want = fast(x), reference(x)
            bad = got.view(np.uint32) != want.view(np.uint32)
            mismatches += int(bad.sum())
            compared += x.size
            out = np.empty(x.size, F32)
            flagged += J.LOOPS[name](x, out, np.empty(x.size, np.intp))
            t = np.empty(x.size, F64)
            formula(x, t)
            r = ref64(x.astype(F64))
            # where the float32 result is a finite non-zero number (elsewhere both round to
            # 0, inf or a NaN, and the fix-up handles NaN operands)
            ok = np.isfinite(r) & (np.abs(r) >= 2.0 ** -152) & (np.abs(r) < 3.41e38)
            rel = np.abs(t[ok] - r[ok]) / np.abs(r[ok])
            if rel.size:
                i = int(np.argmax(rel))
                if rel[i] > worst:
                    worst, worst_x = float(rel[i]), float(x[ok][i])
    print(f"{name}: {compared:,} operands, {mismatches} mismatches, {flagged:,} flagged "
          f"({flagged / max(compared, 1):.2e}); largest relative difference from the reference "
          f"2^{math.log2(worst) if worst else float('-inf'):.1f} (at x = {worst_x!r}); "
          f"E = 2^{math.log2(J.E):.0f}; {time.perf_counter() - t0:.0f} s", flush=True)
    if mismatches or worst >= J.E / 16:
        raise SystemExit(f"{name}: the compiled path is not the reference's")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", choices=sorted(FUNCTIONS))
    ap.add_argument("--step", type=int, default=1, help="every K-th bit pattern")
    a = ap.parse_args()
    for name in [a.only] if a.only else FUNCTIONS:
        check(name, a.step)


if __name__ == "__main__":
    main()
