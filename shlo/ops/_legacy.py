"""Transitional: the op facts not yet declared beside their ops (issue 10).

Every entry here moves into the ``define(...)`` of its op, in the ops module that owns it; an op
already defined there is skipped. When this module is empty it is deleted.
"""

from __future__ import annotations

from ..registry import (
    COMMUTATIVE, DOQ, ELEMENTWISE, FUNCTION_RETURN, ISOLATED, QUANTIZED_STORAGE,
    TERMINATOR, _OPS, define,
)
from ..syntax import formats

_STABLEHLO_OPS = """
abs add after_all all_gather all_reduce all_to_all and async_done async_start atan2
bitcast_convert broadcast
broadcast_in_dim case cbrt ceil clamp collective_broadcast collective_permute
collective_reduce compare complex composite concatenate constant convert cosine
count_leading_zeros create_token cross-replica-sum custom_call divide
dynamic_broadcast_in_dim dynamic_gather dynamic_iota dynamic_pad dynamic_reshape
dynamic_slice dynamic_update_slice exponential exponential_minus_one floor gather
get_dimension_size get_tuple_element if imag infeed iota is_finite log log_plus_one logistic
maximum minimum multiply negate not optimization_barrier or outfeed pad partition_id popcnt power
real real_dynamic_slice recv reduce_precision reduce_scatter remainder
replica_id reshape return reverse rng rng_bit_generator round_nearest_afz round_nearest_even
rsqrt scatter select send set_dimension_size shift_left
shift_right_arithmetic shift_right_logical sign sine slice sqrt subtract tan tanh
torch_index_select transpose tuple uniform_dequantize
uniform_quantize while xor
""".split()
_CHLO_OPS = """
_asin_acos_kernel acos acosh asin asinh atan atanh bessel_i1e broadcast_add broadcast_and
broadcast_atan2 broadcast_compare broadcast_complex broadcast_divide broadcast_maximum
broadcast_minimum broadcast_multiply broadcast_next_after broadcast_or broadcast_polygamma
broadcast_power broadcast_remainder broadcast_select broadcast_shift_left
broadcast_shift_right_arithmetic broadcast_shift_right_logical broadcast_subtract broadcast_xor
broadcast_zeta conj constant constant_like cosh digamma erf erf_inv erfc is_inf is_neg_inf
is_pos_inf lgamma mulhi next_after polygamma ragged_dot scan sinh square tan top_k zeta return
""".split()
_OTHER = ("func.func func.return func.call func.call_indirect func.constant builtin.module "
          "return call").split()

_ELEMENTWISE = ("abs cbrt ceil convert count_leading_zeros cosine exponential "
                "exponential_minus_one floor imag log log_plus_one logistic not negate popcnt real "
                "round_nearest_afz round_nearest_even rsqrt sign sine sqrt tan tanh add atan2 "
                "divide maximum minimum multiply power remainder shift_left "
                "shift_right_arithmetic shift_right_logical subtract and or xor clamp compare "
                "complex select is_finite reduce_precision bitcast_convert")
_COMMUTATIVE = "add multiply maximum minimum and or xor"
_DOQ = """
abs add atan2 cbrt ceil clamp
compare cosine divide exponential_minus_one exponential floor log_plus_one logistic log maximum
minimum multiply negate power reduce_precision remainder round_nearest_afz round_nearest_even
rsqrt select sign sine sqrt subtract tan tanh"""
_STORAGE = """
bitcast_convert broadcast_in_dim broadcast concatenate constant dynamic_reshape dynamic_slice
dynamic_update_slice gather dynamic_gather pad dynamic_pad reshape reverse slice
real_dynamic_slice transpose get_dimension_size dynamic_broadcast_in_dim set_dimension_size
scatter while if case return tuple
get_tuple_element optimization_barrier all_gather all_to_all collective_permute
collective_broadcast all_reduce reduce_scatter send recv infeed outfeed composite"""

_TRAITS: dict[str, set[str]] = {}


def _add(names: str, trait: str, prefix: str = "stablehlo.") -> None:
    for n in names.split():
        _TRAITS.setdefault(prefix + n, set()).add(trait)


_add(_ELEMENTWISE, ELEMENTWISE)
_add(_COMMUTATIVE, COMMUTATIVE)
_add(_DOQ, DOQ)
_add(_STORAGE, QUANTIZED_STORAGE)
_add("func.return return func.call call tosa.rescale tosa.const chlo.return", QUANTIZED_STORAGE,
     "")
_add("func.return stablehlo.return return chlo.return", TERMINATOR, "")
_add("func.return return", FUNCTION_RETURN, "")
_add("func.func builtin.module", ISOLATED, "")


def install() -> None:
    names = ([f"stablehlo.{n}" for n in _STABLEHLO_OPS] + [f"chlo.{n}" for n in _CHLO_OPS]
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
