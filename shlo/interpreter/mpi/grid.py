"""The MPI grid: one StableHLO process per MPI rank (a :class:`~shlo.ops.distributed.grid.
Grid`).

Process ``(r, p)`` of an ``R x P`` grid is rank ``r * P + p`` of the grid's communicator.

* **Collectives.** Each (group, op name, channel) gets its own communicator, made the first
  time its members reach it (``MPI_Comm_create_group``, collective over the members only).
  A collective whose :class:`~shlo.ops.distributed.grid.Native` description MPI computes
  becomes MPI's non-blocking collective: ``Iallreduce``, ``Iallgather``,
  ``Ireduce_scatter_block``, ``Ialltoall``, ``Ibcast``, ``Ireduce``, and ``Isend``/``Irecv``
  pairs for collective_permute. Data movement is bitwise (any dtype moves as bytes);
  reductions are native for integers and booleans (exact in any order) and for float
  add/multiply unless the run is deterministic (MPI chooses the order). Every other case
  (bf16, fp8, int4, complex, float maximum/minimum with signed zeros and NaN, any other body,
  dynamic roots, a deterministic float sum) gathers the members' operands at the group's
  first member, which calls the op's own ``combine`` (a left fold in group order, exactly as
  the threaded grid) and sends each member its part: bitwise equal to the threaded grid.
* **Channels.** send/recv are messages on a communicator of their own, tagged with the
  channel id, to the one process whose program receives on that channel (known from the
  programs before the run).
* **Waits** poll their requests, are reported to the coordinator on rank 0 when they last,
  and have a deadline of their own (:mod:`.world`).
"""

from __future__ import annotations

import time
import zlib
from collections import deque
from typing import Any, Callable, Sequence

import numpy as np

from ...errors import ExecutionError
from ...ir import Operation
from ...ops.distributed.grid import Native, ProcessId
from ...ops.distributed.groups import process_label
from ...ops.distributed.meeting import grid_error, timeout_message
from .coordinator import op_info, op_ref
from .world import BACKSTOP, World, die

__all__ = ["MPIGrid"]

_OPS = {  # single-op body -> (MPI op for numbers, for booleans)
    "stablehlo.add": ("SUM", "LOR"),
    "stablehlo.multiply": ("PROD", "LAND"),
    "stablehlo.maximum": ("MAX", "LOR"),
    "stablehlo.minimum": ("MIN", "LAND"),
    "stablehlo.and": ("BAND", "LAND"),
    "stablehlo.or": ("BOR", "LOR"),
    "stablehlo.xor": ("BXOR", "LXOR"),
}
_EXACT = {np.dtype(t) for t in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                                "uint32", "uint64")}
_FLOATS = {np.dtype("float32"), np.dtype("float64")}
_TAG_GATHER = 1
_TAG_SCATTER = 2
_TAG_PERMUTE = 3


def _raw(a: Any) -> np.ndarray:
    """The bytes of array ``a`` (C order), as a flat uint8 array."""
    a = np.asarray(a)
    if not a.flags.c_contiguous:
        a = a.copy()
    return a.reshape(-1).view(np.uint8)


def _unraw(b: np.ndarray, like: np.ndarray) -> np.ndarray:
    return b.view(like.dtype).reshape(like.shape)


