"""When an instrumentation session writes a part by itself: its
`periodic_flushing` option. True: at each proton.data.advance_phase (the
program says when a phase ends); a duration ("30s", "500ms", "2min"): at the
first launch after that long since the phase began; a size ("256MB",
"1GiB", "64KB"): at the first launch once the phase's kept profile buffers
reach it. A part written by itself bounds what a SIGKILL can lose to one
interval (docs/long-runs.md)."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from ..contract.errors import ProfilerError

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|min)\s*$")
_SIZE = re.compile(r"^\s*(\d+)\s*(KB|KiB|MB|MiB|GB|GiB)\s*$")
_SECONDS = {"ms": 1e-3, "s": 1.0, "min": 60.0}
_BYTES = {"KB": 10**3, "KiB": 2**10, "MB": 10**6, "MiB": 2**20, "GB": 10**9, "GiB": 2**30}


@dataclass(frozen=True)
class FlushPolicy:
    phases: bool = False  # parts are written (at advance_phase, or by themselves below)
    seconds: float | None = None
    nbytes: int | None = None

    @staticmethod
    def parse(value) -> "FlushPolicy":
        if isinstance(value, bool):
            return FlushPolicy(phases=value)
        if isinstance(value, str):
            if match := _DURATION.match(value):
                seconds = float(match[1]) * _SECONDS[match[2]]
                if seconds > 0:
                    return FlushPolicy(True, seconds=seconds)
            elif match := _SIZE.match(value):
                nbytes = int(match[1]) * _BYTES[match[2]]
                if nbytes > 0:
                    return FlushPolicy(True, nbytes=nbytes)
        raise ProfilerError(
            f"periodic_flushing is True, False, a duration (\"30s\", \"500ms\", \"2min\") or a size of kept "
            f"buffers (\"256MB\", \"1GiB\"), greater than zero; got {value!r}"
        )

    @property
    def automatic(self) -> bool:
        return self.seconds is not None or self.nbytes is not None

    def due(self, phase_began: float, kept_bytes: int) -> bool:
        """Whether the current phase should be written now."""
        if self.seconds is not None:
            return time.monotonic() - phase_began >= self.seconds
        return self.nbytes is not None and kept_bytes >= self.nbytes
