"""`shlo check`: splitting, check ops, failure reports, summary line."""

import numpy as np
import pytest

from shlo.ops.check import compare_close, ulp_distance
from shlo.syntax.split import split_cases
from shlo.testing.runner import main, run_file
from shlo.types import element_type

GOOD_AND_BAD = """\
func.func @good() {
  %a = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  check.expect_eq_const %a, dense<[1, 2]> : tensor<2xi32>
  func.return
}

// -----

func.func @bad() {
  %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  check.expect_almost_eq_const %a, dense<[1.0, 2.5]> : tensor<2xf32>
  func.return
}
"""


def test_split_keeps_line_numbers():
    cases = list(split_cases(GOOD_AND_BAD))
    assert [line for line, _ in cases] == [1, 8]
    assert cases[1][1].splitlines()[10].strip().startswith("check.expect_almost_eq_const")


def test_split_keeps_line_numbers_when_no_blank_line_follows_the_separator():
    text = "a\n// -----\nb\n// -----\n\nc\n// -----\nd\n"
    lines = text.split("\n")
    for _, chunk in split_cases(text):
        for i, line in enumerate(chunk.split("\n")):
            if line.strip():
                assert lines[i] == line


def test_check_reports_failure_with_location_and_summary(tmp_path, capsys):
    f = tmp_path / "t.mlir"
    f.write_text(GOOD_AND_BAD)
    results = run_file(str(f))
    assert [r.status for r in results] == ["passed", "failed"]
    assert main([str(f)], jobs=1) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "1 passed, 1 failed"
    assert any(f"{f}:11:" in line and "actual 2.0, expected 2.5" in line for line in out)


def test_parse_error_is_a_failed_case_not_a_crash(tmp_path, capsys):
    f = tmp_path / "bad.mlir"
    f.write_text("func.func @f() {\n  %a = stablehlo.constant dense<[1, 2> : tensor<2xi32>\n}\n")
    assert main([str(f)], jobs=1) == 1
    out = capsys.readouterr().out
    assert f"{f}:2:" in out and out.strip().endswith("0 passed, 1 failed")


def test_ulp_distance_rules():
    f32 = element_type("f32")
    one = np.float32(1.0)
    nxt = np.nextafter(one, np.float32(2))
    a = np.array([one, one, np.nan, np.inf, 0.0, -np.float32(1e-45)], np.float32)
    e = np.array([one, nxt, np.nan, 1.0, -0.0, np.float32(1e-45)], np.float32)
    d = ulp_distance(a, e, f32)
    assert d[0] == 0 and d[1] == 1 and d[2] == 0 and np.isinf(d[3]) and d[4] == 0 and d[5] == 2
    assert compare_close(a[:2], e[:2], f32, 0, 1).all()
    assert not compare_close(a[:2], e[:2], f32, 0, 0)[1]


@pytest.mark.parametrize("name,bits", [("bf16", 0x3F80), ("f16", 0x3C00), ("f8E4M3FN", 0x38),
                                       ("f64", 0x3FF0000000000000)])
def test_ulp_distance_one_step_in_each_width(name, bits):
    t = element_type(name)
    u = {1: np.uint8, 2: np.uint16, 8: np.uint64}[t.dtype.itemsize]
    a = np.array([bits, bits + 1, bits + 5], dtype=u).view(t.dtype)
    assert list(ulp_distance(a[:1].repeat(3), a, t)) == [0, 1, 5]


def test_progress_bar_only_when_asked(tmp_path, capsys):
    """`shlo check` draws a tqdm bar on a terminal (progress=True) and nothing otherwise."""
    from shlo.testing.runner import run_paths

    for i in range(3):
        (tmp_path / f"c{i}.mlir").write_text(
            "func.func @main() {\n  %0 = stablehlo.constant dense<1> : tensor<i32>\n"
            "  check.expect_eq_const %0, dense<1> : tensor<i32>\n  func.return\n}\n")
    assert [r.status for r in run_paths([str(tmp_path)], jobs=1)] == ["passed"] * 3
    assert capsys.readouterr().err == ""
    assert len(run_paths([str(tmp_path)], jobs=1, progress=True)) == 3
    err = capsys.readouterr().err
    assert "shlo check" in err and "3/3" in err and "3 cases, 0 failed" in err
