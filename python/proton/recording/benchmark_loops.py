"""Whether a launch is made inside Triton's benchmark loops
(triton.testing.do_bench, do_bench_cudagraph), whose repetitions a session
keeps only the last of (launches.py).

On Python 3.12+ the answer costs nothing per launch: while a session is
open, sys.monitoring counts, per thread, the running calls of those
functions' code objects (whatever name or reference the caller used: an
autotuner keeps its own), entering at PY_START and leaving at PY_RETURN or,
when an exception leaves them, PY_UNWIND. Older Pythons walk the launching
stack instead (about 0.3 us per frame)."""

from __future__ import annotations

import sys
import threading

#: How far up the stack the walk looks (the launcher, an autotuner, a
#: library's wrappers lie between).
ENCLOSING_DEPTH = 32


def benchmark_codes() -> frozenset:
    """The code objects of Triton's benchmark loops (empty if unavailable)."""
    try:
        import triton.testing as testing
    except Exception:  # noqa: BLE001 - no benchmark detection without it
        return frozenset()
    functions = (getattr(testing, name, None) for name in ("do_bench", "do_bench_cudagraph"))
    return frozenset(f.__code__ for f in functions if hasattr(f, "__code__"))


class BenchmarkLoops:
    """Installed while an instrumentation session is open."""

    def __init__(self, codes: frozenset | None = None):
        self.codes = benchmark_codes() if codes is None else codes
        self._depth = threading.local()
        self._tool: int | None = None
        self.listener = None  # called with the calling thread's depth when it changes

    @property
    def monitoring(self) -> bool:
        """Whether sys.monitoring answers (not the stack walk): only then
        does `listener` hear of every change."""
        return self._tool is not None

    def install(self) -> None:
        monitoring = getattr(sys, "monitoring", None)
        if monitoring is None or self._tool is not None or not self.codes:
            return
        for tool in range(5, -1, -1):  # a free tool id, from the end (debuggers and profilers take the first)
            try:
                monitoring.use_tool_id(tool, "proton benchmark loops")
            except ValueError:
                continue
            self._tool = tool
            break
        else:
            return  # every id taken: the stack walk answers
        events = monitoring.events
        monitoring.register_callback(self._tool, events.PY_START, self._entered)
        monitoring.register_callback(self._tool, events.PY_RETURN, self._left)
        monitoring.register_callback(self._tool, events.PY_UNWIND, self._unwound)
        for code in self.codes:
            monitoring.set_local_events(self._tool, code, events.PY_START | events.PY_RETURN)
        monitoring.set_events(self._tool, events.PY_UNWIND)

    def uninstall(self) -> None:
        if self._tool is None:
            return
        monitoring = sys.monitoring
        monitoring.set_events(self._tool, 0)
        for code in self.codes:
            monitoring.set_local_events(self._tool, code, 0)
        for event in (monitoring.events.PY_START, monitoring.events.PY_RETURN, monitoring.events.PY_UNWIND):
            monitoring.register_callback(self._tool, event, None)
        monitoring.free_tool_id(self._tool)
        self._tool = None

    def _entered(self, code, offset):
        self._depth.value = getattr(self._depth, "value", 0) + 1
        if self.listener is not None:
            self.listener(self._depth.value)

    def _left(self, code, offset, retval):
        self._depth.value = max(0, getattr(self._depth, "value", 0) - 1)
        if self.listener is not None:
            self.listener(self._depth.value)

    def _unwound(self, code, offset, exception):
        if code in self.codes:
            self._left(code, offset, None)

    def inside(self) -> bool:
        """Whether the calling thread is inside a benchmark loop now."""
        if self._tool is not None:
            return getattr(self._depth, "value", 0) > 0
        frame = sys._getframe(2)
        for _ in range(ENCLOSING_DEPTH):
            if frame is None:
                return False
            if frame.f_code in self.codes:
                return True
            frame = frame.f_back
        return False
