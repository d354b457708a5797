"""`shlo verify --verify-diagnostics`: check a file's diagnostics against its annotations.

A test file marks the diagnostics it expects with ``// expected-error@+N {{message}}`` (also
``-note``, ``-remark``, ``-warning``; ``@-N``, ``@above``, ``@below``; ``expected-error-re``
with ``{{regex}}`` parts), as for ``mlir-opt -verify-diagnostics``. Each chunk of the file (split
on ``// -----`` with ``--split-input-file``) is parsed and verified (shlo/verifier.py), and its
diagnostics are matched against its annotations.
"""

from __future__ import annotations

import sys

import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from ..errors import Diagnostic, format_location
from ..syntax.split import read_source, source_name, split_cases
from ..verifier import verify_text

__all__ = ["Expectation", "parse_expectations", "check_expectations", "match_diagnostics", "ChunkReport",
           "verify_file_diagnostics", "main"]

_LABEL_RE = re.compile(r"\((?:[CI]\d+[^)]*)\) ")

_EXPECT_RE = re.compile(
    r"expected-(error|note|remark|warning)(-re)? *(?:@([+-]\d+|above|below))? *\{\{(.*)\}\}\s*$")


@dataclass
class Expectation:
    """One `// expected-error@+N {{message}}` annotation."""

    kind: str       # error | note | remark | warning
    line: int       # the line the diagnostic must be on (1-based, in the file)
    message: str
    regex: bool
    source_line: int
    matched: bool = False

    def pattern(self) -> re.Pattern[str]:
        """The message as a regex: literal text, `{{...}}` parts as regexes (for -re)."""
        if not self.regex:
            return re.compile(re.escape(self.message))
        out, pos = [], 0
        for m in re.finditer(r"\{\{(.*?)\}\}", self.message):
            out.append(re.escape(self.message[pos:m.start()]))
            out.append(f"(?:{m.group(1)})")
            pos = m.end()
        out.append(re.escape(self.message[pos:]))
        return re.compile("".join(out))

    def matches(self, message: str) -> bool:
        p = self.pattern()
        return bool(p.search(message) or p.search(_LABEL_RE.sub("", message, count=1)))


def parse_expectations(text: str) -> list[Expectation]:
    """The annotations of ``text`` (line numbers relative to ``text``)."""
    out: list[Expectation] = []
    for i, line in enumerate(text.split("\n"), 1):
        if "expected-" not in line:
            continue
        m = _EXPECT_RE.search(line)
        if not m:
            continue
        off = m.group(3)
        if off is None:
            target = i
        elif off == "above":
            target = i - 1
        elif off == "below":
            target = i + 1
        else:
            target = i + int(off)
        out.append(Expectation(m.group(1), target, m.group(4), bool(m.group(2)), i))
    return out


@dataclass
class ChunkReport:
    """The outcome of checking the diagnostics of one chunk against its annotations."""

    file: str
    first_line: int
    expectations: list[Expectation]
    diagnostics: list[Diagnostic]
    mismatches: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.mismatches

    @property
    def annotated(self) -> bool:
        return any(e.kind == "error" for e in self.expectations)

    def lines_hit(self) -> bool:
        """Every annotated error line got at least one error (messages ignored)."""
        lines = {d.line for d in self.diagnostics if d.severity == "error"}
        return all(e.line in lines for e in self.expectations if e.kind == "error")


def _flatten(diags: Iterable[Diagnostic], with_notes: bool) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for d in diags:
        out.append(d)
        if with_notes:
            out.extend(d.notes)
    return out


def check_expectations(path: str, text: str, first_line: int = 1,
                       strict_messages: bool = False) -> ChunkReport:
    """Verify ``text`` (a file or a chunk padded so that line numbers match the file) and match
    its diagnostics against its annotations, as `mlir-opt -verify-diagnostics` does: every
    annotation needs a diagnostic of its kind on its line, and every diagnostic an annotation.
    With ``strict_messages`` the annotated text must also be found in the message (`{{...}}`
    parts of `expected-error-re` are regexes; the spec label `(Cn)` is ignored); otherwise any
    diagnostic on the line matches every annotation of the line."""
    expectations = parse_expectations(text)
    diags = verify_text(text, path)
    report = ChunkReport(path, first_line, expectations, diags)
    report.mismatches = match_diagnostics(expectations, diags, path, strict_messages)
    return report


def match_diagnostics(expectations: list[Expectation], diags: Iterable[Diagnostic], path: str,
                      strict_messages: bool = True, first_line: int = 1,
                      implicit: Any = None) -> list[str]:
    """The mismatches between ``diags`` and ``expectations``, as `-verify-diagnostics` reports
    them: every diagnostic needs an annotation of its kind on its line, and every annotation a
    diagnostic. Notes are checked only when some are expected (shlo adds notes that say why).
    A diagnostic at ``implicit`` (MLIR's implicit module) or without a line matches annotations
    above ``first_line``."""
    want_notes = any(e.kind == "note" for e in expectations)
    flat = _flatten(diags, want_notes)
    problems: list[str] = []
    for d in flat:
        line = None if implicit is not None and d.location == implicit else (d.line or None)
        hits = [e for e in expectations if e.kind == d.severity and
                ((line is None and e.line < first_line) or e.line == line) and
                (not strict_messages or e.matches(d.message))]
        for e in hits:
            e.matched = True
        if not hits:
            problems.append(f"{format_location(d.location, path)}: error: unexpected "
                            f"{d.severity}: {d.message}")
    for e in expectations:
        if not e.matched and strict_messages and _INFER_FAILURE in e.message:
            # MLIR adds "failed to infer returned types" to the error of a type inference; shlo
            # reports the error itself, which any diagnostic of the line stands for.
            e.matched = any(d.severity == e.kind and d.line == e.line for d in flat)
        if not e.matched:
            problems.append(f"{path}:{e.line}: error: expected {e.kind} \"{e.message}\""
                            f" was not produced")
    return problems


_INFER_FAILURE = "failed to infer returned types"


def _split(text: str, split: bool) -> list[tuple[int, str]]:
    return list(split_cases(text)) if split else [(1, text)]


def verify_file_diagnostics(path: str, text: str | None = None, split: bool = True,
                            strict_messages: bool = False) -> list[ChunkReport]:
    """Check every chunk of the file at ``path`` against its annotations."""
    if text is None:
        text = read_source(path)
    path = source_name(path)
    return [check_expectations(path, chunk, line, strict_messages)
            for line, chunk in _split(text, split)]


def main(paths: Iterable[str], split: bool = False, strict_messages: bool = True) -> int:
    """`shlo verify --verify-diagnostics FILE...`: one line per mismatch between diagnostics
    and annotations on stderr (as mlir-opt reports them, message text checked unless
    ``strict_messages`` is off), then `N passed, N failed` over the chunks on stdout; 1 when
    a chunk failed."""
    passed = failed = 0
    for path in paths:
        for report in verify_file_diagnostics(path, split=split, strict_messages=strict_messages):
            if report.passed:
                passed += 1
            else:
                failed += 1
                for line in report.mismatches:
                    print(line, file=sys.stderr)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0
