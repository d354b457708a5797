"""StableHLO portable artifacts: a StableHLO module serialized as VHLO bytecode for a target
version, and back (upstream `stablehlo/dialect/Serialization.cpp`).

Serializing runs `stablehlo-legalize-to-vhlo`, then `vhlo-to-version` for the target, then
writes bytecode in the target's bytecode format with the producer `StableHLO_vX.Y.Z`.
Deserializing reads the bytecode, upgrades every VHLO op to the current version and converts it
to StableHLO. The caller's module is never modified.
"""

from __future__ import annotations

from .._gc import paused_gc
from ..errors import Diagnostic, ShloError
from ..ir import Module, UNKNOWN_LOC
from .encoding import BytecodeError
from .reader import BytecodeReader
from .vhlo import ir as vir
from .vhlo.to_stablehlo import vhlo_to_stablehlo
from .vhlo.to_version import convert_to_version, current_already
from .vhlo.to_vhlo import stablehlo_to_vhlo
from .vhlo.verify import verify_structure
from .vhlo.version import CURRENT, Version, bytecode_version_for, parse_version, validate_target
from .writer import write_bytecode

__all__ = ["serialize_portable_artifact", "deserialize_portable_artifact",
           "portable_artifact_version", "read_vhlo", "write_vhlo", "DeserializeError"]


class DeserializeError(ShloError):
    """A portable artifact that cannot be read."""


def _target(target: str | Version) -> tuple[Version, str]:
    if isinstance(target, Version):
        return target, str(target)
    text = str(CURRENT) if target == "current" else target
    return validate_target(text), text


def write_vhlo(module: Module, target: str | Version = "current",
               rewritten: list | None = None) -> bytes:
    """Bytecode of a VHLO module already converted for ``target``."""
    v, text = _target(target)
    return write_bytecode(module, bytecode_version_for(v), "StableHLO_v" + text, rewritten)


def serialize_portable_artifact(module: Module, target: str | Version = "current",
                                allow_other_dialects: bool = False,
                                strip_debuginfo: bool = False) -> bytes:
    """The portable artifact of StableHLO ``module`` for ``target`` (`X.Y.Z` or `current`).

    Raises ShloError naming the op, attribute or type that the target cannot express, and the
    first version that has it."""
    v, text = _target(target)
    with paused_gc():
        m = vir.clone(module)
        if strip_debuginfo:
            vir.strip_debuginfo(m)
        stablehlo_to_vhlo(m, allow_other_dialects)
        rewritten: list = []
        convert_to_version(m, v, rewritten)
        return write_bytecode(m, bytecode_version_for(v), "StableHLO_v" + text, rewritten)


def read_vhlo(data: bytes, filename: str | None = None) -> tuple[Module, BytecodeReader]:
    """The IR of bytecode ``data`` as written (a VHLO program stays VHLO)."""
    r = BytecodeReader(data, filename)
    try:
        with paused_gc():
            return r.module(), r
    except RecursionError:
        from .encoding import BytecodeError

        raise BytecodeError("IR nesting too deep", None, "ir", filename) from None


def deserialize_portable_artifact(data: bytes, filename: str | None = None) -> Module:
    """The StableHLO module of a portable artifact (any version from 0.9.0).

    A program of the current version is converted to StableHLO as it is read (each op once
    per distinct name, attributes and properties); any other, or one that the conversion would
    reject, is read as written, verified, upgraded and converted step by step."""
    try:
        with paused_gc():
            r = BytecodeReader(data, filename, to_stablehlo=True)
            if current_already(name for name, _ in r.op_names):
                try:
                    return r.module()
                except BytecodeError:
                    raise
                except Exception:  # _NotConverted, or anything else the steps will report
                    pass
            m, r = read_vhlo(data, filename)
            if vir.is_vhlo_module(m):
                verify_structure(m)
                if not current_already(name for name, _ in r.op_names):
                    convert_to_version(m, CURRENT)
                vhlo_to_stablehlo(m)
        return m
    except ShloError as e:
        diags = list(e.diagnostics)
        diags.append(Diagnostic("failed to deserialize portable artifact using "
                                f"StableHLO_v{CURRENT}", UNKNOWN_LOC))
        raise DeserializeError(str(e), diagnostics=diags, filename=filename) from None


def portable_artifact_version(data: bytes) -> Version | None:
    """The StableHLO version in the producer string `StableHLO_vX.Y.Z` (None when absent)."""
    if len(data) < 19 or bytes(data[:4]) != b"ML\xefR":
        return None
    end = bytes(data[:256]).find(b"\0")
    if end < 0:
        return None
    head = bytes(data[:end])
    i = head.find(b"StableHLO_v")
    if i < 0:
        return None
    return parse_version(head[i + 11:].decode("ascii", "replace"))
