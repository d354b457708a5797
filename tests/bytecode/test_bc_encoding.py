"""MLIR bytecode primitives (varints, sections) and what corrupt input gives: located errors
(byte offset, section, what was expected), never a traceback, never an allocation larger than
the file justifies."""

import random
import tracemalloc

import pytest

import shlo
from shlo.bytecode import BytecodeError, load_bytes, serialize, write_bytecode
from shlo.bytecode.encoding import MAGIC, Cursor, Emitter
from shlo.errors import ShloError

from conftest import PROGRAMS


@pytest.mark.parametrize("value", [0, 1, 0x7F, 0x80, 0x3FFF, 0x4000, 1 << 35, (1 << 56) - 1,
                                   1 << 56, (1 << 64) - 1])
def test_varint_roundtrip(value):
    e = Emitter()
    e.varint(value)
    c = Cursor(bytes(e.out))
    assert c.varint() == value
    assert c.at_end()


def test_varint_known_encodings():
    # BytecodeFormat.md: the low bits of the first byte say how many bytes follow
    e = Emitter()
    e.varint(1)
    assert bytes(e.out) == b"\x03"
    e = Emitter()
    e.varint(128)
    assert bytes(e.out) == bytes([0b10, 0x02])  # 128 << 2 | 0b10
    e = Emitter()
    e.varint(1 << 63)
    assert bytes(e.out)[0] == 0 and len(e.out) == 9


@pytest.mark.parametrize("value", [0, 1, -1, 63, -64, 1 << 40, -(1 << 63), (1 << 63) - 1])
def test_signed_varint_roundtrip(value):
    e = Emitter()
    e.svarint(value)
    assert Cursor(bytes(e.out)).svarint() == value


def test_truncated_varint_is_located():
    c = Cursor(b"\x00\xff\xff", section="ir")
    with pytest.raises(BytecodeError) as e:
        c.varint("op count")
    msg = str(e.value)
    assert "byte 0" in msg and "section 'ir'" in msg and "op count" in msg


def test_count_larger_than_data():
    e = Emitter()
    e.varint(1 << 40)
    c = Cursor(bytes(e.out) + b"\x03" * 4, section="string")
    with pytest.raises(BytecodeError, match="exceeds"):
        c.count("number of strings")


def _artifacts():
    out = {}
    for name in ("regions", "attributes", "constants"):
        m = shlo.parse(PROGRAMS[name])
        out[f"{name}-current"] = serialize(m, "current")
        out[f"{name}-0.9.0"] = serialize(m, "0.9.0")
        out[f"{name}-plain"] = write_bytecode(m)
    return out


ARTIFACTS = _artifacts()


def _load_cleanly(data: bytes) -> None:
    try:
        load_bytes(data, "fuzz.mlirbc")
    except ShloError as e:
        assert "Traceback" not in str(e)


def test_bad_magic_and_empty():
    with pytest.raises(ShloError):
        load_bytes(MAGIC, "x.bc")
    with pytest.raises(ShloError):
        load_bytes(MAGIC + b"\x06", "x.bc")


@pytest.mark.parametrize("name", ["regions-current", "regions-0.9.0", "regions-plain"])
def test_every_truncation(name):
    data = ARTIFACTS[name]
    for n in range(4, len(data)):
        with pytest.raises(ShloError):
            load_bytes(data[:n], "trunc.mlirbc")


def test_truncation_error_names_offset_and_section():
    data = ARTIFACTS["attributes-current"]
    with pytest.raises(ShloError) as e:
        load_bytes(data[: len(data) // 2], "half.mlirbc")
    assert "byte " in str(e.value) and "section" in str(e.value)


@pytest.mark.parametrize("seed", range(6))
def test_mutations_give_clean_errors(seed):
    rng = random.Random(seed)
    for _ in range(60):
        name = rng.choice(sorted(ARTIFACTS))
        data = bytearray(ARTIFACTS[name])
        kind = rng.choice(["flip", "varint", "huge", "zero", "splice"])
        i = rng.randrange(4, len(data))
        if kind == "flip":
            for _ in range(rng.randint(1, 8)):
                j = rng.randrange(4, len(data))
                data[j] ^= 1 << rng.randrange(8)
        elif kind == "varint":  # a 9-byte varint whose payload runs off
            data[i:i + 1] = b"\x00" + b"\xff" * 8
        elif kind == "huge":  # a huge length or count
            data[i:i + 1] = b"\x00\xff\xff\xff\xff\xff\xff\x7f\x00"
        elif kind == "zero":
            data[i] = 0
        else:
            j = rng.randrange(4, len(data))
            data[i:i] = data[j:j + rng.randint(1, 16)]
        _load_cleanly(bytes(data))


def test_huge_counts_allocate_nothing():
    """A corrupt file claiming 2^60-element tensors / 2^50 strings fails fast, with memory
    bounded by the file (not by the claims)."""
    data = ARTIFACTS["constants-current"]
    rng = random.Random(7)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for _ in range(200):
            d = bytearray(data)
            i = rng.randrange(4, len(d))
            d[i:i + 1] = b"\x00" + (1 << 60).to_bytes(8, "little")
            _load_cleanly(bytes(d))
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024 * 1024


def test_cli_reports_corrupt_file(tmp_path, capsys):
    from shlo.cli import main

    p = tmp_path / "bad.mlirbc"
    p.write_bytes(ARTIFACTS["regions-current"][:40])
    rc = main(["translate", "--deserialize", str(p)])
    err = capsys.readouterr().err
    assert rc != 0
    assert "malformed bytecode" in err and "Traceback" not in err
