"""The optimization passes of upstream's stablehlo/transforms/optimization: the aggressive
folder, the aggressive simplification, and the two together (target-independent
optimization). Each applies its patterns to every function with the greedy driver
(:mod:`._driver`); the patterns live with their op families (``_fold_*.py``, ``_simplify_*.py``).
"""

from __future__ import annotations

from typing import Any

from ..ir import Module

# the pattern modules register their folds and patterns when imported (each imports the one
# whose patterns upstream registers before its own: elementwise, shape, control)
from . import (  # noqa: F401
    Option,
    _fold_control,
    _fold_elementwise,
    _fold_shape,
    _simplify_control,
    register_pass,
)
from ._driver import GreedyConfig, apply_to_module
from ._patterns import FoldContext, Pattern, fold_pattern, patterns

_ASSUME = Option("assume-no-undeclared-side-effects", bool, False,
                 "allow dead code elimination of ops without declared side effects (e.g. dead "
                 "while loops calling functions)")
_LIMIT = Option("fold-op-element-limit", int, 65536,
                "the most elements a folded non-splat result may have")
_FLOAT = Option("optimize-float", bool, True,
                "allow float folds that may round differently from run-time evaluation")


def _ctx(opts: dict[str, Any]) -> FoldContext:
    return FoldContext(element_limit=int(opts.get("fold-op-element-limit", 65536)),
                       optimize_float=bool(opts.get("optimize-float", True)),
                       assume_no_undeclared_side_effects=bool(
                           opts.get("assume-no-undeclared-side-effects", False)))


def folder_patterns(opts: dict[str, Any], benefit: int = 1) -> list[Pattern]:
    """The patterns of `stablehlo-aggressive-folder` (upstream's
    populateStablehloAggressiveFolderPatterns)."""
    ctx = _ctx(opts)
    sets = ["folder"] + (["folder-assume-no-undeclared-side-effects"]
                         if ctx.assume_no_undeclared_side_effects else [])
    return fold_pattern(ctx, benefit) + patterns(*sets, benefit=benefit)


def simplification_patterns(opts: dict[str, Any]) -> list[Pattern]:
    """The patterns of `stablehlo-aggressive-simplification` (upstream's
    populateStablehloCanonicalizationPatterns)."""
    from ._simplify_elementwise import set_options

    set_options(_ctx(opts))
    return patterns("simplify")


@register_pass("stablehlo-aggressive-folder", options=[_ASSUME, _LIMIT, _FLOAT])
def aggressive_folder(module: Module, opts: dict[str, Any]) -> Module:
    """Folds StableHLO operations (constant operands evaluated with shlo's own kernels)."""
    return apply_to_module(module, folder_patterns(opts), GreedyConfig(),
                           "stablehlo-aggressive-folder")


@register_pass("stablehlo-aggressive-simplification", options=[_LIMIT])
def aggressive_simplification(module: Module, opts: dict[str, Any]) -> Module:
    """Canonicalizes StableHLO operations (upstream's graph simplifications)."""
    return apply_to_module(module, simplification_patterns(opts), GreedyConfig(),
                           "stablehlo-aggressive-simplification")


@register_pass("stablehlo-target-independent-optimization", options=[_ASSUME, _LIMIT, _FLOAT])
def target_independent_optimization(module: Module, opts: dict[str, Any]) -> Module:
    """Runs canonicalizers, folders, and other target-independent optimizations."""
    pats = folder_patterns(opts, benefit=2) + simplification_patterns(opts)
    return apply_to_module(module, pats, GreedyConfig(),
                           "stablehlo-target-independent-optimization")
