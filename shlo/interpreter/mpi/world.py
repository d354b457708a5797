"""The MPI world as the MPI engine sees it: communicators, tags, and waits with deadlines.

mpi4py is imported on first use (``pip install shlo[mpi]``), never when shlo is imported.
Every wait polls its requests (MPI's own blocking calls spin on a core, and ranks often
outnumber cores): first briefly at full speed, then yielding the core, then with sleeps that
grow to :data:`MAX_SLEEP` (with many ranks per core, :data:`CROWDED`, sleeping from the
start). A wait that lasts :data:`REPORT_AFTER` seconds tells the coordinator on
rank 0 what it waits for (:mod:`.coordinator`), which diagnoses deadlocks and timeouts; every
wait also has a deadline of its own, in case rank 0 cannot answer.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Iterable

if TYPE_CHECKING:  # pragma: no cover
    from mpi4py import MPI as MPIModule

__all__ = ["mpi", "available", "launched_by_mpiexec", "World", "world", "die",
           "REPORT_AFTER", "CROWD", "CROWDED", "MAX_SLEEP", "BACKSTOP", "DEATH_GRACE"]

REPORT_AFTER = 0.05
"""Seconds a wait lasts before it is reported to the coordinator (with up to :data:`CROWD`
ranks per core; more ranks per core wait longer before they report)."""

CROWDED = 32
"""Ranks per core beyond which a wait neither spins nor yields, but sleeps from the start: a
rank that yields stays runnable, and with 64 or 128 of them per core the ranks that have work
got a sliver of the core (raw Iallreduce of 1e3 f32 on 2 cores: 128 ranks 185 -> 131 ms, 256
ranks 566 -> 326 ms; 64 ranks are faster spinning and yielding, 69 ms against 112)."""

CROWD = 8
"""Ranks per core beyond which waits are reported later, as the square of the excess, up to
:data:`LATEST_REPORT` (128 ranks on 2 cores: 3.2 s). Every collective then lasts longer than
50 ms, and two reports per rank and collective flooded rank 0, which every collective waits
for (256 ranks: 6 s per all_reduce reporting after 0.8 s, 2.6 s after 5 s)."""

LATEST_REPORT = 5.0
"""The longest a wait goes unreported (half the default timeout)."""

DEATH_GRACE = 1.0
"""Seconds a rank that saw a peer's process end waits before it reports the death: a peer that
ended by reporting an error of its own (:func:`die`) has its MPI_Abort end this rank too within
that time, and the error is then said once (a deadlock's report was followed by "rank 0
died" when the other rank noticed first)."""

IDLE_SLEEP = 0.02
"""Longest sleep between polls of a rank with many ranks per core that waits for the host's
next command or a rank's results (not in a collective): 256 idle ranks waking every 2 ms kept
2 cores busy."""

MAX_SLEEP = 0.002
"""Longest sleep between two polls of a waiting request."""

SPIN_FOR = 0.0002
"""Seconds a wait polls at full speed first."""

YIELD_FOR = 0.02
"""Seconds a wait polls without sleeping (yielding the core between polls) before it sleeps
between polls: short collectives end without a sleep's latency, long waits cost no core."""

BACKSTOP = 5.0
"""Seconds past the timeout after which a rank stops waiting for the coordinator's verdict."""

# Tags on the control communicator.
TAG_REPORT = 11  # rank -> coordinator: a state change, an infeed request
TAG_REPLY = 12  # coordinator -> rank: an infeed value
TAG_COMMAND = 13  # host -> rank: run a grid, or exit
TAG_RESULT = 14  # rank -> host: results and outfeed of a run


def mpi() -> MPIModule:
    """mpi4py's MPI module (initialises MPI with thread support on first use)."""
    try:
        import mpi4py

        mpi4py.rc.threads = True
        mpi4py.rc.thread_level = "multiple"
        from mpi4py import MPI
    except ImportError as e:
        raise RuntimeError("the MPI engine needs mpi4py and an MPI library: pip install "
                           "'shlo[mpi]' (mpi4py and the mpich wheel)") from e
    return MPI


def available() -> bool:
    """Whether mpi4py can be imported (without initialising MPI)."""
    import importlib.util

    return importlib.util.find_spec("mpi4py") is not None


def launched_by_mpiexec() -> bool:
    """Whether this process is a rank of an MPI job of more than one rank (MPICH's and Open
    MPI's launchers set these variables)."""
    for var in ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MPI_LOCALNRANKS", "PMIX_SIZE"):
        v = os.environ.get(var)
        if v is not None and v.isdigit() and int(v) > 1:
            return True
    return False


class World:
    """COMM_WORLD and the engine's own duplicates of it (control messages, channels)."""

    def __init__(self) -> None:
        MPI = mpi()
        self.MPI = MPI
        self.comm = MPI.COMM_WORLD
        self.rank = self.comm.Get_rank()
        self.size = self.comm.Get_size()
        self.ctl = self.comm.Dup()  # reports, commands, results
        self.tag_ub = int(self.comm.Get_attr(MPI.TAG_UB) or 32767)
        self._grids: dict[int, Any] = {}
        self._next_pid_check = 0
        self.communicators: dict[int, dict[Any, Any]] = {}  # per grid communicator (MPIGrid)
        self.report: Callable[[dict[str, Any]], None] = lambda msg: None
        self.run_id = 0  # the grid run in progress (numbered by the host)
        self.num_partitions = 1  # of the grid running now (to name ranks as processes)
        self.pids: list[tuple[str, int]] = self.comm.allgather((socket.gethostname(),
                                                                os.getpid()))
        host = socket.gethostname()
        crowd = sum(1 for h, _ in self.pids if h == host) / _cores()  # ranks per core
        self.report_after = min(REPORT_AFTER * max(1.0, crowd / CROWD) ** 2, LATEST_REPORT)
        self.crowded = crowd > CROWDED  # waits sleep at once (see poll)
        if threading.current_thread() is threading.main_thread():
            # MPICH's launcher started with -disable-auto-cleanup signals the surviving
            # ranks (SIGUSR1) when one dies: say which one, then end the job.
            signal.signal(signal.SIGUSR1, lambda signum, frame: self._peer_died())

    def report_to_host(self, msg: dict[str, Any]) -> None:
        """Tell the coordinator on rank 0 about this rank (``msg``), naming the run: a report
        that arrives after its run ended is not taken for one of the next run."""
        self.ctl.send({**msg, "run": self.run_id}, dest=0, tag=TAG_REPORT)

    def done(self) -> None:
        """This rank's work is over: a peer ending now is no failure (MPICH's launcher also
        signals the ranks still finalizing when one exits)."""
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGUSR1, signal.SIG_IGN)

    def dead_ranks(self, count: int | None = None) -> list[int]:
        """Ranks on this host whose OS process has ended: of all ranks, or of the next
        ``count`` ranks in turn (a later call goes on where this one stopped)."""
        host = socket.gethostname()
        ranks: Iterable[int] = range(self.size)
        if count is not None and count < self.size:
            start = self._next_pid_check
            self._next_pid_check = (start + count) % self.size
            ranks = [(start + k) % self.size for k in range(count)]
        dead = []
        for r in ranks:
            h, pid = self.pids[r]
            if h == host and r != self.rank and not _alive(pid):
                dead.append(r)
        return dead

    def peer_died_message(self, count: int | None = None) -> str | None:
        """The error naming the ranks of this host that died (of the next ``count``, see
        :meth:`dead_ranks`), or None."""
        dead = self.dead_ranks(count)
        if not dead:
            return None
        from ...ops.distributed.groups import plural_label

        return (f"error: {plural_label([divmod(r, self.num_partitions) for r in dead])} "
                f"(rank{'s' if len(dead) > 1 else ''} {', '.join(str(r) for r in dead)}) "
                f"died: its OS process ended while the grid ran (a crash, a kill, os._exit); "
                f"the MPI job is ended")

    def _peer_died(self) -> None:  # pragma: no cover - exercised under mpiexec
        time.sleep(DEATH_GRACE)
        die(self.peer_died_message() or "error: a rank of the MPI job died (its OS process "
                                        "ended); the MPI job is ended")

    def grid_comm(self, n: int) -> Any:
        """The communicator of ranks 0..n-1 (made once per size, by those ranks only)."""
        c = self._grids.get(n)
        if c is None:
            if n == self.size:
                c = self.comm.Dup()
            else:
                c = self.comm.Create_group(self.comm.Get_group().Range_incl([(0, n - 1, 1)]),
                                           tag=n)
            self._grids[n] = c
        return c

    def poll(self, test: Callable[[], bool], deadline: float | None,
             on_report: Callable[[], None] | None = None, idle: bool = False) -> bool:
        """Call ``test`` until it is true (True) or ``deadline`` passes (False); after
        ``report_after`` seconds (:data:`REPORT_AFTER`) call ``on_report`` once. ``idle``: a
        wait outside collectives (see :data:`IDLE_SLEEP`)."""
        if test():
            return True
        start = time.monotonic()
        sleep = 0.0
        reported = on_report is None
        spin_for, yield_for = (0.0, 0.0) if self.crowded else (SPIN_FOR, YIELD_FOR)
        max_sleep = IDLE_SLEEP if idle and self.crowded else MAX_SLEEP
        while True:
            if test():
                return True
            now = time.monotonic()
            if not reported and now - start > self.report_after:
                reported = True
                on_report()  # type: ignore[misc]
            if deadline is not None and now > deadline:
                return False
            if now - start < spin_for:
                continue  # fewer ranks than cores: the answer is microseconds away
            if now - start < yield_for:
                os.sched_yield()  # a rank that computes gets the core (ranks > cores)
            else:
                sleep = min(max_sleep, sleep * 2 or 2e-5)
                time.sleep(sleep)


def _cores() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, ended but not yet reaped, does not)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
        return True


_WORLD: World | None = None


def world() -> World:
    """The process's MPI world (made on first use)."""
    global _WORLD
    if _WORLD is None:
        _WORLD = World()
    return _WORLD


def die(message: str, code: int = 1) -> None:
    """Print ``message`` (a located error) on stderr and abort the whole MPI job."""
    sys.stderr.write(message.rstrip("\n") + "\n")
    sys.stderr.flush()
    # The launcher forwards a rank's stderr through a pipe; MPI_Abort kills the job at once, so
    # give the forwarding a moment, or the one message that says what happened can be lost.
    time.sleep(0.5)
    w = world()
    try:
        w.comm.Abort(code)
    finally:
        os._exit(code)  # MPI_Abort may return before the launcher kills this rank
