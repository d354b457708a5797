"""Progress on a terminal (shlo.progress): the live status of a long run names the op being
computed; nothing is drawn when not asked."""

import time

import numpy as np

import shlo
from shlo.progress import RunStatus, current_op

LOOP = """func.func @main(%n: tensor<i64>) -> tensor<i64> {
  %c0 = stablehlo.constant dense<0> : tensor<i64>
  %c1 = stablehlo.constant dense<1> : tensor<i64>
  %r:2 = stablehlo.while(%i = %c0, %s = %c0) : tensor<i64>, tensor<i64>
   cond {
    %t = stablehlo.compare LT, %i, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %t : tensor<i1>
  } do {
    %j = stablehlo.add %i, %c1 : tensor<i64>
    %t = stablehlo.add %s, %i : tensor<i64>
    stablehlo.return %j, %t : tensor<i64>, tensor<i64>
  }
  return %r#1 : tensor<i64>
}"""


def test_a_long_run_shows_the_op_it_is_computing(capsys):
    m = shlo.parse(LOOP, "loop.mlir")
    shlo.run(m, np.int64(3))  # prepared once
    t0 = time.monotonic()
    with RunStatus(delay=0.05, show=True):
        (r,) = shlo.run(m, np.int64(8_000_000))
    assert int(r) == 8_000_000 * 7_999_999 // 2
    err = capsys.readouterr().err
    if time.monotonic() - t0 > 0.7:  # long enough for one sample after the delay
        assert "shlo run:" in err and "'stablehlo." in err and "loop.mlir:" in err


def test_nothing_is_drawn_unless_shown(capsys):
    with RunStatus(delay=0.0, show=False):
        shlo.run(shlo.parse(LOOP), np.int64(10))
    assert capsys.readouterr().err == ""
    assert current_op() == ""  # no interpreter thread is running now
