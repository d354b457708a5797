"""Run the `// RUN:` lines of an LLVM lit test file, with upstream tools mapped to shlo's.

A RUN line is a shell pipeline: substitutions (`%s` the file, `%S` its directory, `%t` a
temporary path, `%%`), `%if FEATURE %{ ... %} [%else %{ ... %}]`, pipes, `&&`, redirections
(`>`, `>>`, `<`, `2>&1`, `2>`), `not` (inverts the exit code) and the built-in commands
`FileCheck` (the `filecheck` Python package, run in process), `diff`, `cat`, `echo`, `true`,
`false`. Every other command is a *tool*: a Python callable given by the caller
``tool(argv, stdin_bytes) -> (exit_code, stdout_bytes, stderr_text)`` (shlo's in-process
commands, see :func:`shlo.opt.lit_tools`). Pipelines fail when any command fails
(`set -o pipefail`, as lit runs them).

Each RUN line gets a :class:`LineResult`: ``passed``, ``failed`` (with the failing command and
its output), or ``unsupported`` with the reason (a tool shlo does not have, a flag it cannot
honour, `RUN-DISABLED`); nothing is skipped silently.
"""

from __future__ import annotations

import io
import os
import re
import shlex
import tempfile
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

__all__ = ["LineResult", "FileResult", "run_file", "run_lines", "parse_run_lines", "Tool",
           "Unsupported", "filecheck", "expand_if", "split_chunks"]

Tool = Callable[[Sequence[str], bytes], "tuple[int, bytes, str]"]


class Unsupported(Exception):
    """A RUN line (or a command of it) that cannot be honoured; the message says why."""


@dataclass
class LineResult:
    line: int
    command: str
    status: str            # "passed" | "failed" | "unsupported"
    reason: str = ""       # why it failed / is unsupported
    output: str = ""       # the output of the failing command
    chunk: int | None = None  # 1-based chunk of a `-split-input-file` line run chunk by chunk


@dataclass
class FileResult:
    path: str
    lines: list[LineResult] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(1 for r in self.lines if r.status == status)

    @property
    def passed(self) -> bool:
        return all(r.status != "failed" for r in self.lines)


_RUN_RE = re.compile(r"^\s*//\s*(RUN(?:-DISABLED(?:\([^)]*\))?)?):(.*)$")


def parse_run_lines(text: str) -> list[tuple[int, str, str]]:
    """``(line number, keyword, command)`` for each RUN line (continuations `\\` joined)."""
    out: list[tuple[int, str, str]] = []
    pending: tuple[int, str, str] | None = None
    for i, line in enumerate(text.split("\n"), 1):
        m = _RUN_RE.match(line)
        if not m:
            if pending is not None:
                out.append(pending)
                pending = None
            continue
        kw, cmd = m.group(1), m.group(2).strip()
        if pending is not None:
            n, k, c = pending
            pending = (n, k, c + " " + cmd)
        else:
            pending = (i, kw, cmd)
        if pending[2].endswith("\\"):
            n, k, c = pending
            pending = (n, k, c[:-1].rstrip())
        else:
            out.append(pending)
            pending = None
    if pending is not None:
        out.append(pending)
    return out


def expand_if(cmd: str, features: set[str]) -> str:
    """`%if FEATURE %{ A %} [%else %{ B %}]` -> A or B (nested braces allowed)."""
    while True:
        m = re.search(r"%if\s+([\w!-]+)\s*%\{", cmd)
        if not m:
            return cmd
        body_start = m.end()
        body, after = _braced(cmd, body_start)
        other = ""
        m2 = re.match(r"\s*%else\s*%\{", cmd[after:])
        if m2:
            other, after = _braced(cmd, after + m2.end())
        feat = m.group(1)
        on = (feat[1:] not in features) if feat.startswith("!") else feat in features
        cmd = cmd[:m.start()] + (body if on else other) + cmd[after:]


def _braced(s: str, start: int) -> tuple[str, int]:
    depth = 1
    i = start
    while i < len(s):
        if s.startswith("%{", i):
            depth += 1
            i += 2
            continue
        if s.startswith("%}", i):
            depth -= 1
            if depth == 0:
                return s[start:i], i + 2
            i += 2
            continue
        i += 1
    raise Unsupported("unterminated %if block")


