"""The Python source of a block's generated function (:class:`Emitter`, used by
:class:`shlo.interpreter.evaluator.CompiledBlock`): one line per op, loops as Python loops,
small callees inlined, 0-d integer loop state as Python ints (:mod:`.scalars`)."""

from __future__ import annotations

import itertools
import operator
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ..ir import Operation
from . import scalars
from .observing import GENERATED as _GENERATED

if TYPE_CHECKING:  # pragma: no cover
    from .evaluator import CompiledBlock

__all__ = ["Emitter"]


# Python operators that kernels give as their ``direct`` function: the generated code writes
# them as the operator (one bytecode instead of a call; the same computation).
_INFIX: dict[Any, str] = {
    operator.add: "+", operator.sub: "-", operator.mul: "*", operator.lt: "<",
    operator.le: "<=", operator.gt: ">", operator.ge: ">=", operator.eq: "==",
    operator.ne: "!=", operator.truediv: "/",
}
_PREFIX: dict[Any, str] = {operator.neg: "-"}  # the same for unary operators

_INFIX_TEXT = frozenset(_INFIX.values())
_BOOL = np.dtype(bool)

# A callee of at most this many steps (its regions included) is inlined into a loop body (and
# one of at most _INLINE_ANYWHERE steps everywhere): JAX's `lax.scan` calls three small
# functions per step.
_INLINE_IN_LOOPS = 256
_INLINE_ANYWHERE = 4


class _Line:
    """What the emitter knows of a line: its indent, the variables it reads and writes, and
    for a kernel call the kernel (``kern``) and the global name the line calls it by."""

    __slots__ = ("assignment", "callee", "indent", "kern", "reads", "writes")

    def __init__(self, indent: int, reads: Sequence[str], writes: Sequence[str],
                 kern: Any = None, callee: str | None = None, assignment: bool = False) -> None:
        self.indent, self.reads, self.writes = indent, tuple(reads), tuple(writes)
        self.kern, self.callee, self.assignment = kern, callee, assignment


