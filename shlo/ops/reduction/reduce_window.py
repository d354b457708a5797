"""reduce_window (spec "reduce_window"): applies a reduction function `body` to windows of
`inputs` and `init_values`.

A left fold over the window positions, one batched body call (or ufunc call) per position over
all windows, as the upstream interpreter and XLA compute it. The windows are strided, dilated
views of the padded inputs (:mod:`shlo.ops._windows`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ...attributes import ints_attr
from ...ir import Operation
from ...registry import QUANTIZED_STORAGE, Kernel, define, inference, kernel, verifier
from ...types import TensorType, Type
from .. import _constraints as _c
from .._regions import Body, as_dtype, call_body, check_reducer, exact_ufunc
from .._windows import (
    check_padding, num_windows, pad, padding_pairs_of, positive_window, window_attr, window_list,
    window_view,
)
from .reduce import inputs_compatible

if TYPE_CHECKING:  # pragma: no cover
    from ...errors import Diagnostics
    from ...interpreter.evaluator import PrepareContext

define("stablehlo.reduce_window", spec="reduce_window",
       summary="reduces windows of inputs with body", traits={QUANTIZED_STORAGE},
       inherent="window_dimensions window_strides base_dilations window_dilations padding")


@kernel("stablehlo.reduce_window")
def reduce_window(op: Operation, ctx: PrepareContext) -> Kernel:
    """Spec "reduce_window": ``results[:][i] = reduce(windows, init_values, axes, body)``.

    ``padded_inputs = pad(inputs, init_values, padding[:, 0], padding[:, 1], base_dilations - 1)``
    (edges and the holes of the base dilation hold the init value). The windows are strided,
    dilated views of it (``sliding_window_view``, no copy). Schedule: a left fold over the window
    positions in row-major order, ``acc = body(acc, window[k])`` starting from the init value, as
    the upstream interpreter and XLA compute it; one batched body call per window position,
    over all windows at once.
    """
    n = len(op.results)
    window_dimensions = ints_attr(op, "window_dimensions")
    rank = len(window_dimensions)
    window_strides = window_attr(op, "window_strides", rank)
    interior = [b - 1 for b in window_attr(op, "base_dilations", rank)]
    window_dilations = window_attr(op, "window_dilations", rank)
    padding = padding_pairs_of(op, rank)
    body = ctx.region(op.regions[0])
    dtypes = [r.type.element_type.dtype for r in op.results]
    step = _fold_step(body, dtypes)
    offsets = list(np.ndindex(*window_dimensions))

    def run(*args: Any) -> list[np.ndarray]:
        inits = [as_dtype(a, dt) for a, dt in zip(args[n:], dtypes)]
        padded = [pad(as_dtype(a, dt), v, padding, interior)
                  for a, v, dt in zip(args[:n], inits, dtypes)]
        shape = tuple(num_windows(p, w, s, window_dilation=d) for p, w, s, d in
                      zip(padded[0].shape, window_dimensions, window_strides, window_dilations))
        if 0 in shape:
            return [np.empty(shape, dtype=dt) for dt in dtypes]
        views = [window_view(p, window_dimensions, window_strides, window_dilations)
                 for p in padded]
        acc = [np.full(shape, v, dtype=dt) for v, dt in zip(inits, dtypes)]
        for k in offsets:
            acc = step(acc, [v[(Ellipsis,) + k] for v in views])
        return acc

    return run


def _fold_step(body: Body, dtypes: list[np.dtype]
               ) -> Callable[[list[np.ndarray], list[np.ndarray]], list[np.ndarray]]:
    """``(acc, x) -> body(acc, x)``; a numpy ufunc when it computes the single-op body exactly
    (:func:`~shlo.ops._regions.exact_ufunc`), else the body's own kernels."""
    single = getattr(body, "single_op", None)
    if len(dtypes) == 1 and single is not None:
        dt = dtypes[0]
        uf = exact_ufunc(single, dt)
        if uf is not None:
            return lambda acc, x: [as_dtype(uf(acc[0], x[0]), dt)]

    def step(acc: list[np.ndarray], x: list[np.ndarray]) -> list[np.ndarray]:
        return call_body(body, acc + x, acc[0].shape, dtypes)

    return step


@inference("stablehlo.reduce_window")
def _infer_reduce_window(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """(C1) at least one input; (C2) inputs of one shape; (C4-C12) window attributes sized like
    the inputs and positive, `padding` of shape `[rank, 2]`; (C13) `body` a reducer; (C14-C16)
    the results: `num_windows` of the padded, dilated inputs, with the element types `body`
    returns."""
    if not op.regions or not all(isinstance(v.type, TensorType) for v in op.operands):
        return None
    n = len(op.operands) // 2
    inputs = [v.type for v in op.operands[:n]]
    inits = [v.type for v in op.operands[n:]]
    if n == 0:
        diag.error(op, "C1", "requires at least 1 input value")
        return None
    if not inputs_compatible(op, diag, "C2", inputs):
        return None
    shape = inputs[0].shape
    window_dimensions = ints_attr(op, "window_dimensions", None)
    if shape is None or window_dimensions is None:
        return None
    rank = len(shape)
    if len(window_dimensions) != rank:
        diag.error(op, "C4", f"expects window-dimensions size == input rank, but got "
                             f"window-dimensions size: {len(window_dimensions)} and input: "
                             f"'{_c.type_str(inputs[0])}' with rank = {rank}.")
        return None
    if not positive_window(op, diag, "C5", window_dimensions):
        return None
    strides = window_list(op, diag, "C6, C7", "window_strides", "window-strides", rank,
                          positive="stride")
    if strides is None:
        return None
    base = window_list(op, diag, "C8, C9", "base_dilations", "base-dilation factors", rank,
                       positive="base dilation factor")
    if base is None:
        return None
    dilations = window_list(op, diag, "C10, C11", "window_dilations", "window-dilation factors",
                            rank, positive="window dilation factor")
    if dilations is None:
        return None
    padding = check_padding(op, diag, "C12", rank)
    if padding is None:
        return None
    rets = check_reducer(op, diag, "C13", 0, inputs, inits, list(window_dimensions))
    if rets is None:
        return None
    out = tuple(num_windows(shape[i], window_dimensions[i], strides[i], padding[i], base[i],
                            dilations[i]) for i in range(rank))
    return [TensorType(out, r.element_type) for r in rets]


@verifier("stablehlo.reduce_window")
def _verify_reduce_window(op: Operation, diag: Diagnostics) -> None:
    """reduce_window (C1-C16): window attributes sized like the inputs and positive, padding of
    shape [rank, 2], a reducer `body`, and the result shapes given by `num_windows`."""
    if not _c.signature(op, diag, [(_c.TENSOR, "*"), (_c.TENSOR, "*")], [(_c.TENSOR, "*")],
                        attrs={"window_dimensions": "ints"},
                        optional_attrs={"window_strides": "ints", "base_dilations": "ints",
                                        "window_dilations": "ints", "padding": "i64elements"},
                        regions=1):
        return
    inferred = _infer_reduce_window(op, diag)
    if inferred is not None:
        _c.check_inferred(op, diag, "C14, C15, C16", inferred)
