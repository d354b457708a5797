"""The `shlo` command (shlo/cli.py): `run | check | verify | fmt | opt`, in process through
``shlo.cli.main([...])`` and as a program (``python -m shlo ...`` in a subprocess).

What is checked: exit codes (0 success, 1 bad input or failed checks, 2 usage errors and
internal errors), which stream gets what (results and summaries on stdout, diagnostics on
stderr), the error format ``file:line:col: error: ...`` with no traceback, ``run``'s ``--out``
npz and ``--args``, ``verify``'s ``--split-input-file``, ``--verify-diagnostics`` and
``--strict-messages``, ``fmt`` and ``opt --list`` / ``--pass``. Behaviours found broken are
strict xfails naming what is wrong (issue 16 hardens the CLI).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from shlo.cli import main

ROOT = Path(__file__).resolve().parent.parent

ADD = """\
func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %a, %b : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
"""

BAD = """\
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<3xf32>
  func.return %a : tensor<2xf32>
}
"""

SYNTAX = """\
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %a, : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
"""

ANNOTATED = """\
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  func.return %a : tensor<2xf32>
}

// -----

func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{requires the same shape}}
  %0 = stablehlo.add %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<3xf32>
  func.return %a : tensor<2xf32>
}
"""

CHECKS = """\
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

GRID = """\
module attributes {mhlo.num_replicas = 2 : i32} {
  func.func @main() -> tensor<ui32> {
    %r = stablehlo.replica_id : tensor<ui32>
    func.return %r : tensor<ui32>
  }
}
"""

PRINTED_SUM = "tensor<2xf32> {\n  [4.000000e+00, 6.000000e+00]\n}\n"


@pytest.fixture
def files(tmp_path: Path) -> Path:
    """A folder with the programs above and numpy inputs: a.npy = [1, 2], b.npy = [3, 4],
    ab.npz = {arg0: [1, 2], arg1: [10, 20]}."""
    for name, text in [("add.mlir", ADD), ("bad.mlir", BAD), ("syntax.mlir", SYNTAX),
                       ("annotated.mlir", ANNOTATED), ("checks.mlir", CHECKS),
                       ("grid.mlir", GRID)]:
        (tmp_path / name).write_text(text)
    np.save(tmp_path / "a.npy", np.array([1, 2], np.float32))
    np.save(tmp_path / "b.npy", np.array([3, 4], np.float32))
    np.savez(tmp_path / "ab.npz", arg0=np.array([1, 2], np.float32),
             arg1=np.array([10, 20], np.float32))
    return tmp_path


def cli(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    """``shlo.cli.main`` on ``args``: (exit code, stdout, stderr)."""
    rc = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return rc, out, err


def shlo(cwd: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m shlo ARGS`` in a fresh interpreter running this checkout."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("SHLO_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "shlo", *args], cwd=cwd, env=env,
                          input=stdin, capture_output=True, text=True, timeout=300)


# --- run -------------------------------------------------------------------------------------


def test_run_prints_results_on_stdout(files, capsys):
    rc, out, err = cli(capsys, "run", files / "add.mlir", files / "a.npy", files / "b.npy")
    assert (rc, out, err) == (0, PRINTED_SUM, "")


def test_run_args_npz_in_name_order(files, capsys):
    np.savez(files / "many.npz", **{f"arg{i}": np.float32(i) for i in range(11)})
    (files / "many.mlir").write_text(
        "func.func @main(" + ", ".join(f"%a{i}: tensor<f32>" for i in range(11)) +
        ") -> tensor<f32> {\n  func.return %a10 : tensor<f32>\n}\n")
    rc, out, err = cli(capsys, "run", files / "add.mlir", "--args", files / "ab.npz")
    assert (rc, err) == (0, "") and out == "tensor<2xf32> {\n  [1.100000e+01, 2.200000e+01]\n}\n"
    # arg10 comes after arg9 (natural order), not after arg1
    rc, out, _ = cli(capsys, "run", files / "many.mlir", "--args", files / "many.npz")
    assert rc == 0 and out == "tensor<f32> {1.000000e+01}\n"


def test_run_out_saves_an_npz_and_prints_nothing(files, capsys):
    rc, out, err = cli(capsys, "run", files / "add.mlir", files / "a.npy", files / "b.npy",
                       "--out", files / "r.npz")
    assert (rc, out, err) == (0, "", "")
    with np.load(files / "r.npz") as z:
        assert z.files == ["result0"]
        assert z["result0"].dtype == np.float32 and z["result0"].tolist() == [4.0, 6.0]


