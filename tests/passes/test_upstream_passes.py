"""Every RUN line of upstream's pass tests, chunk by chunk (tests/passes/upstream.py): a run
not listed in upstream_known.txt must pass, and a listed run that passes fails the test, so the
list only shrinks."""

import pytest

import upstream

pytestmark = pytest.mark.skipif(not upstream.files(), reason="no ../shared/conformance/passes")


@pytest.mark.parametrize("name", [upstream.key(p) for p in upstream.files()])
def test_upstream_pass_file(name):
    path = upstream.CONFORMANCE / name
    known = upstream.read_known()
    result = upstream.run(path)
    assert result.lines, f"{name} has no RUN lines"
    problems = []
    for r in result.lines:
        w = upstream.where(r)
        if r.status != "passed" and (name, w) not in known:
            problems.append(f"{w} {r.status}: {r.reason}\n  {r.command}\n  {r.output[:1500]}")
        elif r.status == "passed" and (name, w) in known:
            problems.append(f"{w} passes now: drop it from upstream_known.txt")
    assert not problems, "\n".join(problems)
