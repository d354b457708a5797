"""Run limits (shlo.interpreter.limits): refused up front with the op and its location."""

import numpy as np
import pytest

import shlo
from shlo.cli import main
from shlo.interpreter.limits import MAX_PROCESSES, parse_bytes
from shlo.interpreter.process_grid import PerProcess

IOTA = """func.func @main() -> tensor<1024xf32> {
  %0 = stablehlo.iota dim = 0 : tensor<1024xf32>
  return %0 : tensor<1024xf32>
}"""

HUGE = IOTA.replace("1024", "100000000000")

RECURSIVE = """func.func @main(%a: tensor<f32>) -> tensor<f32> {
  %0 = func.call @f(%a) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f(%a: tensor<f32>) -> tensor<f32> {
  %0 = func.call @g(%a) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @g(%a: tensor<f32>) -> tensor<f32> {
  %0 = func.call @f(%a) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}"""


def test_a_result_larger_than_the_limit_is_refused_before_running():
    (r,) = shlo.run(IOTA, max_bytes=4096)  # 1024 f32 = 4096 bytes: allowed
    assert r[-1] == 1023
    with pytest.raises(shlo.ExecutionError) as e:
        shlo.run(IOTA, max_bytes=4095)
    assert "'stablehlo.iota' op: its result tensor<1024xf32> needs 4096 B, more than the " \
           "memory limit of 4095 B" in str(e.value)
    assert e.value.diagnostics[0].location.file_line_col()[1:] == (2, 3)


def test_the_default_limit_is_physical_memory():
    with pytest.raises(shlo.ExecutionError, match=r"tensor<100000000000xf32> needs 373 GB"):
        shlo.run(HUGE)


def test_recursion_is_reported_at_a_call_of_the_cycle():
    with pytest.raises(shlo.ExecutionError) as e:
        shlo.run(RECURSIVE, np.float32(1))
    assert "recursion too deep (@f -> @g -> @f" in str(e.value)
    assert e.value.diagnostics[0].location.file_line_col()[1:] == (10, 3)


def test_grids_beyond_the_threaded_engine_are_refused():
    prog = IOTA.replace("1024", "4")
    with pytest.raises(shlo.ExecutionError, match=f"larger than the threaded engine's "
                                                  f"{MAX_PROCESSES}: run it on the MPI engine"):
        shlo.run(prog, replicas=MAX_PROCESSES + 1)


def test_parse_bytes():
    assert parse_bytes("8G") == 8 << 30 and parse_bytes("500M") == 500 << 20
    assert parse_bytes("1.5K") == 1536 and parse_bytes("4096") == 4096
    assert parse_bytes("2gb") == 2 << 30 and parse_bytes("none") is None
    for bad in ("", "x", "-1G", "0", "inf"):
        with pytest.raises(ValueError):
            parse_bytes(bad)


def test_cli_max_bytes(tmp_path, capsys):
    f = tmp_path / "iota.mlir"
    f.write_text(IOTA)
    assert main(["run", str(f), "--max-bytes", "1K"]) == 1
    assert "more than the memory limit of 1 KB" in capsys.readouterr().err
    assert main(["run", str(f), "--max-bytes", "4K"]) == 0
    assert main(["run", str(f), "--max-bytes", "lots"]) == 1
    assert "a size in bytes" in capsys.readouterr().err


FOREVER = """func.func @main(%a: tensor<i32>) -> tensor<i32> {
  %0 = stablehlo.while(%i = %a) : tensor<i32>
   cond {
    %t = stablehlo.constant dense<true> : tensor<i1>
    stablehlo.return %t : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %j = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %j : tensor<i32>
  }
  return %0 : tensor<i32>
}"""


def test_a_time_limit_stops_an_endless_loop_at_its_location():
    import time

    m = shlo.parse(FOREVER, "forever.mlir")
    t0 = time.monotonic()
    with pytest.raises(shlo.ExecutionError, match=r"time limit of 0.3 s reached (while "
                                                  r"computing it|in its iteration \d+)") as e:
        shlo.run(m, np.int32(0), time_limit=0.3)
    assert time.monotonic() - t0 < 10
    assert e.value.diagnostics[0].location.file_line_col()[0] == "forever.mlir"
    # a run that ends in time is not disturbed afterwards (the timer is withdrawn)
    for _ in range(20):
        (r,) = shlo.run(IOTA, time_limit=5.0)
        assert r[5] == 5
    time.sleep(0.05)


def test_cli_time_limit(tmp_path, capsys):
    f = tmp_path / "forever.mlir"
    f.write_text(FOREVER)
    assert main(["run", str(f), "--input", "i32=0", "--time-limit", "0.3"]) == 1
    err = capsys.readouterr().err
    assert "time limit of 0.3 s reached" in err and "forever.mlir:" in err


# An outer loop (i = 0, 1, 2, ...) around an inner loop that ends after 5 iterations while
# i < 2 and never from i = 2 on: the limit stops the run in the outer loop's iteration 2.
NESTED = """func.func @main(%a: tensor<i32>) -> tensor<i32> {
  %0 = stablehlo.while(%i = %a) : tensor<i32>
   cond {
    %t = stablehlo.constant dense<true> : tensor<i1>
    stablehlo.return %t : tensor<i1>
  } do {
    %z = stablehlo.constant dense<0> : tensor<i32>
    %k = func.call @spin(%i, %z) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %j = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %j : tensor<i32>
  }
  return %0 : tensor<i32>
}
func.func @spin(%i: tensor<i32>, %z: tensor<i32>) -> tensor<i32> {
  %0 = stablehlo.while(%j = %z) : tensor<i32>
   cond {
    %five = stablehlo.constant dense<5> : tensor<i32>
    %two = stablehlo.constant dense<2> : tensor<i32>
    %short = stablehlo.compare LT, %j, %five : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %late = stablehlo.compare GE, %i, %two : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %go = stablehlo.or %short, %late : tensor<i1>
    stablehlo.return %go : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %k = stablehlo.add %j, %one : tensor<i32>
    stablehlo.return %k : tensor<i32>
  }
  return %0 : tensor<i32>
}"""


