"""shape-legalize-to-stablehlo (placeholder; rewritten below)."""

from __future__ import annotations

from ..ir import Module
from . import register_pass


@register_pass("shape-legalize-to-stablehlo", noop=True)
def shape_legalize_to_stablehlo(module: Module, options: dict[str, str] | None = None) -> Module:
    """No-op for now."""
    return module
