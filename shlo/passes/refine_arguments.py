"""stablehlo-refine-arguments: give the target function's arguments new types (upstream's
StablehloRefineArguments.cpp), each changed argument wrapped in
`custom_call @stablehlo.shape_refinement_operand_wrapper` so that the program stays valid until
stablehlo-refine-shapes propagates the shapes (and removes the wrappers)."""

from __future__ import annotations

from typing import Any

from ..errors import ShloError
from ..ir import Module
from ..syntax.parser import Parser
from ..types import OpaqueType, Type
from . import Option, register_pass
from ._driver import copy_module
from ._refine import refine_arguments as _refine_arguments
from ._refine import target_function
from ._rewrite import PassError

__all__ = ["refine_arguments", "parse_refined_types"]


def parse_refined_types(module: Module, texts: list[str]) -> list[Type]:
    """The `types` option: one type per argument (parseRefinedTypes)."""
    out = []
    for text in texts:
        try:
            p = Parser(text)
            t = p.parse_type()
            if p.text[p.prev_end:].strip():
                raise ValueError(text)
        except (ShloError, ValueError, IndexError):
            t = None
        if t is None or isinstance(t, OpaqueType):
            raise PassError(f"'builtin.module' op Invalid type string: {text}",
                            module.op.location)
        out.append(t)
    return out


@register_pass("stablehlo-refine-arguments", options=[
    Option("types", list, [], "the new types of the main function's arguments, as an MLIR "
                              "type list 'tensor<1x2xf32>, ...'")])
def refine_arguments(module: Module, options: dict[str, Any]) -> Module:
    """Refines the argument shapes of the main function.

    Every argument gets its type from `types` (one per argument; an equal type leaves the
    argument alone); a refined type must be a ranked tensor of the same element type and rank
    that keeps the static dimension sizes."""
    out = copy_module(module)
    func = target_function(out)
    if func is None:
        return out
    refined = parse_refined_types(out, list(options.get("types") or []))
    err = _refine_arguments(func, refined)
    if err is not None:
        raise err
    return out
