"""The process grid: process groups, per-process arguments/results, feeds, channels, and the
failures a user can act on (never a hang). Programs are built as IR so that these tests need
no parser; tests/ops/test_distributed.py covers the ops from program text."""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

import numpy as np
import pytest

import shlo
from shlo.attributes import (DenseElementsAttr, IntegerAttr, StringAttr, StructAttr, TypeAttr,
                             UnitAttr)
from shlo.errors import ExecutionError
from shlo.interpreter.process_grid import (
    PerProcess, ProcessGrid, cross_partition, cross_replica, cross_replica_and_partition,
    flattened_ids, grid_shape, process_groups, process_label, run_grid,
)
from shlo.ir import Block, FileLineColLoc, Module, Operation, Region, Value
from shlo.types import FunctionType, TensorType, TokenType, element_type

# --- a tiny IR builder -------------------------------------------------------------------------

I64 = element_type("i64")
UI32 = element_type("ui32")
TOKEN_T = TokenType()


def t(*shape: int | None, et: Any = I64) -> TensorType:
    return TensorType(tuple(shape), et)


def loc(line: int) -> FileLineColLoc:
    return FileLineColLoc("grid.mlir", line, 3)


def dense(rows: Any) -> DenseElementsAttr:
    a = np.asarray(rows, dtype=np.int64)
    return DenseElementsAttr(TensorType(a.shape, I64), a)


def channel(handle: int) -> StructAttr:
    return StructAttr("stablehlo.channel_handle", (("handle", handle), ("type", 1)))


class F:
    """Builds one function: ``F("main", [t(4)])``; ``f.op(...)`` appends an op."""

    def __init__(self, name: str, inputs: list[Any]) -> None:
        self.name = name
        self.block = Block(list(inputs))
        self.args = list(self.block.arguments)

    def op(self, name: str, operands: list[Value], results: list[Any], line: int = 1,
           regions: list[Region] | None = None, **attrs: Any) -> list[Value]:
        o = Operation(name, operands, results, attributes=attrs, regions=regions,
                      location=loc(line))
        self.block.append(o)
        return o.results

    def ret(self, *values: Value) -> Operation:
        self.block.append(Operation("func.return", list(values)))
        ft = FunctionType(tuple(a.type for a in self.args), tuple(v.type for v in values))
        return Operation("func.func", properties={"sym_name": StringAttr(self.name),
                                                  "function_type": TypeAttr(ft)},
                         regions=[Region([self.block])])


def module(*funcs: Operation, **attrs: Any) -> Module:
    body = Block()
    for f in funcs:
        body.append(f)
    return Module(Operation("builtin.module", regions=[Region([body])], attributes=attrs))


def add_body(et: Any = I64) -> Region:
    s = TensorType((), et)
    b = Block([s, s])
    o = Operation("stablehlo.add", list(b.arguments), [s])
    b.append(o)
    b.append(Operation("stablehlo.return", [o.results[0]]))
    return Region([b])


def all_reduce_fn(name: str = "main", shape: tuple[int | None, ...] = (4,),
                  groups: Any = ((0, 1),), line: int = 7) -> Operation:
    f = F(name, [t(*shape)])
    (r,) = f.op("stablehlo.all_reduce", f.args, [t(*shape)], line, regions=[add_body()],
                replica_groups=dense(groups))
    return f.ret(r)


def custom_call(f: F, target: str, x: Value, line: int = 3) -> Value:
    return f.op("stablehlo.custom_call", [x], [x.type], line,
                call_target_name=StringAttr(target))[0]


# --- process groups (spec "Collective ops" examples) ------------------------------------------


def test_cross_replica_spec_example() -> None:
    assert cross_replica([[0, 1], [2, 3]], 4, 2) == [
        [(0, 0), (1, 0)], [(0, 1), (1, 1)], [(2, 0), (3, 0)], [(2, 1), (3, 1)]]


def test_cross_partition_spec_example() -> None:
    assert cross_partition([[0, 1]], 4, 2) == [
        [(0, 0), (0, 1)], [(1, 0), (1, 1)], [(2, 0), (2, 1)], [(3, 0), (3, 1)]]


