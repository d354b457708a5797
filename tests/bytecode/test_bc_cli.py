"""The commands: `shlo translate` (stablehlo-translate's flags), `shlo inspect`,
`shlo fmt --emit-bytecode [--target V]`, `shlo opt` with stablehlo-opt's flags, and `shlo run`
on bytecode. Errors are located messages with exit code 1, never tracebacks."""

import io

import numpy as np
import pytest

import shlo
from shlo.bytecode import is_bytecode, portable_artifact_version
from shlo.cli import main
from shlo.syntax.equivalence import first_difference

PROGRAM = """func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %a, %b : tensor<2xf32>
  %1 = stablehlo.multiply %0, %0 : tensor<2xf32>
  return %1 : tensor<2xf32>
}
"""


def _run(argv, stdin=b""):
    out, err = io.BytesIO(), io.StringIO()
    from shlo.opt import main as opt_main
    from shlo.translate import main as tmain

    if argv[0] == "opt":
        rc = opt_main(list(argv[1:]), io.BytesIO(stdin), out, err)
    else:
        rc = tmain(list(argv), io.BytesIO(stdin), out, err)
    return rc, out.getvalue(), err.getvalue()


@pytest.fixture
def prog(tmp_path):
    p = tmp_path / "p.mlir"
    p.write_text(PROGRAM)
    return p


def test_serialize_deserialize(prog, tmp_path):
    rc, data, err = _run(["translate", "--serialize", "--target=1.3.0", str(prog)])
    assert rc == 0, err
    assert is_bytecode(data) and str(portable_artifact_version(data)) == "1.3.0"
    rc, text, err = _run(["translate", "--deserialize", "-"], data)
    assert rc == 0, err
    assert first_difference(shlo.parse(PROGRAM), shlo.parse(text.decode())) is None


def test_serialize_current_and_output_file(prog, tmp_path):
    out = tmp_path / "p.mlirbc"
    rc, _, err = _run(["translate", "--serialize", "--target=current", str(prog), "-o", str(out)])
    assert rc == 0, err
    assert is_bytecode(out.read_bytes())


def test_print_stablehlo_version(prog):
    _, data, _ = _run(["translate", "--serialize", "--target=1.1.0", str(prog)])
    rc, text, _ = _run(["translate", "--deserialize", "--print-stablehlo-version", "-"], data)
    assert rc == 0 and b"// Reading portable artifact with StableHLO version: 1.1.0" in text
    rc, text, _ = _run(["translate", "--deserialize", "--print-stablehlo-version", str(prog)])
    assert b"Failed parsing StableHLO version" in text


def test_bad_target_is_an_error(prog, tmp_path):
    out = tmp_path / "never.bc"
    rc, _, err = _run(["translate", "--serialize", "--target=0.1", str(prog), "-o", str(out)])
    assert rc == 1 and "Invalid target version" in err and "Traceback" not in err
    assert not out.exists()


def test_interpret_with_args(prog):
    rc, out, err = _run(["translate", "--interpret", str(prog),
                         "--args=[dense<[1.0, 2.0]> : tensor<2xf32>, "
                         "dense<[3.0, 4.0]> : tensor<2xf32>]"])
    assert rc == 0, err
    assert b"1.600000e+01" in out and b"3.600000e+01" in out


def test_interpret_bytecode(prog):
    _, data, _ = _run(["translate", "--serialize", "--target=1.0.0", str(prog)])
    rc, out, err = _run(["translate", "--interpret", "-",
                         "--args=[dense<1.0> : tensor<2xf32>, dense<1.0> : tensor<2xf32>]"], data)
    assert rc == 0, err
    assert b"4.000000e+00" in out


def test_strip_debuginfo_and_allow_other(tmp_path):
    p = tmp_path / "c.mlir"
    p.write_text('func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n'
                 '  %0 = chlo.erf %a : tensor<2xf32> -> tensor<2xf32> loc("x.py":3:4)\n'
                 '  return %0 : tensor<2xf32>\n}\n')
    rc, _, err = _run(["translate", "--serialize", "--target=current", str(p)])
    assert rc == 1 and "chlo.erf" in err
    rc, data, err = _run(["translate", "--serialize", "--target=current", "--allow-other-dialects",
                          "--strip-debuginfo", str(p)])
    assert rc == 0, err
    assert b"x.py" not in data


def test_inspect(prog):
    _, data, _ = _run(["translate", "--serialize", "--target=1.2.0", str(prog)])
    rc, out, err = _run(["inspect", "-"], data)
    text = out.decode()
    assert rc == 0, err
    assert "StableHLO version: 1.2.0" in text and "vhlo.add_v1: 1" in text
    assert "smallest target version: 0.9.0" in text


def test_fmt_emit_bytecode(prog, tmp_path, capsysbinary):
    out = tmp_path / "f.bc"
    assert main(["fmt", "--emit-bytecode", "--target", "1.4.0", str(prog), "-o", str(out)]) == 0
    assert str(portable_artifact_version(out.read_bytes())) == "1.4.0"
    plain = tmp_path / "plain.bc"
    assert main(["fmt", "--emit-bytecode", str(prog), "-o", str(plain)]) == 0
    data = plain.read_bytes()
    assert is_bytecode(data) and portable_artifact_version(data) is None
    assert first_difference(shlo.parse(PROGRAM), shlo.parse(data)) is None


def test_opt_upstream_flags(prog):
    rc, out, err = _run(["opt", "--stablehlo-legalize-to-vhlo", "--mlir-print-op-generic",
                         str(prog)])
    assert rc == 0, err
    assert b'"vhlo.add_v1"' in out
    rc, bc, err = _run(["opt", "--stablehlo-legalize-to-vhlo", "--vhlo-to-version=target=1.0.0",
                        "-emit-bytecode", str(prog)])
    assert rc == 0 and is_bytecode(bc), err
    rc, out, err = _run(["opt", "--vhlo-legalize-to-stablehlo"], bc)
    assert rc == 0, err
    assert first_difference(shlo.parse(PROGRAM), shlo.parse(out.decode())) is None
    rc, out, err = _run(["opt", "--pass-pipeline=builtin.module(stablehlo-deserialize)"],
                        _run(["translate", "--serialize", "--target=current", str(prog)])[1])
    assert rc == 0 and b"stablehlo.add" in out, err


def test_opt_unknown_flag_is_reported(prog):
    rc, _, err = _run(["opt", "--no-such-pass", str(prog)])
    assert rc != 0 and "no-such-pass" in err and "Traceback" not in err


def test_run_bytecode(prog, tmp_path, capsys):
    _, data, _ = _run(["translate", "--serialize", "--target=1.0.0", str(prog)])
    bc = tmp_path / "p.bc"
    bc.write_bytes(data)
    x = tmp_path / "x.npy"
    np.save(x, np.array([1.0, 2.0], np.float32))
    assert main(["run", str(bc), str(x), str(x)]) == 0
    assert "1.600000e+01" in capsys.readouterr().out


def test_verify_diagnostics_on_deserialize(tmp_path):
    """`not stablehlo-translate --deserialize X.bc --verify-diagnostics`: the errors of an
    artifact are printed and the command fails."""
    p = tmp_path / "bad.bc"
    p.write_bytes(b"ML\xefR\x06garbage")
    rc, _, err = _run(["translate", "--deserialize", str(p), "--verify-diagnostics"])
    assert rc == 1 and "error" in err and "Traceback" not in err
