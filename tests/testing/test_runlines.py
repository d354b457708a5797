"""The RUN-line runner (shlo.testing.runlines) with stand-in tools: substitutions, pipes,
redirections, `not`, `diff`, FileCheck prefixes, `%if`, and the reasons it reports."""

import pytest

from shlo.testing.runlines import (
    Unsupported, expand_if, parse_run_lines, run_lines,
)


def upper(argv, stdin):
    text = stdin.decode() if stdin else open(argv[0]).read()
    return 0, text.upper().encode(), ""


def fail(argv, stdin):
    return 3, b"", "fail: something went wrong\n"


def picky(argv, stdin):
    if "--unknown" in argv:
        raise Unsupported("picky: flag --unknown has no counterpart")
    return 0, b"ok\n", ""


TOOLS = {"upper": upper, "fail": fail, "picky": picky}


def _run(tmp_path, body, features=()):
    p = tmp_path / "case.mlir"
    p.write_text(body)
    return run_lines(str(p), body, TOOLS, features)


def test_parse_continuations_and_disabled():
    text = "// RUN: a \\\n// RUN:   b\n// RUN-DISABLED(#1): c\nx\n// RUN: d\n"
    assert parse_run_lines(text) == [(1, "RUN", "a b"), (3, "RUN-DISABLED(#1)", "c"),
                                     (5, "RUN", "d")]


def test_expand_if():
    assert expand_if("%if asserts %{ x %}", {"asserts"}).strip() == "x"
    assert expand_if("%if asserts %{ x %} %else %{ y %}", set()).strip() == "y"
    assert expand_if("%if !asserts %{ x %}", set()).strip() == "x"


def test_pipe_to_filecheck(tmp_path):
    r = _run(tmp_path, "// RUN: upper %s | FileCheck %s\n// CHECK: // RUN: UPPER\n")
    assert [x.status for x in r.lines] == ["passed"], r.lines


def test_filecheck_prefix_and_mismatch(tmp_path):
    body = ("// RUN: upper %s | FileCheck %s --check-prefix=LOUD\n"
            "// RUN: upper %s | FileCheck %s\n"
            "// LOUD: CHECK: NOT THERE\n"
            "// CHECK: not there either\n")
    r = _run(tmp_path, body)
    assert [x.status for x in r.lines] == ["passed", "failed"]
    assert "FileCheck" in r.lines[1].reason


def test_filecheck_reads_check_strings_before_input():
    """As LLVM's FileCheck: no check strings is reported even for an empty input (a
    `-split-input-file` chunk with only expected errors prints nothing), and an empty input
    with check strings is still an error."""
    from shlo.testing.runlines import filecheck

    rc, out = filecheck(__file__, "", ["--check-prefix=NOPREFIXHERE"])
    assert rc != 0 and "No check strings found" in out
    rc, out = filecheck(__file__, "", [])
    assert rc != 0 and "is empty" in out


def test_redirect_tmp_and_diff(tmp_path):
    body = ("// RUN: upper %s > %t.0\n"
            "// RUN: upper < %s > %t.1\n"
            "// RUN: diff %t.0 %t.1\n"
            "// RUN: cat %s > %t.2\n"
            "// RUN: not diff %t.0 %t.2\n")
    r = _run(tmp_path, body)
    assert [x.status for x in r.lines] == ["passed"] * 5, r.lines


def test_not_and_failures(tmp_path):
    body = ("// RUN: fail\n"
            "// RUN: not fail\n"
            "// RUN: not fail 2>&1 | FileCheck %s\n"
            "// CHECK: something went wrong\n"
            "// RUN: fail | upper %s\n")
    r = _run(tmp_path, body)
    assert [x.status for x in r.lines] == ["failed", "passed", "passed", "failed"]
    assert "exited with 3" in r.lines[0].reason
    assert "something went wrong" in r.lines[0].output


def test_unsupported_is_reported_with_reason(tmp_path):
    body = ("// RUN: no-such-tool %s\n"
            "// RUN: picky --unknown\n"
            "// RUN-DISABLED: upper %s\n"
            "// RUN: picky && upper %s | FileCheck %s --check-prefix=NONE\n"
            "// NONE: RUN\n")
    r = _run(tmp_path, body)
    assert [x.status for x in r.lines] == ["unsupported", "unsupported", "unsupported",
                                           "passed"]
    assert "no-such-tool" in r.lines[0].reason
    assert "--unknown" in r.lines[1].reason
    assert "disabled" in r.lines[2].reason


def test_if_feature(tmp_path):
    body = "// RUN: %if asserts %{ fail %}\n"
    assert _run(tmp_path, body, {"asserts"}).lines[0].status == "failed"
    r = _run(tmp_path, body)
    assert r.lines[0].status == "passed" and "missing feature" in r.lines[0].reason


@pytest.mark.parametrize("sub,expected", [("%%", "%"), ("%S", None)])
def test_substitutions(tmp_path, sub, expected):
    body = f"// RUN: echo {sub} | FileCheck %s\n// CHECK: {expected or tmp_path}\n"
    r = _run(tmp_path, body)
    assert r.lines[0].status == "passed", r.lines
