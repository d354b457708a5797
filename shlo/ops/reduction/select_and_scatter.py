"""select_and_scatter (spec "select_and_scatter"): scatters `source` into the elements of
`operand` that `select` picks in each window, combining them with `scatter`.

The select body runs once per window position (vectorised over all windows), then the scatter
body folds the source values into the selected positions
(:func:`shlo.ops._regions.combine_at`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ...attributes import ints_attr
from ...ir import Operation
from ...registry import QUANTIZED_STORAGE, Kernel, define, inference, kernel, verifier
from ...types import TensorType, Type
from .. import _constraints as _c
from .._regions import as_dtype, call_body, check_reducer, combine_at
from .._windows import (
    check_padding, num_windows, pad, padding_pairs_of, positive_window, window_attr, window_list,
    window_view,
)

if TYPE_CHECKING:  # pragma: no cover
    from ...errors import Diagnostics
    from ...interpreter.evaluator import PrepareContext

define("stablehlo.select_and_scatter", spec="select_and_scatter",
       summary="scatters source into the elements select picks in each window of operand",
       traits={QUANTIZED_STORAGE}, inherent="window_dimensions window_strides padding")


@kernel("stablehlo.select_and_scatter")
def select_and_scatter(op: Operation, ctx: PrepareContext) -> Kernel:
    """Spec "select_and_scatter".

    For each window (one per ``source`` element) the select body picks one operand element:
    walking the window's in-bounds elements in row-major order, the current candidate replaces
    the selected one when ``select(selected, candidate)`` is false (as the upstream
    interpreter). Padding positions are never selected; a window that lies entirely in padding
    scatters nothing. Then ``result[i] = reduce([source values selected at i], init_value,
    scatter)``, folded in source order, ``init_value`` where nothing was selected.
    Vectorised: one select call per window position over all windows; scatter by rounds
    (:func:`combine_at`).
    """
    dtype = op.results[0].type.element_type.dtype
    operand_type = op.operands[0].type
    rank = operand_type.rank if isinstance(operand_type, TensorType) and \
        operand_type.shape is not None else len(ints_attr(op, "window_dimensions"))
    window_dimensions = window_attr(op, "window_dimensions", rank)
    window_strides = window_attr(op, "window_strides", rank)
    padding = padding_pairs_of(op, rank)
    select = ctx.region(op.regions[0])
    scatter = ctx.region(op.regions[1])
    ones = (1,) * rank
    bool_dtype = [np.dtype(np.bool_)]

    def windows(x: np.ndarray) -> np.ndarray:
        """The windows of ``x``, one row each: ``(windows, prod(window_dimensions))``."""
        v = window_view(x, window_dimensions, window_strides, ones)
        v = v.reshape(v.shape[:x.ndim] + (-1,))
        return v.reshape(-1, v.shape[-1])

    def run(operand: Any, source: Any, init_value: Any) -> list[np.ndarray]:
        operand = as_dtype(operand, dtype)
        source = as_dtype(source, dtype)
        init = as_dtype(init_value, dtype)
        shape = operand.shape
        padded = pad(operand, init, padding)
        result = np.full(operand.size, init, dtype=dtype)
        counts = [num_windows(p, w, s) for p, w, s in
                  zip(padded.shape, window_dimensions, window_strides)]
        if 0 in counts or padded.size == 0 or source.size == 0:
            return [result.reshape(shape)]
        values = windows(padded)
        index = windows(pad(np.arange(operand.size).reshape(shape), -1, padding))
        sel_v, sel_i = values[:, 0], index[:, 0]
        for k in range(1, values.shape[1]):
            cand_v, cand_i = values[:, k], index[:, k]
            keep = call_body(select, [sel_v, cand_v], sel_v.shape, bool_dtype)[0]
            take = (cand_i >= 0) & ((sel_i < 0) | ~keep)
            sel_v = np.where(take, cand_v, sel_v)
            sel_i = np.where(take, cand_i, sel_i)
        valid = sel_i >= 0
        src = source.reshape(-1)
        if src.size != sel_i.size:
            raise ValueError(f"source has {src.size} elements, expected one per window "
                             f"({sel_i.size})")
        (result,) = combine_at(scatter, [result], sel_i[valid], [src[valid]])
        return [result.reshape(shape)]

    return run


@inference("stablehlo.select_and_scatter")
def _infer_select_and_scatter(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """(C4-C8) window attributes sized like `operand` and positive, `padding` of shape
    `[rank, 2]`; (C1, C2) `source` of the shape of the windows; (C9) `select` of type
    `(tensor<E>, tensor<E>) -> tensor<i1>`; (C10) `scatter` a reducer; (C11, C12) the result:
    `operand`'s shape with the element type `scatter` returns."""
    if len(op.operands) != 3 or len(op.regions) != 2 or \
            not all(isinstance(v.type, TensorType) for v in op.operands):
        return None
    operand, source, init = (v.type for v in op.operands)
    if operand.shape is None:
        return None
    rank = len(operand.shape)
    window_dimensions = ints_attr(op, "window_dimensions", ())
    if len(window_dimensions) != rank:
        diag.error(op, "C4", f"expects window-dimensions size == operand rank, but got "
                             f"window-dimensions size: {len(window_dimensions)} and "
                             f"operand-type: '{_c.type_str(operand)}' with rank = {rank}.")
        return None
    if not positive_window(op, diag, "C5", window_dimensions):
        return None
    strides = window_list(op, diag, "C6, C7", "window_strides", "window-strides", rank,
                          positive="stride")
    if strides is None:
        return None
    padding = check_padding(op, diag, "C8", rank)
    if padding is None:
        return None
    expected = TensorType(tuple(num_windows(operand.shape[i], window_dimensions[i], strides[i],
                                            padding[i]) for i in range(rank)),
                          operand.element_type)
    if not _c.compatible(expected, source) or \
            not _c.same_element_type(operand.element_type, source.element_type):
        diag.error(op, "C1, C2", f"expects source-type to be '{_c.type_str(expected)}', but "
                                 f"got'{_c.type_str(source)}'")
        return None
    scalar = TensorType((), operand.element_type)
    select = _c.region_block(op, 0)
    if select is None:
        return None
    args = [a.type for a in select.arguments]
    if len(args) != 2:
        diag.error(op, "C9", f"expects the select-region to take 2 parameters, but takes "
                             f"{len(args)}")
        return None
    for i, a in enumerate(args):
        if not _c.compatible(a, scalar) or not isinstance(a, TensorType) or a.shape != ():
            diag.error(op, "C9", f"expects the type of select-region's parameter at index {i} "
                                 f"to be '{_c.type_str(scalar)}', but got '{_c.type_str(a)}'")
            return None
    rets = _c.region_return_types(op, 0)
    if rets is not None:
        if len(rets) != 1:
            diag.error(op, "C9", f"expects select-region to return single value, but got: "
                                 f"{len(rets)}")
            return None
        r = rets[0]
        if not (isinstance(r, TensorType) and r.shape in ((), None) and
                getattr(r.element_type, "name", None) == "i1"):
            diag.error(op, "C9", f"expects the return-type of select-region to be tensor<i1>, "
                                 f"but got: '{_c.type_str(r)}'")
            return None
    scatter_rets = check_reducer(op, diag, "C10", 1, [operand], [init], [])
    if scatter_rets is None:
        return None
    return [TensorType(operand.shape, scatter_rets[0].element_type)]


@verifier("stablehlo.select_and_scatter")
def _verify_select_and_scatter(op: Operation, diag: Diagnostics) -> None:
    """select_and_scatter (C1-C12): window attributes, `source` shaped like the windows,
    `select` of type `(tensor<E>, tensor<E>) -> tensor<i1>`, a reducer `scatter`."""
    if not _c.signature(op, diag, [_c.TENSOR, _c.TENSOR, _c.TENSOR], [_c.TENSOR],
                        optional_attrs={"window_dimensions": "ints", "window_strides": "ints",
                                        "padding": "i64elements"}, regions=2):
        return
    inferred = _infer_select_and_scatter(op, diag)
    if inferred is not None:
        _c.check_inferred(op, diag, "C11, C12", inferred)
