"""Run under mpiexec by tests/interpreter/test_mpi.py: ``mpi_job.py SCENARIO``.

* ``bitwise``: every program of PROGRAMS on the MPI engine, deterministic (results bitwise
  equal to the threaded grid's) and default (integers equal, floats close); rank 0 prints
  ``OK n`` or the mismatches.
* ``dies``: process 1 ends its OS process in the middle of the run (os._exit); rank 0 waits
  for it at an all_reduce.
* ``unreceived``: a value sent and never received ends the job, located at its send.
* ``trace``: shlo.trace of a grid program on the MPI engine records every process's events
  (in grid order, filters applied on every rank) as on the threaded grid; rank 0 prints
  ``OK n`` or the differences.
"""

from __future__ import annotations

import os
import sys

import ml_dtypes
import numpy as np

import shlo
from shlo.interpreter.mpi.engine import MPIEngine, serve, stop_workers
from shlo.interpreter.mpi.world import world
from shlo.interpreter.process_grid import PerProcess, run_grid


def body(op: str, et: str) -> str:
    return (f'({{ ^bb0(%a: tensor<{et}>, %b: tensor<{et}>): %s = {op} %a, %b : tensor<{et}>\n'
            f'  stablehlo.return %s : tensor<{et}> }})')


def two_op_body(et: str) -> str:  # not a single op: folded with the body itself
    return (f'({{ ^bb0(%a: tensor<{et}>, %b: tensor<{et}>):\n'
            f'  %s = stablehlo.add %a, %b : tensor<{et}>\n'
            f'  %h = stablehlo.constant dense<0.5> : tensor<{et}>\n'
            f'  %m = stablehlo.multiply %s, %h : tensor<{et}>\n'
            f'  stablehlo.return %m : tensor<{et}> }})')


def reduce(et: str, op: str = "stablehlo.add", groups: str = "[[0, 1, 2, 3]]",
           shape: str = "6", b: str | None = None) -> str:
    t = f"tensor<{shape}x{et}>"
    return f"""func.func @main(%x: {t}) -> {t} {{
  %r = "stablehlo.all_reduce"(%x) {b or body(op, et)} {{replica_groups = dense<{groups}> :
      tensor<{groups.count("[") - 1}x{groups.split("]")[0].count(",") + 1}xi64>}} : ({t}) -> {t}
  return %r : {t}
}}"""


def moves(et: str) -> str:
    t, g, q = f"tensor<4x3x{et}>", f"tensor<16x3x{et}>", f"tensor<1x3x{et}>"
    return f"""func.func @main(%x: {t}) -> ({g}, {t}, {t}, {t}, {q}) {{
  %g = "stablehlo.all_gather"(%x) {{all_gather_dim = 0 : i64,
      replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>}} : ({t}) -> {g}
  %a = "stablehlo.all_to_all"(%x) {{split_dimension = 0 : i64, concat_dimension = 0 : i64,
      split_count = 4 : i64, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>}}
      : ({t}) -> {t}
  %p = "stablehlo.collective_permute"(%x) {{source_target_pairs = dense<[[0, 1], [1, 2],
      [2, 3], [3, 0]]> : tensor<4x2xi64>}} : ({t}) -> {t}
  %b = "stablehlo.collective_broadcast"(%x) {{replica_groups = dense<[[2, 1], [0, 3]]> :
      tensor<2x2xi64>}} : ({t}) -> {t}
  %s = "stablehlo.reduce_scatter"(%x) {body("stablehlo.add", et) if et not in ("i1",) else
      body("stablehlo.or", et)} {{scatter_dimension = 0 : i64,
      replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>}} : ({t}) -> {q}
  return %g, %a, %p, %b, %s : {g}, {t}, {t}, {t}, {q}
}}"""


