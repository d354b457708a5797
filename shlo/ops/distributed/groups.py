"""Process groups (spec "Collective ops") and the attributes that choose them.

A collective's ``replica_groups`` (or ``source_target_pairs``) and ``channel_handle`` choose one
of the spec's four strategies, which turn the ids of the attribute into groups of process ids
``(replica_id, partition_id)`` for a given grid size. :class:`Groups` does this once per grid
size for one op.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

import numpy as np

from ...attributes import (
    ArrayAttr, DenseElementsAttr, DictAttr, StructAttr, SymbolRefAttr, bool_attr, int_attr, ints,
)
from ...errors import Diagnostics, ExecutionError
from ...ir import Operation
from .grid import ProcessId

if TYPE_CHECKING:  # pragma: no cover
    from ...interpreter.evaluator import ProcessContext

__all__ = [
    "cross_replica", "cross_partition", "cross_replica_and_partition", "flattened_ids",
    "process_groups", "process_label", "plural_label", "channel_id", "reduction_strategy",
    "simple_strategy", "id_groups", "Groups", "check_replica_groups", "group_size",
    "check_global_ids", "mesh_axes_groups",
]


# --- the strategies ------------------------------------------------------------------------


def cross_replica(replica_groups: Sequence[Sequence[int]], num_replicas: int,
                  num_partitions: int) -> list[list[ProcessId]]:
    """Spec `cross_replica`: each replica group, once per partition."""
    return [[(r, p) for r in group] for group in replica_groups for p in range(num_partitions)]


def cross_partition(partition_groups: Sequence[Sequence[int]], num_replicas: int,
                    num_partitions: int) -> list[list[ProcessId]]:
    """Spec `cross_partition`: each partition group, once per replica."""
    return [[(r, p) for p in group] for group in partition_groups for r in range(num_replicas)]


def cross_replica_and_partition(replica_groups: Sequence[Sequence[int]], num_replicas: int,
                                num_partitions: int) -> list[list[ProcessId]]:
    """Spec `cross_replica_and_partition`: each replica group times all partitions."""
    return [[(r, p) for p in range(num_partitions) for r in group] for group in replica_groups]


def flattened_ids(flattened_id_groups: Sequence[Sequence[int]], num_replicas: int,
                  num_partitions: int) -> list[list[ProcessId]]:
    """Spec `flattened_ids`: ids are ``replica_id * num_partitions + partition_id``."""
    return [[divmod(i, num_partitions) for i in group] for group in flattened_id_groups]


_STRATEGIES: dict[str, Callable[..., list[list[ProcessId]]]] = {
    "cross_replica": cross_replica,
    "cross_partition": cross_partition,
    "cross_replica_and_partition": cross_replica_and_partition,
    "flattened_ids": flattened_ids,
}

# What the ids of each strategy's groups count, and their bound.
_ID_KIND = {"cross_replica": "replica", "cross_partition": "partition",
            "cross_replica_and_partition": "replica", "flattened_ids": "process"}


def process_groups(strategy: str, groups: Sequence[Sequence[int]], num_replicas: int,
                   num_partitions: int) -> list[list[ProcessId]]:
    """The process groups of ``strategy`` (a spec strategy name) for ``groups``.

    Negative ids are padding of ragged groups (`[[0, 1], [2, -1]]`) and are dropped. An empty
    ``groups`` means one group of every id (XLA's convention). Raises ValueError for an id
    outside the grid.
    """
    kind = _ID_KIND[strategy]
    bound = {"replica": num_replicas, "partition": num_partitions,
             "process": num_replicas * num_partitions}[kind]
    clean = [[int(i) for i in g if int(i) >= 0] for g in groups]
    clean = [g for g in clean if g]
    if not clean:
        clean = [list(range(bound))]
    for g in clean:
        for i in g:
            if i >= bound:
                raise ValueError(f"{kind} id {i} in the groups is out of range for the "
                                 f"{num_replicas}x{num_partitions} process grid "
                                 f"({num_replicas} replicas x {num_partitions} partitions); "
                                 f"run with replicas=/partitions= (--replicas/--partitions)")
    return _STRATEGIES[strategy](clean, num_replicas, num_partitions)


def process_label(process: ProcessId | int, num_partitions: int = 1) -> str:
    """`process (replica 1, partition 0)`; a flat id is converted with ``num_partitions``."""
    if isinstance(process, int):
        process = divmod(process, num_partitions)
    return f"process (replica {process[0]}, partition {process[1]})"


def plural_label(processes: Iterable[ProcessId]) -> str:
    """`process (replica 0, partition 1)` or `processes (replica 0, partition 0), (...)`."""
    ps = list(processes)
    if len(ps) == 1:
        return process_label(ps[0])
    return "processes " + ", ".join(f"(replica {r}, partition {p})" for r, p in ps)


# --- the attributes that choose them --------------------------------------------------------


def channel_id(op: Operation) -> int:
    """The op's channel id, the one rule for kernels and verifiers:

    * `channel_handle = #stablehlo.channel_handle<handle = N, type = T>`: N (0 when the struct
      has no handle); a `channel_handle` spelled another way (a dictionary with `handle`, or an
      integer): its handle;
    * else a `channel_id = N` integer attribute (VHLO's and older MHLO's spelling): N;
    * else 0 (no channel).
    """
    h = op.attr("channel_handle")
    if h is None:
        return int_attr(op, "channel_id", 0)
    v = h.get("handle", 0) if isinstance(h, StructAttr) or hasattr(h, "get") else h
    v = getattr(v, "value", v)
    try:
        return int(v)
    except (TypeError, ValueError):
        return 0


def reduction_strategy(op: Operation) -> str:
    """all_gather, all_reduce, reduce_scatter, collective_reduce: spec's process-group choice."""
    cid = channel_id(op)
    if bool_attr(op, "use_global_device_ids", False):
        if cid <= 0:
            raise ValueError("use_global_device_ids requires a positive channel_id")
        return "flattened_ids"
    return "cross_replica_and_partition" if cid > 0 else "cross_replica"


def simple_strategy(op: Operation) -> str:
    """all_to_all, collective_broadcast, collective_permute: spec's process-group choice."""
    return "cross_partition" if channel_id(op) > 0 else "cross_replica"


def id_groups(op: Operation, name: str = "replica_groups") -> list[list[int]]:
    """A 2-D integer attribute (`replica_groups`, `source_target_pairs`) as lists of ids; a
    mesh-based `#stablehlo.replica_group_mesh_axes<...>` as the groups it names
    (:func:`mesh_axes_groups`)."""
    a = op.attr(name)
    if a is None:
        return []
    if isinstance(a, StructAttr) and a.name == "stablehlo.replica_group_mesh_axes":
        try:
            return mesh_axes_groups(op, a)
        except ValueError as e:
            raise ExecutionError(f"'{op.name}' op: {name}: {e}", op.location) from None
    if isinstance(a, DenseElementsAttr):
        arr = np.asarray(a.array)
        if arr.size == 0:
            return []
        if arr.ndim == 1:
            arr = arr.reshape(1, -1)
        return [[int(x) for x in row] for row in arr.reshape(arr.shape[0], -1)]
    if isinstance(a, ArrayAttr):
        return [list(ints(g)) for g in a]  # type: ignore[arg-type]
    return [list(g) for g in a]


# --- mesh-based replica groups (`#stablehlo.replica_group_mesh_axes`) -------------------------


def _get(a: Any, key: str) -> Any:
    """A field of a struct-like attribute (StructAttr, DictAttr, or an sdy attribute)."""
    if isinstance(a, StructAttr):
        return a.get(key)
    if isinstance(a, DictAttr):
        return dict(a.items).get(key)
    return getattr(a, key, None)


def _plain(v: Any) -> Any:
    return getattr(v, "value", v)


def _mesh_symbol(op: Operation, name: str) -> Any:
    """The op defining symbol ``name`` in the module enclosing ``op``."""
    top: Any = op
    while top.parent is not None and top.parent.parent is not None \
            and top.parent.parent.parent is not None:
        top = top.parent.parent.parent
    for region in top.regions:
        for block in region.blocks:
            for o in block.operations:
                sym = o.attr("sym_name")
                if sym is not None and _plain(sym) == name:
                    return o
    raise ValueError(f"mesh symbol '{name}' not found")


def _mesh_shape(op: Operation, mesh: Any) -> tuple[list[tuple[str, int]], list[int]]:
    """(axes as (name, size), device ids in mesh order) of an inline `#stablehlo.mesh<...>`, an
    `sdy.mesh` symbol (its `mesh` attribute or its `stablehlo.mesh` dictionary)."""
    if isinstance(mesh, SymbolRefAttr):
        o = _mesh_symbol(op, mesh.root)
        mesh = o.attr("mesh") if o.attr("mesh") is not None else o.attr("stablehlo.mesh")
        if mesh is None:
            raise ValueError(f"symbol '{o.attr('sym_name').value}' is not a mesh")
    axes_attr = _get(mesh, "axes") or ()
    axes = [(str(_plain(_get(x, "name"))), int(_plain(_get(x, "size")))) for x in axes_attr]
    ids = _get(mesh, "device_ids")
    if isinstance(ids, DenseElementsAttr):
        devices = [int(i) for i in np.asarray(ids.array).reshape(-1)]
    elif ids:
        devices = [int(_plain(i)) for i in ids]
    else:
        devices = []
    n = int(np.prod([s for _, s in axes])) if axes else 1
    return axes, devices or list(range(n))


_AXIS_REF_RE = re.compile(r'name\s*=\s*"((?:[^"\\]|\\.)*)"(?:\s*,\s*sub_axis_info\s*=\s*'
                          r'(?:#stablehlo\.sub_axis_info<)?\s*\(?\s*(?:pre_size\s*=\s*)?(\d+)'
                          r'\s*\)?\s*,?\s*(?:size\s*=\s*)?(\d+))?')


def _axis_ref(x: Any) -> tuple[str, int | None, int | None]:
    """(name, pre_size, size) of a `#stablehlo.axis_ref<name = "x"[, sub_axis_info = ...]>`."""
    if isinstance(x, StructAttr):
        sub = x.get("sub_axis_info")
        pre = size = None
        if sub is not None:
            pre, size = int(_plain(_get(sub, "pre_size"))), int(_plain(_get(sub, "size")))
        return str(_plain(x.get("name"))), pre, size
    text = getattr(x, "text", None)
    m = _AXIS_REF_RE.search(text or "")
    if m is None:
        raise ValueError(f"cannot read axis reference {x!r}")
    return (m.group(1), int(m.group(2)) if m.group(2) else None,
            int(m.group(3)) if m.group(3) else None)


def mesh_axes_groups(op: Operation, attr: StructAttr) -> list[list[int]]:
    """The device groups of `#stablehlo.replica_group_mesh_axes<mesh = M, axes = [...]>`: the
    devices of mesh ``M`` that differ only in the listed axes (or sub-axes) form a group,
    ordered by the listed axes major to minor; groups are ordered by the remaining coordinates
    (a device's id is the mesh's `device_ids` at its row-major mesh position)."""
    axes, devices = _mesh_shape(op, attr.get("mesh"))
    if not axes:
        return [[d] for d in devices]
    sizes = {n: s for n, s in axes}
    # Split every axis into the factors the refs name (pre, size, post), row-major.
    refs = [_axis_ref(x) for x in (attr.get("axes") or ())]
    factors: list[tuple[str, int, int]] = []  # (axis, pre, size) for every factor
    for name, size in axes:
        cuts = sorted({1, size} | {c for n, pre, sz in refs if n == name and pre is not None
                                   for c in (pre, pre * sz)})
        for lo, hi in zip(cuts, cuts[1:]):
            factors.append((name, lo, hi // lo))
    for name, pre, sz in refs:
        if name not in sizes:
            raise ValueError(f"axis '{name}' is not in the mesh")
    # A sub-axis `(pre)size` is the factor after the major factors of product `pre`: the
    # factors of an axis are already major to minor.
    order = factors
    shape = [f[2] for f in order]
    grid = np.asarray(devices, dtype=np.int64).reshape(shape)
    chosen: list[int] = []
    for name, pre, sz in refs:
        if pre is None:
            chosen.extend(i for i, f in enumerate(order) if f[0] == name)
        else:
            chosen.extend(i for i, f in enumerate(order) if f[0] == name and pre <= f[1]
                          and f[1] * f[2] <= pre * sz)
    rest = [i for i in range(len(order)) if i not in chosen]
    g = grid.transpose(rest + chosen).reshape(-1, int(np.prod([shape[i] for i in chosen] or [1])))
    return [[int(x) for x in row] for row in g]


class Groups:
    """The process groups of one op, memoised per grid size."""

    def __init__(self, op: Operation, strategy: str, groups: list[list[int]]) -> None:
        self.op = op
        self.strategy = strategy
        self.groups = groups
        self._memo: dict[tuple[int, int], dict[ProcessId, tuple[ProcessId, ...]]] = {}

    def table(self, num_replicas: int, num_partitions: int) -> dict[ProcessId,
                                                                    tuple[ProcessId, ...]]:
        key = (num_replicas, num_partitions)
        t = self._memo.get(key)
        if t is None:
            try:
                pgs = process_groups(self.strategy, self.groups, num_replicas, num_partitions)
            except ValueError as e:
                raise ExecutionError(f"'{self.op.name}' op: {e}", self.op.location) from None
            t = {}
            for g in pgs:
                for p in g:
                    if p in t:
                        raise ExecutionError(f"'{self.op.name}' op: {process_label(p)} is in "
                                             f"more than one process group ({self.strategy})",
                                             self.op.location)
                    t[p] = tuple(g)
            self._memo[key] = t
        return t

    def find(self, process: ProcessContext) -> tuple[ProcessId, ...] | None:
        """The group of ``process``, or None."""
        t = self.table(process.num_replicas, process.num_partitions)
        return t.get((process.replica_id, process.partition_id))

    def of(self, process: ProcessContext) -> tuple[ProcessId, ...]:
        """The group of ``process``; an error when it is in none."""
        g = self.find(process)
        if g is None:
            me = (process.replica_id, process.partition_id)
            raise ExecutionError(f"'{self.op.name}' op: {process_label(me)} is in none of the "
                                 f"process groups ({self.strategy} of {self.groups})",
                                 self.op.location)
        return g


# --- constraints on the groups (verifiers) -------------------------------------------------


def check_replica_groups(op: Operation, diag: Diagnostics, label: str, same_size: bool,
                         group_size: int | None = None, attr: str = "replica_groups",
                         covering: bool = True) -> bool:
    """is_unique(replica_groups) and 0 <= replica_groups < size, as upstream checks them: a
    rank-2 tensor of ids 0..n-1 each seen once (-1 pads non-uniform groups where allowed)."""
    a = op.attr(attr)
    if isinstance(a, StructAttr):  # #stablehlo.replica_group_mesh_axes<mesh = @m, ...>
        mesh = a.get("mesh")
        name = mesh.root if isinstance(mesh, SymbolRefAttr) else None
        symbols = getattr(diag, "symbols", None)
        if isinstance(name, str) and symbols is not None and name not in symbols:
            report = getattr(diag, "symbol_use_error", diag.error)
            report(op, label, f"replica_groups: mesh symbol '{name}' not found")
        return True
    if not isinstance(a, DenseElementsAttr):
        return True
    arr = a.array
    if arr.ndim != 2:
        diag.error(op, label, f"replica groups should be a rank 2 tensor, got rank {arr.ndim}")
        return False
    if bool_attr(op, "use_global_device_ids", False) and arr.size == 0:
        diag.error(op, label, "if `use_global_device_ids` is set, the replica groups cannot be "
                              "empty")
        return False
    seen: set[int] = set()
    for rid in arr.reshape(-1).tolist():
        if rid == -1:
            if not same_size:
                continue
            diag.error(op, label, "Invalid replica id -1")
            return False
        if rid in seen:
            diag.error(op, label, f"replica id #{rid} seen more than once")
            return False
        if rid < 0 and not covering:
            diag.error(op, label, f"replica ids must be non-negative, got {rid}")
            return False
        seen.add(rid)
    for i in range(len(seen) if covering else 0):
        if i not in seen:
            diag.error(op, label, f"replica id #{i} not seen in replica groups")
            return False
    if same_size and group_size is not None and (arr.shape[0] == 0 or
                                                 arr.shape[1] != group_size):
        diag.error(op, "C8", f"group size of replica_groups must be {group_size}, got "
                             f"{arr.shape[1]}")
        return False
    return True


def group_size(op: Operation) -> int | None:
    """`dim(process_groups, 1)` when `replica_groups` gives it (not for empty groups, which
    span the whole grid: their size is known only when the program runs)."""
    a = op.attr("replica_groups")
    if isinstance(a, DenseElementsAttr) and a.array.ndim == 2 and a.array.shape[1] > 0:
        return int(a.array.shape[1])
    return None


def check_global_ids(op: Operation, diag: Diagnostics, label: str, strict: bool) -> bool:
    """`use_global_device_ids = true` implies `channel_id > 0` (all_gather only rejects
    negative ids, as upstream does)."""
    if not bool_attr(op, "use_global_device_ids", False):
        return True
    cid = channel_id(op)
    if strict and cid <= 0:
        diag.error(op, label, f"channel_id must be positive when useGlobalDeviceIds is set but "
                              f"got: {cid}")
        return False
    if not strict and cid < 0:
        diag.error(op, label, f"channel_id cannot be negative when useGlobalDeviceIds is set "
                              f"(got {cid})")
        return False
    return True
