"""Bytecode speed benchmark (a script, not a test).

Measures, on portable artifacts written by shlo (StableHLO current version):
* MB/s reading (and writing) an artifact holding ~100 MB of weights (dense f32 constants);
* ops/s reading (and writing) an artifact of a 100,000-op module (the op-dense program of
  parse_bench.py, in the shapes and spellings JAX emits);
beside jaxlib's `deserialize_portable_artifact` (when jaxlib is installed) and shlo's text parser
on the same program as text.

Run: ``python benchmarks/bytecode_bench.py [--mb 100] [--ops 100000] [--repeat 3] [--gc-off]``.
Times are CPU times (process time) of the best of ``--repeat`` runs. shlo's reader, writer and
text parser pause Python's cyclic garbage collector themselves; ``--gc-off`` turns it off for
the whole run (what is left is the work itself).
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import shlo  # noqa: E402
from shlo.bytecode import deserialize, serialize  # noqa: E402
from shlo.syntax.printer import format_module  # noqa: E402

from parse_bench import op_dense_module  # noqa: E402


def best_of(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def weights_module(mb: float) -> str:
    """@main(x) = x + W0 + W1 + ... with 1M-element f32 weights (4 MB each); the weights are
    filled in after parsing (the text holds splats, so building it is cheap)."""
    n = max(1, int(round(mb / 4)))
    t = "tensor<1024x1024xf32>"
    lines = [f"func.func @main(%x: {t}) -> {t} {{"]
    prev = "%x"
    for i in range(n):
        lines.append(f"  %w{i} = stablehlo.constant dense<0.0> : {t}")
        lines.append(f"  %s{i} = stablehlo.add {prev}, %w{i} : {t}")
        prev = f"%s{i}"
    lines.append(f"  return {prev} : {t}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def fill_weights(module) -> int:
    from shlo.attributes import DenseElementsAttr

    rng = np.random.default_rng(0)
    total = 0
    for op in module.walk():
        if op.name == "stablehlo.constant":
            a = op.properties.get("value") or op.attributes.get("value")
            arr = rng.standard_normal(a.type.shape, dtype=np.float32)
            new = DenseElementsAttr(a.type, arr)
            if "value" in op.properties:
                op.properties["value"] = new
            else:
                op.attributes["value"] = new
            total += arr.nbytes
    return total


def jaxlib_deserializer():
    try:
        from jaxlib.mlir import ir
        from jaxlib.mlir._mlir_libs import _jax_mlir_ext
        from jaxlib.mlir.dialects import stablehlo
    except ImportError:
        return None, None
    ctx = ir.Context()
    reg = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(reg)
    ctx.append_dialect_registry(reg)
    ctx.load_all_available_dialects()
    stablehlo.register_dialect(ctx)

    def read(data: bytes) -> None:
        with ctx:
            stablehlo.deserialize_portable_artifact(ctx, data)

    return read, stablehlo.get_current_version()


def report(what: str, size: float, unit: str, t: float) -> None:
    print(f"  {what}: {t:.3f} s = {size / t:,.1f} {unit}/s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--mb", type=float, default=100.0, help="megabytes of weights")
    ap.add_argument("--ops", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-text", action="store_true", help="skip the text parser comparison")
    ap.add_argument("--gc-off", action="store_true", help="gc.disable() for the whole run")
    args = ap.parse_args()
    if args.gc_off:
        gc.disable()
    jax_read, jax_version = jaxlib_deserializer()
    target = jax_version or "current"  # an artifact jaxlib can read too

    # --- weights --------------------------------------------------------------------------
    m = shlo.parse(weights_module(args.mb))
    nbytes = fill_weights(m)
    data = serialize(m, target)
    mb = len(data) / 1e6
    print(f"weights: {nbytes / 1e6:.0f} MB of f32 weights, artifact {mb:.1f} MB "
          f"(StableHLO {target})")
    report("shlo write", mb, "MB", best_of(lambda: serialize(m, target), args.repeat))
    report("shlo read", mb, "MB", best_of(lambda: deserialize(data), args.repeat))
    if jax_read:
        report("jaxlib deserialize_portable_artifact", mb, "MB",
               best_of(lambda: jax_read(data), args.repeat))
    if not args.no_text:
        text = format_module(m)
        tmb = len(text) / 1e6
        print(f"  (the same program as text: {tmb:.1f} MB)")
        report("shlo text parse", tmb, "MB", best_of(lambda: shlo.parse(text), 1))
        del text
    del m, data
    gc.collect()

    # --- many ops -------------------------------------------------------------------------
    text = op_dense_module(args.ops)
    m = shlo.parse(text)
    n = sum(1 for _ in m.walk())
    data = serialize(m, target)
    print(f"op-dense: {n:,} ops, artifact {len(data) / 1e6:.1f} MB, text {len(text) / 1e6:.1f} MB")
    report("shlo write", n, "ops", best_of(lambda: serialize(m, target), args.repeat))
    report("shlo read", n, "ops", best_of(lambda: deserialize(data), args.repeat))
    if jax_read:
        report("jaxlib deserialize_portable_artifact", n, "ops",
               best_of(lambda: jax_read(data), args.repeat))
    if not args.no_text:
        report("shlo text parse", n, "ops", best_of(lambda: shlo.parse(text), args.repeat))


if __name__ == "__main__":
    main()