def moves_inner(et: str) -> str:
    """all_gather and all_to_all along dimensions other than 0 (blocks that do not lie one
    after the other in memory)."""
    t, g, a, b = (f"tensor<2x8x{et}>", f"tensor<2x32x{et}>", f"tensor<8x2x{et}>",
                  f"tensor<1x16x{et}>")
    grp = "replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>"
    return f"""func.func @main(%x: {t}) -> ({g}, {a}, {t}, {b}) {{
  %g = "stablehlo.all_gather"(%x) {{all_gather_dim = 1 : i64, {grp}}} : ({t}) -> {g}
  %a = "stablehlo.all_to_all"(%x) {{split_dimension = 1 : i64, concat_dimension = 0 : i64,
      split_count = 4 : i64, {grp}}} : ({t}) -> {a}
  %c = "stablehlo.all_to_all"(%x) {{split_dimension = 1 : i64, concat_dimension = 1 : i64,
      split_count = 4 : i64, {grp}}} : ({t}) -> {t}
  %y = stablehlo.reshape %x : ({t}) -> tensor<4x4x{et}>
  %s = stablehlo.slice %y [0:4, 0:4] : (tensor<4x4x{et}>) -> tensor<4x4x{et}>
  %d = "stablehlo.all_to_all"(%s) {{split_dimension = 0 : i64, concat_dimension = 1 : i64,
      split_count = 4 : i64, {grp}}} : (tensor<4x4x{et}>) -> {b}
  return %g, %a, %c, %d : {g}, {a}, {t}, {b}
}}"""


def partial_permute() -> str:
    t = "tensor<5xi32>"
    return f"""func.func @main(%x: {t}) -> {t} {{
  %p = "stablehlo.collective_permute"(%x) {{source_target_pairs = dense<[[0, 2], [2, 1]]> :
      tensor<2x2xi64>}} : ({t}) -> {t}
  return %p : {t}
}}"""


def data(dtype: np.dtype, shape: tuple[int, ...], seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.dtype(dtype).kind in "iu" or dtype in (ml_dtypes.int4,):
        return rng.integers(-3, 4, shape).astype(dtype)
    if np.dtype(dtype).kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    x = rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4, shape)
    return x.astype(dtype)


def signed_zeros(i: int) -> np.ndarray:
    return np.array([0.0, -0.0, np.nan if i == 2 else 1.0, -0.0 if i % 2 else 0.0, -1.0, i],
                    np.float32)


F32, BF16 = np.dtype(np.float32), np.dtype(ml_dtypes.bfloat16)
PROGRAMS = [  # (name, text, per-process inputs of 4 processes)
    ("f32 sum", reduce("f32"), [data(F32, (6,), i) for i in range(4)]),
    ("f32 sum, 2 groups", reduce("f32", groups="[[0, 2], [3, 1]]"),
     [data(F32, (6,), 10 + i) for i in range(4)]),
    ("f64 product", reduce("f64", "stablehlo.multiply"),
     [data(np.dtype(np.float64), (6,), 20 + i) for i in range(4)]),
    ("bf16 sum", reduce("bf16"), [data(BF16, (6,), 30 + i) for i in range(4)]),
    ("f8E4M3FN sum", reduce("f8E4M3FN"),
     [data(np.dtype(ml_dtypes.float8_e4m3fn), (6,), 40 + i) for i in range(4)]),
    ("complex sum", reduce("complex<f32>"),
     [data(np.dtype(np.complex64), (6,), 50 + i) for i in range(4)]),
    ("f32 max, signed zeros and NaN", reduce("f32", "stablehlo.maximum"),
     [signed_zeros(i) for i in range(4)]),
    ("f32 min, signed zeros and NaN", reduce("f32", "stablehlo.minimum"),
     [signed_zeros(i) for i in range(4)]),
    ("i32 product", reduce("i32", "stablehlo.multiply"),
     [data(np.dtype(np.int32), (6,), 60 + i) for i in range(4)]),
    ("ui8 sum (wraps)", reduce("ui8"), [np.full(6, 100 + i, np.uint8) for i in range(4)]),
    ("i4 sum (wraps)", reduce("i4"), [data(np.dtype(ml_dtypes.int4), (6,), 70 + i)
                                      for i in range(4)]),
    ("i1 and", reduce("i1", "stablehlo.and"), [data(np.dtype(np.bool_), (6,), 80 + i)
                                                for i in range(4)]),
    ("f32 two-op body", reduce("f32", b=two_op_body("f32")),
     [data(F32, (6,), 90 + i) for i in range(4)]),
    ("f32 moves", moves("f32"), [data(F32, (4, 3), 100 + i) for i in range(4)]),
    ("bf16 moves", moves("bf16"), [data(BF16, (4, 3), 110 + i) for i in range(4)]),
    ("f32 moves along inner dimensions", moves_inner("f32"),
     [data(F32, (2, 8), 120 + i) for i in range(4)]),
    ("i4 moves along inner dimensions", moves_inner("i4"),
     [data(np.dtype(ml_dtypes.int4), (2, 8), 130 + i) for i in range(4)]),
    ("permute without a source", partial_permute(),
     [np.arange(5, dtype=np.int32) + 10 * i for i in range(4)]),
]


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def close(a: np.ndarray, b: np.ndarray) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind in "iub" or a.dtype != b.dtype:
        return same_bits(a, b)
    return bool(np.allclose(a.astype(np.complex128), b.astype(np.complex128), rtol=1e-5,
                            atol=1e-6, equal_nan=True))


