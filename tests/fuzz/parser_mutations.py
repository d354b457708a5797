"""Family (a): mutations of program text (bytes, tokens, numbers, truncation, invalid UTF-8, deep
nesting) and of portable artifacts, given to ``shlo.parse``/``shlo.load``. A program that parses
is printed (pretty and generic), parsed again and printed again: the two prints must be equal;
it is also verified (the verifier must not fail with a Python exception)."""

from __future__ import annotations

import os
import random
import re
import tempfile
from typing import Callable

from .contract import Defect

TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|0x[0-9A-Fa-f]+|-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|'
                   r"[%^@#!]?[\w.$-]+|->|\s+|.", re.S)
NUMBER = re.compile(r"(?<![\w.%#^@!])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.])")
# Interesting replacements for a number.
NUMBERS = ["9" * 5000, "-" + "9" * 5000, "0x" + "F" * 300, "1" + "0" * 40, str(2 ** 63),
           str(-2 ** 63 - 1), str(2 ** 64), str(2 ** 31), "2147483648", "4294967296", "-1", "0",
           "00", "011", "05", "1.5", "-0.0", "1e400", "-1e-400", "0x", "0x1p3", "nan", "inf",
           "1.", "1e", "18446744073709551616", "0x123456789", "0xFFFFFFFFFFFFFFFFFFFF", "-0",
           "3000000000", "1e309"]
# Interesting tokens to insert or substitute.
TOKENS = ["{", "}", "(", ")", "<", ">", "[", "]", ":", ",", "=", "x", "?", "*", "->", "%0",
          "%a", "^bb0", "#loc", "#loc1", "loc(", "!quant.uniform<i8:f32, 0.5:3>", "dense<",
          "tensor<", "tuple<", "complex<", "array<i64:", "!stablehlo.token", "\"", "\\",
          "@main", "i0", "i6", "i65", "f7", "ui1", "si0", "!a.b", "#a.b", "unit", "true",
          "false", "none", "index", "...", "#stablehlo.gather<", "#stablehlo<", "sparse<",
          "dense_resource<blob>", "{-#", "#-}", "//", "\n", "\x00", "\u2028", "é", "0x",
          "stablehlo.add", "stablehlo.nope", "\"stablehlo.add\"", "func.func", "module",
          "attributes", "private", "->", "%x:2", "#0", "#9", "%1#5", "[[", "]]", "e5m-1",
          "tensor<2x i6>", "tensor<?x?xf32, #stablehlo.bounds<3, ?>>", "vector<2xf32>",
          "memref<2xf32>", "tensor<*xf32>", "tensor<0x0xf32>"]


def _tokens(text: str) -> list[str]:
    return TOKEN.findall(text)


def m_byte(rng: random.Random, text: str) -> str:
    """Flip, delete, insert or duplicate a few characters."""
    s = list(text)
    for _ in range(rng.randint(1, 4)):
        if not s:
            break
        i = rng.randrange(len(s))
        r = rng.random()
        if r < 0.3:
            del s[i]
        elif r < 0.6:
            s.insert(i, chr(rng.choice([rng.randrange(32, 127), rng.randrange(0, 0x800)])))
        elif r < 0.8:
            s[i] = chr(rng.randrange(32, 127))
        else:
            j = min(len(s), i + rng.randint(1, 20))
            s[i:i] = s[i:j]
    return "".join(s)


def m_token(rng: random.Random, text: str) -> str:
    """Delete, duplicate, swap or replace whole tokens (with tokens of the program or from
    TOKENS)."""
    toks = _tokens(text)
    if not toks:
        return text
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(toks))
        r = rng.random()
        if r < 0.25:
            del toks[i]
        elif r < 0.45:
            toks.insert(i, toks[i])
        elif r < 0.65:
            j = rng.randrange(len(toks))
            toks[i], toks[j] = toks[j], toks[i]
        elif r < 0.85:
            toks[i] = rng.choice(TOKENS)
        else:
            toks[i] = rng.choice(toks)
        if not toks:
            break
    return "".join(toks)


def m_number(rng: random.Random, text: str) -> str:
    """Replace one or two numbers with huge, negative, malformed or leading-zero ones."""
    spans = [m.span() for m in NUMBER.finditer(text)]
    if not spans:
        return text
    for a, b in sorted(rng.sample(spans, min(len(spans), rng.randint(1, 2))), reverse=True):
        text = text[:a] + rng.choice(NUMBERS) + text[b:]
    return text


def m_truncate(rng: random.Random, text: str) -> str:
    return text[:rng.randrange(len(text) + 1)]


def _nests(n: int) -> list[tuple[str, str]]:
    return [("tensor<tuple<" * n, ">" * n), ("[" * n, "]" * n), ("(" * n, ")" * n),
            ("{" * n, "}" * n), ("tuple<" * n, ">" * n), ("[" * n + "1", "]" * n),
            ('"t.op"() ({\n' * n, "}) : () -> ()\n" * n), ("loc(fused[" * n, "])" * n)]