def test_cross_replica_and_partition_spec_example() -> None:
    assert cross_replica_and_partition([[0, 1], [2, 3]], 4, 2) == [
        [(0, 0), (1, 0), (0, 1), (1, 1)], [(2, 0), (3, 0), (2, 1), (3, 1)]]


def test_flattened_ids_spec_example() -> None:
    assert flattened_ids([[0, 1, 2, 3], [4, 5, 6, 7]], 4, 2) == [
        [(0, 0), (0, 1), (1, 0), (1, 1)], [(2, 0), (2, 1), (3, 0), (3, 1)]]


def test_process_groups_drop_padding_and_default_to_everyone() -> None:
    assert process_groups("cross_replica", [[0, 1], [2, -1]], 3, 1) == [
        [(0, 0), (1, 0)], [(2, 0)]]
    assert process_groups("cross_partition", [], 2, 3) == [
        [(0, 0), (0, 1), (0, 2)], [(1, 0), (1, 1), (1, 2)]]
    assert process_groups("flattened_ids", [], 2, 2) == [[(0, 0), (0, 1), (1, 0), (1, 1)]]


def test_process_groups_reject_ids_outside_the_grid() -> None:
    with pytest.raises(ValueError, match=r"replica id 2 .* out of range for the 2x1 process"):
        process_groups("cross_replica", [[0, 2]], 2, 1)
    with pytest.raises(ValueError, match="process id 4"):
        process_groups("flattened_ids", [[0, 4]], 2, 2)


def test_process_label_and_grid_shape() -> None:
    assert process_label((1, 2)) == "process (replica 1, partition 2)"
    assert process_label(5, 3) == "process (replica 1, partition 2)"
    m = module(all_reduce_fn(), **{"mhlo.num_replicas": IntegerAttr(4),
                                   "mhlo.num_partitions": IntegerAttr(2)})
    assert grid_shape(m) == (4, 2)
    assert grid_shape(m, replicas=2) == (2, 2)
    assert grid_shape(m, programs=[["main", "main", "main"]]) == (1, 3)
    with pytest.raises(ExecutionError, match="1x3 grid"):
        grid_shape(m, replicas=2, programs=[["main", "main", "main"]])


# --- running on the grid -----------------------------------------------------------------------


def ids_module() -> Module:
    f = F("main", [])
    (r,) = f.op("stablehlo.replica_id", [], [t(et=UI32)])
    (p,) = f.op("stablehlo.partition_id", [], [t(et=UI32)])
    return module(f.ret(r, p))


def test_every_process_knows_its_position() -> None:
    res = shlo.run(ids_module(), replicas=2, partitions=3, verify=False)
    assert len(res) == 6
    for pid, (r, p) in enumerate(res):
        assert r.dtype == np.uint32 and r.shape == ()
        assert (int(r), int(p)) == divmod(pid, 3)


def test_one_process_is_replica_0_partition_0_and_stays_flat() -> None:
    r, p = shlo.run(ids_module(), verify=False)
    assert int(r) == 0 and int(p) == 0
    nested = shlo.run(ids_module(), replicas=1, verify=False)  # asked for a grid: per process
    assert len(nested) == 1 and int(nested[0][0]) == 0


def test_grid_options_on_one_process_keep_results_flat() -> None:
    r, p = shlo.run(ids_module(), timeout=None, verify=False)
    assert int(r) == 0 and int(p) == 0
    assert run_grid(ids_module(), timeout=None)[0][0].shape == ()


def test_module_attributes_set_the_default_grid() -> None:
    m = ids_module()
    m.op.attributes["mhlo.num_replicas"] = IntegerAttr(2)
    res = shlo.run(m, verify=False)
    assert [int(r) for r, _ in res] == [0, 1]


def test_per_process_and_broadcast_arguments() -> None:
    f = F("main", [t(2), t(2)])
    (s,) = f.op("stablehlo.add", f.args, [t(2)])
    m = module(f.ret(s))
    xs = PerProcess([np.array([1, 2]), np.array([10, 20]), np.array([100, 200])])
    res = shlo.run(m, xs, np.array([5, 5]), replicas=3, verify=False)
    assert [r[0].tolist() for r in res] == [[6, 7], [15, 25], [105, 205]]
    res = run_grid(m, process_args=[[np.array([1, 1]), np.array([2, 2])]] * 3, replicas=3)
    assert [r[0].tolist() for r in res] == [[3, 3]] * 3
    with pytest.raises(ExecutionError, match="3 per-process values for 2 processes"):
        shlo.run(m, xs, np.array([5, 5]), replicas=2, verify=False)


