"""``stablehlo-legalize-quantized-op-to-qdq`` and ``stablehlo-legalize-qdq-to-quantized-op``
(upstream StablehloLegalizeQuantizedOpToQDQ / StablehloLegalizeQDQToQuantizedOp; the
quantization guide, docs/quantization.md of openxla/stablehlo)."""

from __future__ import annotations

from typing import Callable, Sequence

from ..ir import Module, Operation, Value
from ..types import TensorType, Type, is_quantized
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

Lowering = Callable[[Rewriter, Value, Type], Value]


def _emit_dequantize(rw: Rewriter, x: Value, t: Type) -> Value:
    return rw.emit1("stablehlo.uniform_dequantize", [x], expressed_tensor_type(t))


def _emit_quantize(rw: Rewriter, x: Value, t: Type) -> Value:
    return rw.emit1("stablehlo.uniform_quantize", [x], t)


def expand_to_qdq(rw: Rewriter, op: Operation, dequantize: Lowering = _emit_dequantize,
                  quantize: Lowering = _emit_quantize) -> list[Value]:
    """Emit ``dequantize(quantized operands) -> op on expressed types -> quantize(quantized
    results)`` for ``op`` (its operands already mapped by ``rw``). ``dequantize(rw, x, t)``
    and ``quantize(rw, x, t)`` build each conversion (``t``: the quantized type); by default
    ``uniform_dequantize`` / ``uniform_quantize`` ops."""
    operands = []
    for v in op.operands:
        nv = rw.get(v)
        if is_quantized(v.type):
            nv = dequantize(rw, nv, v.type)
        operands.append(nv)
    float_op = rw.emit(op.name, operands, [expressed_tensor_type(v.type) for v in op.results],
                       dict(op.properties), dict(op.attributes))
    out = []
    for old, new in zip(op.results, float_op.results):
        if is_quantized(old.type):
            new = quantize(rw, new, old.type)
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
    """Decompose each quantized op of upstream's list (:data:`QDQ_OPS`) into
    ``uniform_dequantize`` -> the op on expressed types -> ``uniform_quantize``.

    The list is upstream's populateStablehloLegalizeQuantizedOpToQDQPatterns: the element-wise
    ops, compare, select, clamp, the batch norms, cholesky, triangular_solve, dot, dot_general
    and convolution (ops inside regions too). Data-movement ops and ops with regions keep their
    quantized types. Side-effect-free ops left without users are removed, as upstream's greedy
    rewriter does.
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
