"""Semantics preserved, measured: programs of the official corpus compute the same after
`stablehlo-aggressive-simplification` + `stablehlo-aggressive-folder` and after
`stablehlo-target-independent-optimization` (their calls inlined first, so that the folds see
the `@inputs()` constants). CI runs a deterministic sample (every 40th program); the whole
corpus is ``python tests/passes/semantics.py`` (numbers in docs/passes.md)."""

from __future__ import annotations

import pytest
from semantics import CONFORMANCE, check_file, corpus

pytestmark = pytest.mark.skipif(not (CONFORMANCE / "testdata").is_dir(),
                                reason="no ../shared/conformance")

SAMPLE = corpus(every=40) if (CONFORMANCE / "testdata").is_dir() else []


@pytest.mark.parametrize("passes", [
    ("stablehlo-aggressive-simplification", "stablehlo-aggressive-folder"),
    ("stablehlo-target-independent-optimization",),
], ids=["simplification+folder", "target-independent"])
def test_sample_computes_the_same(passes):
    outcomes = [check_file(f, passes) for f in SAMPLE]
    bad = [f"{o.status}: {o.path}: {o.detail}" for o in outcomes
           if o.status in ("changed", "error")]
    assert not bad, "\n".join(bad)
    ran = [o for o in outcomes if o.status in ("exact", "close")]
    assert len(ran) > len(SAMPLE) // 2
    # the passes did something: fewer ops overall
    assert sum(o.ops_after for o in ran) < sum(o.ops_before for o in ran)
