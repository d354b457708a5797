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
