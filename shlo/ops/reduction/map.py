"""map (spec "map"): applies `computation` element by element to `inputs`, in one call of the
region on the whole inputs (its ops are element-wise)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ...attributes import ints_attr
from ...ir import Operation
from ...registry import QUANTIZED_STORAGE, Kernel, define, inference, kernel, verifier
from ...types import TensorType, Type
from .. import _constraints as _c
from .._regions import as_dtype, call_body

if TYPE_CHECKING:  # pragma: no cover
    from ...errors import Diagnostics
    from ...interpreter.evaluator import PrepareContext

define("stablehlo.map", spec="map", summary="applies computation to inputs element by element",
       traits={QUANTIZED_STORAGE}, inherent="dimensions")


@kernel("stablehlo.map")
def map_(op: Operation, ctx: PrepareContext) -> Kernel:
    """Spec "map": ``result[i] = computation(inputs[0][i], ..., inputs[N-1][i])``, in one call."""
    body = ctx.region(op.regions[0])
    dtypes = [r.type.element_type.dtype for r in op.results]
    arg_dtypes = [a.type.element_type.dtype for a in op.regions[0].blocks[0].arguments]

    def run(*inputs: Any) -> list[np.ndarray]:
        args = [as_dtype(x, dt) for x, dt in zip(inputs, arg_dtypes)]
        return call_body(body, args, args[0].shape if args else (), dtypes)

    return run


@inference("stablehlo.map")
def _infer_map(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """(C2) at least one input; (C4) `computation` of type `(tensor<E0>, ..., tensor<EN-1>) ->
    tensor<E'>`; (C3) `dimensions = [0, ..., R-1]`; (C1) inputs of one shape; the result: that
    shape with `computation`'s element type."""
    if not op.regions or not all(isinstance(v.type, TensorType) for v in op.operands):
        return None
    inputs = [v.type for v in op.operands]
    if not inputs:
        diag.error(op, "C2", "expects at least one input")
        return None
    block = _c.region_block(op, 0)
    if block is None:
        return None
    args = [a.type for a in block.arguments]
    if len(args) != len(inputs):
        diag.error(op, "C4", f"expects number of operands to match the arity of map "
                             f"computation, but got: {len(inputs)} and {len(args)}")
        return None
    for i, (a, t) in enumerate(zip(args, inputs)):
        if not isinstance(a, TensorType) or a.shape != ():
            diag.error(op, "C4", f"computation arguments must be 0-rank tensor, but got: arg "
                                 f"#{i} of type '{_c.type_str(a)}'")
            return None
        if not _c.same_element_type(a.element_type, t.element_type):
            diag.error(op, "C4", f"element type of operands and computation arguments must "
                                 f"match, but got: '{_c.type_str(t.element_type)}' and "
                                 f"'{_c.type_str(a.element_type)}'")
            return None
    rets = _c.region_return_types(op, 0)
    if rets is None:
        return None
    if len(rets) != 1:
        diag.error(op, "C4", f"computation must return single output, but got: {len(rets)}")
        return None
    r = rets[0]
    if not isinstance(r, TensorType) or r.shape != ():
        diag.error(op, "C4", f"computation must return 0-rank tensor, but got: "
                             f"'{_c.type_str(r)}'")
        return None
    dims = ints_attr(op, "dimensions", None)
    if dims is None:
        return None
    for i, d in enumerate(dims):
        if d != i:
            diag.error(op, "C3", f"requires monotonically increasing dimension numbers, but "
                                 f"got: {', '.join(map(str, dims))}")
            return None
    shape = next((t.shape for t in inputs if t.shape is not None), None)
    if shape is not None and len(dims) != len(shape):
        diag.error(op, "C3", f"applied to a subset of dimensions currently not supported: "
                             f"operand dimensions = {len(shape)}, requested map dimensions size "
                             f"= {len(dims)}")
        return None
    if not _c.same_shapes(op, diag, "C1", inputs, message="requires the same shape for all "
                                                          "operands"):
        return None
    return [TensorType(shape, r.element_type)]


@verifier("stablehlo.map")
def _verify_map(op: Operation, diag: Diagnostics) -> None:
    """map (C1-C4): inputs of one shape, `dimensions = range(rank)`, and `computation` of type
    `(tensor<E0>, ..., tensor<EN-1>) -> tensor<E'>`."""
    if not _c.signature(op, diag, [(_c.TENSOR, "*")], [_c.TENSOR], attrs={"dimensions": "ints"},
                        regions=1):
        return
    inferred = _infer_map(op, diag)
    if inferred is not None:
        _c.check_inferred(op, diag, "C1, C4", inferred)