def _blocks(x: np.ndarray, axis: int, size: int) -> np.ndarray:
    """``x`` cut into ``size`` blocks along ``axis``, as ``(size, bytes per block)``: block k
    is row k. A view of ``x`` (no copy) when the blocks already lie one after the other (axis
    0 of a C-contiguous array), else one copy."""
    shape = x.shape
    v = x.reshape(shape[:axis] + (size, shape[axis] // size) + shape[axis + 1:])
    v = np.ascontiguousarray(np.moveaxis(v, axis, 0))
    return v.reshape(-1).view(np.uint8).reshape(size, -1)


def _joined(buf: np.ndarray, block: tuple[int, ...], dtype: np.dtype, axis: int) -> np.ndarray:
    """The blocks in the rows of ``buf`` (each of shape ``block``) concatenated along
    ``axis``: a view of ``buf`` along axis 0, else one copy (as np.concatenate)."""
    size = buf.shape[0]
    b = buf.view(dtype).reshape((size,) + block)
    out = block[:axis] + (size * block[axis],) + block[axis + 1:]
    return b.reshape(out) if axis == 0 else np.moveaxis(b, 0, axis).reshape(out)


class MPIGrid:
    """The grid of one run as rank ``rank`` of communicator ``comm`` sees it."""

    def __init__(self, w: World, comm: Any, num_replicas: int, num_partitions: int,
                 timeout: float | None, deterministic: bool,
                 receivers: dict[int, set[int]]) -> None:
        self.w = w
        self.MPI = w.MPI
        self.comm = comm
        self.rank = comm.Get_rank()
        self.num_replicas = num_replicas
        self.num_partitions = num_partitions
        self.timeout = timeout
        self.deterministic = deterministic
        self.receivers = receivers
        # Communicators are made once per MPI job and kept by the world (making one is a
        # blocking collective, and blocking MPI calls spin: with more ranks than cores,
        # making them for every run cost seconds): channels on one of their own, and one per
        # (group, op name, channel id).
        cache = w.communicators.setdefault(id(comm), {})
        self.p2p = cache.get("p2p")
        if self.p2p is None:
            self.p2p = cache["p2p"] = comm.Dup()  # every rank of the grid, at its first run
        self._comms: dict[tuple[Any, ...], Any] = cache
        self._seq: dict[tuple[Any, ...], int] = {}
        self._pending: list[Any] = []
        self._local: dict[int, deque[tuple[Any, ...]]] = {}

    def flat(self, p: ProcessId) -> int:
        return p[0] * self.num_partitions + p[1]

    def pid(self, rank: int) -> ProcessId:
        return divmod(rank, self.num_partitions)

    # -- waiting --------------------------------------------------------------------------

    def _deadline(self) -> float | None:
        return None if self.timeout is None else time.monotonic() + self.timeout + BACKSTOP

    def _wait(self, test: Callable[[], bool], op: Operation | None, key: Any,
              members: list[int] | None, detail: str = "") -> None:
        """Poll ``test`` until it is true; report the wait when it lasts; never hang."""
        reported: list[bool] = []

        def report() -> None:
            reported.append(True)
            self.w.report({"t": "block", "rank": self.rank, "key": key, "members": members,
                           "op": op_info(op), "detail": detail, "seq": self.progress()})

        if not self.w.poll(test, self._deadline(), report):
            late = [] if members is None else [(self.pid(m), "unknown") for m in members
                                               if m != self.rank]
            die(str(grid_error(op, timeout_message(
                op, self.pid(self.rank), self.timeout or 0.0, None, late, detail)
                + " (rank 0's coordinator did not answer)")))
        if reported:
            self.w.report({"t": "run", "rank": self.rank})

    def _requests(self, reqs: list[Any], op: Operation | None, key: Any,
                  members: list[int]) -> None:
        Testall = self.MPI.Request.Testall
        self._wait(lambda: Testall(reqs), op, key, members)

    def _receive(self, comm: Any, source: int, tag: int, op: Operation | None, key: Any,
                 members: list[int] | None, detail: str = "") -> Any:
        """A pickled message from ``source`` (MPI.ANY_SOURCE: anyone) with ``tag``."""
        box: list[Any] = []

        def test() -> bool:
            msg = comm.improbe(source=source, tag=tag)
            if msg is None:
                return False
            box.append(msg.recv())
            return True

        self._wait(test, op, key, members, detail)
        return box[0]

    def finish(self) -> None:
        """After every process of the grid ran its program: a value sent to this rank and never
        received ends the job, located at its send (as the threaded grid reports it); then wait
        until every message this rank sent has left."""
        if self.receivers:
            req = self.p2p.Ibarrier()
            self._wait(req.Test, None, ("finish",), None, " for the other processes to finish")
            self._unreceived()
        if self._pending:
            Testall = self.MPI.Request.Testall
            self._wait(lambda: Testall(self._pending), None, ("sends",), None,
                       " for its sends to be received")
            self._pending = []

    def _unreceived(self) -> None:
        left: list[tuple[int, int, Any]] = [(c, self.rank, info) for c, q in self._local.items()
                                            for _, info in q]
        status = self.MPI.Status()
        while True:
            msg = self.p2p.improbe(source=self.MPI.ANY_SOURCE, tag=self.MPI.ANY_TAG,
                                   status=status)
            if msg is None:
                break
            _, info = msg.recv()
            left.append((status.Get_tag(), status.Get_source(), info))
        if not left:
            return
        c, sender, info = left[0]
        name = f"'{info[0]}' op" if info else "a send"
        ref = op_ref(info)
        die(str(grid_error(ref, f"{name} on {process_label(self.pid(sender))}: the value sent "
                                f"on channel {c} was never received"
                                + (f" ({len(left)} values in all)" if len(left) > 1 else ""))))

    # -- collectives ----------------------------------------------------------------------

    def progress(self) -> dict[tuple[Any, ...], int]:
        """How many times this rank reached each collective (its key without the count):
        the coordinator tells a member that finished after a collective from one that
        finished without reaching it."""
        return {(hash(m), name, cid): n for (m, name, cid), n in self._seq.items()}

    def _group_comm(self, op: Operation | None, members: tuple[int, ...], name: str,
                    cid: int, key: Any) -> Any:
        """The communicator of ``members`` for (op name, channel), made on first use."""
        k = (members, name, cid)
        c = self._comms.get(k)
        if c is None:
            tag = zlib.crc32(repr(k).encode()) % max(self.w.tag_ub - 100, 1) + 100
            group = self.comm.Get_group().Incl(list(members))
            mlist = list(members)
            self.w.report({"t": "block", "rank": self.rank, "key": key, "members": mlist,
                           "op": op_info(op), "detail": ""})
            c = self._comms[k] = self.comm.Create_group(group, tag=tag)
            self.w.report({"t": "run", "rank": self.rank})
        return c

    def rendezvous(self, op: Operation | None, group: Sequence[ProcessId], me: ProcessId,
                   value: Any, combine: Callable[[list[Any]], list[Any]],
                   channel_id: int = 0, native: Native | None = None) -> Any:
        """See :meth:`shlo.ops.distributed.grid.Grid.rendezvous`."""
        name = op.name if op is not None else ""
        members = tuple(self.flat(p) for p in group)
        base = (members, name, channel_id)
        n = self._seq.get(base, 0)
        self._seq[base] = n + 1
        key = (hash(members), name, channel_id, n)
        comm = self._group_comm(op, members, name, channel_id, key)
        mlist = list(members)
        if native is not None:
            out = self._native(op, comm, native, value, key, mlist)
            if out is not None:
                return out
        return self._generic(op, comm, value, combine, key, mlist)

    def _generic(self, op: Operation | None, comm: Any, value: Any,
                 combine: Callable[[list[Any]], list[Any]], key: Any,
                 members: list[int]) -> Any:
        """Gather at the group's first member, combine there, send each member its part."""
        i = comm.Get_rank()
        if i != 0:
            self._pending.append(comm.isend(value, dest=0, tag=_TAG_GATHER))
            return self._receive(comm, 0, _TAG_SCATTER, op, key, members)
        values = [value] + [self._receive(comm, k, _TAG_GATHER, op, key, members)
                            for k in range(1, comm.Get_size())]
        results = combine(values)
        for k in range(1, len(results)):
            self._pending.append(comm.isend(results[k], dest=k, tag=_TAG_SCATTER))
        self._tidy()
        return results[0]

    def _tidy(self) -> None:
        if len(self._pending) > 64:
            self._pending = [r for r in self._pending if not r.Test()]

    def _mpi_op(self, native: Native) -> Any:
        """MPI's reduction for the body, or None when MPI would not compute it as we do."""
        dtype = np.dtype(native.dtype) if native.dtype is not None else None
        ops = _OPS.get(native.reduction or "")
        if ops is None or dtype is None:
            return None
        if dtype in _EXACT:
            return getattr(self.MPI, ops[1] if dtype == np.bool_ else ops[0])
        if dtype in _FLOATS and not self.deterministic and native.reduction in (
                "stablehlo.add", "stablehlo.multiply"):
            return getattr(self.MPI, ops[0])
        return None

    def _native(self, op: Operation | None, comm: Any, native: Native, value: Any, key: Any,
                members: list[int]) -> Any:
        """MPI's own collective, or None (then the generic path)."""
        kind = native.kind
        size = comm.Get_size()
        i = comm.Get_rank()
        reqs: list[Any] = []
        outs: list[Any] = []
        if kind in ("all_reduce", "reduce_scatter", "reduce"):
            mop = self._mpi_op(native)
            if mop is None:
                return None
            xs = value[0] if kind == "reduce" else value
            for x in xs:
                a = np.asarray(x).astype(native.dtype, copy=False)
                if kind == "reduce_scatter":
                    if a.shape[native.dim] % size:
                        return None  # combine reports it
                    a = np.moveaxis(a, native.dim, 0)
                a = np.ascontiguousarray(a) if a.ndim else a.copy()
                if kind == "all_reduce":
                    out = np.empty_like(a)
                    reqs.append(comm.Iallreduce(a, out, op=mop))
                elif kind == "reduce_scatter":
                    out = np.empty((a.shape[0] // size,) + a.shape[1:], a.dtype)
                    reqs.append(comm.Ireduce_scatter_block(a, out, op=mop))
                else:
                    out = np.empty_like(a) if i == native.root else None
                    reqs.append(comm.Ireduce(a, out, op=mop, root=native.root))
                outs.append(out)
            self._requests(reqs, op, key, members)
            if kind == "reduce_scatter":
                return tuple(np.ascontiguousarray(np.moveaxis(o, 0, native.dim)) for o in outs)
            if kind == "reduce":
                zeros = native.zeros() if native.zeros is not None else ()
                return tuple(o if o is not None else z for o, z in zip(outs, zeros)) \
                    if i != native.root else tuple(outs)
            return tuple(outs)
        # The data movements receive into one buffer whose rows are the members' blocks, and
        # cut and join blocks without copying where the layout allows it (dimension 0): an
        # all_to_all of 40 MB then needs the operand and the result, nothing more.
        if kind == "all_gather":
            for x in value:
                x = np.asarray(x)
                buf = np.empty((size, x.nbytes), np.uint8)
                reqs.append(comm.Iallgather(_raw(x), buf))
                outs.append((x.shape, x.dtype, buf))
            self._requests(reqs, op, key, members)
            return tuple(_joined(b, shape, dtype, native.dim) for shape, dtype, b in outs)
        if kind == "all_to_all":
            for x in value:
                x = np.asarray(x)
                if x.shape[native.split] % size:
                    return None
                send = _blocks(x, native.split, size)
                recv = np.empty_like(send)
                reqs.append(comm.Ialltoall(send, recv))
                block = list(x.shape)
                block[native.split] //= size
                outs.append((tuple(block), x.dtype, recv))
            self._requests(reqs, op, key, members)
            return tuple(_joined(r, block, dtype, native.dim) for block, dtype, r in outs)
        if kind == "broadcast":
            for x in value[0]:
                x = np.asarray(x)
                buf = _raw(x).copy()
                reqs.append(comm.Ibcast(buf, root=native.root))
                outs.append((x, buf))
            self._requests(reqs, op, key, members)
            return tuple(_unraw(b, x) for x, b in outs)
        if kind == "permute":
            got: list[Any] = []
            for x in value:
                x = np.asarray(x)
                if native.dest is not None:
                    reqs.append(comm.Isend(_raw(x), dest=native.dest, tag=_TAG_PERMUTE))
                if native.source is not None:
                    buf = np.empty(x.nbytes, np.uint8)
                    reqs.append(comm.Irecv(buf, source=native.source, tag=_TAG_PERMUTE))
                    got.append((x, buf))
            self._requests(reqs, op, key, members)
            if native.source is None:
                return native.zeros() if native.zeros is not None else None
            return tuple(_unraw(b, x) for x, b in got)
        return None

    # -- channels -------------------------------------------------------------------------

    def _receiver(self, op: Operation | None, channel_id: int) -> int:
        ranks = self.receivers.get(channel_id, set())
        if len(ranks) != 1:
            who = ", ".join(process_label(self.pid(r)) for r in sorted(ranks)) or "none"
            raise ExecutionError(
                f"'{op.name if op else 'send'}' op: the MPI engine sends a channel's values "
                f"to the one process whose program receives on it; channel {channel_id} is "
                f"received by {who} (run it on the threads engine)",
                op.location if op is not None else None)
        return next(iter(ranks))

    def send(self, op: Operation | None, channel_id: int, me: ProcessId,
             values: tuple[Any, ...]) -> None:
        """A message to the channel's receiver, tagged with the channel id (never waits)."""
        dest = self._receiver(op, channel_id)
        if dest == self.rank:
            self._local.setdefault(channel_id, deque()).append((values, op_info(op)))
            return
        if channel_id >= self.w.tag_ub:
            raise ExecutionError(f"channel id {channel_id} is beyond MPI's largest tag "
                                 f"({self.w.tag_ub})", op.location if op else None)
        # the sending op travels along: a value never received is reported where it was sent
        self._pending.append(self.p2p.isend((tuple(np.asarray(v) for v in values),
                                             op_info(op)), dest=dest, tag=channel_id))
        self._tidy()

    def recv(self, op: Operation | None, channel_id: int, me: ProcessId) -> tuple[Any, ...]:
        """The oldest values sent on the channel, waiting for them."""
        q = self._local.get(channel_id)
        if q:
            return q.popleft()[0]
        return self._receive(self.p2p, self.MPI.ANY_SOURCE, channel_id, op, ("recv", channel_id),
                             None, f" for a send on channel {channel_id}")[0]
