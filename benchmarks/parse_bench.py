"""Parse-speed benchmark of shlo's syntax layer (a script, not a test).

Measures:
* MB/s parsing the largest constant-heavy file of the official corpus (hex constants);
* ops/s parsing a generated op-dense module of 100,000 ops (pretty form, like JAX emits);
* ops/s printing that module (pretty and generic);
* when jaxlib is installed, the same parses with the upstream MLIR parser
  (``ir.Module.parse``) and the ratio.

Run: ``python benchmarks/parse_bench.py [--ops N] [--repeat R]``.
"""

from __future__ import annotations

import argparse
import gc
import time
from pathlib import Path

import shlo
from shlo.syntax.printer import format_module

CORPUS = Path(__file__).resolve().parents[1] / ".." / "shared" / "conformance" / "testdata"


def op_dense_module(n_ops: int) -> str:
    """A module whose @main holds ``n_ops`` ops in the shapes and spellings JAX prints."""
    lines = ["module @jit_main attributes {mhlo.num_partitions = 1 : i32} {",
             "  func.func public @main(%arg0: tensor<20x20xf32>, %arg1: tensor<20x20xf32>) -> "
             "(tensor<20x20xf32> {jax.result_info = \"\"}) {"]
    prev = "%arg0"
    i = 0
    k = 0
    while k < n_ops - 1:
        r = i % 8
        if r == 0:
            lines.append(f"    %cst_{i} = stablehlo.constant dense<{i % 7}.500000e-01> : "
                         f"tensor<f32>")
            lines.append(f"    %{i} = stablehlo.broadcast_in_dim %cst_{i}, dims = [] : "
                         f"(tensor<f32>) -> tensor<20x20xf32>")
            k += 2
            prev2 = f"%{i}"
        elif r == 1:
            lines.append(f"    %{i} = stablehlo.multiply {prev}, %arg1 : tensor<20x20xf32>")
            k += 1
        elif r == 2:
            lines.append(f"    %{i} = stablehlo.add %{i - 1}, {prev2} : tensor<20x20xf32>")
            k += 1
        elif r == 3:
            lines.append(f"    %{i} = stablehlo.compare  LT, %{i - 1}, %arg0,  FLOAT : "
                         f"(tensor<20x20xf32>, tensor<20x20xf32>) -> tensor<20x20xi1>")
            k += 1
        elif r == 4:
            lines.append(f"    %{i} = stablehlo.select %{i - 1}, %{i - 2}, %arg1 : "
                         f"tensor<20x20xi1>, tensor<20x20xf32>")
            k += 1
        elif r == 5:
            lines.append(f"    %{i} = stablehlo.convert %{i - 1} : "
                         f"(tensor<20x20xf32>) -> tensor<20x20xf64>")
            k += 1
        elif r == 6:
            lines.append(f"    %{i} = stablehlo.convert %{i - 1} : "
                         f"(tensor<20x20xf64>) -> tensor<20x20xf32>")
            k += 1
        else:
            lines.append(f"    %{i} = stablehlo.tanh %{i - 1} : tensor<20x20xf32>")
            prev = f"%{i}"
            k += 1
        i += 1
    lines.append(f"    return {prev} : tensor<20x20xf32>")
    lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def best_of(fn, repeat: int) -> float:
    """Best CPU time (process time, so that other processes on a shared machine count less)."""
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def upstream_parser():
    try:
        from jaxlib.mlir import ir
        from jaxlib.mlir._mlir_libs import _jax_mlir_ext
        from jaxlib.mlir.dialects import chlo, stablehlo
    except ImportError:
        return None
    ctx = ir.Context()
    reg = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(reg)
    ctx.append_dialect_registry(reg)
    ctx.load_all_available_dialects()
    stablehlo.register_dialect(ctx)
    chlo.register_dialect(ctx)
    ctx.allow_unregistered_dialects = True

    def parse(text: str) -> None:
        with ctx:
            ir.Module.parse(text)

    return parse


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--ops", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    upstream = upstream_parser()

    files = sorted(CORPUS.glob("*.mlir"), key=lambda p: p.stat().st_size) if CORPUS.is_dir() \
        else []
    if files:
        big = files[-1]
        text = big.read_text()
        mb = len(text.encode()) / 1e6
        t = best_of(lambda: shlo.parse(text, str(big)), args.repeat)
        print(f"hex constants: {big.name} ({mb:.2f} MB): {t * 1e3:.1f} ms = {mb / t:.0f} MB/s")
        if upstream:
            tu = best_of(lambda: upstream(text), args.repeat)
            print(f"  upstream ir.Module.parse: {tu * 1e3:.1f} ms = {mb / tu:.0f} MB/s "
                  f"(shlo/upstream time ratio {t / tu:.2f})")
    else:
        print("hex constants: corpus not found, skipped")

    text = op_dense_module(args.ops)
    n = text.count(" = stablehlo.") + 1
    t = best_of(lambda: shlo.parse(text, "<bench>"), args.repeat)
    print(f"op-dense: {n} ops, {len(text) / 1e6:.1f} MB: {t:.2f} s = {n / t:,.0f} ops/s")
    if upstream:
        tu = best_of(lambda: upstream(text), args.repeat)
        print(f"  upstream ir.Module.parse: {tu:.2f} s = {n / tu:,.0f} ops/s "
              f"(shlo/upstream time ratio {t / tu:.2f})")
    # the same with JAX debug-info locations (`loc(#locN)` on every op, aliases at the end)
    lines = text.splitlines()
    with_locs = "\n".join(ln + f" loc(#loc{i % 97})" if " = stablehlo." in ln else ln
                          for i, ln in enumerate(lines))
    with_locs += "\n" + "\n".join(f'#loc{i} = loc("model.py":{i}:1)' for i in range(97)) + "\n"
    t = best_of(lambda: shlo.parse(with_locs, "<bench>"), args.repeat)
    print(f"op-dense with loc(#alias) on every op: {n / t:,.0f} ops/s")
    m = shlo.parse(text)
    t = best_of(lambda: format_module(m), args.repeat)
    print(f"print pretty: {n / t:,.0f} ops/s")
    t = best_of(lambda: format_module(m, generic=True), args.repeat)
    print(f"print generic: {n / t:,.0f} ops/s")


if __name__ == "__main__":
    main()
