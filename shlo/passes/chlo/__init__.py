"""chlo-legalize-to-stablehlo: every chlo op decomposed into StableHLO ops, as upstream's
pass does (stablehlo/transforms/ChloLegalizeToStablehlo.cpp and its DRR patterns).

One module per family, each registering its decompositions in :data:`._builder.LOWERINGS`:

* :mod:`.broadcast`: `broadcast_*` and `broadcast_select` (static, bounded and dynamic shapes),
  `constant`, `constant_like`;
* :mod:`.dag` with the data of :mod:`._patterns`: upstream's DRR patterns (asin, acos, acosh,
  asinh, atan, atanh, conj, is_inf, is_pos_inf, is_neg_inf, mulhi, square, tan);
* :mod:`.special`: erf, erfc, erf_inv, bessel_i1e, lgamma, digamma, zeta, polygamma;
* :mod:`.misc`: next_after, sinh, cosh, top_k;
* :mod:`.ragged`: ragged_dot, scan.

`chlo-pre-serialization-pipeline` is upstream's pipeline of that name (PassPipelines.cpp):
chlo-legalize-to-stablehlo, shape-legalize-to-stablehlo, reconcile-unrealized-casts. The shape
canonicalizations `canonicalize` applies to the lowering's output are :mod:`shlo.passes._canonical_shape`.

The builder (:mod:`._builder`) types every op it creates by the op's type inference, lowers
constants as `chlo.constant_like` lowers, and lowers the chlo ops a decomposition creates in
place, so ops appear in the order upstream's conversion leaves them.
"""

from __future__ import annotations

from typing import Any, Sequence

from ...errors import Diagnostic
from ...ir import Module, Operation, Value
from .. import register_pass, run_passes
from .._rewrite import PassError, Rewriter
from . import broadcast, dag, misc, ragged, special  # noqa: F401  (they register)
from ._builder import LOWERINGS, Builder, NotLowered

__all__ = ["chlo_legalize_to_stablehlo", "chlo_pre_serialization_pipeline", "LOWERINGS"]


class _Pattern:
    def __init__(self) -> None:
        self.failures: list[Diagnostic] = []

    def __call__(self, rw: Rewriter, op: Operation) -> Sequence[Value] | None:
        if op.dialect != "chlo" or op.name == "chlo.return":
            return None
        fn = LOWERINGS.get(op.name)
        b = Builder(rw)
        mark = len(rw.block.operations) if rw.block is not None else 0
        try:
            if fn is None:
                raise NotLowered(f"no decomposition of {op.name}")
            return fn(b, op, [rw.get(v) for v in op.operands])
        except NotLowered as e:
            if rw.block is not None:  # drop what the failed attempt emitted
                del rw.block.operations[mark:]
            for w in e.warnings:
                self.failures.append(Diagnostic(w, op.location, "warning"))
            self.failures.append(Diagnostic(
                f"failed to legalize operation '{op.name}' that was explicitly marked illegal",
                op.location))
            return None


@register_pass("chlo-legalize-to-stablehlo")
def chlo_legalize_to_stablehlo(module: Module, options: dict[str, Any] | None = None) -> Module:
    """Decompose every chlo op into StableHLO ops (broadcasts made explicit, math functions as
    their polynomial and rational approximations, top_k as sort + slice, ragged_dot as masked
    dot_generals, scan as a while loop)."""
    pattern = _Pattern()
    out = Rewriter(pattern).module(module)
    if pattern.failures:
        first = next(d for d in pattern.failures if d.severity == "error")
        raise PassError(first.message, first.location, diagnostics=pattern.failures)
    return out


_CAST = "builtin.unrealized_conversion_cast"


def _reconcile(rw: Rewriter, op: Operation) -> Sequence[Value] | None:
    """cast(X : A -> A) -> X; cast(cast(X : A -> B) : B -> A) -> X."""
    if op.name != _CAST:
        return None
    ins = [rw.get(v) for v in op.operands]
    want = [r.type for r in op.results]
    if [v.type for v in ins] == want:
        return ins
    src = ins[0].owner if ins else None
    if isinstance(src, Operation) and src.name == _CAST and list(src.results) == ins \
            and [v.type for v in src.operands] == want:
        return list(src.operands)
    return None


def reconcile_unrealized_casts(module: Module) -> Module:
    """MLIR's reconcile-unrealized-casts: identity casts and casts back to where a cast chain
    started are folded away, the casts left unused erased (a copy of ``module``)."""
    out = Rewriter(_reconcile).module(module)
    while True:
        used = {v for op in out.walk() for v in op.operands}
        dead = [op for op in out.walk() if op.name == _CAST and op.parent is not None
                and not any(r in used for r in op.results)]
        if not dead:
            return out
        for op in dead:
            op.parent.operations.remove(op)  # type: ignore[union-attr]


@register_pass("chlo-pre-serialization-pipeline")
def chlo_pre_serialization_pipeline(module: Module, options: dict[str, Any] | None = None
                                    ) -> Module:
    """Lower as much as possible to StableHLO, including CHLO, Shape dialect, and index types.

    Upstream's pipeline: chlo-legalize-to-stablehlo, shape-legalize-to-stablehlo,
    reconcile-unrealized-casts."""
    out = run_passes(module, "chlo-legalize-to-stablehlo,shape-legalize-to-stablehlo")
    return reconcile_unrealized_casts(out)
