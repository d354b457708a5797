"""Overlays as Model Explorer node data (shlo.debug.model_explorer): the node ids must be the
ones Model Explorer's MLIR adapter gives (checked against the adapter itself when
`ai-edge-model-explorer` is installed; the expected ids below were read off adapter 0.2.1)."""

import importlib.util
import json

import numpy as np
import pytest

import shlo
from shlo.cli import main
from shlo.debug.model_explorer import node_data, node_ids

PROGRAM = """
func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %c = stablehlo.constant dense<1.0> : tensor<4xf32>
  %0 = stablehlo.add %arg0, %c : tensor<4xf32>
  %2:2 = stablehlo.while(%iterArg = %0, %k = %c) : tensor<4xf32>, tensor<4xf32>
   cond {
    %r = stablehlo.compare LT, %iterArg, %k : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    %t = stablehlo.constant dense<false> : tensor<i1>
    stablehlo.return %t : tensor<i1>
  } do {
    %t0 = stablehlo.constant dense<0> : tensor<i32>
    %a = "stablehlo.case"(%t0) ({
      %q = stablehlo.abs %iterArg : tensor<4xf32>
      stablehlo.return %q : tensor<4xf32>
    }) : (tensor<i32>) -> tensor<4xf32>
    stablehlo.return %a, %k : tensor<4xf32>, tensor<4xf32>
  }
  %3 = stablehlo.negate %2#0 : tensor<4xf32>
  return %3 : tensor<4xf32>
}
func.func private @g(%arg0: tensor<f32>) -> tensor<f32> {
  return %arg0 : tensor<f32>
}
"""

# (op name, graph, node id) in module.walk() order, as adapter 0.2.1 numbers them: the case's
# region is not drawn, so abs and its return belong to the case's node.
EXPECTED = [
    ("stablehlo.constant", "main", "0"), ("stablehlo.add", "main", "1"),
    ("stablehlo.while", "main", "2"), ("stablehlo.compare", "main", "3"),
    ("stablehlo.constant", "main", "4"), ("stablehlo.return", "main", "5"),
    ("stablehlo.constant", "main", "6"), ("stablehlo.case", "main", "7"),
    ("stablehlo.abs", "main", "7"), ("stablehlo.return", "main", "7"),
    ("stablehlo.return", "main", "8"), ("stablehlo.negate", "main", "9"),
    ("func.return", "main", "10"), ("func.return", "g", "0"),
]


def test_node_ids_follow_the_adapter():
    m = shlo.parse(PROGRAM)
    ids = node_ids(m)
    got = [(op.name, *ids[i]) for i, op in enumerate(m.walk()) if i in ids]
    assert got == EXPECTED


def test_values_fold_into_the_drawn_ancestor():
    m = shlo.parse(PROGRAM)
    keys = {op.name: i for i, op in enumerate(m.walk())}
    data = node_data(m, {keys["stablehlo.abs"]: 1.5, keys["stablehlo.case"]: 2.0,
                         keys["stablehlo.negate"]: 4.0}, "t", combine=sum)
    assert data["main"]["results"] == {"7": {"value": 3.5}, "9": {"value": 4.0}}
    assert data["main"]["name"] == "t" and "g" not in data


def test_cli_writes_node_data(tmp_path):
    src = tmp_path / "p.mlir"
    src.write_text(PROGRAM)
    x = tmp_path / "x.npy"
    np.save(x, np.array([-3, 1, 2, -4], np.float32))
    out = tmp_path / "nd.json"
    assert main(["graph", str(src), str(x), "--overlay", "range", "-o", str(out)]) == 0
    data = json.loads(out.read_text())
    res = data["main"]["results"]
    # add gives [-2, 2, 3, -3]; the loop does not run; negate gives [2, -2, -3, 3].
    assert res["1"]["value"] == 3.0 and res["9"]["value"] == 3.0
    assert main(["graph", str(src), "-o", str(out)]) == 1  # node data needs an overlay


@pytest.mark.skipif(importlib.util.find_spec("ai_edge_model_explorer_adapter") is None,
                    reason="ai-edge-model-explorer is not installed")
def test_against_the_adapter(tmp_path):
    import ai_edge_model_explorer_adapter as adapter

    for path in [tmp_path / "p.mlir", "examples/mlp.mlir"]:
        if isinstance(path, type(tmp_path)):
            path.write_text(PROGRAM)
        graphs = json.loads(adapter.ConvertMlirToJson(adapter.VisualizeConfig(), str(path)))
        theirs = {}

        def collect(x):
            if isinstance(x, dict):
                if "nodes" in x and "id" in x:
                    for n in x["nodes"]:
                        if not n["id"].startswith(("arg", "pid")):
                            theirs[(x["id"], n["id"])] = n["label"]
                else:
                    for v in x.values():
                        collect(v)
            elif isinstance(x, list):
                for v in x:
                    collect(v)

        collect(graphs)
        m = shlo.load(str(path))
        ours = {}
        for i, op in enumerate(m.walk()):
            node = node_ids(m).get(i)
            if node and node not in ours:
                ours[node] = op.name
        assert set(ours) == set(theirs)
        for node, label in theirs.items():
            assert label in (ours[node], "Outputs"), (node, label, ours[node])
