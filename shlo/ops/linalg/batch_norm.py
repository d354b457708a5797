"""batch_norm_grad, batch_norm_inference, batch_norm_training (spec sections of the same names).

The three ops compute in float32 (float64 for f64) and round once to the element type; the
statistics are reduced over every dimension but `feature_index`, and the per-feature operands
(`scale`, `offset`, `mean`, `variance`) broadcast along it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ...attributes import float_attr, int_attr
from ...dtypes import float_compute_dtype
from ...ir import Operation
from ...registry import DOQ, Kernel, define, inference, kernel, verifier
from ...types import TensorType, Type
from .. import _constraints as _c

if TYPE_CHECKING:  # pragma: no cover
    from ...errors import Diagnostics
    from ...interpreter.evaluator import PrepareContext

_INHERENT = "epsilon feature_index"


class _BatchNorm:
    """Shared decoding of batch_norm_* attributes: `epsilon`, `feature_index`."""

    def __init__(self, op: Operation) -> None:
        operand_t = op.operands[0].type
        self.rank = operand_t.rank
        self.feature_index = int_attr(op, "feature_index", 0)
        self.compute = float_compute_dtype(operand_t.dtype)
        # epsilon is an f32 constant (spec I6): round it to f32 first.
        self.epsilon = self.compute.type(np.float32(float_attr(op, "epsilon", 0.0)))
        self.reduce_axes = tuple(d for d in range(self.rank) if d != self.feature_index)
        self.dtypes = [r.type.dtype for r in op.results]

    def bcast(self, v: Any) -> np.ndarray:
        """`broadcast_in_dim(v, [feature_index], shape(operand))` as a broadcastable view."""
        shape = [1] * self.rank
        shape[self.feature_index] = -1
        return np.asarray(v).astype(self.compute).reshape(shape)

    def compute_sum(self, x: np.ndarray) -> np.ndarray:
        return np.sum(x, axis=self.reduce_axes)

    def elements_per_feature(self, x: np.ndarray) -> Any:
        n = x.shape[self.feature_index]
        return self.compute.type(x.size / n if n else 0)

    def compute_mean(self, x: np.ndarray) -> np.ndarray:
        return self.compute_sum(x) / self.elements_per_feature(x)

    def normalize(self, x: np.ndarray, scale: Any, offset: Any, mean: np.ndarray,
                  variance: np.ndarray) -> np.ndarray:
        stddev = np.sqrt(self.bcast(variance) + self.epsilon)
        normalized = (x - self.bcast(mean)) / stddev
        return self.bcast(scale) * normalized + self.bcast(offset)


def _infer_batch_norm(op: Operation, diag: Diagnostics, multi_operands: Sequence[int],
                      single_operands: Sequence[int], multi_results: int,
                      single_results: int) -> list[Type] | None:
    """The constraints the three ops share: (C1) `0 <= feature_index < rank(operand)`; (C2) one
    element type; (C3, C4) the multi- and the single-dimensional operands of one shape; (C5) the
    single-dimensional ones of size `dim(operand, feature_index)`. The results: the operand's
    type ``multi_results`` times, then ``single_results`` vectors of the feature count."""
    if not all(isinstance(v.type, TensorType) for v in op.operands) or \
            len(op.operands) != len(multi_operands) + len(single_operands):
        return None
    ops = [v.type for v in op.operands]
    fi = int_attr(op, "feature_index", 0)
    if fi < 0:
        diag.error(op, "C1", f"op attribute 'feature_index' failed to satisfy constraint: 64-bit "
                             f"signless integer attribute whose value is non-negative (got {fi})")
        return None
    multi = [ops[i] for i in multi_operands]
    single = [ops[i] for i in single_operands]
    ets = [t.element_type for t in ops]
    if any(not _c.compatible_element_types(ets[0], e) for e in ets[1:]):
        diag.error(op, "C2", f"requires the same element type for all operands: "
                             f"{_c.types_str(ops)}")
        return None
    operand = multi[0]
    if operand.shape is None:
        return [operand] * multi_results + \
            [TensorType((None,), single[0].element_type)] * single_results
    rank = len(operand.shape)
    if fi >= rank:
        diag.error(op, "C1", f"expects featureIndex to be smaller than the rank of "
                             f"multi-dimensional operands; got featureIndex {fi}, and rank "
                             f"{rank}.")
        return None
    if not _c.same_shapes(op, diag, "C3", multi, message="expects multi-dimensional operands "
                                                         "to have compatible shapes"):
        return None
    if not _c.same_shapes(op, diag, "C4", single, message="expects single-dimensional operands "
                                                          "to have compatible shapes"):
        return None
    features = operand.shape[fi]
    for t in single:
        if t.shape is not None and len(t.shape) == 1 and \
                not _c.compatible_dims(t.shape[0], features):
            diag.error(op, "C5", f"expects the size of single-dimensional operands to be "
                                 f"compatible with feature count, but the size of "
                                 f"single-dimensional operands is {t.shape[0]} and the feature "
                                 f"count is {features}.")
            return None
    scale = TensorType((features,), single[0].element_type)
    return [operand] * multi_results + [scale] * single_results


def _check_batch_norm(op: Operation, diag: Diagnostics, inferred: list[Type] | None) -> None:
    """Compare the inferred result types with the written ones (nothing to compare for an
    unranked operand)."""
    if inferred is not None and inferred[0].shape is not None:
        _c.check_inferred(op, diag, "C3, C4, C7", inferred)


_SINGLE = _c.TC(_c.F | _c.Q, rank=1)
_ATTRS = {"epsilon": "float", "feature_index": "int"}


# --- batch_norm_grad (spec "batch_norm_grad") -----------------------------------------------------

define("stablehlo.batch_norm_grad", spec="batch_norm_grad",
       summary="gradients of batch_norm_training", traits={DOQ}, inherent=_INHERENT)


@kernel("stablehlo.batch_norm_grad")
def batch_norm_grad(op: Operation, ctx: PrepareContext) -> Kernel:
    """Spec "batch_norm_grad": gradients of `batch_norm_training` with respect to operand, scale
    and offset, by the spec's decomposition (XLA's batchnorm_expander formulas).
    """
    bn = _BatchNorm(op)

    def run(operand: Any, scale: Any, mean: Any, variance: Any,
            grad_output: Any) -> Sequence[Any]:
        x = np.asarray(operand).astype(bn.compute)
        dy = np.asarray(grad_output).astype(bn.compute)
        with np.errstate(all="ignore"):
            variance_eps = bn.bcast(variance) + bn.epsilon
            centered_operand = x - bn.bcast(mean)
            stddev = np.sqrt(variance_eps)
            normalized_operand = centered_operand / stddev
            elements_per_feature = bn.elements_per_feature(x)
            i1 = dy * elements_per_feature
            i2 = bn.bcast(bn.compute_sum(dy))
            i3 = bn.bcast(bn.compute_sum(dy * centered_operand))
            i4 = i3 * centered_operand
            i5 = i4 / variance_eps
            grad_operand = (bn.bcast(scale) / stddev / elements_per_feature) * ((i1 - i2) - i5)
            grad_scale = bn.compute_sum(dy * normalized_operand)
            grad_offset = bn.compute_sum(dy)
        return (grad_operand.astype(bn.dtypes[0]), grad_scale.astype(bn.dtypes[1]),
                grad_offset.astype(bn.dtypes[2]))

    return run


@inference("stablehlo.batch_norm_grad")
def _infer_batch_norm_grad(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """`(grad_operand, grad_scale, grad_offset)`: `operand`'s type, then two feature vectors."""
    return _infer_batch_norm(op, diag, [0, 4], [1, 2, 3], 1, 2)


