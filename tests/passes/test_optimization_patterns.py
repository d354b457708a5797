"""A few patterns of each optimization pass, with hand-checked results (beyond upstream's
FileCheck tests, which tests/passes/test_upstream_passes.py runs)."""

from __future__ import annotations

import numpy as np
import pytest

import shlo
from shlo.passes import PASSES, PassError, describe, run_passes


def body(module, name="main") -> list[str]:
    text = shlo.format(module)
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if f"@{name}(" in line)
    out = []
    for line in lines[start + 1:]:
        if line.strip() == "}":
            break
        out.append(line.strip())
    return out


def opt(src: str, *passes: str):
    return run_passes(shlo.parse(src), list(passes))


FOLD = "stablehlo-aggressive-folder"
SIMP = "stablehlo-aggressive-simplification"


def test_passes_are_registered_with_upstream_options():
    text = describe()
    assert {o.name for o in PASSES[FOLD].options} == {
        "assume-no-undeclared-side-effects", "fold-op-element-limit", "optimize-float"}
    assert [o.name for o in PASSES[SIMP].options] == ["fold-op-element-limit"]
    assert "stablehlo-target-independent-optimization: Runs canonicalizers, folders" in text
    with pytest.raises(PassError, match="has no option 'optimize-float'"):
        run_passes(shlo.parse("func.func @main() { return }"), [f"{SIMP}{{optimize-float=1}}"])


def test_fold_integer_arithmetic_wraps_like_the_kernel():
    out = opt("""func.func @main() -> (tensor<2xi8>, tensor<2xui8>) {
      %a = stablehlo.constant dense<[100, -128]> : tensor<2xi8>
      %b = stablehlo.constant dense<[100, -1]> : tensor<2xi8>
      %0 = stablehlo.add %a, %b : tensor<2xi8>
      %u = stablehlo.constant dense<[7, 200]> : tensor<2xui8>
      %v = stablehlo.constant dense<[2, 3]> : tensor<2xui8>
      %1 = stablehlo.remainder %u, %v : tensor<2xui8>
      return %0, %1 : tensor<2xi8>, tensor<2xui8>
    }""", FOLD)
    # 100 + 100 = 200 = -56 (mod 256); -128 + -1 = 127; 7 % 2 = 1; 200 % 3 = 2
    assert body(out) == [
        "%c = stablehlo.constant dense<[-56, 127]> : tensor<2xi8>",
        "%c_0 = stablehlo.constant dense<[1, 2]> : tensor<2xui8>",
        "return %c, %c_0 : tensor<2xi8>, tensor<2xui8>"]


def test_fold_respects_optimize_float_and_the_element_limit():
    src = """func.func @main() -> (tensor<f32>, tensor<4xi32>) {
      %a = stablehlo.constant dense<1.5> : tensor<f32>
      %0 = stablehlo.add %a, %a : tensor<f32>
      %c = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
      %1 = stablehlo.concatenate %c, %c, dim = 0 : (tensor<2xi32>, tensor<2xi32>) -> tensor<4xi32>
      return %0, %1 : tensor<f32>, tensor<4xi32>
    }"""
    out = opt(src, f"{FOLD}{{optimize-float=false fold-op-element-limit=3}}")
    assert "stablehlo.add" in shlo.format(out)  # float not folded
    assert "stablehlo.concatenate" in shlo.format(out)  # 4 elements > 3
    out = opt(src, FOLD)
    assert body(out)[:2] == ["%cst = stablehlo.constant dense<3.000000e+00> : tensor<f32>",
                             "%c = stablehlo.constant dense<[1, 2, 1, 2]> : tensor<4xi32>"]


def test_math_folds_round_from_double_and_refuse_out_of_domain():
    out = opt("""func.func @main() -> (tensor<2xf16>, tensor<f32>) {
      %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf16>
      %0 = stablehlo.exponential %a : tensor<2xf16>
      %z = stablehlo.constant dense<0.0> : tensor<f32>
      %1 = stablehlo.log %z : tensor<f32>
      return %0, %1 : tensor<2xf16>, tensor<f32>
    }""", FOLD)
    text = shlo.format(out)
    assert "stablehlo.log" in text and "stablehlo.exponential" not in text
    value = out.function("main").regions[0].blocks[0].operations
    folded = [op for op in value if op.name == "stablehlo.constant"
              and op.results[0].type.element_type.name == "f16"][0]
    np.testing.assert_array_equal(folded.attr("value").array,
                                  np.exp(np.array([1.0, 2.0])).astype(np.float16))


def test_convert_fold_refuses_what_does_not_fit():
    out = opt("""func.func @main() -> (tensor<2xi8>, tensor<2xi8>) {
      %a = stablehlo.constant dense<[1.9, -2.9]> : tensor<2xf32>
      %0 = stablehlo.convert %a : (tensor<2xf32>) -> tensor<2xi8>
      %b = stablehlo.constant dense<[1.0, 300.0]> : tensor<2xf32>
      %1 = stablehlo.convert %b : (tensor<2xf32>) -> tensor<2xi8>
      return %0, %1 : tensor<2xi8>, tensor<2xi8>
    }""", FOLD)
    lines = body(out)
    assert "%c = stablehlo.constant dense<[1, -2]> : tensor<2xi8>" in lines  # truncation
    assert any(line.startswith("%0 = stablehlo.convert") for line in lines)  # 300: no fold


