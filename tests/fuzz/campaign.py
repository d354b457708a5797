"""Run the campaign: a seeded, time-bounded mix of the four families; prints trials, outcomes by
family and class, and the distinct defects with a reproducer each.

    PYTHONPATH=$PWD python -m tests.fuzz.campaign --seconds 600 --seed 1 [--family parser ...]
        [--bound 10] [--no-oracle] [--quiet]

Exit status 1 when a defect was found. The same seed and the same trial count give the same
trials (time decides only how many trials run; ``--trials N`` fixes the count instead).
"""

from __future__ import annotations

import argparse
import faulthandler
import os
import random
import sys
import time
import warnings
from typing import Callable, Iterator

import numpy as np

from . import cli_cases, interpreter_inputs, parser_mutations, verifier_mutants
from .contract import Tally, run_trial
from .seeds import BUILTIN, bytecode_files, programs

FAMILIES = ("parser", "verifier", "interpreter", "cli")
# Share of the trials each family gets (the cheap families get more).
_TRACE = bool(os.environ.get("SHLO_FUZZ_TRACE"))  # print each trial before it runs
WEIGHTS = {"parser": 6, "verifier": 3, "interpreter": 2, "cli": 1}


def _streams(seed: int, families: tuple[str, ...], oracle: bool
             ) -> dict[str, Iterator[tuple[str, str, Callable[[], str | None]]]]:
    progs = programs()
    out = {}
    if "parser" in families:
        out["parser"] = parser_mutations.cases(random.Random(seed), progs, list(bytecode_files()))
    if "verifier" in families:
        out["verifier"] = verifier_mutants.cases(random.Random(seed + 1), progs, oracle)
    if "interpreter" in families:
        out["interpreter"] = interpreter_inputs.cases(random.Random(seed + 2))
    if "cli" in families:
        out["cli"] = cli_cases.cases(random.Random(seed + 3), progs)
    return out


def _warm_up() -> None:
    """Load shlo's lazily imported parts (the op registry, the interpreter, the CLI) before the
    first trial: on a loaded machine the imports alone can outlast a trial's time bound."""
    import shlo
    import shlo.cli  # noqa: F401

    shlo.run(shlo.parse(BUILTIN[0]), *[np.ones((2, 3), np.float32)] * 2)


def campaign(seconds: float | None = None, seed: int = 0, trials: int | None = None,
             families: tuple[str, ...] = FAMILIES, bound: float = 10.0, oracle: bool = True,
             progress: Callable[[Tally], None] | None = None) -> Tally:
    """Run trials until ``seconds`` have passed or ``trials`` have run (whichever is given
    first); the families take turns by WEIGHTS, in an order drawn from ``seed``."""
    warnings.simplefilter("ignore")  # (numpy's casts of hostile values warn by design)
    _warm_up()
    streams = _streams(seed, families, oracle)
    order = [f for f in FAMILIES if f in streams for _ in range(WEIGHTS[f])]
    tally = Tally()
    t_end = None if seconds is None else time.monotonic() + seconds
    rng = random.Random(seed)
    last = time.monotonic()
    while (trials is None or tally.trials < trials) and \
            (t_end is None or time.monotonic() < t_end):
        fam = order[tally.trials % len(order)] if trials else rng.choice(order)
        kind, case, trial = next(streams[fam])
        if _TRACE:
            print(f"{tally.trials} {fam}/{kind}: {case[:300]!r}", file=sys.stderr, flush=True)
        tally.add(run_trial(f"{fam}/{kind}", trial, case, bound))
        if progress and time.monotonic() - last > 30:
            last = time.monotonic()
            progress(tally)
    return tally


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.fuzz.campaign", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--trials", type=int, help="a fixed number of trials instead of a time")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--family", action="append", choices=FAMILIES,
                   help="run only these families (repeatable)")
    p.add_argument("--bound", type=float, default=10.0, help="seconds per trial")
    p.add_argument("--no-oracle", action="store_true",
                   help="do not compare verdicts with the MLIR verifier")
    p.add_argument("--quiet", action="store_true", help="no reproducers in the report")
    a = p.parse_args(argv)
    faulthandler.enable()  # a crash (in a native library) shows where it happened
    t0 = time.monotonic()

    def progress(t: Tally) -> None:
        print(f"[{time.monotonic() - t0:6.0f}s] {t.trials} trials, {len(t.defects)} distinct "
              "defects", file=sys.stderr, flush=True)

    tally = campaign(None if a.trials else a.seconds, a.seed, a.trials,
                     tuple(a.family or FAMILIES), a.bound, not a.no_oracle, progress)
    print(f"seed {a.seed}, {time.monotonic() - t0:.0f} s")
    print(tally.report(show_cases=not a.quiet))
    return 1 if tally.defects else 0


if __name__ == "__main__":
    sys.exit(main())
