"""The small upstream passes: stablehlo-canonicalize-dynamism, shape-legalize-to-stablehlo,
stablehlo-check-shape-assertions, stablehlo-convert-to-signless,
stablehlo-legalize-deprecated-ops, stablehlo-wrap-in-composite,
stablehlo-legalize-composite-to-call, interpreter-instrument-with-probe. Each rewrite of a
runnable program is checked to give the same results before and after."""

from __future__ import annotations

import numpy as np
import pytest

import shlo
from shlo.passes import PassError, run_passes


def ops(module: shlo.Module) -> list[str]:
    return [op.name for op in module.walk()
            if op.name not in ("builtin.module", "func.func", "func.return")]


def same_results(before: shlo.Module, after: shlo.Module, *args: np.ndarray) -> None:
    after = shlo.parse(shlo.format(after))  # what the pass printed must read back
    for x, y in zip(shlo.run(before, *args), shlo.run(after, *args), strict=True):
        np.testing.assert_array_equal(x, y)


# --- stablehlo-canonicalize-dynamism --------------------------------------------------------------


def test_real_dynamic_slice_to_dynamic_slice():
    m = shlo.parse("""func.func @main(%x: tensor<6xf32>, %s: tensor<1xi64>) -> tensor<?xf32> {
      %c = stablehlo.constant dense<2> : tensor<1xi64>
      %one = stablehlo.constant dense<1> : tensor<1xi64>
      %l = stablehlo.add %s, %c : tensor<1xi64>
      %0 = stablehlo.real_dynamic_slice %x, %s, %l, %one : (tensor<6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf32>
      return %0 : tensor<?xf32>
    }""")
    out = run_passes(m, "stablehlo-canonicalize-dynamism")
    assert "stablehlo.dynamic_slice" in ops(out) and "stablehlo.real_dynamic_slice" not in ops(out)
    text = shlo.format(out)
    assert "stablehlo.dynamic_slice %arg0, %1, sizes = [2] : (tensor<6xf32>, tensor<i64>) -> tensor<?xf32>" in text
    x = np.arange(6, dtype=np.float32)
    for start in (0, 3):
        s = np.array([start], np.int64)
        np.testing.assert_array_equal(shlo.run(out, x, s)[0], x[start:start + 2])
        same_results(m, out, x, s)


def test_custom_call_drops_shape_operands_and_their_layouts():
    m = shlo.parse("""func.func @main(%x: tensor<4x3xf32>) -> tensor<1x2xf32> {
      %c = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
      %0 = stablehlo.custom_call @foo(%c, %x) {indices_of_shape_operands = dense<[0]> : tensor<1xi64>,
        operand_layouts = [dense<[0]> : tensor<1xindex>, dense<[1, 0]> : tensor<2xindex>],
        result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<2xi64>, tensor<4x3xf32>) -> tensor<1x2xf32>
      return %0 : tensor<1x2xf32>
    }""")
    (cc,) = [op for op in run_passes(m, "stablehlo-canonicalize-dynamism").walk()
             if op.name == "stablehlo.custom_call"]
    assert len(cc.operands) == 1 and cc.attr("indices_of_shape_operands") is None
    assert [list(x.array) for x in cc.attr("operand_layouts").values] == [[1, 0]]


def test_custom_call_incompatible_refinement_is_an_error():
    m = shlo.parse("""func.func @main(%x: tensor<4xf32>) -> tensor<1x2xf32> {
      %c = stablehlo.constant dense<[1, 1]> : tensor<2xi64>
      %0 = stablehlo.custom_call @foo(%x, %c) {indices_of_shape_operands = dense<[1]> : tensor<1xi64>} : (tensor<4xf32>, tensor<2xi64>) -> tensor<1x2xf32>
      return %0 : tensor<1x2xf32>
    }""")
    with pytest.raises(PassError, match=r"refinement #0 \(\[1, 1\]\) must be compatible"):
        run_passes(m, "stablehlo-canonicalize-dynamism")


def test_dynamic_gather_and_conv_run_the_same():
    m = shlo.parse("""func.func @main(%x: tensor<2x4x9xi32>, %i: tensor<1x5x2xi32>) -> tensor<1x5x8xi32> {
      %c = stablehlo.constant dense<[1, 1, 8]> : tensor<3xi32>
      %0 = "stablehlo.dynamic_gather"(%x, %i, %c) {dimension_numbers = #stablehlo.gather<
        collapsed_slice_dims = [0, 1], index_vector_dim = 2, offset_dims = [2], start_index_map = [0, 1]>}
        : (tensor<2x4x9xi32>, tensor<1x5x2xi32>, tensor<3xi32>) -> tensor<1x5x8xi32>
      return %0 : tensor<1x5x8xi32>
    }""")
    out = run_passes(m, "stablehlo-canonicalize-dynamism")
    assert ops(out) == ["stablehlo.gather"]
    x = np.arange(72, dtype=np.int32).reshape(2, 4, 9)
    i = np.array([[[0, 0], [1, 2], [0, 3], [1, 1], [1, 0]]], np.int32)
    same_results(m, out, x, i)
