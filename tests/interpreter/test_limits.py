"""Run limits (shlo.interpreter.limits): refused up front with the op and its location."""

import numpy as np
import pytest

import shlo
from shlo.cli import main
from shlo.interpreter.limits import MAX_PROCESSES, parse_bytes

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
    with pytest.raises(shlo.ExecutionError, match=r"time limit of 0.3 s reached while "
                                                  r"computing") as e:
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
