"""infeed and outfeed (spec sections of the same names): the process's feeds.

Each process has an infeed queue (given by the caller: ``shlo.run(..., infeed=[...])``) and an
outfeed list (returned to the caller); both live in its ProcessContext. The payload helpers here
also serve `recv`, whose results are shaped as infeed's (tensors, then a token).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ...attributes import ArrayAttr, IntegerAttr
from ...errors import Diagnostics, ExecutionError
from ...ir import Operation
from ...registry import QUANTIZED_AWARE, QUANTIZED_STORAGE, SIDE_EFFECTS, Kernel, define
from ...registry import inference, kernel, verifier
from ...types import TOKEN, TensorType, TokenType, Type
from .. import _constraints as _c
from .grid import me
from .groups import process_label

if TYPE_CHECKING:  # pragma: no cover
    from ...interpreter.evaluator import PrepareContext

_FEED = {QUANTIZED_AWARE, QUANTIZED_STORAGE, SIDE_EFFECTS}


# --- payloads (infeed, recv) ----------------------------------------------------------------


def _type_str(t: TensorType) -> str:
    dims = "".join(("?" if d is None else str(d)) + "x" for d in (t.shape or ()))
    return f"tensor<{dims}{t.element_type.name}>"


def payload(op: Operation, values: Sequence[Any], types: Sequence[Type], what: str) -> list[Any]:
    """Check/convert ``values`` (what the caller or a sender gave) against the op's payload
    result ``types``: a Python scalar or list takes the declared dtype, an array must have it."""
    if len(values) != len(types):
        raise ExecutionError(f"'{op.name}' op: {what} has {len(values)} tensors, the op "
                             f"returns {len(types)}", op.location)
    out = []
    for i, (v, t) in enumerate(zip(values, types)):
        if not isinstance(t, TensorType):
            out.append(v)
            continue
        a = np.asarray(v)
        if a.dtype != t.dtype:
            if not isinstance(v, np.ndarray) and a.dtype.kind in "biuf" and \
                    np.can_cast(a.dtype, t.dtype, "same_kind"):
                a = a.astype(t.dtype)
            else:
                raise ExecutionError(f"'{op.name}' op: {what}, result {i}: expected dtype "
                                     f"{t.dtype} for {_type_str(t)}, got {a.dtype}", op.location)
        if t.shape is not None and (len(a.shape) != len(t.shape) or any(
                d is not None and d != s for d, s in zip(t.shape, a.shape))):
            raise ExecutionError(f"'{op.name}' op: {what}, result {i}: expected shape "
                                 f"{tuple(t.shape)} for {_type_str(t)}, got {a.shape}", op.location)
        out.append(a)
    return out


def check_payload_results(op: Operation, diag: Diagnostics) -> bool:
    """(infeed C2-C4, recv C2-C4) at least one result: tensors, then a token."""
    results = op.result_types
    if not results:
        diag.error(op, "C2", "result is expected to be at least of size 1, but got 0")
        return False
    for t in results[:-1]:
        if not isinstance(t, TensorType):
            what = ("all elements of result types, except the last element, are" if
                    op.name == "stablehlo.infeed" else
                    "everything but the last element of result types is")
            diag.error(op, "C3", f"{what} expected to be of tensor type, but got "
                                 f"'{_c.type_str(t)}'")
            return False
    if not isinstance(results[-1], TokenType):
        diag.error(op, "C4", f"last element of result types is expected to be of token type, "
                             f"but got '{_c.type_str(results[-1])}'")
        return False
    return True


# --- infeed (spec "infeed") -----------------------------------------------------------------

define("stablehlo.infeed", spec="infeed", traits=_FEED,
       summary="the next entry of the process's infeed queue, then a token",
       inherent="infeed_config layout")


@kernel("stablehlo.infeed")
def infeed(op: Operation, ctx: PrepareContext) -> Kernel:
    """The next entry of the process's infeed queue (a value, or a tuple of values when the op
    has several payload results), then a token."""
    types = op.result_types[:-1]
    process = ctx.process

    def run(token: Any = None) -> tuple[Any, ...]:
        if not types:
            return (TOKEN,)
        try:
            entry = process.infeed.pop(0)
        except IndexError:
            raise ExecutionError(f"'{op.name}' op on {process_label(me(process))}: the infeed "
                                 f"queue is empty (pass the values with infeed=[...])",
                                 op.location) from None
        values = entry if isinstance(entry, tuple) or (
            isinstance(entry, list) and len(types) > 1) else (entry,)
        return (*payload(op, values, types, "the infeed value"), TOKEN)

    return run


def _attr_text(a: Any) -> str:
    if isinstance(a, IntegerAttr):
        return f"{a.value} : {a.type or 'i64'}"
    if isinstance(a, ArrayAttr):
        return "[" + ", ".join(_attr_text(x) for x in a) + "]"
    return str(a)


@verifier("stablehlo.infeed")
def _verify_infeed(op: Operation, diag: Diagnostics) -> None:
    """infeed (C1-C3), and the layout attribute: one array of integers per non-token result."""
    if not _c.signature(op, diag, [_c.TOKEN], [(_c.TENSOR_QA_OR_TOKEN, "*")],
                        optional_attrs={"infeed_config": "str", "layout": "any"}):
        return
    if not check_payload_results(op, diag):
        return
    layout = op.attr("layout")
    if isinstance(layout, ArrayAttr):
        n = max(len(op.results) - 1, 0)
        if len(layout) != n:
            diag.error(op, "", f"layout-attribute size must be {n} (which is the number of "
                               f"op-results - 1 (for token result)), but got {len(layout)}")
            return
        for child in layout:
            if not isinstance(child, ArrayAttr):
                diag.error(op, "", f"layout-attribute expected to have elements of type array, "
                                   f"but got {_attr_text(child)}")
                return
            for leaf in child:
                if not isinstance(leaf, (IntegerAttr, int)):
                    diag.error(op, "", f"layout-attribute's leaf elements are expected to be of "
                                       f"type integer, but got {_attr_text(leaf)}")
                    return


# --- outfeed (spec "outfeed") ---------------------------------------------------------------

define("stablehlo.outfeed", spec="outfeed", traits=_FEED,
       summary="append the inputs to the process's outfeed", inherent="outfeed_config")


@kernel("stablehlo.outfeed")
def outfeed(op: Operation, ctx: PrepareContext) -> Kernel:
    """Append the tuple of inputs to the process's outfeed."""
    process = ctx.process
    out = (TOKEN,)

    def run(*operands: Any) -> tuple[Any, ...]:
        process.outfeed.append(tuple(operands[:-1]))
        return out

    return run


@inference("stablehlo.outfeed")
def _infer_outfeed(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """A token."""
    return [TokenType()]


@verifier("stablehlo.outfeed")
def _verify_outfeed(op: Operation, diag: Diagnostics) -> None:
    """outfeed: tensors and a token in, a token out."""
    _c.signature(op, diag, [(_c.TENSOR_QA, "*"), _c.TOKEN], [_c.TOKEN],
                 optional_attrs={"outfeed_config": "str"})