def test_mpmd_programs_run_a_function_per_process() -> None:
    f = F("twice", [t(2)])
    (d,) = f.op("stablehlo.add", [f.args[0], f.args[0]], [t(2)])
    g = F("negate", [t(2)])
    (n,) = g.op("stablehlo.negate", g.args, [t(2)])
    m = module(f.ret(d), g.ret(n))
    res = shlo.run(m, np.array([1, 2]), programs=[["twice", "negate"]], verify=False)
    assert [r[0].tolist() for r in res] == [[2, 4], [-1, -2]]


def test_all_reduce_in_a_grid_and_repeated_runs_reuse_preparation() -> None:
    m = module(all_reduce_fn(groups=[[0, 1, 2, 3]]))
    xs = PerProcess([np.full(4, 10 ** i) for i in range(4)])
    for _ in range(3):
        res = shlo.run(m, xs, replicas=4, verify=False)
        assert all(r[0].tolist() == [1111] * 4 for r in res)
    pool = m.__dict__["_grid_instances"]
    assert sum(len(v) for v in pool.values()) == 1


def test_replica_groups_split_the_grid() -> None:
    m = module(all_reduce_fn(groups=[[0, 2], [1, 3]]))
    res = shlo.run(m, PerProcess([np.full(4, 10 ** i) for i in range(4)]), replicas=4,
                   verify=False)
    assert [int(r[0][0]) for r in res] == [101, 1010, 101, 1010]


# --- feeds -------------------------------------------------------------------------------------


def feed_module() -> Module:
    f = F("main", [])
    (tok,) = f.op("stablehlo.after_all", [], [TOKEN_T])
    a, tok1 = f.op("stablehlo.infeed", [tok], [t(2), TOKEN_T], 5)
    b, tok2 = f.op("stablehlo.infeed", [tok1], [t(2), TOKEN_T], 6)
    (s,) = f.op("stablehlo.add", [a, b], [t(2)])
    (tok3,) = f.op("stablehlo.outfeed", [s, tok2], [TOKEN_T], 8)
    return module(f.ret(s))


def test_infeed_and_outfeed_on_one_process() -> None:
    out: list[Any] = []
    (s,) = shlo.run(feed_module(), infeed=[np.array([1, 2]), (np.array([10, 20]),)],
                    outfeed=out, verify=False)
    assert s.tolist() == [11, 22]
    assert len(out) == 1 and isinstance(out[0], tuple) and out[0][0].tolist() == [11, 22]


def test_infeed_per_process_and_outfeed_per_process() -> None:
    out: list[Any] = []
    queues = PerProcess([[np.array([1, 1]), np.array([2, 2])], [np.array([5, 5]), [7, 7]]])
    res = shlo.run(feed_module(), infeed=queues, outfeed=out, replicas=2, verify=False)
    assert [r[0].tolist() for r in res] == [[3, 3], [12, 12]]
    assert [[v[0].tolist() for v in o] for o in out] == [[[3, 3]], [[12, 12]]]
    # A plain list is every process's queue.
    res = shlo.run(feed_module(), infeed=[np.array([1, 1]), np.array([2, 2])], replicas=2,
                   verify=False)
    assert [r[0].tolist() for r in res] == [[3, 3], [3, 3]]


def test_infeed_errors_name_the_op_and_the_process() -> None:
    with pytest.raises(ExecutionError, match=r"grid.mlir:6:3.*infeed.*replica 1.*empty"):
        shlo.run(feed_module(), infeed=PerProcess([[[1, 1], [2, 2]], [[1, 1]]]), replicas=2,
                 verify=False)
    with pytest.raises(ExecutionError, match=r"expected shape \(2,\)"):
        shlo.run(feed_module(), infeed=[np.array([1, 2, 3]), np.array([1, 2])], verify=False)


