"""Integer literals are read as MLIR reads them (`buildAttributeAPInt`): the magnitude fits the
type's width, a signless value above the signed range is a bit pattern (`9 : i4` is -7, the
false reject of issue 16), `-0` is out of range, a signed type or `index` keeps the sign bit
clear, and a float literal of an integer type is an error. Each verdict and printed value below
is MLIR's (checked against jaxlib's parser when jax is installed)."""

from __future__ import annotations

import pytest

import shlo
from shlo.verifier import collect

_M = "module attributes {{mhlo.x = {}}} {{}}"
_C = ("func.func @main() -> tensor<{n}x{t}> {{\n  %0 = stablehlo.constant dense<{v}> : "
      "tensor<{n}x{t}>\n  return %0 : tensor<{n}x{t}>\n}}")

# text -> the printed value (accepted) or the message (rejected)
CASES = {
    _M.format("2147483648 : i32"): "-2147483648 : i32",
    _M.format("0x80000000 : i32"): "-2147483648 : i32",
    _M.format("255 : i8"): "-1 : i8",
    _M.format("255 : ui8"): "255 : ui8",
    _M.format("9223372036854775808"): "-9223372036854775808 : i64",
    _M.format("-8 : si4"): "-8 : si4",
    _M.format("-1 : i1"): "true",
    _M.format("4294967296 : i32"): "integer constant out of range for attribute",
    _M.format("-2147483649 : i32"): "integer constant out of range for attribute",
    _M.format("-0 : i32"): "integer constant out of range for attribute",
    _M.format("2 : i1"): "integer constant out of range for attribute",
    _M.format("8 : si4"): "integer constant out of range for attribute",
    _M.format("9223372036854775808 : index"): "integer constant out of range for attribute",
    _M.format("-0 : ui8"): "negative integer literal not valid for unsigned integer type",
    _M.format("1.5 : i32"): "floating point value not valid for specified type",
    _M.format("array<i8: 255, -128>"): "array<i8: -1, -128>",
    _M.format("array<i64: 18446744073709551615>"): "array<i64: -1>",
    _M.format("array<ui8: -128>"): "array<ui8: 128>",
    _M.format("array<i8: 256>"): "integer constant out of range",
    _M.format("array<i8: -0>"): "integer constant out of range",
    _M.format("array<si8: 200>"): "integer constant out of range",
    _M.format("array<ui8: -129>"): "integer constant out of range",
    _C.format(n=4, t="i4", v="[9, -8, 15, 0]"): "dense<[-7, -8, -1, 0]> : tensor<4xi4>",
    _C.format(n=2, t="i8", v="[255, -128]"): "dense<[-1, -128]> : tensor<2xi8>",
    _C.format(n=2, t="i4", v="[16, 0]"): "out of range for",
    _C.format(n=2, t="i4", v="[-9, 0]"): "out of range for",
    ("func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n  %0 = stablehlo.transpose %x, "
     "dims = [9999999999999999999] : (tensor<2xf32>) -> tensor<2xf32>\n  return %0 : "
     "tensor<2xf32>\n}"): "integer value too large",
}
_ACCEPTED = {t for t, want in CASES.items()
             if want.startswith(("-", "array", "dense", "true", "255"))}


@pytest.mark.parametrize("text", CASES)
def test_integer_literal_as_mlir_reads_it(text):
    want = CASES[text]
    if text in _ACCEPTED:
        assert want in shlo.format(shlo.parse(text))
    else:
        with pytest.raises(shlo.ParseError, match=want) as e:
            shlo.parse(text)
        assert e.value.diagnostics[0].line >= 1


def test_reduce_precision_exponent_bits_2147483648_is_rejected():
    """Issue 16's false accept: `2147483648 : i32` is -2^31 (MLIR), which C2 refuses."""
    m = shlo.parse("func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
                   '  %0 = "stablehlo.reduce_precision"(%x) {exponent_bits = 2147483648 : i32, '
                   "mantissa_bits = 2 : i32} : (tensor<2xf32>) -> tensor<2xf32>\n"
                   "  return %0 : tensor<2xf32>\n}")
    diags = collect(m)
    assert diags and "exponent_bits" in diags[0].message and diags[0].line == 2


def test_i4_constant_above_the_signed_range_runs_as_its_bit_pattern():
    m = shlo.parse(_C.format(n=3, t="i4", v="[9, 15, -8]"))
    assert shlo.run(m)[0].astype(int).tolist() == [-7, -1, -8]


@pytest.mark.parametrize("text", CASES)
def test_mlir_agrees(text):
    pytest.importorskip("jax")
    from shlo.testing.oracles import available

    if not available():
        pytest.skip("jaxlib's stablehlo bindings are not available")
    from jaxlib.mlir import ir

    from shlo.testing.oracles import mlir_context

    with mlir_context(allow_unregistered=True):
        if text in _ACCEPTED:
            assert CASES[text] in str(ir.Module.parse(text))
        else:
            with pytest.raises(ir.MLIRError, match=CASES[text]):
                ir.Module.parse(text)
