"""shlo/ops/_pool.py: pieces spread over the cores, the caller's thread taking its share."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from shlo.ops import _pool


@pytest.fixture
def two_cores(monkeypatch):
    monkeypatch.setattr(_pool, "cores", lambda: 2)


def test_results_in_order_first_piece_in_the_callers_thread(two_cores):
    me = threading.get_ident()
    seen = _pool.map_pieces(lambda p: (p * p, threading.get_ident()), list(range(7)))
    assert [r for r, _ in seen] == [p * p for p in range(7)]
    assert seen[0][1] == me


def test_pieces_see_the_callers_errstate(two_cores):
    def piece(p):
        time.sleep(0.002)  # (so that workers start some)
        return np.geterr()["divide"]

    with np.errstate(divide="raise"):
        assert _pool.map_pieces(piece, list(range(6))) == ["raise"] * 6


def test_a_failing_piece_raises_after_every_piece_ended(two_cores):
    ended = []

    def piece(p):
        if p == 0:
            raise ValueError("boom")
        time.sleep(0.01)
        ended.append(p)
        return p

    with pytest.raises(ValueError, match="boom"):
        _pool.map_pieces(piece, [0, 1, 2, 3])
    # no piece is left running: the ones a worker took have ended, the others never started
    count = len(ended)
    time.sleep(0.05)
    assert len(ended) == count and all(p in (1, 2, 3) for p in ended)


def test_pieces_within_a_piece_run_in_its_thread(two_cores):
    def inner(p):
        return threading.get_ident()

    def outer(p):
        return set(_pool.map_pieces(inner, [0, 1, 2])) == {threading.get_ident()}

    assert _pool.map_pieces(outer, [0, 1, 2, 3]) == [True] * 4


def test_split_cuts_along_the_first_axis(two_cores):
    x = np.arange(100)
    got = _pool.split(lambda a: (a[0], a.size), (x,), 10, per_core=2)
    assert [lo for lo, _ in got] == [0, 25, 50, 75]
    assert [r for _, r in got] == [(0, 25), (25, 25), (50, 25), (75, 25)]
