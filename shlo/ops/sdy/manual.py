"""`sdy.manual_computation`: per-device code with explicit collectives, run on the process
grid (docs/sharding.md).

The op's operands are global values; its body is written for one device, on the local pieces
that `in_shardings` cut over the `manual_axes` of the mesh, and its collectives name devices by
id. shlo runs it SPMD, one process per mesh device, the device id being the process's
flattened id (``replica_id * num_partitions + partition_id``: what JAX's
`use_global_device_ids` groups and channel-carrying `collective_permute` pairs count):

1. each process slices every operand to its piece: along a dimension sharded by
   ``{"a", "b", ...}`` the manual axes (a prefix of the list, as upstream requires) cut the
   dimension into prod(sizes) blocks, the device's block index being its coordinates on those
   axes read major to minor; axes that are not manual (free axes) do not cut: the body sees the
   value whole along them;
2. runs the body, its collectives meeting the other processes on the grid;
3. assembles every result by `out_shardings`: the processes that differ only in the manual
   axes meet once (one rendezvous per op), each block of the global result is taken from the
   first device holding it (devices along axes the result is replicated on hold equal copies),
   blocks along `unreduced` manual axes are reduced (sum, or the sharding's max/min).

Processes that differ in an axis that is not manual run the same body on the same pieces
(that is what a free axis means for a global program). Nested manual computations compose: the
inner one runs on the same processes, cutting the outer body's pieces further.
"""

from __future__ import annotations

from itertools import product
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ...errors import Diagnostics, ExecutionError
from ...ir import Module, Operation
from ...registry import Kernel, define, kernel, verifier
from ...syntax.directives import Format
from ...syntax.lexer import BARE
from ...types import TensorType, Type
from ..distributed.grid import ProcessId
from ..distributed.meeting import meet, shared
from .attrs import (
    AxisList, DimSharding, Mesh, ShardingPerValue, TensorSharding, parse_axis_names,
    parse_stripped_per_value,
)
from .ops import (
    _functional_tail, check_body_types, check_sharding_rank, parse_region_with_args,
    print_region_with_args,
)

if TYPE_CHECKING:  # pragma: no cover
    from ...interpreter.evaluator import PrepareContext
    from ...syntax.parser import Parser
    from ...syntax.printer import Printer

__all__ = ["module_meshes", "resolve_mesh", "local_shape", "device_coordinates"]


# --- syntax -----------------------------------------------------------------------------------


def _parse(p: Parser, name: str, nres: int, start: int) -> Operation:
    """`sdy.manual_computation(%x) in_shardings=[...] out_shardings=[...] manual_axes={...}
    (%arg: T) { body } attr-dict : (T) -> R`."""
    p.expect("(")
    operands = p.operand_list()
    p.expect(")")
    props: dict[str, Any] = {}
    for key in ("in_shardings", "out_shardings"):
        if p.k != BARE or p.v != key:
            p.error(f"expected '{key}'")
        p._advance()
        p.expect("=")
        props[key] = parse_stripped_per_value(p)
    if p.k != BARE or p.v != "manual_axes":
        p.error("expected 'manual_axes'")
    p._advance()
    p.expect("=")
    props["manual_axes"] = AxisList("manual_axes", parse_axis_names(p))
    region = parse_region_with_args(p)
    attrs, results = _functional_tail(p, name, operands, props)
    return Operation(name, operands, results, props, attrs, [region])


def _print(pr: Printer, op: Operation) -> str | None:
    ins, outs, axes = op.attr("in_shardings"), op.attr("out_shardings"), op.attr("manual_axes")
    if not isinstance(ins, ShardingPerValue) or not isinstance(outs, ShardingPerValue) \
            or not isinstance(axes, AxisList) or axes.kind != "manual_axes" \
            or len(op.regions) != 1:
        return None
    body = print_region_with_args(pr, op.regions[0])
    if body is None:
        return None
    d = pr.attr_dict(op, {"in_shardings", "out_shardings", "manual_axes"})
    return (f"({', '.join(pr.val(v) for v in op.operands)}) in_shardings={ins.stripped()} "
            f"out_shardings={outs.stripped()} manual_axes={axes.body()} {body}{d} : "
            f"{pr.functional(op.operand_types, op.result_types)}")