# --- channels ----------------------------------------------------------------------------------


def send_fn(name: str, handle: int, count: int = 1, line: int = 20) -> Operation:
    f = F(name, [t(2)])
    (tok,) = f.op("stablehlo.after_all", [], [TOKEN_T])
    x = f.args[0]
    for i in range(count):
        (tok,) = f.op("stablehlo.send", [x, tok], [TOKEN_T], line + i,
                      channel_handle=channel(handle))
        (x,) = f.op("stablehlo.add", [x, x], [t(2)])
    return f.ret(tok)


def recv_fn(name: str, handle: int, count: int = 1, line: int = 30) -> Operation:
    f = F(name, [t(2)])
    (tok,) = f.op("stablehlo.after_all", [], [TOKEN_T])
    outs = []
    for i in range(count):
        v, tok = f.op("stablehlo.recv", [tok], [t(2), TOKEN_T], line + i,
                      channel_handle=channel(handle))
        outs.append(v)
    return f.ret(*outs)


def test_send_recv_in_order_between_processes() -> None:
    m = module(send_fn("send", 1, count=3), recv_fn("recv", 1, count=3))
    res = shlo.run(m, np.array([1, 2]), programs=[["send"], ["recv"]], verify=False)
    assert [v.tolist() for v in res[1]] == [[1, 2], [2, 4], [4, 8]]


def test_recv_with_no_sender_fails_at_once() -> None:
    m = module(recv_fn("recv", 4), recv_fn("other", 5))
    start = time.monotonic()
    with pytest.raises(ExecutionError) as e:
        shlo.run(m, np.array([1, 2]), programs=[["recv", "other"]], timeout=30, verify=False)
    assert time.monotonic() - start < 5  # deadlock detection, not the 30 s timeout
    msg = str(e.value)
    assert "deadlock" in msg and "channel 4" in msg and "channel 5" in msg
    assert "grid.mlir:30:3" in msg


def test_recv_on_one_process_without_a_sender() -> None:
    m = module(recv_fn("main", 4))
    with pytest.raises(ExecutionError, match="nothing was sent on channel 4"):
        shlo.run(m, np.array([1, 2]), verify=False)


def test_a_value_sent_and_never_received_is_reported() -> None:
    m = module(send_fn("send", 1), recv_fn("recv", 2))
    f = F("idle", [t(2)])
    m.body.append(f.ret(f.args[0]))
    with pytest.raises(ExecutionError, match=r"grid.mlir:20:3.*channel 1 was never received"):
        shlo.run(m, np.array([1, 2]), programs=[["send"], ["idle"]], verify=False)


# --- failures: never a hang ----------------------------------------------------------------------


def test_a_process_that_never_reaches_the_collective() -> None:
    idle = F("idle", [t(4)])
    m = module(all_reduce_fn("reduce"), idle.ret(idle.args[0]))
    start = time.monotonic()
    with pytest.raises(ExecutionError) as e:
        shlo.run(m, np.arange(4), programs=[["reduce"], ["idle"]], timeout=30, verify=False)
    assert time.monotonic() - start < 5
    msg = str(e.value)
    assert msg.startswith("grid.mlir:7:3: error: 'stablehlo.all_reduce'")
    assert "replica 0" in msg and "(replica 1, partition 0), which finished without" in msg


def test_shapes_that_differ_between_processes() -> None:
    m = module(all_reduce_fn(shape=(None,)))
    with pytest.raises(ExecutionError) as e:
        shlo.run(m, PerProcess([np.arange(4), np.arange(3)]), replicas=2, verify=False)
    msg = str(e.value)
    assert "grid.mlir:7:3" in msg and "different shapes" in msg
    assert "0): tensor<4xi64>" in msg and "0): tensor<3xi64>" in msg


