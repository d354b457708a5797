"""Tracing: hand-computed intermediates, iterations, filters, the probe layout, probes."""

from __future__ import annotations

import numpy as np
import pytest

import shlo
from shlo.debug.trace import read_probe_dir, summarize, trace

LOOP = """
func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %a, %b : tensor<2xf32> loc("sum"("model.py":3:4))
  %1 = stablehlo.multiply %0, %0 : tensor<2xf32>
  %2 = interpreter.probe %1, probe_id = "sq" : tensor<2xf32>
  %c = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c, %x = %2) : tensor<i32>, tensor<2xf32>
   cond {
    %n = stablehlo.constant dense<3> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %j = stablehlo.add %i, %one : tensor<i32>
    %y = stablehlo.add %x, %x : tensor<2xf32>
    stablehlo.return %j, %y : tensor<i32>, tensor<2xf32>
  }
  return %r#1 : tensor<2xf32>
}
"""

A = np.array([1, 2], np.float32)
B = np.array([3, -4], np.float32)


def test_intermediates_by_hand():
    t = trace(LOOP, A, B, values=True)
    assert t.error is None
    np.testing.assert_array_equal(t.results[0], [128, 32])  # (a+b)^2 doubled three times
    add, mul = t.events[0], t.events[1]
    assert add.name == "stablehlo.add" and add.location == "model.py:3:4"
    assert add.location_name == "sum" and add.function == "main"
    np.testing.assert_array_equal(add.values[0], [4, -2])
    np.testing.assert_array_equal(mul.values[0], [16, 4])
    s = mul.summaries[0]
    assert (s.shape, s.min, s.max, s.mean, s.nan, s.inf) == ((2,), 4.0, 16.0, 10.0, 0, 0)
    body_adds = [e for e in t.find("add") if e.depth == 1 and e.op.results[0].type.shape]
    assert [e.iteration for e in body_adds] == [0, 1, 2]
    assert [list(e.values[0]) for e in body_adds] == [[32, 8], [64, 16], [128, 32]]
    compares = t.find("compare")
    assert [e.iteration for e in compares] == [0, 1, 2, 3]
    assert [bool(e.values[0]) for e in compares] == [True, True, True, False]
    assert all(e.parent is not None and e.parent.name == "stablehlo.while" for e in compares)


def test_probe_values_are_returned_every_run():
    m = shlo.parse(LOOP)
    for _ in range(2):  # probes are not lost on a second run of the same module
        t = trace(m, A, B)
        assert list(t.probes) == ["sq"]
        np.testing.assert_array_equal(t.probes["sq"][0], [16, 4])


def test_filters():
    t = trace(LOOP, A, B, ops=["add"])
    assert {e.name for e in t.events} == {"stablehlo.add", "interpreter.probe"}
    assert len(t.find("add")) == 1 + 3 + 3
    t = trace(LOOP, A, B, locations="model\\.py")
    assert [e.name for e in t.events if e.name != "interpreter.probe"] == ["stablehlo.add"]
    t = trace(LOOP, A, B, functions=["other"])
    assert [e.name for e in t.events] == ["interpreter.probe"]


def test_summary_counts_nan_inf_and_hash():
    s = summarize(np.array([1.0, np.nan, np.inf, -3.0], np.float32))
    assert (s.nan, s.inf, s.min, s.max, s.mean) == (1, 1, -3.0, 1.0, -1.0)
    assert summarize(np.array([1.0, 2.0], np.float32)).hash == \
        summarize(np.array([1.0, 2.0], np.float32)).hash
    assert summarize(np.array([1.0, 2.0], np.float32)).hash != \
        summarize(np.array([1.0, 2.5], np.float32)).hash


def test_failing_run_keeps_the_trace():
    text = """
    func.func @main(%a: tensor<2xi32>) -> tensor<2xi32> {
      %0 = stablehlo.add %a, %a : tensor<2xi32>
      %1 = stablehlo.custom_call @nowhere(%0) : (tensor<2xi32>) -> tensor<2xi32>
      return %1 : tensor<2xi32>
    }"""
    t = trace(text, np.array([1, 2], np.int32))
    assert t.error is not None
    assert [e.name for e in t.events] == ["stablehlo.add", "stablehlo.custom_call"]
    assert t.events[0].summaries[0].max == 4 and t.events[1].seconds is None


DTYPES = """
func.func @main() -> () {
  %0 = stablehlo.constant dense<[1.5, -2.0]> : tensor<2xbf16>
  %1 = stablehlo.constant dense<[0.5, 448.0]> : tensor<2xf8E4M3FN>
  %2 = stablehlo.constant dense<[-8, 7]> : tensor<2xi4>
  %3 = stablehlo.constant dense<[(1.0, -2.0)]> : tensor<1xcomplex<f32>>
  %4 = stablehlo.constant dense<[true, false]> : tensor<2xi1>
  %5 = stablehlo.add %0, %0 : tensor<2xbf16>
  return
}
"""


