"""The campaign, briefly and with fixed seeds (the long run: ``python -m tests.fuzz.campaign``).

Defects that belong to work still open elsewhere (resource limits, step limits, the CLI's
argument files) are listed in KNOWN with the reason; every other input must keep the contract.
When one of them is fixed, its entry fails here as "now passes": remove it.
"""

from __future__ import annotations

import random

import pytest

from .campaign import campaign
from .cli_cases import FIXED, _trial as cli_trial, _write_files
from .contract import run_trial
from .interpreter_inputs import NAMED, _arg_trial, _named_trial, _RUNNABLE

# Named interpreter cases that fail today for reasons outside the parser/verifier (issue 16's
# resource-limit and step-limit items): allocation of 10^11 elements, recursion, endless loops,
# huge grids, kernels' ValueErrors on zero-size operands.
KNOWN_INTERPRETER: dict[str, str] = {}  # all fixed (shlo/interpreter/limits.py)
# CLI command lines that fail today (the CLI's run/check/verify parts are being changed).
KNOWN_CLI: dict[str, str] = {}  # all fixed (shlo/interpreter/arrays.py, cli.py)


def test_parser_and_verifier_mutants_keep_the_contract():
    tally = campaign(trials=900, seed=1, families=("parser", "verifier"))
    assert tally.trials == 900
    assert not tally.defects, tally.report()


@pytest.mark.parametrize("name", [n for n in NAMED if n not in KNOWN_INTERPRETER])
def test_hostile_interpreter_input(name):
    o = run_trial("interpreter", _named_trial(name), name, 20)
    assert not o.is_defect, f"{o.key}: {o.detail}"


def test_hostile_arguments_keep_the_contract():
    rng = random.Random(3)
    bad = []
    for _ in range(40):
        kind, case, trial = _arg_trial(rng, rng.choice(_RUNNABLE))
        o = run_trial(kind, trial, case, 20)
        if o.is_defect:
            bad.append(f"{o.key}: {o.detail}\n{case}")
    assert not bad, "\n\n".join(bad)


@pytest.mark.parametrize("line", [t for t in FIXED if t not in KNOWN_CLI])
def test_cli_command_line(line, tmp_path):
    _write_files(str(tmp_path))
    o = run_trial("cli", cli_trial(line, str(tmp_path)), line, 30)
    assert not o.is_defect, f"{o.key}: {o.detail}"


@pytest.mark.parametrize("line", list(KNOWN_CLI))
def test_known_cli_defects_are_still_defects(line, tmp_path):
    """A fixed entry shows here: then remove it from KNOWN_CLI."""
    _write_files(str(tmp_path))
    o = run_trial("cli", cli_trial(line, str(tmp_path)), line, 30)
    assert o.is_defect, f"now passes: remove {line!r} from KNOWN_CLI"


class _SlowOracle:
    """An MLIR verifier that does not answer within the trial's bound."""

    def ensure(self) -> None:
        pass

    def verdict(self, text: str) -> tuple[bool, str]:
        import time

        time.sleep(5)
        return True, ""


def test_a_bound_striking_in_the_oracle_is_the_oracles_hang(monkeypatch):
    """shlo answered; MLIR did not: `oracle-hang`, counted and not a defect. A bound striking
    in shlo stays a `hang`."""
    from . import verifier_mutants
    from .seeds import programs

    monkeypatch.setattr(verifier_mutants, "_upstream", lambda: _SlowOracle())
    kind, case, trial = next(verifier_mutants.cases(random.Random(0), programs()))
    o = run_trial("verifier", trial, case, 0.5)
    assert (o.cls, o.is_defect) == ("oracle-hang", False)
    assert o.seconds < 3

    def shlo_hangs() -> str:
        import time

        time.sleep(5)
        return "accepted"

    o = run_trial("verifier", shlo_hangs, case, 0.5)
    assert (o.cls, o.is_defect) == ("hang", True)
