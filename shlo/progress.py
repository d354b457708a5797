"""Progress bars for long commands (`shlo check` over many files, `shlo run` of long loops),
drawn with tqdm on standard error, and only when it is a terminal: piped or captured output
gets nothing extra."""

from __future__ import annotations

import sys
from typing import Any


def enabled(quiet: bool = False) -> bool:
    """True when a bar should be drawn: stderr is a terminal and the user did not ask for quiet."""
    return not quiet and sys.stderr.isatty()


def bar(total: int | None, desc: str, unit: str = "it", show: bool | None = None) -> Any:
    """A tqdm bar (``update``, ``set_postfix_str``, ``close``; a context manager), or a silent
    stand-in when ``show`` is false (default: :func:`enabled`)."""
    if show is None:
        show = enabled()
    if not show:
        return _Silent()
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, leave=False,
                dynamic_ncols=True, mininterval=0.2)


class _Silent:
    def update(self, n: int = 1) -> None:
        pass

    def set_postfix_str(self, s: str) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self) -> "_Silent":
        return self

    def __exit__(self, *exc: Any) -> None:
        pass


class RunStatus:
    """A live status line for a long `shlo run`: after ``delay`` seconds, the elapsed time and
    the op being computed (sampled twice a second from the interpreter's generated code, so the
    run itself pays nothing), e.g. ``shlo run: 14s  'stablehlo.dot_general' at m.mlir:120:5``.
    On a process grid it names what one of its processes computes. Nothing is shown when
    ``show`` is false (default: :func:`enabled`)."""

    def __init__(self, delay: float = 2.0, show: bool | None = None) -> None:
        self.delay = delay
        self.show = enabled() if show is None else show
        self._stop = None
        self._thread = None

    def __enter__(self) -> "RunStatus":
        if self.show:
            import threading

            self._stop = threading.Event()
            self._thread = threading.Thread(target=self._loop, daemon=True,
                                            name="shlo-run-status")
            self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._thread is not None:
            self._stop.set()  # type: ignore[union-attr]
            self._thread.join()

    def _loop(self) -> None:
        if self._stop.wait(self.delay):  # type: ignore[union-attr]
            return
        from tqdm import tqdm

        b = tqdm(total=None, file=sys.stderr, leave=False, dynamic_ncols=True,
                 bar_format="shlo run: {elapsed}  {desc}")
        try:
            while not self._stop.wait(0.5):  # type: ignore[union-attr]
                b.set_description_str(current_op())
        finally:
            b.close()


def current_op() -> str:
    """The op some interpreter thread is computing now (the innermost op of its generated
    code), as ``'name' at file:line:col``; empty when none is."""
    import threading

    from .interpreter.observing import GENERATED as _GENERATED

    me = threading.get_ident()
    for ident, frame in sorted(sys._current_frames().items()):
        if ident == me:
            continue
        f = frame
        while f is not None:
            if f.f_code.co_filename == _GENERATED:
                op = f.f_globals.get("_line_ops", {}).get(f.f_lineno)
                if op is not None:
                    flc = op.location.file_line_col() if op.location else None
                    where = f" at {flc[0]}:{flc[1]}:{flc[2]}" if flc else ""
                    return f"'{op.name}'{where}"
            f = f.f_back
    return ""
