"""Prepare once, run many (ARCHITECTURE.md principle 4; spec section "Execution").

:class:`CompiledBlock` turns a block into a list of prepared steps: each op is resolved to the
kernel its ops module registered, with attributes decoded and operand/result slots fixed in a
flat frame. Running is a tight loop over those steps. Values a nested region uses from enclosing
blocks are *captures*: the step owning the region binds them before calling its kernel.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from time import perf_counter
from typing import Any, Callable, Protocol, Sequence

from ..errors import ExecutionError, ShloError, locate, runtime_location
from ..ir import Block, Module, Operation, Region, Value, function_body
from ..ops.distributed.grid import Engine, Grid
from ..ops.quantization import dequantize_op_quantize
from ..registry import COMMUTATIVE, QUANTIZED_AWARE, TERMINATOR, lookup, names_with
from ..types import is_quantized
from . import fusion
from .threads import THREADS

__all__ = ["PrepareContext", "ProcessContext", "CompiledBlock", "Observer"]


@dataclass
class ProcessContext:
    """What a running process knows about itself (spec "Process grid", "Feeds").

    One is created per process; kernels of replica_id, partition_id, infeed, outfeed and the
    collectives read it at run time (the grid and feeds may change between runs). The
    distribution ops reach the other processes only through ``grid`` and start grids only
    through ``engine`` (the interfaces of :mod:`shlo.ops.distributed.grid`).
    """

    replica_id: int = 0
    partition_id: int = 0
    num_replicas: int = 1
    num_partitions: int = 1
    grid: Grid | None = None  # the other processes of the run (None: this process runs alone)
    engine: Engine = THREADS  # starts grids (`interpreter.run_parallel`, shlo.run(replicas=))
    infeed: list[Any] = field(default_factory=list)
    outfeed: list[Any] = field(default_factory=list)
    custom_calls: dict[str, Callable[..., Any]] = field(default_factory=dict)
    # Failed check ops (shlo.ops.check) append a message here; running goes on.
    check_failures: list[Any] = field(default_factory=list)
    # Values recorded by `interpreter.probe`, by probe_id, in order (for expect_serialized_eq).
    probes: dict[str, list[Any]] = field(default_factory=dict)
    # send/recv queues by channel id of a process run without a grid (one process).
    channels: dict[int, Any] = field(default_factory=dict)

    @property
    def process_id(self) -> int:
        return self.replica_id * self.num_partitions + self.partition_id

    def start_run(self, infeed: Sequence[Any] | None = None,
                  custom_calls: dict[str, Callable[..., Any]] | None = None) -> None:
        """Forget what an earlier run left (feeds, check failures, probes, channels, the hidden
        `rng` counters) so that a prepared function reused for a new run behaves as a fresh
        one: the same program on the same inputs gives the same results."""
        self.infeed = list(infeed or [])
        self.outfeed = []
        self.custom_calls = dict(custom_calls or {})
        self.check_failures.clear()  # in place: check kernels hold this list
        self.probes.clear()  # in place: probe kernels hold this dict
        self.channels = {}
        self.__dict__.pop("rng_counters", None)


class Observer(Protocol):
    """Watches a run op by op (the hook of :mod:`shlo.debug`: trace, profile, diff).

    A context prepared with an observer asks ``wants(op)`` once per op while preparing; the
    kernel of each wanted op is wrapped to call ``enter`` before it runs and ``exit`` after,
    with its operands, results and the seconds it took (nested ops of its regions and callees
    run in between). Ops not wanted, and every run prepared without an observer, run exactly
    as before: observing costs nothing when it is off.
    """

    def wants(self, op: Operation) -> bool: ...

    def enter(self, op: Operation, process: ProcessContext) -> None: ...

    def exit(self, op: Operation, process: ProcessContext, operands: tuple[Any, ...],
             results: Sequence[Any], seconds: float) -> None: ...


def _observed(op: Operation, kern: Callable[..., Sequence[Any]], observer: Observer,
              process: ProcessContext) -> Callable[..., Sequence[Any]]:
    """``kern`` reporting to ``observer`` (its ``enter``/``exit`` are looked up at each call:
    an observer may retarget them, as the trace's relay does, without a preparation)."""
    clock = perf_counter

    def run(*args: Any) -> Sequence[Any]:
        observer.enter(op, process)
        t0 = clock()
        results = kern(*args)
        observer.exit(op, process, args, results, clock() - t0)
        return results

    return run


class PrepareContext:
    """Handed to every prepare function: compiles regions and functions, knows the process.
    With an ``observer`` (:class:`Observer`), the kernels of the ops it wants report to it."""

    def __init__(self, module: Module | None, process: ProcessContext | None = None,
                 observer: Observer | None = None) -> None:
        self.module = module
        self.process = process or ProcessContext()
        self.observer = observer
        self._functions: dict[str, CompiledBlock] = {}
        self._new_regions: list[CompiledBlock] = []

    def for_process(self, replica_id: int, partition_id: int, num_replicas: int,
                    num_partitions: int) -> "PrepareContext":
        """A context preparing this context's module for process ``(replica_id,
        partition_id)`` of a ``num_replicas x num_partitions`` grid, with this process's custom
        calls and engine (what an engine prepares each process of a grid with)."""
        process = ProcessContext(replica_id=replica_id, partition_id=partition_id,
                                 num_replicas=num_replicas, num_partitions=num_partitions,
                                 custom_calls=dict(self.process.custom_calls),
                                 engine=self.process.engine)
        return PrepareContext(self.module, process, self.observer)

    def region(self, region: Region) -> "CompiledBlock":
        """Compile ``region`` (its entry block) into a callable ``fn(*args) -> list``."""
        cb = CompiledBlock(region.blocks[0], self)
        self._new_regions.append(cb)
        return cb

    def function(self, name: str) -> "CompiledBlock":
        """The compiled body of function ``@name`` (compiled once per context)."""
        cb = self._functions.get(name)
        if cb is None:
            if self.module is None:
                raise ExecutionError(f"no module to look up function @{name} in")
            func = self.module.functions.get(name)
            if func is None:
                raise ExecutionError(f"function @{name} is not defined")
            cb = self._functions[name] = CompiledBlock.__new__(CompiledBlock)
            cb._init(function_body(func), self)  # cache first: allows recursion
        return cb

    def prepare(self, op: Operation) -> Callable[..., Sequence[Any]]:
        """Resolve ``op`` to its run-time kernel."""
        d = lookup(op.name)
        if d is None or d.prepare is None:
            kern = _unsupported(op)
        elif QUANTIZED_AWARE not in d.traits and _has_quantized(op):
            kern = dequantize_op_quantize(op, self)
        else:
            kern = d.prepare(op, self)
        if self.observer is not None and self.observer.wants(op):
            return _observed(op, kern, self.observer, self.process)
        return kern


def _prepare(ctx: PrepareContext, op: Operation) -> Callable[..., Sequence[Any]]:
    """``ctx.prepare(op)``, an error located at ``op``."""
    try:
        return ctx.prepare(op)
    except ShloError as e:
        raise locate(e, op)
    except Exception as e:  # a bad attribute found while preparing
        raise ExecutionError(f"'{op.name}' op: {e}", runtime_location(op)) from e


def _has_quantized(op: Operation) -> bool:
    return any(is_quantized(v.type) for v in op.operands) or any(
        is_quantized(v.type) for v in op.results)


def _unsupported(op: Operation) -> Callable[..., Sequence[Any]]:
    def run(*args: Any) -> Sequence[Any]:
        raise ExecutionError(f"'{op.name}' op is not supported by the interpreter",
                             runtime_location(op))

    return run


class CompiledBlock:
    """A block turned into prepared steps; call it with the block's arguments.

    ``run`` (the generated function) is made on first use: a block inlined into the function
    of an enclosing block (a `while` body, a small callee) never needs its own.
    """

    def __init__(self, block: Block, ctx: PrepareContext) -> None:
        self._init(block, ctx)

    def _init(self, block: Block, ctx: PrepareContext) -> None:
        self.block = block
        self.slots: dict[Value, int] = {}
        self.capture_values: list[Value] = []
        self.capture_slots: list[int] = []
        self.bound: list[Any] = []
        for v in block.arguments:
            self.slots[v] = len(self.slots)
        self.nargs = len(block.arguments)
        steps: list[tuple[Any, ...]] = []
        self.ret: list[int] = []
        self.ops: list[Operation] = []
        self.regions: list[list[CompiledBlock]] = []
        terminators = names_with(TERMINATOR)
        chains = {} if ctx.observer is not None else \
            {id(c.ops[-1]): c for c in fusion.plan(block)}  # element-wise chains (fusion.py)
        members = {id(op) for c in chains.values() for op in c.ops}
        for op in block.operations:
            if op.name in terminators and op is block.operations[-1]:
                self.ret = [self._slot(v) for v in op.operands]
                break
            if id(op) in members:
                chain = chains.get(id(op))
                if chain is not None:  # the chain runs where its last member was
                    kern = fusion.fused_kernel(chain, [_prepare(ctx, m) for m in chain.ops])
                    steps.append((kern, tuple(self._slot(v) for v in chain.inputs),
                                  tuple(self._new(v) for v in chain.outputs), ()))
                    self.ops.append(op)
                    self.regions.append([])
                continue
            saved = ctx._new_regions
            ctx._new_regions = []
            kern = _prepare(ctx, op)
            regions, ctx._new_regions = ctx._new_regions, saved
            ins = tuple(self._slot(v) for v in op.operands)
            binds = tuple((r, tuple(self._slot(v) for v in r.capture_values))
                          for r in regions if r.capture_values)
            outs = tuple(self._new(v) for v in op.results)
            steps.append((kern, ins, outs, binds))
            self.ops.append(op)
            self.regions.append(regions)
        self.size = len(self.slots)
        self.steps = steps  # set last: a callee still being prepared (recursion) has none
        self.weight = len(steps) + sum(r.weight for rs in self.regions for r in rs)

    def __getattr__(self, name: str) -> Any:
        if name == "run":  # generated on first use (see the class docstring)
            run = self.__dict__["run"] = self._generate()
            return run
        raise AttributeError(name)

    def _new(self, v: Value) -> int:
        s = self.slots[v] = len(self.slots)
        return s

    def _slot(self, v: Value) -> int:
        s = self.slots.get(v)
        if s is None:  # defined in an enclosing block: a capture
            s = self._new(v)
            self.capture_values.append(v)
            self.capture_slots.append(s)
        return s

    @property
    def single_op(self) -> str | None:
        """The op name when the body is `return op(arg0, arg1)` (or `op(arg1, arg0)`).

        Lets reductions recognise common bodies (add, max, ...) and call numpy directly.
        """
        b = self.block
        if len(b.operations) != 2 or len(b.arguments) != 2:
            return None
        op, ret = b.operations
        if len(op.operands) != 2 or len(ret.operands) != 1 or ret.operands[0] is not op.results[0]:
            return None
        if {id(op.operands[0]), id(op.operands[1])} != {id(b.arguments[0]), id(b.arguments[1])}:
            return None
        if op.operands[0] is not b.arguments[0] and op.name not in names_with(COMMUTATIVE):
            return None
        return op.name

    def _generate(self) -> Callable[..., list[Any]]:
        """This block as one Python function (see :class:`_Emitter`)."""
        em = _Emitter(self)
        names = {s: f"a{s}" for s in range(self.nargs)}
        for s in self.capture_slots:
            names[s] = f"a{s}"
        em.add(0, f"def run({', '.join(names[s] for s in range(self.nargs))}):")
        if self.capture_slots:
            em.add(1, "".join(f"{names[c]}, " for c in self.capture_slots) + "= _self.bound")
        rets = self.emit(em, names, 1, own=True)
        em.add(1, f"return [{', '.join(rets)}]")
        self.source = "\n".join(em.lines)  # what runs (for tests and for reading)
        return em.compile()["run"]

    def _dead_after(self, own: bool) -> dict[int, list[int]]:
        """The slots to delete after each step: those last used there, except the block's
        results, and (``own`` False: the block is inlined) its arguments and captures, which
        belong to the enclosing code."""
        key = "_dead_own" if own else "_dead_inlined"
        dead = self.__dict__.get(key)
        if dead is not None:
            return dead
        last_use: dict[int, int] = {}
        for k, (_, ins, _, binds) in enumerate(self.steps):
            for s in ins:
                last_use[s] = k
            for _, cs in binds:
                for s in cs:
                    last_use[s] = k
        keep = set(self.ret)
        if not own:
            keep.update(range(self.nargs))
            keep.update(self.capture_slots)
        dead = {}
        for s, k in last_use.items():
            if s not in keep:
                dead.setdefault(k, []).append(s)
        self.__dict__[key] = dead
        return dead

    def emit(self, em: "_Emitter", names: dict[int, str], indent: int,
             own: bool = False) -> list[str]:
        """Emit this block's steps at ``indent``; ``names`` gives the variable of each argument
        and capture slot (and receives those of the results). Returns the variables of the
        block's results. Steps whose kernel carries an ``inline`` spec (while, if, case,
        func.call) emit their regions or callee in place when they can (:meth:`_Emitter.inline`);
        a kernel with ``direct`` (one result) is called without its 1-tuple, a Python operator
        as that operator; a kernel with ``constant`` (no operands) is that value."""
        dead_after = self._dead_after(own)
        for k, (kern, ins, outs, binds) in enumerate(self.steps):
            op = self.ops[k]
            if not ins and len(outs) == 1 and hasattr(kern, "constant") and \
                    getattr(kern, "inline", None) is None:
                # a constant is read where it is used, from the function's globals
                names[outs[0]] = em.obj(kern.constant, "c")
                em.constants.add(names[outs[0]])
                continue
            for s in outs:
                names[s] = em.fresh("v")
            args = [names[s] for s in ins]
            res = [names[s] for s in outs]
            spec = getattr(kern, "inline", None)
            if spec is None or not em.inline(self, k, spec, args, res, names, indent):
                for r, cs in binds:
                    bound = [names[c] for c in cs]
                    em.add(indent, f"{em.obj(r, 'r')}.bound = [{', '.join(bound)}]", op, bound)
                em.step(indent, op, kern, args, res)
            dead = [names[s] for s in dead_after.get(k, ()) if names[s] not in em.constants]
            if dead:
                em.add(indent, f"del {', '.join(dead)}")
        return [names[s] for s in self.ret]

    def region_names(self, k: int, region: "CompiledBlock", names: dict[int, str],
                     args: Sequence[str]) -> dict[int, str]:
        """The names of ``region``'s (of step ``k``) argument and capture slots, for
        inlining it: ``args`` for its arguments, this block's variables for its captures."""
        inner = {i: a for i, a in enumerate(args)}
        for v, s in zip(region.capture_values, region.capture_slots):
            inner[s] = names[self.slots[v]]
        return inner

    def __call__(self, *args: Any) -> list[Any]:
        """Run the block; an exception in any op (here or in nested regions and calls, which
        call each other's ``run`` directly) becomes an ExecutionError naming that op."""
        try:
            return self.run(*args)
        except ShloError as e:
            op = self._failing_op(e)
            raise e if op is None else locate(e, op)
        except Exception as e:
            op = self._failing_op(e)
            if op is None:
                raise
            raise ExecutionError(f"'{op.name}' op: {type(e).__name__}: {e}",
                                 runtime_location(op)) from e

    @staticmethod
    def _failing_op(e: BaseException) -> Operation | None:
        """The innermost op whose step raised ``e`` (from the generated code's line numbers in
        the traceback)."""
        tb = e.__traceback__
        found: Operation | None = None
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == _GENERATED:
                op = tb.tb_frame.f_globals["_line_ops"].get(tb.tb_lineno)
                if op is not None:
                    found = op
            tb = tb.tb_next
        return found


# Python operators that kernels give as their ``direct`` function: the generated code writes
# them as the operator (one bytecode instead of a call; the same computation).
_INFIX: dict[Any, str] = {
    operator.add: "+", operator.sub: "-", operator.mul: "*", operator.lt: "<",
    operator.le: "<=", operator.gt: ">", operator.ge: ">=", operator.eq: "==",
    operator.ne: "!=",
}

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


class _Emitter:
    """The Python source of one generated function: one line per step, values in local
    variables (much faster than a frame list; each deleted after its last use, so a long
    function holds only its live tensors). The op of each line is kept (``_line_ops``) so
    that the line of a failing step tells which op failed.

    `while`, `if` and `case` bodies and small callees are emitted in place (their kernels say
    how with an ``inline`` attribute): a loop then runs as a Python `while` over local
    variables, with no call, list or tuple per iteration.
    """

    def __init__(self, root: CompiledBlock) -> None:
        self.line_ops: dict[int, Operation] = {}
        self.env: dict[str, Any] = {"_self": root, "_line_ops": self.line_ops}
        self.lines: list[str] = []
        self.info: list[_Line] = []
        self.n = 0
        self.stack: list[CompiledBlock] = [root]
        self.loops = 0
        self.constants: set[str] = set()  # global names standing for constant values

    def fresh(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def obj(self, x: Any, prefix: str) -> str:
        name = self.fresh(prefix)
        self.env[name] = x
        return name

    def add(self, indent: int, text: str, op: Operation | None = None,
            reads: Sequence[str] = (), writes: Sequence[str] = (), kern: Any = None,
            callee: str | None = None, assignment: bool = False) -> None:
        self.lines.append("    " * indent + text)
        self.info.append(_Line(indent, reads, writes, kern, callee, assignment))
        if op is not None:
            self.line_ops[len(self.lines)] = op

    def assign(self, indent: int, targets: Sequence[str], values: Sequence[str],
               op: Operation) -> None:
        """``targets = values`` (one line; nothing when there are none)."""
        if targets:
            self.add(indent, f"{', '.join(targets)}, = {', '.join(values)},", op, values,
                     targets, assignment=True)

    def step(self, indent: int, op: Operation, kern: Any, args: list[str],
             res: list[str]) -> None:
        """The line running ``kern`` on ``args`` into ``res`` (see :meth:`CompiledBlock.emit`)."""
        direct = getattr(kern, "direct", None) if len(res) == 1 else None
        if direct is not None:
            infix = _INFIX.get(direct) if len(args) == 2 else None
            if infix is not None:
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

    def compile(self) -> dict[str, Any]:
        exec(compile("\n".join(self.lines), _GENERATED, "exec"), self.env)  # noqa: S102
        return self.env

    def _can_inline(self, cb: CompiledBlock) -> bool:
        return "steps" in cb.__dict__ and cb not in self.stack

    def _body(self, cb: CompiledBlock, names: dict[int, str], indent: int) -> list[str]:
        self.stack.append(cb)
        try:
            return cb.emit(self, names, indent)
        finally:
            self.stack.pop()

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
            cond, body = regions
            loop = [self.fresh("w") for _ in args]
            self.assign(indent, loop, args, op)
            init = len(self.lines) - 1
            self.add(indent, "while True:", op)
            self.loops += 1
            try:
                c = self._body(cond, host.region_names(k, cond, names, loop), indent + 1)
                self.add(indent + 1, f"if not {c[0]}: break", op, c[:1])
                b = self._body(body, host.region_names(k, body, names, loop), indent + 1)
            finally:
                self.loops -= 1
            changed = [(w, v) for w, v in zip(loop, b) if w != v]
            self.assign(indent + 1, [w for w, _ in changed], [v for _, v in changed], op)
            if changed:
                self._in_place(init, loop, b, indent + 1)
            self.add(indent + 1, "pass")
            self.assign(indent, res, loop, op)
            return True
        # if (pred; true, false) / case (index; branches..., the last also out of range)
        if kind == "case":
            sel = self.fresh("i")
            self.add(indent, f"{sel} = int({args[0]})", op, args[:1], (sel,))
            tests = [f"{sel} == {i}" for i in range(len(regions) - 1)]
            tested = [sel]
        else:
            tests, tested = [args[0]], args[:1]
        for i, r in enumerate(regions):
            head = ("if True:" if i == 0 else "else:") if i == len(tests) else \
                f"{'if' if i == 0 else 'elif'} {tests[i]}:"
            self.add(indent, head, op, tested)
            rets = self._body(r, host.region_names(k, r, names, []), indent + 1)
            self.assign(indent + 1, res, rets, op)
            self.add(indent + 1, "pass")
        return True

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


_GENERATED = "<shlo prepared block>"
