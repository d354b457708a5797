"""Sharded programs run: annotation-only programs once, manual computations (Shardy and GSPMD)
one process per device; mesh-based replica groups. Expected values are computed by hand."""

from __future__ import annotations

import numpy as np
import pytest

import shlo
from shlo.errors import ExecutionError
from shlo.ops.distributed.groups import id_groups
from shlo.ops.sdy.gspmd import parse_hlo_sharding
from shlo.ops.sdy.plan import sharded_plan
from shlo.syntax.parser import parse

SUM = '''({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %s : tensor<f32>
      })'''


def _shardy(body: str, arg: str, res: str, ins: str, outs: str, axes: str, local: str,
            local_res: str, mesh: str = '<["x"=2, "y"=2]>') -> str:
    return f'''module @m attributes {{mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32}} {{
  sdy.mesh @mesh = {mesh}
  func.func @main(%arg0: {arg}) -> {res} {{
    %0 = sdy.manual_computation(%arg0) in_shardings=[{ins}] out_shardings=[{outs}] manual_axes={axes} (%l: {local}) {{
      {body}
    }} : ({arg}) -> {res}
    return %0 : {res}
  }}
}}'''


X = np.arange(16, dtype=np.float32).reshape(4, 4)


def test_fully_manual_slices_and_assembles() -> None:
    """Each device gets its 2x2 block, adds its partition id, blocks come back in place."""
    text = _shardy('''%p = stablehlo.partition_id : tensor<ui32>
      %f = stablehlo.convert %p : (tensor<ui32>) -> tensor<f32>
      %b = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<2x2xf32>
      %r = stablehlo.add %l, %b : tensor<2x2xf32>
      sdy.return %r : tensor<2x2xf32>''', "tensor<4x4xf32>", "tensor<4x4xf32>",
                   '<@mesh, [{"x"}, {"y"}]>', '<@mesh, [{"x"}, {"y"}]>', '{"x", "y"}',
                   "tensor<2x2xf32>", "tensor<2x2xf32>")
    (got,) = shlo.run(text, X)
    dev = np.array([[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 3, 3], [2, 2, 3, 3]], np.float32)
    np.testing.assert_array_equal(got, X + dev)


def test_psum_over_one_axis_with_replicated_result() -> None:
    """psum over y of the 1x... pieces: rows 0-1 of x=0 blocks summed across y."""
    text = _shardy(f'''%r = "stablehlo.all_reduce"(%l) {SUM} {{replica_groups = dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>,
        channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, use_global_device_ids}} : (tensor<2x2xf32>) -> tensor<2x2xf32>
      sdy.return %r : tensor<2x2xf32>''', "tensor<4x4xf32>", "tensor<4x2xf32>",
                   '<@mesh, [{"x"}, {"y"}]>', '<@mesh, [{"x"}, {}]>', '{"x", "y"}',
                   "tensor<2x2xf32>", "tensor<2x2xf32>")
    (got,) = shlo.run(text, X)
    np.testing.assert_array_equal(got, X[:, :2] + X[:, 2:])


def test_partially_manual_body_sees_free_axes_whole() -> None:
    """Manual over x only: the body gets 2x4 row blocks (y does not cut)."""
    text = _shardy('''%r = stablehlo.multiply %l, %l : tensor<2x4xf32>
      sdy.return %r : tensor<2x4xf32>''', "tensor<4x4xf32>", "tensor<4x4xf32>",
                   '<@mesh, [{"x", ?}, {"y", ?}]>', '<@mesh, [{"x"}, {?}]>', '{"x"}',
                   "tensor<2x4xf32>", "tensor<2x4xf32>")
    (got,) = shlo.run(text, X)
    np.testing.assert_array_equal(got, X * X)


def test_explicit_device_order_and_unreduced_result() -> None:
    """Mesh devices [3, 2, 1, 0]: device 3 holds block 0. An unreduced result is summed."""
    text = _shardy('''sdy.return %l : tensor<1x4xf32>''', "tensor<4x4xf32>", "tensor<1x4xf32>",
                   '<@mesh, [{"x"}, {}]>', '<@mesh, [{}, {}], unreduced={"x"}>', '{"x"}',
                   "tensor<1x4xf32>", "tensor<1x4xf32>",
                   mesh='<["x"=4], device_ids=[3, 2, 1, 0]>')
    (got,) = shlo.run(text, X)
    np.testing.assert_array_equal(got, X.sum(axis=0, keepdims=True))


