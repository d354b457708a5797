"""MLIR bytecode <-> IR, and StableHLO portable artifacts (VHLO bytecode of every version).

    module = shlo.bytecode.load_bytes(data)            # text or bytecode; VHLO -> StableHLO
    data = shlo.bytecode.serialize(module, "1.8.0")    # a portable artifact for StableHLO 1.8.0
    raw = shlo.bytecode.write_bytecode(module)         # the IR as it is, as MLIR bytecode

:func:`load_bytes` is what `shlo.load` / `shlo.parse` use for bytes: bytecode (magic `ML\\xefR`)
is read, and a VHLO program (a portable artifact) is upgraded to the current version and
converted to StableHLO, unless ``keep_vhlo``. See docs/bytecode.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .encoding import MAGIC, BytecodeError

if TYPE_CHECKING:  # pragma: no cover
    from ..ir import Module
    from .portable import (
        DeserializeError, deserialize_portable_artifact, portable_artifact_version,
        serialize_portable_artifact,
    )
    from .reader import BytecodeReader, read_module
    from .writer import WriteError, write_bytecode

# The reader, writer and VHLO machinery are imported on first use (PEP 562): `shlo run` of a
# text file asks this package only whether its input is bytecode or a jax.export artifact.
_LAZY = {
    "DeserializeError": "portable", "deserialize_portable_artifact": "portable",
    "portable_artifact_version": "portable", "serialize_portable_artifact": "portable",
    "BytecodeReader": "reader", "read_module": "reader",
    "WriteError": "writer", "write_bytecode": "writer",
}


def __getattr__(name: str) -> Any:
    sub = _LAZY.get(name)
    if sub is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{sub}"), name)
    globals()[name] = value
    return value

__all__ = ["is_bytecode", "load_bytes", "serialize", "deserialize", "write_bytecode",
           "read_module", "BytecodeReader", "BytecodeError", "DeserializeError", "WriteError",
           "portable_artifact_version", "MAGIC"]


def is_bytecode(data: bytes | bytearray | memoryview) -> bool:
    """Whether ``data`` starts with the MLIR bytecode magic number."""
    return bytes(data[:4]) == MAGIC


def load_bytes(data: bytes | bytearray | memoryview, filename: str | None = None,
               keep_vhlo: bool = False) -> Module:
    """The module in ``data``: MLIR bytecode (a VHLO program is converted to StableHLO unless
    ``keep_vhlo``), a serialized `jax.export.Exported` (its module) or program text (UTF-8)."""
    if is_bytecode(data):
        if keep_vhlo:
            from .reader import read_module

            return read_module(bytes(data), filename)
        from .portable import deserialize_portable_artifact

        return deserialize_portable_artifact(bytes(data), filename)
    from .jax_export import is_jax_exported, load_exported

    if is_jax_exported(bytes(data)):  # `jax.export.Exported.serialize()`: its module
        return load_exported(bytes(data), filename)[0]
    from ..errors import ParseError
    from ..syntax.parser import parse

    try:
        text = bytes(data).decode("utf-8")
    except UnicodeDecodeError as e:
        raise ParseError(f"neither MLIR bytecode nor UTF-8 program text (byte {e.start} is not "
                         "UTF-8)", filename=filename) from None
    module = parse(text, filename)
    if "vhlo" not in text:
        return module
    from .vhlo.ir import is_vhlo_module, structurize, validate

    structurize(module)
    validate(module, text)
    if is_vhlo_module(module):
        from .vhlo.verify import verify_structure

        verify_structure(module)
        if not keep_vhlo:
            from .vhlo.to_stablehlo import vhlo_to_stablehlo
            from .vhlo.to_version import convert_to_version
            from .vhlo.version import CURRENT

            convert_to_version(module, CURRENT)
            vhlo_to_stablehlo(module)
    return module


def serialize(module: Module, target: str = "current", allow_other_dialects: bool = False,
              strip_debuginfo: bool = False) -> bytes:
    """A portable artifact of ``module`` for StableHLO ``target`` (`X.Y.Z` or `current`)."""
    from .portable import serialize_portable_artifact

    return serialize_portable_artifact(module, target, allow_other_dialects, strip_debuginfo)


def deserialize(data: bytes, filename: str | None = None) -> Module:
    """The StableHLO module of a portable artifact of any version (0.9.0 to current)."""
    from .portable import deserialize_portable_artifact

    return deserialize_portable_artifact(data, filename)