def _substitute(cmd: str, path: str, tmp: str) -> str:
    d = os.path.dirname(os.path.abspath(path))
    subs = {"%s": path, "%S": d, "%t": tmp, "%T": os.path.dirname(tmp), "%p": d, "%%": "%"}
    return re.sub(r"%[sStTp%]", lambda m: subs[m.group(0)], cmd)


# --- shell ---------------------------------------------------------------------------------------


def _tokens(cmd: str) -> list[str]:
    lex = shlex.shlex(cmd, posix=True, punctuation_chars="|&<>")
    lex.whitespace_split = True
    lex.commenters = ""
    toks = list(lex)
    # `2>&1` and `2>` arrive as '2' '>&' ... : rejoin them
    out: list[str] = []
    i = 0
    while i < len(toks):
        t = toks[i]
        if t == "2" and i + 1 < len(toks) and toks[i + 1] in (">", ">&", ">>"):
            nxt = toks[i + 1]
            if nxt == ">&" and i + 2 < len(toks) and toks[i + 2] == "1":
                out.append("2>&1")
                i += 3
                continue
            out.append("2" + nxt)
            i += 2
            continue
        out.append(t)
        i += 1
    return out


@dataclass
class _Cmd:
    argv: list[str]
    stdout: str | None = None
    append: bool = False
    stdin: str | None = None
    stderr: str | None = None
    merge_stderr: bool = False
    negate: bool = False


def _pipelines(tokens: list[str]) -> list[list[_Cmd]]:
    """`a | b && c` -> [[a, b], [c]]."""
    seqs: list[list[_Cmd]] = [[]]
    cur = _Cmd([])
    it = iter(range(len(tokens)))
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t == "|":
            seqs[-1].append(cur)
            cur = _Cmd([])
        elif t == "&&":
            seqs[-1].append(cur)
            seqs.append([])
            cur = _Cmd([])
        elif t in (">", ">>"):
            i += 1
            cur.stdout = tokens[i]
            cur.append = t == ">>"
        elif t == "<":
            i += 1
            cur.stdin = tokens[i]
        elif t == "2>&1":
            cur.merge_stderr = True
        elif t in ("2>", "2>>"):
            i += 1
            cur.stderr = tokens[i]
        elif t in ("||", ";", "&"):
            raise Unsupported(f"shell operator '{t}' is not supported")
        else:
            cur.argv.append(t)
        i += 1
    seqs[-1].append(cur)
    _ = it
    for seq in seqs:
        for c in seq:
            while c.argv and c.argv[0] == "not":
                c.negate = not c.negate
                c.argv = c.argv[1:]
            if not c.argv:
                raise Unsupported("empty command in pipeline")
    return seqs


# --- built-ins -----------------------------------------------------------------------------------


def filecheck(check_file: str, text: str, argv: Sequence[str]) -> tuple[int, str]:
    """FileCheck ``text`` against ``check_file`` with FileCheck's flags ``argv``."""
    try:
        import filecheck  # noqa: F401  (the `filecheck` package, a Python FileCheck)
    except ImportError:
        raise Unsupported("FileCheck needs the `filecheck` package (pip install filecheck)") \
            from None
    from filecheck.finput import FInput
    from filecheck.matcher import Matcher
    from filecheck.options import parse_argv_options
    from filecheck.parser import Parser

    try:
        opts = parse_argv_options(["filecheck", *argv, check_file])
    except RuntimeError as e:
        raise Unsupported(f"FileCheck arguments {list(argv)}: {e}") from None
    empty = text in ("", "\n") and not opts.allow_empty
    if empty:  # LLVM's FileCheck reads the check file first: no check strings wins over this
        opts.allow_empty = True
    m = Matcher(opts, FInput("<stdin>", FInput.canonicalize_line_ends(text)),
                Parser.from_opts(opts))
    err = io.StringIO()
    if empty:
        m.stderr = err
        if m.run() == 2:
            return 2, err.getvalue()
        return 1, "filecheck error: '<stdin>' is empty.\n"
    m.stderr = err
    try:
        rc = m.run()
    except SystemExit as e:  # pragma: no cover - defensive
        rc = int(e.code or 0)
    return rc, err.getvalue()