def test_simplify_commutes_constants_and_removes_identities():
    out = opt("""func.func @main(%a: tensor<3xi32>) -> (tensor<3xi32>, tensor<3xi32>) {
      %one = stablehlo.constant dense<1> : tensor<3xi32>
      %two = stablehlo.constant dense<2> : tensor<3xi32>
      %0 = stablehlo.multiply %one, %a : tensor<3xi32>
      %1 = stablehlo.multiply %two, %0 : tensor<3xi32>
      return %0, %1 : tensor<3xi32>, tensor<3xi32>
    }""", SIMP)
    assert body(out) == ["%c = stablehlo.constant dense<2> : tensor<3xi32>",
                         "%0 = stablehlo.multiply %arg0, %c : tensor<3xi32>",
                         "return %arg0, %0 : tensor<3xi32>, tensor<3xi32>"]


def test_simplify_merges_transposes_and_broadcasts():
    out = opt("""func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<3xf32>) -> (tensor<4x2x3xf32>, tensor<5x3x2xf32>) {
      %0 = stablehlo.transpose %a, dims = [1, 0, 2] : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
      %1 = stablehlo.transpose %0, dims = [2, 1, 0] : (tensor<3x2x4xf32>) -> tensor<4x2x3xf32>
      %2 = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<3xf32>) -> tensor<5x3xf32>
      %3 = stablehlo.broadcast_in_dim %2, dims = [0, 1] : (tensor<5x3xf32>) -> tensor<5x3x2xf32>
      return %1, %3 : tensor<4x2x3xf32>, tensor<5x3x2xf32>
    }""", SIMP)
    # [1, 0, 2] then [2, 1, 0]: result dim j reads input dim child[parent[j]] = [2, 0, 1]
    lines = body(out)
    assert "%0 = stablehlo.transpose %arg0, dims = [2, 0, 1] : (tensor<2x3x4xf32>) -> " \
           "tensor<4x2x3xf32>" in lines
    assert "%1 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<3xf32>) -> " \
           "tensor<5x3x2xf32>" in lines
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    b = np.array([1, 2, 3], np.float32)
    m = shlo.parse(shlo.format(out))
    np.testing.assert_array_equal(shlo.run(m, a, b)[0], np.transpose(a, (2, 0, 1)))


def test_simplify_drops_unused_reduce_results_and_while_invariants():
    src = """func.func @main(%x: tensor<4xi32>, %y: tensor<4xi32>) -> (tensor<i32>, tensor<i32>) {
      %z = stablehlo.constant dense<0> : tensor<i32>
      %r:2 = stablehlo.reduce(%x init: %z), (%y init: %z) across dimensions = [0] :
        (tensor<4xi32>, tensor<4xi32>, tensor<i32>, tensor<i32>) -> (tensor<i32>, tensor<i32>)
        reducer(%a: tensor<i32>, %c: tensor<i32>) (%b: tensor<i32>, %d: tensor<i32>) {
        %s = stablehlo.add %a, %c : tensor<i32>
        %m = stablehlo.maximum %b, %d : tensor<i32>
        stablehlo.return %s, %m : tensor<i32>, tensor<i32>
      }
      %ten = stablehlo.constant dense<10> : tensor<i32>
      %w:2 = stablehlo.while(%i = %z, %k = %ten) : tensor<i32>, tensor<i32>
      cond {
        %lt = stablehlo.compare LT, %i, %k, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
        stablehlo.return %lt : tensor<i1>
      } do {
        %one = stablehlo.constant dense<1> : tensor<i32>
        %n = stablehlo.add %i, %one : tensor<i32>
        stablehlo.return %n, %k : tensor<i32>, tensor<i32>
      }
      return %r#0, %w#0 : tensor<i32>, tensor<i32>
    }"""
    m = shlo.parse(src)
    out = run_passes(m, [SIMP])
    text = shlo.format(out)
    # constants hoisted to the entry, each moved to the front when met: [1, 10, 0]
    assert body(out)[:3] == ["%c = stablehlo.constant dense<1> : tensor<i32>",
                             "%c_0 = stablehlo.constant dense<10> : tensor<i32>",
                             "%c_1 = stablehlo.constant dense<0> : tensor<i32>"]
    assert "stablehlo.reduce(%arg0 init: %c_1) applies stablehlo.add across dimensions = [0]" \
        in text
    assert "stablehlo.maximum" not in text
    assert "stablehlo.while(%iterArg = %c_1) : tensor<i32>" in text  # %k is now a capture
    assert "stablehlo.compare LT, %iterArg, %c_0, SIGNED" in text
    x = np.array([1, 2, 3, 4], np.int32)
    got = shlo.run(shlo.parse(text), x, x)
    assert [int(v) for v in got] == [10, 10]