def test_nested_manual_computations() -> None:
    """Outer manual over x (rows), inner over y (columns): each device doubles its 2x2 block."""
    text = '''module attributes {mhlo.num_partitions = 4 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func @main(%arg0: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%a: tensor<2x4xf32>) {
      %1 = sdy.manual_computation(%a) in_shardings=[<@mesh, [{}, {"y"}]>] out_shardings=[<@mesh, [{}, {"y"}]>] manual_axes={"y"} (%b: tensor<2x2xf32>) {
        %p = stablehlo.partition_id : tensor<ui32>
        %f = stablehlo.convert %p : (tensor<ui32>) -> tensor<f32>
        %c = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<2x2xf32>
        %d = stablehlo.multiply %b, %c : tensor<2x2xf32>
        sdy.return %d : tensor<2x2xf32>
      } : (tensor<2x4xf32>) -> tensor<2x4xf32>
      sdy.return %1 : tensor<2x4xf32>
    } : (tensor<4x4xf32>) -> tensor<4x4xf32>
    return %0 : tensor<4x4xf32>
  }
}'''
    (got,) = shlo.run(text, X)
    dev = np.array([[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 3, 3], [2, 2, 3, 3]], np.float32)
    np.testing.assert_array_equal(got, X * dev)


GSPMD = '''module attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func @main(%arg0: tensor<4x4xf32> {mhlo.sharding = "{devices=[2,2]<=[4]}"}) -> tensor<4x2xf32> {
    %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{devices=[2,2]<=[2,2]T(1,0)}"} : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {mhlo.sharding = "{manual}"} : (tensor<4x4xf32>) -> tensor<2x2xf32>
    %2 = "stablehlo.all_reduce"(%1) ''' + SUM + ''' {replica_groups = dense<[[0, 2], [1, 3]]> : tensor<2x2xi64>, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, use_global_device_ids} : (tensor<2x2xf32>) -> tensor<2x2xf32>
    %3 = stablehlo.custom_call @Sharding(%2) {mhlo.sharding = "{manual}"} : (tensor<2x2xf32>) -> tensor<2x2xf32>
    %4 = stablehlo.custom_call @SPMDShardToFullShape(%3) {mhlo.sharding = "{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}"} : (tensor<2x2xf32>) -> tensor<4x2xf32>
    return %4 : tensor<4x2xf32>
  }
}'''


def test_gspmd_manual_region() -> None:
    """Tiles by a transposed iota (device d at tile (d % 2, d // 2)); devices {0, 2} hold the
    two column blocks of rows 0-1 and sum them; the result tiles rows by d % 2 again."""
    (got,) = shlo.run(GSPMD, X)
    np.testing.assert_array_equal(got, X[:, :2] + X[:, 2:])


def test_annotation_only_program_runs_once() -> None:
    text = '''module attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=8]>
  func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<8xf32> {
    %0 = stablehlo.partition_id : tensor<ui32>
    %1 = stablehlo.convert %0 : (tensor<ui32>) -> tensor<f32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %3 = stablehlo.add %arg0, %2 : tensor<8xf32>
    return %3 : tensor<8xf32>
  }
}'''
    m = parse(text)
    assert sharded_plan(m) is not None and not sharded_plan(m).manual
    x = np.ones(8, np.float32)
    got = shlo.run(m, x)
    assert len(got) == 1  # one global result, computed by one process (partition 0)
    np.testing.assert_array_equal(got[0], x)
    per_process = shlo.run(m, x, partitions=8)  # an explicit grid is obeyed
    assert len(per_process) == 8 and per_process[7][0][0] == 8


def test_manual_program_alone_says_what_to_do() -> None:
    text = _shardy('''sdy.return %l : tensor<2x4xf32>''', "tensor<4x4xf32>", "tensor<4x4xf32>",
                   '<@mesh, [{"x"}, {}]>', '<@mesh, [{"x"}, {}]>', '{"x"}',
                   "tensor<2x4xf32>", "tensor<2x4xf32>")
    with pytest.raises(ExecutionError, match="one process per device"):
        shlo.run(text, X, partitions=1)