def _filecheck(argv: list[str], stdin: bytes) -> tuple[int, bytes, str]:
    args = list(argv)
    check = None
    input_file = None
    rest: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a.startswith("--input-file") or a.startswith("-input-file"):
            if "=" in a:
                input_file = a.split("=", 1)[1]
            else:
                i += 1
                input_file = args[i]
        elif a.startswith("--dump-input") or a.startswith("-dump-input"):
            if "=" not in a:
                i += 1
        elif a.startswith("-"):
            rest.append(a)
            if a.lstrip("-") in ("check-prefix", "check-prefixes", "D") and "=" not in a:
                i += 1
                rest.append(args[i])
        elif check is None:
            check = a
        else:
            raise Unsupported(f"FileCheck: unexpected argument '{a}'")
        i += 1
    if check is None:
        raise Unsupported("FileCheck without a check file")
    text = stdin
    if input_file is not None:
        with open(input_file, "rb") as f:
            text = f.read()
    rc, err = filecheck(check, text.decode("utf-8", "replace"), rest)
    return rc, b"", err


def _diff(argv: list[str], stdin: bytes) -> tuple[int, bytes, str]:
    files = [a for a in argv if not a.startswith("-")]
    if len(files) != 2:
        raise Unsupported(f"diff with arguments {argv}")
    with open(files[0], "rb") as f:
        a = f.read()
    with open(files[1], "rb") as f:
        b = f.read()
    if a == b:
        return 0, b"", ""
    import difflib

    try:
        ta, tb = a.decode("utf-8").splitlines(True), b.decode("utf-8").splitlines(True)
        text = "".join(difflib.unified_diff(ta, tb, files[0], files[1]))
    except UnicodeDecodeError:
        n = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        text = f"Binary files {files[0]} and {files[1]} differ (first at byte {n})\n"
    return 1, text.encode(), ""


def _cat(argv: list[str], stdin: bytes) -> tuple[int, bytes, str]:
    if not argv:
        return 0, stdin, ""
    out = b""
    for p in argv:
        with open(p, "rb") as f:
            out += f.read()
    return 0, out, ""


BUILTINS: dict[str, Tool] = {
    "FileCheck": _filecheck, "filecheck": _filecheck, "diff": _diff, "cat": _cat,
    "echo": lambda a, s: (0, (" ".join(a) + "\n").encode(), ""),
    "true": lambda a, s: (0, b"", ""), "false": lambda a, s: (1, b"", ""),
}


# --- running -------------------------------------------------------------------------------------


def _run_pipeline(seq: list[_Cmd], tools: dict[str, Tool]) -> tuple[int, str, str, bool]:
    """Run one pipeline; (exit code: the last failing command's, as with pipefail; the failing
    command to report and its output: the first one but FileCheck, else FileCheck; whether a
    command but FileCheck failed)."""
    data = b""
    status = 0
    failed = ""
    failed_out = ""
    others = False
    for c in seq:
        name = c.argv[0]
        fn = tools.get(name) or BUILTINS.get(name)
        if fn is None:
            raise Unsupported(f"no shlo counterpart for the tool '{name}'")
        stdin = data
        if c.stdin is not None:
            with open(c.stdin, "rb") as f:
                stdin = f.read()
        rc, out, err = fn(c.argv[1:], stdin)
        if c.merge_stderr:
            out = out + err.encode("utf-8", "replace")
            err = ""
        if c.stderr is not None:
            with open(c.stderr, "w", encoding="utf-8") as f:
                f.write(err)
            err = ""
        if c.stdout is not None:
            with open(c.stdout, "ab" if c.append else "wb") as f:
                f.write(out)
            out = b""
        if c.negate:
            rc = 0 if rc != 0 else 1
        if rc != 0:
            status = rc
            if not others:  # keep the first failing tool's report: FileCheck's comes after it
                failed = " ".join(c.argv)
                failed_out = (err + out.decode("utf-8", "replace"))[-4000:]
            others = others or name not in ("FileCheck", "filecheck")
        data = out
    return status, failed, failed_out, others