def test_run_verifies_unless_told_not_to(files, capsys):
    rc, out, err = cli(capsys, "run", files / "bad.mlir", files / "a.npy")
    assert rc == 1 and out == ""
    assert err.startswith(f"{files / 'bad.mlir'}:2:3: error: 'stablehlo.add' op (C1) ")
    rc, out, err = cli(capsys, "run", files / "bad.mlir", files / "a.npy", "--no-verify")
    assert (rc, err) == (0, "") and out == "tensor<2xf32> {\n  [1.000000e+00, 2.000000e+00]\n}\n"


def test_run_bad_input_exits_1_with_a_located_error(files, capsys):
    rc, out, err = cli(capsys, "run", files / "syntax.mlir", files / "a.npy")
    assert (rc, out) == (1, "")
    assert err == f"{files / 'syntax.mlir'}:2:26: error: custom op 'stablehlo.add' expected SSA " \
                  "operand but found ':'\n"
    rc, out, err = cli(capsys, "run", files / "add.mlir", files / "a.npy")
    assert (rc, out) == (1, "") and err == "error: @main takes 2 argument(s) (tensor<2xf32>, " \
                                           "tensor<2xf32>); got 1\n"
    rc, _, err = cli(capsys, "run", files / "add.mlir", files / "a.npy", files / "b.npy",
                     "--entry", "nope")
    assert rc == 1 and err == "error: no function @nope in the module\n"
    rc, _, err = cli(capsys, "run", files / "missing.mlir")
    assert rc == 1 and err.startswith("error: [Errno 2] No such file or directory")
    assert "Traceback" not in err


def test_run_grid_prints_each_process(files, capsys):
    rc, out, err = cli(capsys, "run", files / "grid.mlir", "--replicas", "2")
    assert (rc, err) == (0, "")
    assert out == "// process (0, 0)\ntensor<ui32> {0}\n// process (1, 0)\ntensor<ui32> {1}\n"


def test_run_grid_declared_by_the_module_prints_each_process(files, capsys):
    rc, out, err = cli(capsys, "run", files / "grid.mlir")
    assert (rc, err) == (0, "")
    assert out == "// process (0, 0)\ntensor<ui32> {0}\n// process (1, 0)\ntensor<ui32> {1}\n"


# --- verify ----------------------------------------------------------------------------------


def test_verify_valid_program_is_silent(files, capsys):
    assert cli(capsys, "verify", files / "add.mlir") == (0, "", "")


def test_verify_reports_every_violation_on_stderr(files, capsys):
    rc, out, err = cli(capsys, "verify", files / "bad.mlir")
    assert (rc, out) == (1, "")
    lines = err.splitlines()
    assert lines[0] == (f"{files / 'bad.mlir'}:2:3: error: 'stablehlo.add' op (C1) requires the "
                        "same shape for all operands and results: [2], [2], [3]")
    assert all(line.startswith(f"{files / 'bad.mlir'}:") and ": error: " in line
               for line in lines)
    rc, out, err = cli(capsys, "verify", files / "syntax.mlir")
    assert (rc, out) == (1, "") and err.startswith(f"{files / 'syntax.mlir'}:2:26: error: ")


def test_verify_split_input_file_counts_chunks(files, capsys):
    rc, out, err = cli(capsys, "verify", files / "annotated.mlir", "--split-input-file")
    assert (rc, out) == (1, "1 passed, 1 failed\n")
    # line numbers are the file's, not the chunk's
    assert err.startswith(f"{files / 'annotated.mlir'}:9:3: error: 'stablehlo.add' op (C1)")


def test_verify_diagnostics(files, capsys):
    rc, out, err = cli(capsys, "verify", files / "annotated.mlir", "--split-input-file",
                       "--verify-diagnostics")
    assert (rc, out, err) == (0, "2 passed, 0 failed\n", "")
    rc, out, err = cli(capsys, "verify", files / "annotated.mlir", "--split-input-file",
                       "--verify-diagnostics", "--strict-messages")
    assert (rc, out, err) == (0, "2 passed, 0 failed\n", "")
    # without splitting, the two @main collide: an unexpected error, reported on stdout
    rc, out, err = cli(capsys, "verify", files / "annotated.mlir", "--verify-diagnostics")
    assert (rc, out) == (1, "0 passed, 1 failed\n")
    assert err == (f"{files / 'annotated.mlir'}:7:1: error: unexpected error: 'func.func' op "
                   "redefinition of symbol named 'main'\n")


