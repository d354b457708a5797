"""Resource blobs: the data of `dense_resource<key>` attributes (MLIR's `AsmResourceBlob`), from a
`{-# dialect_resources: {builtin: {...}} #-}` section of program text or from a bytecode resource
section. :class:`shlo.attributes.DenseResourceAttr` is the attribute that refers to them (layer 0).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .types import QuantizedType, TensorType, format_type

__all__ = ["ELIDED_RESOURCE", "ResourceUnavailable", "ResourceBlob", "ResourceHandle",
           "elements_from_raw", "raw_layout"]

ELIDED_RESOURCE = "__elided__"
"""The key MLIR prints for a resource whose data it left out (--mlir-elide-resource-strings-if-
larger)."""


class ResourceUnavailable(ValueError):
    """The data of a `dense_resource` is not in the program (elided, or never defined)."""


class ResourceBlob:
    """The bytes of one resource blob and their alignment (MLIR's `AsmResourceBlob`). ``data()``
    is a read-only uint8 view of the bytes, never a copy. :class:`shlo.syntax.dense.HexBlob` is
    the same blob still in the program's text, decoded on first use."""

    __slots__ = ("alignment", "_data")

    def __init__(self, data: Any, alignment: int = 1) -> None:
        self.alignment = alignment
        self._data: np.ndarray | None = np.frombuffer(data, np.uint8)

    @property
    def nbytes(self) -> int:
        return len(self.data())

    def data(self) -> np.ndarray:
        return self._data  # type: ignore[return-value]

    def hex(self) -> str:
        """The blob as MLIR's text spells it: `"0x` + alignment (u32, little endian) + data`"`."""
        return '"0x' + (self.alignment.to_bytes(4, "little") + self.data().tobytes()).hex().upper() \
            + '"'

    def __copy__(self) -> "ResourceBlob":
        return self  # immutable: copies of a module share their blobs

    def __deepcopy__(self, memo: dict) -> "ResourceBlob":
        return self

    def __reduce__(self) -> tuple:
        return (ResourceBlob, (self.data().tobytes(), self.alignment))


class ResourceHandle:
    """One key of the `builtin` group of a `{-# dialect_resources: {...} #-}` section (or of a
    bytecode resource section); every attribute naming the key shares the handle. ``blob`` is
    None for `__elided__` and for keys the program never defines."""

    __slots__ = ("key", "blob")

    def __init__(self, key: str, blob: ResourceBlob | None = None) -> None:
        self.key = key
        self.blob = blob

    def __copy__(self) -> "ResourceHandle":
        return self

    def __deepcopy__(self, memo: dict) -> "ResourceHandle":
        return self


def raw_layout(t: TensorType, nbytes: int) -> tuple[np.dtype, tuple[int, ...], bool]:
    """(dtype, shape, splat) of MLIR's raw data of ``nbytes`` for static tensor type ``t``:
    all elements (i1 one byte each), or one element for a splat; ValueError otherwise."""
    et = t.element_type
    dtype = et.storage_type.dtype if isinstance(et, QuantizedType) else et.dtype
    shape = tuple(t.shape)  # type: ignore[arg-type]
    n = int(np.prod(shape, dtype=np.int64))
    size = dtype.itemsize
    if nbytes == n * size or nbytes == size:
        return dtype, shape, nbytes != n * size
    raise ValueError(f"its blob holds {nbytes} bytes, {format_type(t)} needs {n * size}"
                     + (f" (or {size} for a splat)" if n > 1 else ""))


def elements_from_raw(t: TensorType, raw: np.ndarray) -> np.ndarray:
    """The elements of ``t`` in the raw data ``raw`` (uint8; see :func:`raw_layout`), as a view
    of it: never a copy."""
    dtype, shape, splat = raw_layout(t, len(raw))
    arr = (raw != 0) if dtype == np.bool_ else raw.view(dtype)
    return np.broadcast_to(arr.reshape(()), shape) if splat else arr.reshape(shape)
