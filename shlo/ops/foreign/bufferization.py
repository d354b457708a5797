"""The casts between tensors and buffers of MLIR's `memref` and `bufferization` dialects
(MemRefOps.td CastOp, BufferizationOps.td ToTensorOp / ToBufferOp), as upstream's
stablehlo-convert-to-signless test uses them. A buffer (`memref<...>`) is held as the numpy
array of its elements, so each of these ops is the identity at run time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ...errors import Diagnostics
from ...ir import Operation
from ...registry import Kernel, define, kernel, verifier
from ._syntax import CAST_TO, check_counts

if TYPE_CHECKING:  # pragma: no cover
    from ...interpreter.evaluator import PrepareContext

__all__: list[str] = []

NAMES = ("memref.cast", "bufferization.to_tensor", "bufferization.to_buffer")

define("memref.cast", summary="the same buffer under a more or less static type (MemRefOps.td "
       "CastOp)", inherent="", syntax=CAST_TO)
define("bufferization.to_tensor", summary="the tensor a buffer holds (BufferizationOps.td "
       "ToTensorOp)", inherent="", syntax=CAST_TO)
define("bufferization.to_buffer", summary="a buffer holding a tensor (BufferizationOps.td "
       "ToBufferOp)", inherent="", syntax=CAST_TO)


@kernel(*NAMES)
def _identity(op: Operation, ctx: PrepareContext) -> Kernel:
    """The value itself (tensors and buffers are both numpy arrays here)."""

    def run(a: Any) -> Sequence[Any]:
        return (a,)

    return run


@verifier(*NAMES)
def _verify(op: Operation, diag: Diagnostics) -> None:
    check_counts(op, diag, 1, 1)
