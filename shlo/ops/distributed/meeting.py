"""How a collective runs: meeting the group, checking and building the values it hands over,
and folding values with a reduction body (shared by the collective ops; knows no op)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from ...dtypes import is_sub_byte_int
from ...errors import Diagnostics, ExecutionError
from ...ir import Operation
from ...types import QuantizedType, TensorType, Type, element_type_for_dtype
from .._regions import check_reducer, ufunc_for
from .grid import Native, ProcessId
from .groups import plural_label, process_label

if TYPE_CHECKING:  # pragma: no cover
    from ...interpreter.evaluator import ProcessContext

__all__ = ["Values", "meet", "shared", "check_same", "zeros", "reducer", "body_dtype",
           "check_reduction_body", "where", "grid_error", "waits_at", "deadlock_message",
           "timeout_message", "gone_message"]

Values = tuple[Any, ...]
"""The operands (or results) of one process at a collective."""


def meet(op: Operation, process: ProcessContext, group: tuple[ProcessId, ...], value: Any,
         combine: Callable[[tuple[ProcessId, ...], list[Any]], list[Any]],
         cid: int = 0, native: Native | None = None) -> Any:
    """Contribute ``value`` to ``op`` in ``group``; return this process's result. ``native``
    describes the collective for engines that have it built in (:class:`~.grid.Native`)."""
    if len(group) == 1:
        return combine(group, [value])[0]
    grid = process.grid
    if grid is None:
        raise ExecutionError(f"'{op.name}' op: the group has {len(group)} processes but the "
                             f"program runs without a process grid", op.location)

    def whole_group(values: list[Any]) -> list[Any]:
        try:
            return combine(group, values)
        except ExecutionError as e:  # about the group, not the process that combined
            e.names_process = True  # type: ignore[attr-defined]
            raise

    me = (process.replica_id, process.partition_id)
    if native is None:
        return grid.rendezvous(op, group, me, value, whole_group, cid)
    return grid.rendezvous(op, group, me, value, whole_group, cid, native=native)


# --- the words of a wait that cannot complete (every engine says the same) -------------------


def where(op: Operation | None) -> str:
    """`'stablehlo.all_reduce' at model.mlir:7:3` (the op and its location)."""
    if op is None:
        return "a rendezvous"
    flc = op.location.file_line_col() if op.location is not None else None
    return f"'{op.name}'" + (f" at {flc[0]}:{flc[1]}:{flc[2]}" if flc else "")


def grid_error(op: Operation | None, message: str) -> ExecutionError:
    """An error about processes (its message names them already: ``names_process``)."""
    e = ExecutionError(message, op.location if op is not None else None)
    e.names_process = True  # type: ignore[attr-defined]
    return e


def what(op: Operation | None, me: ProcessId, detail: str = "") -> str:
    """`'stablehlo.recv' op on process (replica 0, partition 1) for a send on channel 3`."""
    name = f"'{op.name}' op" if op is not None else "a rendezvous"
    return f"{name} on {process_label(me)}{detail}"


def waits_at(op: Operation | None, detail: str = "") -> str:
    """How a waiting process is described in the list of a deadlock or timeout."""
    return f"waits at {where(op)}{detail}"


def deadlock_message(op: Operation | None, me: ProcessId, detail: str,
                     states: list[tuple[ProcessId, str]]) -> str:
    """Every live process waits and none can be satisfied: what each one does."""
    lines = [f"  {process_label(p)}: {s}" for p, s in states]
    return (f"{what(op, me, detail)}: deadlock, no process can make progress:\n"
            + "\n".join(lines))


def gone_message(op: Operation | None, me: ProcessId, gone: list[ProcessId]) -> str:
    """A member of the group finished without reaching the collective."""
    return (f"{what(op, me)} waits for {plural_label(gone)}, which finished without reaching "
            f"it (every member of a process group must run the collective the same number of "
            f"times)")


def timeout_message(op: Operation | None, me: ProcessId, timeout: float,
                    arrived: list[ProcessId] | None,
                    late: list[tuple[ProcessId, str]], detail: str = "") -> str:
    """``me`` waited ``timeout`` seconds: who arrived, who did not and what they do."""
    if arrived is not None:
        got = (f"; arrived: {_short(arrived)}" if arrived else "")
        waiting = (f"for {plural_label([p for p, _ in late])} to reach it ("
                   + ", ".join(s for _, s in late) + ")" + got)
    else:
        waiting = "for a value (" + ", ".join(f"{process_label(p)} {s}" for p, s in late) \
            + ")" if late else "for a value"
    return (f"{what(op, me, detail)} timed out after {timeout:g} s waiting {waiting}; pass a "
            f"larger timeout= (--timeout) if a process is just slow")


def _short(ps: list[ProcessId]) -> str:
    if len(ps) > 16:
        return plural_label(ps[:8])[len("processes "):] + f", ... ({len(ps)} processes)"
    return plural_label(ps)[len("processes "):] if len(ps) > 1 else plural_label(ps)[8:]


def shared(a: Any) -> np.ndarray:
    """A read-only view: one result array is handed to several processes."""
    v = np.asarray(a).view()
    v.flags.writeable = False
    return v


def _desc(a: Any) -> str:
    """`tensor<4xi64>` for a run-time array."""
    a = np.asarray(a)
    try:
        et = element_type_for_dtype(a.dtype).name
    except KeyError:
        et = str(a.dtype)
    return "tensor<" + "".join(f"{d}x" for d in a.shape) + et + ">"


def check_same(op: Operation, group: Sequence[ProcessId], values: list[Values]) -> None:
    """Every member gave operands of the same shapes and dtypes (else an ExecutionError)."""
    first = [(np.shape(x), np.asarray(x).dtype) for x in values[0]]
    if all([(np.shape(x), np.asarray(x).dtype) for x in v] == first for v in values[1:]):
        return
    lines = [f"  {process_label(p)}: " + ", ".join(_desc(x) for x in v)
             for p, v in zip(group, values)]
    raise ExecutionError(f"'{op.name}' op: the processes of the group gave operands of "
                         f"different shapes:\n" + "\n".join(lines), op.location)


def zeros(t: Type, like: Any = None) -> np.ndarray:
    """`broadcast_in_dim(constant(0 or quantize(0)), [], type)` for tensor type ``t``."""
    assert isinstance(t, TensorType)
    shape = t.shape if t.is_static else np.shape(like)
    et = t.element_type
    if isinstance(et, QuantizedType):
        zp = np.asarray(et.zero_points, dtype=np.int64)
        if et.quantization_dimension is not None and zp.size > 1:
            view = [1] * len(shape)  # type: ignore[arg-type]
            view[et.quantization_dimension] = zp.size
            zp = zp.reshape(view)
        return shared(np.broadcast_to(zp.astype(et.dtype), shape))  # type: ignore[arg-type]
    return shared(np.zeros(shape, dtype=t.dtype))  # type: ignore[arg-type]


def reducer(body: Any, dtype: np.dtype) -> Callable[[list[np.ndarray]], np.ndarray]:
    """Fold a list of arrays with the reduction ``body`` (a compiled region).

    The schedule is a left fold in group order, ``((v0 . v1) . v2) ...`` (the spec leaves the
    tree implementation-defined). A single-op body that numpy computes exactly as the spec
    does (:func:`~shlo.ops._regions.ufunc_for`) uses the ufunc, accumulating in place; any
    other body (and maximum/minimum on floats, for the order of signed zeros, and the sub-byte
    integer types, for wrapping) is called once per member on whole arrays.
    """
    name = body.single_op
    uf = ufunc_for(name, dtype) if name else None
    if is_sub_byte_int(dtype) or (
            name in ("stablehlo.maximum", "stablehlo.minimum") and dtype.kind in "fV"):
        uf = None
    if uf is not None:
        def fold(arrays: list[np.ndarray]) -> np.ndarray:
            if len(arrays) == 1:
                return np.asarray(arrays[0])
            acc = np.asarray(uf(arrays[0], arrays[1]))
            if acc.dtype != dtype:
                acc = acc.astype(dtype)
            for a in arrays[2:]:
                uf(acc, a, out=acc)
            return acc

        return fold

    def fold_body(arrays: list[np.ndarray]) -> np.ndarray:
        acc = arrays[0]
        for a in arrays[1:]:
            acc = body(acc, a)[0]
        acc = np.asarray(acc)
        return acc if acc.dtype == dtype else acc.astype(dtype)

    return fold_body


def body_dtype(body: Any) -> np.dtype:
    """The element dtype of a reduction body (`to_destination_type` of the operands)."""
    return body.block.arguments[0].type.element_type.dtype


def check_reduction_body(op: Operation, diag: Diagnostics, label: str,
                         operands: list[Type]) -> list[Type] | None:
    """The `computation` of all_reduce-like ops: one reducer of `(tensor<E>, tensor<E>) ->
    tensor<E>` applied to each operand in turn; the types it returns."""
    out = []
    for t in operands:
        rets = check_reducer(op, diag, label, 0, [t], [TensorType((), t.element_type)], [])
        if rets is None:
            return None
        out.append(rets[0])
    return out
