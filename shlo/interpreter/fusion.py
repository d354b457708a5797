"""Element-wise fusion: a chain of element-wise ops on large tensors evaluated block by block.

Unfused, each op of ``y = exp(x * a + b) / c ...`` reads and writes whole tensors: with 10^8
elements every intermediate is 400 MB of fresh memory, written once and read once from RAM.
Fused, the chain runs over blocks of :data:`BLOCK_BYTES` (a few hundred KiB at most live at
once, in cache): each member op's own kernel is called on the block's slices, only the values
used after the chain are written out whole. The blocks are spread over the cores in pieces
(:mod:`shlo.ops._pool`; numpy releases the GIL in its loops).

Bit for bit the unfused result: every element-wise kernel computes each element from the same
elements of its operands, whatever the slice (tests/interpreter/test_fusion.py compares fused
and unfused runs of every element-wise op). What is fused (:func:`plan`):

* ops of the ``ELEMENTWISE`` trait in the stablehlo dialect, without regions, with one result,
  whose operands all have the result's static shape, none quantized, and
  ``broadcast_in_dim`` of a 0-d value (a splat, as JAX writes ``x * 2.0``);
* in block order, one open chain per shape: ops that do not read a chain's values, among them
  the members of chains of other shapes, may sit between its members (they run where they
  are, before the chain, which runs at its last member's place); an op that reads one of its
  values, other than a member of the chain, ends it. JAX's optimizer updates interleave the
  parameters (the first moments of all, then the second moments...): each parameter's update
  is one chain;
* at least two members, of at least :data:`MIN_ELEMENTS` elements.

Small tensors (a loop body's, a model's biases and norms) lose nothing to memory: what they
lose is the ~0.4 us numpy call of each op. A chain of float32 or float64 ops among
:data:`COMPILED_OPS` (and splats; tanh on float32 only) of rank 1 or more (one open chain per
shape and type, as above) is a *compiled* chain when it has at least :data:`MIN_COMPILED`
members on 1 to :data:`MAX_COMPILED` elements, or :data:`MIN_LARGE` members on more elements
(from :data:`MIN_ELEMENTS` on, a chain of the kind above all of whose members compile). It
runs through its members' kernels (one generated function: the unfused computation; from
:data:`MIN_ELEMENTS` on, block by block as above) until the process has run
:data:`SWITCH_OPS` ops of such chains (an op on n elements counts ``n / 2048`` beyond 2048),
then through a compiled evaluator, :mod:`.fusion_jit` (numba: ~30 ns an op on 16 elements,
~0.1 ns an element on more; larger chains run block by block within it, spread over the
cores; loading it costs ~0.9 s, which only programs run that long pay). Its results are the
members' bit for bit, NaNs included (:mod:`.fusion_jit` says how); where numpy's float32 tanh
is not the formula it copies (a CPU without FMA: checked at import), chains holding a tanh
stay on their members' kernels.

Not fused when an observer (shlo.debug's trace, profile) watches the run: it sees every op.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from ..errors import ExecutionError, ShloError, locate, runtime_location
from ..ir import Block, Operation, Value
from ..registry import ELEMENTWISE, names_with
from ..ops import _half, _pool
from ..ops._lazy import Once
from ..types import TensorType, is_quantized

__all__ = ["BLOCK_BYTES", "MIN_ELEMENTS", "MIN_COMPILED", "MAX_COMPILED", "SWITCH_OPS",
           "COMPILED_OPS", "Chain", "plan", "fused_kernel", "compiled_evaluator"]

BLOCK_BYTES = 1 << 18
"""Bytes of the widest value of a chain per block (256 KiB: measured best of 32 KiB-2 MiB on
10^6 and 10^7 f32 elements, CPU time; a few live blocks stay in L2/L3)."""
MIN_ELEMENTS = 1 << 20
"""Chains over fewer elements run unfused: the 10-op chain of benchmarks/issue17_bench.py,
fused against unfused in one process, wall time: 2.5e5 elements 1.95 vs 1.43 ms, 1e6 5.1 vs
5.1 ms, 4e6 22.8 vs 26.5 ms, 1.6e7 190 vs 211 ms (smaller arrays stay in cache unfused, and
each block costs a call per member)."""

MIN_COMPILED = 8
"""Compiled chains have at least this many members: a compiled call costs ~4 us. Chains of
add and multiply (and of add, multiply, subtract and maximum) on 16-2048 f32 elements ran
0.7-1.5x as fast compiled with 4 members, 0.9-1.5x with 6, 1.0-2.1x with 8, 1.6-3.0x with 12,
2.1-5.8x with 16 and 3.5-12.7x with 64 (one process, the chain's kernel alone)."""
MAX_COMPILED = 8192
"""Compiled chains over at most this many elements hold their registers whole (they stay in
L1/L2: the same chains on 16384 elements ran 1.3-1.8x faster compiled, on 65536 0.6-1.4x);
larger ones run block by block (:data:`COMPILED_BLOCK`)."""
MIN_LARGE = 4
"""Compiled chains over more than :data:`MAX_COMPILED` elements have at least this many
members: chains of add, multiply, subtract and maximum, compiled against unfused (one process,
whole runs): 2 members 0.7-1.0x as fast, 3 members 0.7-1.0x, 4 members 1.0x on 9,000 and
16,384 elements, 1.2x on 65,536, 1.3x on 262,144, 1.5x on 10^6; 6 members 1.1-1.8x."""
MAX_INPUTS = 8
"""Inputs read whole that a large compiled chain may have (:func:`.fusion_jit.run_blocks`
takes a tuple of this many arrays, padded: one compiled function for every chain of a dtype);
a chain with more runs on its members' kernels."""
MAX_OUTPUTS = 8
"""Outputs a large compiled chain may have (padded likewise)."""
COMPILED_BLOCK = 1024
"""Elements of a block of a large compiled chain (4 KiB a float32 register: the registers of a
block stay in L1)."""
SWITCH_OPS = 1 << 20
"""Ops of compiled chains a process runs through their members' kernels (~0.5 s of numpy
calls) before it loads the compiled evaluator (~0.9 s, numba's import included)."""
COMPILED_OPS = ("stablehlo.add", "stablehlo.subtract", "stablehlo.multiply", "stablehlo.divide",
                "stablehlo.maximum", "stablehlo.minimum", "stablehlo.negate", "stablehlo.abs",
                "stablehlo.sqrt", "stablehlo.tanh")
"""The ops of compiled chains; an op's position is its opcode in :mod:`.fusion_jit` (splats
are ``len(COMPILED_OPS)``)."""

_SPLAT = "stablehlo.broadcast_in_dim"
_TANH = "stablehlo.tanh"
_COST_NS = (0.15, 0.15, 0.15, 0.3, 0.2, 0.2, 0.1, 0.1, 0.3, 1.3, 0.05)
"""Per opcode, its compiled loop's time per element in a block (ns; this project's machine)."""
PIECE_NS = 200_000.0
"""A large compiled chain is cut into pieces for the cores (one per core) only when each
piece has at least this much work (ns, by :data:`_COST_NS`): handing a piece to the pool's
thread and back cost 50-100 us on this project's machine (chains of 2-4 members on 262,144
elements ran 1.2-3x slower in pieces)."""
_COMPILED_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


@dataclass
class Chain:
    """Element-wise ops run together: ``ops`` in block order, reading ``inputs`` (values from
    outside the chain) and giving ``outputs`` (their values used after it); ``compiled`` for
    a chain of small tensors (see the module docstring)."""

    shape: tuple[int, ...]
    compiled: bool = False
    ops: list[Operation] = field(default_factory=list)
    inputs: list[Value] = field(default_factory=list)
    outputs: list[Value] = field(default_factory=list)


Key = tuple[tuple[int, ...], bool, Any]  # a chain's shape, whether compiled, its dtype


def _static_shape(v: Value) -> tuple[int, ...] | None:
    t = v.type
    if not isinstance(t, TensorType) or t.shape is None or any(d is None for d in t.shape):
        return None
    if is_quantized(t):
        return None
    return tuple(t.shape)  # type: ignore[arg-type]


def _member_key(op: Operation, elementwise: frozenset[str]) -> Key | None:
    """The key of the chain ``op`` can join, or None when it cannot join one."""
    if op.regions or len(op.results) != 1 or not op.name.startswith("stablehlo."):
        return None
    shape = _static_shape(op.results[0])
    if shape is None:
        return None
    if op.name == _SPLAT:
        operand = op.operands[0].type if len(op.operands) == 1 else None
        if not (isinstance(operand, TensorType) and operand.shape == () and
                not is_quantized(operand)):
            return None
    elif op.name not in elementwise or not op.operands or \
            any(_static_shape(v) != shape for v in op.operands):
        return None
    size = math.prod(shape)
    if size >= MIN_ELEMENTS:
        return shape, False, None
    dt = _compiled_dtype(op)
    return (shape, True, dt) if dt is not None and shape and size else None


def _compiled_dtype(op: Operation) -> np.dtype | None:
    """The dtype of ``op``'s result when it can be a member of a compiled chain, else None."""
    if op.name != _SPLAT and op.name not in COMPILED_OPS:
        return None
    dt = _dtype(op.results[0])
    if dt not in _COMPILED_DTYPES or any(_dtype(v) != dt for v in op.operands) or \
            (op.name == _TANH and dt != _COMPILED_DTYPES[0]):
        return None
    return dt


def _reads(op: Operation) -> set[int]:
    """Ids of the values ``op`` reads: its operands and those of the ops in its regions."""
    out = {id(v) for v in op.operands}
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                out |= _reads(inner)
    return out


def plan(block: Block) -> list[Chain]:
    """The chains of ``block`` worth fusing (see the module docstring)."""
    elementwise = frozenset(names_with(ELEMENTWISE))
    chains: list[Chain] = []
    open_: dict[Key, Chain] = {}  # one open chain per key
    owner: dict[int, Key] = {}  # id of an open chain's result -> its key

    def close(key: Key) -> None:
        chain = open_.pop(key)
        for op in chain.ops:
            owner.pop(id(op.results[0]), None)
        if len(chain.ops) >= _min_members(chain):
            chains.append(chain)
            # a chain of large tensors whose members all compile, in one dtype, is compiled too
            dtypes = {_compiled_dtype(op) for op in chain.ops}
            if not chain.compiled and len(chain.ops) >= MIN_LARGE and len(dtypes) == 1 and \
                    None not in dtypes:
                chain.compiled = True

    for op in block.operations:
        key = _member_key(op, elementwise)
        # an op reading an open chain's value ends that chain (it runs before the op), unless
        # the op joins that very chain
        if owner:
            for k in {owner[i] for i in _reads(op) if i in owner}:
                if k != key:
                    close(k)
        if key is not None:
            chain = open_.get(key)
            if chain is None:
                chain = open_[key] = Chain(key[0], key[1])
            chain.ops.append(op)
            owner[id(op.results[0])] = key
    for k in list(open_):
        close(k)
    for chain in chains:
        _wire(chain, block)
    return [c for c in chains if c.outputs]


def _min_members(chain: Chain) -> int:
    if not chain.compiled:
        return 2
    return MIN_COMPILED if math.prod(chain.shape) <= MAX_COMPILED else MIN_LARGE


def _wire(chain: Chain, block: Block) -> None:
    """Fill ``chain.inputs`` and ``chain.outputs``."""
    members = {id(op) for op in chain.ops}
    results = {id(op.results[0]): op.results[0] for op in chain.ops}
    seen: set[int] = set()
    for op in chain.ops:
        for v in op.operands:
            if id(v) not in results and id(v) not in seen:
                seen.add(id(v))
                chain.inputs.append(v)
    read_after: set[int] = set()
    for op in block.operations:
        if id(op) not in members:
            read_after |= _reads(op)
    chain.outputs = [v for k, v in results.items() if k in read_after]


def fused_kernel(chain: Chain, kernels: Sequence[Callable[..., Any]]) -> Callable[..., Any]:
    """The kernel running ``chain`` block by block, or a compiled chain as the module
    docstring says; ``kernels`` are its members' prepared kernels (in ``chain.ops`` order).
    Takes the chain's inputs, returns its outputs."""
    if chain.compiled:
        return _compiled_chain(chain, kernels)
    return _blocked(chain, kernels)


def _blocked(chain: Chain, kernels: Sequence[Callable[..., Any]]) -> Callable[..., Any]:
    """The kernel running ``chain`` block by block through its members' kernels."""
    slot: dict[int, int] = {id(v): i for i, v in enumerate(chain.inputs)}
    for op in chain.ops:
        slot[id(op.results[0])] = len(slot)
    steps: list[tuple[Callable[..., Any], tuple[int, ...], int, bool]] = []
    last_use: dict[int, int] = {}
    for k, (op, kern) in enumerate(zip(chain.ops, kernels)):
        ins = tuple(slot[id(v)] for v in op.operands)
        for i in ins:
            last_use[i] = k
        direct = getattr(kern, "direct", None)
        steps.append((direct or kern, ins, slot[id(op.results[0])], direct is None))
    out_slots = [slot[id(v)] for v in chain.outputs]
    keep = set(out_slots)
    # values dead after step k (not outputs): dropped so the live blocks stay few
    dead: list[tuple[int, ...]] = [() for _ in steps]
    for s, k in last_use.items():
        if s not in keep:
            dead[k] += (s,)
    splats = [op.name == _SPLAT for op in chain.ops]
    shape = chain.shape
    n = math.prod(shape)
    ops = chain.ops
    width = max([_itemsize(v) for v in chain.inputs] + [_itemsize(op.results[0]) for op in ops])
    block = max(1024, BLOCK_BYTES // max(width, 1))

    out_dtypes = [_dtype(v) for v in chain.outputs]
    starts = list(range(0, n, block))

    def blocks(flat: list[np.ndarray], outs: list[np.ndarray | None], piece: list[int]) -> None:
        """Compute the blocks starting at ``piece`` into ``outs`` (allocated at the first
        block when their dtype is not known in advance: then all blocks are one piece)."""
        vals: list[Any] = [None] * len(slot)
        k = 0
        try:
            for start in piece:
                stop = min(n, start + block)
                vals[:len(flat)] = [a[start:stop] if a.ndim else a for a in flat]
                for k, (fn, ins, out, tupled) in enumerate(steps):
                    if splats[k]:
                        vals[out] = np.full(stop - start, vals[ins[0]])
                    else:
                        r = fn(*[vals[i] for i in ins])
                        vals[out] = r[0] if tupled else r
                    for d in dead[k]:
                        vals[d] = None
                for j, s in enumerate(out_slots):
                    v = vals[s]
                    o = outs[j]
                    if o is None:
                        o = outs[j] = np.empty(n, np.asarray(v).dtype)
                    o[start:stop] = v
        except ShloError as e:
            raise locate(e, ops[k])
        except Exception as e:
            raise ExecutionError(f"'{ops[k].name}' op: {type(e).__name__}: {e}",
                                 runtime_location(ops[k])) from e

    def run(*args: Any) -> tuple[Any, ...]:
        flat = [np.asarray(a).reshape(-1) if np.ndim(a) else np.asarray(a) for a in args]
        if None in out_dtypes:
            outs: list[np.ndarray | None] = [None] * len(out_slots)
            blocks(flat, outs, starts)
        else:  # the cores take pieces of blocks in turn (numpy releases the GIL in its loops)
            outs = [np.empty(n, dt) for dt in out_dtypes]
            _pool.split(lambda piece: blocks(flat, outs, piece), (starts,), 1)
        return tuple(o.reshape(shape) for o in outs)  # type: ignore[union-attr]

    if len(out_slots) == 1:
        run.direct = lambda *args: run(*args)[0]  # type: ignore[attr-defined]
    return run


_COLD_OPS = 0
"""Ops of compiled chains run through their members' kernels in this process, an op over
n > 2048 elements counting n / 2048 (~0.4 us of numpy each; races between threads only lose
counts)."""


class Evaluator(NamedTuple):
    """The loaded :mod:`.fusion_jit`: its :func:`~.fusion_jit.run`,
    :func:`~.fusion_jit.run_exact` and :func:`~.fusion_jit.run_blocks`, and whether its tanh
    gives numpy's bits here."""

    run: Callable[..., Any]
    run_exact: Callable[..., Any]
    run_blocks: Callable[..., Any]
    tanh: bool


def compiled_evaluator() -> Evaluator | None:
    """:mod:`.fusion_jit`, loaded (numba imported, its functions compiled or read from
    numba's cache, its rules probed against numpy's) on the first call; None where compiled
    code may not run (:func:`shlo.ops._half.jit_allowed`), does not compile, or does not
    compute the members' bits."""
    return _EVALUATOR.get()


def _probe_operands(dt: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """Operand pairs on which the evaluator must give the kernels' bits: zeros of both signs
    meeting, infinities, a subnormal, invalid operations, NaNs of two payloads and signs and a
    signaling NaN meeting numbers and themselves, and a sweep of [-12, 12]."""
    u = np.dtype(f"u{dt.itemsize}").type
    bits = 8 * dt.itemsize
    mantissa = 23 if dt.itemsize == 4 else 52
    ones = (u(1) << u(bits - 1)) - (u(1) << u(mantissa))  # exponent bits all ones
    quiet = u(1) << u(mantissa - 1)
    sign = u(1) << u(bits - 1)
    nan1, nan2, snan = np.array([ones | quiet | u(1), sign | ones | quiet | u(2), ones | u(3)],
                                u).view(dt)
    x = [-0.0, 0.0, 1.5, -np.inf, np.inf, 0.0, -1.0, 1e-40, nan1, 2.0, nan2, 1.0, snan, nan1,
         snan]
    y = [0.0, -0.0, -2.0, np.inf, np.inf, 0.0, 3.0, 3.0, 2.0, nan2, -1.0, snan, 1.0, nan1,
         snan]
    sweep = np.linspace(-12.0, 12.0, 193)
    return (np.concatenate([np.array(x, dt), sweep.astype(dt)]),
            np.concatenate([np.array(y, dt), sweep[::-1].astype(dt) * 0.5]))


def _probe(run: Callable[..., Any], dt: np.dtype) -> bool:
    """Whether ``run`` (:func:`.fusion_jit.run_exact`) gives the kernels' bits on
    :func:`_probe_operands` for every op but tanh (:data:`shlo.ops._tanh32_jit.AGREES` says for
    tanh), and says so where two different NaNs meet."""
    from ..ops.elementwise.arithmetic import _float_max_min

    x, y = _probe_operands(dt)
    count = len(COMPILED_OPS) - 1  # (tanh is last)
    code = np.array([(k, 2 + k, 0, 1) for k in range(count)], np.int32)
    regs = np.zeros((2 + count, x.size), dt)
    regs[0], regs[1] = x, y
    if run(code, regs, np.zeros(0, dt)):
        return False
    met = regs[:, :2].copy()
    met[0], met[1] = x[[8, 12]], x[[10, 8]]  # NaNs of different bits
    if not all(run(code[k:k + 1], met, np.zeros(0, dt)) for k in range(6)):
        return False
    binary = (np.add, np.subtract, np.multiply, np.divide, _float_max_min(dt, True),
              _float_max_min(dt, False))
    with np.errstate(all="ignore"):
        want = [f(x, y) for f in binary] + [f(x) for f in (np.negative, np.abs, np.sqrt)]
    u = f"u{dt.itemsize}"
    return all(regs[2 + k].view(u).tolist() == w.view(u).tolist() for k, w in enumerate(want))


def _load_evaluator() -> Any:
    if not _half.jit_allowed():
        return False
    try:
        from ..ops._tanh32_jit import AGREES
        from .fusion_jit import run, run_blocks, run_exact

        if not all(_probe(run_exact, dt) for dt in _COMPILED_DTYPES):
            return False
        # the plain run: IEEE results where no output holds a NaN, and says where one does
        regs = np.array([[1.5, -2.0], [0.0, 0.0], [0.0, 0.0]], np.float32)
        code = np.array([[2, 1, 0, 0], [8, 2, 0, 0]], np.int32)  # r1 = r0 * r0, r2 = sqrt(r0)
        if run(code[:1], regs, np.zeros(0, np.float32), np.array([1], np.int32)) or \
                regs[1].tolist() != [2.25, 4.0] or \
                not run(code, regs, np.zeros(0, np.float32), np.array([2], np.int32)):
            return False
        return Evaluator(run, run_exact, run_blocks, AGREES)
    except Exception:  # numba absent, or a compile error on this platform
        return False


_EVALUATOR = Once(_load_evaluator)


class _NansMet(Exception):
    """The compiled evaluator met two different NaNs: the chain runs on its kernels."""


def _compiled_chain(chain: Chain, kernels: Sequence[Callable[..., Any]]) -> Callable[..., Any]:
    """The kernel of a compiled chain (the module docstring): ``cold``, the members' kernels
    (one generated function, or block by block from :data:`MIN_ELEMENTS` on), until
    :data:`SWITCH_OPS`; then the compiled evaluator (``cold`` again where it says two
    different NaNs met)."""
    p = _Program(chain)
    n = p.n
    cold = _blocked(chain, kernels) if n >= MIN_ELEMENTS else _generated(chain, kernels, p)
    count = len(chain.ops) * max(1, n >> 11)
    has_tanh = any(op.name == _TANH for op in chain.ops)
    shape = chain.shape
    outs = p.outs.tolist()
    no_scalars = np.zeros(0, p.dtype)
    code = np.array(p.code, np.int32)
    if n <= MAX_COMPILED:
        rows_shape = (p.nregs,) + shape
        flat = len(shape) > 1

        def hot(vm: Evaluator, args: tuple[Any, ...], sc: np.ndarray) -> tuple[Any, ...]:
            regs = np.empty((p.nregs, n), p.dtype)
            rows = regs.reshape(rows_shape) if flat else regs
            for r, i in p.loads:
                rows[r] = args[i]
            if vm.run(code, regs, sc, p.outs):  # an output holds a NaN: again, exactly
                for r, i in p.loads:
                    rows[r] = args[i]
                if vm.run_exact(code, regs, sc):
                    raise _NansMet
            return tuple([rows[r] for r in outs])
    else:
        if len(p.loads) > MAX_INPUTS or len(outs) > MAX_OUTPUTS:
            return cold
        loads = np.array([r for r, _ in p.loads], np.int32)
        # pieces for the cores of at least PIECE_NS of work (a hand-over costs 50-100 us here)
        min_piece = int(PIECE_NS / sum(_COST_NS[c] for c, *_ in p.code))
        stores = p.outs
        spare = np.zeros(0, p.dtype)  # (the tuples' padding)
        count_ins = len(p.loads)
        pad_in = (spare,) * (MAX_INPUTS - count_ins)
        pad_out = (spare,) * (MAX_OUTPUTS - len(outs))

        def hot(vm: Evaluator, args: tuple[Any, ...], sc: np.ndarray) -> tuple[Any, ...]:
            ins = [np.ascontiguousarray(args[i], p.dtype).reshape(-1) for _, i in p.loads]
            if any(a.size != n for a in ins):
                raise ValueError("an operand not of its declared shape")
            results = [np.empty(n, p.dtype) for _ in outs]

            def piece(*arrays: np.ndarray) -> bool:
                return vm.run_blocks(code, arrays[:count_ins] + pad_in, loads, sc,
                                     arrays[count_ins:] + pad_out, stores,
                                     np.empty((p.nregs, COMPILED_BLOCK), p.dtype))

            if piece(*ins, *results) if n < 2 * min_piece else \
                    any(met for _, met in _pool.split(piece, ins + results, min_piece, per_core=1)):
                raise _NansMet
            return tuple([r.reshape(shape) for r in results])

    def run(*args: Any) -> tuple[Any, ...]:
        global _COLD_OPS
        vm = _EVALUATOR.value
        if vm is None and _COLD_OPS >= SWITCH_OPS:
            vm = _EVALUATOR.get()
        if not vm or _half.jit_suspended() or (has_tanh and not vm.tanh):
            _COLD_OPS += count
            return cold(*args)
        try:
            sc = np.array([args[i] for i in p.scalars], p.dtype) if p.scalars else no_scalars
            return hot(vm, args, sc)
        except Exception:  # two different NaNs met, or an operand not of its declared shape
            return cold(*args)

    if len(chain.outputs) == 1:
        run.direct = lambda *args: run(*args)[0]  # type: ignore[attr-defined]
    return run


class _Program:
    """A compiled chain as :func:`.fusion_jit.run` takes it: ``code``, its
    ``(opcode, dst, a, b)`` rows; ``nregs`` registers of ``n`` elements of ``dtype``;
    ``loads``, the ``(register, input)`` pairs loaded before it runs (the inputs read whole
    take the first registers); ``scalars``, the inputs splatted (their positions in the
    scalars operand); ``outs``, the output registers. A register is reused once its value
    is dead, after the op that last reads it: the generated ``cold`` function names its
    values by register too."""

    def __init__(self, chain: Chain) -> None:
        index = {id(v): i for i, v in enumerate(chain.inputs)}
        outputs = {id(v) for v in chain.outputs}
        last: dict[int, int] = {}
        for k, op in enumerate(chain.ops):
            for v in op.operands:
                last[id(v)] = k
        self.reg: dict[int, int] = {}  # id of an input read whole or a member's result -> reg
        self.loads: list[tuple[int, int]] = []
        self.scalars: list[int] = []
        for op in chain.ops:
            for v in op.operands:
                if op.name != _SPLAT and id(v) in index and id(v) not in self.reg:
                    self.reg[id(v)] = len(self.loads)
                    self.loads.append((len(self.loads), index[id(v)]))
        self.nregs = len(self.loads)
        free: list[int] = []
        self.dead: list[list[int]] = []  # per op, the registers whose values die with it
        self.code: list[tuple[int, int, int, int]] = []
        for k, op in enumerate(chain.ops):
            if op.name == _SPLAT:
                i = index[id(op.operands[0])]
                if i not in self.scalars:
                    self.scalars.append(i)
                opcode, a, b = len(COMPILED_OPS), self.scalars.index(i), 0
            else:
                opcode = COMPILED_OPS.index(op.name)
                a, b = self.reg[id(op.operands[0])], self.reg[id(op.operands[-1])]
            result = id(op.results[0])
            if free:
                d = free.pop()
            else:
                d, self.nregs = self.nregs, self.nregs + 1
            self.reg[result] = d
            # the operands dead after it are free from the next op on: a result never shares
            # its operand's register (the compiled loops vectorise only without overlap)
            dead = [self.reg[v] for v in {id(v): 0 for v in op.operands}
                    if last[v] == k and v not in outputs] if op.name != _SPLAT else []
            if result not in last and result not in outputs:
                dead.append(d)
            free += dead
            self.dead.append(dead)
            self.code.append((opcode, d, a, b))
        self.outs = np.array([self.reg[id(v)] for v in chain.outputs], np.int32)
        self.n = math.prod(chain.shape)
        self.dtype = _dtype(chain.ops[-1].results[0])


def _generated(chain: Chain, kernels: Sequence[Callable[..., Any]],
               p: _Program) -> Callable[..., Any]:
    """The members' kernels called in order, as one generated function of the chain's inputs
    returning its outputs (values named by ``p``'s registers, so that dead ones are freed);
    an error is reported at the failing member's op."""
    from .emitter import _INFIX, _PREFIX

    params = [""] * len(chain.inputs)
    for j, i in enumerate(p.scalars):
        params[i] = f"s{j}"
    for r, i in p.loads:
        params[i] = f"r{r}"
    namespace: dict[str, Any] = {}
    body = []
    for k, (op, kern, (_, d, a, _b)) in enumerate(zip(chain.ops, kernels, p.code)):
        direct = getattr(kern, "direct", None)
        if op.name == _SPLAT:
            args = [f"s{a}"]
        else:
            args = [f"r{p.reg[id(v)]}" for v in op.operands]
        if direct in _INFIX and len(args) == 2:
            line = f"{args[0]} {_INFIX[direct]} {args[1]}"
        elif direct in _PREFIX and len(args) == 1:
            line = f"{_PREFIX[direct]}{args[0]}"
        else:
            namespace[f"k{k}"] = direct or kern
            line = f"k{k}({', '.join(args)})" + ("" if direct else "[0]")
        body.append(f"    r{d} = {line}")
        if p.dead[k]:  # freed before the next op allocates (a large value's pages are reused)
            body.append(f"    del {', '.join(f'r{r}' for r in p.dead[k])}")
    outs = "".join(f"r{r}, " for r in p.outs)
    source = "\n".join([f"def cold({', '.join(params)}):", *body, f"    return ({outs})"])
    exec(compile(source, "<fused chain>", "exec"), namespace)
    fast = namespace["cold"]
    ops = chain.ops

    def cold(*args: Any) -> tuple[Any, ...]:
        try:
            return fast(*args)
        except Exception:
            pass
        vals = {id(v): a for v, a in zip(chain.inputs, args)}  # again, op by op: which failed
        for op, kern in zip(ops, kernels):
            try:
                vals[id(op.results[0])] = kern(*[vals[id(v)] for v in op.operands])[0]
            except ShloError as e:
                raise locate(e, op)
            except Exception as e:
                raise ExecutionError(f"'{op.name}' op: {type(e).__name__}: {e}",
                                     runtime_location(op)) from e
        return tuple(vals[id(v)] for v in chain.outputs)

    return cold


def _dtype(v: Value) -> np.dtype | None:
    """The numpy dtype of ``v``'s elements, when its type has one."""
    try:
        return np.dtype(v.type.element_type.dtype)  # type: ignore[union-attr]
    except Exception:
        return None


def _itemsize(v: Value) -> int:
    t = v.type
    try:
        return int(np.dtype(t.element_type.dtype).itemsize)  # type: ignore[union-attr]
    except Exception:
        return 8
