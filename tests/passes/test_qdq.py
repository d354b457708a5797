"""stablehlo-legalize-quantized-op-to-qdq and stablehlo-legalize-qdq-to-quantized-op: structure
(upstream's matching conditions), meaning (same results), and the round trip on the corpus."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import shlo
from shlo.passes import run_passes

CONFORMANCE = Path(__file__).resolve().parents[2] / ".." / "shared" / "conformance"
Q = "!quant.uniform<i8:f32, 0.1:-2>"
U = "!quant.uniform<u8:f32, 34.0:16>"


def ops(module: shlo.Module) -> list[str]:
    return [op.name for op in module.walk()
            if op.name not in ("builtin.module", "func.func", "func.return")]


def test_to_qdq_decomposes_doq_ops_and_keeps_data_movement():
    module = shlo.parse(f"""func.func @main(%a: tensor<2x3x{Q}>, %b: tensor<2x3x{Q}>, %p: tensor<2x3xi1>)
        -> (tensor<3x2x{Q}>, tensor<2x3xi1>, tensor<2x3x{Q}>) {{
      %0 = stablehlo.add %a, %b : tensor<2x3x{Q}>
      %1 = stablehlo.transpose %0, dims = [1, 0] : (tensor<2x3x{Q}>) -> tensor<3x2x{Q}>
      %2 = stablehlo.compare GT, %a, %b : (tensor<2x3x{Q}>, tensor<2x3x{Q}>) -> tensor<2x3xi1>
      %3 = stablehlo.select %p, %a, %b : tensor<2x3xi1>, tensor<2x3x{Q}>
      %4 = stablehlo.abs %a : tensor<2x3x{Q}>
      return %1, %2, %3 : tensor<3x2x{Q}>, tensor<2x3xi1>, tensor<2x3x{Q}>
    }}""")
    out = run_passes(module, ["stablehlo-legalize-quantized-op-to-qdq"])
    assert ops(out) == [
        "stablehlo.uniform_dequantize", "stablehlo.uniform_dequantize", "stablehlo.add",
        "stablehlo.uniform_quantize", "stablehlo.transpose",
        "stablehlo.uniform_dequantize", "stablehlo.uniform_dequantize", "stablehlo.compare",
        "stablehlo.uniform_dequantize", "stablehlo.uniform_dequantize", "stablehlo.select",
        "stablehlo.uniform_quantize"]  # the unused abs is removed, as upstream
    rng = np.random.default_rng(0)
    args = [rng.integers(-128, 128, (2, 3)).astype(np.int8) for _ in range(2)] + \
        [rng.integers(0, 2, (2, 3)).astype(bool)]
    for x, y in zip(shlo.run(module, *args), shlo.run(out, *args)):
        np.testing.assert_array_equal(x, y)


def test_to_qdq_rewrites_region_bodies():
    module = shlo.parse(f"""func.func @main(%x: tensor<4x{Q}>, %i: tensor<{Q}>) -> tensor<{Q}> {{
      %r = stablehlo.reduce(%x init: %i) applies stablehlo.add across dimensions = [0] : (tensor<4x{Q}>, tensor<{Q}>) -> tensor<{Q}>
      return %r : tensor<{Q}>
    }}""")
    out = run_passes(module, ["stablehlo-legalize-quantized-op-to-qdq"])
    assert ops(out) == ["stablehlo.reduce", "stablehlo.uniform_dequantize",
                        "stablehlo.uniform_dequantize", "stablehlo.add",
                        "stablehlo.uniform_quantize", "stablehlo.return"]


def test_fusion_of_dequantize_op_quantize():
    module = shlo.parse(f"""func.func @main(%x: tensor<4x{U}>) -> tensor<4x{U}> {{
      %0 = stablehlo.uniform_dequantize %x : (tensor<4x{U}>) -> tensor<4xf32>
      %1 = stablehlo.abs %0 : tensor<4xf32>
      %2 = stablehlo.uniform_quantize %1 : (tensor<4xf32>) -> tensor<4x{U}>
      return %2 : tensor<4x{U}>
    }}""")
    out = run_passes(module, ["stablehlo-legalize-qdq-to-quantized-op"])
    assert ops(out) == ["stablehlo.abs"]
    fused = out.function("main").regions[0].blocks[0].operations[0]
    assert fused.operands[0] is out.function("main").regions[0].blocks[0].arguments[0]
    assert fused.results[0].type == module.function("main").regions[0].blocks[0].arguments[0].type


@pytest.mark.parametrize("body", [
    # the quantize's operand is a block argument
    "%r = stablehlo.uniform_quantize %f : (tensor<4xf32>) -> tensor<4x{U}>",
    # the compute op has a region
    """%d = stablehlo.uniform_dequantize %x : (tensor<4x{U}>) -> tensor<4xf32>
       %c = stablehlo.constant dense<0.0> : tensor<f32>
       %m = stablehlo.reduce(%d init: %c) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
       %b = stablehlo.broadcast_in_dim %m, dims = [] : (tensor<f32>) -> tensor<4xf32>
       %r = stablehlo.uniform_quantize %b : (tensor<4xf32>) -> tensor<4x{U}>""",
    # an operand of the compute op is a block argument
    """%d = stablehlo.uniform_dequantize %x : (tensor<4x{U}>) -> tensor<4xf32>
       %a = stablehlo.add %f, %d : tensor<4xf32>
       %r = stablehlo.uniform_quantize %a : (tensor<4xf32>) -> tensor<4x{U}>""",
    # an operand of the compute op does not come from uniform_dequantize
    """%n = stablehlo.negate %f : tensor<4xf32>
       %d = stablehlo.uniform_dequantize %x : (tensor<4x{U}>) -> tensor<4xf32>
       %a = stablehlo.add %n, %d : tensor<4xf32>
       %r = stablehlo.uniform_quantize %a : (tensor<4xf32>) -> tensor<4x{U}>""",
    # the compute op has no operands
    """%c = stablehlo.constant dense<1.0> : tensor<4xf32>
       %r = stablehlo.uniform_quantize %c : (tensor<4xf32>) -> tensor<4x{U}>""",
])
def test_no_fusion_when_upstream_conditions_fail(body):
    text = (f"func.func @main(%x: tensor<4x{U}>, %f: tensor<4xf32>) -> tensor<4x{U}> {{\n"
            + body.replace("{U}", U) + f"\n return %r : tensor<4x{U}>\n}}")
    module = shlo.parse(text)
    out = run_passes(module, ["stablehlo-legalize-qdq-to-quantized-op"])
    assert "stablehlo.uniform_quantize" in ops(out)
    x, f = np.arange(4, dtype=np.uint8) * 10, np.linspace(-50, 50, 4).astype(np.float32)
    np.testing.assert_array_equal(shlo.run(module, x, f)[0], shlo.run(out, x, f)[0])


def test_round_trip_gives_back_the_program():
    module = shlo.parse(f"""func.func @main(%a: tensor<3x{Q}>, %b: tensor<3x{Q}>) -> tensor<3x{Q}> {{
      %0 = stablehlo.multiply %a, %b : tensor<3x{Q}>
      %1 = stablehlo.tanh %0 : tensor<3x{Q}>
      return %1 : tensor<3x{Q}>
    }}""")
    back = run_passes(module, ["stablehlo-legalize-quantized-op-to-qdq",
                               "stablehlo-legalize-qdq-to-quantized-op"])
    assert shlo.format(back) == shlo.format(module)


QUANTIZED = sorted((CONFORMANCE / "testdata" / "quantized").glob("*.mlir")) \
    if CONFORMANCE.is_dir() else []


@pytest.mark.skipif(not QUANTIZED, reason="no ../shared/conformance")
def test_round_trip_on_the_quantized_corpus():
    from shlo.syntax.split import split_cases

    n = 0
    for path in QUANTIZED:
        for _, chunk in split_cases(path.read_text()):
            if "!quant" not in chunk:
                continue
            module = shlo.parse(chunk, str(path))
            back = run_passes(module, ["stablehlo-legalize-quantized-op-to-qdq",
                                       "stablehlo-legalize-qdq-to-quantized-op"])
            assert shlo.format(back) == shlo.format(module), path.name
            n += 1
    assert n >= 100
