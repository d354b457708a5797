"""`dense_resource<key>` and the `{-# dialect_resources #-}` section: parse, print, run, and the
agreement of text and bytecode (one DenseResourceAttr)."""

from __future__ import annotations

import copy

import ml_dtypes
import numpy as np
import pytest

import shlo
from shlo.attributes import DenseElementsAttr, DenseResourceAttr
from shlo.syntax.dense import HexBlob


def blob(data: bytes, alignment: int = 4) -> str:
    return '"0x' + (alignment.to_bytes(4, "little") + data).hex().upper() + '"'


def module(consts: list[tuple[str, str]], blobs: dict[str, str]) -> str:
    """A module returning one `stablehlo.constant dense_resource<key> : type` per (key, type)."""
    types = ", ".join(t for _, t in consts)
    body = "".join(f"    %{i} = stablehlo.constant dense_resource<{k}> : {t}\n"
                   for i, (k, t) in enumerate(consts))
    rets = ", ".join(f"%{i}" for i in range(len(consts)))
    entries = ",\n".join(f"      {k}: {v}" for k, v in blobs.items())
    return (f"module {{\n  func.func @main() -> ({types}) {{\n{body}    return {rets} : {types}\n"
            f"  }}\n}}\n\n{{-#\n  dialect_resources: {{\n    builtin: {{\n{entries}\n    }}\n  }}\n"
            f"#-}}\n")


CASES = [
    ("f32", "tensor<3xf32>", np.array([1.5, -2.0, 1e-3], np.float32)),
    ("f16", "tensor<2x2xf16>", np.array([[1, 2], [0.5, -65504]], np.float16)),
    ("bf16", "tensor<2xbf16>", np.array([1.0, -3.25], ml_dtypes.bfloat16)),
    ("i64", "tensor<2xi64>", np.array([-1, 2 ** 40], np.int64)),
    ("c64", "tensor<2xcomplex<f32>>", np.array([1 + 2j, -0.5j], np.complex64)),
    ("i1", "tensor<4xi1>", np.array([True, False, False, True])),
]


@pytest.mark.parametrize("key,type_,value", CASES, ids=[c[0] for c in CASES])
def test_blob_round_trip_and_run(key: str, type_: str, value: np.ndarray) -> None:
    raw = value.astype(np.uint8).tobytes() if value.dtype == np.bool_ else value.tobytes()
    text = module([(key, type_)], {key: blob(raw)})
    m = shlo.parse(text)
    (got,) = shlo.run(m)
    assert got.dtype == value.dtype and got.tobytes() == value.tobytes()
    printed = shlo.format(m)
    assert f"dense_resource<{key}> : {type_}" in printed
    assert printed.endswith(f"builtin: {{\n      {key}: {blob(raw)}\n    }}\n  }}\n#-}}\n")
    again = shlo.parse(printed)
    assert shlo.format(again) == printed and shlo.run(again)[0].tobytes() == value.tobytes()


def test_splat_blob_broadcasts_one_element() -> None:
    text = module([("s", "tensor<2x3xi32>")], {"s": blob(np.int32(7).tobytes())})
    (got,) = shlo.run(text)
    np.testing.assert_array_equal(got, np.full((2, 3), 7, np.int32))


def test_alignment_prefix_is_read_and_kept() -> None:
    text = module([("a", "tensor<2xf64>")], {"a": blob(np.array([1.0, 2.0]).tobytes(), 16)})
    m = shlo.parse(text)
    attr = next(op for op in m.walk() if op.name == "stablehlo.constant").attr("value")
    assert isinstance(attr, DenseResourceAttr) and isinstance(attr, DenseElementsAttr)
    assert attr.handle.blob.alignment == 16 and attr.key == "a"
    np.testing.assert_array_equal(attr.array, [1.0, 2.0])
    assert '"0x10000000' in shlo.format(m)


def test_blob_is_decoded_lazily_and_shared() -> None:
    data = np.arange(6, dtype=np.float32).tobytes()
    text = module([("w", "tensor<6xf32>"), ("w", "tensor<2x3xf32>")], {"w": blob(data)})
    m = shlo.parse(text)
    a, b = (op.attr("value") for op in m.walk() if op.name == "stablehlo.constant")
    assert a.handle is b.handle and isinstance(a.handle.blob, HexBlob)
    assert a.handle.blob._data is None  # nothing decoded by parsing or verifying
    shlo.verify(m)
    assert a.handle.blob._data is None
    np.testing.assert_array_equal(b.array, np.arange(6, dtype=np.float32).reshape(2, 3))
    assert not a.array.flags.writeable and np.shares_memory(a.array, b.array)  # one buffer
    assert a != b and a == copy.deepcopy(a)  # (types differ; copies share the blob)
    assert shlo.format(m).count("w: ") == 1