_SPLIT_RE = re.compile(r"^// -----\s*$", re.M)
_SPLIT_FLAG = re.compile(r"(?:^|\s)--?split-input-file(?:\s|$)")


def split_chunks(text: str) -> list[str]:
    """The chunks of a `-split-input-file` test, each the whole file with every other chunk's
    lines blanked (so line numbers, and the CHECK lines of the chunk alone, stay in place)."""
    lines = text.split("\n")
    marks = [i for i, line in enumerate(lines) if _SPLIT_RE.match(line)]
    bounds = [-1, *marks, len(lines)]
    out = []
    for a, b in zip(bounds, bounds[1:]):
        out.append("\n".join(line if a < i < b else "" for i, line in enumerate(lines)))
    return out


def _run_one(lineno: int, cmd: str, full: str, tools: dict[str, Tool],
             chunk: int | None) -> LineResult:
    try:
        status = 0
        failed = out = ""
        others = False
        for seq in _pipelines(_tokens(full)):
            status, failed, out, others = _run_pipeline(seq, tools)
            if status != 0:
                break
        if status == 0:
            return LineResult(lineno, cmd, "passed", chunk=chunk)
        if chunk is not None and not others and "No check strings found" in out:
            # (only FileCheck failed, for want of this chunk's CHECK lines: the tools before
            # it, -verify-diagnostics included, passed)
            return LineResult(lineno, cmd, "passed", "no CHECK lines in this chunk", chunk=chunk)
        return LineResult(lineno, cmd, "failed", f"'{failed}' exited with {status}", out,
                          chunk=chunk)
    except Unsupported as e:
        return LineResult(lineno, cmd, "unsupported", str(e), chunk=chunk)
    except (OSError, ValueError) as e:
        return LineResult(lineno, cmd, "failed", f"{type(e).__name__}: {e}", chunk=chunk)


def run_lines(path: str, text: str, tools: dict[str, Tool], features: Iterable[str] = (),
              tmpdir: str | None = None, chunks: bool = False) -> FileResult:
    """Run every RUN line of ``text`` (the file at ``path``).

    With ``chunks``, a line with `-split-input-file` runs once per chunk, on a copy of the file
    holding only that chunk (and FileCheck checks only that chunk's CHECK lines): one
    :class:`LineResult` per chunk, so a failure is pinned to its chunk."""
    result = FileResult(path)
    features = set(features)
    own_tmp = tmpdir is None
    tmpdir = tmpdir or tempfile.mkdtemp(prefix="shlo-lit-")
    tmp = os.path.join(tmpdir, os.path.basename(path) + ".tmp")
    try:
        for lineno, kw, cmd in parse_run_lines(text):
            if kw != "RUN":
                result.lines.append(LineResult(lineno, cmd, "unsupported",
                                               f"{kw}: disabled upstream"))
                continue
            try:
                expanded = expand_if(cmd, features)
            except Unsupported as e:
                result.lines.append(LineResult(lineno, cmd, "unsupported", str(e)))
                continue
            if not expanded.strip():
                result.lines.append(LineResult(lineno, cmd, "passed",
                                               "nothing to run (%if on a missing feature)"))
                continue
            if not (chunks and _SPLIT_FLAG.search(expanded)):
                result.lines.append(_run_one(lineno, cmd, _substitute(expanded, path, tmp),
                                             tools, None))
                continue
            for n, chunk in enumerate(split_chunks(text), 1):
                cpath = os.path.join(tmpdir, f"chunk{n}-" + os.path.basename(path))
                with open(cpath, "w", encoding="utf-8", errors="surrogateescape") as f:
                    f.write(chunk)
                result.lines.append(_run_one(lineno, cmd, _substitute(expanded, cpath, tmp),
                                             tools, n))
    finally:
        if own_tmp:
            import shutil

            shutil.rmtree(tmpdir, ignore_errors=True)
    return result


def run_file(path: str, tools: dict[str, Tool], features: Iterable[str] = (),
             chunks: bool = False) -> FileResult:
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        return run_lines(path, f.read(), tools, features, chunks=chunks)
