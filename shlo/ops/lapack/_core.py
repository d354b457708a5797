"""Calling LAPACK as jaxlib does: the routines of scipy's `cython_lapack` / `cython_blas`.

jaxlib's CPU kernels (jaxlib/cpu/lapack_kernels.cc) call the function pointers scipy exports
from `scipy.linalg.cython_lapack` and `cython_blas`. shlo calls the same pointers (through
ctypes), with the same arguments and workspace sizes, so results are bit for bit those of XLA on
the same machine. A kernel sees its operands and results as *buffers* in the layouts the op gives
(`operand_layouts`/`result_layouts`: jaxlib asks for column-major matrices, batch dimensions
outermost); :func:`operand` and :func:`result` convert between the op's logical arrays and those
buffers, so another layout would be honoured as XLA would honour it. One LAPACK call per batch
element (LAPACK works on one matrix), never a loop over elements.
"""

from __future__ import annotations

import ctypes
import math
from functools import lru_cache
from typing import Any, Callable, Sequence

import numpy as np

from ...errors import ExecutionError
from ...types import TensorType
from ..custom_call import CustomCall

__all__ = ["routine", "letter", "operand", "result", "new_result", "batch_count", "Batch", "each",
           "i32", "char", "flag", "lwork_of", "real_dtype", "DTYPES"]

DTYPES = {"s": np.dtype(np.float32), "d": np.dtype(np.float64), "c": np.dtype(np.complex64),
          "z": np.dtype(np.complex128)}
"""LAPACK's type letters."""


def real_dtype(p: str) -> np.dtype:
    return np.dtype(np.float32) if p in "sc" else np.dtype(np.float64)


_get_name = ctypes.pythonapi.PyCapsule_GetName
_get_name.restype, _get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype, _get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]


@lru_cache(maxsize=None)
def routine(name: str, nargs: int) -> Callable[..., None]:
    """The LAPACK/BLAS routine ``name`` (`dgetrf`) of scipy, taking ``nargs`` pointers.

    The argument count is checked against the signature scipy declares, so a wrong call is an
    error rather than a crash."""
    try:
        from scipy.linalg import cython_blas, cython_lapack
    except ImportError as e:  # pragma: no cover - scipy is a dependency
        raise ExecutionError(f"LAPACK custom calls need scipy ({e})") from e
    capsule = cython_lapack.__pyx_capi__.get(name) or cython_blas.__pyx_capi__.get(name)
    if capsule is None:
        raise ExecutionError(f"scipy provides no LAPACK/BLAS routine {name}")
    signature = _get_name(capsule)
    declared = signature.decode().split("(", 1)[1].count(",") + 1
    if declared != nargs:
        raise ExecutionError(f"LAPACK routine {name}: scipy declares {declared} arguments "
                             f"({signature.decode()}), shlo passes {nargs}")
    pointer = _get_pointer(capsule, signature)
    return ctypes.CFUNCTYPE(None, *([ctypes.c_void_p] * nargs))(pointer)


def letter(call: CustomCall) -> str:
    """The type letter of a `lapack_<p><routine>_ffi` target."""
    p = call.call_target_name[len("lapack_")]
    if p not in DTYPES:
        raise call.error("not a LAPACK target name (lapack_[sdcz]<routine>_ffi)")
    return p


def flag(call: CustomCall, name: str, allowed: str) -> str:
    """A LAPACK character flag: jaxlib passes them as ui8 ASCII codes in the FFI attributes."""
    cfg = call.backend_config
    if not hasattr(cfg, "get") or cfg.get(name) is None:
        raise call.error(f"missing the FFI attribute {name!r} (one of {', '.join(allowed)}, as "
                         f"a ui8 ASCII code in mhlo.backend_config)")
    v = cfg[name]
    c = chr(v) if isinstance(v, int) else str(v)
    if c not in allowed:
        raise call.error(f"FFI attribute {name} = {v!r} ({c!r}): expected one of "
                         f"{', '.join(allowed)}")
    return c


