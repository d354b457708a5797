"""The conformance tier: the official StableHLO corpus in ../shared/conformance, when present.

Every case of interpret/ and testdata/ (including quantized/) must pass except those listed in
known_failures.txt; cases that need arguments the file does not give (testdata/dynamic, which
upstream only round-trips) are skipped by the runner and counted.
"""

from pathlib import Path

import pytest

from shlo.testing.runner import run_paths

CONFORMANCE = Path(__file__).resolve().parents[3] / "shared" / "conformance"
HERE = Path(__file__).parent

pytestmark = pytest.mark.skipif(not CONFORMANCE.is_dir(), reason="no ../shared/conformance")


def known_failures() -> dict[str, str]:
    out = {}
    for line in (HERE / "known_failures.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            key, reason = line.split(None, 1)
            out[key] = reason
    return out


@pytest.mark.parametrize("folder", ["interpret", "testdata"])
def test_corpus(folder):
    results = run_paths([str(CONFORMANCE / folder)], jobs=2)
    known = known_failures()
    failed = {f"{Path(r.file).relative_to(CONFORMANCE)}:{r.line}": r for r in results
              if r.status == "failed"}
    unexpected = {k: r.messages for k, r in failed.items() if k not in known}
    fixed = [k for k in known if k.startswith(folder + "/") and k not in failed]
    passed = sum(r.status == "passed" for r in results)
    skipped = sum(r.status == "skipped" for r in results)
    print(f"{folder}: {passed} passed, {len(failed)} failed, {skipped} skipped")
    assert not unexpected, "\n".join(f"{k}: {m[:1]}" for k, m in unexpected.items())
    assert not fixed, f"now passing, remove from known_failures.txt: {fixed}"
    assert passed > 0