def test_probe_layout_reads_back_every_dtype(tmp_path):
    import ml_dtypes

    t = trace(DTYPES, directory=str(tmp_path))
    assert t.error is None
    lines = (tmp_path / "index.csv").read_text().splitlines()
    assert lines[0].split(",")[1] == "tensor<2xbf16>"
    assert all(len(x.split(",")) == 3 for x in lines)  # upstream's probe_id,type,path
    got = {ty: v for _, ty, v in read_probe_dir(str(tmp_path))}
    assert got["tensor<2xbf16>"].dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(got["tensor<2xbf16>"].astype(np.float32), [3.0, -4.0])
    assert got["tensor<2xf8E4M3FN>"].dtype == ml_dtypes.float8_e4m3fn
    assert list(got["tensor<2xf8E4M3FN>"].astype(np.float32)) == [0.5, 448.0]
    assert got["tensor<2xi4>"].dtype == ml_dtypes.int4
    assert list(got["tensor<2xi4>"].astype(np.int8)) == [-8, 7]
    assert got["tensor<1xcomplex<f32>>"].dtype == np.complex64
    assert got["tensor<1xcomplex<f32>>"][0] == 1 - 2j
    assert got["tensor<2xi1>"].dtype == np.bool_ and list(got["tensor<2xi1>"]) == [True, False]
    # the raw files are what the upstream reader expects: bf16 as 2-byte words
    assert np.load(tmp_path / "probe1.npy").dtype == np.uint16
    assert (tmp_path / "ops.csv").read_text().splitlines()[1].split(",")[2] == \
        "stablehlo.constant"


def test_npz_save(tmp_path):
    import json

    t = trace(LOOP, A, B, values=True)
    t.save(str(tmp_path / "t.npz"))
    with np.load(tmp_path / "t.npz") as z:
        rows = json.loads(str(z["index"]))
        assert rows[0]["op"] == "stablehlo.add" and rows[0]["location"] == "model.py:3:4"
        np.testing.assert_array_equal(z["v1_0"], [16, 4])


def test_grid_events_per_process():
    text = """
    module attributes {mhlo.num_replicas = 2 : i32} {
      func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
        %0 = "stablehlo.all_reduce"(%a) ({
          ^bb0(%x: tensor<f32>, %y: tensor<f32>):
            %s = stablehlo.add %x, %y : tensor<f32>
            stablehlo.return %s : tensor<f32>
        }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>
        return %0 : tensor<2xf32>
      }
    }"""
    t = trace(text, A, replicas=2)
    assert t.error is None, t.error
    procs = sorted({e.process for e in t.events})
    assert procs == [0, 1]
    for p in procs:
        ar = [e for e in t.events if e.process == p and e.name == "stablehlo.all_reduce"]
        assert ar[0].summaries[0].max == 4.0  # 2 + 2


CALL_IN_LOOP = """
func.func @main(%x0: tensor<3xf32>) -> tensor<3xf32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c, %x = %x0) : tensor<i32>, tensor<3xf32>
   cond {
    %n = stablehlo.constant dense<3> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %y = func.call @step(%x) : (tensor<3xf32>) -> tensor<3xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %j = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %j, %y : tensor<i32>, tensor<3xf32>
  }
  return %r#1 : tensor<3xf32>
}
func.func private @step(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.multiply %x, %x : tensor<3xf32>
  %1 = stablehlo.subtract %0, %x : tensor<3xf32>
  return %1 : tensor<3xf32>
}
"""


def test_a_traced_loop_stays_compiled_and_numbers_its_ops():
    m = shlo.parse(CALL_IN_LOOP)
    x = np.array([2.0, -1.0, 0.5], np.float32)
    t = trace(m, x, values=True)
    assert t.error is None
    # the same generated code as an untraced run, with the records: a Python loop, the
    # callee's ops inside it (no call of a kernel per step)
    src = m.__dict__["_prepared_observed"]["main"][0].source
    assert src.count("def run") == 1 and "for _n" in src
    loop = src.split("for _n")[1]
    assert loop.count("_rec(") == 4  # compare, the callee's multiply and subtract, add
    assert loop.count("_const(") == 2
    assert loop.count("_open(") == 1  # the call, inlined: its ops between _open and _close
    # iterations: each call is the loop's; its ops count within the call (0)
    calls = t.find("func.call")
    assert [e.iteration for e in calls] == [0, 1, 2]
    subs = t.find("subtract")
    assert [(e.iteration, e.depth, e.parent) for e in subs] == [(0, 2, c) for c in calls]
    # x -> x*x - x, three times, by hand
    want = x
    for e in subs:
        want = want * want - want
        np.testing.assert_array_equal(e.values[0], want)
    np.testing.assert_array_equal(t.results[0], want)
    while_ = t.find("while")[0]
    assert while_.seconds >= sum(e.seconds for e in t.events if e.parent is while_)
    assert while_.self_seconds == pytest.approx(
        while_.seconds - sum(e.seconds for e in t.events if e.parent is while_))


def test_batched_summaries_are_what_summarize_gives():
    text = """
    func.func @main(%a: tensor<2x3xf32>, %b: tensor<4xi32>) -> () {
      %0 = stablehlo.multiply %a, %a : tensor<2x3xf32>
      %1 = stablehlo.divide %a, %0 : tensor<2x3xf32>
      %2 = stablehlo.add %b, %b : tensor<4xi32>
      %3 = stablehlo.convert %a : (tensor<2x3xf32>) -> tensor<2x3xf64>
      %4 = stablehlo.compare LT, %b, %2 : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
      return
    }"""
    a = np.array([[1.5, 0.0, -2.0], [np.inf, 3.0, 1e-3]], np.float32)
    b = np.array([1, -7, 0, 3], np.int32)
    t = trace(text, a, b, values=True)
    assert t.error is None
    checked = 0
    for e in t.events:
        for s, v in zip(e.summaries, e.values):
            assert s == summarize(v), e
            checked += 1
    assert checked == 5
    div = t.find("divide")[0].summaries[0]  # 1/a, but 0/0 = NaN, inf/inf = NaN: the slow path
    assert (div.nan, div.inf, div.min) == (2, 0, -0.5)
    assert div.max == pytest.approx(1000, rel=1e-6)
    assert div.mean == pytest.approx((1 / 1.5 - 0.5 + 1 / 3 + 1000) / 4, rel=1e-6)
