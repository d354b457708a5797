"""Every program of the official corpus parses and round-trips (pretty and generic form).

Folders: testdata (+ quantized/, dynamic/) whole files; interpret/ and verify/ split on
`// -----` (verify chunks with `expected-error` are excluded: they are meant to fail). For each
program: parse -> print pretty -> parse gives the same IR, printing is idempotent, and
print generic -> parse gives the same IR. Skipped when ../shared/conformance is absent.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import shlo
from shlo.syntax.equivalence import first_difference

CONFORMANCE = Path(__file__).resolve().parents[2] / ".." / "shared" / "conformance"

pytestmark = pytest.mark.skipif(not CONFORMANCE.is_dir(), reason="no ../shared/conformance")

_SPLIT = re.compile(r"^// -----.*$", re.M)
_CODE = re.compile(r"^\s*[^/\s]", re.M)


def programs(folder: str, shard: tuple[int, int] | None = None) -> list[tuple[str, str]]:
    """(name, text) of the programs of a corpus folder (optionally one shard of it)."""
    out: list[tuple[str, str]] = []
    files = sorted((CONFORMANCE / folder).glob("*.mlir"))
    if shard is not None:
        files = files[shard[0]::shard[1]]
    for f in files:
        text = f.read_text()
        if folder.startswith("testdata"):
            out.append((f.name, text))
            continue
        for i, chunk in enumerate(_SPLIT.split(text)):
            if folder.startswith("verify") and "expected-error" in chunk:
                continue
            if _CODE.search(chunk):
                out.append((f"{f.name}#{i}", chunk))
    return out


def round_trip(name: str, text: str) -> str | None:
    """None when the program round-trips, else what went wrong."""
    try:
        m = shlo.parse(text, name)
    except shlo.ParseError as e:
        return f"parse: {e}"
    pretty = shlo.format(m)
    try:
        m2 = shlo.parse(pretty, name + "(pretty)")
    except shlo.ParseError as e:
        return f"re-parse of the pretty form: {e}"
    diff = first_difference(m, m2)
    if diff:
        return f"pretty round trip changed the IR: {diff}"
    if shlo.format(m2) != pretty:
        return "printing is not idempotent"
    try:
        m3 = shlo.parse(shlo.format(m, generic=True), name + "(generic)")
    except shlo.ParseError as e:
        return f"re-parse of the generic form: {e}"
    diff = first_difference(m, m3)
    if diff:
        return f"generic round trip changed the IR: {diff}"
    return None


TESTDATA_SHARDS = 8
CASES = [("interpret", None), ("interpret/chlo", None), ("verify", None),
         ("testdata/quantized", None), ("testdata/dynamic", None)] + \
    [("testdata", (i, TESTDATA_SHARDS)) for i in range(TESTDATA_SHARDS)]


@pytest.mark.parametrize("folder, shard", CASES,
                         ids=[f + (f"[{s[0]}/{s[1]}]" if s else "") for f, s in CASES])
def test_corpus_round_trips(folder, shard):
    progs = programs(folder, shard)
    assert progs, f"no programs found in {folder}"
    failures = []
    for name, text in progs:
        problem = round_trip(name, text)
        if problem:
            failures.append(f"{name}: {problem}")
    print(f"{folder}{shard or ''}: {len(progs) - len(failures)}/{len(progs)} round-tripped")
    assert not failures, f"{len(failures)}/{len(progs)} failed:\n" + "\n".join(failures[:10])


def test_corpus_counts():
    """The corpus has the expected number of programs per folder (guards the splitting)."""
    counts = {f: len(programs(f)) for f in ("interpret", "interpret/chlo", "verify",
                                             "testdata", "testdata/quantized",
                                             "testdata/dynamic")}
    assert counts["testdata"] >= 1000 and counts["interpret"] >= 400 and counts["verify"] >= 300
