"""Overlays as Model Explorer node data (google-ai-edge/model-explorer).

Model Explorer opens a StableHLO `.mlir` (or portable artifact) with its built-in MLIR adapter
and colours nodes from a *node data* JSON file (``node_data_builder.py``'s ``ModelNodeData``):
``{graph id: {"name": ..., "results": {node id: {"value": v}}, "gradient": [...]}}``.

The keys must be the adapter's own ids, so this module numbers ops as that adapter does
(``builtin-adapter/translate_helpers.cc``, ``MlirToGraph``):

- one graph per ``func.func`` (its symbol name is the graph id; a function named ``NoOp`` is
  skipped), with a node counter that starts at 0 for each function;
- every op of the function's body gets the next id in program order, terminators included
  (they are the graph's "GraphOutputs" node); block arguments are ``arg<i>`` nodes, not counted;
- right after an op with regions, the ops of its regions (in region order) get the next ids;
  their own regions are not drawn (except those of Shardy ops, which nest further), so their
  ops have no node.

Values of ops without a node go to their nearest drawn ancestor, combined by ``combine`` (sum
for times, max for value ranges and errors): a while body's time shows on the while.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Iterable

from ..ir import Module, Operation

__all__ = ["node_ids", "node_data", "write_node_data"]

# Pale to red, as shlo's own graph page colours overlays.
GRADIENT = [{"stop": 0, "bgColor": "#fff5f0"}, {"stop": 0.5, "bgColor": "#fb6a4a"},
            {"stop": 1, "bgColor": "#a50f15"}]


def node_ids(module: Module) -> dict[int, tuple[str, str]]:
    """``{op key: (graph id, node id)}`` for every op of the module, where an op's key is its
    position in ``module.walk()`` (the key traces, profiles and diffs use). Ops Model Explorer
    does not draw map to their nearest drawn ancestor's node."""
    keys = {id(op): i for i, op in enumerate(module.walk())}
    out: dict[int, tuple[str, str]] = {}
    for func in module.walk():
        if func.name != "func.func" or not func.regions or not func.regions[0].blocks:
            continue
        graph = str(func.attr("sym_name").value)
        if graph == "NoOp":
            continue
        counter = 0

        def visit(op: Operation, nested: bool) -> None:
            nonlocal counter
            node = (graph, str(counter))
            counter += 1
            out[keys[id(op)]] = node
            drawn = not nested or op.name.startswith("sdy.")
            for region in op.regions:
                for block in region.blocks:
                    for inner in block.operations:
                        if drawn:
                            visit(inner, nested=True)
                        else:
                            for o in inner.walk():
                                out[keys[id(o)]] = node

        for op in func.regions[0].blocks[0].operations:
            visit(op, nested=False)
    return out


def node_data(module: Module, overlay: dict[Any, float], name: str = "shlo",
              combine: Callable[[Iterable[float]], float] = max) -> dict[str, Any]:
    """The ``ModelNodeData`` JSON object for ``overlay`` (``{op key: value}``), one graph per
    function that has a value."""
    ids = node_ids(module)
    grouped: dict[tuple[str, str], list[float]] = {}
    for key, value in overlay.items():
        node = ids.get(int(key))
        if node is not None:
            grouped.setdefault(node, []).append(float(value))
    graphs: dict[str, Any] = {}
    for (graph, node), values in grouped.items():
        g = graphs.setdefault(graph, {"name": name, "results": {}, "gradient": GRADIENT})
        g["results"][node] = {"value": combine(values)}
    return graphs


def write_node_data(path: str, module: Module, overlay: dict[Any, float], name: str = "shlo",
                    combine: Callable[[Iterable[float]], float] = max) -> None:
    """Write :func:`node_data` to ``path`` (load it in Model Explorer's "Node data" panel)."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump(node_data(module, overlay, name, combine), f, indent=1)