def int_attr(call: CustomCall, name: str) -> int:
    cfg = call.backend_config
    if not hasattr(cfg, "get") or cfg.get(name) is None:
        raise call.error(f"missing the FFI attribute {name!r}")
    return int(cfg[name])


def i32(v: int) -> np.ndarray:
    return np.array([v], dtype=np.int32)


def char(c: str) -> np.ndarray:
    return np.array([ord(c)], dtype=np.uint8)


def batch_count(shape: Sequence[int]) -> int:
    """jaxlib's SplitBatch2D: every dimension but the last two is batch."""
    return math.prod(shape[:-2])


def _layout(layouts: Any, i: int, rank: int) -> tuple[int, ...]:
    lay = layouts[i] if layouts is not None and i < len(layouts) else None
    return tuple(lay) if lay is not None and len(lay) == rank else tuple(range(rank - 1, -1, -1))


def operand(call: CustomCall, i: int, x: np.ndarray, count: int) -> np.ndarray:
    """Operand ``i`` as a writable buffer in its layout, shaped ``(count, -1)``: row b is the
    memory of batch element b (a column-major matrix for jaxlib's layouts)."""
    x = np.asarray(x)
    t = call.operand_types[i]
    if isinstance(t, TensorType) and x.dtype != t.dtype:
        x = x.astype(t.dtype)
    major_to_minor = _layout(call.operand_layouts, i, x.ndim)[::-1]
    buf = np.array(np.transpose(x, major_to_minor), order="C", copy=True)
    return buf.reshape(count, -1) if count else buf.reshape(0, max(1, buf.size))


def new_result(call: CustomCall, i: int, count: int) -> np.ndarray:
    """A zero-filled buffer for result ``i``, shaped ``(count, -1)``."""
    t = call.result_types[i]
    if not isinstance(t, TensorType) or not t.is_static:
        raise call.error(f"result #{i} must be a statically shaped tensor")
    n = math.prod(t.shape)  # type: ignore[arg-type]
    return np.zeros((count, n // count if count else 0), dtype=t.dtype)


def result(call: CustomCall, i: int, buf: np.ndarray) -> np.ndarray:
    """The logical value of result ``i`` from its buffer (the inverse of :func:`operand`)."""
    t = call.result_types[i]
    shape = tuple(t.shape)  # type: ignore[union-attr, arg-type]
    major_to_minor = _layout(call.result_layouts, i, len(shape))[::-1]
    arr = buf.reshape([shape[d] for d in major_to_minor])
    out = np.transpose(arr, np.argsort(major_to_minor))
    return out if out.flags.c_contiguous else out.copy(order="C")


class Batch:
    """A ``(count, k)`` buffer whose row b is passed for batch element b (``offset`` elements
    in: gtsv's `dl` starts at element 1)."""

    __slots__ = ("base", "step")

    def __init__(self, buf: np.ndarray, offset: int = 0) -> None:
        self.base = buf.ctypes.data + offset * buf.itemsize
        self.step = buf.shape[1] * buf.itemsize if buf.ndim == 2 else 0


def each(fn: Callable[..., None], count: int, *args: Any,
         only: Sequence[int] | None = None) -> None:
    """Call ``fn`` once per batch element (those in ``only`` when given): :class:`Batch`
    arguments advance by one element's buffer, arrays are passed as they are (scalars,
    workspaces), None is a null pointer."""
    keep = [a for a in args if isinstance(a, np.ndarray)]  # alive during the calls
    fixed = [a.ctypes.data if isinstance(a, np.ndarray) else a for a in args]
    batched = [(k, a) for k, a in enumerate(args) if isinstance(a, Batch)]
    for b in (range(count) if only is None else only):
        for k, a in batched:
            fixed[k] = a.base + b * a.step
        fn(*fixed)
    del keep


def lwork_of(work: np.ndarray) -> int:
    """The optimal workspace size a `lwork = -1` query wrote into ``work[0]``."""
    return max(1, int(np.real(work[0])))
