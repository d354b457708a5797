"""shlo.ops._lazy.Once: compiled code loaded once per process, by one thread."""

from __future__ import annotations

import threading
import time

from shlo.ops._lazy import Once


def test_once_loads_once_across_threads():
    calls = []

    def load():
        calls.append(1)
        time.sleep(0.05)  # the other threads arrive while it loads
        return "loaded"

    once = Once(load)
    got = []
    threads = [threading.Thread(target=lambda: got.append(once.get())) for _ in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert calls == [1] and got == ["loaded"] * 8 and once.value == "loaded"


def test_once_that_cannot_load_gives_none_and_does_not_retry():
    calls = []
    once = Once(lambda: calls.append(1) or False)
    assert once.get() is None and once.get() is None
    assert calls == [1] and once.value is False
    once.value = None  # its owner may ask for another try
    assert once.get() is None and calls == [1, 1]