def test_verify_diagnostics_strict_messages(files, capsys):
    wrong = ANNOTATED.replace("requires the same shape", "something else")
    (files / "wrong.mlir").write_text(wrong)
    args = ["verify", files / "wrong.mlir", "--split-input-file", "--verify-diagnostics"]
    assert cli(capsys, *args, "--loose-messages") == (0, "2 passed, 0 failed\n", "")
    for strict in ([], ["--strict-messages"]):  # checking the text is the default
        rc, out, err = cli(capsys, *args, *strict)
        assert (rc, out) == (1, "1 passed, 1 failed\n")
    lines = err.splitlines()
    assert lines[0].startswith(f"{files / 'wrong.mlir'}:9:3: error: unexpected error: "
                               "'stablehlo.add' op (C1) requires the same shape")
    assert f"{files / 'wrong.mlir'}:9: error: expected error \"something else\" was not " \
           "produced" in lines


# --- check -----------------------------------------------------------------------------------


def test_check_prints_failures_and_a_summary(files, capsys):
    rc, out, err = cli(capsys, "check", files / "checks.mlir", "-q", "-j", "1")
    assert (rc, out) == (1, "1 passed, 1 failed\n")  # the failures on stderr, as every error
    assert err.startswith(f"{files / 'checks.mlir'}:11:3: expect_almost_eq_const")
    (files / "good.mlir").write_text(CHECKS.split("// -----")[0])
    assert cli(capsys, "check", files / "good.mlir", "-q") == (0, "1 passed, 0 failed\n", "")


# --- fmt -------------------------------------------------------------------------------------


def test_fmt_pretty_generic_and_output_file(files, capsys):
    rc, out, err = cli(capsys, "fmt", files / "add.mlir")
    assert (rc, err) == (0, "")
    assert out == ("module {\n"
                   "  func.func @main(%arg0: tensor<2xf32>, %arg1: tensor<2xf32>) -> "
                   "tensor<2xf32> {\n"
                   "    %0 = stablehlo.add %arg0, %arg1 : tensor<2xf32>\n"
                   "    return %0 : tensor<2xf32>\n"
                   "  }\n"
                   "}\n")
    rc, generic, _ = cli(capsys, "fmt", files / "add.mlir", "--generic")
    assert rc == 0 and generic.startswith('"builtin.module"() ({\n')
    assert '%0 = "stablehlo.add"(%arg0, %arg1) : (tensor<2xf32>, tensor<2xf32>) -> ' \
           'tensor<2xf32>' in generic
    assert cli(capsys, "fmt", files / "add.mlir", "-o", files / "f.mlir") == (0, "", "")
    assert (files / "f.mlir").read_text() == out
    rc, out, err = cli(capsys, "fmt", files / "syntax.mlir")
    assert (rc, out) == (1, "") and err.startswith(f"{files / 'syntax.mlir'}:2:26: error: ")


# --- opt -------------------------------------------------------------------------------------


def test_opt_list_names_every_pass(capsys):
    from shlo.passes import PASSES

    rc, out, err = cli(capsys, "opt", "--list")
    assert (rc, err) == (0, "")
    names = [line.split(":")[0].removesuffix(" (no-op)") for line in out.splitlines()
             if not line.startswith(" ")]
    assert names == sorted(PASSES)
    assert "canonicalize" in names and "stablehlo-legalize-quant-to-math" in names


def test_opt_runs_pipelines_and_rejects_unknown_passes(files, capsys):
    rc, out, err = cli(capsys, "opt", files / "add.mlir", "--pass", "canonicalize")
    assert (rc, err) == (0, "") and "stablehlo.add %arg0, %arg1 : tensor<2xf32>" in out
    rc, out, err = cli(capsys, "opt", files / "add.mlir", "--pass", "no-such-pass")
    assert (rc, out) == (1, "") and err.startswith("error: unknown pass 'no-such-pass' (known: ")
    # no file: stdin, as stablehlo-opt reads it
    proc = shlo(files, "opt", stdin=(files / "add.mlir").read_text())
    assert (proc.returncode, proc.stderr) == (0, "")
    assert "stablehlo.add %arg0, %arg1 : tensor<2xf32>" in proc.stdout


# --- usage errors ----------------------------------------------------------------------------


@pytest.mark.parametrize("args", [[], ["bogus"], ["run"]])
def test_usage_errors_exit_2(capsys, args):
    with pytest.raises(SystemExit) as e:
        main(args)
    assert e.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("usage: shlo")


# --- as a program ----------------------------------------------------------------------------


