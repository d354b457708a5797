"""The MPI engine on localhost (skipped when mpi4py or mpiexec is missing: `pip install
'shlo[mpi]'`). Each test is one or a few mpiexec jobs, each job running many cases: the
collective, channel and feed cases of the conformance corpus (2 and 5 ranks), a batch of
programs compared bitwise with the threaded grid (4 ranks), and the failures that must end
the job with a message: a deadlock, a rank that raises, a rank that dies."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("mpi4py")

from shlo.interpreter.mpi.launch import mpi_command, mpiexec  # noqa: E402

try:
    mpiexec()
except RuntimeError:  # pragma: no cover
    pytest.skip("no mpiexec in this environment", allow_module_level=True)

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
CORPUS = ROOT.parent / "shared" / "conformance" / "interpret"
GRID_FILES = ["all_gather", "all_reduce", "all_to_all", "collective_broadcast",
              "collective_permute", "collective_reduce", "infeed", "outfeed", "partition_id",
              "reduce_scatter", "replica_id", "send_recv"]


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = str(ROOT) + os.pathsep + e.get("PYTHONPATH", "")
    e.setdefault("OPENBLAS_NUM_THREADS", "1")
    return e


def shlo(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "shlo", *args], capture_output=True,
                          text=True, env=env(), timeout=timeout)


@pytest.mark.skipif(not CORPUS.is_dir(), reason="no ../shared/conformance")
def test_the_grid_cases_of_the_corpus_pass_on_mpi_deterministic() -> None:
    files = [str(CORPUS / f"{f}.mlir") for f in GRID_FILES]
    r = shlo("check", "--engine", "mpi", "--deterministic", "-q", *files)
    threads = shlo("check", "-q", *files)
    want = re.search(r"(\d+) passed, 0 failed", threads.stdout)
    assert want is not None, threads.stdout
    assert f"{want.group(1)} passed, 0 failed" in r.stdout, r.stdout + r.stderr


def test_programs_are_bitwise_equal_to_the_threaded_grid() -> None:
    """bf16, fp8, int4, complex, float max/min with signed zeros and NaN, a two-op body,
    integer wrapping, data movement of every kind: deterministic MPI gives the threaded
    grid's bits; the default (MPI's own float reductions) gives close values."""
    cmd = mpi_command(4, [])[:-1] + [str(HERE / "mpi_job.py"), "bitwise"]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env(), timeout=600)
    assert r.stdout.strip().startswith("OK"), r.stdout + r.stderr[-2000:]


DEADLOCK = """func.func @main(%x: tensor<2xi64>) -> tensor<2xi64> {
  %t = stablehlo.after_all : !stablehlo.token
  %id = stablehlo.replica_id : tensor<ui32>
  %z = stablehlo.constant dense<0> : tensor<ui32>
  %c = stablehlo.compare EQ, %id, %z : (tensor<ui32>, tensor<ui32>) -> tensor<i1>
  %r = "stablehlo.if"(%c) ({
    %v, %t2 = "stablehlo.recv"(%t) {channel_handle = #stablehlo.channel_handle<handle = 4,
        type = 1>} : (!stablehlo.token) -> (tensor<2xi64>, !stablehlo.token)
    stablehlo.return %v : tensor<2xi64>
  }, {
    %v, %t2 = "stablehlo.recv"(%t) {channel_handle = #stablehlo.channel_handle<handle = 5,
        type = 1>} : (!stablehlo.token) -> (tensor<2xi64>, !stablehlo.token)
    stablehlo.return %v : tensor<2xi64>
  }) : (tensor<i1>) -> tensor<2xi64>
  return %r : tensor<2xi64>
}
"""

RAISES = """func.func @main(%x: tensor<2xi64>) -> tensor<2xi64> {
  %t = stablehlo.after_all : !stablehlo.token
  %id = stablehlo.replica_id : tensor<ui32>
  %z = stablehlo.constant dense<0> : tensor<ui32>
  %c = stablehlo.compare EQ, %id, %z : (tensor<ui32>, tensor<ui32>) -> tensor<i1>
  %r = "stablehlo.if"(%c) ({
    stablehlo.return %x : tensor<2xi64>
  }, {
    %v, %t2 = "stablehlo.infeed"(%t) : (!stablehlo.token) -> (tensor<2xi64>, !stablehlo.token)
    stablehlo.return %v : tensor<2xi64>
  }) : (tensor<i1>) -> tensor<2xi64>
  %s = "stablehlo.all_reduce"(%r) ({
    ^bb0(%a: tensor<i64>, %b: tensor<i64>):
      %w = stablehlo.add %a, %b : tensor<i64>
      stablehlo.return %w : tensor<i64>
  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xi64>) -> tensor<2xi64>
  return %s : tensor<2xi64>
}
"""


def test_a_deadlock_and_a_raising_rank_end_the_job_with_a_located_message(
        tmp_path: Path) -> None:
    import numpy as np

    x = tmp_path / "x.npy"
    np.save(x, np.arange(2))
    (tmp_path / "deadlock.mlir").write_text(DEADLOCK)
    (tmp_path / "raises.mlir").write_text(RAISES)
    for name, want in (("deadlock", [r"deadlock.mlir:7:5: error: 'stablehlo.recv' op on "
                                     r"process \(replica 0, partition 0\) for a send on "
                                     r"channel 4: deadlock",
                                     r"replica 1, partition 0\): waits at 'stablehlo.recv' at \S*"
                                     r"deadlock.mlir:11:5 for a send on channel 5"]),
                       ("raises", [r"raises.mlir:9:5: error: 'stablehlo.infeed' op on process "
                                   r"\(replica 1, partition 0\): the infeed queue is empty"])):
        start = time.monotonic()
        r = shlo("run", str(tmp_path / f"{name}.mlir"), str(x), "--replicas", "2", "--engine",
                 "mpi", "-n", "2", "--timeout", "30", timeout=120)
        took = time.monotonic() - start
        assert r.returncode != 0
        for w in want:
            assert re.search(w, r.stderr), r.stderr
        assert r.stderr.count("error:") == 1, r.stderr  # said once
        assert took < 30  # diagnosed, not timed out (the 30 s timeout)


def test_a_value_sent_and_never_received_ends_the_job_at_its_send() -> None:
    cmd = mpi_command(2, [])[:-1] + [str(HERE / "mpi_job.py"), "unreceived"]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env(), timeout=120)
    assert r.returncode != 0 and "finished" not in r.stdout
    # as the threaded grid says it (tests/interpreter/test_process_grid.py)
    assert re.search(r"unreceived.mlir:5:3: error: 'stablehlo.send' op on process \(replica 0, "
                     r"partition 0\): the value sent on channel 3 was never received",
                     r.stderr), r.stderr
    assert r.stderr.count("error:") == 1, r.stderr


def test_a_rank_that_dies_ends_the_job_naming_it() -> None:
    cmd = mpi_command(2, [])[:-1] + [str(HERE / "mpi_job.py"), "dies", "20"]
    start = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env(), timeout=120)
    assert r.returncode != 0
    assert "finished" not in r.stdout
    if "-disable-auto-cleanup" in cmd:  # MPICH: the others live on and say who died
        assert "process (replica 1, partition 0) (rank 1) died" in r.stderr, r.stderr
        assert time.monotonic() - start < 20  # found, not timed out


def test_shlo_run_on_mpi_prints_what_the_threaded_grid_prints(tmp_path: Path) -> None:
    import numpy as np

    (tmp_path / "p.mlir").write_text("""
func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<8xf32>) {
  %r = "stablehlo.all_reduce"(%x) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}
      : (tensor<4xf32>) -> tensor<4xf32>
  %i = stablehlo.partition_id : tensor<ui32>
  %f = stablehlo.convert %i : (tensor<ui32>) -> tensor<f32>
  %y = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<4xf32>
  %z = stablehlo.add %r, %y : tensor<4xf32>
  %g = "stablehlo.all_gather"(%z) {all_gather_dim = 0 : i64,
      replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>,
      channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>}
      : (tensor<4xf32>) -> tensor<8xf32>
  return %r, %g : tensor<4xf32>, tensor<8xf32>
}""")
    np.save(tmp_path / "x.npy", np.arange(4, dtype=np.float32))
    args = [str(tmp_path / "p.mlir"), str(tmp_path / "x.npy"), "--replicas", "2",
            "--partitions", "2"]
    threads = shlo("run", *args)
    mpi = shlo("run", *args, "--engine", "mpi", "-n", "4")
    assert threads.returncode == 0 and "// process (1, 1)" in threads.stdout
    assert mpi.stdout == threads.stdout, mpi.stderr


def test_probes_of_every_rank_reach_the_host() -> None:
    """`interpreter.probe` values recorded on ranks other than 0 come back to the host, in grid
    order, as on the threaded grid (the host's expect_serialized_eq checks all four)."""
    case = str(HERE / "grid_probes.mlir")
    for engine in ([], ["--engine", "mpi"]):
        r = shlo("check", *engine, case)
        assert "1 passed, 0 failed" in r.stdout, (engine, r.stdout + r.stderr)


class _StubWorld:
    """What a Coordinator reads of its world, without MPI."""

    run_id = 7
    report_after = 0.05
    ctl = None


def test_the_coordinator_ignores_reports_of_another_run() -> None:
    """A rank's report that it finished run 6 arrives while run 7 is watched: taking it for run
    7 made the coordinator say the rank 'finished without reaching' a collective it had not
    reached yet (seen with 128 ranks on 2 cores)."""
    from shlo.interpreter.mpi.coordinator import Coordinator

    c = Coordinator(_StubWorld(), 2, 1, 10.0)  # type: ignore[arg-type]
    c._handle({"t": "done", "rank": 1, "seq": {}, "run": 6})
    assert c.state[1] == "running" and not c.done
    c._handle({"t": "block", "rank": 1, "key": ("k",), "members": [0, 1], "op": None,
               "run": 7})
    assert isinstance(c.state[1], tuple)
    c._handle({"t": "done", "rank": 1, "seq": {}, "run": 7})
    assert c.state[1] == "done" and c.done == {1}


def test_a_trace_on_mpi_has_every_process_events_as_on_threads() -> None:
    cmd = mpi_command(4, [])[:-1] + [str(HERE / "mpi_job.py"), "trace"]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env(), timeout=600)
    assert r.stdout.strip().startswith("OK"), r.stdout + r.stderr[-2000:]


