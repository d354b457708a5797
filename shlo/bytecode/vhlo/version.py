"""StableHLO versions: `X.Y.Z`, the compatibility window, and the bytecode format of each.

Facts from upstream's `stablehlo/dialect/Version.{h,cpp}` and the version log of
`VhloDialect.td`: the VHLO dialect is versioned from 0.9.0 (the minimum) to 1.20.0 (current);
a target version is read as `#.#.#`; a patch version behaves as its `X.Y.0` opset.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ...errors import ShloError

__all__ = ["Version", "CURRENT", "MINIMUM", "parse_version", "bytecode_version_for",
           "VersionError", "VERSION_LOG", "WEEK_4", "WEEK_12", "validate_target"]


class VersionError(ShloError, ValueError):
    """A target version that is malformed or outside the supported window."""


class Version(NamedTuple):
    """A StableHLO version (a tuple: compared and hashed as one, in C, which matters for
    the per-op legality checks of vhlo-to-version)."""

    major: int
    minor: int
    patch: int

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}"

    @property
    def opset(self) -> "Version":
        """The `X.Y.0` opset a patch version denotes."""
        return Version(self.major, self.minor, 0)


_VERSION_RE = re.compile(r"([0-9]+)\.([0-9]+)\.([0-9]+)\Z")


def parse_version(text: str) -> Version | None:
    """`1.2.3` -> Version(1, 2, 3); None when ``text`` is not of the form `#.#.#`."""
    m = _VERSION_RE.match(text.strip())
    if not m:
        return None
    return Version(int(m.group(1)), int(m.group(2)), int(m.group(3)))


CURRENT = Version(1, 20, 0)
MINIMUM = Version(0, 9, 0)
# `Version::fromCompatibilityRequirement` anchors (serialize for a 4 / 12 weeks old consumer).
WEEK_4 = Version(1, 18, 0)
WEEK_12 = Version(1, 16, 2)


def bytecode_version_for(v: Version) -> int:
    """The MLIR bytecode format version a StableHLO release writes (`getBytecodeVersion`)."""
    if v < Version(0, 9, 0) or CURRENT < v:
        raise VersionError(f"version {v} is outside the compatibility window "
                           f"[{MINIMUM}, {CURRENT}]")
    if v < Version(0, 10, 0):
        return 0
    if v < Version(0, 12, 0):
        return 1
    if v < Version(0, 14, 0):
        return 3
    if v < Version(0, 15, 0):
        return 4
    return 6


def validate_target(text: str) -> Version:
    """The target version of `--vhlo-to-version` / `--target`, with upstream's messages."""
    if text == "current":
        return CURRENT
    v = parse_version(text)
    if v is None:
        if not text:
            raise VersionError("No target version specified.\n"
                               "Target version must be of the form `#.#.#`.")
        raise VersionError(f"Invalid target version argument '{text}'\n"
                           "Target version must be of the form `#.#.#`.")
    if v < MINIMUM:
        raise VersionError(f"target version {v} is less than minimum supported {MINIMUM}")
    if CURRENT < v:
        raise VersionError(f"target version {v} is greater than current version {CURRENT}")
    return v


VERSION_LOG: dict[str, str] = {
    "0.9.0": "Initial stability guarantees.",
    "0.10.0": "Introduce `f8E4M3FNUZ` and `f8E5M2FNUZ` types.",
    "0.11.0": "Introduce `f8E4M3B11FNUZ` type.",
    "0.12.0": "MLIR bytecode version 1 => 3.",
    "0.14.0": "MLIR bytecode version 3 => 4.",
    "0.15.0": "MLIR bytecode version 4 => 6, use properties in VHLO.",
    "0.16.0": "Introduce `collective_broadcast` operation.",
    "0.17.0": "Allow reduce operations to promote to higher bitwidth.",
    "0.18.0": "Introduce `UniformQuantizedPerAxisType` type.",
    "0.19.0": "Introduce `composite` operation.",
    "0.20.0": "Remove `padding` attribute from `dynamic_conv`.",
    "1.0.0": "5 years backward, 2 years forward compatibility (no functional change).",
    "1.1.0": "Add gather/scatter batching dimensions.",
    "1.2.0": "Introduce `si2` and `ui2` types.",
    "1.3.0": "Extend `custom_call` op `backend_config` to support `DictionaryAttr`.",
    "1.4.0": "Add `tan` op to StableHLO opset.",
    "1.5.0": "Make collective ops (`all_reduce`, `all_gather`, `all_to_all`) variadic.",
    "1.6.0": "Add DotAlgorithm specification to `dot_general`.",
    "1.7.0": "Introduce `f8E4M3` and `f8E3M4` types.",
    "1.8.0": "Introduce `f4E2M1FN`, `f6E2M3FN`, `f6E3M2FN` and `f8E8M0FNU` types.",
    "1.9.0": "Add `ResultAccuracy` attribute to `exp` op.",
    "1.10.0": "Add `ResultAccuracy` attribute to the other transcendental unary ops.",
    "1.11.0": "Allow (de)serializing VHLO programs mixed with potentially unstable dialects.",
    "1.12.0": "Add `source_target_pairs` attribute to `send` and `recv` ops.",
    "1.13.0": "Extend `custom_call` op to support `buffer` types.",
    "1.14.0": "Introduce `composite` op with regions.",
    "1.15.0": "Introduce `async_start` and `async_done` ops and `future` types.",
    "1.16.0": "Add mesh based replica groups to collective ops.",
    "1.17.0": "Add `future` type support to `custom_call` op.",
    "1.18.0": "Add `result_tilings` attribute to `custom_call` op.",
    "1.19.0": "Add CollectiveReduceOp.",
    "1.20.0": "Add has_dynamic_root to collective_broadcast op.",
}
