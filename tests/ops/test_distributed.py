"""Distributed ops (spec: replica_id, partition_id, after_all, all_gather, all_reduce,
reduce_scatter, all_to_all, collective_permute, collective_broadcast, send, recv, infeed,
outfeed; plus collective_reduce and interpreter.run_parallel).

Spec examples and hand-computed cases, then differential tests against XLA on 8 host CPU
devices (a child process with XLA_FLAGS=--xla_force_host_platform_device_count=8): the same
program text on both, and JAX's shard_map lowering of psum, all_gather, ppermute and all_to_all.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import shlo
from shlo.errors import ExecutionError
from shlo.interpreter.process_grid import PerProcess

from harness import run_text


def per_process(results: list[list[Any]], k: int = 0) -> list[list[Any]]:
    return [np.asarray(r[k]).tolist() for r in results]


ADD = """({
      ^bb0(%a: tensor<i64>, %b: tensor<i64>):
        %s = stablehlo.add %a, %b : tensor<i64>
        stablehlo.return %s : tensor<i64>
    })"""

# --- process identity, tokens ----------------------------------------------------------------


def test_replica_id_and_partition_id() -> None:
    text = """
    func.func @main() -> (tensor<ui32>, tensor<ui32>) {
      %r = stablehlo.replica_id : tensor<ui32>
      %p = stablehlo.partition_id : tensor<ui32>
      return %r, %p : tensor<ui32>, tensor<ui32>
    }"""
    res = run_text(text, replicas=3, partitions=2)
    assert [(int(r), int(p)) for r, p in res] == [divmod(i, 2) for i in range(6)]
    r, p = run_text(text)
    assert r.dtype == np.uint32 and r.shape == () and int(r) == 0 and int(p) == 0


def test_after_all_makes_tokens() -> None:
    text = """
    func.func @main() -> !stablehlo.token {
      %0 = stablehlo.after_all : !stablehlo.token
      %1 = stablehlo.after_all %0, %0 : !stablehlo.token
      return %1 : !stablehlo.token
    }"""
    from shlo.types import TOKEN

    assert run_text(text) == [TOKEN]


# --- all_gather -----------------------------------------------------------------------------------

ALL_GATHER = """
func.func @main(%operand: tensor<2x2xi64>) -> tensor<2x4xi64> {
  %result = "stablehlo.all_gather"(%operand) {
    all_gather_dim = 1 : i64,
    replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>
    CHANNEL
  } : (tensor<2x2xi64>) -> tensor<2x4xi64>
  return %result : tensor<2x4xi64>
}"""


def test_all_gather_spec_example() -> None:
    xs = PerProcess([np.array([[1, 2], [3, 4]]), np.array([[5, 6], [7, 8]])])
    res = run_text(ALL_GATHER.replace("CHANNEL", ""), xs, replicas=2)
    assert per_process(res) == [[[1, 2, 5, 6], [3, 4, 7, 8]]] * 2


def test_all_gather_cross_replica_and_partition_orders_partition_major() -> None:
    # channel_id > 0: the group is [(0,0), (1,0), (0,1), (1,1)]
    # (spec's cross_replica_and_partition).
    text = ALL_GATHER.replace("CHANNEL", ", channel_handle = #stablehlo.channel_handle<handle = 1, "
                                         "type = 0>").replace("2x4xi64", "2x8xi64")
    xs = PerProcess([np.full((2, 2), 10 * i + 1) for i in range(4)])
    res = run_text(text, xs, replicas=2, partitions=2)
    # process ids 0..3 are (0,0), (0,1), (1,0), (1,1): group order is processes 0, 2, 1, 3.
    assert per_process(res)[0][0] == [1, 1, 21, 21, 11, 11, 31, 31]
    assert all(per_process(res)[i] == per_process(res)[0] for i in range(4))


def test_all_gather_flattened_ids_and_variadic() -> None:
    text = """
    func.func @main(%a: tensor<1xi64>, %b: tensor<1xi32>) -> (tensor<2xi64>, tensor<2xi32>) {
      %r:2 = "stablehlo.all_gather"(%a, %b) {
        all_gather_dim = 0 : i64,
        replica_groups = dense<[[3, 0], [1, 2]]> : tensor<2x2xi64>,
        channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>,
        use_global_device_ids
      } : (tensor<1xi64>, tensor<1xi32>) -> (tensor<2xi64>, tensor<2xi32>)
      return %r#0, %r#1 : tensor<2xi64>, tensor<2xi32>
    }"""
    a = PerProcess([np.array([i]) for i in range(4)])
    b = PerProcess([np.array([10 * i], np.int32) for i in range(4)])
    res = run_text(text, a, b, replicas=2, partitions=2)
    assert per_process(res, 0) == [[3, 0], [1, 2], [1, 2], [3, 0]]
    assert per_process(res, 1) == [[30, 0], [10, 20], [10, 20], [30, 0]]
    assert res[0][1].dtype == np.int32


# --- all_reduce -----------------------------------------------------------------------------------


def test_all_reduce_spec_example() -> None:
    text = f"""
    func.func @main(%operand: tensor<4xi64>) -> tensor<4xi64> {{
      %result = "stablehlo.all_reduce"(%operand) {ADD} {{
        replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>,
        channel_handle = #stablehlo.channel_handle<handle = 0, type = 0>
      }} : (tensor<4xi64>) -> tensor<4xi64>
      return %result : tensor<4xi64>
    }}"""
    xs = PerProcess([np.array([1, 2, 3, 4]), np.array([5, 6, 7, 8])])
    assert per_process(run_text(text, xs, replicas=2)) == [[6, 8, 10, 12]] * 2


def test_all_reduce_with_a_general_body_folds_in_group_order() -> None:
    # body(a, b) = 2 * a + b is neither associative nor commutative: the result shows the
    # schedule, a left fold in group order (docs/semantics/distributed.md).
    text = """
    func.func @main(%x: tensor<2xi64>) -> tensor<2xi64> {
      %r = "stablehlo.all_reduce"(%x) ({
        ^bb0(%a: tensor<i64>, %b: tensor<i64>):
          %two = stablehlo.constant dense<2> : tensor<i64>
          %t = stablehlo.multiply %two, %a : tensor<i64>
          %s = stablehlo.add %t, %b : tensor<i64>
          stablehlo.return %s : tensor<i64>
      }) {replica_groups = dense<[[2, 0, 1]]> : tensor<1x3xi64>} : (tensor<2xi64>) -> tensor<2xi64>
      return %r : tensor<2xi64>
    }"""
    xs = PerProcess([np.array([1, 0]), np.array([10, 0]), np.array([100, 1])])
    # group order: v2, v0, v1 -> 2 * (2 * v2 + v0) + v1
    expected = (2 * (2 * np.array([100, 1]) + np.array([1, 0])) + np.array([10, 0])).tolist()
    assert per_process(run_text(text, xs, replicas=3)) == [expected] * 3


def test_all_reduce_variadic_float_max_and_promotion() -> None:
    text = """
    func.func @main(%x: tensor<3xf32>, %y: tensor<2xf32>) -> (tensor<3xf64>, tensor<2xf64>) {
      %r:2 = "stablehlo.all_reduce"(%x, %y) ({
        ^bb0(%a: tensor<f64>, %b: tensor<f64>):
          %m = stablehlo.maximum %a, %b : tensor<f64>
          stablehlo.return %m : tensor<f64>
      }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}
         : (tensor<3xf32>, tensor<2xf32>) -> (tensor<3xf64>, tensor<2xf64>)
      return %r#0, %r#1 : tensor<3xf64>, tensor<2xf64>
    }"""
    x = PerProcess([np.array([1, -0.0, np.nan], np.float32), np.array([2, 0.0, 1], np.float32)])
    y = PerProcess([np.array([-1, 5], np.float32), np.array([-2, 4], np.float32)])
    res = run_text(text, x, y, replicas=2)
    for r in res:
        assert r[0].dtype == np.float64 and r[1].dtype == np.float64
        assert r[0][0] == 2 and r[0][1] == 0 and not np.signbit(r[0][1]) and np.isnan(r[0][2])
        assert r[1].tolist() == [-1, 5]


def test_all_reduce_of_booleans_and_in_a_loop() -> None:
    # A collective inside a while loop: the n-th iteration of every process meets.
    text = """
    func.func @main(%x: tensor<i64>) -> tensor<i64> {
      %zero = stablehlo.constant dense<0> : tensor<i64>
      %r:2 = stablehlo.while(%i = %zero, %acc = %x) : tensor<i64>, tensor<i64>
      cond {
        %n = stablehlo.constant dense<4> : tensor<i64>
        %c = stablehlo.compare LT, %i, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
        stablehlo.return %c : tensor<i1>
      } do {
        %one = stablehlo.constant dense<1> : tensor<i64>
        %j = stablehlo.add %i, %one : tensor<i64>
        %s = "stablehlo.all_reduce"(%acc) ({
          ^bb0(%a: tensor<i64>, %b: tensor<i64>):
            %t = stablehlo.add %a, %b : tensor<i64>
            stablehlo.return %t : tensor<i64>
        }) {replica_groups = dense<[[0, 1, 2]]> : tensor<1x3xi64>} : (tensor<i64>) -> tensor<i64>
        stablehlo.return %j, %s : tensor<i64>, tensor<i64>
      }
      return %r#1 : tensor<i64>
    }"""
    res = run_text(text, PerProcess([np.array(1), np.array(2), np.array(3)]), replicas=3)
    assert [int(r[0]) for r in res] == [6 * 3 ** 3] * 3
    flags = """
    func.func @main(%x: tensor<2xi1>) -> tensor<2xi1> {
      %r = "stablehlo.all_reduce"(%x) ({
        ^bb0(%a: tensor<i1>, %b: tensor<i1>):
          %t = stablehlo.and %a, %b : tensor<i1>
          stablehlo.return %t : tensor<i1>
      }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xi1>) -> tensor<2xi1>
      return %r : tensor<2xi1>
    }"""
    res = run_text(flags, PerProcess([np.array([True, True]), np.array([True, False])]), replicas=2)
    assert per_process(res) == [[True, False]] * 2 and res[0][0].dtype == np.bool_


def test_all_reduce_of_quantized_tensors_adds_their_values() -> None:
    q = "!quant.uniform<i8:f32, 0.5:-3>"
    text = f"""
    func.func @main(%x: tensor<2x{q}>) -> tensor<2x{q}> {{
      %r = "stablehlo.all_reduce"(%x) ({{
        ^bb0(%a: tensor<{q}>, %b: tensor<{q}>):
          %s = stablehlo.add %a, %b : tensor<{q}>
          stablehlo.return %s : tensor<{q}>
      }}) {{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}} : (tensor<2x{q}>) -> tensor<2x{q}>
      return %r : tensor<2x{q}>
    }}"""
    # storage [2, 4] and [6, -2] are 2.5, 3.5 and 4.5, 0.5; sums 7.0, 4.0 are storage 11, 5.
    res = run_text(text, PerProcess([np.array([2, 4], np.int8), np.array([6, -2], np.int8)]),
              replicas=2)
    assert per_process(res) == [[11, 5]] * 2


def test_all_reduce_on_one_process_is_the_operand_in_the_body_type() -> None:
    text = f"""
    func.func @main(%operand: tensor<4xi64>) -> tensor<4xi64> {{
      %result = "stablehlo.all_reduce"(%operand) {ADD} {{
        replica_groups = dense<[[0]]> : tensor<1x1xi64>
      }} : (tensor<4xi64>) -> tensor<4xi64>
      return %result : tensor<4xi64>
    }}"""
    (r,) = run_text(text, np.array([1, 2, 3, 4]))
    assert r.tolist() == [1, 2, 3, 4]


def test_all_reduce_rejects_a_process_outside_the_groups() -> None:
    text = f"""
    func.func @main(%operand: tensor<4xi64>) -> tensor<4xi64> {{
      %result = "stablehlo.all_reduce"(%operand) {ADD} {{
        replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>
      }} : (tensor<4xi64>) -> tensor<4xi64>
      return %result : tensor<4xi64>
    }}"""
    with pytest.raises(ExecutionError, match="replica id 1 .* out of range"):
        run_text(text, np.arange(4))
    with pytest.raises(ExecutionError, match=r"replica 2, partition 0\) is in none"):
        run_text(text, np.arange(4), replicas=3)


# --- reduce_scatter, all_to_all -------------------------------------------------------------------


def test_reduce_scatter_spec_example() -> None:
    text = f"""
    func.func @main(%operand: tensor<2x4xi64>) -> tensor<2x2xi64> {{
      %result = "stablehlo.reduce_scatter"(%operand) {ADD} {{
        scatter_dimension = 1 : i64,
        replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>,
        channel_handle = #stablehlo.channel_handle<handle = 0, type = 0>
      }} : (tensor<2x4xi64>) -> tensor<2x2xi64>
      return %result : tensor<2x2xi64>
    }}"""
    xs = PerProcess([np.array([[1, 2, 3, 4], [5, 6, 7, 8]]),
                     np.array([[9, 10, 11, 12], [13, 14, 15, 16]])])
    assert per_process(run_text(text, xs, replicas=2)) == [[[10, 12], [18, 20]], [[14, 16], [22, 24]]]


def test_all_to_all_spec_example_and_cross_partition() -> None:
    text = """
    func.func @main(%operand: tensor<2x4xi64>) -> tensor<4x2xi64> {
      %result = "stablehlo.all_to_all"(%operand) {
        split_dimension = 1 : i64,
        concat_dimension = 0 : i64,
        split_count = 2 : i64,
        replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>
        CHANNEL
      } : (tensor<2x4xi64>) -> tensor<4x2xi64>
      return %result : tensor<4x2xi64>
    }"""
    xs = PerProcess([np.array([[1, 2, 3, 4], [5, 6, 7, 8]]),
                     np.array([[9, 10, 11, 12], [13, 14, 15, 16]])])
    expected = [[[1, 2], [5, 6], [9, 10], [13, 14]], [[3, 4], [7, 8], [11, 12], [15, 16]]]
    assert per_process(run_text(text.replace("CHANNEL", ""), xs, replicas=2)) == expected
    cross_partition = text.replace(
        "CHANNEL", ", channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>")
    assert per_process(run_text(cross_partition, xs, partitions=2)) == expected
    with pytest.raises(ExecutionError, match="split_count is 2 but the process group has 3"):
        run_text(text.replace("CHANNEL", "").replace("[[0, 1]]> : tensor<1x2xi64>",
                                                "[[0, 1, 2]]> : tensor<1x3xi64>"),
            np.zeros((2, 4), np.int64), replicas=3)


# --- collective_permute, collective_broadcast, collective_reduce ----------------------------------


def test_collective_permute_spec_example() -> None:
    text = """
    func.func @main(%operand: tensor<2x2xi64>) -> tensor<2x2xi64> {
      %result = "stablehlo.collective_permute"(%operand) {
        source_target_pairs = dense<[[0, 1], [1, 2]]> : tensor<2x2xi64>,
        channel_handle = #stablehlo.channel_handle<handle = 0, type = 0>
      } : (tensor<2x2xi64>) -> tensor<2x2xi64>
      return %result : tensor<2x2xi64>
    }"""
    xs = PerProcess([np.array([[1, 2], [3, 4]]), np.array([[5, 6], [7, 8]]),
                     np.array([[9, 10], [11, 12]])])
    assert per_process(run_text(text, xs, replicas=3)) == [
        [[0, 0], [0, 0]], [[1, 2], [3, 4]], [[5, 6], [7, 8]]]
    # On a 3x2 grid the pairs apply within each partition (cross_replica).
    ys = PerProcess([np.full((2, 2), i) for i in range(6)])
    res = run_text(text, ys, replicas=3, partitions=2)
    assert [int(r[0][0, 0]) for r in res] == [0, 0, 0, 1, 2, 3]


def test_collective_permute_quantized_zero_is_the_zero_point() -> None:
    text = """
    func.func @main(%x: tensor<2x!quant.uniform<i8:f32, 0.5:-3>>)
        -> tensor<2x!quant.uniform<i8:f32, 0.5:-3>> {
      %r = "stablehlo.collective_permute"(%x) {
        source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>
      } : (tensor<2x!quant.uniform<i8:f32, 0.5:-3>>) -> tensor<2x!quant.uniform<i8:f32, 0.5:-3>>
      return %r : tensor<2x!quant.uniform<i8:f32, 0.5:-3>>
    }"""
    res = run_text(text, PerProcess([np.array([7, 8], np.int8), np.array([1, 2], np.int8)]),
              replicas=2)
    assert per_process(res) == [[-3, -3], [7, 8]] and res[0][0].dtype == np.int8


def test_collective_broadcast_spec_example() -> None:
    text = """
    func.func @main(%operand: tensor<1x2xi64>) -> tensor<1x2xi64> {
      %result = "stablehlo.collective_broadcast"(%operand) {
        replica_groups = dense<[[2, 1]]> : tensor<1x2xi64>,
        channel_handle = #stablehlo.channel_handle<handle = 0, type = 0>
      } : (tensor<1x2xi64>) -> tensor<1x2xi64>
      return %result : tensor<1x2xi64>
    }"""
    xs = PerProcess([np.array([[1, 2]]), np.array([[3, 4]]), np.array([[5, 6]]),
                     np.array([[7, 8]])])
    assert per_process(run_text(text, xs, replicas=4)) == [[[0, 0]], [[5, 6]], [[5, 6]], [[0, 0]]]


def test_collective_broadcast_dynamic_root_must_agree() -> None:
    text = """
    func.func @main(%x: tensor<2xi64>, %root: tensor<1xi32>) -> tensor<2xi64> {
      %r = "stablehlo.collective_broadcast"(%x, %root) {
        replica_groups = dense<[[0, 1, 2]]> : tensor<1x3xi64>,
        has_dynamic_root
      } : (tensor<2xi64>, tensor<1xi32>) -> tensor<2xi64>
      return %r : tensor<2xi64>
    }"""
    xs = PerProcess([np.array([i, i]) for i in range(3)])
    res = run_text(text, xs, np.array([2], np.int32), replicas=3)
    assert per_process(res) == [[2, 2]] * 3
    with pytest.raises(ExecutionError, match="disagree on the root"):
        run_text(text, xs, PerProcess([np.array([k], np.int32) for k in (0, 0, 1)]), replicas=3)


def test_collective_reduce_gives_the_root_the_sum() -> None:
    text = f"""
    func.func @main(%operand: tensor<2xi64>) -> tensor<2xi64> {{
      %result = "stablehlo.collective_reduce"(%operand) {ADD} {{
        replica_groups = dense<[[1, 0], [2, 3]]> : tensor<2x2xi64>
      }} : (tensor<2xi64>) -> tensor<2xi64>
      return %result : tensor<2xi64>
    }}"""
    xs = PerProcess([np.array([10 ** i, 1]) for i in range(4)])
    assert per_process(run_text(text, xs, replicas=4)) == [[0, 0], [11, 2], [1100, 2], [0, 0]]


# --- send, recv, infeed, outfeed, run_parallel ----------------------------------------------------

SEND_RECV = """
module {
  func.func @send(%x: tensor<2xi64>) -> !stablehlo.token {
    %t = stablehlo.after_all : !stablehlo.token
    %t1 = "stablehlo.send"(%x, %t) {
      channel_handle = #stablehlo.channel_handle<handle = 3, type = 2>, is_host_transfer = false
    } : (tensor<2xi64>, !stablehlo.token) -> !stablehlo.token
    return %t1 : !stablehlo.token
  }
  func.func @recv(%x: tensor<2xi64>) -> tensor<2xi64> {
    %t = stablehlo.after_all : !stablehlo.token
    %v, %t1 = "stablehlo.recv"(%t) {
      channel_handle = #stablehlo.channel_handle<handle = 3, type = 3>, is_host_transfer = false
    } : (!stablehlo.token) -> (tensor<2xi64>, !stablehlo.token)
    %s = stablehlo.add %v, %x : tensor<2xi64>
    return %s : tensor<2xi64>
  }
}"""


def test_send_recv_between_two_functions() -> None:
    res = run_text(SEND_RECV, process_args=[[np.array([1, 2])], [np.array([10, 20])]],
              programs=[["send"], ["recv"]])
    assert res[1][0].tolist() == [11, 22]


def test_infeed_outfeed_text() -> None:
    text = """
    func.func @main() -> tensor<2x2xi64> {
      %t = stablehlo.after_all : !stablehlo.token
      %a, %b, %t1 = "stablehlo.infeed"(%t) {infeed_config = ""}
          : (!stablehlo.token) -> (tensor<2x2xi64>, tensor<i32>, !stablehlo.token)
      %t2 = "stablehlo.outfeed"(%a, %b, %t1) {outfeed_config = ""}
          : (tensor<2x2xi64>, tensor<i32>, !stablehlo.token) -> !stablehlo.token
      return %a : tensor<2x2xi64>
    }"""
    out: list[Any] = []
    (a,) = run_text(text, infeed=[(np.array([[1, 2], [3, 4]]), np.array(7, np.int32))], outfeed=out)
    assert a.tolist() == [[1, 2], [3, 4]]
    assert len(out) == 1 and out[0][0].tolist() == [[1, 2], [3, 4]] and int(out[0][1]) == 7


def test_run_parallel_op_runs_a_grid_and_shares_its_infeed() -> None:
    text = """
    module {
      func.func @ids(%x: tensor<i64>) -> (tensor<ui32>, tensor<i64>) {
        %r = stablehlo.replica_id : tensor<ui32>
        %t = stablehlo.after_all : !stablehlo.token
        %v, %t1 = "stablehlo.infeed"(%t) : (!stablehlo.token) -> (tensor<i64>, !stablehlo.token)
        %s = stablehlo.add %v, %x : tensor<i64>
        return %r, %s : tensor<ui32>, tensor<i64>
      }
      func.func @q0() -> tensor<i64> {
        %c = stablehlo.constant dense<100> : tensor<i64>
        return %c : tensor<i64>
      }
      func.func @q1() -> tensor<i64> {
        %c = stablehlo.constant dense<200> : tensor<i64>
        return %c : tensor<i64>
      }
      func.func @main() -> (tensor<ui32>, tensor<i64>, tensor<ui32>, tensor<i64>) {
        %a = stablehlo.constant dense<1> : tensor<i64>
        %b = stablehlo.constant dense<2> : tensor<i64>
        %r:4 = "interpreter.run_parallel"(%a, %b) {infeed = [@q0, @q1], programs = [[@ids], [@ids]]}
          : (tensor<i64>, tensor<i64>) -> (tensor<ui32>, tensor<i64>, tensor<ui32>, tensor<i64>)
        return %r#0, %r#1, %r#2, %r#3 : tensor<ui32>, tensor<i64>, tensor<ui32>, tensor<i64>
      }
    }"""
    r0, s0, r1, s1 = run_text(text)
    assert (int(r0), int(r1)) == (0, 1)
    assert sorted([int(s0) - 1, int(s1) - 2]) == [100, 200]  # one shared queue


# --- differential: XLA on 8 host devices ----------------------------------------------------------

ORACLE = r'''
import json, os, sys
import numpy as np
import jax
from jax._src import xla_bridge
from jax._src.lib import xla_client
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
jax.config.update("jax_use_shardy_partitioner", False)
try:
    from jax import shard_map
except ImportError:
    from jax.experimental.shard_map import shard_map

work = sys.argv[1]
spec = json.load(open(os.path.join(work, "cases.json")))
backend = xla_bridge.get_backend("cpu")
devices = backend.devices()
report = {}

def save(name, per_device):
    for i, outs in enumerate(per_device):
        for k, a in enumerate(outs):
            np.save(os.path.join(work, f"{name}_out_{i}_{k}.npy"), np.asarray(a))
    report[name] = {"nout": len(per_device[0])}

def run_text(case):
    name, R, Pn, nargs = case["name"], case["R"], case["P"], case["nargs"]
    n = R * Pn
    inputs = [[np.load(os.path.join(work, f"{name}_in_{i}_{k}.npy")) for k in range(nargs)]
              for i in range(n)]
    opts = xla_client.CompileOptions()
    bo = opts.executable_build_options
    bo.num_replicas, bo.num_partitions = R, Pn
    bo.use_spmd_partitioning = Pn > 1
    bo.device_assignment = xla_client.DeviceAssignment.create(np.arange(n).reshape(R, Pn))
    devs = devices[:n]
    exe = backend.compile_and_load(case["text"], xla_client.DeviceList(tuple(devs)), opts)
    mesh = Mesh(np.array(devs), ("i",))
    args = []
    for k in range(nargs):
        shards = [jax.device_put(inputs[i][k], d) for i, d in enumerate(devs)]
        shape = (n * shards[0].shape[0],) + shards[0].shape[1:]
        args.append(jax.make_array_from_single_device_arrays(
            shape, NamedSharding(mesh, P("i")), shards))
    res = exe.execute_sharded(args).disassemble_into_single_device_arrays()
    save(name, [[np.asarray(res[k][i]) for k in range(len(res))] for i in range(n)])

def shard_map_case(name):
    mesh = Mesh(np.array(devices[:8]).reshape(2, 4), ("r", "p"))
    x = np.arange(8 * 16, dtype=np.float32).reshape(8, 16) * 0.5 - 7
    def body(x):
        return (jax.lax.psum(x, "p"), jax.lax.all_gather(x, "r", axis=0, tiled=True),
                jax.lax.ppermute(x, "p", [(i, (i + 1) % 4) for i in range(4)]),
                jax.lax.all_to_all(x, "p", 1, 0, tiled=True), jax.lax.pmax(x, ("r", "p")),
                jax.lax.psum_scatter(x, "r", scatter_dimension=1, tiled=True))
    specs = (P("r", "p"), P(None, "p"), P("r", "p"), P("r", "p"), P(None, None), P("r", "p"))
    f = jax.jit(shard_map(body, mesh=mesh, in_specs=P("r", "p"), out_specs=specs,
                          check_vma=False))
    text = f.lower(x).as_text()
    xs = jax.device_put(x, NamedSharding(mesh, P("r", "p")))
    by_dev = {s.device.id: np.asarray(s.data) for s in xs.addressable_shards}
    outs = f(x)
    per_dev = [[None] * len(outs) for _ in range(8)]
    for k, o in enumerate(outs):
        for s in o.addressable_shards:
            per_dev[s.device.id][k] = np.asarray(s.data)
    for i in range(8):
        np.save(os.path.join(work, f"{name}_in_{i}_0.npy"), by_dev[devices[i].id])
    save(name, per_dev)
    report[name]["text"] = text

for case in spec["text_cases"]:
    try:
        run_text(case)
    except Exception as e:
        report[case["name"]] = {"error": f"{type(e).__name__}: {e}"}
try:
    shard_map_case("shard_map")
except Exception as e:
    report["shard_map"] = {"error": f"{type(e).__name__}: {e}"}
json.dump(report, open(os.path.join(work, "report.json"), "w"))
'''

SUM_BODY = """({
      ^bb0(%a: tensor<ET>, %b: tensor<ET>):
        %s = stablehlo.add %a, %b : tensor<ET>
        stablehlo.return %s : tensor<ET>
    })"""


def _replicated(name: str, R: int, body: str, in_type: str, out_type: str) -> dict[str, Any]:
    return {"name": name, "R": R, "P": 1, "nargs": 1, "text": f"""
