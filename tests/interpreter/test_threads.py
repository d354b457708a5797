"""The threads engine's waits: timeouts that stop at the last arrival, messages that name who
arrived and who did not, deadlocks found by counting, check failures of a grid's processes."""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np
import pytest

import shlo
from shlo.errors import ExecutionError
from shlo.interpreter.threads import ProcessGrid
from shlo.testing.runner import run_case


def run_threads(n: int, body: Any) -> tuple[list[Any], list[BaseException]]:
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
        th.join(20)
    return out, errors


def test_the_combine_step_is_not_part_of_the_timeout() -> None:
    grid = ProcessGrid(4, 1, timeout=0.2)
    group = tuple((i, 0) for i in range(4))

    def slow_combine(values: list[int]) -> list[int]:
        time.sleep(0.6)  # three timeouts' worth of combining
        return [sum(values)] * len(values)

    out, errors = run_threads(4, lambda i: grid.rendezvous(None, group, (i, 0), i,
                                                           slow_combine))
    assert not errors
    assert out == [6, 6, 6, 6]


def test_a_timeout_names_the_op_its_location_and_who_did_and_did_not_arrive() -> None:
    m = shlo.parse("""
func.func @main(%x: tensor<2xi64>) -> tensor<2xi64> {
  %y = stablehlo.custom_call @work(%x) : (tensor<2xi64>) -> tensor<2xi64>
  %s = "stablehlo.all_reduce"(%y) ({
    ^bb0(%a: tensor<i64>, %b: tensor<i64>):
      %w = stablehlo.add %a, %b : tensor<i64>
      stablehlo.return %w : tensor<i64>
  }) {replica_groups = dense<[[0, 1, 2]]> : tensor<1x3xi64>} : (tensor<2xi64>) -> tensor<2xi64>
  return %s : tensor<2xi64>
}""", "late.mlir")

    def work(x: np.ndarray) -> np.ndarray:
        if int(x[0]) == 2:
            time.sleep(1.0)
        return x

    from shlo.interpreter.process_grid import PerProcess

    with pytest.raises(ExecutionError) as e:
        shlo.run(m, PerProcess([np.full(2, i) for i in range(3)]), replicas=3,
                 custom_calls={"work": work}, timeout=0.2, verify=False)
    msg = str(e.value)
    assert msg.startswith("late.mlir:4:3: error: 'stablehlo.all_reduce' op on process")
    assert "timed out after 0.2 s waiting for process (replica 2, partition 0) to reach it " \
           "(still running)" in msg
    assert "arrived: (replica 0, partition 0), (replica 1, partition 0)" in msg


def test_a_deadlock_among_many_processes_is_found_at_once() -> None:
    grid = ProcessGrid(32, 1, timeout=30)
    evens = tuple((i, 0) for i in range(0, 32, 2))
    everyone = tuple((i, 0) for i in range(32))

    def body(i: int) -> Any:
        # the even processes meet among themselves first, the odd ones wait for everyone
        if i % 2 == 0:
            grid.rendezvous(None, evens, (i, 0), i, lambda v: v)
        return grid.rendezvous(None, everyone, (i, 0), i, lambda v: v)

    # evens complete their meeting, then everyone meets: no deadlock
    out, errors = run_threads(32, body)
    assert not errors and out == list(range(32))

    grid = ProcessGrid(32, 1, timeout=30)

    def stuck(i: int) -> Any:  # evens wait for odd processes that never come
        group = evens if i % 2 == 0 else tuple((j, 0) for j in range(1, 32, 2))
        other = tuple((j, 0) for j in range(32) if j % 2 != i % 2)
        grid.rendezvous(None, group, (i, 0), i, lambda v: v)
        return grid.rendezvous(None, other + ((i, 0),), (i, 0), i, lambda v: v)

    start = time.monotonic()
    out, errors = run_threads(32, stuck)
    assert time.monotonic() - start < 5  # counted, not timed out
    assert grid.error is not None and "deadlock" in str(grid.error)


CHECK_IN_A_GRID = """
func.func @prog() -> tensor<i64> {
  %id = stablehlo.replica_id : tensor<ui32>
  %x = stablehlo.convert %id : (tensor<ui32>) -> tensor<i64>
  check.expect_eq_const %x, dense<0> : tensor<i64>
  return %x : tensor<i64>
}
func.func @main() {
  %r:2 = "interpreter.run_parallel"() {programs = [[@prog], [@prog]]}
      : () -> (tensor<i64>, tensor<i64>)
  func.return
}
"""


def test_check_failures_of_a_grids_processes_are_the_parents() -> None:
    r = run_case("grid.mlir", 1, CHECK_IN_A_GRID)
    assert r.status == "failed"
    assert len(r.messages) == 1 and "actual 1, expected 0" in r.messages[0]
    again = run_case("grid.mlir", 1, CHECK_IN_A_GRID)  # a second run starts afresh
    assert len(again.messages) == 1
