"""Integer loop state as Python ints (issue 17: a scalar `while` at Python speed).

The generated code (:class:`shlo.interpreter.emitter.Emitter`) may keep a `while`'s 0-d
integer loop variables as Python ints instead of numpy scalars: a loop counter's `<` and `+ 1`
then cost ~20 ns each instead of ~20 and ~35 ns (numpy's scalar operators), and nothing else
changes. Only where the bits are provably the same:

* a loop variable qualifies when its type is a 0-d tensor of one of numpy's own integer dtypes
  (i8-i64, ui8-ui64; not i1, not the sub-byte integers) and every line of the loop that reads
  it, or a value computed from it, is one of: an integer `add`, `subtract` or `multiply` or a
  `compare` whose kernel is the Python operator (:data:`ARITHMETIC`, :data:`COMPARISONS`; the
  other operand a Python int of the same dtype or a constant), the loop's exit test, an `if`
  or `case` selector, a plain assignment (a small callee's arguments and results, the next
  iteration's values). Anything else (a kernel call, a region's captures, an `if`'s results)
  would need a numpy value: the emitter then emits the loop again with numpy scalars;
* the arithmetic wraps as numpy's does (two's complement, modulo 2^bits): :func:`wrap_line`
  follows each operation with the reduction into the dtype's range, taken only on overflow.
  An add that cannot overflow has none: a loop variable ``w`` in the body of a loop whose own
  test is ``w < n`` (or ``w <= n``) plus a constant ``k >= 0``, when ``n - 1 + k`` (``n + k``)
  is within the range, or for any ``n`` of the dtype when ``k = 1`` (``k = 0``)
  (``Emitter._in_range``; the loop variables change only at the end of the body);
* a comparison of two Python ints of one dtype gives the comparison of their values, as
  numpy's operator on two scalars of that dtype (the same for the unsigned types); its result
  is a Python bool where numpy gives ``np.bool_``, read only by the lines above;
* a loop's results become numpy scalars of their dtype again after the loop (exact: the value
  is in range), so nothing outside the loop sees a Python int.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..types import TensorType

__all__ = ["ARITHMETIC", "COMPARISONS", "loop_dtype", "wrap_line"]

ARITHMETIC = frozenset("+-*")
"""The infix operators of integer add, subtract, multiply (see emitter._INFIX)."""
COMPARISONS = frozenset(("<", "<=", ">", ">=", "==", "!="))
"""The infix operators of compare."""


def loop_dtype(t: Any) -> np.dtype | None:
    """The numpy dtype of a loop variable of type ``t`` that may be a Python int: a 0-d tensor
    of numpy's own integer dtypes; None otherwise."""
    if not isinstance(t, TensorType) or t.shape != () or not t.element_type.is_integer:
        return None
    try:
        dt = np.dtype(t.element_type.dtype)
    except Exception:  # pragma: no cover - an element type without a numpy dtype
        return None
    return dt if dt.kind in "iu" and dt.isbuiltin == 1 else None


def wrap_line(name: str, dt: np.dtype, infix: str, constant: int | None) -> str:
    """The line bringing Python int ``name``, just computed by ``infix`` on two values of
    integer dtype ``dt`` (``constant``: the other operand's value when it is a constant, the
    right one for `-`), back into ``dt``'s range as numpy's wraparound does. Only the overflow
    the operation can make is tested: an add of a constant >= 0 only above the maximum."""
    info = np.iinfo(dt)
    lo, hi, mask = int(info.min), int(info.max), (1 << (8 * dt.itemsize)) - 1
    wrap = f"{name} = (({name} + {-lo}) & {mask}) - {-lo}" if lo else f"{name} = {name} & {mask}"
    if infix == "+" and constant is not None and constant >= 0 or \
            infix == "-" and constant is not None and constant <= 0:
        test = f"{name} > {hi}"
    elif infix in "+-" and constant is not None:
        test = f"{name} < {lo}"
    else:
        test = f"not {lo} <= {name} <= {hi}"
    return f"if {test}: {wrap}"
