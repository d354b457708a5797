"""custom_call handlers: the read-only view, the registration API (decorator, per-run dict,
--custom-calls, the shlo.custom_calls entry-point group) and the non-LAPACK built-in targets
(shape_assertion, host callbacks, mhlo.erf). docs/custom_calls.md."""

from __future__ import annotations

import importlib.metadata
import sys
import textwrap
import warnings
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pytest

import shlo
from shlo import cli
from shlo.errors import ExecutionError
from shlo.ops import custom_call as cc

TRSM_LIKE = """
func.func @main(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %0 = stablehlo.custom_call @my_op(%a, %b) {backend_config = "", mhlo.backend_config = {uplo = 76 : ui8, scale = 2.5 : f32, name = "x", flag}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>]} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %1 = stablehlo.custom_call @my_op(%a, %b) {backend_config = "", mhlo.backend_config = {uplo = 85 : ui8, scale = 2.5 : f32, name = "x", flag}} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0, %1 : tensor<2x2xf32>, tensor<2x2xf32>
}
"""


@pytest.fixture
def registry() -> Iterator[None]:
    """Run a test with the user registrations it makes forgotten afterwards."""
    saved = dict(cc._USER)
    yield
    cc._USER.clear()
    cc._USER.update(saved)


A = np.array([[1, 2], [3, 4]], np.float32)
B = np.array([[5, 6], [7, 8]], np.float32)


