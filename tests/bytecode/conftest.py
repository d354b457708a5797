"""Shared programs and paths of the bytecode tier (tests/bytecode).

Self-contained tests use the programs below; the corpus tests read ../shared/conformance
(vhlo/ and testdata/) and skip when it is absent.
"""

from pathlib import Path

import pytest

CONFORMANCE = Path(__file__).resolve().parents[3] / "shared" / "conformance"
VHLO_DIR = CONFORMANCE / "vhlo"
TESTDATA = CONFORMANCE / "testdata"

# Programs that exercise the encodings: element types, splat/packed dense data, regions,
# StableHLO attributes of every kind, quantized and bounded types, tokens, tuples.
PROGRAMS = {
    "elementwise": """
func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %c = stablehlo.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %0 = stablehlo.add %a, %b : tensor<2x3xf32>
  %1 = stablehlo.multiply %0, %c : tensor<2x3xf32>
  %2 = stablehlo.exponential %1 {result_accuracy = #stablehlo.result_accuracy<atol = 1.000000e-05, rtol = 0.000000e+00, ulps = 2, mode = #stablehlo.result_accuracy_mode<TOLERANCE>>} : tensor<2x3xf32>
  return %2 : tensor<2x3xf32>
}
""",
    "constants": """
func.func @main() -> (tensor<4xi1>, tensor<3xi1>, tensor<2xbf16>, tensor<2xcomplex<f32>>, tensor<2xf8E4M3FN>, tensor<2xui64>, tensor<3xi4>, tensor<2x2xf64>) {
  %0 = stablehlo.constant dense<[true, false, true, true]> : tensor<4xi1>
  %1 = stablehlo.constant dense<true> : tensor<3xi1>
  %2 = stablehlo.constant dense<[1.5, -2.0]> : tensor<2xbf16>
  %3 = stablehlo.constant dense<[(1.0, 2.0), (3.0, -4.0)]> : tensor<2xcomplex<f32>>
  %4 = stablehlo.constant dense<[0.5, 448.0]> : tensor<2xf8E4M3FN>
  %5 = stablehlo.constant dense<[0, 18446744073709551615]> : tensor<2xui64>
  %6 = stablehlo.constant dense<[-8, 0, 7]> : tensor<3xi4>
  %7 = stablehlo.constant dense<0x7FF8000000000000> : tensor<2x2xf64>
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<4xi1>, tensor<3xi1>, tensor<2xbf16>, tensor<2xcomplex<f32>>, tensor<2xf8E4M3FN>, tensor<2xui64>, tensor<3xi4>, tensor<2x2xf64>
}
""",
    "regions": """
func.func @main(%x: tensor<4xf32>, %n: tensor<i64>) -> (tensor<f32>, tensor<i64>) {
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%x init: %init) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  %zero = stablehlo.constant dense<0> : tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %r = stablehlo.while(%i = %zero) : tensor<i64>
   cond {
    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %next = stablehlo.add %i, %one : tensor<i64>
    stablehlo.return %next : tensor<i64>
  }
  return %s, %r : tensor<f32>, tensor<i64>
}
""",
    "attributes": """
func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>, %idx: tensor<2x1xi64>, %img: tensor<1x8x8x1xf32>, %k: tensor<3x3x1x2xf32>) -> (tensor<2x3x5xf32>, tensor<2x3x4xf32>, tensor<1x3x3x2xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [HIGH, HIGHEST] : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  %1 = "stablehlo.gather"(%a, %idx) {dimension_numbers = #stablehlo.gather<offset_dims = [1, 2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 3, 4>, indices_are_sorted = false} : (tensor<2x3x4xf32>, tensor<2x1xi64>) -> tensor<2x3x4xf32>
  %2 = stablehlo.convolution(%img, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x1xf32>, tensor<3x3x1x2xf32>) -> tensor<1x3x3x2xf32>
  %3 = "stablehlo.all_reduce"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>, replica_groups = dense<[[0]]> : tensor<1x1xi64>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %4 = stablehlo.custom_call @foo(%a) {backend_config = "cfg", output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 0, operand_tuple_indices = []>]} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %0, %1, %2, %3, %4 : tensor<2x3x5xf32>, tensor<2x3x4xf32>, tensor<1x3x3x2xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>
}
""",
    "types": """
func.func @main(%t: !stablehlo.token, %d: tensor<?xf32, #stablehlo.bounds<4>>, %q: tensor<4x!quant.uniform<i8:f32, 2.000000e-01:3>>) -> (!stablehlo.token, tensor<?xf32, #stablehlo.bounds<4>>, tuple<tensor<4x!quant.uniform<i8:f32, 2.000000e-01:3>>, !stablehlo.token>) {
  %0 = stablehlo.after_all %t : !stablehlo.token
  %1 = stablehlo.abs %d : tensor<?xf32, #stablehlo.bounds<4>>
  %2 = stablehlo.tuple %q, %0 : tuple<tensor<4x!quant.uniform<i8:f32, 2.000000e-01:3>>, !stablehlo.token>
  return %0, %1, %2 : !stablehlo.token, tensor<?xf32, #stablehlo.bounds<4>>, tuple<tensor<4x!quant.uniform<i8:f32, 2.000000e-01:3>>, !stablehlo.token>
}
""",
}


@pytest.fixture(scope="session")
def programs():
    import shlo

    return {name: shlo.parse(text) for name, text in PROGRAMS.items()}


needs_shared = pytest.mark.skipif(not VHLO_DIR.is_dir(), reason="no ../shared/conformance/vhlo")