def bitwise() -> int:
    modules = [shlo.parse(text) for _, text, _ in PROGRAMS]
    w = world()
    if w.rank != 0:
        serve(lambda k: modules[k])
        return 0
    bad = []
    try:
        for k, ((name, _, xs), m) in enumerate(zip(PROGRAMS, modules)):
            want = run_grid(m, PerProcess(xs), replicas=4)
            for det in (True, False):
                got = run_grid(m, PerProcess(xs), replicas=4,
                               engine=MPIEngine(deterministic=det, module_key=k))
                ok = same_bits if det else close
                for p, (g, h) in enumerate(zip(got, want)):
                    for i, (a, b) in enumerate(zip(g, h)):
                        if not ok(a, b):
                            bad.append(f"{name} (deterministic={det}), process {p}, result "
                                       f"{i}: MPI {np.asarray(a)!r} threads {np.asarray(b)!r}")
    finally:
        stop_workers()
    print("\n".join(bad) if bad else f"OK {len(PROGRAMS)}", flush=True)
    return 0


DIES = """func.func @main(%x: tensor<2xi64>) -> tensor<2xi64> {
  %y = stablehlo.custom_call @work(%x) : (tensor<2xi64>) -> tensor<2xi64>
  %s = "stablehlo.all_reduce"(%y) ({
    ^bb0(%a: tensor<i64>, %b: tensor<i64>):
      %w = stablehlo.add %a, %b : tensor<i64>
      stablehlo.return %w : tensor<i64>
  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xi64>) -> tensor<2xi64>
  return %s : tensor<2xi64>
}"""


def dies() -> int:
    def work(x: np.ndarray) -> np.ndarray:
        if world().rank == 1:
            os._exit(3)  # the rank's OS process ends without a word
        return x

    m = shlo.parse(DIES, "dies.mlir")
    w = world()
    if w.rank != 0:
        serve(lambda k: m, custom_calls={"work": work})
        return 0
    run_grid(m, np.arange(2), replicas=2, custom_calls={"work": work},
             engine=MPIEngine(), timeout=float(sys.argv[2]))
    stop_workers()
    print("finished", flush=True)
    return 0


