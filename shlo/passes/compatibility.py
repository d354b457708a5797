"""stablehlo-compatibility-expander{target=X.Y.Z}: newer StableHLO features decomposed into ops
an older consumer has (upstream's stablehlo/transforms/StablehloCompatibilityExpander.cpp and
StablehloCompatibilityExpanderPatterns.td).

By target version (each rewrite applies when the target predates the feature):

* before 1.1.0, `gather`/`scatter` with batching dimensions: each batching dimension becomes a
  collapsed slice (inserted window) dimension, its index an `iota` concatenated before the start
  (scatter) indices, the index type widened to i32/i64 when a batching size does not fit in it;
  `indices_are_sorted` is kept only when the batching dims and the new index map are sorted.
  Indices of a dynamic shape are left alone;
* before 1.4.0, `tan`: ``sine(x) / cosine(x)``; complex ``tan(a + bi)`` as
  ``(tan(a) + i tanh(b)) / (1 - i tan(a) tanh(b))`` (its real tan expanded in turn);
* before 1.9.0, `FileLineColRange` locations (``"f":1:2 to :5``) become ``"f":1:2``, in every
  location of the module, nested ones too;
* before 1.16.0, mesh-based replica groups (`#stablehlo.replica_group_mesh_axes<...>`, inline
  meshes or `sdy.mesh` symbols) become the dense `replica_groups` they denote.

Upstream's DRR/C++ patterns run on the greedy driver (:mod:`._driver`), top-down, as upstream's
module pass does; new ops take the location of the op they replace (the index ops of gather and
scatter that of the indices).
"""

from __future__ import annotations

import heapq
from typing import Any, Sequence

import numpy as np

from ..attributes import BoolAttr, DenseElementsAttr, IntegerAttr, StructAttr
from ..bytecode.vhlo.version import Version, validate_target
from ..ir import CallSiteLoc, FileLineColLoc, FusedLoc, Location, Module, NameLoc, Operation, Value
from ..registry import lookup
from ..types import IntegerType, TensorType, element_type
from . import Option, register_pass
from ._driver import GreedyConfig, apply_to_module
from ._expanders import dag_pattern, is_complex
from ._patterns import Pattern, PatternRewriter
from ._rewrite import PassError

__all__ = ["compatibility_patterns", "range_locations_to_points", "EXPANSIONS"]

I32, I64 = element_type("i32"), element_type("i64")

# --- tan (StableHLO 1.4.0) ------------------------------------------------------------------------

TAN = "(divide (sine $input) (cosine $input))"
"""TanOp_CompatiblityExpander: tan(x) = sine(x) / cosine(x)."""
TAN_COMPLEX = ("(divide (complex (tan:tan (real $input)) (tanh:tanh (imag $input))) "
               "(complex (c 1.0 $tan) (negate (multiply $tan $tanh))))")
"""TanOp_ComplexElementType_CompatiblityExpander: tan(a + bi) = (tan(a) + i tanh(b)) /
(1 - i tan(a) tanh(b))."""


def _tan_patterns() -> list[Pattern]:
    return [dag_pattern("stablehlo.tan", "input", TAN_COMPLEX,
                        when=lambda op: is_complex(op.operands[0]),
                        name="tan_complex_compatibility_expander"),
            dag_pattern("stablehlo.tan", "input", TAN,
                        when=lambda op: not is_complex(op.operands[0]),
                        name="tan_compatibility_expander")]


# --- gather / scatter with batching dimensions (StableHLO 1.1.0) ---------------------------------


def _fits(size: int, t: IntegerType) -> bool:
    if t.signedness == "unsigned":
        return 0 <= size < (1 << t.width)
    return -(1 << (t.width - 1)) <= size < (1 << (t.width - 1))


def _promote(et: Any, size: int) -> Any:
    """promoteTypeForSize: an integer type ``size`` does not fit in becomes i32 or i64."""
    if not isinstance(et, IntegerType) or _fits(size, et):
        return et
    return I32 if _fits(size, I32) else I64


