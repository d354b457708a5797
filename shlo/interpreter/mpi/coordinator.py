"""The coordinator: a thread on rank 0 that watches the ranks of a grid while it runs.

Ranks tell it when a wait has lasted :data:`~.world.REPORT_AFTER` seconds (longer with many
ranks per core), what they wait for (the collective's key and members, or a channel), when
they run again and when they finish; they also ask it for infeed values when the grid shares
one queue. From those reports it diagnoses, in the threaded grid's words
(:mod:`shlo.ops.distributed.meeting`):

* a member that **finished** without reaching a collective others wait at;
* a **timeout**: a rank has waited ``timeout`` seconds for members that have not arrived
  (members that arrived and wait for the exchange itself are not late);
* a **deadlock**: every live rank waits, no collective has all its members, and nothing
  changed for :data:`SETTLE` seconds.

Each of these ends the job: the message goes to stderr and MPI aborts every rank.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from ...ir import FileLineColLoc, Location
from ...ops.distributed.meeting import (
    deadlock_message, gone_message, grid_error, timeout_message, waits_at,
)
from .world import DEATH_GRACE, TAG_REPLY, TAG_REPORT, World, die

__all__ = ["Coordinator", "OpRef", "op_info", "SETTLE"]

SETTLE = 0.3
"""Seconds every live rank must have been waiting, with no report, before a deadlock."""

PID_CHECKS = 32
"""Ranks whose OS process is looked at per check (every 0.2 s, in turn): looking at all 256
of a large job each time kept rank 0 busy."""


class OpRef:
    """An op as another rank describes it: its name and location (for messages)."""

    def __init__(self, name: str, location: Location | None) -> None:
        self.name = name
        self.location = location


def op_info(op: Any) -> tuple[str, str, int, int] | None:
    """What a report says about ``op``: (name, file, line, col)."""
    if op is None:
        return None
    flc = op.location.file_line_col() if op.location is not None else None
    return (op.name, *(flc or ("", 0, 0)))


def op_ref(info: tuple[str, str, int, int] | None) -> OpRef | None:
    if info is None:
        return None
    name, file, line, col = info
    return OpRef(name, FileLineColLoc(file, line, col) if file else None)


class Coordinator(threading.Thread):
    """Watches ranks ``0..n-1`` of one grid run; serves a shared infeed queue."""

    def __init__(self, w: World, n: int, num_partitions: int, timeout: float | None,
                 infeed: list[Any] | None = None) -> None:
        super().__init__(name="shlo-mpi-coordinator", daemon=True)
        self.w = w
        self.n = n
        self.num_partitions = num_partitions
        self.timeout = timeout
        self.infeed = infeed
        self.run_id = w.run_id  # reports of other runs (late ones of the last) are ignored
        self.state: dict[int, Any] = {r: "running" for r in range(n)}
        self.done: set[int] = set()
        self.stopping = threading.Event()
        self._last_change = time.monotonic()
        self._changed = {r: self._last_change for r in range(n)}  # per rank
        self._last_pid_check = 0.0
        self.seqs: dict[int, dict[Any, int]] = {}  # per rank, last reported: times it
        # reached each collective (a member past a collective is not late for it)

    def pid(self, rank: int) -> tuple[int, int]:
        return divmod(rank, self.num_partitions)

    def stop(self) -> None:
        self.stopping.set()
        self.join(5)

    def run(self) -> None:  # pragma: no cover - exercised under mpiexec
        ctl = self.w.ctl
        MPI = self.w.MPI
        while not self.stopping.is_set():
            got = False
            while True:
                msg = ctl.improbe(source=MPI.ANY_SOURCE, tag=TAG_REPORT)
                if msg is None:
                    break
                self._handle(msg.recv())
                got = True
            if not got:
                self._check(time.monotonic())
                time.sleep(0.005)

    def _handle(self, m: dict[str, Any]) -> None:
        if m.get("run") != self.run_id:
            return
        t, r = m["t"], m["rank"]
        now = time.monotonic()
        self._last_change = self._changed[r] = now
        if "seq" in m:
            self.seqs[r] = m["seq"]
        if t == "block":
            self.state[r] = ("blocked", m["key"], m.get("members"), op_ref(m.get("op")),
                             m.get("detail", ""), now - self.w.report_after)
        elif t == "run":
            if self.state.get(r) not in ("done", "failed"):
                self.state[r] = "running"
        elif t == "done":
            self.state[r] = "done"
            self.done.add(r)
        elif t == "infeed":
            q = self.infeed
            reply = ("ok", q.pop(0)) if q else ("empty",)
            self.w.ctl.send(reply, dest=r, tag=TAG_REPLY)

    def _describe(self, s: Any) -> str:
        if isinstance(s, tuple):
            return waits_at(s[3], s[4])
        return {"done": "finished", "failed": "failed"}.get(s, "still running")

    def _reached(self, rank: int, key: Any) -> bool:
        """Whether ``rank`` reached the collective ``key`` = (group, op, channel, n), by its
        last report."""
        if not (isinstance(key, tuple) and len(key) == 4 and isinstance(key[3], int)):
            return False
        return self.seqs.get(rank, {}).get(key[:3], 0) > key[3]

    def _here(self, rank: int, key: Any) -> bool:
        """``rank`` waits at collective ``key`` or went past it."""
        return self._at(rank, key) or self._reached(rank, key)

    def _at(self, rank: int, key: Any) -> bool:
        s = self.state.get(rank)
        return isinstance(s, tuple) and s[1] == key

    def _check(self, now: float) -> None:
        """Diagnose from the reports so far. Ranks blocked at the same wait (most of them, at
        a collective) are looked at once per wait, not once per rank: at 256 ranks a look per
        rank at every member cost rank 0 most of its time."""
        if now - self._last_pid_check > 0.2:
            self._last_pid_check = now
            died = self.w.peer_died_message(PID_CHECKS)
            if died is not None:
                time.sleep(DEATH_GRACE)  # (a peer that reported its own error: its abort ends us)
                die(died)
        waits: dict[Any, list[int]] = {}  # wait key -> its blocked ranks, in rank order
        for r, s in self.state.items():
            if isinstance(s, tuple):
                waits.setdefault(s[1], []).append(r)
        for key, ranks in waits.items():
            _, _, members, op, detail, _ = self.state[ranks[0]]
            if self.done and members is not None:
                settled = [r for r in ranks if now - self._changed[r] > SETTLE]
                # (settled: a report that the rank runs again may still be on its way)
                if settled:
                    group = set(members)
                    gone = sorted(m for m in self.done if m in group
                                  and now - self._changed[m] > SETTLE
                                  and not self._reached(m, key))
                    if gone:
                        self._end(op, gone_message(op, self.pid(settled[0]),
                                                   [self.pid(g) for g in gone]))
            if self.timeout is None:
                continue
            late_ranks = [r for r in ranks if now - self.state[r][5] > self.timeout]
            if not late_ranks:
                continue
            r = late_ranks[0]
            if members is None:
                running = [(self.pid(q), "still running") for q, s in self.state.items()
                           if s == "running"]
                self._end(op, timeout_message(op, self.pid(r), self.timeout, None,
                                              running, detail))
            late = [m for m in members if not self._here(m, key)]
            if late:
                arrived = [self.pid(m) for m in members if self._here(m, key)]
                self._end(op, timeout_message(
                    op, self.pid(r), self.timeout, arrived,
                    [(self.pid(m), self._describe(self.state.get(m))) for m in late]))
        blocked = sum(len(r) for r in waits.values())
        live = sum(1 for s in self.state.values() if s not in ("done", "failed"))
        if not live or blocked < live or now - self._last_change < SETTLE:
            return
        for key, ranks in waits.items():
            members = self.state[ranks[0]][2]
            if members is not None and all(self._here(m, key) for m in members):
                return  # that collective completes: the ranks exchange data
        r = min(min(ranks) for ranks in waits.values())
        _, _, _, op, detail, _ = self.state[r]
        states = [(self.pid(q), self._describe(s)) for q, s in sorted(self.state.items())]
        self._end(op, deadlock_message(op, self.pid(r), detail, states))

    def _end(self, op: OpRef | None, message: str) -> None:
        die(str(grid_error(op, message)))  # type: ignore[arg-type]