def _iterations(message: str) -> dict[str, int]:
    """{loop location: iteration} as a time-limit message names them."""
    import re

    found = {m.group(1): int(m.group(2)) for m in re.finditer(
        r"inside 'stablehlo.while' at (\S+) \(iteration (\d+)\)", message)}
    own = re.search(r"'stablehlo.while' op: time limit of \S+ s reached in its iteration "
                    r"(\d+)", message)
    return found, own


def test_a_time_limit_names_the_loops_around_the_op_and_their_iterations():
    m = shlo.parse(NESTED, "nested.mlir")
    with pytest.raises(shlo.ExecutionError) as e:
        shlo.run(m, np.int32(0), time_limit=0.5)
    msg = str(e.value)
    assert "time limit of 0.5 s reached" in msg
    loops, own = _iterations(msg)
    # the outer loop (main, line 2) is in its iteration 2: the inner loop (@spin, line 16)
    # ended twice after 5 iterations, the third never ends
    assert loops["nested.mlir:2:3"] == 2
    inner = loops.get("nested.mlir:16:3")
    if inner is None:  # stopped between two iterations of the inner loop itself
        inner = int(own.group(1))
        assert e.value.diagnostics[0].location.file_line_col()[1:] == (16, 3)
    assert inner >= 5  # beyond where it ended before
    # innermost first
    if "nested.mlir:16:3" in loops:
        assert msg.index("nested.mlir:16:3") < msg.index("nested.mlir:2:3")


def test_a_time_limit_stops_every_process_of_a_grid():
    import threading
    import time

    text = 'module attributes {mhlo.num_replicas = 2 : i32} {\n' + FOREVER + "\n}"
    before = threading.active_count()
    t0 = time.monotonic()
    with pytest.raises(shlo.ExecutionError) as e:
        shlo.run(shlo.parse(text, "grid.mlir"), np.int32(0), time_limit=0.5)
    assert time.monotonic() - t0 < 20
    msg = str(e.value)
    assert "process (replica " in msg and "time limit of 0.5 s reached" in msg
    assert e.value.diagnostics[0].location.file_line_col()[0] == "grid.mlir"
    assert "iteration " in msg  # the endless loop, with its count
    for _ in range(100):  # the processes' threads have stopped
        if threading.active_count() <= before:
            break
        time.sleep(0.05)
    assert threading.active_count() <= before
    # the grid's prepared functions are still good for a run that ends in time
    done = text.replace("dense<true>", "dense<false>")
    assert [int(r[0]) for r in shlo.run(done, np.int32(7), time_limit=30)] == [7, 7]


DYNAMIC_IOTA = """func.func @main(%n: tensor<1xi64>) -> tensor<?xf32> {
  %0 = stablehlo.dynamic_iota %n, dim = 0 : (tensor<1xi64>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}"""

CONCAT = """func.func @main(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
  %0 = stablehlo.concatenate %a, %b, dim = 0 : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}"""


def test_dynamic_shapes_are_checked_against_the_limit_when_made():
    m = shlo.parse(DYNAMIC_IOTA, "dyn.mlir")
    (r,) = shlo.run(m, np.array([1024], np.int64), max_bytes=4096)
    assert r.shape == (1024,) and r[-1] == 1023
    with pytest.raises(shlo.ExecutionError) as e:  # refused before the iota is made
        shlo.run(m, np.array([1024], np.int64), max_bytes=4095)
    assert "'stablehlo.dynamic_iota' op: its result tensor<1024xf32> (tensor<?xf32> in the " \
           "program) needs 4096 B, more than the memory limit of 4095 B" in str(e.value)
    assert e.value.diagnostics[0].location.file_line_col() == ("dyn.mlir", 2, 3)
    with pytest.raises(shlo.ExecutionError, match=r"tensor<100000000000xf32> \(tensor<\?xf32> "
                                                  r"in the program\) needs 373 GB"):
        shlo.run(m, np.array([10 ** 11], np.int64))  # the default: physical memory
    # any op whose result type has a `?`: checked after it ran
    c = shlo.parse(CONCAT, "concat.mlir")
    half = np.ones(512, np.float32)
    (r,) = shlo.run(c, half, half, max_bytes=4096)
    assert r.shape == (1024,)
    with pytest.raises(shlo.ExecutionError) as e:
        shlo.run(c, half, np.ones(513, np.float32), max_bytes=4096)
    assert "'stablehlo.concatenate' op: its result tensor<1025xf32> (tensor<?xf32> in the " \
           "program) needs 4100 B, more than the memory limit of 4096 B" in str(e.value)
    assert e.value.diagnostics[0].location.file_line_col() == ("concat.mlir", 2, 3)
    # the same in a trace, and on each process of a grid
    from shlo.debug import trace

    t = trace(c, half, np.ones(513, np.float32), max_bytes=4096)
    assert "needs 4100 B" in str(t.error)
    with pytest.raises(shlo.ExecutionError, match=r"process \(replica 1, partition 0\): "
                                                  r"'stablehlo.concatenate' op: its result "
                                                  r"tensor<1025xf32>"):
        shlo.run(c, half, PerProcess([half, np.ones(513, np.float32)]), replicas=2,
                 max_bytes=4096)