@pytest.mark.parametrize("text,tiles,last", [
    ("{devices=[2,4]<=[8]}", [[0, 1, 2, 3], [4, 5, 6, 7]], ()),
    ("{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}",
     [[[0, 4]], [[1, 5]], [[2, 6]], [[3, 7]]], ("replicated",)),
    ("{devices=[1,1,2,4]<=[8] last_tile_dims={manual, replicated}}",
     [[[[0, 1, 2, 3], [4, 5, 6, 7]]]], ("manual", "replicated")),
    ("{devices=[2,2]3,1,2,0 metadata={op_name=\"a\"}}", [[3, 1], [2, 0]], ()),
])
def test_hlo_sharding(text: str, tiles: list, last: tuple) -> None:
    sh = parse_hlo_sharding(text)
    np.testing.assert_array_equal(sh.tiles, np.array(tiles))
    assert sh.last == last
    assert parse_hlo_sharding("{replicated}").kind == "replicated"
    assert parse_hlo_sharding("{maximal device=3}").device == 3
    assert [e.kind for e in parse_hlo_sharding("{{manual}, {replicated}}").elements] == \
        ["manual", "replicated"]


MESH_GROUPS = '''module {
  sdy.mesh @m = <["x"=2, "y"=4]>
  "sdy.mesh"() {sym_name = "dev", stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}, {name = "y", size = 2 : i64}], device_ids = dense<[0, 2, 1, 3]> : tensor<4xi64>}} : () -> ()
  func.func @f(%arg0: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
    %0 = "stablehlo.all_reduce"(%arg0) ''' + SUM + ''' {replica_groups = #stablehlo.replica_group_mesh_axes<mesh = @m, axes = [#stablehlo.axis_ref<name = "x">]>} : (tensor<4xf32>) -> tensor<4xf32>
    %1 = "stablehlo.all_reduce"(%arg0) ''' + SUM + ''' {replica_groups = #stablehlo.replica_group_mesh_axes<mesh = @dev, axes = [#stablehlo.axis_ref<name = "x">]>} : (tensor<4xf32>) -> tensor<4xf32>
    %2 = "stablehlo.all_reduce"(%arg0) ''' + SUM + ''' {replica_groups = #stablehlo.replica_group_mesh_axes<mesh = #stablehlo.mesh<axes = [#stablehlo.mesh_axis<name = "x", size = 2>, #stablehlo.mesh_axis<name = "y", size = 4>]>, axes = [#stablehlo.axis_ref<name = "y", sub_axis_info = #stablehlo.sub_axis_info<pre_size = 2, size = 2>>, #stablehlo.axis_ref<name = "x">]>} : (tensor<4xf32>) -> tensor<4xf32>
    return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  }
}'''


def test_mesh_axes_replica_groups() -> None:
    """StableHLO's mesh_axes_replica_group_compatibility.mlir vectors, and a sub-axis."""
    m = parse(MESH_GROUPS)
    ops = [o for o in m.functions["f"].walk() if o.name == "stablehlo.all_reduce"]
    assert id_groups(ops[0]) == [[0, 4], [1, 5], [2, 6], [3, 7]]
    assert id_groups(ops[1]) == [[0, 1], [2, 3]]
    # y = (y0 major, y1 minor); groups vary y1 then x, fixed y0: ids x*4 + y0*2 + y1
    assert id_groups(ops[2]) == [[0, 4, 1, 5], [2, 6, 3, 7]]


def test_mesh_axes_collective_runs() -> None:
    """The crash of 'StructAttr' object is not iterable is gone: an all_reduce over mesh axis
    x of a 2x2 mesh on 4 replicas sums replicas {0, 2} and {1, 3}."""
    text = '''module {
  func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
    %0 = "stablehlo.all_reduce"(%arg0) ''' + SUM + ''' {replica_groups = #stablehlo.replica_group_mesh_axes<mesh = #stablehlo.mesh<axes = [#stablehlo.mesh_axis<name = "x", size = 2>, #stablehlo.mesh_axis<name = "y", size = 2>]>, axes = [#stablehlo.axis_ref<name = "x">]>} : (tensor<2xf32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}'''
    from shlo.interpreter.process_grid import PerProcess

    xs = [np.full(2, 10.0 ** i, np.float32) for i in range(4)]
    got = shlo.run(text, PerProcess(xs), replicas=4)
    assert [float(g[0][0]) for g in got] == [101.0, 1010.0, 101.0, 1010.0]