class Emitter:
    """The Python source of one generated function: one line per step, values in local
    variables (much faster than a frame list; each deleted after its last use, so a long
    function holds only its live tensors). The op of each line is kept (``_line_ops``) so
    that the line of a failing step tells which op failed.

    `while`, `if` and `case` bodies and small callees are emitted in place (their kernels say
    how with an ``inline`` attribute): a loop then runs as a Python `while` over local
    variables, with no call, list or tuple per iteration (`for _nK in _count():` when the
    context counts iterations: ``_nK`` is the iteration, for a time limit's message and a
    trace; ``_line_ctx`` gives each line's iteration expression and counted loops).

    Observed (a context with an observer), every op is followed by its record:
    ``_t = _rec(key, iteration, _t, (operands), [results])`` (``_const`` for a constant), and
    an op running other ops is bracketed by ``_oN = _open(key, iteration, _t)`` and
    ``_t = _close(_oN, (operands), [results])``; ``_t`` is the clock at the end of the last
    record (the next op's start), the function's first line fetches the run's recorder.
    Loops stay loops and small callees stay inlined; only ``_in_place`` is left out (a
    recorded value is never written again).
    """

    def __init__(self, root: "CompiledBlock") -> None:
        ctx = root.ctx
        self.observed, self.counted, self.compiled = (ctx.observer is not None, ctx.counted,
                                                      ctx.compiled)
        self.line_ops: dict[int, Operation] = {}
        # counted: per line, the iteration expression of its op and the loops around it
        self.line_ctx: dict[int, tuple[str, tuple[tuple[Operation, str], ...]]] = {}
        self.env: dict[str, Any] = {"_self": root, "_line_ops": self.line_ops,
                                    "_line_ctx": self.line_ctx, "_count": itertools.count}
        self.lines: list[str] = []
        self.info: list[_Line] = []
        self.n = 0
        self.stack: list[CompiledBlock] = [root]
        self.loops = 0
        self.constants: set[str] = set()  # global names standing for constant values
        self.it = "_n"  # the iteration of the ops being emitted (observed runs)
        self.around: tuple[tuple[Operation, str], ...] = ()  # the counted loops around them
        # variables holding Python ints/bools (interpreter/scalars.py) and their numpy dtypes;
        # ``escaped``: a line read one where a numpy value is needed (the loop is re-emitted)
        self.py: dict[str, Any] = {}
        self.escaped = False
        self.attempts = 0  # loops being emitted with Python ints (the innermost included)
        self._py_consts: dict[str, str] = {}
        # Python-int loop variables bounded in the loop body being emitted by its exit test
        # ``w < x`` or ``w <= x``: w -> (the test, x's value when a constant); ``_compared``:
        # the last comparison emitted on Python ints (result, test, operands, their values
        # when constants)
        self.bounded: dict[str, tuple[str, int | None]] = {}
        self._compared: tuple[str, str, list[str], list[int | None]] | None = None

    def fresh(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def obj(self, x: Any, prefix: str) -> str:
        name = self.fresh(prefix)
        self.env[name] = x
        return name

    def add(self, indent: int, text: str, op: Operation | None = None,
            reads: Sequence[str] = (), writes: Sequence[str] = (), kern: Any = None,
            callee: str | None = None, assignment: bool = False, py_ok: bool = False) -> None:
        """Append a line; ``py_ok``: it may read Python scalars (else reading one is an
        escape, see :mod:`.scalars`)."""
        if self.py and not py_ok and any(r in self.py for r in reads):
            self.escaped = True
        self.lines.append("    " * indent + text)
        self.info.append(_Line(indent, reads, writes, kern, callee, assignment))
        if op is not None:
            self.line_ops[len(self.lines)] = op
            if self.counted:
                self.line_ctx[len(self.lines)] = (self.it, self.around)

    def record(self, indent: int, op: Operation, key: int, args: list[str],
               res: list[str]) -> None:
        """(Observed.) ``op`` ran: ``_t = _rec(key, iteration, start, operands, results)``."""
        self.add(indent, f"_t = _rec({key}, {self.it}, _t, {_tuple(args)}, [{', '.join(res)}])",
                 op, args + res)

    def open(self, indent: int, op: Operation, key: int) -> str:
        """(Observed.) ``op``, which runs other ops, begins: ``_oN = _open(key, iteration,
        start)``; returns the slot's variable."""
        slot = self.fresh("_o")
        self.add(indent, f"{slot} = _open({key}, {self.it}, _t)", op)
        return slot

    def close(self, indent: int, op: Operation, slot: str, args: list[str],
              res: list[str]) -> None:
        self.add(indent, f"_t = _close({slot}, {_tuple(args)}, [{', '.join(res)}])", op,
                 args + res)

    def assign(self, indent: int, targets: Sequence[str], values: Sequence[str],
               op: Operation, transfer: bool = True) -> None:
        """``targets = values`` (one line; nothing when there are none). A target of a
        Python scalar is one (``transfer``; else the values must be numpy ones)."""
        if targets:
            self.add(indent, f"{', '.join(targets)}, = {', '.join(values)},", op, values,
                     targets, assignment=True, py_ok=transfer)
            if self.py and transfer:
                for t, v in zip(targets, values):
                    if v in self.py:
                        self.py[t] = self.py[v]

    def step(self, indent: int, op: Operation, kern: Any, args: list[str],
             res: list[str]) -> None:
        """The line running ``kern`` on ``args`` into ``res`` (see :meth:`CompiledBlock.emit`)."""
        direct = getattr(kern, "direct", None) if len(res) == 1 and self.compiled else None
        if direct is not None:
            infix = _INFIX.get(direct) if len(args) == 2 else None
            if infix is not None and self.py and self._py_infix(indent, op, infix, args, res[0]):
                return
            prefix = _PREFIX.get(direct) if len(args) == 1 else None
            if prefix is not None:
                self.add(indent, f"{res[0]} = {prefix}{args[0]}", op, args, res)
            elif infix is not None:
                self.add(indent, f"{res[0]} = {args[0]} {infix} {args[1]}", op, args, res)
            else:
                d = self.obj(direct, "d")
                self.add(indent, f"{res[0]} = {d}({', '.join(args)})", op, args, res, kern, d)
            return
        k = self.obj(kern, "k")
        call = f"{k}({', '.join(args)})"
        if len(res) == 1:
            self.add(indent, f"{res[0]} = {call}[0]", op, args, res, kern, k)
        elif res:
            self.add(indent, f"{''.join(f'{o}, ' for o in res)}= {call}", op, args, res)
        else:
            self.add(indent, call, op, args)

    def _py_infix(self, indent: int, op: Operation, infix: str, args: list[str],
                  res: str) -> bool:
        """Emit integer ``infix`` on Python ints (:mod:`.scalars`): True when done (an
        operand is a Python int, the other one too or a constant of its dtype)."""
        dts = [self.py.get(a) for a in args]
        dt = dts[0] if dts[0] is not None else dts[1]
        if dt is None or infix not in scalars.ARITHMETIC and infix not in scalars.COMPARISONS \
                or infix in scalars.ARITHMETIC and dt.kind not in "iu":
            return False
        operands, constant, values = [], None, []
        for a, d in zip(args, dts):
            if d is None:
                value = self.env.get(a) if a in self.constants else None
                if not isinstance(value, np.generic) or value.dtype != dt:
                    return False
                constant = int(value)
                if a not in self._py_consts:
                    self._py_consts[a] = self.obj(constant, "c")
                    self.constants.add(self._py_consts[a])
                a = self._py_consts[a]
                if infix == "-" and not operands:
                    constant = None  # c - x: no sign of the result is known
            values.append(constant if d is None else None)
            operands.append(a)
        self.add(indent, f"{res} = {operands[0]} {infix} {operands[1]}", op, args, [res],
                 py_ok=True)
        if infix in scalars.ARITHMETIC:
            if not self._in_range(infix, operands, values, dt):
                self.add(indent, scalars.wrap_line(res, dt, infix, constant), op, [res], [res],
                         py_ok=True)
            self.py[res] = dt
        else:
            self.py[res] = _BOOL
            self._compared = (res, infix, operands, values)
        return True

    def _in_range(self, infix: str, operands: list[str], values: list[int | None],
                  dt: np.dtype) -> bool:
        """Whether ``operands[0] infix operands[1]`` cannot leave ``dt``'s range: a loop
        variable below its exit test's bound plus a constant (``w + k`` in a loop on
        ``w < n``: at most n - 1 + k; ``n`` a constant, or for k <= 1 any value of ``dt``)."""
        if infix != "+":
            return False
        for w, k in ((operands[0], values[1]), (operands[1], values[0])):
            if w in self.bounded and k is not None and k >= 0:
                test, bound = self.bounded[w]
                top = int(np.iinfo(dt).max)
                most = (k <= (1 if test == "<" else 0)) if bound is None else \
                    bound - (1 if test == "<" else 0) + k <= top
                if most:
                    return True
        return False

    def compile(self) -> dict[str, Any]:
        exec(compile("\n".join(self.lines), _GENERATED, "exec"), self.env)  # noqa: S102
        return self.env

    def _can_inline(self, cb: CompiledBlock) -> bool:
        return "steps" in cb.__dict__ and cb not in self.stack

    def _body(self, cb: CompiledBlock, names: dict[int, str], indent: int,
              it: str = "0") -> list[str]:
        """Emit ``cb`` in place; its ops' iteration is ``it`` (a loop's counter, else 0: the
        op runs once per execution of the op holding it)."""
        self.stack.append(cb)
        saved, self.it = self.it, it
        try:
            return cb.emit(self, names, indent)
        finally:
            self.stack.pop()
            self.it = saved

    def inline(self, host: CompiledBlock, k: int, spec: tuple[Any, ...], args: list[str],
               res: list[str], names: dict[int, str], indent: int) -> bool:
        """Emit step ``k`` of ``host`` in place per its kernel's ``inline`` spec; False (emit
        a call) when it cannot be."""
        op = host.ops[k]
        kind = spec[0]
        if kind == "call":
            callee: CompiledBlock = spec[1]
            limit = _INLINE_IN_LOOPS if self.loops else _INLINE_ANYWHERE
            if not self._can_inline(callee) or callee.weight > limit or callee.capture_slots:
                return False
            rets = self._body(callee, dict(enumerate(args)), indent)
            self.assign(indent, res, rets, op)
            return True
        regions: list[CompiledBlock] = list(spec[1:])
        if not all(self._can_inline(r) for r in regions):
            return False
        if kind == "while":
            # 0-d integer loop state as Python ints when nothing needs numpy ones (scalars.py)
            typed = {i: scalars.loop_dtype(v.type) for i, v in enumerate(op.operands)}
            special = {i: dt for i, dt in typed.items() if dt is not None}
            if special and not self.observed:
                mark, saved_py, saved_escaped = len(self.lines), dict(self.py), self.escaped
                self.escaped = False
                self.attempts += 1
                try:
                    self._while(host, k, regions, args, res, names, indent, special)
                finally:
                    self.attempts -= 1
                if not self.escaped:
                    self.escaped = saved_escaped
                    return True
                del self.lines[mark:], self.info[mark:]  # emit it again with numpy scalars
                for table in (self.line_ops, self.line_ctx):
                    for line in [n for n in table if n > mark]:
                        del table[line]
                self.py, self.escaped = saved_py, saved_escaped
            self._while(host, k, regions, args, res, names, indent, {})
            return True
        # if (pred; true, false) / case (index; branches..., the last also out of range)
        if kind == "case":
            sel = self.fresh("i")
            self.add(indent, f"{sel} = int({args[0]})", op, args[:1], (sel,), py_ok=True)
            tests = [f"{sel} == {i}" for i in range(len(regions) - 1)]
            tested = [sel]
        else:
            tests, tested = [args[0]], args[:1]
        for i, r in enumerate(regions):
            head = ("if True:" if i == 0 else "else:") if i == len(tests) else \
                f"{'if' if i == 0 else 'elif'} {tests[i]}:"
            self.add(indent, head, op, tested, py_ok=True)
            rets = self._body(r, host.region_names(k, r, names, []), indent + 1)
            self.assign(indent + 1, res, rets, op, transfer=False)
            self.add(indent + 1, "pass", op)
        return True

    def _while(self, host: CompiledBlock, k: int, regions: list[CompiledBlock],
               args: list[str], res: list[str], names: dict[int, str], indent: int,
               special: dict[int, Any]) -> None:
        """Emit the `while` of step ``k`` in place: ``while True:`` over local variables,
        those of ``special`` (position: dtype) Python ints (:mod:`.scalars`)."""
        op = host.ops[k]
        cond, body = regions
        loop = [self.fresh("w") for _ in args]
        start = list(args)
        for i, dt in special.items():
            a = args[i]
            if self.py.get(a) == dt:
                continue
            value = self.env.get(a) if a in self.constants else None
            if isinstance(value, np.generic):
                start[i] = self.obj(int(value), "c")
                self.constants.add(start[i])
            else:
                start[i] = self.fresh("p")
                self.add(indent, f"{start[i]} = int({a})", op, [a], [start[i]])
        self.assign(indent, loop, start, op)
        self.py.update((loop[i], dt) for i, dt in special.items())
        init = len(self.lines) - 1
        counter = self.fresh("_n") if self.counted else ""
        self.add(indent, f"for {counter} in _count():" if counter else "while True:", op)
        self.loops += 1
        saved = self.around
        if counter:
            self.around = saved + ((op, counter),)
        try:
            c = self._body(cond, host.region_names(k, cond, names, loop), indent + 1,
                           counter or "0")
            bound = None
            if self._loop_test(init + 1, c[0], counter):
                bound = self._bound(c[0], loop)
            else:
                self.add(indent + 1, f"if not {c[0]}: break", op, c[:1], py_ok=True)
            if bound is not None:
                self.bounded[bound[0]] = bound[1]
            try:
                b = self._body(body, host.region_names(k, body, names, loop), indent + 1,
                               counter or "0")
            finally:
                if bound is not None:
                    del self.bounded[bound[0]]
            changed = [(w, v) for w, v in zip(loop, b) if w != v]
            if any((w in self.py) != (v in self.py) for w, v in changed):
                self.escaped = True  # a numpy value for a Python int's variable, or back
            self.assign(indent + 1, [w for w, _ in changed], [v for _, v in changed], op)
        finally:
            self.loops -= 1
            self.around = saved
        if changed and not self.observed:  # (recorded values are never written again)
            self._in_place(init, loop, b, indent + 1)
        if counter:  # the back edge (where a time limit stops a loop) is in the loop
            self.around = saved + ((op, counter),)
        self.add(indent + 1, "pass", op)
        self.around = saved
        # Python ints stay Python ints within a loop being emitted with them (which is emitted
        # again if one needs numpy); else they become numpy scalars (exact: in range).
        if self.attempts > (1 if special else 0):
            special = {}
        plain = [i for i in range(len(loop)) if i not in special]
        self.assign(indent, [res[i] for i in plain], [loop[i] for i in plain], op)
        for i, dt in special.items():
            self.add(indent, f"{res[i]} = {self.obj(dt.type, 't')}({loop[i]})", op,
                     [loop[i]], [res[i]], py_ok=True)

    def _loop_test(self, header: int, test: str, counter: str) -> bool:
        """When the cond emitted one line, ``test = a OP b`` (an infix kernel), make it the
        loop's own test (``while a OP b:``, one store, load and jump less per iteration);
        False when it cannot be."""
        if counter or len(self.lines) != header + 2:
            return False
        line = self.info[header + 1]
        if line.kern is not None or line.assignment or line.writes != (test,):
            return False
        expr = self.lines[-1].split(" = ", 1)[1].split(" ")
        if len(expr) != 3 or expr[1] not in _INFIX_TEXT or len(line.reads) != 2:
            return False
        self.lines[header] = self.lines[header].replace("while True:", f"while {' '.join(expr)}:")
        self.info[header] = _Line(self.info[header].indent, line.reads, ())
        self.line_ops.pop(len(self.lines), None)
        self.line_ctx.pop(len(self.lines), None)
        del self.lines[-1], self.info[-1]
        return True

    def _bound(self, test: str, loop: list[str]) -> tuple[str, tuple[str, int | None]] | None:
        """The bound that the loop's test ``test`` (its own `while` test) puts on a Python-int
        loop variable in the body: ``(w, ("<" or "<=", the bound's value or None))`` for
        ``w < x``, ``w <= x`` (or ``x > w``, ``x >= w``), ``x`` a Python int of ``w``'s dtype
        (a loop variable: its value unknown) or a constant; None otherwise."""
        if self._compared is None or self._compared[0] != test:
            return None
        _, infix, (a, b), (_, value) = self._compared
        if infix in (">", ">="):
            a, b, infix, value = b, a, infix.replace(">", "<"), self._compared[3][0]
        if infix not in ("<", "<=") or a not in loop or a not in self.py:
            return None
        if b not in self.py and value is None:
            return None
        return a, (infix, value)

    def _in_place(self, init: int, loop: list[str], rets: list[str], indent: int) -> None:
        """Turn the update of a loop's buffer into an in-place write where the old value is
        dead (a `lax.scan` filling its outputs row by row then costs a row per step instead
        of a copy of the whole buffer).

        Loop variable ``w`` qualifies when it is read once in the loop (the lines after
        ``init``, the line giving the loop variables their initial values), as the first
        operand of a kernel with ``inplace`` (dynamic_update_slice) on a line of the body's
        top level, and that kernel's result reaches the loop's next ``w`` through plain
        assignments at that level, each read once. Then no one else sees the buffer: the
        loop works on one copy of the initial value, made at ``init``."""
        reads: dict[str, list[int]] = {}
        for i in range(init + 1, len(self.info)):
            for r in self.info[i].reads:
                reads.setdefault(r, []).append(i)
        last = len(self.info) - 1  # the assignment of the next iteration's values
        values = list(self.info[init].reads)
        for pos, w in enumerate(loop):
            at = reads.get(w, [])
            if len(at) != 1 or rets[pos] == w:
                continue
            line = self.info[at[0]]
            inplace = getattr(line.kern, "inplace", None)
            if inplace is None or line.indent != indent or line.reads[:1] != (w,) or \
                    line.reads.count(w) != 1 or line.callee is None:
                continue
            name, ok = line.writes[0], True
            while ok and name != rets[pos]:  # follow `x, = name,` (a callee's result)
                uses = reads.get(name, [])
                nxt = self.info[uses[0]] if len(uses) == 1 else None
                ok = nxt is not None and nxt.assignment and uses[0] != last and \
                    nxt.indent == indent and len(nxt.reads) == 1
                if ok:
                    name = nxt.writes[0]  # type: ignore[union-attr]
            if not ok or reads.get(name) != [last] or rets.count(name) != 1:
                continue
            fresh, write = inplace
            text = self.lines[at[0]].replace(f"= {line.callee}(", f"= {self.obj(write, 'u')}(", 1)
            self.lines[at[0]] = text[:-3] if text.endswith("[0]") else text
            values[pos] = f"{self.obj(fresh, 'f')}({values[pos]})"
        lhs = self.lines[init].split(" = ", 1)[0]
        self.lines[init] = f"{lhs} = {', '.join(values)},"


def _tuple(names: Sequence[str]) -> str:
    return f"({names[0]},)" if len(names) == 1 else f"({', '.join(names)})"
