"""How a sharded program runs (docs/sharding.md, "How a program runs").

A program JAX exports for many devices is a *global* program with sharding annotations: they
say how values are laid out over the devices, not what the values are. `mhlo.num_partitions =
8` on such a program is the number of devices the partitioner would split it over, not a
request for eight copies. So:

* a program **with sharding annotations** (an `sdy.mesh`, or `sdy.sharding` / `mhlo.sharding`
  attributes on its functions or ops) and **no manual region** runs once, as one process, the
  global program it is;
* a program with a manual region (`sdy.manual_computation`, or the GSPMD custom calls
  `@SPMDFullToShardShape` / `@SPMDShardToFullShape`) runs SPMD on one process per device
  (the module's `num_replicas x num_partitions`, or the largest mesh): every process computes
  the global ops outside the manual regions (identical values), and the manual bodies on its
  own pieces, with their collectives. Every process ends with the same global results; the
  caller gets process 0's;
* a program without sharding annotations keeps the spec's meaning of `mhlo.num_replicas` /
  `mhlo.num_partitions`: one process per (replica, partition), results per process;
* an explicit grid (``replicas=`` / ``partitions=``, `--replicas` / `--partitions`) is always
  obeyed.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...attributes import ArrayAttr, DictAttr, IntegerAttr, StringAttr
from ...ir import Module, Operation

__all__ = ["ShardedPlan", "sharded_plan"]

_KEYS = ("sdy.sharding", "mhlo.sharding")


@dataclass(frozen=True)
class ShardedPlan:
    """A sharded program: ``manual`` when it has manual regions (then it runs on a
    ``replicas x partitions`` grid, one process per device), else it runs once."""

    manual: bool
    replicas: int = 1
    partitions: int = 1


def _global(key: str, value: object) -> bool:
    """A sharding of a global value: any `sdy.sharding`, an `mhlo.sharding` other than
    `{manual}` (which marks a per-device value: the program is already partitioned)."""
    if key == "sdy.sharding":
        return True
    if key == "mhlo.sharding":
        return not (isinstance(value, StringAttr) and value.value.replace(" ", "") == "{manual}")
    return False


def _annotated(op: Operation) -> bool:
    if op.name == "stablehlo.custom_call":
        return False  # @Sharding and kin count as manual regions or not at all
    for d in (op.attributes, op.properties):  # (most ops have neither: look the keys up)
        if d and any(k in d and _global(k, d[k]) for k in _KEYS):
            return True
    for key in ("arg_attrs", "res_attrs"):
        a = op.attr(key)
        if isinstance(a, ArrayAttr) and any(
                isinstance(x, DictAttr) and any(_global(k, v) for k, v in x.items) for x in a):
            return True
    return False


def _is_manual(op: Operation) -> bool:
    if op.name == "sdy.manual_computation":
        return True
    if op.name == "stablehlo.custom_call":
        from .gspmd import MANUAL_TARGETS  # (a program without custom calls needs none of it)

        t = op.attr("call_target_name")
        return isinstance(t, StringAttr) and t.value in MANUAL_TARGETS
    return False


def _int(module: Module, name: str) -> int:
    a = module.op.attr(name)
    return int(a.value) if isinstance(a, IntegerAttr) else 1


def sharded_plan(module: Module) -> ShardedPlan | None:
    """How ``module`` runs when no grid is asked for: None for a program without sharding
    annotations (the module's grid attributes then decide), else a :class:`ShardedPlan`.
    Computed once per module."""
    cache = module.__dict__
    if "_sharded_plan" in cache:
        return cache["_sharded_plan"]
    annotated = manual = False
    for op in module.walk():
        if op.name == "sdy.mesh" or _annotated(op):
            annotated = True
        if _is_manual(op):
            manual = annotated = True
            break
    plan = None
    if annotated:
        from .manual import module_meshes

        r, p = _int(module, "mhlo.num_replicas"), _int(module, "mhlo.num_partitions")
        devices = max([m.size if not m.device_ids else max(m.device_ids) + 1
                       for m in module_meshes(module).values()] or [1])
        if devices > r * p:
            r, p = 1, devices
        plan = ShardedPlan(manual, r, p) if manual else ShardedPlan(False)
    cache["_sharded_plan"] = plan
    return plan