UNRECEIVED = """func.func @send(%x: tensor<2xi64>) -> tensor<2xi64> {
  %t = stablehlo.after_all : !stablehlo.token
  %t1 = "stablehlo.send"(%x, %t) {channel_handle = #stablehlo.channel_handle<handle = 3,
      type = 1>} : (tensor<2xi64>, !stablehlo.token) -> !stablehlo.token
  %t2 = "stablehlo.send"(%x, %t1) {channel_handle = #stablehlo.channel_handle<handle = 3,
      type = 1>} : (tensor<2xi64>, !stablehlo.token) -> !stablehlo.token
  return %x : tensor<2xi64>
}
func.func @recv(%x: tensor<2xi64>) -> tensor<2xi64> {
  %t = stablehlo.after_all : !stablehlo.token
  %v, %t2 = "stablehlo.recv"(%t) {channel_handle = #stablehlo.channel_handle<handle = 3,
      type = 1>} : (!stablehlo.token) -> (tensor<2xi64>, !stablehlo.token)
  return %v : tensor<2xi64>
}"""


def unreceived() -> int:
    """Process 0 sends twice on a channel process 1 receives on once: the job ends with the
    threaded grid's report, at the second send."""
    m = shlo.parse(UNRECEIVED, "unreceived.mlir")
    if world().rank != 0:
        serve(lambda k: m)
        return 0
    run_grid(m, np.arange(2), replicas=2, programs=[["send"], ["recv"]], engine=MPIEngine(),
             timeout=30.0)
    stop_workers()
    print("finished", flush=True)
    return 0


TRACED = """func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %k = stablehlo.constant dense<2> : tensor<i64>
  %r:2 = stablehlo.while(%i = %c0, %a = %x) : tensor<i64>, tensor<3xf32>
    cond {
      %p = stablehlo.compare LT, %i, %k : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %s = "stablehlo.all_reduce"(%a) ({
        ^bb0(%u: tensor<f32>, %v: tensor<f32>):
          %w = stablehlo.add %u, %v : tensor<f32>
          stablehlo.return %w : tensor<f32>
      }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>} : (tensor<3xf32>) ->
          tensor<3xf32>
      %t = stablehlo.tanh %s : tensor<3xf32>
      %j = stablehlo.add %i, %one : tensor<i64>
      stablehlo.return %j, %t : tensor<i64>, tensor<3xf32>
    }
  %p = "interpreter.probe"(%r#1) {probe_id = "out"} : (tensor<3xf32>) -> tensor<3xf32>
  return %p : tensor<3xf32>
}"""


def trace() -> int:
    from shlo.debug.trace import trace as shlo_trace

    m = shlo.parse(TRACED, "traced.mlir")
    if world().rank != 0:
        serve(lambda k: m)
        return 0
    xs = PerProcess([np.arange(3, dtype=np.float32) * (i + 1) for i in range(4)])
    bad = []
    try:
        for filters in ({}, {"ops": ["tanh", "all_reduce"]}):
            want = shlo_trace(m, xs, replicas=4, **filters)
            got = shlo_trace(m, xs, replicas=4, engine=MPIEngine(), **filters)

            def rows(t):  # what must agree (times differ)
                return [(e.process, e.name, e.iteration, e.depth, e.key,
                         None if e.parent is None else e.parent.key,
                         tuple(s.hash for s in e.summaries)) for e in t.events]

            if got.error is not None or rows(got) != rows(want):
                bad.append(f"{filters}: {got.error} {rows(got)} != {rows(want)}")
            if {e.process for e in got.events} != {0, 1, 2, 3}:
                bad.append(f"{filters}: processes {sorted({e.process for e in got.events})}")
            if sorted(got.probes) != ["out"] or len(got.probes["out"]) != 4 or not all(
                    np.array_equal(a, b) for a, b in zip(got.probes["out"],
                                                         want.probes["out"])):
                bad.append(f"{filters}: probes {got.probes} != {want.probes}")
    finally:
        stop_workers()
    print("\n".join(bad) if bad else "OK 2", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit({"bitwise": bitwise, "dies": dies, "unreceived": unreceived,
              "trace": trace}[sys.argv[1]]())
