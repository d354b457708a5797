"""shlo.load / run / verify on every kind of input: Module, path (str, PathLike), text, bytes, and
JAX's Lowered, ir.Module and Exported (those skip without jax); and run-time errors of ops whose
location is only a name."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import numpy as np
import pytest

import shlo

TEXT = """func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<2xf32>
  return %0 : tensor<2xf32>
}
"""
X = np.array([1.5, -2.0], np.float32)


@pytest.fixture()
def path(tmp_path: pathlib.Path) -> pathlib.Path:
    p = tmp_path / "double.mlir"
    p.write_text(TEXT)
    return p


def test_module_text_and_paths(path: pathlib.Path) -> None:
    for program in (TEXT, shlo.parse(TEXT), path, str(path)):
        assert shlo.run(program, X)[0].tolist() == [3.0, -4.0]
        assert isinstance(shlo.verify(program), shlo.Module)
        assert isinstance(shlo.load(program), shlo.Module)
    assert shlo.load(str(path)).filename == str(path)  # diagnostics name the file


def test_a_str_that_names_no_file_and_is_no_program_is_a_clear_error() -> None:
    with pytest.raises(FileNotFoundError, match="no such file: 'missing.mlir'"):
        shlo.run("missing.mlir", X)


def test_bytes_are_bytecode() -> None:
    from shlo.bytecode import write_bytecode

    data = write_bytecode(shlo.parse(TEXT))
    assert shlo.run(data, X)[0].tolist() == [3.0, -4.0]


def test_other_objects_are_a_type_error() -> None:
    with pytest.raises(TypeError, match="cannot read a program from builtins.int"):
        shlo.run(42)


def test_importing_and_running_shlo_does_not_import_jax(path: pathlib.Path) -> None:
    code = ("import sys, numpy as np, shlo\n"
            f"shlo.run({str(path)!r}, np.ones(2, np.float32))\n"
            "assert 'jax' not in sys.modules and 'jaxlib' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_jax_objects() -> None:
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    from jax import export

    f = jax.jit(lambda x, w: jnp.tanh(x @ w))
    x = np.arange(6, dtype=np.float32).reshape(2, 3) / 6
    w = np.ones((3, 4), np.float32) / 3
    want = np.asarray(f(x, w))
    lowered = f.lower(x, w)
    exported = export.export(f)(x, w)
    for program in (lowered, lowered.compiler_ir("stablehlo"), exported,
                    exported.serialize()):
        (got,) = shlo.run(program, x, w)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
        shlo.verify(program)


def test_jax_objects_take_all_the_functions_arguments_even_those_jax_dropped() -> None:
    jax = pytest.importorskip("jax")
    from jax import export

    f = jax.jit(lambda a, unused, c: a * c)  # jax lowers @main(%a, %c): `unused` is dropped
    a, b, c = (np.float32(v) for v in (2, 5, 3))
    lowered = f.lower(a, b, c)
    assert shlo.load(lowered).function("main").regions[0].blocks[0].arguments.__len__() == 2
    for program in (lowered, export.export(f)(a, b, c)):
        (got,) = shlo.run(program, a, b, c)
        assert float(got) == 6.0
        (got,) = shlo.run(program, a, c)  # the module's own arguments work too
        assert float(got) == 6.0


NAME_ONLY = """module @m {
  func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
    %0 = stablehlo.custom_call @needs_a_handler(%arg0) : (tensor<2xf32>) -> tensor<2xf32> loc("lu")
    return %0 : tensor<2xf32>
  }
}
"""


def test_name_only_location_uses_the_enclosing_file_location_and_keeps_the_name() -> None:
    with pytest.raises(shlo.ExecutionError) as e:
        shlo.run(shlo.parse(NAME_ONLY, "m.mlir"), X)
    text = str(e.value)
    assert text.startswith("m.mlir:2:3: error: 'stablehlo.custom_call' op: unsupported target")
    assert "m.mlir:2:3: note: 'stablehlo.custom_call' is at loc(\"lu\")" in text
    assert e.value.location.name == "lu"  # NameLoc("lu", m.mlir:2:3)


def test_the_enclosing_op_not_a_preceding_one_gives_the_location_also_at_prepare_time() -> None:
    text = NAME_ONLY.replace(
        'func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {',
        'func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {\n'
        '    %w = "stablehlo.optimization_barrier"(%arg0) : (tensor<2xf32>) -> tensor<2xf32>'
        ' loc("outer"("m.mlir":7:9))')
    with pytest.raises(shlo.ExecutionError) as e:
        shlo.run(shlo.parse(text, "m.mlir"), X)
    assert str(e.value).startswith("m.mlir:2:3: error:")
    prep = ("func.func @main() -> tensor<2xf32> {\n"
            "  %0 = stablehlo.constant dense_resource<__elided__> : tensor<2xf32> loc(\"w\")\n"
            "  return %0 : tensor<2xf32>\n}\n")
    with pytest.raises(shlo.ExecutionError) as e:
        shlo.run(shlo.parse(prep, "p.mlir"))
    assert str(e.value).startswith("p.mlir:1:1: error: 'stablehlo.constant' op: ")
    assert e.value.location.name == "w"