module @{name} attributes {{mhlo.num_replicas = {R} : i32, mhlo.num_partitions = 1 : i32}} {{
  func.func public @main(%x: {in_type}) -> {out_type} {{
    {body}
    return %r : {out_type}
  }}
}}"""}


def _xla_cases() -> list[dict[str, Any]]:
    f32sum = SUM_BODY.replace("ET", "f32")
    cases = [
        _replicated("all_reduce_f32", 8, f"""%r = "stablehlo.all_reduce"(%x) {f32sum} {{
          replica_groups = dense<[[0, 1, 2, 3, 4, 5, 6, 7]]> : tensor<1x8xi64>}}
          : (tensor<6xf32>) -> tensor<6xf32>""", "tensor<6xf32>", "tensor<6xf32>"),
        _replicated("all_reduce_max_groups", 8, """%r = "stablehlo.all_reduce"(%x) ({
          ^bb0(%a: tensor<i32>, %b: tensor<i32>):
            %m = stablehlo.maximum %a, %b : tensor<i32>
            stablehlo.return %m : tensor<i32>
          }) {replica_groups = dense<[[0, 2, 4, 6], [1, 3, 5, 7]]> : tensor<2x4xi64>}
          : (tensor<5xi32>) -> tensor<5xi32>""", "tensor<5xi32>", "tensor<5xi32>"),
        _replicated("all_gather", 8, """%r = "stablehlo.all_gather"(%x) {all_gather_dim = 1 : i64,
          replica_groups = dense<[[0, 1, 2, 3], [7, 6, 5, 4]]> : tensor<2x4xi64>}
          : (tensor<2x3xf32>) -> tensor<2x12xf32>""", "tensor<2x3xf32>", "tensor<2x12xf32>"),
        _replicated("reduce_scatter", 4, f"""%r = "stablehlo.reduce_scatter"(%x) {f32sum} {{
          scatter_dimension = 1 : i64, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>}}
          : (tensor<2x8xf32>) -> tensor<2x2xf32>""", "tensor<2x8xf32>", "tensor<2x2xf32>"),
        _replicated("all_to_all", 4, """%r = "stablehlo.all_to_all"(%x) {split_dimension = 1 : i64,
          concat_dimension = 0 : i64, split_count = 4 : i64,
          replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>}
          : (tensor<2x8xi32>) -> tensor<8x2xi32>""", "tensor<2x8xi32>", "tensor<8x2xi32>"),
        _replicated("collective_permute", 8, """%r = "stablehlo.collective_permute"(%x) {
          source_target_pairs = dense<[[0, 3], [3, 5], [5, 0], [1, 2], [6, 6]]> : tensor<5x2xi64>}
          : (tensor<3xf32>) -> tensor<3xf32>""", "tensor<3xf32>", "tensor<3xf32>"),
        _replicated("collective_broadcast", 4, """%r = "stablehlo.collective_broadcast"(%x) {
          replica_groups = dense<[[2, 1], [0, 3]]> : tensor<2x2xi64>}
          : (tensor<3xf32>) -> tensor<3xf32>""", "tensor<3xf32>", "tensor<3xf32>"),
        {"name": "grid_2x2", "R": 2, "P": 2, "nargs": 1, "text": f"""
