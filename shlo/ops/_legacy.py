"""Transitional: the op facts not yet declared beside their ops (issue 10).

Every entry here moves into the ``define(...)`` of its op, in the ops module that owns it; an op
already defined there is skipped. When this module is empty it is deleted.
"""

from __future__ import annotations

from ..registry import (
    DOQ, DOT_LIKE, QUANTIZED_STORAGE, TERMINATOR, _OPS, define,
)
from ..syntax import formats

_STABLEHLO_OPS = """
batch_norm_grad batch_norm_inference batch_norm_training broadcast broadcast_in_dim cholesky
concatenate constant convolution dot dot_general dynamic_broadcast_in_dim dynamic_conv
dynamic_gather dynamic_iota dynamic_pad dynamic_reshape dynamic_slice dynamic_update_slice
einsum fft gather get_dimension_size iota map pad real_dynamic_slice reduce reduce_window
reshape return reverse rng rng_bit_generator scatter select_and_scatter set_dimension_size
slice sort torch_index_select transpose triangular_solve unary_einsum
""".split()
_OTHER: list[str] = []

_DOQ = """
batch_norm_grad batch_norm_inference batch_norm_training cholesky
triangular_solve"""
_STORAGE = """
broadcast_in_dim broadcast concatenate constant dynamic_reshape dynamic_slice
dynamic_update_slice gather dynamic_gather pad dynamic_pad reshape reverse slice
real_dynamic_slice transpose get_dimension_size dynamic_broadcast_in_dim set_dimension_size
reduce_window reduce sort scatter select_and_scatter map return"""
_DOT = "dot_general dot convolution dynamic_conv"

_TRAITS: dict[str, set[str]] = {}


def _add(names: str, trait: str, prefix: str = "stablehlo.") -> None:
    for n in names.split():
        _TRAITS.setdefault(prefix + n, set()).add(trait)


_add(_DOQ, DOQ)
_add(_STORAGE, QUANTIZED_STORAGE)
_add(_DOT, DOT_LIKE)
_add("stablehlo.return", TERMINATOR, "")


def install() -> None:
    names = ([f"stablehlo.{n}" for n in _STABLEHLO_OPS]
             + _OTHER + list(formats.PRETTY_PARSERS) + list(formats.INHERENT) + list(_TRAITS))
    for name in dict.fromkeys(names):
        d = _OPS.get(name)
        if d is not None and d.extra.get("defined"):
            continue
        syntax = formats.syntax_of(name)
        inherent = formats.INHERENT.get(name)
        define(name, traits=_TRAITS.get(name, ()), syntax=syntax,
               inherent=inherent if inherent is not None or syntax is None else ())


install()
