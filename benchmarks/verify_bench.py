"""Verification-speed benchmark (a script, not a test): verifying a module must take less time
than parsing it.

Measures, on generated modules of N ops (default 100,000):
* the op-dense module of ``parse_bench.py`` (element-wise ops, broadcasts, compare/select,
  converts: what JAX emits);
* a mixed module exercising the heavier verifiers (dot_general, transpose, reshape, reduce with
  a region, slice, concatenate, gather, pad, dynamic_slice);
and prints parse time, verify time and their ratio. When jaxlib is installed it also times the
upstream MLIR parser+verifier on the same text.

Run: ``python benchmarks/verify_bench.py [--ops N] [--repeat R]``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import shlo  # noqa: E402
from shlo.verifier import collect  # noqa: E402

from parse_bench import best_of, op_dense_module, upstream_parser  # noqa: E402

_MIXED = [
    "    %t{i} = stablehlo.transpose {x}, dims = [1, 0] : (tensor<16x16xf32>) -> tensor<16x16xf32>",
    "    %d{i} = stablehlo.dot_general %t{i}, {x}, contracting_dims = [1] x [0] : "
    "(tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>",
    "    %r{i} = stablehlo.reshape %d{i} : (tensor<16x16xf32>) -> tensor<256xf32>",
    "    %s{i} = stablehlo.slice %r{i} [0:128] : (tensor<256xf32>) -> tensor<128xf32>",
    "    %c{i} = stablehlo.concatenate %s{i}, %s{i}, dim = 0 : "
    "(tensor<128xf32>, tensor<128xf32>) -> tensor<256xf32>",
    "    %e{i} = stablehlo.reshape %c{i} : (tensor<256xf32>) -> tensor<16x16xf32>",
    "    %g{i} = \"stablehlo.gather\"(%e{i}, %idx) {dimension_numbers = #stablehlo.gather<"
    "offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, "
    "slice_sizes = array<i64: 1, 16>} : (tensor<16x16xf32>, tensor<4x1xi32>) -> tensor<4x16xf32>",
    "    %p{i} = stablehlo.pad %g{i}, %zero, low = [6, 0], high = [6, 0], interior = [0, 0] : "
    "(tensor<4x16xf32>, tensor<f32>) -> tensor<16x16xf32>",
    "    %y{i} = stablehlo.dynamic_slice %p{i}, %i0, %i0, sizes = [16, 16] : "
    "(tensor<16x16xf32>, tensor<i32>, tensor<i32>) -> tensor<16x16xf32>",
    "    %u{i} = stablehlo.reduce(%y{i} init: %zero) applies stablehlo.add across dimensions = [1]"
    " : (tensor<16x16xf32>, tensor<f32>) -> tensor<16xf32>",
    "    %b{i} = stablehlo.broadcast_in_dim %u{i}, dims = [0] : (tensor<16xf32>) -> "
    "tensor<16x16xf32>",
    "    %n{i} = stablehlo.add %b{i}, {x} : tensor<16x16xf32>",
]


def mixed_module(n_ops: int) -> str:
    """A module of about ``n_ops`` ops (counting the ops inside reduce regions)."""
    lines = ["func.func @main(%arg0: tensor<16x16xf32>, %idx: tensor<4x1xi32>, %i0: tensor<i32>)"
             " -> tensor<16x16xf32> {",
             "    %zero = stablehlo.constant dense<0.0> : tensor<f32>"]
    x = "%arg0"
    i = 0
    per = len(_MIXED) + 2  # the reduce body holds add + return
    while (i + 1) * per < n_ops:
        lines += [t.replace("{i}", str(i)).replace("{x}", x) for t in _MIXED]
        x = f"%n{i}"
        i += 1
    lines.append(f"    func.return {x} : tensor<16x16xf32>")
    lines.append("}")
    return "\n".join(lines) + "\n"


def count_ops(module: shlo.Module) -> int:
    return sum(1 for _ in module.walk()) - 1


def bench(name: str, text: str, repeat: int, upstream) -> None:
    t_parse = best_of(lambda: shlo.parse(text, "<bench>"), repeat)
    module = shlo.parse(text, "<bench>")
    n = count_ops(module)
    assert collect(module) == [], collect(module)[:3]
    t_verify = best_of(lambda: collect(module), repeat)
    print(f"{name}: {n:,} ops, {len(text) / 1e6:.1f} MB")
    print(f"  parse  {t_parse:6.2f} s = {n / t_parse:10,.0f} ops/s")
    print(f"  verify {t_verify:6.2f} s = {n / t_verify:10,.0f} ops/s   "
          f"(verify/parse time ratio {t_verify / t_parse:.2f})")
    if upstream:
        tu = best_of(lambda: upstream(text), repeat)
        print(f"  upstream parse+verify {tu:.2f} s = {n / tu:,.0f} ops/s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--ops", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    upstream = upstream_parser()
    bench("op-dense (parse_bench)", op_dense_module(args.ops), args.repeat, upstream)
    bench("mixed", mixed_module(args.ops), args.repeat, upstream)


if __name__ == "__main__":
    main()
