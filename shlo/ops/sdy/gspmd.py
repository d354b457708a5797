"""GSPMD sharding annotations: `mhlo.sharding` strings and the custom calls that mark a manual
region (what JAX emits with `jax_use_shardy_partitioner=False`).

A manual region is spelled::

    %0 = custom_call @Sharding(%x) {mhlo.sharding = "{devices=[2,4]<=[8]}"}        // S_in
    %1 = custom_call @SPMDFullToShardShape(%0) {mhlo.sharding = "{manual}"}       // local
    ...  per-device code with collectives (JAX: `call @shmap_body`) ...
    %2 = custom_call @Sharding(%r) {mhlo.sharding = "{manual}"}
    %3 = custom_call @SPMDShardToFullShape(%2) {mhlo.sharding = "{devices=[8,1]<=[8]}"} // S_out

shlo runs it as it runs `sdy.manual_computation` (:mod:`.manual`): one process per device,
the device id being the process's flattened id. `@Sharding` is the identity;
`@SPMDFullToShardShape` gives each device its tile of the operand under the sharding of the
`@Sharding` that produced it; `@SPMDShardToFullShape` assembles the global value from the tiles
of the devices that share its manual subgroup (the `manual` entries of `last_tile_dims`), each
tile taken from the first device holding it.

An HloSharding string (XLA's `HloSharding::ToString`): `{replicated}`, `{manual}`,
`{maximal device=N}`, `{devices=[d0,d1,...]<=[r0,...]T(p...)}` (iota tile assignment: the
devices iota(prod r) reshaped to r, transposed by p, reshaped to d) or
`{devices=[d0,...]i0,i1,...}` (explicit), with `last_tile_dim_replicate` or
`last_tile_dims={manual, replicated, ...}` naming trailing tile dimensions that do not cut the
data; a tuple `{{...}, {...}}` shards each element. `metadata={...}` is ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ...attributes import StringAttr
from ...errors import ExecutionError
from ...ir import Operation
from ...registry import Kernel
from ..check import CHECK_TARGETS
from ..distributed.grid import ProcessId
from ..distributed.meeting import meet, shared

if TYPE_CHECKING:  # pragma: no cover
    from ...interpreter.evaluator import PrepareContext

__all__ = ["HloSharding", "parse_hlo_sharding", "GSPMD_TARGETS", "MANUAL_TARGETS"]


@dataclass(frozen=True)
class HloSharding:
    """One (non-tuple) HloSharding: ``kind`` is `replicated`, `manual`, `maximal`, `tiled` or
    `tuple` (``elements``); a tiled one has its tile assignment ``tiles`` (device ids, one
    axis per tile dimension) and the kinds of its trailing non-data dimensions ``last``."""

    kind: str
    tiles: np.ndarray | None = None
    last: tuple[str, ...] = ()
    device: int | None = None
    elements: tuple["HloSharding", ...] = ()

    @property
    def data_rank(self) -> int:
        return 0 if self.tiles is None else self.tiles.ndim - len(self.last)

    def data_tiles(self) -> tuple[int, ...]:
        return () if self.tiles is None else tuple(self.tiles.shape[:self.data_rank])

    def position(self, device: int) -> tuple[int, ...] | None:
        """The tile coordinates of ``device`` (None when it holds no tile)."""
        if self.tiles is None:
            return None
        where = np.argwhere(self.tiles == device)
        return tuple(int(i) for i in where[0]) if len(where) else None


_DEVICES_RE = re.compile(r"devices=\[([\d,\s]*)\]")
_IOTA_RE = re.compile(r"<=\[([\d,\s]*)\](?:T\(([\d,\s]*)\))?")
_LIST_RE = re.compile(r"([\d,\s]+)")
_LAST_RE = re.compile(r"last_tile_dims=\{([^}]*)\}")


def _ints(s: str) -> list[int]:
    return [int(x) for x in s.replace(" ", "").split(",") if x]


def _strip_metadata(s: str) -> str:
    i = s.find("metadata={")
    if i < 0:
        return s
    depth, j = 0, i + len("metadata=")
    while j < len(s):
        if s[j] == "{":
            depth += 1
        elif s[j] == "}":
            depth -= 1
            if depth == 0:
                break
        j += 1
    return s[:i] + s[j + 1:]


def _split_tuple(body: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, c in enumerate(body):
        if c == "{":
            if depth == 0:
                start = i
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                parts.append(body[start:i + 1])
    return parts


def parse_hlo_sharding(text: str) -> HloSharding:
    """An `mhlo.sharding` string as an :class:`HloSharding` (ValueError when malformed)."""
    s = _strip_metadata(text.strip())
    if not (s.startswith("{") and s.endswith("}")):
        raise ValueError(f"an HloSharding is written in braces, got {text!r}")
    body = s[1:-1].strip()
    if body.startswith("{") or body == "":
        return HloSharding("tuple", elements=tuple(parse_hlo_sharding(p)
                                                   for p in _split_tuple(body)))
    if body.startswith("replicated"):
        return HloSharding("replicated")
    if body.startswith("manual"):
        return HloSharding("manual")
    if body.startswith("maximal"):
        m = re.search(r"device=(\d+)", body)
        return HloSharding("maximal", device=int(m.group(1)) if m else 0)
    if body.startswith("unknown"):
        return HloSharding("replicated")
    m = _DEVICES_RE.match(body)
    if m is None:
        raise ValueError(f"unsupported HloSharding {text!r}")
    dims = _ints(m.group(1))
    rest = body[m.end():]
    it = _IOTA_RE.match(rest)
    if it is not None:
        reshape = _ints(it.group(1))
        ids = np.arange(int(np.prod(reshape)), dtype=np.int64).reshape(reshape)
        if it.group(2):
            ids = ids.transpose(_ints(it.group(2)))
        rest = rest[it.end():]
    else:
        lm = _LIST_RE.match(rest)
        if lm is None:
            raise ValueError(f"HloSharding {text!r} has no tile assignment")
        ids = np.asarray(_ints(lm.group(1)), dtype=np.int64)
        rest = rest[lm.end():]
    if ids.size != int(np.prod(dims)):
        raise ValueError(f"HloSharding {text!r}: {ids.size} devices for tiles {dims}")
    tiles = ids.reshape(dims)
    last: tuple[str, ...] = ()
    lm = _LAST_RE.search(rest)
    if lm is not None:
        last = tuple(x.strip() for x in lm.group(1).split(",") if x.strip())
    elif "last_tile_dim_replicate" in rest:
        last = ("replicated",)
    return HloSharding("tiled", tiles, last)


def _sharding_of(op: Operation) -> HloSharding:
    a = op.attr("mhlo.sharding")
    if not isinstance(a, StringAttr):
        raise ExecutionError(f"custom_call @{_target(op)}: expects an `mhlo.sharding` string "
                             f"attribute", op.location)
    try:
        return parse_hlo_sharding(a.value)
    except ValueError as e:
        raise ExecutionError(f"custom_call @{_target(op)}: {e}", op.location) from None


def _target(op: Operation) -> str:
    t = op.attr("call_target_name")
    return t.value if isinstance(t, StringAttr) else str(t)


def _tile_slices(sh: HloSharding, pos: tuple[int, ...], shape: Sequence[int]) -> tuple:
    tiles = sh.data_tiles()
    out = []
    for n, k, i in zip(shape, tiles, pos):
        m = n // k
        out.append(slice(i * m, (i + 1) * m))
    return tuple(out)


# --- the custom calls -------------------------------------------------------------------------


def _sharding_kernel(op: Operation, ctx: PrepareContext) -> Kernel:
    """`@Sharding`: annotates its operand's sharding; identity on the value."""
    def run(*args: Any) -> Sequence[Any]:
        return list(args)

    return run


