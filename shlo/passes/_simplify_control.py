"""`stablehlo-aggressive-simplification` patterns of the ops with regions (reduce, sort, while)
and of custom_call.
"""

from __future__ import annotations

from ..attributes import IntegerAttr, StringAttr
from ..ir import Block, Operation, Region, Value
from ..types import TensorType, element_type
from . import _simplify_shape  # noqa: F401  (its declarative patterns register first)
from ._patterns import PatternRewriter, pattern, region_of
from ._rewrite import Rewriter, i64_array
from ._simplify_elementwise import SIMPLIFY, is_static


def _body(op: Operation) -> Block:
    return op.regions[0].blocks[0]


@pattern(SIMPLIFY, "stablehlo.custom_call", 1)
def custom_call_backend_config_to_ffi(op: Operation, rw: PatternRewriter) -> bool:
    """API_VERSION_ORIGINAL custom calls with `mhlo.backend_config` and no backend_config:
    that dictionary becomes the backend_config of a typed-FFI call."""
    api = op.attr("api_version")
    if api is not None and int(getattr(api, "value", 1)) != 1:
        return False
    cfg = op.attributes.get("mhlo.backend_config")
    if cfg is None:
        return False
    old = op.attr("backend_config")
    if old is not None and not (isinstance(old, StringAttr) and old.value == ""):
        return False
    op.properties["backend_config"] = cfg
    op.properties["api_version"] = IntegerAttr(4, element_type("i32"))
    op.attributes = {k: v for k, v in op.attributes.items() if k != "mhlo.backend_config"}
    op.properties.pop("mhlo.backend_config", None)
    rw.modified(op)
    return True


@pattern(SIMPLIFY, "stablehlo.reduce", 1)
def reduce_of_empty(op: Operation, rw: PatternRewriter) -> bool:
    """reduce over inputs with no element -> broadcast_in_dim(init)... (static shapes)."""
    n = len(op.results)
    t = op.operands[0].type
    if not isinstance(t, TensorType) or t.shape is None or 0 not in t.shape or \
            not is_static(t):
        return False
    outs = []
    for init, r in zip(op.operands[n:], op.results):
        outs.append(rw.create1("stablehlo.broadcast_in_dim", [init], r.type,
                               {"broadcast_dimensions": i64_array([])}))
    rw.replace_op(op, outs)
    return True


@pattern(SIMPLIFY, "stablehlo.reduce", 1)
def reduce_returning_outer_values(op: Operation, rw: PatternRewriter) -> bool:
    """reduce whose body returns values defined outside it -> those values."""
    ret = _body(op).operations[-1]
    if ret.name != "stablehlo.return":
        return False
    region = op.regions[0]
    if any(region_of(v) is region for v in ret.operands):
        return False
    rw.replace_op(op, list(ret.operands))
    return True


@pattern(SIMPLIFY, "stablehlo.reduce", 1)
def reduce_drop_unused_results(op: Operation, rw: PatternRewriter) -> bool:
    """reduce(in_1, in_2, ...) -> reduce(in_1, ...) when result 2 is unused and what computes
    the used results does not read pair 2."""
    used = [i for i, r in enumerate(op.results) if not rw.use_empty(r)]
    n = len(op.results)
    if len(used) == n:
        return False
    block = _body(op)
    ret = block.operations[-1]
    region = op.regions[0]
    used_ops: set[int] = set()
    used_args = [False] * (2 * n)
    for i in used:
        work = [ret.operands[i]] if region_of(ret.operands[i]) is region else []
        while work:
            v = work.pop()
            if isinstance(v.owner, Block):
                p = v.index % n
                used_args[p] = used_args[p + n] = True
            elif isinstance(v.owner, Operation):
                used_ops.add(id(v.owner))
                work.extend(x for x in v.owner.operands if region_of(x) is region)
    if 2 * len(used) != sum(used_args):
        return False  # not the conservative case
    keep = [i for i in range(n) if used_args[i]]
    inputs = [op.operands[i] for i in keep]
    inits = [op.operands[i + n] for i in keep]
    new_types = []
    for i in used:
        rt = op.results[i].type
        et = ret.operands[i].type.element_type if isinstance(ret.operands[i].type, TensorType) \
            else rt.element_type
        new_types.append(TensorType(rt.shape, et, rt.encoding))
    cloner = Rewriter(lambda r, o: None)
    nb = Block()
    for a in block.arguments:
        if used_args[a.index]:
            na = nb.add_argument(a.type, a.name)
            cloner.values[a] = na
    cloner.block = nb
    for o in block.operations[:-1]:
        if id(o) in used_ops:
            cloner.clone(o)
    nb.append(Operation("stablehlo.return", [cloner.get(ret.operands[i]) for i in used], [],
                        location=ret.location))
    new = rw.create(op.name, inputs + inits, new_types, dict(op.properties),
                    dict(op.attributes), [Region([nb])])
    results: list[Value | None] = [None] * n
    for k, i in enumerate(used):
        results[i] = new.results[k]
    rw.replace_op(op, results)
    return True