module @grid attributes {{mhlo.num_replicas = 2 : i32, mhlo.num_partitions = 2 : i32}} {{
  func.func public @main(%x: tensor<3xf32> {{mhlo.sharding = "{{manual}}"}})
      -> (tensor<6xf32> {{mhlo.sharding = "{{manual}}"}}) {{
    %s = "stablehlo.all_reduce"(%x) {f32sum} {{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>,
      channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>}}
      : (tensor<3xf32>) -> tensor<3xf32>
    %r = "stablehlo.all_gather"(%s) {{all_gather_dim = 0 : i64,
      replica_groups = dense<[[0, 3], [2, 1]]> : tensor<2x2xi64>,
      channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>, use_global_device_ids}}
      : (tensor<3xf32>) -> tensor<6xf32>
    return %r : tensor<6xf32>
  }}
}}"""},
    ]
    # Values whose f32 sum depends on the order: XLA folds left in group order, as shlo does.
    order = _replicated("all_reduce_order", 4, f"""%r = "stablehlo.all_reduce"(%x) {f32sum} {{
          replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>}}
          : (tensor<3xf32>) -> tensor<3xf32>""", "tensor<3xf32>", "tensor<3xf32>")
    order["inputs"] = [[1e8, 1, 1], [1, 1e8, 1], [-1e8, 1, -1e8], [1, -1e8, 1e8]]
    return cases + [order]


def _inputs(case: dict[str, Any]) -> list[np.ndarray]:
    if "inputs" in case:
        return [np.array(v, np.float32) for v in case["inputs"]]
    rng = np.random.default_rng(len(case["name"]))
    n = case["R"] * case["P"]
    text = case["text"]
    arg = text.split("%x: ", 1)[1]
    dims = arg[len("tensor<"):arg.index(">")].split("x")
    shape = tuple(int(d) for d in dims[:-1])
    et = dims[-1]
    if et.startswith("i"):
        return [rng.integers(-50, 50, shape).astype(np.int32) for _ in range(n)]
    # f32 values with few significant bits, so sums are exact in any order
    return [(rng.integers(-64, 64, shape) / 4).astype(np.float32) for _ in range(n)]


@pytest.fixture(scope="module")
def xla() -> dict[str, Any]:
    pytest.importorskip("jax")
    cases = _xla_cases()
    work = tempfile.mkdtemp(prefix="shlo_xla_")
    inputs = {}
    for c in cases:
        inputs[c["name"]] = _inputs(c)
        for i, x in enumerate(inputs[c["name"]]):
            np.save(os.path.join(work, f"{c['name']}_in_{i}_0.npy"), x)
    Path(work, "cases.json").write_text(json.dumps({"text_cases": cases}))
    Path(work, "oracle.py").write_text(ORACLE)
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8",
               JAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, os.path.join(work, "oracle.py"), work], env=env,
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        pytest.skip(f"the XLA oracle failed: {proc.stderr[-2000:]}")
    report = json.loads(Path(work, "report.json").read_text())
    return {"work": work, "report": report, "cases": {c["name"]: c for c in cases},
            "inputs": inputs}


def _load(xla: dict[str, Any], name: str, kind: str, n: int, m: int) -> list[list[np.ndarray]]:
    return [[np.load(os.path.join(xla["work"], f"{name}_{kind}_{i}_{k}.npy")) for k in range(m)]
            for i in range(n)]


@pytest.mark.parametrize("name", [c["name"] for c in _xla_cases()])
def test_against_xla(xla: dict[str, Any], name: str) -> None:
    rep = xla["report"][name]
    if "error" in rep:
        pytest.skip(f"XLA cannot run this program: {rep['error'][:300]}")
    case = xla["cases"][name]
    n = case["R"] * case["P"]
    expected = _load(xla, name, "out", n, rep["nout"])
    got = run_text(case["text"], PerProcess(xla["inputs"][name]))
    assert len(got) == n
    for i in range(n):
        for g, e in zip(got[i], expected[i]):
            assert g.dtype == e.dtype and g.shape == e.shape, (i, g, e)
            np.testing.assert_array_equal(g, e, err_msg=f"{name}, process {i}")


def test_jax_shard_map_lowering_against_xla(xla: dict[str, Any]) -> None:
    rep = xla["report"]["shard_map"]
    if "error" in rep:
        pytest.skip(f"JAX could not lower or run shard_map: {rep['error'][:300]}")
    module = shlo.parse(rep["text"])
    inputs = _load(xla, "shard_map", "in", 8, 1)
    expected = _load(xla, "shard_map", "out", 8, rep["nout"])
    got = shlo.run(module, PerProcess([x[0] for x in inputs]), entry="shmap_body", verify=False)
    assert len(got) == 8  # mhlo.num_partitions = 8 sets the grid
    for i in range(8):
        for k, (g, e) in enumerate(zip(got[i], expected[i])):
            np.testing.assert_allclose(g, e, rtol=1e-6, err_msg=f"result {k}, process {i}")
