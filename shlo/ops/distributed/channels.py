"""send and recv (spec sections of the same names): values between processes on a channel.

A channel is identified by its channel id (:func:`~shlo.ops.distributed.groups.channel_id`). A
send puts its operands on the channel's FIFO queue without waiting; a recv takes the oldest
values, waiting for a send if there is none. Host transfers are channels between processes
too. On a process running alone (no grid) the queues are the process's own.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any

from ...attributes import StructAttr, bool_attr
from ...errors import Diagnostics, ExecutionError
from ...ir import Operation
from ...registry import QUANTIZED_AWARE, QUANTIZED_STORAGE, SIDE_EFFECTS, Kernel, define
from ...registry import inference, kernel, verifier
from ...types import TOKEN, TokenType, Type
from .. import _constraints as _c
from .feeds import check_payload_results, payload
from .grid import me
from .groups import channel_id, process_label

if TYPE_CHECKING:  # pragma: no cover
    from ...interpreter.evaluator import PrepareContext

_CHANNEL_OP = {QUANTIZED_AWARE, QUANTIZED_STORAGE, SIDE_EFFECTS}
_INHERENT = "channel_handle is_host_transfer source_target_pairs"


def _channel_type(op: Operation) -> int | None:
    """The `type` of `channel_handle` (1 DEVICE_TO_DEVICE, 2 DEVICE_TO_HOST, 3
    HOST_TO_DEVICE), None when the handle is not a struct."""
    h = op.attr("channel_handle")
    if isinstance(h, StructAttr):
        return _c.struct_int(h, "type", 0)
    return None


def _check_channel_type(op: Operation, diag: Diagnostics, to_host: int) -> bool:
    """(C1) channel_type is ``to_host``'s kind for host transfers, DEVICE_TO_DEVICE otherwise."""
    host = bool_attr(op, "is_host_transfer", False)
    t = _channel_type(op)
    if t is not None and t != (to_host if host else 1):
        want = ("DEVICE_TO_HOST" if to_host == 2 else "HOST_TO_DEVICE") if host else \
            "DEVICE_TO_DEVICE"
        diag.error(op, "C1", f"channel_type should be {want} when is_host_transfer is "
                             f"{'true' if host else 'false'}")
        return False
    return True


# --- send (spec "send") ---------------------------------------------------------------------

define("stablehlo.send", spec="send", traits=_CHANNEL_OP, inherent=_INHERENT,
       summary="put the operands on a channel (does not wait for the receiver)")


@kernel("stablehlo.send")
def send(op: Operation, ctx: PrepareContext) -> Kernel:
    """Put the operands on channel ``channel_id`` (the receiver takes them in order; a send
    does not wait)."""
    cid = channel_id(op)
    process = ctx.process
    out = (TOKEN,)

    def run(*operands: Any) -> tuple[Any, ...]:
        values = tuple(operands[:-1])
        if process.grid is None:  # one process without a grid: a local queue
            process.channels.setdefault(cid, deque()).append(values)
        else:
            process.grid.send(op, cid, me(process), values)
        return out

    return run


@inference("stablehlo.send")
def _infer_send(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """A token."""
    return [TokenType()]


@verifier("stablehlo.send")
def _verify_send(op: Operation, diag: Diagnostics) -> None:
    """send (C1): channel_type is DEVICE_TO_HOST for host transfers, DEVICE_TO_DEVICE
    otherwise; the result is a token."""
    if not _c.signature(op, diag, [(_c.TENSOR_QA, "*"), _c.TOKEN], [_c.TOKEN],
                        attrs={"channel_handle": "any"},
                        optional_attrs={"is_host_transfer": "bool"}):
        return
    _check_channel_type(op, diag, 2)


# --- recv (spec "recv") ---------------------------------------------------------------------

define("stablehlo.recv", spec="recv", traits=_CHANNEL_OP, inherent=_INHERENT,
       summary="take the oldest values sent on a channel, waiting for them")


@kernel("stablehlo.recv")
def recv(op: Operation, ctx: PrepareContext) -> Kernel:
    """Take the oldest values sent on channel ``channel_id``, waiting for them."""
    cid = channel_id(op)
    types = op.result_types[:-1]
    process = ctx.process

    def run(token: Any = None) -> tuple[Any, ...]:
        if process.grid is None:
            q = process.channels.get(cid)
            if not q:
                raise ExecutionError(f"'{op.name}' op on {process_label(me(process))}: "
                                     f"nothing was sent on channel {cid}, and no other "
                                     f"process runs", op.location)
            values = q.popleft()
        else:
            values = process.grid.recv(op, cid, me(process))
        return (*payload(op, values, types, f"the value received on channel {cid}"), TOKEN)

    return run


@verifier("stablehlo.recv")
def _verify_recv(op: Operation, diag: Diagnostics) -> None:
    """recv (C1-C4)."""
    if not _c.signature(op, diag, [_c.TOKEN], [(_c.TENSOR_QA_OR_TOKEN, "*")],
                        attrs={"channel_handle": "any"},
                        optional_attrs={"is_host_transfer": "bool"}):
        return
    if _check_channel_type(op, diag, 3):
        check_payload_results(op, diag)