def test_shlo_run_trace_on_mpi_writes_every_process_values(tmp_path: Path) -> None:
    import numpy as np

    sys.path.insert(0, str(HERE))
    from mpi_job import TRACED

    (tmp_path / "p.mlir").write_text(TRACED)
    np.save(tmp_path / "x.npy", np.arange(3, dtype=np.float32))
    r = shlo("run", str(tmp_path / "p.mlir"), str(tmp_path / "x.npy"), "--replicas", "4",
             "--engine", "mpi", "-n", "4", "--trace", str(tmp_path / "t"), "--trace-ops",
             "tanh")
    assert r.returncode == 0, r.stderr
    assert "traced 12 op executions" in r.stderr, r.stderr
    lines = (tmp_path / "t" / "ops.csv").read_text().splitlines()
    head = lines[0].split(",")
    rows = [dict(zip(head, line.split(","))) for line in lines[1:]]
    tanh = sorted((int(x["process"]), int(x["iteration"])) for x in rows
                  if x["op"] == "stablehlo.tanh")
    assert tanh == [(p, i) for p in range(4) for i in range(2)]
    probe = np.load(tmp_path / "t" / "probe12.npy")  # process 3's probe, written last
    np.testing.assert_allclose(probe, np.tanh(np.tanh(np.arange(3) * 4.0) * 4.0), rtol=1e-6)


def test_shlo_run_profile_on_mpi_has_one_track_per_process(tmp_path: Path) -> None:
    import json

    import numpy as np

    sys.path.insert(0, str(HERE))
    from mpi_job import TRACED

    (tmp_path / "p.mlir").write_text(TRACED)
    np.save(tmp_path / "x.npy", np.arange(3, dtype=np.float32))
    out = tmp_path / "t.json"
    r = shlo("run", str(tmp_path / "p.mlir"), str(tmp_path / "x.npy"), "--replicas", "4",
             "--engine", "mpi", "-n", "4", "--profile", str(out))
    assert r.returncode == 0, r.stderr
    events = json.loads(out.read_text())["traceEvents"]
    tracks = sorted(e["pid"] for e in events if e["ph"] == "M")
    assert tracks == [0, 1, 2, 3]
    tanh = sorted(e["pid"] for e in events if e["ph"] == "X" and e["name"] == "stablehlo.tanh")
    assert tanh == [0, 0, 1, 1, 2, 2, 3, 3]  # two iterations on every rank
