"""``stablehlo-legalize-quantized-op-to-qdq`` and ``stablehlo-legalize-qdq-to-quantized-op``
(upstream StablehloLegalizeQuantizedOpToQDQ / StablehloLegalizeQDQToQuantizedOp; the
quantization guide, docs/quantization.md of openxla/stablehlo)."""

from __future__ import annotations

from typing import Sequence

from ..ir import Module, Operation, Value
from ..types import TensorType, is_quantized
from ..ops.quantization import expressed_tensor_type
from . import register_pass
from ._rewrite import Rewriter, dead_code_elimination

__all__ = ["quantized_op_to_qdq", "qdq_to_quantized_op", "QDQ_OPS"]

QDQ_OPS = frozenset("stablehlo." + n for n in (
    "abs", "add", "atan2", "batch_norm_grad", "batch_norm_inference", "batch_norm_training",
    "cbrt", "ceil", "cholesky", "clamp", "compare", "convolution", "cosine", "divide",
    "dot_general", "dot", "exponential_minus_one", "exponential", "floor", "log_plus_one",
    "logistic", "log", "maximum", "minimum", "multiply", "negate", "power", "reduce_precision",
    "remainder", "round_nearest_afz", "round_nearest_even", "rsqrt", "select", "sign", "sine",
    "sqrt", "subtract", "tanh", "tan", "triangular_solve"))
"""The ops upstream's populateStablehloLegalizeQuantizedOpToQDQPatterns decomposes."""

def expand_to_qdq(rw: Rewriter, op: Operation) -> list[Value]:
    """Emit ``dequantize(quantized operands) -> op on expressed types -> quantize(quantized
    results)`` for ``op`` (its operands already mapped by ``rw``)."""
    operands = []
    for v in op.operands:
        nv = rw.get(v)
        if is_quantized(v.type):
            nv = rw.emit1("stablehlo.uniform_dequantize", [nv], expressed_tensor_type(v.type))
        operands.append(nv)
    float_op = rw.emit(op.name, operands, [expressed_tensor_type(v.type) for v in op.results],
                       dict(op.properties), dict(op.attributes))
    out = []
    for old, new in zip(op.results, float_op.results):
        if is_quantized(old.type):
            new = rw.emit1("stablehlo.uniform_quantize", [new], old.type)
        out.append(new)
    return out


def _qdq_pattern(rw: Rewriter, op: Operation) -> Sequence[Value] | None:
    if op.name not in QDQ_OPS:
        return None
    if not (any(is_quantized(v.type) for v in op.operands)
            or any(is_quantized(v.type) for v in op.results)):
        return None
    return expand_to_qdq(rw, op)


@register_pass("stablehlo-legalize-quantized-op-to-qdq")
def quantized_op_to_qdq(module: Module, options: dict[str, str] | None = None) -> Module:
    """Decompose each quantized op whose spec semantics is dequantize-op-quantize into
    ``uniform_dequantize`` -> the op on expressed types -> ``uniform_quantize``.

    Covers every such op of the spec (abs ... triangular_solve, including the batch_norm,
    compare and select variants; ops inside regions too). Data-movement ops, ops with regions,
    dot_general and convolution keep their quantized types, as upstream. Side-effect-free ops
    left without users are removed, as upstream's greedy rewriter does.
    """
    return dead_code_elimination(Rewriter(_qdq_pattern).module(module))


def _defining_op(v: Value) -> Operation | None:
    return v.owner if isinstance(v.owner, Operation) else None


def _fusion(quant: Operation) -> tuple[Operation, list[Value]] | None:
    """The compute op and its quantized inputs when ``quant`` ends dequantize -> op ->
    quantize (upstream's conditions), else None."""
    compute = _defining_op(quant.operands[0])
    if compute is None or compute.regions or len(compute.results) != 1 \
            or not compute.operands:
        return None
    if any(is_quantized(v.type) for v in compute.operands):
        return None
    inputs = []
    for v in compute.operands:
        d = _defining_op(v)
        if d is None or d.name != "stablehlo.uniform_dequantize":
            return None
        inputs.append(d.operands[0])
    return compute, inputs


def _fuse_pattern(rw: Rewriter, op: Operation) -> Sequence[Value] | None:
    if op.name != "stablehlo.uniform_quantize" or not isinstance(op.operands[0].type,
                                                                  TensorType):
        return None
    if is_quantized(op.operands[0].type):
        return None
    found = _fusion(op)
    if found is None:
        return None
    compute, inputs = found
    fused = rw.emit(compute.name, [rw.get(v) for v in inputs], [op.results[0].type],
                    dict(compute.properties), dict(compute.attributes))
    fused.location = compute.location
    return fused.results


@register_pass("stablehlo-legalize-qdq-to-quantized-op")
def qdq_to_quantized_op(module: Module, options: dict[str, str] | None = None) -> Module:
    """Fuse ``uniform_dequantize`` -> float op -> ``uniform_quantize`` into the quantized op.

    Matches a ``uniform_quantize`` whose operand comes from an op without regions, with one
    result and at least one operand, all of whose operands come from ``uniform_dequantize``
    ops (upstream's conditions); the fused op takes the dequantized values and has the
    quantize's result type. Side-effect-free ops left without users are removed.
    """
    return dead_code_elimination(Rewriter(_fuse_pattern).module(module))
