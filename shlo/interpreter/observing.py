"""What an observed run's generated code tells the outside (:class:`Observer`,
:class:`Recorder`), and where a run stopped (:func:`failing_step`, read from the generated
code's frames: used to locate errors, to tell a recorder and by the time limit)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from ..ir import Operation

if TYPE_CHECKING:  # pragma: no cover
    from .evaluator import CompiledBlock, ProcessContext

__all__ = ["GENERATED", "FailedStep", "Observer", "Recorder", "failing_step"]

GENERATED = "<shlo prepared block>"
"""The file name of the generated code (what profilers and tracebacks show)."""


class Recorder(Protocol):
    """One process's recording of a run, called by the generated code of an observed
    preparation (:class:`Observer`). ``key`` is the op's number (``Observer.key``),
    ``iteration`` its executions so far within the enclosing op's current execution (the
    iteration of a `while` body, the call of a region by its op's kernel), ``start`` the
    clock (``time.perf_counter``) when it began."""

    def enter(self, block: object) -> int:
        """A generated function begins: the iteration of its top-level ops (the times
        ``block`` was entered before within the innermost open op)."""
        ...

    def record(self, key: int, iteration: int, start: float, operands: tuple[Any, ...],
               results: list[Any]) -> float:
        """An op running no other op ran; returns the clock (the next op's start)."""
        ...

    def constant(self, key: int, iteration: int, start: float, value: Any) -> float:
        """A `constant` op (the same ``value`` each time it runs); returns the clock."""
        ...

    def open(self, key: int, iteration: int, start: float) -> int:
        """An op that runs other ops (regions, callees) begins; returns its slot."""
        ...

    def close(self, slot: int, operands: tuple[Any, ...], results: list[Any]) -> float:
        """The op of ``slot`` ended; returns the clock."""
        ...

    def failed(self, key: int, iteration: int, start: float | None) -> None:
        """The op raised (the run stops); ``start``: when it began, if known."""
        ...


class Observer(Protocol):
    """Watches a run op by op (the hook of :mod:`shlo.debug`: trace, profile, diff).

    A context prepared with an observer emits the bookkeeping into the generated code: each
    generated function asks ``recorder(process)`` for the run's :class:`Recorder` when it
    starts, and every op is followed by a call recording it (its operands, results, times and
    iteration; loops count their iterations in local variables). Loops stay compiled and small
    callees inlined, so an observed run computes exactly what an unobserved one does (only
    the in-place buffer updates of loops are left out: recorded values are never written
    again). Every run prepared without an observer is left as it was: observing costs
    nothing when it is off.
    """

    def key(self, op: Operation) -> int:
        """The number naming ``op`` in the recorder's calls (asked once, while preparing)."""
        ...

    def recorder(self, process: ProcessContext) -> Recorder: ...


class FailedStep(NamedTuple):
    """Where a run stopped: the innermost ``op`` whose step raised, the generated function's
    ``block``, the op's ``iteration`` and the `while` ops around it, outermost first, with
    the iteration each was in (None where not counted: runs prepared without ``counted``,
    loops run by kernels), and in an observed run the clock when the op began."""

    op: Operation
    block: CompiledBlock
    iteration: int | None
    loops: tuple[tuple[Operation, int | None], ...]
    start: float | None = None  # (observed runs) the clock when the op began


def failing_step(e: BaseException) -> FailedStep | None:
    """Where ``e`` was raised, read from the generated code's frames in its traceback (their
    line numbers name the ops; counted loops keep their iteration counters in locals)."""
    tb = e.__traceback__
    found: FailedStep | None = None
    loops: list[tuple[Operation, int | None]] = []
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_code.co_filename == GENERATED:
            g = frame.f_globals
            op = g["_line_ops"].get(tb.tb_lineno)
            if op is not None:
                if found is not None and found.op.name == "stablehlo.while" and \
                        not any(w is found.op for w, _ in loops):
                    loops.append((found.op, None))  # a loop its kernel runs
                it_expr, inside = g["_line_ctx"].get(tb.tb_lineno, ("", ()))
                local = frame.f_locals
                loops.extend((w, local.get(n)) for w, n in inside)
                iteration = 0 if it_expr == "0" else local.get(it_expr)
                found = FailedStep(op, g["_self"], iteration, (), local.get("_t"))
        tb = tb.tb_next
    return None if found is None else found._replace(loops=tuple(loops))
