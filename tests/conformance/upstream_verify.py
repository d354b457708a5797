"""Measure shlo's agreement with upstream's verifier tests (issue 16, item 5); run by hand:

    .venv/bin/python tests/conformance/upstream_verify.py /work/.mirror/openxla+stablehlo/repo
    .venv/bin/python tests/conformance/upstream_verify.py ~/stablehlo --failures

The argument is an upstream checkout (a work tree with ``stablehlo/tests/``) or a bare git
directory (the files are read from ``REV``, HEAD unless ``--rev`` says otherwise). Each file of the
core set is checked as ``shlo verify --verify-diagnostics --split-input-file`` checks it, once
matching by line only (``--loose-messages``) and once with upstream's message text too, and the
failed chunks are counted per file. Nothing is written to the repository; the files are read into
memory only.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from shlo.testing.diagnostics import verify_file_diagnostics

# The core files of issue 16 item 5: upstream's op and verifier tests with annotated diagnostics.
CORE = ["ops_stablehlo", "ops_stablehlo_quantized", "infer_stablehlo", "ops_dot_general_algorithms",
        "ops_chlo", "infer_chlo", "verify_async_ops", "verify_bounds", "verify_convolution",
        "verify_dynamic_conv", "verify_reduce", "verify_reduce_window",
        "verify_replica_groups_mesh_axes", "verify_scatter", "verify_select_and_scatter",
        "verify_while", "ops_stablehlo_bounded_dynamism"]


def read_upstream(root: Path, name: str, rev: str) -> str | None:
    rel = f"stablehlo/tests/{name}.mlir"
    if (root / rel).is_file():
        return (root / rel).read_text(encoding="utf-8")
    r = subprocess.run(["git", "--git-dir", str(root), "show", f"{rev}:{rel}"],
                       capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("upstream", type=Path, help="an upstream checkout or bare git directory")
    ap.add_argument("--rev", default="HEAD", help="revision to read from a bare git directory")
    ap.add_argument("--failures", action="store_true", help="print the mismatches too")
    ap.add_argument("files", nargs="*", help="only these files of the core set")
    a = ap.parse_intermixed_args(argv)
    names = a.files or CORE
    print(f"{'file':38} {'chunks':>6} {'failed(line)':>13} {'failed(text)':>13}")
    total = [0, 0, 0]
    for name in names:
        text = read_upstream(a.upstream, name, a.rev)
        if text is None:
            print(f"{name:38} missing")
            continue
        path = f"{name}.mlir"
        loose = verify_file_diagnostics(path, text, strict_messages=False)
        strict = verify_file_diagnostics(path, text, strict_messages=True)
        nl = sum(not r.passed for r in loose)
        ns = sum(not r.passed for r in strict)
        total[0] += len(strict)
        total[1] += nl
        total[2] += ns
        print(f"{name:38} {len(strict):6} {nl:13} {ns:13}")
        if a.failures:
            for r in strict:
                for m in r.mismatches:
                    print("   ", m)
    print(f"{'total':38} {total[0]:6} {total[1]:13} {total[2]:13}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
