"""Transitional: the op facts not yet declared beside their ops (issue 10).

Every entry here moves into the ``define(...)`` of its op, in the ops module that owns it; an op
already defined there is skipped. When this module is empty it is deleted.
"""

from __future__ import annotations

from ..registry import (
    DOQ, DOT_LIKE, FUNCTION_RETURN, ISOLATED, QUANTIZED_STORAGE, TERMINATOR, _OPS, define,
)
from ..syntax import formats

_STABLEHLO_OPS = """
after_all all_gather all_reduce all_to_all async_done async_start
batch_norm_grad batch_norm_inference batch_norm_training broadcast
broadcast_in_dim case cholesky collective_broadcast collective_permute
collective_reduce composite concatenate constant convolution
create_token cross-replica-sum custom_call dot dot_general
dynamic_broadcast_in_dim dynamic_conv dynamic_gather dynamic_iota dynamic_pad dynamic_reshape
dynamic_slice dynamic_update_slice einsum fft gather
get_dimension_size get_tuple_element if infeed iota map
optimization_barrier outfeed pad partition_id
real_dynamic_slice recv reduce reduce_scatter reduce_window
replica_id reshape return reverse rng rng_bit_generator
scatter select_and_scatter send set_dimension_size
slice sort
torch_index_select transpose triangular_solve tuple unary_einsum uniform_dequantize
uniform_quantize while
""".split()
_OTHER = ("func.func func.return func.call func.call_indirect func.constant builtin.module "
          "return call").split()

_DOQ = """
batch_norm_grad batch_norm_inference batch_norm_training cholesky
triangular_solve"""
_STORAGE = """
broadcast_in_dim broadcast concatenate constant dynamic_reshape dynamic_slice
dynamic_update_slice gather dynamic_gather pad dynamic_pad reshape reverse slice
real_dynamic_slice transpose get_dimension_size dynamic_broadcast_in_dim set_dimension_size
reduce_window reduce sort scatter select_and_scatter map while if case return tuple
get_tuple_element optimization_barrier all_gather all_to_all collective_permute
collective_broadcast all_reduce reduce_scatter send recv infeed outfeed composite"""
_DOT = "dot_general dot convolution dynamic_conv"

_TRAITS: dict[str, set[str]] = {}


def _add(names: str, trait: str, prefix: str = "stablehlo.") -> None:
    for n in names.split():
        _TRAITS.setdefault(prefix + n, set()).add(trait)


_add(_DOQ, DOQ)
_add(_STORAGE, QUANTIZED_STORAGE)
_add("func.return return func.call call tosa.rescale tosa.const", QUANTIZED_STORAGE, "")
_add(_DOT, DOT_LIKE)
_add("func.return stablehlo.return return", TERMINATOR, "")
_add("func.return return", FUNCTION_RETURN, "")
_add("func.func builtin.module", ISOLATED, "")


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
