"""The pass registry and the guide's pipeline passes: chlo-legalize-to-stablehlo, canonicalize,
shape-legalize-to-stablehlo (tests/passes/test_small_passes.py) and stablehlo-canonicalize-dynamism; `shlo opt`."""

from __future__ import annotations

import numpy as np
import pytest

import shlo
from shlo.cli import main as cli_main
from shlo.passes import PASSES, PassError, describe, parse_pipeline, run_passes


def names(module: shlo.Module) -> list[str]:
    return [op.name for op in module.walk()
            if op.name not in ("builtin.module", "func.func", "func.return")]


def test_registry_has_the_upstream_names():
    run_passes(shlo.parse("func.func @f() { return }"), [])  # loads the pass modules
    for name in ("stablehlo-legalize-quant-to-math", "stablehlo-legalize-qdq-to-quantized-op",
                 "stablehlo-legalize-quantized-op-to-qdq",
                 "stablehlo-quant-legalize-to-tosa-rescale", "tosa-rescale-legalize-to-stablehlo",
                 "chlo-legalize-to-stablehlo", "canonicalize", "shape-legalize-to-stablehlo",
                 "stablehlo-canonicalize-dynamism"):
        assert name in PASSES and PASSES[name].doc
    assert not PASSES["shape-legalize-to-stablehlo"].noop


def test_pipeline_syntax():
    assert parse_pipeline("builtin.module(func.func(a,b{k=v x=\"1 2\"})),c") == [
        ("a", {}), ("b", {"k": "v", "x": "1 2"}), ("c", {})]
    # `key` alone is a true flag, `key=` an empty value (upstream: "No target version specified")
    assert parse_pipeline("p{flag t=}") == [("p", {"flag": "true", "t": ""})]
    with pytest.raises(PassError, match="unknown pass 'nope'"):
        run_passes(shlo.parse("func.func @f() { return }"), "nope")


def test_chlo_legalize_static_and_dynamic():
    text = """func.func @main(%a: tensor<?x3xf32>, %b: tensor<3xf32>, %c: tensor<2x3xi32>) -> (tensor<?x3xf32>, tensor<2x3xi1>) {
      %0 = chlo.broadcast_multiply %a, %b {broadcast_dimensions = array<i64: 1>} : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
      %k = stablehlo.constant dense<1> : tensor<i32>
      %1 = chlo.broadcast_compare %c, %k {comparison_direction = #chlo<comparison_direction GT>} : (tensor<2x3xi32>, tensor<i32>) -> tensor<2x3xi1>
      return %0, %1 : tensor<?x3xf32>, tensor<2x3xi1>
    }"""
    module = shlo.parse(text)
    out = shlo.parse(shlo.format(run_passes(module, ["chlo-legalize-to-stablehlo"])))
    assert not any(n.startswith("chlo.") for n in names(out))
    assert "stablehlo.dynamic_broadcast_in_dim" in names(out)
    a = np.arange(12, dtype=np.float32).reshape(4, 3)
    b = np.array([1, 2, 3], np.float32)
    c = np.array([[0, 1, 2], [3, -1, 1]], np.int32)
    for x, y in zip(shlo.run(module, a, b, c), shlo.run(out, a, b, c)):
        np.testing.assert_array_equal(x, y)


def test_canonicalize_is_mlirs_canonicalizer():
    """As upstream's: dead code goes, equal constants become one, a constant-index case is
    inlined; identity ops stay (StableHLO's convert/reshape have no canonicalization)."""
    module = shlo.parse("""func.func @main(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
      %0 = stablehlo.convert %a : tensor<3xf32>
      %1 = stablehlo.reshape %0 : (tensor<3xf32>) -> tensor<3xf32>
      %2 = stablehlo.exponential %1 : tensor<3xf32>
      %i = stablehlo.constant dense<1> : tensor<i32>
      %j = stablehlo.constant dense<1> : tensor<i32>
      %3 = "stablehlo.case"(%i) ({
        stablehlo.return %a : tensor<3xf32>
      }, {
        %n = stablehlo.negate %1 : tensor<3xf32>
        stablehlo.return %n : tensor<3xf32>
      }) : (tensor<i32>) -> tensor<3xf32>
      %4 = stablehlo.add %3, %b : tensor<3xf32>
      %5 = "stablehlo.case"(%j) ({
        stablehlo.return %a : tensor<3xf32>
      }, {
        stablehlo.return %4 : tensor<3xf32>
      }) : (tensor<i32>) -> tensor<3xf32>
      return %5 : tensor<3xf32>
    }""")
    out = run_passes(module, ["canonicalize"])
    assert names(out) == ["stablehlo.convert", "stablehlo.reshape", "stablehlo.negate",
                          "stablehlo.add"]
    a = np.array([1.0, -2.0, 3.0], np.float32)
    b = np.array([0.5, 0.5, 0.5], np.float32)
    np.testing.assert_array_equal(shlo.run(out, a, b)[0], -a + b)


def test_canonicalize_dynamism():
    module = shlo.parse("""func.func @main(%a: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3x1xf32>, tensor<5xf32>) {
      %s = stablehlo.constant dense<[2, 3]> : tensor<2xi64>
      %0 = stablehlo.dynamic_broadcast_in_dim %a, %s, dims = [1] : (tensor<3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
      %r = stablehlo.constant dense<[3, 1]> : tensor<2xi64>
      %1 = stablehlo.dynamic_reshape %a, %r : (tensor<3xf32>, tensor<2xi64>) -> tensor<3x1xf32>
      %z = stablehlo.constant dense<0.0> : tensor<f32>
      %lo = stablehlo.constant dense<1> : tensor<1xi64>
      %hi = stablehlo.constant dense<1> : tensor<1xi64>
      %in = stablehlo.constant dense<0> : tensor<1xi64>
      %2 = stablehlo.dynamic_pad %a, %z, %lo, %hi, %in : (tensor<3xf32>, tensor<f32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<5xf32>
      return %0, %1, %2 : tensor<2x3xf32>, tensor<3x1xf32>, tensor<5xf32>
    }""")
    out = shlo.parse(shlo.format(run_passes(module, ["stablehlo-canonicalize-dynamism"])))
    assert names(out) == ["stablehlo.constant", "stablehlo.broadcast_in_dim", "stablehlo.reshape",
                          "stablehlo.pad"]  # the driver hoists constants, as upstream's
    a = np.array([1, 2, 3], np.float32)
    for x, y in zip(shlo.run(module, a), shlo.run(out, a)):
        np.testing.assert_array_equal(x, y)


def test_shlo_opt_command(tmp_path, capsys):
    path = tmp_path / "q.mlir"
    path.write_text("""func.func @main(%a: tensor<2x!quant.uniform<i8:f32, 0.5:1>>) -> tensor<2xf32> {
      %0 = stablehlo.uniform_dequantize %a : (tensor<2x!quant.uniform<i8:f32, 0.5:1>>) -> tensor<2xf32>
      return %0 : tensor<2xf32>
    }""")
    assert cli_main(["opt", str(path), "--pass",
                     "stablehlo-legalize-quant-to-math,chlo-legalize-to-stablehlo"]) == 0
    out = capsys.readouterr().out
    assert "!quant" not in out and "chlo." not in out and "tensor<2xi8>" in out
    assert cli_main(["opt", str(path), "--pass", "no-such-pass"]) == 1
    assert "unknown pass" in capsys.readouterr().err