def test_unused_keys_are_not_printed_and_other_groups_are_skipped() -> None:
    text = module([("x", "tensor<1xi8>")], {"x": blob(b"\x05"), "unused": blob(b"\x01")})
    text = text.replace("#-}", "  , external_resources: { mlir_reproducer: { pipeline: \"x\" } }\n#-}")
    m = shlo.parse(text)
    out = shlo.format(m)
    assert "unused" not in out and "external_resources" not in out and "x: " in out
    assert shlo.run(m)[0].tolist() == [5]


@pytest.mark.parametrize("blobtext,message", [
    ('"0x0400000001"', "needs 8"),            # 1 byte for a tensor<2xf32>
    ('"0x040000000"', "even number"),          # odd digit count
    ('"0x04"', "alignment"),                   # no alignment prefix
    ("true", "hex string blob"),
])
def test_malformed_blobs_are_located_parse_errors(blobtext: str, message: str) -> None:
    text = module([("k", "tensor<2xf32>")], {"k": blobtext})
    with pytest.raises(shlo.ParseError, match=message) as e:
        shlo.parse(text, "m.mlir")
    assert str(e.value).startswith("m.mlir:")


def test_elided_resource_parses_verifies_prints_and_fails_clearly_at_run_time() -> None:
    text = ("func.func @main() -> tensor<2xf32> {\n"
            "  %0 = stablehlo.constant dense_resource<__elided__> : tensor<2xf32>\n"
            "  return %0 : tensor<2xf32>\n}\n")
    m = shlo.parse(text, "e.mlir")
    shlo.verify(m)
    assert "dense_resource<__elided__> : tensor<2xf32>" in shlo.format(m)
    assert "dialect_resources" not in shlo.format(m)
    with pytest.raises(shlo.ExecutionError, match="elided") as e:
        shlo.run(m)
    assert str(e.value).startswith("e.mlir:2:")


def test_undefined_key_fails_at_run_time_naming_it() -> None:
    text = ("func.func @main() -> tensor<2xf32> {\n"
            "  %0 = stablehlo.constant dense_resource<nowhere> : tensor<2xf32>\n"
            "  return %0 : tensor<2xf32>\n}\n")
    with pytest.raises(shlo.ExecutionError, match="nowhere.*does not define it"):
        shlo.run(text)


def test_large_blob_is_decoded_in_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    from shlo.syntax import dense

    monkeypatch.setattr(dense, "_DECODE_CHUNK", 7)  # many chunks, a short last one
    value = np.arange(100, dtype=np.int16)
    (got,) = shlo.run(module([("big", "tensor<100xi16>")], {"big": blob(value.tobytes())}))
    np.testing.assert_array_equal(got, value)


def test_text_and_bytecode_agree() -> None:
    """MLIR (jaxlib's bindings) writes the module as bytecode; shlo reads both to one IR."""
    pytest.importorskip("jax")
    import io

    from jax._src.interpreters import mlir as jmlir
    from jaxlib.mlir import ir

    value = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    text = module([("w", "tensor<2x3xf32>"), ("b", "tensor<2xi1>")],
                  {"w": blob(value.tobytes()), "b": blob(b"\x01\x00", 1)})
    with jmlir.make_ir_context():
        mm = ir.Module.parse(text)
        f = io.BytesIO()
        mm.operation.write_bytecode(f)
        upstream_text = str(mm)
        no_blobs = mm.operation.get_asm(large_resource_limit=4)
    from_bc = shlo.parse(f.getvalue())
    from_text = shlo.parse(text)
    a = next(op for op in from_bc.walk() if op.name == "stablehlo.constant").attr("value")
    assert type(a) is DenseResourceAttr and a.key == "w"
    assert shlo.format(from_bc) == shlo.format(from_text) == upstream_text
    assert [r.tolist() for r in shlo.run(from_bc)] == [value.tolist(), [True, False]]
    # MLIR's resource elision (large_resource_limit) keeps the keys and leaves the blobs out:
    # it parses and verifies, and running says what is missing
    assert "dense_resource<w>" in no_blobs and '"0x' not in no_blobs
    m = shlo.parse(no_blobs)
    shlo.verify(m)
    with pytest.raises(shlo.ExecutionError, match="w> has no data.*does not define it"):
        shlo.run(m)
