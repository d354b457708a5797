"""Portable artifacts and plain bytecode written by shlo read back to the same IR, at every
version that can hold the program; versions that cannot give errors naming the op and the
first version that has it."""

import pytest

import shlo
from shlo.bytecode import (
    deserialize, is_bytecode, portable_artifact_version, serialize, write_bytecode,
)
from shlo.bytecode.vhlo.version import CURRENT, parse_version
from shlo.errors import ShloError
from shlo.syntax.equivalence import first_difference
from shlo.opt import elide_defaults

from conftest import PROGRAMS

TARGETS = ["current", "1.9.0", "1.0.0", "0.9.0"]
# program -> the oldest target it can be serialized for
OLDEST = {"elementwise": "1.9.0"}


def _reparse(text):
    return elide_defaults(shlo.parse(text))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("target", TARGETS)
def test_portable_roundtrip(name, target):
    m = _reparse(PROGRAMS[name])
    oldest = parse_version(OLDEST.get(name, "0.9.0"))
    v = CURRENT if target == "current" else parse_version(target)
    if v < oldest:
        with pytest.raises(ShloError) as e:
            serialize(m, target)
        assert f">= {oldest}" in str(e.value)
        return
    data = serialize(m, target)
    assert is_bytecode(data)
    assert portable_artifact_version(data) == v
    back = elide_defaults(deserialize(data))
    assert first_difference(m, back) is None


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_plain_bytecode_roundtrip(name):
    m = _reparse(PROGRAMS[name])
    data = write_bytecode(m)
    assert is_bytecode(data)
    assert portable_artifact_version(data) is None
    assert first_difference(m, elide_defaults(shlo.parse(data))) is None


def test_serialization_is_deterministic():
    m = _reparse(PROGRAMS["attributes"])
    assert serialize(m, "1.5.0") == serialize(_reparse(PROGRAMS["attributes"]), "1.5.0")


def test_load_reads_bytecode_files(tmp_path):
    p = tmp_path / "prog.mlirbc"
    p.write_bytes(serialize(_reparse(PROGRAMS["regions"]), "1.0.0"))
    m = shlo.load(str(p))
    assert any(op.name == "stablehlo.while" for op in m.walk())


def test_target_outside_window():
    m = _reparse(PROGRAMS["regions"])
    with pytest.raises(ShloError, match="0.8.0"):
        serialize(m, "0.8.0")
    with pytest.raises(ShloError):
        serialize(m, "99.0.0")


def test_too_old_for_type():
    # f8E4M3 (not FN) and i2 need newer versions than 0.9.0
    m = shlo.parse("""
func.func @main(%a: tensor<2xi2>) -> tensor<2xi2> {
  return %a : tensor<2xi2>
}""")
    with pytest.raises(ShloError) as e:
        serialize(m, "1.0.0")
    assert "1.2.0" in str(e.value)
    assert first_difference(m, deserialize(serialize(m, "1.2.0"))) is None


def test_keep_vhlo():
    from shlo.bytecode import load_bytes

    m = load_bytes(serialize(_reparse(PROGRAMS["regions"]), "1.0.0"), keep_vhlo=True)
    names = {op.name for op in m.walk()}
    assert "vhlo.while_v1" in names and "vhlo.func_v1" in names


def test_other_dialects_need_allow():
    m = shlo.parse("""
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = chlo.erf %a : tensor<2xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}""")
    with pytest.raises(ShloError, match="chlo.erf"):
        serialize(m, "current")
    data = serialize(m, "current", allow_other_dialects=True)
    assert first_difference(m, deserialize(data)) is None
