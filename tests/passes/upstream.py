"""Upstream's FileCheck tests of its passes (../shared/conformance/passes and transforms), run
chunk by chunk with `stablehlo-opt` mapped to `shlo opt` (shlo.opt.lit_tools).

``python tests/passes/upstream.py [--failures] [FILE...]`` prints, per file, the chunks that
pass, fail and are unsupported (with reasons under ``--failures``), and the totals. With
``--write-known`` it rewrites ``upstream_known.txt``, the list of chunks that do not pass yet.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

CONFORMANCE = Path(__file__).resolve().parents[3] / "shared" / "conformance"
DIRS = ("passes", "transforms")
KNOWN_FILE = Path(__file__).with_name("upstream_known.txt")


def files() -> list[Path]:
    return sorted(p for d in DIRS if (CONFORMANCE / d).is_dir()
                  for p in (CONFORMANCE / d).glob("*.mlir"))


def key(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def run(path: Path):
    from shlo.testing.runlines import run_file
    from shlo.opt import lit_tools

    return run_file(str(path), lit_tools(), features={"asserts"}, chunks=True)


def where(r) -> str:
    """`L<RUN line>` or `L<RUN line>#<chunk>`: one RUN line's run (on one chunk)."""
    return f"L{r.line}" + (f"#{r.chunk}" if r.chunk is not None else "")


def read_known() -> dict[tuple[str, str], str]:
    """(file, where) -> reason, for the runs that do not pass yet."""
    out: dict[tuple[str, str], str] = {}
    if KNOWN_FILE.exists():
        for line in KNOWN_FILE.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                f, w, reason = (line.split(None, 2) + [""])[:3]
                out[(f, w)] = reason
    return out


def main(argv: list[str]) -> int:
    show = "--failures" in argv
    write = "--write-known" in argv
    names = [a for a in argv if not a.startswith("--")]
    total = {"passed": 0, "failed": 0, "unsupported": 0}
    known_lines = []
    for path in files():
        if names and path.name not in names and key(path) not in names:
            continue
        result = run(path)
        counts = {s: result.count(s) for s in total}
        for s in total:
            total[s] += counts[s]
        print(f"{key(path):60s} " + " ".join(f"{s} {counts[s]:3d}" for s in total))
        for r in result.lines:
            if r.status != "passed":
                reason = re.sub(r"\S*shlo-lit-\w+/(chunk\d+-)?", "",
                                " ".join((r.reason or r.status).split()))[:200]
                known_lines.append(f"{key(path)} {where(r)} {r.status}: {reason}")
                if show:
                    print(f"    {where(r)} {r.status}: {reason}")
                    if r.output:
                        print("      " + "\n      ".join(r.output.strip().splitlines()[:6]))
    runs = sum(total.values())
    print(f"{'total':60s} " + " ".join(f"{s} {total[s]:3d}" for s in total)
          + f"  ({100 * total['passed'] / max(runs, 1):.1f}% of {runs} pass)")
    if write:
        KNOWN_FILE.write_text("# Upstream pass-test runs (file, RUN line#chunk) that do not pass "
                              "yet, with the reason.\n# Regenerate with `python "
                              "tests/passes/upstream.py --write-known`.\n"
                              + "\n".join(known_lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    sys.exit(main(sys.argv[1:]))
