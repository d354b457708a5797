"""chlo ops (the "client HLO" dialect of openxla/stablehlo, `stablehlo/dialect/ChloOps.td`).

These ops are not in the StableHLO spec; real programs (JAX exports, the official test corpus)
contain them, and upstream evaluates them by first lowering with `chlo-legalize-to-stablehlo`
(`stablehlo/transforms/ChloLegalizeToStablehlo.cpp`). shlo evaluates them directly. One module
per family, each op's definition, kernel, type inference and verifier together:

* :mod:`.unary`: acos, acosh, asin, asinh, atan, atanh, tan, cosh, sinh, conj, square, the
  special functions (lgamma, digamma, erf, erfc, erf_inv, bessel_i1e), is_inf, is_pos_inf,
  is_neg_inf, computed with numpy/scipy in float64 (complex128) and rounded once;
* :mod:`.binary`: zeta, polygamma, next_after, mulhi;
* :mod:`.broadcast`: `broadcast_*` (add ... zeta, compare, complex, select): broadcast the
  operands, then run the non-broadcasting op's own kernel, as the lowering rewrites them;
* :mod:`.constant`: constant, constant_like;
* :mod:`.topk` (top_k), :mod:`.ragged` (ragged_dot), :mod:`.scan` (scan and chlo.return).

Implementation choices are written down in ``docs/semantics/random_chlo.md``.
"""

from __future__ import annotations

from .._lazy import package_getattr

__all__ = ["round_from_wide", "broadcast_operands", "top_k", "ragged_dot", "mulhi", "next_after",
           "lgamma", "digamma", "zeta", "polygamma", "BROADCAST_TARGETS"]

# The modules are imported when first used (the registry imports an op's module when the op is
# first looked up: shlo/ops/_index.py).
__getattr__ = package_getattr(__name__, {
    "round_from_wide": ".._numeric", "mulhi": ".binary", "next_after": ".binary",
    "polygamma": ".binary", "zeta": ".binary", "BROADCAST_TARGETS": ".broadcast",
    "broadcast_operands": ".broadcast", "ragged_dot": ".ragged", "top_k": ".topk",
    "digamma": ".unary", "lgamma": ".unary"})