def test_collectives_of_different_kinds_deadlock_with_a_report() -> None:
    f = F("gather", [t(4)])
    (g,) = f.op("stablehlo.all_gather", f.args, [t(8)], 12, all_gather_dim=IntegerAttr(0),
                replica_groups=dense([[0, 1]]))
    m = module(all_reduce_fn("reduce"), f.ret(g))
    with pytest.raises(ExecutionError) as e:
        run_grid(m, process_args=[[np.arange(4)]] * 2, programs=[["reduce"], ["gather"]])
    msg = str(e.value)
    assert "deadlock" in msg and "all_gather' at grid.mlir:12:3" in msg
    assert "all_reduce' at grid.mlir:7:3" in msg


def slow_then_reduce() -> Module:
    f = F("main", [t(4)])
    x = custom_call(f, "work", f.args[0])
    (r,) = f.op("stablehlo.all_reduce", [x], [t(4)], 7, regions=[add_body()],
                replica_groups=dense([[0, 1]]))
    return module(f.ret(r))


def test_waiting_for_a_slow_process_times_out_when_asked() -> None:
    def work(x: np.ndarray) -> np.ndarray:
        if int(x[0]) == 1:
            time.sleep(0.5)
        return x

    m = slow_then_reduce()
    xs = PerProcess([np.zeros(4, np.int64), np.ones(4, np.int64)])
    with pytest.raises(ExecutionError, match=r"grid.mlir:7:3.*replica 0.*timed out after "
                                             r"0.2 s.*replica 1"):
        shlo.run(m, xs, replicas=2, custom_calls={"work": work}, timeout=0.2, verify=False)
    res = shlo.run(m, xs, replicas=2, custom_calls={"work": work}, timeout=5, verify=False)
    assert res[0][0].tolist() == [1, 1, 1, 1]


def test_an_error_in_one_process_stops_the_others() -> None:
    def work(x: np.ndarray) -> np.ndarray:
        if int(x[0]) == 1:
            raise ValueError("bad input on this process")
        return x

    start = time.monotonic()
    with pytest.raises(ExecutionError) as e:
        shlo.run(slow_then_reduce(), PerProcess([np.zeros(4, np.int64), np.ones(4, np.int64)]),
                 replicas=2, custom_calls={"work": work}, timeout=30, verify=False)
    assert time.monotonic() - start < 5
    msg = str(e.value)
    assert "process (replica 1, partition 0)" in msg and "bad input on this process" in msg
    assert "grid.mlir:3:3" in msg


def test_a_process_still_computing_after_an_abort_is_interrupted() -> None:
    stop = threading.Event()
    left = threading.Event()

    def work(x: np.ndarray) -> np.ndarray:
        if int(x[0]) == 1:
            raise ValueError("failed early")
        try:
            while not stop.is_set():  # an endless computation
                time.sleep(0.01)
        finally:
            left.set()
        return x

    start = time.monotonic()
    try:
        with pytest.raises(ExecutionError, match="failed early"):
            shlo.run(slow_then_reduce(),
                     PerProcess([np.zeros(4, np.int64), np.ones(4, np.int64)]),
                     replicas=2, custom_calls={"work": work}, verify=False)
        assert time.monotonic() - start < 6
        assert left.wait(2)  # the endless loop was interrupted, not abandoned
        assert not stop.is_set()
    finally:
        stop.set()


# --- the grid object directly ------------------------------------------------------------------


def run_threads(n: int, body: Callable[[int], Any]) -> list[Any]:
    out: list[Any] = [None] * n
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            out[i] = body(i)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    ths = [threading.Thread(target=work, args=(i,)) for i in range(n)]
    for th in ths:
        th.start()
    for th in ths:
        th.join(10)
    if errors:
        raise errors[0]
    return out


def test_rendezvous_pairs_the_nth_arrivals_and_combines_once() -> None:
    grid = ProcessGrid(3, 1)
    group = [(0, 0), (1, 0), (2, 0)]
    calls = []

    def combine(values: list[int]) -> list[int]:
        calls.append(values)
        return [sum(values) + i for i in range(len(values))]

    def body(i: int) -> list[int]:
        got = []
        for step in range(5):
            if i == 2:
                time.sleep(0.002)
            got.append(grid.rendezvous(None, group, (i, 0), 10 * step + i, combine))
        grid.finish((i, 0))
        return got

    out = run_threads(3, body)
    assert len(calls) == 5
    assert out == [[30 * s + 3 + i for s in range(5)] for i in range(3)]
