"""The VHLO passes of StableHLO's compatibility machinery, by their upstream names:

* ``stablehlo-legalize-to-vhlo{allow-other-dialects}``: StableHLO/func ops to current VHLO.
* ``vhlo-to-version{target=X.Y.Z}``: VHLO ops upgraded or downgraded to the target's versions.
* ``vhlo-legalize-to-stablehlo``: current VHLO back to StableHLO.
* ``stablehlo-deserialize``: ``vhlo-to-version{target=current}`` then
  ``vhlo-legalize-to-stablehlo`` (what reading a portable artifact does).
* ``strip-debuginfo``: every location becomes `loc(unknown)`.

The conversions themselves live in :mod:`shlo.bytecode.vhlo`.
"""

from __future__ import annotations

from typing import Any

from ..bytecode.vhlo import ir as vir
from ..bytecode.vhlo.to_stablehlo import vhlo_to_stablehlo
from ..bytecode.vhlo.to_version import convert_to_version
from ..bytecode.vhlo.to_vhlo import stablehlo_to_vhlo
from ..bytecode.vhlo.version import CURRENT
from ..ir import Module
from . import Option, register_pass


@register_pass("stablehlo-legalize-to-vhlo", options=[
    Option("allow-other-dialects", bool, False,
           "keep ops of other dialects (as unregistered) instead of failing")])
def legalize_to_vhlo(module: Module, opts: dict[str, Any]) -> Module:
    """StableHLO and func ops to the VHLO ops of the current version."""
    m = vir.clone(module)
    vir.structurize(m)
    return stablehlo_to_vhlo(m, opts["allow-other-dialects"])


@register_pass("vhlo-to-version", options=[
    Option("target", str, "", "the target version: X.Y.Z, 'current' or 'minimum'")])
def vhlo_to_version(module: Module, opts: dict[str, Any]) -> Module:
    """VHLO ops upgraded or downgraded to the versions of `target` (X.Y.Z or current)."""
    m = vir.clone(module)
    vir.structurize(m)
    return convert_to_version(m, opts["target"])


@register_pass("vhlo-legalize-to-stablehlo")
def vhlo_legalize_to_stablehlo(module: Module, opts: dict[str, Any]) -> Module:
    """VHLO ops of the current version back to StableHLO."""
    m = vir.clone(module)
    vir.structurize(m)
    return vhlo_to_stablehlo(m)


@register_pass("stablehlo-deserialize")
def deserialize(module: Module, opts: dict[str, Any]) -> Module:
    """VHLO of any version upgraded to current, then converted to StableHLO."""
    m = vir.clone(module)
    vir.structurize(m)
    convert_to_version(m, CURRENT)
    return vhlo_to_stablehlo(m)


@register_pass("strip-debuginfo")
def strip_debuginfo(module: Module, opts: dict[str, Any]) -> Module:
    """Every location becomes `loc(unknown)`."""
    return vir.strip_debuginfo(vir.clone(module))
