"""Quantized tensors in and out of :func:`shlo.run`.

``shlo.run`` takes and returns a quantized tensor as the numpy array of its *storage* values
(int8 for ``!quant.uniform<i8:f32, ...>``); its scales and zero points are in its type. This
module turns them into real values and back::

    import shlo, shlo.quantization as q

    module = shlo.load("model.mlir")
    arg_types = q.argument_types(module)          # the entry function's input types
    x = q.quantize(np.array([0.5, 1.0], np.float32), arg_types[0])   # floats -> storage
    (y,) = shlo.run(module, x)                    # storage values in, storage values out
    real = q.dequantize(y, q.result_types(module)[0])                # storage -> floats

``dequantize``/``quantize``/``requantize`` are the spec's functions (per-tensor and per-axis);
they accept a quantized tensor type or a quantized element type. ``set_quantize_order(
"zero-point-first")`` switches every quantization to today's upstream order (add the zero point,
clamp, then round) instead of shlo's default (round, then add the zero point); see
docs/semantics/quantization.md.
"""

from __future__ import annotations

from .ir import Module, function_type
from .ops.quantization import (QUANTIZE_ORDERS, dequantize, quantize, quantize_order,
                                quantized_type, requantize, set_quantize_order)
from .types import Type, is_quantized

__all__ = ["dequantize", "quantize", "requantize", "quantized_type", "is_quantized",
           "argument_types", "result_types", "QUANTIZE_ORDERS", "quantize_order",
           "set_quantize_order"]


def argument_types(module: Module, entry: str = "main") -> list[Type]:
    """The input types of function ``entry`` (quantized ones carry their scales)."""
    return list(function_type(module.function(entry)).inputs)


def result_types(module: Module, entry: str = "main") -> list[Type]:
    """The result types of function ``entry``: pass them to :func:`dequantize`."""
    return list(function_type(module.function(entry)).results)
