"""chlo.scan, a sequential scan over one dimension of its inputs with carries, and
chlo.return, the terminator of chlo regions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ...attributes import DenseArrayAttr, IntegerAttr, bool_attr, int_attr, ints, ints_attr
from ...errors import Diagnostics, ExecutionError
from ...ir import Operation
from ...registry import (
    QUANTIZED_AWARE, QUANTIZED_STORAGE, TERMINATOR, Kernel, define, kernel, verifier,
)
from ...syntax.directives import (
    I32, I64, Format, check_attr_kind, parse_attrdict_kw, types_functional,
)
from ...types import TensorType
from .. import _constraints as _c
from ._common import ANY, result_type

if TYPE_CHECKING:  # pragma: no cover
    from ...interpreter.evaluator import PrepareContext
    from ...syntax.parser import Parser
    from ...syntax.printer import Printer

__all__: list[str] = []

# --- scan -----------------------------------------------------------------------------------------


def _parse_scan(p: Parser, name: str, nres: int, start: int) -> Operation:
    """`chlo.scan (%inputs) inits (%inits) dimension=d attributes {...} {body} : (...) -> (...)`."""
    p.expect("(")
    inputs = p.operand_list()
    p.expect(")")
    p.keyword("inits")
    p.expect("(")
    inits = p.operand_list()
    p.expect(")")
    props: dict[str, Any] = {}
    attrs: dict[str, Any] = {}
    p.keyword("dimension")
    p.expect("=")
    props["dimension"] = IntegerAttr(p.integer(), I64)
    parse_attrdict_kw(p, name, props, attrs)
    region = p.parse_region()
    p.expect(":")
    operands = inputs + inits
    res = types_functional(p, operands)
    props["operandSegmentSizes"] = DenseArrayAttr(I32, (len(inputs), len(inits)))
    props["resultSegmentSizes"] = DenseArrayAttr(I32, (len(res) - len(inits), len(inits)))
    return Operation(name, operands, res, props, attrs, [region])


def _print_scan(pr: Printer, op: Operation) -> str | None:
    seg = op.attr("operandSegmentSizes")
    dim = op.attr("dimension")
    if type(seg) is not DenseArrayAttr or len(seg.values) != 2 or len(op.regions) != 1 \
            or not check_attr_kind(dim, "i64"):
        return None
    ni = seg.values[0]
    ins = ", ".join(pr.val(v) for v in op.operands[:ni])
    inits = ", ".join(pr.val(v) for v in op.operands[ni:])
    rseg = op.attr("resultSegmentSizes")
    if rseg is not None and (type(rseg) is not DenseArrayAttr
                             or tuple(rseg.values) != (len(op.results) - len(op.operands) + ni,
                                                       len(op.operands) - ni)):
        return None
    d = pr.attr_dict(op, {"operandSegmentSizes", "resultSegmentSizes", "dimension"})
    s = f"({ins}) inits ({inits}) dimension={dim.value} "
    if d:
        s += " attributes" + d
    s += " " + pr.region(op.regions[0], True)
    s += " : " + pr.functional(op.operand_types, op.result_types)
    return s


define("chlo.scan", summary="ChloOps.td", traits={QUANTIZED_AWARE},
       inherent="dimension is_reverse is_associative operandSegmentSizes resultSegmentSizes",
       syntax=Format(_parse_scan, _print_scan,
                     frozenset({"dimension", "operandSegmentSizes", "resultSegmentSizes"})))


def _num_inputs(op: Operation) -> int:
    """How many operands are scanned inputs (the rest are the carries' initial values)."""
    seg = op.attr("operandSegmentSizes") or op.attr("operand_segment_sizes")
    if seg is not None:
        return ints(seg)[0]  # type: ignore[index]
    # Without segment sizes: a scanned input has one more dimension than its body argument.
    args = op.regions[0].blocks[0].arguments
    n = 0
    for v, arg in zip(op.operands, args):
        t, at = v.type, arg.type
        if isinstance(t, TensorType) and isinstance(at, TensorType) and t.rank == at.rank + 1:
            n += 1
        else:
            break
    return n


@kernel("chlo.scan")
def scan(op: Operation, ctx: PrepareContext) -> Kernel:
    """`chlo.scan(inputs) inits(inits) dimension=d {body}`: a sequential scan.

    The body takes one slice of every input along ``dimension`` (that dimension removed) and
    the current carries, and returns the output slices followed by the new carries. Results
    are the outputs (slices stacked along ``dimension``) followed by the final carries. With
    ``is_reverse`` the positions are visited from last to first. The loop over the scan length
    is inherently sequential; the body sees whole slices.
    """
    body = ctx.region(op.regions[0])
    dim = int_attr(op, "dimension", 0)
    reverse = bool_attr(op, "is_reverse", False)
    n_in = _num_inputs(op)
    n_carry = len(op.operands) - n_in
    n_out = len(op.results) - n_carry
    out_types = [result_type(op, i) for i in range(n_out)]
    size_attr = int_attr(op, "scan_dim_size", None)
    static_len = size_attr
    if static_len is None and n_in == 0 and n_out and out_types[0].is_static:
        static_len = out_types[0].shape[dim]  # type: ignore[index]

    def run(*args: Any) -> Sequence[Any]:
        inputs = [np.asarray(a) for a in args[:n_in]]
        carries = list(args[n_in:])
        length = inputs[0].shape[dim] if inputs else static_len
        if length is None:
            raise ExecutionError("chlo.scan: cannot determine the scan length", op.location)
        steps = range(length - 1, -1, -1) if reverse else range(length)
        slices: list[list[Any]] = [[] for _ in range(n_out)]
        for i in steps:
            results = body(*[np.take(x, i, axis=dim) for x in inputs], *carries)
            for j in range(n_out):
                slices[j].append(np.asarray(results[j]))
            carries = list(results[n_out:])
        outputs = []
        for j, t in enumerate(out_types):
            if reverse:
                slices[j].reverse()
            if slices[j]:
                outputs.append(np.stack(slices[j], axis=dim).astype(t.dtype, copy=False))
            else:
                shape = [0 if s is None else s for s in t.shape]  # type: ignore[union-attr]
                shape[dim] = 0
                outputs.append(np.zeros(shape, dtype=t.dtype))
        return [*outputs, *carries]

    return run


@verifier("chlo.scan")
def _verify_chlo_scan(op: Operation, diag: Diagnostics) -> None:
    """`chlo.scan`: the body takes one slice per input (the scan dimension removed) and one
    value per init, of compatible types; the scan dimension exists and has `scan_dim_size`
    elements when given."""
    if not _c.signature(op, diag, [(ANY, "*")], [(ANY, "*")], regions=1):
        return
    seg = ints_attr(op, "operandSegmentSizes", None) or \
        ints_attr(op, "operand_segment_sizes", None)
    if not seg or len(seg) != 2 or sum(seg) != len(op.operands):
        return
    n_in = seg[0]
    inputs, inits = op.operand_types[:n_in], op.operand_types[n_in:]
    dim = int_attr(op, "dimension", 0)
    size = int_attr(op, "scan_dim_size", None)
    for i, t in enumerate(inputs):
        if t.shape is None:
            continue
        if not 0 <= dim < len(t.shape):
            diag.error(op, "C1", f"scan dimension of operand {i} is out of bounds")
            return
        if size is not None and t.shape[dim] is not None and t.shape[dim] != size:
            diag.error(op, "C2", f"invalid scan dimension size of operand {i}: "
                                 f"{t.shape[dim]} vs scan_dim_size {size}")
            return
    args = _c.region_arg_types(op, 0)
    if args is None:
        return
    if len(args) != len(op.operands):
        diag.error(op, "C3", f"expects {len(op.operands)} arguments in the body, but got "
                             f"{len(args)}")
        return
    slices = [TensorType(None if t.shape is None else
                          tuple(d for k, d in enumerate(t.shape) if k != dim), t.element_type)
              for t in inputs]
    for i, (want, got) in enumerate(zip(slices + list(inits), args)):
        if not _c.compatible(want, got):
            diag.error(op, "C3", f"operand and body argument {i} are incompatible: "
                                 f"'{_c.type_str(want)}' vs '{_c.type_str(got)}'")
            return
    _check_result_shapes(op, diag, inputs, dim, size, len(inits))


def _check_result_shapes(op: Operation, diag: Diagnostics, inputs: list, dim: int,
                         size: int | None, n_carry: int) -> None:
    """(C4) the results have the shapes of the body's returned values, the outputs with the
    scan dimension (of `scan_dim_size`, else the inputs' size) inserted, as upstream's shape
    inference says (shapes only: upstream compares no element types here)."""
    body = op.regions[0].blocks[0].operations if op.regions and op.regions[0].blocks else []
    if not body or len(body[-1].operands) != len(op.results):
        return
    returned = [v.type for v in body[-1].operands]
    if not all(isinstance(t, TensorType) and t.shape is not None for t in returned):
        return
    if size is None:
        size = next((t.shape[dim] for t in inputs if t.shape is not None
                     and t.shape[dim] is not None), None)
    n_out = len(returned) - n_carry
    inferred = [TensorType(t.shape[:dim] + (size,) + t.shape[dim:] if i < n_out else t.shape,
                           t.element_type) for i, t in enumerate(returned)]
    actual = op.result_types
    if any(isinstance(a, TensorType) and a.shape is not None and
           not _c.compatible_shapes(w.shape, a.shape) for w, a in zip(inferred, actual)):
        diag.error(op, "C4", f"inferred type(s) {_c.types_str(inferred)} are incompatible with "
                             f"return type(s) of operation {_c.types_str(actual)}")


# --- return ---------------------------------------------------------------------------------------

define("chlo.return", summary="the terminator of chlo regions",
       traits={TERMINATOR, QUANTIZED_STORAGE})