@verifier("stablehlo.batch_norm_grad")
def _verify_batch_norm_grad(op: Operation, diag: Diagnostics) -> None:
    """batch_norm_grad (C1-C5)."""
    if _c.signature(op, diag, [_c.FP_Q_TENSOR, _SINGLE, _SINGLE, _SINGLE, _c.FP_Q_TENSOR],
                    [_c.FP_Q_TENSOR, _SINGLE, _SINGLE], attrs=_ATTRS):
        _check_batch_norm(op, diag, _infer_batch_norm_grad(op, diag))


# --- batch_norm_inference (spec "batch_norm_inference") -------------------------------------------

define("stablehlo.batch_norm_inference", spec="batch_norm_inference",
       summary="normalizes operand across all dimensions except feature_index", traits={DOQ},
       inherent=_INHERENT)


@kernel("stablehlo.batch_norm_inference")
def batch_norm_inference(op: Operation, ctx: PrepareContext) -> Kernel:
    """Spec "batch_norm_inference": `scale * (operand - mean) / sqrt(variance + epsilon) + offset`
    along `feature_index`.
    """
    bn = _BatchNorm(op)

    def run(operand: Any, scale: Any, offset: Any, mean: Any, variance: Any) -> Sequence[Any]:
        x = np.asarray(operand).astype(bn.compute)
        with np.errstate(all="ignore"):
            out = bn.normalize(x, scale, offset, mean, variance)
        return (out.astype(bn.dtypes[0]),)

    return run