def test_program_help_and_usage_error(tmp_path):
    p = shlo(tmp_path, "--help")
    assert p.returncode == 0 and p.stderr == ""
    assert p.stdout.startswith("usage: shlo [-h] [--version]\n"
                               "            {run,check,verify,fmt,opt,diff,graph,translate,inspect}"
                               " ...")
    p = shlo(tmp_path, "bogus")
    assert p.returncode == 2 and p.stdout == "" and "invalid choice: 'bogus'" in p.stderr


def test_program_help_imports_nothing_heavy(tmp_path):
    """`import shlo` and `shlo --help` load neither numpy nor the opset (issue 17: fast start)."""
    code = ("import sys, runpy\n"
            "sys.argv = ['shlo', '--help']\n"
            "try:\n"
            "    runpy.run_module('shlo', run_name='__main__')\n"
            "except SystemExit:\n"
            "    pass\n"
            "heavy = sorted(m for m in ('numpy', 'ml_dtypes', 'scipy', 'shlo.ops', 'shlo.ir')\n"
            "               if m in sys.modules)\n"
            "print('HEAVY', heavy)\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[-1] == "HEAVY []"


def test_program_fmt_verify_and_stdin(files):
    p = shlo(files, "fmt", "add.mlir")
    assert (p.returncode, p.stderr) == (0, "") and "stablehlo.add %arg0, %arg1" in p.stdout
    p = shlo(files, "verify", "bad.mlir")
    assert (p.returncode, p.stdout) == (1, "")
    assert p.stderr.startswith("bad.mlir:2:3: error: 'stablehlo.add' op (C1) ")
    assert "Traceback" not in p.stderr
    p = shlo(files, "verify", "-", stdin=BAD)
    assert p.returncode == 1 and p.stderr.startswith("<stdin>:2:3: error: ")
    p = shlo(files, "fmt", "-", stdin=ADD)
    assert p.returncode == 0 and "stablehlo.add %arg0, %arg1" in p.stdout



def test_program_check(files):
    p = shlo(files, "check", "checks.mlir", "-q")
    assert p.returncode == 1 and p.stdout.splitlines()[-1] == "1 passed, 1 failed"


def test_program_run(files):
    p = shlo(files, "run", "add.mlir", "a.npy", "b.npy")
    assert (p.returncode, p.stdout, p.stderr) == (0, PRINTED_SUM, "")


def test_program_run_out_and_errors(files):
    p = shlo(files, "run", "add.mlir", "--args", "ab.npz", "--out", "r.npz")
    assert (p.returncode, p.stdout, p.stderr) == (0, "", "")
    with np.load(files / "r.npz") as z:
        assert z["result0"].tolist() == [11.0, 22.0]
    p = shlo(files, "run", "bad.mlir", "a.npy")
    assert p.returncode == 1 and p.stderr.startswith("bad.mlir:2:3: error: ")


def test_program_verify_diagnostics_on_stdin(files):
    p = shlo(files, "verify", "-", "--verify-diagnostics", stdin=BAD)
    assert p.returncode == 1 and p.stderr.startswith("<stdin>:2:3: error: unexpected error: ")


def test_version(tmp_path):
    from shlo import __version__

    p = shlo(tmp_path, "--version")
    assert (p.returncode, p.stdout, p.stderr) == (0, f"shlo {__version__}\n", "")


def test_fmt_keeps_locations_with_mlir_print_debuginfo(tmp_path, capsys):
    """`shlo fmt --mlir-print-debuginfo` prints every op's location (aliases, or in place with
    --mlir-print-local-scope); what it prints parses back with the same locations."""
    import shlo

    src = tmp_path / "p.mlir"
    src.write_text('func.func @main(%a: tensor<f32>) -> tensor<f32> {\n'
                   '  %0 = stablehlo.abs %a : tensor<f32> loc("lu")\n'
                   '  %1 = stablehlo.negate %0 : tensor<f32>\n'
                   '  return %1 : tensor<f32>\n}\n')
    locs = [str(op.location) for op in shlo.load(str(src)).walk()]
    for extra in ([], ["--mlir-print-local-scope"]):
        assert main(["fmt", str(src), "--mlir-print-debuginfo", *extra]) == 0
        out = capsys.readouterr().out
        assert ("#loc" in out) == (not extra)
        assert f'{src}":3:' in out and '"lu"' in out
        again = [str(op.location) for op in shlo.parse(out).walk()]
        assert again[2:] == locs[2:]  # the ops' (the module's and func's differ: where printed)
    assert main(["fmt", str(src)]) == 0
    assert "loc(" not in capsys.readouterr().out
