"""The vhlo/ corpus (../shared/conformance/vhlo): every RUN line of every file, with
`stablehlo-translate` / `stablehlo-opt` mapped to shlo's commands (shlo.opt.lit_tools)
and FileCheck run by the `filecheck` package (shlo.testing.runlines); and, for each versioned
file, serializing the text at its version reproduces the upstream `.mlir.bc` byte for byte.

Lines shlo cannot pass are listed below with the reason; a listed line that passes fails the
test (so the list only shrinks).
"""

import re

import pytest

from conftest import VHLO_DIR, needs_shared

pytestmark = needs_shared

# (file, RUN line) -> why it fails
KNOWN_FAILURES = {
    ("legalize_stablehlo_to_vhlo_invalid.mlir", 1):
        "shlo's parser does not read a typed string attribute (`\"foo\" : tensor<3xf32>`)",
    ("stablehlo_legalize_to_vhlo_mixed.mlir", 8):
        "shlo's parser does not read arith/scf/tensor ops in their pretty form",
    ("stablehlo_legalize_to_vhlo_mixed.mlir", 9): "as line 8",
    ("stablehlo_legalize_to_vhlo_mixed.mlir", 10): "as line 8",
    ("stablehlo_legalize_to_vhlo_mixed.mlir", 11): "as line 8",
}
# (file, RUN line) -> a word of the reason the runner gives
UNSUPPORTED = {
    ("vhlo_bool_in_memory_repr.mlir", 1): "stablehlo-aggressive-folder",
    ("vhlo_bool_in_memory_repr.mlir", 2): "stablehlo-aggressive-folder",
    ("vhlo_bool_in_memory_repr.mlir", 3): "RUN-DISABLED",
}


def _files():
    return sorted(p.name for p in VHLO_DIR.glob("*.mlir")) if VHLO_DIR.is_dir() else []


@pytest.fixture(scope="module")
def tools():
    from shlo.opt import lit_tools

    return lit_tools()


@pytest.mark.parametrize("name", _files())
def test_run_lines(name, tools):
    from shlo.testing.runlines import run_file

    result = run_file(str(VHLO_DIR / name), tools, features={"asserts"})
    assert result.lines, f"{name} has no RUN lines"
    problems = []
    for r in result.lines:
        key = (name, r.line)
        if r.status == "failed" and key not in KNOWN_FAILURES:
            problems.append(f"RUN line {r.line} failed: {r.reason}\n  {r.command}\n"
                            f"  {r.output[:2000]}")
        elif r.status == "passed" and key in KNOWN_FAILURES:
            problems.append(f"RUN line {r.line} passes now: drop it from KNOWN_FAILURES")
        elif r.status == "unsupported":
            word = UNSUPPORTED.get(key)
            if word is None or word not in r.reason:
                problems.append(f"RUN line {r.line} unsupported: {r.reason}")
    assert not problems, "\n".join(problems)


def _versioned(every=False):
    out = []
    for p in sorted(VHLO_DIR.glob("*.mlir.bc")) if VHLO_DIR.is_dir() else []:
        m = re.search(r"\.(\d+)_(\d+)_(\d+)\.mlir\.bc$", p.name)
        text = (VHLO_DIR / p.name[:-3]).read_text()
        if m and (every or "diff %s.bc" in text):  # the files upstream checks byte for byte
            out.append((p.name[:-3], ".".join(m.groups())))
    return out


@pytest.mark.parametrize("name,version", _versioned())
def test_serialize_reproduces_upstream_bytecode(name, version):
    import shlo
    from shlo.bytecode import serialize

    module = shlo.load(str(VHLO_DIR / name))
    expected = (VHLO_DIR / (name + ".bc")).read_bytes()
    got = serialize(module, version, strip_debuginfo=True)
    assert got == expected, f"first difference at byte " \
        f"{next((i for i, (a, b) in enumerate(zip(got, expected)) if a != b), min(len(got), len(expected)))}"


@pytest.mark.parametrize("name,version", _versioned(every=True))
def test_upstream_bytecode_reads_and_rewrites(name, version):
    """The upstream .bc, read as VHLO and written again at its version, reads back the same
    (the bytes differ at most in use-list orders, which reading does not keep)."""
    from shlo.bytecode import portable_artifact_version
    from shlo.bytecode.portable import read_vhlo, write_vhlo
    from shlo.syntax.equivalence import first_difference

    data = (VHLO_DIR / (name + ".bc")).read_bytes()
    assert str(portable_artifact_version(data)) == version
    m, r = read_vhlo(data, name)
    again = write_vhlo(m, version)
    assert len(again) <= len(data)
    m2, r2 = read_vhlo(again, name)
    assert r2.version == r.version and r2.producer == r.producer
    assert first_difference(m, m2) is None