define("sdy.manual_computation", inherent="in_shardings out_shardings manual_axes",
       summary="per-device code with explicit collectives over the manual mesh axes",
       syntax=Format(_parse, _print, frozenset()))


# --- meshes -----------------------------------------------------------------------------------


def module_meshes(module: Module | None) -> dict[str, Mesh]:
    """The `sdy.mesh` symbols of ``module`` by name."""
    out: dict[str, Mesh] = {}
    if module is None or not module.op.regions or not module.op.regions[0].blocks:
        return out
    for op in module.body.operations:
        if op.name == "sdy.mesh":
            sym, mesh = op.attr("sym_name"), op.attr("mesh")
            if sym is not None and isinstance(mesh, Mesh):
                out[sym.value] = mesh
    return out


def resolve_mesh(sh: TensorSharding, meshes: dict[str, Mesh]) -> Mesh | None:
    return sh.mesh if isinstance(sh.mesh, Mesh) else meshes.get(sh.mesh)


def device_coordinates(mesh: Mesh) -> dict[int, dict[str, int]]:
    """Device id -> its coordinate on every axis of ``mesh``."""
    sizes = [a.size for a in mesh.axes]
    out: dict[int, dict[str, int]] = {}
    for pos, dev in enumerate(mesh.devices):
        idx = np.unravel_index(pos, sizes) if sizes else ()
        out[dev] = {a.name: int(i) for a, i in zip(mesh.axes, idx)}
    return out


def _manual_prefix(d: DimSharding, manual: frozenset[str]) -> tuple:
    """The manual axis refs of a dimension sharding (a prefix of its axes)."""
    refs = []
    for a in d.axes:
        if a.name not in manual:
            break
        refs.append(a)
    return tuple(refs)


def _blocks(d: DimSharding, manual: frozenset[str], mesh: Mesh) -> int:
    n = 1
    for a in _manual_prefix(d, manual):
        n *= a.extent(mesh)
    return n


