"""Every float32 value rounded to a one-byte format by shlo's narrowing table
(``_tables.tabled_narrowing``) and by its form in registers (``_pair_forms.narrowing_form``),
against ml_dtypes' cast:

    python benchmarks/narrowing_exhaustive.py [f8E4M3FN f8E5M2 ...]

2^32 values per format, in chunks of 2^24 (~40 s per format on 2 cores). Prints the
mismatches per format and loop (0 expected) and exits 1 if any.
"""

from __future__ import annotations

import sys

import numpy as np


def main(names: list[str]) -> int:
    from shlo.ops import _half
    from shlo.ops.elementwise import _pair_forms, _tables
    from shlo.types import element_type

    mod = _half.loops()
    if mod is None:
        print("numba is not installed")
        return 1
    bad_any = False
    chunk = 1 << 24
    for name in names:
        dt = element_type(name).dtype
        if _tables.tabled_narrowing(dt) is None:
            print(f"{name}: no narrowing table (its creation check failed, or not one byte)")
            continue
        table, shift = _tables._NARROWING[dt]
        form = _pair_forms.narrowing_form(dt, table, shift)
        bad = bad_form = 0
        out = np.empty(chunk, np.uint8)
        for start in range(0, 1 << 32, chunk):
            bits = np.arange(start, start + chunk, dtype=np.uint64).astype(np.uint32)
            mod.narrow_by_table(table, shift, bits, out)
            with np.errstate(over="ignore", invalid="ignore"):
                want = bits.view(np.float32).astype(dt).view(np.uint8)
            bad += int(np.count_nonzero(out != want))
            if form is not None:
                form(bits, out)
                bad_form += int(np.count_nonzero(out != want))
        rounding = "no form" if form is None else f"{bad_form} by its form"
        print(f"{name}: {bad} mismatches in 2^32 by the table, {rounding}")
        bad_any |= bad > 0 or bad_form > 0
    return 1 if bad_any else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["f8E4M3FN", "f8E5M2", "f8E4M3", "f8E3M4", "f8E4M3FNUZ",
                                   "f8E5M2FNUZ", "f8E4M3B11FNUZ", "f6E2M3FN", "f6E3M2FN",
                                   "f4E2M1FN"]))