def _full_to_shard(op: Operation, ctx: PrepareContext) -> Kernel:
    """`@SPMDFullToShardShape`: this device's tile of the operand, under the sharding of the
    `@Sharding` op that produced it."""
    src = op.operands[0].owner
    if not isinstance(src, Operation) or src.name != "stablehlo.custom_call" \
            or _target(src) != "Sharding":
        raise ExecutionError("custom_call @SPMDFullToShardShape: its operand must come from a "
                             "custom_call @Sharding (which gives the sharding to cut by)",
                             op.location)
    sh = _sharding_of(src)
    out_shape = tuple(op.results[0].type.shape)
    in_shape = tuple(op.operands[0].type.shape)
    process = ctx.process
    if in_shape == out_shape:
        return _sharding_kernel(op, ctx)
    if sh.kind != "tiled" or any(n // max(k, 1) != m for n, k, m in
                                 zip(in_shape, sh.data_tiles(), out_shape)):
        raise ExecutionError(f"custom_call @SPMDFullToShardShape: sharding "
                             f"{src.attr('mhlo.sharding').value!r} does not cut "
                             f"{list(in_shape)} into {list(out_shape)}", op.location)

    def run(x: Any) -> Sequence[Any]:
        pos = sh.position(process.process_id)
        if pos is None:
            raise ExecutionError(_alone(op, process, sh), op.location)
        return [np.asarray(x)[_tile_slices(sh, pos, in_shape)]]

    return run


