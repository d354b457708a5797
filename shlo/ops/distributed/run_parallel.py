"""`interpreter.run_parallel`: the interpreter dialect's test op that runs functions on a process
grid (upstream's `stablehlo/reference/InterpreterOps.td`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from ...attributes import ArrayAttr
from ...errors import Diagnostics
from ...ir import Operation, function_type
from ...registry import QUANTIZED_AWARE, SIDE_EFFECTS, Kernel, define, kernel, verifier
from ...types import TensorType
from .. import _constraints as _c

if TYPE_CHECKING:  # pragma: no cover
    from ...interpreter.evaluator import PrepareContext

define("interpreter.run_parallel", traits={QUANTIZED_AWARE, SIDE_EFFECTS},
       summary="run `programs` (a row of functions per replica) on a process grid",
       inherent="programs infeed")


@kernel("interpreter.run_parallel")
def run_parallel(op: Operation, ctx: PrepareContext) -> Kernel:
    """Run ``programs`` (one row of functions per replica, one function per partition) on a
    new process grid started by the process's engine (``ctx.process.engine``).

    Operands are the processes' arguments one process after the other (flattened order),
    results likewise. ``infeed`` lists functions whose results form one infeed queue shared by
    the whole grid (upstream's behaviour). Outfeed values go to the running process's outfeed;
    check failures and probes of the grid's processes are the running process's.
    """
    rows = [[s.name for s in row] for row in op.attr("programs")]
    if not rows or not rows[0] or any(len(r) != len(rows[0]) for r in rows):
        raise ValueError("`programs` must be a non-empty rectangle of function symbols")
    num_replicas, num_partitions = len(rows), len(rows[0])
    names = [n for row in rows for n in row]
    if ctx.module is None:
        raise ValueError("no module to look up the programs in")
    funcs = ctx.module.functions
    for n in names:
        if n not in funcs:
            raise ValueError(f"function @{n} is not defined")
    counts = [len(function_type(funcs[n]).inputs) for n in names]
    feeds = [ctx.function(s.name) for s in (op.attr("infeed") or ())]
    parent = ctx.process

    def run(*inputs: Any) -> Sequence[Any]:
        queue = [f()[0] for f in feeds]
        args, k = [], 0
        for c in counts:
            args.append(list(inputs[k:k + c]))
            k += c
        results, outfeeds = parent.engine.run_programs(
            ctx, names, num_replicas, num_partitions, args, [queue] * len(names), parent=parent)
        for o in outfeeds:
            parent.outfeed.extend(o)
        return [v for res in results for v in res]

    return run


@verifier("interpreter.run_parallel")
def _verify_run_parallel(op: Operation, diag: Diagnostics) -> None:
    """A non-empty rectangular `programs` grid of functions whose inputs and results add up to
    the op's, and `infeed` functions that each return one tensor."""
    programs = op.attr("programs")
    rows = [list(r) for r in programs] if isinstance(programs, ArrayAttr) else None
    if rows is None:
        return
    if not rows:
        diag.error(op, "", "`programs` attribute cannot be empty")
        return
    for r in rows:
        if len(r) != len(rows[0]):
            diag.error(op, "", f"Sizes of second dimension of `programs` should all match "
                               f"{len(rows[0])} but got {len(r)}")
            return
    n_in = n_out = 0
    for r in rows:
        for ref in r:
            name = getattr(ref, "name", None)
            func = _c.lookup_function(op, diag, name)
            if func is None:
                diag.error(op, "", f'Function "{name}" not found')
                return
            ft = _c.function_type_of(func)
            if ft is not None:
                n_in += len(ft.inputs)
                n_out += len(ft.results)
    if len(op.operands) != n_in:
        diag.error(op, "", f"Number of inputs ({len(op.operands)}) should match the sum of the "
                           f"number of inputs of all programs ({n_in})")
        return
    if len(op.results) != n_out:
        diag.error(op, "", f"Number of results ({len(op.results)}) should match the sum of the "
                           f"number of results of all programs ({n_out})")
        return
    infeed = op.attr("infeed")
    if infeed is None:
        return
    feeds = list(infeed) if isinstance(infeed, ArrayAttr) else []
    if not feeds:
        diag.error(op, "", "infeed attribute is optional or should not be empty")
        return
    for ref in feeds:
        name = getattr(ref, "name", None)
        func = _c.lookup_function(op, diag, name)
        if func is None:
            diag.error(op, "", f'Function "{name}" not found')
            return
        ft = _c.function_type_of(func)
        if ft is None:
            continue
        if len(ft.results) != 1:
            diag.error(op, "", f'Function "{name}" should return 1 tensor but returns '
                               f'{len(ft.results)}')
            return
        if not isinstance(ft.results[0], TensorType):
            diag.error(op, "", f'Function "{name}" should return a tensor type, but instead '
                               f"returns '{_c.type_str(ft.results[0])}'")
            return