def local_shape(t: Type, sh: TensorSharding, manual: frozenset[str], mesh: Mesh
                ) -> tuple[int | None, ...] | None:
    """The per-device shape of a global tensor type (None when a dimension does not divide)."""
    shape = getattr(t, "shape", None)
    if shape is None:
        return ()
    out: list[int | None] = []
    for n, d in zip(shape, sh.dims):
        k = _blocks(d, manual, mesh)
        if n is None:
            out.append(None)
            continue
        if n % k:
            return None
        out.append(n // k)
    return tuple(out)


def _block_index(d: DimSharding, manual: frozenset[str], mesh: Mesh,
                 coords: dict[str, int]) -> int:
    i = 0
    for a in _manual_prefix(d, manual):
        i = i * a.extent(mesh) + a.coordinate(mesh, coords)
    return i


# --- verifier ---------------------------------------------------------------------------------


@verifier("sdy.manual_computation")
def _verify(op: Operation, diag: Diagnostics) -> None:
    """ops.td `ManualComputationOp`: one sharding per operand/result, the manual axes in the
    mesh, manual axes before free axes in each dimension, no padding, and the body's
    arguments/results have the local types of the operands/results."""
    ins, outs, axes = op.attr("in_shardings"), op.attr("out_shardings"), op.attr("manual_axes")
    if not isinstance(ins, ShardingPerValue) or not isinstance(outs, ShardingPerValue) \
            or not isinstance(axes, AxisList):
        diag.error(op, "", "requires in_shardings, out_shardings (#sdy.sharding_per_value) and "
                           "manual_axes (#sdy<manual_axes{...}>)")
        return
    for what, shs, vals in (("operand", ins.shardings, op.operands),
                            ("result", outs.shardings, op.results)):
        if len(shs) != len(vals):
            diag.error(op, "", f"number of {what} shardings ({len(shs)}) does not match the "
                               f"number of {what}s ({len(vals)})")
            return
    symbols = getattr(diag, "symbols", None) or {}
    meshes = {k: v.attr("mesh") for k, v in symbols.items() if v.name == "sdy.mesh"}
    manual = frozenset(axes.items)
    locals_: list[list[Type]] = []
    for what, shs, vals in (("in", ins.shardings, op.operands),
                            ("out", outs.shardings, op.results)):
        types: list[Type] = []
        for i, (sh, v) in enumerate(zip(shs, vals)):
            if not check_sharding_rank(op, diag, sh, v.type, f"{what}_shardings {i}"):
                return
            mesh = resolve_mesh(sh, meshes)
            if mesh is None:
                if symbols:
                    diag.error(op, "", f"unknown mesh: {sh.mesh}")
                    return
                types.append(v.type)
                continue
            for a in manual:
                if mesh.axis_size(a) is None:
                    diag.error(op, "", f"unknown axis name: \"{a}\" (not in mesh "
                                       f"{mesh.body()})")
                    return
            for d in sh.dims:
                seen_free = False
                for a in d.axes:
                    if a.name not in manual:
                        seen_free = True
                    elif seen_free:
                        diag.error(op, "", f"{what}_shardings {i}: operand {i} has a manual "
                                           f"axis after a free axis in its dimension "
                                           f"sharding {d.body()}")
                        return
            ls = local_shape(v.type, sh, manual, mesh)
            if ls is None:
                diag.error(op, "", f"{what}_shardings {i}: a dimension of {v.type} is not "
                                   f"divisible by the manual axes sharding it (padding)")
                return
            t = v.type
            types.append(TensorType(ls, t.element_type, t.encoding)
                         if isinstance(t, TensorType) else t)
        locals_.append(types)
    check_body_types(op, diag, locals_[0], locals_[1])


# --- kernel -----------------------------------------------------------------------------------


def _common_mesh(op: Operation, shs: Sequence[TensorSharding], meshes: dict[str, Mesh],
                 manual: frozenset[str]) -> Mesh | None:
    mesh = None
    for sh in shs:
        m = resolve_mesh(sh, meshes)
        if m is None:
            raise ExecutionError(f"'{op.name}' op: unknown mesh {sh.mesh}", op.location)
        if mesh is not None and m != mesh and manual:
            raise ExecutionError(f"'{op.name}' op: its shardings use different meshes "
                                 f"({mesh.body()} and {m.body()})", op.location)
        mesh = m
    return mesh


@kernel("sdy.manual_computation")
def manual_computation(op: Operation, ctx: PrepareContext) -> Kernel:
    """Slice the operands by `in_shardings`, run the body on this device's pieces, assemble the
    results by `out_shardings` with the other devices of the manual axes."""
    body = ctx.region(op.regions[0])
    ins = op.attr("in_shardings").shardings
    outs = op.attr("out_shardings").shardings
    manual = frozenset(op.attr("manual_axes").items)
    meshes = module_meshes(ctx.module)
    mesh = _common_mesh(op, list(ins) + list(outs), meshes, manual)
    size = 1
    for a in manual:
        size *= (mesh.axis_size(a) or 1) if mesh is not None else 1
    if mesh is None or size == 1:
        def inline(*args: Any) -> Sequence[Any]:
            return body(*args)

        return inline

    process = ctx.process
    coords = device_coordinates(mesh)
    free = [a.name for a in mesh.axes if a.name not in manual]
    # The processes that assemble together: same coordinates on every free axis.
    groups: dict[int, tuple[ProcessId, ...]] = {}
    by_free: dict[tuple[int, ...], list[int]] = {}
    for dev in mesh.devices:
        by_free.setdefault(tuple(coords[dev][a] for a in free), []).append(dev)
    out_types = [v.type for v in op.results]

    def run(*args: Any) -> Sequence[Any]:
        dev = process.process_id
        c = coords.get(dev)
        n = process.num_replicas * process.num_partitions
        if c is None or max(mesh.devices) >= n:
            if n < mesh.size:
                raise ExecutionError(
                    f"'{op.name}' op: the body is manual over {size} devices of mesh "
                    f"{mesh.body()} but the program runs on {n} process(es); run it with "
                    f"shlo.run / `shlo run` (which start one process per device for a sharded "
                    f"program) or on a grid of {mesh.size} processes (partitions={mesh.size})",
                    op.location)
            raise ExecutionError(f"'{op.name}' op: process {dev} is not a device of mesh "
                                 f"{mesh.body()}", op.location)
        pieces = [_slice(np.asarray(a), sh, manual, mesh, c) for a, sh in zip(args, ins)]
        results = tuple(body(*pieces))
        group = groups.get(dev)
        if group is None:
            members = by_free[tuple(c[a] for a in free)]
            group = groups[dev] = tuple(divmod(d, process.num_partitions) for d in members)

        def combine(g: tuple[ProcessId, ...], values: list[Any]) -> list[Any]:
            devs = [r * process.num_partitions + p for r, p in g]
            full = tuple(shared(_assemble(op, i, out_types[i], sh, manual, mesh, coords, devs,
                                          [v[i] for v in values]))
                         for i, sh in enumerate(outs))
            return [full] * len(g)

        return meet(op, process, group, results, combine)

    return run


def _slice(a: np.ndarray, sh: TensorSharding, manual: frozenset[str], mesh: Mesh,
           coords: dict[str, int]) -> np.ndarray:
    if a.ndim == 0:
        return a
    index = []
    for n, d in zip(a.shape, sh.dims):
        k = _blocks(d, manual, mesh)
        if k == 1:
            index.append(slice(None))
            continue
        m = n // k
        i = _block_index(d, manual, mesh, coords)
        index.append(slice(i * m, (i + 1) * m))
    return a[tuple(index)]


_FOLD = {"sum": np.add, "max": np.maximum, "min": np.minimum}


def _assemble(op: Operation, i: int, t: Type, sh: TensorSharding, manual: frozenset[str],
              mesh: Mesh, coords: dict[int, dict[str, int]], devs: list[int],
              pieces: list[Any]) -> np.ndarray:
    """The global value of result ``i`` from the pieces of ``devs``."""
    first = np.asarray(pieces[0])
    shape = getattr(t, "shape", None)
    if not shape:
        shape = first.shape
    unreduced = [a for a in sh.unreduced if a.name in manual]
    blocks: dict[tuple[int, ...], dict[tuple[int, ...], np.ndarray]] = {}
    for dev, piece in zip(devs, pieces):
        c = coords[dev]
        key = tuple(_block_index(d, manual, mesh, c) for d in sh.dims)
        ukey = tuple(a.coordinate(mesh, c) for a in unreduced)
        blocks.setdefault(key, {}).setdefault(ukey, np.asarray(piece))
    out = np.empty(tuple(int(n) for n in shape), dtype=first.dtype)
    counts = [_blocks(d, manual, mesh) for d in sh.dims]
    for key in product(*[range(k) for k in counts]):
        got = blocks.get(key)
        if got is None:
            raise ExecutionError(f"'{op.name}' op: no device computed block {list(key)} of "
                                 f"result {i}", op.location)
        parts = [got[k] for k in sorted(got)]
        v = parts[0]
        if unreduced:
            fold = _FOLD[sh.reduction]
            v = parts[0].copy()
            for w in parts[1:]:
                fold(v, w, out=v)
        index = []
        for kk, n, k in zip(key, out.shape, counts):
            m = n // k
            index.append(slice(kk * m, (kk + 1) * m))
        out[tuple(index)] = v
    return out