def test_a_handler_sees_attributes_backend_config_types_layouts_and_aliases(registry: None) -> None:
    seen: list[Any] = []

    @shlo.custom_call_target("my_op")
    def my_op(call: shlo.CustomCall, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        seen.append(call)
        lower = chr(call.backend_config["uplo"]) == "L"
        return (np.tril(a) if lower else np.triu(a)) * call.backend_config["scale"] + b

    lo, up = shlo.run(TRSM_LIKE, A, B)
    np.testing.assert_array_equal(lo, np.tril(A) * 2.5 + B)
    np.testing.assert_array_equal(up, np.triu(A) * 2.5 + B)
    call = seen[0]
    assert call.call_target_name == "my_op"
    assert dict(call.backend_config) == {"uplo": 76, "scale": 2.5, "name": "x", "flag": True}
    assert call.api_version == 4  # a mhlo.backend_config dictionary is the typed FFI
    assert call.frontend_attributes == {"num_batch_dims": "0"}
    assert call.operand_layouts == ((0, 1), (0, 1)) and call.result_layouts == ((0, 1),)
    assert call.output_operand_aliases == (((), 1, ()),)
    assert [t.shape for t in call.operand_types] == [(2, 2), (2, 2)]
    assert call.result_types[0].dtype == np.float32
    assert call.attributes["backend_config"] == ""
    assert call.has_side_effect is False
    assert seen[1].operand_layouts is None and seen[1].output_operand_aliases == ()
    with pytest.raises(AttributeError):
        call.call_target_name = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        call.backend_config["uplo"] = 85  # type: ignore[index]


def test_the_view_is_built_once_per_op() -> None:
    views: list[Any] = []

    @shlo.custom_call_target()
    def fn(call: Any, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        views.append(call)
        return a

    module = shlo.parse(TRSM_LIKE)
    for _ in range(3):
        shlo.run(module, A, B, custom_calls={"my_op": fn})
    assert len(views) == 6 and len({id(v) for v in views}) == 2


def test_string_backend_config_and_api_version() -> None:
    text = """
    func.func @main(%x: tensor<3xi32>) -> tensor<3xi32> {
      %0 = stablehlo.custom_call @f(%x) {backend_config = "opaque bytes", api_version = 2 : i32, has_side_effect = true} : (tensor<3xi32>) -> tensor<3xi32>
      return %0 : tensor<3xi32>
    }"""
    seen = {}

    @shlo.custom_call_target()
    def f(call: Any, x: np.ndarray) -> np.ndarray:
        seen.update(cfg=call.backend_config, api=call.api_version, fx=call.has_side_effect)
        return x + 1

    (r,) = shlo.run(text, np.arange(3, dtype=np.int32), custom_calls={"f": f})
    assert r.tolist() == [1, 2, 3]
    assert seen == {"cfg": "opaque bytes", "api": 2, "fx": True}


def test_the_simple_form_still_takes_operands_only() -> None:
    lo, up = shlo.run(TRSM_LIKE, A, B, custom_calls={"my_op": lambda a, b: a - b})
    np.testing.assert_array_equal(lo, A - B)
    assert lo.dtype == np.float32


def test_a_run_dict_overrides_a_registration_which_overrides_a_builtin(registry: None) -> None:
    text = """
    func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
      %0 = stablehlo.custom_call @mhlo.erf(%x) : (tensor<2xf32>) -> tensor<2xf32>
      return %0 : tensor<2xf32>
    }"""
    x = np.array([0.5, -1.0], np.float32)
    import scipy.special as sc

    np.testing.assert_array_equal(shlo.run(text, x)[0], sc.erf(x.astype(np.float64)).astype(np.float32))
    shlo.custom_call_target("mhlo.erf")(lambda call, v: v * 0)
    assert shlo.run(text, x)[0].tolist() == [0, 0]
    assert shlo.run(text, x, custom_calls={"mhlo.erf": lambda v: v + 1})[0].tolist() == [1.5, 0]
    cc.unregister_custom_call_target("mhlo.erf")
    assert shlo.run(text, x)[0][0] == pytest.approx(0.5204999)


def test_called_computations_are_callables() -> None:
    text = """
    func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
      %0 = stablehlo.custom_call @apply_twice(%x) {called_computations = [@double]} : (tensor<2xf32>) -> tensor<2xf32>
      return %0 : tensor<2xf32>
    }
    func.func private @double(%x: tensor<2xf32>) -> tensor<2xf32> {
      %0 = stablehlo.add %x, %x : tensor<2xf32>
      return %0 : tensor<2xf32>
    }"""

    @shlo.custom_call_target()
    def twice(call: Any, x: np.ndarray) -> np.ndarray:
        (f,) = call.called_computations
        assert call.called_computation_names == ("double",)
        return f(f(x)[0])[0]

    assert shlo.run(text, np.array([1, 2], np.float32), custom_calls={"apply_twice": twice}
                    )[0].tolist() == [4, 8]


def test_wrong_results_are_located_errors() -> None:
    with pytest.raises(ExecutionError, match=r"<string>:3:3.*my_op: result #0 has shape \(3,\)"):
        shlo.run(TRSM_LIKE, A, B, custom_calls={"my_op": lambda a, b: np.zeros(3)})
    with pytest.raises(ExecutionError, match="returned 2 values, the op has 1 results"):
        shlo.run(TRSM_LIKE, A, B, custom_calls={"my_op": lambda a, b: (a, b)})


def test_an_unknown_target_says_how_to_register_one() -> None:
    with pytest.raises(ExecutionError) as e:
        shlo.run(TRSM_LIKE, A, B)
    msg = str(e.value)
    assert "<string>:3:3" in msg and "unsupported target @my_op" in msg
    assert "custom_calls=" in msg and "custom_call_target" in msg and "--custom-calls" in msg


def test_call_error_is_located_at_the_op(registry: None) -> None:
    @shlo.custom_call_target("my_op")
    def bad(call: Any, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        raise call.error("operand 0 must be triangular")

    with pytest.raises(ExecutionError, match=r"<string>:3:3: .*@my_op: operand 0 must be"):
        shlo.run(TRSM_LIKE, A, B)


# --- registering from the command line and from plugins -------------------------------------------


def test_cli_custom_calls_flag_registers_a_module(tmp_path: Path, registry: None,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "prog.mlir").write_text(TRSM_LIKE)
    np.save(tmp_path / "a.npy", A)
    np.save(tmp_path / "b.npy", B)
    (tmp_path / "my_targets.py").write_text(textwrap.dedent("""
        import numpy as np
        import shlo

        @shlo.custom_call_target("my_op")
        def my_op(call, a, b):
            return a * 10 if chr(call.backend_config["uplo"]) == "L" else b
    """))
    out = tmp_path / "out.npz"
    rc = cli.main(["run", str(tmp_path / "prog.mlir"), str(tmp_path / "a.npy"),
                   str(tmp_path / "b.npy"), "--custom-calls", str(tmp_path / "my_targets.py"),
                   "--out", str(out)])
    assert rc == 0
    res = np.load(out)
    np.testing.assert_array_equal(res["result0"], A * 10)
    np.testing.assert_array_equal(res["result1"], B)


def test_cli_custom_calls_reports_a_missing_or_broken_module(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]
                                                             ) -> None:
    (tmp_path / "prog.mlir").write_text(TRSM_LIKE)
    assert cli.main(["run", str(tmp_path / "prog.mlir"), "--custom-calls",
                     str(tmp_path / "nope.py")]) == 1
    assert "no such file" in capsys.readouterr().err
    (tmp_path / "broken.py").write_text("raise RuntimeError('boom')\n")
    assert cli.main(["run", str(tmp_path / "prog.mlir"), "--custom-calls",
                     str(tmp_path / "broken.py")]) == 1
    assert "importing" in capsys.readouterr().err


class _FakeEntryPoint:
    def __init__(self, name: str, value: str, obj: Any) -> None:
        self.name, self.value, self._obj = name, value, obj

    def load(self) -> Any:
        if isinstance(self._obj, Exception):
            raise self._obj
        return self._obj


def test_entry_point_plugins_are_found_without_flags(monkeypatch: pytest.MonkeyPatch,
                                                     registry: None, tmp_path: Path) -> None:
    (tmp_path / "fake_shlo_plugin.py").write_text(textwrap.dedent("""
        import shlo

        @shlo.custom_call_target("my_op")
        def my_op(call, a, b):
            return a + b + 100
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    asked = []

    def entry_points(group: str) -> list[_FakeEntryPoint]:
        asked.append(group)
        import fake_shlo_plugin

        return [_FakeEntryPoint("fake", "fake_shlo_plugin", fake_shlo_plugin),
                _FakeEntryPoint("broken", "nowhere:x", ImportError("no module nowhere"))]

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    monkeypatch.setattr(cc, "_plugins_loaded", False)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        lo, _ = shlo.run(TRSM_LIKE, A, B)
    np.testing.assert_array_equal(lo, A + B + 100)
    assert asked == [cc.ENTRY_POINT_GROUP]
    assert any("plugin broken" in str(x.message) for x in w)
    shlo.run(TRSM_LIKE, A, B)
    assert asked == [cc.ENTRY_POINT_GROUP]  # once per process
    sys.modules.pop("fake_shlo_plugin", None)


def test_an_entry_point_may_be_a_registration_function(monkeypatch: pytest.MonkeyPatch,
                                                       registry: None) -> None:
    def register() -> None:
        shlo.custom_call_target("my_op")(lambda call, a, b: a * b)

    monkeypatch.setattr(importlib.metadata, "entry_points",
                        lambda group: [_FakeEntryPoint("fn", "pkg:register", register)])
    assert cc.load_plugins(force=True) == ["fn"]
    np.testing.assert_array_equal(shlo.run(TRSM_LIKE, A, B)[0], A * B)


def test_builtin_hook_for_other_modules() -> None:
    """What a module of shlo (sdy's @Sharding, ...) calls to add a built-in target."""
    text = """
    func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
      %0 = stablehlo.custom_call @test.builtin_identity(%x) : (tensor<2xf32>) -> tensor<2xf32>
      return %0 : tensor<2xf32>
    }"""
    cc.custom_call_target("test.builtin_identity", builtin=True)(lambda call, x: x)
    try:
        assert "test.builtin_identity" in cc.registered_targets(builtin=True)
        assert "test.builtin_identity" not in cc.registered_targets(builtin=False)
        assert shlo.run(text, np.array([1, 2], np.float32))[0].tolist() == [1, 2]
    finally:
        cc._BUILTIN.pop("test.builtin_identity")


# --- built-in targets: shape_assertion, host callbacks, mhlo.erf -----------------------------------

SHAPE_ASSERTION = """
func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %c2 = stablehlo.constant dense<2> : tensor<i32>
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %d = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>
  %r = stablehlo.remainder %d, %c2 : tensor<i32>
  %ok = stablehlo.compare EQ, %r, %c0, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
  stablehlo.custom_call @shape_assertion(%ok, %r, %d) {api_version = 2 : i32, error_message = "Division had remainder {0} when computing 'k' from {1} = 2*k ({0}).", has_side_effect = true} : (tensor<i1>, tensor<i32>, tensor<i32>) -> ()
  return %x : tensor<?x4xf32>
}
"""


def test_shape_assertion_passes_and_fails_with_its_message() -> None:
    x = np.ones((6, 4), np.float32)
    np.testing.assert_array_equal(shlo.run(SHAPE_ASSERTION, x)[0], x)
    with pytest.raises(ExecutionError) as e:
        shlo.run(SHAPE_ASSERTION, np.ones((7, 4), np.float32))
    msg = str(e.value)
    assert "<string>:8:3" in msg and "@shape_assertion" in msg
    assert "Division had remainder 1 when computing 'k' from 7 = 2*k (1)." in msg


CALLBACKS = """
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  stablehlo.custom_call @xla_ffi_python_cpu_callback(%x) {backend_config = "", has_side_effect = true, mhlo.backend_config = {index = 0 : ui64}} : (tensor<3xf32>) -> ()
  %0 = stablehlo.add %x, %x : tensor<3xf32>
  stablehlo.custom_call @xla_ffi_python_cpu_callback(%0) {backend_config = "", has_side_effect = true, mhlo.backend_config = {index = 1 : ui64}} : (tensor<3xf32>) -> ()
  return %0 : tensor<3xf32>
}
"""


def test_a_debug_print_callback_is_skipped_with_one_warning() -> None:
    module = shlo.parse(CALLBACKS)
    x = np.array([1, 2, 3], np.float32)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert shlo.run(module, x)[0].tolist() == [2, 4, 6]
        shlo.run(module, x)
    msgs = [str(m.message) for m in w if issubclass(m.category, RuntimeWarning)]
    assert len(msgs) == 1, msgs
    assert "<string>:3:3" in msgs[0] and "xla_ffi_python_cpu_callback" in msgs[0]
    assert "skipped" in msgs[0]


def test_a_callback_with_results_needs_a_handler() -> None:
    text = """
    func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
      %0 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%x) {backend_config = "", mhlo.backend_config = {index = 0 : ui64}} : (tensor<3xf32>) -> tensor<3xf32>
      return %0 : tensor<3xf32>
    }"""
    x = np.array([0, 1, 2], np.float32)
    with pytest.raises(ExecutionError) as e:
        shlo.run(text, x)
    msg = str(e.value)
    assert "<string>:3:7" in msg and "pure_callback" in msg
    assert "custom_calls={'xla_ffi_python_cpu_callback': fn}" in msg
    np.testing.assert_allclose(
        shlo.run(text, x, custom_calls={"xla_ffi_python_cpu_callback": np.sin})[0], np.sin(x))


def test_mhlo_erf_matches_chlo_erf() -> None:
    text = """
    func.func @main(%x: tensor<5xf32>) -> (tensor<5xf32>, tensor<5xf32>) {
      %0 = stablehlo.custom_call @mhlo.erf(%x) {mhlo.attributes = {}, mhlo.version = 1 : i64} : (tensor<5xf32>) -> tensor<5xf32>
      %1 = chlo.erf %x : tensor<5xf32> -> tensor<5xf32>
      return %0, %1 : tensor<5xf32>, tensor<5xf32>
    }"""
    x = np.array([-3, -0.5, 0, 0.25, 2], np.float32)
    ours, chlo = shlo.run(text, x)
    np.testing.assert_array_equal(ours, chlo)
    assert ours.dtype == np.float32 and ours[2] == 0 and ours[4] == pytest.approx(0.9953223)


def test_python_value_conversions() -> None:
    from shlo.attributes import (ArrayAttr, DenseElementsAttr, DictAttr, EnumAttr, IntegerAttr,
                                 SymbolRefAttr, UnitAttr)
    from shlo.types import tensor

    arr = DenseElementsAttr(tensor((2,), "i32"), np.array([1, 2], np.int32))
    v = cc.python_value(DictAttr((("a", ArrayAttr((IntegerAttr(1), UnitAttr()))),
                                  ("b", arr), ("c", SymbolRefAttr("f")),
                                  ("d", EnumAttr("stablehlo", "precision", "HIGH")))))
    assert v["a"] == (1, True) and v["c"] == "f" and v["d"] == "HIGH"
    assert v["b"].tolist() == [1, 2] and not v["b"].flags.writeable