def _concat_indices(rw: PatternRewriter, indices: Value, index_vector_dim: int,
                    batching_dims: Sequence[int]) -> Value:
    """createConcatIndices: an `iota` along each of ``batching_dims`` (of the indices' shape,
    size 1 along the index vector dim) concatenated before ``indices`` on the index vector dim
    (``indices`` reshaped to a trailing 1 when that dim is implicit)."""
    owner = indices.owner
    loc = owner.location if isinstance(owner, Operation) else rw.anchor.location  # type: ignore
    t = indices.type
    assert isinstance(t, TensorType)
    et = t.element_type
    for d in batching_dims:
        et = _promote(et, t.shape[d])
    if et != t.element_type:
        t = TensorType(t.shape, et)
        indices = rw.create1("stablehlo.convert", [indices], t, location=loc)
    shape = list(t.shape)
    on_last = index_vector_dim == len(shape)
    if on_last:
        shape.append(1)
    else:
        shape[index_vector_dim] = 1
    iota_t = TensorType(tuple(shape), et)
    if on_last:
        indices = rw.create1("stablehlo.reshape", [indices], iota_t, location=loc)
    parts = [rw.create1("stablehlo.iota", [], iota_t, {"iota_dimension": IntegerAttr(d, I64)},
                        location=loc) for d in batching_dims]
    parts.append(indices)
    return rw.infer_create1("stablehlo.concatenate", parts,
                            {"dimension": IntegerAttr(index_vector_dim, I64)}, location=loc)


def _inherent(op: Operation) -> dict[str, Any]:
    """The op's inherent attributes (properties, and those its generic `{...}` spelled), as the
    properties of an op built anew (discardable attributes are not carried over, as upstream's
    builders do not)."""
    d = lookup(op.name)
    names = d.inherent if d is not None and d.inherent is not None else frozenset()
    props = dict(op.properties)
    props.update({k: v for k, v in op.attributes.items() if k in names})
    return props


def _dims(s: StructAttr, key: str) -> tuple[int, ...]:
    return tuple(int(x) for x in (s.get(key) or ()))


def _replace_params(s: StructAttr, drop: Sequence[str], **changes: Any) -> StructAttr:
    """``s`` with the parameters ``drop`` removed and ``changes`` set (in their places)."""
    params = [(k, changes.pop(k) if k in changes else v) for k, v in s.params if k not in drop]
    params.extend(changes.items())
    return StructAttr(s.name, tuple(params))


def _sorted(dims: Sequence[int]) -> bool:
    return all(a <= b for a, b in zip(dims, dims[1:]))


def _is_true(a: Any) -> bool:
    return bool(getattr(a, "value", a))


def gather_with_batching_dims(op: Operation, rw: PatternRewriter) -> bool:
    """GatherWithBatchingDimsExpander: batching dims become collapsed slice dims indexed by
    iotas."""
    dn = op.attr("dimension_numbers")
    if not isinstance(dn, StructAttr):
        return False
    operand_batching = _dims(dn, "operand_batching_dims")
    indices_batching = _dims(dn, "start_indices_batching_dims")
    indices = op.operands[1]
    if not operand_batching or not (isinstance(indices.type, TensorType)
                                    and indices.type.is_static):
        return False
    ivd = int(getattr(dn.get("index_vector_dim", 0), "value", dn.get("index_vector_dim", 0)))
    collapsed = list(heapq.merge(operand_batching, _dims(dn, "collapsed_slice_dims")))
    index_map = [*operand_batching, *_dims(dn, "start_index_map")]
    new_indices = _concat_indices(rw, indices, ivd, indices_batching)
    props = _inherent(op)
    props["dimension_numbers"] = _replace_params(
        dn, ("operand_batching_dims", "start_indices_batching_dims"),
        collapsed_slice_dims=tuple(collapsed), start_index_map=tuple(index_map))
    props["indices_are_sorted"] = BoolAttr(
        _is_true(props.get("indices_are_sorted", False)) and _sorted(indices_batching)
        and _sorted(index_map))
    new = rw.create(op.name, [op.operands[0], new_indices], [op.results[0].type], props)
    rw.replace_op(op, new.results)
    return True


def scatter_with_batching_dims(op: Operation, rw: PatternRewriter) -> bool:
    """ScatterWithBatchingDimsExpander: batching dims become inserted window dims indexed by
    iotas."""
    dn = op.attr("scatter_dimension_numbers")
    if not isinstance(dn, StructAttr):
        return False
    input_batching = _dims(dn, "input_batching_dims")
    indices_batching = _dims(dn, "scatter_indices_batching_dims")
    n = len(op.results)
    indices = op.operands[n]
    if not input_batching or not (isinstance(indices.type, TensorType)
                                  and indices.type.is_static):
        return False
    ivd = int(getattr(dn.get("index_vector_dim", 0), "value", dn.get("index_vector_dim", 0)))
    inserted = list(heapq.merge(input_batching, _dims(dn, "inserted_window_dims")))
    to_operand = [*input_batching, *_dims(dn, "scatter_dims_to_operand_dims")]
    new_indices = _concat_indices(rw, indices, ivd, indices_batching)
    props = _inherent(op)
    props["scatter_dimension_numbers"] = _replace_params(
        dn, ("input_batching_dims", "scatter_indices_batching_dims"),
        inserted_window_dims=tuple(inserted), scatter_dims_to_operand_dims=tuple(to_operand))
    props["indices_are_sorted"] = BoolAttr(
        _is_true(props.get("indices_are_sorted", False)) and _sorted(indices_batching)
        and _sorted(to_operand))
    props.setdefault("unique_indices", BoolAttr(False))
    regions = rw.take_regions(op)
    new = rw.create(op.name, [*op.operands[:n], new_indices, *op.operands[n + 1:]],
                    [r.type for r in op.results], props, regions=regions)
    rw.replace_op(op, new.results)
    return True


