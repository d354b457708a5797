"""Derive examples/mlp_int8.mlir from examples/mlp.mlir: the MLP with both matmuls in int8.

Post-training quantization as a user would do it, with shlo itself: trace the float model on
the bundled input (calibration; ``values=True`` keeps each op's operands), and rewrite each
f32 `dot_general` as `uniform_quantize` of both operands (i8, symmetric, per-tensor scale
max|v| / 127 of the calibration values), an i8 x i8 -> i32 quantized `dot_general` (scale
s_lhs * s_rhs) and a `uniform_dequantize` back to f32. Everything else stays f32. Then

    shlo diff examples/mlp_int8.mlir examples/mlp.mlir examples/mlp_input.npy --rtol 0.1

prints the per-op SQNR table (docs/debugging.md, "Float vs quantized").
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

import shlo
from shlo.debug import trace

HERE = Path(__file__).parent
DOT = re.compile(r"^(\s*)(%\w+) = stablehlo\.dot_general (%\w+), (%\w+), (.*) : "
                 r"\((tensor<(\w+)xf32>), (tensor<(\w+)xf32>)\) -> tensor<(\w+)xf32>$")


def quantize_dots(text: str, x: np.ndarray) -> str:
    """``text`` with each f32 dot_general rewritten in int8, scales calibrated on ``x``."""
    calibration = {e.op.location.line: e.operands
                   for e in trace(shlo.parse(text, "mlp.mlir"), x, values=True).find("dot_general")}
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        m = DOT.match(line)
        if not m:
            out.append(line)
            continue
        ind, res, lhs, rhs, attrs, lt, ls, rt, rs, os_ = m.groups()
        sl, sr = (float(np.max(np.abs(v))) / 127.0 for v in calibration[number])
        ql = f"tensor<{ls}x!quant.uniform<i8:f32, {sl:.9e}>>"
        qr = f"tensor<{rs}x!quant.uniform<i8:f32, {sr:.9e}>>"
        qo = f"tensor<{os_}x!quant.uniform<i32:f32, {sl * sr:.9e}>>"
        q = f"%q{res[1:]}"
        out += [f"{ind}{q}_lhs = stablehlo.uniform_quantize {lhs} : ({lt}) -> {ql}",
                f"{ind}{q}_rhs = stablehlo.uniform_quantize {rhs} : ({rt}) -> {qr}",
                f"{ind}{q} = stablehlo.dot_general {q}_lhs, {q}_rhs, {attrs} : ({ql}, {qr}) -> {qo}",
                f"{ind}{res} = stablehlo.uniform_dequantize {q} : ({qo}) -> tensor<{os_}xf32>"]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    text = quantize_dots((HERE / "mlp.mlir").read_text(), np.load(HERE / "mlp_input.npy"))
    (HERE / "mlp_int8.mlir").write_text(text)