@pattern(SIMPLIFY, "stablehlo.sort", 1)
def sort_drop_unused_operands(op: Operation, rw: PatternRewriter) -> bool:
    """sort(X, Y) -> sort(X) when Y's result is unused and the comparator ignores Y."""
    block = op.regions[0].blocks[0]
    erased = [i for i in range(len(op.operands)) if rw.use_empty(op.results[i])
              and rw.use_empty(block.arguments[2 * i]) and rw.use_empty(block.arguments[2 * i + 1])]
    if not erased:
        return False
    keep = [i for i in range(len(op.operands)) if i not in erased]
    props = {k: v for k, v in op.properties.items() if k in ("dimension", "is_stable")}
    region = rw.take_regions(op)[0]
    block.arguments = [a for a in block.arguments if a.index // 2 in keep]
    for k, a in enumerate(block.arguments):
        a.index = k
    new = rw.create(op.name, [op.operands[i] for i in keep], [op.results[i].type for i in keep],
                    props, {}, [region])
    results: list[Value | None] = [None] * len(op.results)
    for k, i in enumerate(keep):
        results[i] = new.results[k]
    rw.replace_op(op, results)
    return True


@pattern(SIMPLIFY, "stablehlo.sort", 1)
def sort_set_dimension(op: Operation, rw: PatternRewriter) -> bool:
    """sort(X, dimension = -1) -> sort(X, dimension = rank - 1)."""
    d = op.attr("dimension")
    if not op.results or d is None or int(d.value) != -1:
        return False
    rank = op.results[0].type.rank
    op.properties["dimension"] = IntegerAttr(rank - 1, element_type("i64"))
    rw.modified(op)
    return True


@pattern(SIMPLIFY, "stablehlo.while", 1)
def while_loop_invariants_as_captures(op: Operation, rw: PatternRewriter) -> bool:
    """while: values passed through unchanged become implicit captures."""
    cond, body = op.regions[0].blocks[0], op.regions[1].blocks[0]
    ret = body.operations[-1]
    n = len(op.operands)
    inv = [i for i in range(n) if op.operands[i] is ret.operands[i]
           or body.arguments[i] is ret.operands[i]]
    if not inv:
        return False
    for i in inv:
        x = op.operands[i]
        rw.replace_all_uses(cond.arguments[i], x)
        rw.replace_all_uses(body.arguments[i], x)
        rw.replace_all_uses(op.results[i], x)
    keep = [i for i in range(n) if i not in inv]
    cond.arguments = [cond.arguments[i] for i in keep]
    body.arguments = [body.arguments[i] for i in keep]
    for blk in (cond, body):
        for k, a in enumerate(blk.arguments):
            a.index = k
    rw.set_operands(ret, [ret.operands[i] for i in keep])
    regions = rw.take_regions(op)
    new = rw.create(op.name, [op.operands[i] for i in keep], [op.results[i].type for i in keep],
                    dict(op.properties), dict(op.attributes), regions)
    results: list[Value | None] = [None] * n
    for k, i in enumerate(keep):
        results[i] = new.results[k]
    rw.replace_op(op, results)
    return True
