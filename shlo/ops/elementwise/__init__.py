"""Element-wise ops (spec "Ops"): abs ... xor, compare, select, clamp, convert, bitcast_convert, ...

One module per family, each op in one section (in spec order) holding its definition (spec
section, traits, pretty syntax), its kernel, its type inference and its verifier:

* :mod:`.arithmetic`: abs, add, divide, maximum, minimum, multiply, negate, power, remainder,
  sign, subtract;
* :mod:`.math`: atan2, cbrt, ceil, cosine, exponential, exponential_minus_one, floor, log,
  log_plus_one, logistic, round_nearest_afz, round_nearest_even, rsqrt, sine, sqrt, tan, tanh;
* :mod:`.bitwise`: and, count_leading_zeros, not, or, popcnt, shift_left,
  shift_right_arithmetic, shift_right_logical, xor;
* :mod:`.compare`: clamp, compare, is_finite, select;
* :mod:`.complex`: complex, imag, real;
* :mod:`.convert`: bitcast_convert, convert, reduce_precision.

Each kernel is a *prepare* function that decodes the element type once and returns a lean
``run`` closure, often a direct numpy call (``lambda x, y: (np.add(x, y),)``). Kernels work on
arrays of any shape (region bodies are evaluated over whole arrays of element pairs) and accept
numpy scalars for 0-d values. Results always have the result type's dtype.

Conventions (see docs/semantics/elementwise.md for the implementation-defined choices):

* Integers wrap (two's complement) and never emit numpy warnings; the sub-byte types
  (ml_dtypes int2/int4/uint2/uint4) are computed in int8/uint8 and cast back with wrapping.
* Floating-point arithmetic (add, subtract, multiply, divide, sqrt, remainder) on narrow types is
  done by numpy/ml_dtypes in float32 and rounded once, which is exact rounding for these
  operations and types. Transcendental functions are computed in float64 (complex128) and
  rounded once to the result type ("compute wider, round once").
* IEEE floating-point exceptions are values (inf, NaN), not errors: float kernels may let
  numpy's RuntimeWarnings through; the evaluator is expected to run under ``np.errstate``.
"""

from __future__ import annotations

from .._lazy import package_getattr

__all__ = ["convert_fn"]

# The modules are imported when first used (the registry imports an op's module when the op is
# first looked up: shlo/ops/_index.py).
__getattr__ = package_getattr(__name__, {"convert_fn": ".convert"})
