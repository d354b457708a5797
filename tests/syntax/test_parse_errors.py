"""Malformed programs of the official corpus are rejected with an error on the annotated line.

verify/print_types_invalid.mlir is the upstream parser/printer negative test: every case in it
must raise ParseError on the line its `// expected-error@+N {{...}}` annotation names. Cases of
the other verify files whose annotated error is syntactic (upstream reports it while parsing:
unknown enum cases, malformed dimension numbers, unknown types, bad bounds) are checked too.
Verifier errors (constraints of valid syntax) are not the parser's business.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import shlo

VERIFY = Path(__file__).resolve().parents[2] / ".." / "shared" / "conformance" / "verify"

pytestmark = pytest.mark.skipif(not VERIFY.is_dir(), reason="no ../shared/conformance")

_ANNOTATION = re.compile(r"//\s*expected-error\s*(@[+-]\d+|@above|@below)?\s*\{\{(.*?)\}\}")
_SPLIT = re.compile(r"^// -----.*$", re.M)

# Messages of syntactic errors in the verify files (the parser must reject these chunks).
_SYNTACTIC = re.compile(
    r"^(custom op|expected '|expected non-function|expected one of|duplicated `|"
    r"unknown stablehlo type|illegal quantized dimension|Static dimension \d+ cannot have a "
    r"bound|Bounds length)")


def annotations(chunk: str) -> list[tuple[int, str]]:
    """(line, message) of each expected-error annotation of a chunk."""
    out = []
    for ln, line in enumerate(chunk.split("\n"), 1):
        for m in _ANNOTATION.finditer(line):
            off = m.group(1)
            if off is None:
                target = ln
            elif off == "@above":
                target = ln - 1
            elif off == "@below":
                target = ln + 1
            else:
                target = ln + int(off[1:])
            out.append((target, m.group(2)))
    return out


def cases(only_syntactic: bool) -> list[tuple[str, str, list[tuple[int, str]]]]:
    out = []
    for f in sorted(VERIFY.glob("*.mlir")):
        for i, chunk in enumerate(_SPLIT.split(f.read_text())):
            ann = annotations(chunk)
            if not ann:
                continue
            if f.name == "print_types_invalid.mlir":
                if "'stablehlo.concatenate' op expected 1 or more" in ann[0][1]:
                    continue  # a verifier error (C3 of concatenate), not a syntax error
                out.append((f"{f.name}#{i}", chunk, ann))
            elif not only_syntactic or any(_SYNTACTIC.match(msg) for _, msg in ann):
                out.append((f"{f.name}#{i}", chunk, ann))
    return out


SYNTAX_CASES = cases(only_syntactic=True) if VERIFY.is_dir() else []


@pytest.mark.parametrize("name, chunk, ann", SYNTAX_CASES, ids=[c[0] for c in SYNTAX_CASES])
def test_rejected_on_the_annotated_line(name, chunk, ann):
    with pytest.raises(shlo.ParseError) as info:
        shlo.parse(chunk, name)
    line = info.value.location.file_line_col()[1]
    assert line in [t for t, _ in ann], f"{info.value} (expected line {[t for t, _ in ann]})"


def test_print_types_invalid_is_fully_covered():
    names = [c[0] for c in SYNTAX_CASES if c[0].startswith("print_types_invalid")]
    assert len(names) >= 20


def test_errors_carry_the_expected_wording():
    chunk = next(c for n, c, _ in SYNTAX_CASES if "dense_array_nested" in c)
    with pytest.raises(shlo.ParseError, match=r"custom op 'stablehlo.transpose' expected "
                                              r"integer value but found '\['"):
        shlo.parse(chunk)