def m_deep(rng: random.Random, text: str) -> str:
    n = rng.choice([100, 1000, 5000, 50000])
    lo, hi = rng.choice(_nests(n))
    toks = _tokens(text)
    i = rng.randrange(len(toks) + 1)
    if rng.random() < 0.5:
        return "".join(toks[:i]) + lo + hi + "".join(toks[i:])
    return "".join(toks[:i]) + lo + "".join(toks[i:])


def m_splice(rng: random.Random, text: str, other: str) -> str:
    """The start of one program followed by the end of another."""
    return text[:rng.randrange(len(text) + 1)] + other[rng.randrange(len(other) + 1):]


TEXT_MUTATORS: dict[str, Callable[[random.Random, str], str]] = {
    "byte": m_byte, "token": m_token, "number": m_number, "truncate": m_truncate,
    "deep": m_deep}


def m_utf8(rng: random.Random, text: str) -> bytes:
    """The program's UTF-8 with invalid sequences inserted."""
    data = bytearray(text.encode("utf-8"))
    for _ in range(rng.randint(1, 3)):
        data[rng.randrange(len(data) + 1):0] = rng.choice(
            [b"\xff", b"\xfe\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80"])
    return bytes(data)


def m_bytecode(rng: random.Random, data: bytes) -> bytes:
    """A portable artifact with a few bytes changed, deleted or cut."""
    b = bytearray(data)
    r = rng.random()
    if r < 0.2:
        return bytes(b[:rng.randrange(len(b) + 1)])
    for _ in range(rng.randint(1, 6)):
        i = rng.randrange(len(b))
        if rng.random() < 0.7:
            b[i] = rng.choice([0, 0xFF, 0x7F, 0x80, rng.randrange(256)])
        else:
            del b[i]
    return bytes(b)


# --- the contract for one input ---------------------------------------------------------------


def check_parsed(module) -> None:  # noqa: ANN001 - a shlo Module
    """Print -> parse -> print is a fixpoint (generic always; pretty for a valid module: an
    op's custom parser checks its inherent attributes as MLIR's does, so the pretty form of an
    op the verifier rejects, e.g. `batch_group_count = 0`, need not read back); the verifier
    runs cleanly."""
    import shlo
    from shlo.errors import ShloError
    from shlo.verifier import collect

    valid = not collect(module)
    for generic in ((False, True) if valid else (True,)):
        printed = shlo.format(module, generic=generic)
        try:
            again = shlo.parse(printed)
        except ShloError as e:
            first = str(e).splitlines()[0]
            raise Defect("roundtrip", f"roundtrip {'generic' if generic else 'pretty'}: "
                         f"{re.sub(r'^[^ ]*: error: ', '', first)[:80]}",
                         f"printed form does not parse: {first}\n{printed[:2000]}") from None
        reprinted = shlo.format(again, generic=generic)
        if reprinted != printed:
            line = next((a for a, b in zip(printed.splitlines(), reprinted.splitlines())
                         if a != b), "")
            raise Defect("roundtrip", f"roundtrip {'generic' if generic else 'pretty'} differs: "
                         f"{re.sub(r'[%#@]?[0-9]+', 'N', line.strip())[:60]}",
                         f"print(parse(print(m))) != print(m) at: {line.strip()[:200]}")


def parse_text_trial(text: str) -> Callable[[], str | None]:
    def trial() -> str | None:
        import shlo

        check_parsed(shlo.parse(text))
        return None
    return trial


def load_bytes_trial(data: bytes) -> Callable[[], str | None]:
    """shlo.load of a file holding ``data`` (invalid UTF-8 text, or a damaged artifact)."""
    def trial() -> str | None:
        import shlo

        fd, path = tempfile.mkstemp(suffix=".mlir")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            module = shlo.load(path)
        finally:
            os.unlink(path)
        check_parsed(module)
        return None
    return trial


def parse_bytes_trial(data: bytes) -> Callable[[], str | None]:
    def trial() -> str | None:
        import shlo

        check_parsed(shlo.parse(data))
        return None
    return trial


def cases(rng: random.Random, programs: list[str], bytecodes: list[bytes]):
    """Endless (name, description, trial) triples."""
    while True:
        seed = rng.choice(programs)
        r = rng.random()
        if r < 0.06:
            data = m_utf8(rng, seed)
            yield "utf8", repr(data[:3000]), load_bytes_trial(data)
        elif r < 0.12 and bytecodes:
            data = m_bytecode(rng, rng.choice(bytecodes))
            yield "bytecode", f"bytes of length {len(data)}", parse_bytes_trial(data)
        elif r < 0.18:
            text = m_splice(rng, seed, rng.choice(programs))
            yield "splice", text, parse_text_trial(text)
        else:
            kind = rng.choice(list(TEXT_MUTATORS))
            text = TEXT_MUTATORS[kind](rng, seed)
            if kind != "deep" and rng.random() < 0.3:  # two mutations at once
                text = TEXT_MUTATORS[rng.choice(["byte", "token", "number"])](rng, text)
            yield kind, text, parse_text_trial(text)
