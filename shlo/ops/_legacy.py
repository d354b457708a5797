"""Transitional: the op facts not yet declared beside their ops (issue 10).

Every entry here moves into the ``define(...)`` of its op, in the ops module that owns it; an op
already defined there is skipped. When this module is empty it is deleted.
"""

from __future__ import annotations

from ..registry import (
    COMMUTATIVE, DOQ, DOT_LIKE, ELEMENTWISE, QUANTIZED_STORAGE, TERMINATOR, _OPS, define,
)
from ..syntax import formats

_STABLEHLO_OPS = """
abs add and atan2
batch_norm_grad batch_norm_inference batch_norm_training bitcast_convert broadcast
broadcast_in_dim cbrt ceil cholesky clamp
compare complex concatenate constant convert convolution cosine
count_leading_zeros divide dot dot_general
dynamic_broadcast_in_dim dynamic_conv dynamic_gather dynamic_iota dynamic_pad dynamic_reshape
dynamic_slice dynamic_update_slice einsum exponential exponential_minus_one fft floor gather
get_dimension_size imag iota is_finite log log_plus_one logistic map
maximum minimum multiply negate not or pad popcnt power
real real_dynamic_slice reduce reduce_precision reduce_window remainder
reshape return reverse rng rng_bit_generator round_nearest_afz round_nearest_even
rsqrt scatter select select_and_scatter set_dimension_size shift_left
shift_right_arithmetic shift_right_logical sign sine slice sort sqrt subtract tan tanh
torch_index_select transpose triangular_solve unary_einsum
xor
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
_OTHER: list[str] = []

_ELEMENTWISE = ("abs cbrt ceil convert count_leading_zeros cosine exponential "
                "exponential_minus_one floor imag log log_plus_one logistic not negate popcnt real "
                "round_nearest_afz round_nearest_even rsqrt sign sine sqrt tan tanh add atan2 "
                "divide maximum minimum multiply power remainder shift_left "
                "shift_right_arithmetic shift_right_logical subtract and or xor clamp compare "
                "complex select is_finite reduce_precision bitcast_convert")
_COMMUTATIVE = "add multiply maximum minimum and or xor"
_DOQ = """
abs add atan2 batch_norm_grad batch_norm_inference batch_norm_training cbrt ceil cholesky clamp
compare cosine divide exponential_minus_one exponential floor log_plus_one logistic log maximum
minimum multiply negate power reduce_precision remainder round_nearest_afz round_nearest_even
rsqrt select sign sine sqrt subtract tan tanh triangular_solve"""
_STORAGE = """
bitcast_convert broadcast_in_dim broadcast concatenate constant dynamic_reshape dynamic_slice
dynamic_update_slice gather dynamic_gather pad dynamic_pad reshape reverse slice
real_dynamic_slice transpose get_dimension_size dynamic_broadcast_in_dim set_dimension_size
reduce_window reduce sort scatter select_and_scatter map return"""
_DOT = "dot_general dot convolution dynamic_conv"

_TRAITS: dict[str, set[str]] = {}


def _add(names: str, trait: str, prefix: str = "stablehlo.") -> None:
    for n in names.split():
        _TRAITS.setdefault(prefix + n, set()).add(trait)


_add(_ELEMENTWISE, ELEMENTWISE)
_add(_COMMUTATIVE, COMMUTATIVE)
_add(_DOQ, DOQ)
_add(_STORAGE, QUANTIZED_STORAGE)
_add("chlo.return", QUANTIZED_STORAGE, "")
_add(_DOT, DOT_LIKE)
_add("stablehlo.return chlo.return", TERMINATOR, "")


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
