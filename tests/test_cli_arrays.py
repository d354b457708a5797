"""`shlo run`'s arrays in and out (shlo/interpreter/arrays.py): argument order from names,
narrow types in .npy files, IREE-style inline inputs, --out files and directories, per-process
results, --expected, and the errors for unusable files (issue 16)."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from shlo.cli import main

SUB = """\
func.func @main(%x: tensor<2xf32>, %w: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.subtract %x, %w : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
"""

BF16 = """\
func.func @main(%x: tensor<3xbf16>) -> tensor<3xbf16> {
  %0 = stablehlo.add %x, %x : tensor<3xbf16>
  func.return %0 : tensor<3xbf16>
}
"""

GRID = """\
module attributes {mhlo.num_replicas = 2 : i32, mhlo.num_partitions = 2 : i32} {
  func.func @main() -> tensor<ui32> {
    %r = stablehlo.replica_id : tensor<ui32>
    func.return %r : tensor<ui32>
  }
}
"""

F64 = """\
func.func @main(%x: tensor<2xf64>) -> tensor<2xf64> {
  func.return %x : tensor<2xf64>
}
"""


@pytest.fixture
def d(tmp_path: Path) -> Path:
    for name, text in [("sub.mlir", SUB), ("bf16.mlir", BF16), ("grid.mlir", GRID),
                       ("f64.mlir", F64)]:
        (tmp_path / name).write_text(text)
    np.save(tmp_path / "x.npy", np.array([10, 20], np.float32))
    np.save(tmp_path / "w.npy", np.array([1, 2], np.float32))
    return tmp_path


def cli(capsys, *args):
    rc = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return rc, out, err


SUB_OUT = "tensor<2xf32> {\n  [9.000000e+00, 1.800000e+01]\n}\n"


def test_npz_keys_follow_the_argument_names_not_their_alphabetical_order(d, capsys):
    # "w" sorts before "x": taken in key order this would compute w - x
    np.savez(d / "xw.npz", w=np.array([1, 2], np.float32), x=np.array([10, 20], np.float32))
    assert cli(capsys, "run", d / "sub.mlir", "--args", d / "xw.npz") == (0, SUB_OUT, "")


def test_npz_positional_keys_by_number(d, capsys):
    np.savez(d / "pos.npz", np.array([10, 20], np.float32), np.array([1, 2], np.float32))
    assert cli(capsys, "run", d / "sub.mlir", "--args", d / "pos.npz") == (0, SUB_OUT, "")


def test_npz_keys_that_name_no_argument_are_an_error_listing_the_arguments(d, capsys):
    np.savez(d / "bad.npz", a=np.zeros(2, np.float32), b=np.zeros(2, np.float32))
    rc, out, err = cli(capsys, "run", d / "sub.mlir", "--args", d / "bad.npz")
    assert (rc, out) == (1, "")
    assert "'a' names no argument of @main (its arguments: x, w)" in err


def test_name_equals_file_inputs(d, capsys):
    rc, out, err = cli(capsys, "run", d / "sub.mlir", f"w={d / 'w.npy'}", f"x={d / 'x.npy'}")
    assert (rc, out, err) == (0, SUB_OUT, "")


def test_inline_inputs_as_iree_writes_them(d, capsys):
    assert cli(capsys, "run", d / "sub.mlir", "--input", "2xf32=10,20", "--input",
               "2xf32=[1 2]") == (0, SUB_OUT, "")
    rc, _, err = cli(capsys, "run", d / "sub.mlir", "--input", "3xf32=1,2", "--input", "f32=1")
    assert rc == 1 and "2 values for shape 3 (3 elements)" in err


def test_bf16_npy_files_read_as_the_declared_type_and_results_written_as_bf16(d, capsys):
    x = np.array([1.5, -2, 3.25], ml_dtypes.bfloat16)
    np.save(d / "x_bf16.npy", x)  # numpy stores ml_dtypes arrays as raw |V2 bytes
    assert np.load(d / "x_bf16.npy").dtype.kind == "V"
    rc, out, err = cli(capsys, "run", d / "bf16.mlir", d / "x_bf16.npy")
    assert (rc, err) == (0, "") and "[3.000000e+00, -4.000000e+00, 6.500000e+00]" in out
    np.save(d / "x_bits.npy", x.view(np.uint16))  # the upstream probe layout (<u2 bits)
    rc, out2, _ = cli(capsys, "run", d / "bf16.mlir", d / "x_bits.npy")
    assert (rc, out2) == (0, out)
    rc, _, _ = cli(capsys, "run", d / "bf16.mlir", d / "x_bits.npy", "--out", d / "r.npz")
    with np.load(d / "r.npz") as z:
        assert z["result0"].view(ml_dtypes.bfloat16).tolist() == [3.0, -4.0, 6.5]


def test_out_to_a_directory_and_to_a_name_without_npz(d, capsys):
    assert cli(capsys, "run", d / "sub.mlir", d / "x.npy", d / "w.npy", "--out",
               str(d / "res") + "/") == (0, "", "")
    assert np.load(d / "res" / "result0.npy").tolist() == [9.0, 18.0]
    assert cli(capsys, "run", d / "sub.mlir", d / "x.npy", d / "w.npy", "--out",
               d / "plain") == (0, "", "")
    assert (d / "plain").exists() and not (d / "plain.npz").exists()
    with np.load(d / "plain") as z:
        assert z["result0"].tolist() == [9.0, 18.0]


def test_grid_results_print_and_save_per_process(d, capsys):
    rc, out, err = cli(capsys, "run", d / "grid.mlir")
    assert (rc, err) == (0, "")
    assert out.splitlines() == ["// process (0, 0)", "tensor<ui32> {0}",
                                "// process (0, 1)", "tensor<ui32> {0}",
                                "// process (1, 0)", "tensor<ui32> {1}",
                                "// process (1, 1)", "tensor<ui32> {1}"]
    assert cli(capsys, "run", d / "grid.mlir", "--out", d / "g.npz") == (0, "", "")
    with np.load(d / "g.npz") as z:
        assert sorted(z.files) == [f"process{p}.result0" for p in range(4)]
        assert [int(z[f"process{p}.result0"]) for p in range(4)] == [0, 0, 1, 1]


def test_expected_compares_and_exits_1_on_a_mismatch(d, capsys):
    np.savez(d / "good.npz", result0=np.array([9, 18], np.float32))
    np.savez(d / "bad.npz", result0=np.array([9, 19], np.float32))
    rc, out, err = cli(capsys, "run", d / "sub.mlir", d / "x.npy", d / "w.npy", "--expected",
                       d / "good.npz")
    assert (rc, out, err) == (0, SUB_OUT, "// result0: ok\n")
    rc, _, err = cli(capsys, "run", d / "sub.mlir", d / "x.npy", d / "w.npy", "--expected",
                     d / "bad.npz")
    assert rc == 1 and "result0: 1 of 2 elements differ (max |diff| 1 at [1]" in err
    rc, _, err = cli(capsys, "run", d / "sub.mlir", d / "x.npy", d / "w.npy", "--expected",
                     d / "bad.npz", "--atol", "1")
    assert rc == 0 and err == "// result0: ok\n"


@pytest.mark.parametrize("content, words", [
    (b"", "empty file"),
    (b"hello, not numpy\n", "not a .npy file"),
    (b"\x93NUMPY\x01\x00", "cannot read it as a .npy array"),
])
def test_unusable_npy_files_are_errors_not_internal_errors(d, capsys, content, words):
    (d / "junk.npy").write_bytes(content)
    rc, out, err = cli(capsys, "run", d / "sub.mlir", d / "junk.npy", d / "w.npy")
    assert (rc, out) == (1, "") and words in err and "internal" not in err


def test_corrupt_npz_and_a_single_npy_given_as_args(d, capsys):
    (d / "junk.npz").write_bytes(b"PK\x03\x04 broken")
    rc, _, err = cli(capsys, "run", d / "sub.mlir", "--args", d / "junk.npz")
    assert rc == 1 and "cannot read it as an .npz archive" in err and "internal" not in err
    rc, _, err = cli(capsys, "run", d / "sub.mlir", "--args", d / "x.npy")
    assert rc == 1 and "a single .npy array, not an .npz archive" in err


def test_f64_results_print_digits_that_read_back_exactly(d, capsys):
    np.save(d / "v.npy", np.array([0.1, 1 / 3]))
    rc, out, _ = cli(capsys, "run", d / "f64.mlir", d / "v.npy")
    assert rc == 0 and "[1.000000e-01, 3.333333333333333e-01]" in out
    assert float("3.333333333333333e-01") == 1 / 3


def test_check_refuses_zero_workers_and_reports_missing_files_on_stderr(d, capsys):
    rc, out, err = cli(capsys, "check", d / "nope.mlir")
    assert (rc, out) == (1, "") and "no such file or directory" in err
    rc, out, err = cli(capsys, "check", "-j", "0", d / "sub.mlir")
    assert (rc, out) == (1, "") and "at least 1" in err
