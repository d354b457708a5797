"""What a trial may do, and how its outcome is classified and deduplicated.

A trial is a callable that exercises shlo on one input. It may return normally (``ok``, or an
outcome class it returns itself such as ``accepted``), raise one of shlo's own errors (a clean
rejection, classed by the error's type), or break the contract:

- ``internal``: a :class:`shlo.InternalError` (shlo says it has a bug);
- ``disguised``: a ShloError made from a Python exception (``__cause__`` is a ValueError, ...),
  an internal failure dressed as the user's error;
- ``foreign``: any other Python exception escaping the API;
- ``hang``: the trial outlived its time bound (SIGALRM interrupts it) in shlo (a bound struck
  while the MLIR oracle is computing is the oracle's, ``oracle-hang``, not a defect);
- ``roundtrip``: a printed program that does not parse back to the same text;
- ``disagree``: the verifier's verdict differs from MLIR's (false accept / false reject);
- ``cli``: a CLI command line printed "internal error", a traceback, or an error on stdout.

A defect is keyed by its class, the exception type and the innermost frame inside ``shlo/``
(file:function), so that one bug found by many trials counts once.
"""

from __future__ import annotations

import signal
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

DEFECT_CLASSES = ("internal", "disguised", "foreign", "hang", "roundtrip", "disagree", "cli")
# Python exceptions that, as the cause of a ShloError, mean shlo failed rather than the input.
_INTERNAL_CAUSES = (AttributeError, AssertionError, IndexError, KeyError, TypeError,
                    ValueError, ZeroDivisionError, MemoryError, RecursionError, OverflowError,
                    UnboundLocalError, NameError, NotImplementedError)


class TrialTimeout(BaseException):
    """Raised inside a trial when it outlives its bound (a BaseException, so that shlo's own
    ``except Exception`` handlers cannot turn it into an error message)."""


class Defect(Exception):
    """Raised by a trial's own checks (a round trip that fails, a verdict that disagrees)."""

    def __init__(self, cls: str, key: str, detail: str):
        super().__init__(detail)
        self.cls, self.key, self.detail = cls, key, detail


@dataclass
class Outcome:
    family: str
    cls: str                 # accepted / ParseError / ... or one of DEFECT_CLASSES
    key: str = ""            # the dedup key of a defect
    detail: str = ""         # the message, for the report
    case: str = ""           # a reproducer (program text or a description)
    seconds: float = 0.0

    @property
    def is_defect(self) -> bool:
        return self.cls in DEFECT_CLASSES


def innermost_shlo_frame(exc: BaseException) -> str:
    """`shlo/path.py:function` of the innermost traceback frame inside the shlo package."""
    best = "?"
    for fs in traceback.extract_tb(exc.__traceback__):
        path = fs.filename.replace("\\", "/")
        if "/shlo/" in path and "/tests/" not in path:
            best = f"shlo/{path.rsplit('/shlo/', 1)[1]}:{fs.name}"
    return best


def classify(family: str, exc: BaseException) -> Outcome:
    """The outcome of a trial that raised ``exc``."""
    from shlo.errors import InternalError, ShloError

    if isinstance(exc, Defect):
        return Outcome(family, exc.cls, exc.key, exc.detail)
    if isinstance(exc, TrialTimeout):
        # (where the alarm struck varies from run to run: the key is the trial's family)
        return Outcome(family, "hang", f"hang in {family}",
                       f"{exc} (interrupted at {innermost_shlo_frame(exc)})")
    if isinstance(exc, InternalError):
        cause = exc.__cause__ or exc
        return Outcome(family, "internal",
                       f"internal {type(cause).__name__} @ {innermost_shlo_frame(cause)}",
                       str(exc).splitlines()[0])
    if isinstance(exc, ShloError):
        cause = exc.__cause__
        if isinstance(cause, _INTERNAL_CAUSES) and not isinstance(cause, ShloError):
            return Outcome(family, "disguised",
                           f"disguised {type(cause).__name__} @ {innermost_shlo_frame(cause)}",
                           str(exc).splitlines()[0])
        return Outcome(family, type(exc).__name__, detail=str(exc).splitlines()[0][:200])
    return Outcome(family, "foreign", f"{type(exc).__name__} @ {innermost_shlo_frame(exc)}",
                   f"{type(exc).__name__}: {exc}"[:300])


_DEADLINE = [float("inf")]  # the running trial's end (a late alarm of an earlier one is ignored)


def _on_alarm(signum: int, frame: Any) -> None:
    if time.monotonic() >= _DEADLINE[0]:
        raise TrialTimeout("the trial outlived its time bound")


def disarm() -> None:
    """Stop the running trial's time bound (a trial that caught its own TrialTimeout, in code
    that is not shlo's, returns its outcome without a second alarm striking)."""
    signal.setitimer(signal.ITIMER_REAL, 0)
    _DEADLINE[0] = float("inf")


def run_trial(family: str, trial: Callable[[], str | None], case: str,
              bound: float) -> Outcome:
    """Run ``trial`` with a time bound of ``bound`` seconds (SIGALRM; the main thread only).
    The trial returns its outcome class (None means ``accepted``) or raises."""
    bound = min(bound, getattr(trial, "bound", bound))
    old = signal.signal(signal.SIGALRM, _on_alarm)
    _DEADLINE[0] = time.monotonic() + bound
    # (repeating: an alarm raised where Python ignores exceptions, in a gc callback or a
    # __del__, is lost; the next one a second later interrupts the trial)
    signal.setitimer(signal.ITIMER_REAL, bound, 1.0)
    t0 = time.perf_counter()
    try:
        try:
            out = Outcome(family, trial() or "accepted")
        finally:
            disarm()
    except RecursionError as e:  # Python's own limit: shlo should have reported it
        out = classify(family, e)
    except BaseException as e:  # noqa: BLE001 - classifying everything is the point
        if isinstance(e, KeyboardInterrupt):
            raise
        out = classify(family, e)
    finally:
        signal.signal(signal.SIGALRM, old)
    out.case = case
    out.seconds = time.perf_counter() - t0
    return out


@dataclass
class Tally:
    """Trials and outcomes by family and class; distinct defects with a first reproducer."""

    outcomes: dict[tuple[str, str], int] = field(default_factory=dict)
    defects: dict[str, Outcome] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    trials: int = 0

    def add(self, o: Outcome) -> None:
        self.trials += 1
        k = (o.family, o.cls)
        self.outcomes[k] = self.outcomes.get(k, 0) + 1
        if o.is_defect:
            self.counts[o.key] = self.counts.get(o.key, 0) + 1
            self.defects.setdefault(o.key, o)

    def report(self, show_cases: bool = True, width: int = 5000) -> str:
        lines = [f"trials: {self.trials}"]
        fams = sorted({f for f, _ in self.outcomes})
        for fam in fams:
            n = sum(v for (f, _), v in self.outcomes.items() if f == fam)
            parts = ", ".join(f"{c} {v}" for (f, c), v in sorted(self.outcomes.items())
                              if f == fam)
            lines.append(f"  {fam}: {n} trials: {parts}")
        lines.append(f"distinct defects: {len(self.defects)}")
        for key, o in sorted(self.defects.items(), key=lambda kv: (kv[1].family, kv[0])):
            lines.append(f"- [{o.family}] {key}  (x{self.counts[key]})\n    {o.detail[:300]}")
            if show_cases:
                case = o.case if len(o.case) <= width else o.case[:width] + " ..."
                lines.append("    case: " + case.replace("\n", "\n          "))
        return "\n".join(lines)
