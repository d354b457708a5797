"""How far "f32 kernel, then one rounding" is from the careful path (float64, rounded once) for
the transcendental functions, over *every* value of each float type of at most 16 bits:

    python benchmarks/narrow_accuracy.py

Prints a markdown table: per function and type, the number of inputs (of all bit patterns
with a finite careful result or NaN) where the f32 path differs, and the largest difference in
units of the type's last place. shlo does not use the f32 path for these types: it evaluates
them as lookup tables of the careful path (shlo/ops/elementwise/_tables.py), which are exact
by construction and faster still; this table says what the f32 path would have cost in
accuracy (docs/semantics/elementwise.md, "Narrow floats").
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from shlo.ops._numeric import _round_f64_careful

TYPES = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f8E4M3FN": ml_dtypes.float8_e4m3fn,
         "f8E5M2": ml_dtypes.float8_e5m2, "f8E4M3FNUZ": ml_dtypes.float8_e4m3fnuz,
         "f8E5M2FNUZ": ml_dtypes.float8_e5m2fnuz, "f8E3M4": ml_dtypes.float8_e3m4,
         "f8E4M3": ml_dtypes.float8_e4m3, "f6E2M3FN": ml_dtypes.float6_e2m3fn,
         "f6E3M2FN": ml_dtypes.float6_e3m2fn, "f4E2M1FN": ml_dtypes.float4_e2m1fn}
FUNCS = {"exponential": np.exp, "exponential_minus_one": np.expm1, "log": np.log,
         "log_plus_one": np.log1p, "logistic": lambda x: 1 / (1 + np.exp(-x)), "tanh": np.tanh,
         "sine": np.sin, "cosine": np.cos, "tan": np.tan, "cbrt": np.cbrt,
         "rsqrt": lambda x: 1 / np.sqrt(x)}


def _order(x: np.ndarray) -> np.ndarray:
    """Integers in the order of the values (adjacent values differ by 1): ulp distances."""
    f = x.astype(np.float64)
    vals = np.unique(f[np.isfinite(f)])
    return np.searchsorted(vals, f)


def main() -> None:
    print("| function | " + " | ".join(TYPES) + " |")
    print("|---|" + "|".join("---" for _ in TYPES) + "|")
    for fname, fn in FUNCS.items():
        cells = []
        for dt in TYPES.values():
            dt = np.dtype(dt)
            u = np.uint8 if dt.itemsize == 1 else np.uint16
            x = np.arange(1 << (8 * dt.itemsize), dtype=np.uint32).astype(u).view(dt)
            with np.errstate(all="ignore"):
                careful = _round_f64_careful(fn(x.astype(np.float64)), dt)
                fast = np.asarray(fn(x.astype(np.float32))).astype(dt)
            cf, ff = careful.astype(np.float64), fast.astype(np.float64)
            same = (careful.view(u) == fast.view(u)) | (np.isnan(cf) & np.isnan(ff))
            bad = ~same
            if not bad.any():
                cells.append("0")
                continue
            finite = bad & np.isfinite(cf) & np.isfinite(ff)
            ulps = np.abs(_order(fast) - _order(careful))[finite]
            worst = int(ulps.max()) if ulps.size else 0
            other = int(bad.sum() - finite.sum())
            cells.append(f"{int(bad.sum())} (≤{worst} ulp" + (f", {other} inf/NaN" if other else "")
                         + ")")
        print(f"| {fname} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
