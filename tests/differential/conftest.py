"""Differential tier: shlo against the upstream reference interpreter and XLA (needs jax).

Every test module here is skipped when jax is not installed (each calls
``pytest.importorskip("jax")`` first: a skip raised while loading this conftest would abort a run
that names the directory on the command line). One :class:`difftools.Runner`
(one upstream interpreter child process, XLA's CPU client) serves the whole session; at the
end its counts of compared cases and elements per oracle are printed in the terminal summary
(docs/differential.md quotes them); SHLO_DIFF_REPORT=1 also lists the elements excused by each
documented divergence.
"""

from __future__ import annotations

import os
from typing import Any, Iterator

import pytest

from difftools import Runner

_RUNNERS: list[Runner] = []


@pytest.fixture(scope="session")
def runner() -> Iterator[Runner]:
    r = Runner()
    _RUNNERS.append(r)
    yield r
    r.close()


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for r in _RUNNERS:
        if not r.cases:
            continue
        parts = [f"{o}: {r.cases[o]} cases, {r.compared[o]} elements"
                 for o in sorted(r.cases)]
        secs = ", ".join(f"{k} {v:.1f}s" for k, v in sorted(r.seconds.items()))
        terminalreporter.write_line("differential: " + "; ".join(parts) + f" ({secs})")
        for reason, n in sorted(r.skips.items()):
            terminalreporter.write_line(f"  not compared ({n}): {reason}")
        if r.allowed:
            terminalreporter.write_line(f"  documented divergences: {sum(r.allowed.values())} "
                                        f"elements in {len(r.allowed)} cases")
            if os.environ.get("SHLO_DIFF_REPORT"):
                for what, n in sorted(r.allowed.items()):
                    terminalreporter.write_line(f"    {what}: {n}")
