"""Every float32 operand through shlo's compiled copy of numpy's float32 tanh.

    python benchmarks/tanh32_exhaustive.py [--step K]

Compares shlo.ops._tanh32_jit.tanh32 (used by compiled element-wise chains,
shlo/interpreter/fusion_jit.py) with numpy's own float32 ``tanh`` on each of the 2^32 float32
bit patterns (every K-th with --step), bit for bit (NaNs included), and prints the count of
mismatches (must be 0 where numpy runs its FMA formula) and both sides' time per element.
About a minute on one core.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numba as nb
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from shlo.ops._tanh32_jit import tanh32  # noqa: E402

CHUNK = 1 << 24


@nb.njit(nogil=True, error_model="numpy", boundscheck=False)
def _loop(x, out):  # type: ignore[no-untyped-def]
    for i in range(x.size):
        out[i] = tanh32(x[i])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--step", type=int, default=1, help="every K-th bit pattern")
    a = ap.parse_args()
    mismatches = compared = 0
    first: list[int] = []
    ours = theirs = 0.0
    for start in range(0, 1 << 32, CHUNK * a.step):
        bits = np.arange(start, min(start + CHUNK * a.step, 1 << 32), a.step, dtype=np.uint64)
        x = bits.astype(np.uint32).view(np.float32)
        out = np.empty_like(x)
        t0 = time.perf_counter()
        _loop(x, out)
        t1 = time.perf_counter()
        ref = np.tanh(x)
        t2 = time.perf_counter()
        ours, theirs = ours + t1 - t0, theirs + t2 - t1
        bad = np.flatnonzero(out.view(np.uint32) != ref.view(np.uint32))
        mismatches += bad.size
        first += [int(bits[i]) for i in bad[:max(0, 5 - len(first))]]
        compared += x.size
    print(f"compared {compared}, mismatches {mismatches}"
          + (f" (first: {', '.join(hex(b) for b in first)})" if first else ""))
    print(f"compiled {ours / compared * 1e9:.2f} ns/element, numpy {theirs / compared * 1e9:.2f}")


if __name__ == "__main__":
    main()