@inference("stablehlo.batch_norm_inference")
def _infer_batch_norm_inference(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """`result`: `operand`'s type."""
    return _infer_batch_norm(op, diag, [0], [1, 2, 3, 4], 1, 0)


@verifier("stablehlo.batch_norm_inference")
def _verify_batch_norm_inference(op: Operation, diag: Diagnostics) -> None:
    """batch_norm_inference (C1-C7)."""
    if _c.signature(op, diag, [_c.FP_Q_TENSOR] + [_SINGLE] * 4, [_c.FP_Q_TENSOR], attrs=_ATTRS):
        _check_batch_norm(op, diag, _infer_batch_norm_inference(op, diag))


# --- batch_norm_training (spec "batch_norm_training") ---------------------------------------------

define("stablehlo.batch_norm_training", spec="batch_norm_training",
       summary="normalizes operand with its own mean and variance", traits={DOQ},
       inherent=_INHERENT)


@kernel("stablehlo.batch_norm_training")
def batch_norm_training(op: Operation, ctx: PrepareContext) -> Kernel:
    """Spec "batch_norm_training": mean and variance over all dimensions but `feature_index`,
    then `batch_norm_inference` with them; results `(output, batch_mean, batch_var)`.
    """
    bn = _BatchNorm(op)

    def run(operand: Any, scale: Any, offset: Any) -> Sequence[Any]:
        x = np.asarray(operand).astype(bn.compute)
        with np.errstate(all="ignore"):
            mean = bn.compute_mean(x)
            centered = x - bn.bcast(mean)
            variance = bn.compute_mean(centered * centered)
            out = bn.normalize(x, scale, offset, mean, variance)
        return (out.astype(bn.dtypes[0]), mean.astype(bn.dtypes[1]),
                variance.astype(bn.dtypes[2]))

    return run


@inference("stablehlo.batch_norm_training")
def _infer_batch_norm_training(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """`(output, batch_mean, batch_var)`: `operand`'s type, then two feature vectors."""
    return _infer_batch_norm(op, diag, [0], [1, 2], 1, 2)


@verifier("stablehlo.batch_norm_training")
def _verify_batch_norm_training(op: Operation, diag: Diagnostics) -> None:
    """batch_norm_training (C1-C7)."""
    if _c.signature(op, diag, [_c.FP_Q_TENSOR, _SINGLE, _SINGLE],
                    [_c.FP_Q_TENSOR, _SINGLE, _SINGLE], attrs=_ATTRS):
        _check_batch_norm(op, diag, _infer_batch_norm_training(op, diag))