# --- mesh-based replica groups (StableHLO 1.16.0) -------------------------------------------------


def replica_group_mesh_axes(op: Operation, rw: PatternRewriter) -> bool:
    """ReplicaGroupMeshAxesExpander: `replica_groups = #stablehlo.replica_group_mesh_axes<...>`
    becomes `dense<groups> : tensor<NxMxi64>`."""
    from ..ops.distributed.groups import mesh_axes_groups

    a = op.attr("replica_groups")
    if not (isinstance(a, StructAttr) and a.name == "stablehlo.replica_group_mesh_axes"):
        return False
    try:
        groups = mesh_axes_groups(op, a)
    except ValueError as e:
        raise PassError(f"'{op.name}' op: {e}", op.location) from None
    size = len(groups[0]) if groups else 0
    arr = np.asarray(groups, dtype=np.int64).reshape(len(groups), size)
    attr = DenseElementsAttr(TensorType(arr.shape, I64), arr)
    (op.properties if "replica_groups" in op.properties else op.attributes)[
        "replica_groups"] = attr
    rw.modified(op)
    return True


# --- FileLineColRange locations (StableHLO 1.9.0) -------------------------------------------------


def _point(loc: Location) -> Location:
    if isinstance(loc, FileLineColLoc):
        if loc.end_line is None and loc.end_col is None:
            return loc
        return FileLineColLoc(loc.file, loc.line, loc.col)
    if isinstance(loc, NameLoc) and loc.child is not None:
        return NameLoc(loc.name, _point(loc.child))
    if isinstance(loc, CallSiteLoc):
        return CallSiteLoc(_point(loc.callee), _point(loc.caller))
    if isinstance(loc, FusedLoc):
        return FusedLoc(tuple(_point(x) for x in loc.locations), loc.metadata)
    return loc


def range_locations_to_points(module: Module) -> Module:
    """FileLineColRangeToLoc, in place: every `"f":l:c to ...` location, nested ones too, becomes
    `"f":l:c` (shlo keeps no block-argument locations)."""
    for op in module.op.walk():
        op.location = _point(op.location)
    return module


# --- the pass -------------------------------------------------------------------------------------

EXPANSIONS: tuple[tuple[Version, str], ...] = (
    (Version(1, 1, 0), "gather/scatter batching dims"),
    (Version(1, 4, 0), "tan"),
    (Version(1, 9, 0), "FileLineColRange locations"),
    (Version(1, 16, 0), "mesh-axes replica groups"),
)
"""The version that introduced each expanded feature (populateStablehloCompatibility-
ExpanderPatterns)."""


def compatibility_patterns(target: Version) -> list[Pattern]:
    """The op patterns for ``target`` (the location rewrite: :func:`range_locations_to_points`)."""
    pats: list[Pattern] = []
    if target < Version(1, 1, 0):
        pats += [Pattern("stablehlo.gather", gather_with_batching_dims, 1,
                         "gather_with_batching_dims"),
                 Pattern("stablehlo.scatter", scatter_with_batching_dims, 1,
                         "scatter_with_batching_dims")]
    if target < Version(1, 4, 0):
        pats += _tan_patterns()
    if target < Version(1, 16, 0):
        pats.append(Pattern(None, replica_group_mesh_axes, 1, "replica_group_mesh_axes"))
    return pats


@register_pass("stablehlo-compatibility-expander", options=[
    Option("target", str, "", "The target version. Must be a version of the form #.#.#.")])
def compatibility_expander(module: Module, opts: dict[str, Any]) -> Module:
    """Compatibility expander for StableHLO operations (newer ops decomposed for a `target`)."""
    target = validate_target(str(opts.get("target", "")))
    out = apply_to_module(module, compatibility_patterns(target), GreedyConfig(top_down=True),
                          "stablehlo-compatibility-expander")
    if target < Version(1, 9, 0):
        range_locations_to_points(out)
    return out
