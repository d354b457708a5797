"""Every testdata program (../shared/conformance/testdata, with quantized/ and dynamic/),
serialized by shlo at the current version and at 1.0.0, deserializes to the same IR.

By default every 4th file is taken (the tier stays quick); SHLO_BYTECODE_FULL=1 takes all.
Programs with ops of other dialects (chlo, check) are serialized with allow-other-dialects, as
upstream requires. A program a target cannot hold must fail with an error naming the first
version that can (the only such program is listed below).
"""

import os

import pytest

from conftest import TESTDATA

pytestmark = pytest.mark.skipif(not TESTDATA.is_dir(), reason="no ../shared/conformance/testdata")

STRIDE = 1 if os.environ.get("SHLO_BYTECODE_FULL") else 4
CHUNKS = 8
# file (relative to testdata) -> (target, text the error must contain)
TOO_NEW = {"quantized/add_qi8.mlir": ("1.0.0", "1.2.0")}


def _files():
    if not TESTDATA.is_dir():
        return []
    files = sorted(TESTDATA.glob("*.mlir")) + sorted(TESTDATA.glob("quantized/*.mlir")) + \
        sorted(TESTDATA.glob("dynamic/*.mlir"))
    chosen = files[::STRIDE]
    for rel in TOO_NEW:
        if TESTDATA / rel not in chosen and (TESTDATA / rel).exists():
            chosen.append(TESTDATA / rel)
    return chosen


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_testdata_roundtrip(chunk):
    import shlo
    from shlo.bytecode import deserialize, serialize
    from shlo.errors import ShloError
    from shlo.syntax.equivalence import first_difference

    files = _files()[chunk::CHUNKS]
    problems = []
    for f in files:
        rel = str(f.relative_to(TESTDATA))
        try:
            m = shlo.load(str(f))
        except ShloError:
            continue  # the conformance tier reports programs shlo cannot read
        other = any(not op.name.startswith(("stablehlo.", "func.", "builtin."))
                    for op in m.walk())
        for target in ("current", "1.0.0"):
            expect = TOO_NEW.get(rel)
            try:
                data = serialize(m, target, allow_other_dialects=other)
            except ShloError as e:
                if expect and expect[0] == target and expect[1] in str(e):
                    continue
                problems.append(f"{rel} @ {target}: {str(e).splitlines()[0]}")
                continue
            if expect and expect[0] == target:
                problems.append(f"{rel} @ {target}: serialized, expected an error")
                continue
            d = first_difference(m, deserialize(data, rel))
            if d:
                problems.append(f"{rel} @ {target}: {d}")
    assert files
    assert not problems, "\n".join(problems[:30])