def _shard_to_full(op: Operation, ctx: PrepareContext) -> Kernel:
    """`@SPMDShardToFullShape`: the global value from the tiles of the devices of this
    device's manual subgroup."""
    sh = _sharding_of(op)
    out_shape = tuple(op.results[0].type.shape)
    in_shape = tuple(op.operands[0].type.shape)
    if in_shape == out_shape:
        return _sharding_kernel(op, ctx)
    if sh.kind != "tiled" or any(m * k != n for n, k, m in
                                 zip(out_shape, sh.data_tiles(), in_shape)):
        raise ExecutionError(f"custom_call @SPMDShardToFullShape: sharding "
                             f"{op.attr('mhlo.sharding').value!r} does not assemble "
                             f"{list(in_shape)} into {list(out_shape)}", op.location)
    process = ctx.process
    assert sh.tiles is not None
    manual_dims = [sh.data_rank + i for i, k in enumerate(sh.last) if k == "manual"]
    by_key: dict[tuple[int, ...], list[int]] = {}
    for idx in np.ndindex(*sh.tiles.shape):
        by_key.setdefault(tuple(idx[d] for d in manual_dims), []).append(int(sh.tiles[idx]))

    def run(x: Any) -> Sequence[Any]:
        dev = process.process_id
        pos = sh.position(dev)
        if pos is None:
            raise ExecutionError(_alone(op, process, sh), op.location)
        members = by_key[tuple(pos[d] for d in manual_dims)]
        group: tuple[ProcessId, ...] = tuple(divmod(d, process.num_partitions)
                                             for d in members)

        def combine(g: tuple[ProcessId, ...], values: list[Any]) -> list[Any]:
            full = np.empty(out_shape, dtype=np.asarray(values[0]).dtype)
            seen: set[tuple[int, ...]] = set()
            for (r, p), v in zip(g, values):
                pp = sh.position(r * process.num_partitions + p)
                assert pp is not None
                tile = pp[:sh.data_rank]
                if tile in seen:
                    continue
                seen.add(tile)
                full[_tile_slices(sh, tile, out_shape)] = v
            return [shared(full)] * len(g)

        return [meet(op, process, group, np.asarray(x), combine)]

    return run


def _alone(op: Operation, process: Any, sh: HloSharding) -> str:
    n = process.num_replicas * process.num_partitions
    devices = sh.tiles.size if sh.tiles is not None else 1
    if n == 1:
        return (f"custom_call @{_target(op)}: a GSPMD manual region over {devices} devices, "
                f"but the program runs as one process; run it with shlo.run / `shlo run` "
                f"(which start one process per device for a sharded program) or on a grid of "
                f"{devices} processes")
    return f"custom_call @{_target(op)}: process {process.process_id} holds no tile"


GSPMD_TARGETS = {"Sharding": _sharding_kernel, "SPMDFullToShardShape": _full_to_shard,
                 "SPMDShardToFullShape": _shard_to_full}
"""The GSPMD custom-call targets, registered with the custom_call op's built-in targets."""

MANUAL_TARGETS = frozenset({"SPMDFullToShardShape", "SPMDShardToFullShape"})
"""Targets that make a program run one process per device."""

CHECK_TARGETS.update(GSPMD_TARGETS)
