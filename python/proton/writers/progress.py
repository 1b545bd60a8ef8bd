"""Progress of long work (a big session's finalize, a merge) on the terminal:
a line rewritten in place at most twice a second, on stderr when it is a
terminal, and nothing at all when it is not (logs and pipes stay clean)."""

from __future__ import annotations

import sys
import time


class Progress:
    #: Seconds between two updates of the line.
    INTERVAL = 0.5

    def __init__(self, what: str, total: int, unit: str, stream=None):
        self.what, self.total, self.unit = what, total, unit
        self.stream = sys.stderr if stream is None else stream
        isatty = getattr(self.stream, "isatty", None)
        self.enabled = bool(callable(isatty) and isatty())
        self._last = time.monotonic()  # the first line comes after INTERVAL: quick work prints nothing
        self._width = 0

    def update(self, done: int, detail: str = "", now: bool = False) -> None:
        """Shows `done` of the total (`now`: without waiting for the interval)."""
        if not self.enabled or (not now and time.monotonic() - self._last < self.INTERVAL):
            return
        self._last = time.monotonic()
        line = f"{self.what}: {done:,} of {self.total:,} {self.unit}" + (f", {detail}" if detail else "")
        self.stream.write("\r" + line.ljust(self._width))
        self.stream.flush()
        self._width = len(line)

    def close(self) -> None:
        """Clears the line (the caller prints its own summary)."""
        if self.enabled and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0
