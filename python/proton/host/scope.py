"""Host-side scopes and states, with the semantics of Triton's own Proton:
`with proton.scope("name", metrics={...}):` (or `@proton.scope("name")`),
`proton.enter_scope` / `proton.exit_scope` and `proton.cpu_timed_scope`
(states: state.py).

Scopes nest on a per-thread stack kept in C++, where the launch callback
reads it. User metrics are added to the scope's node in every host session
that is active at the time. Metric names may end in "(exc)" (summed on the
node, not meant to add up into its ancestors) or "(pty)" (a property: the
last value is kept; strings are allowed only here); the suffix is not part
of the name written to the tree. With PROTON_DISABLE=1 all of this does
nothing.
"""

from __future__ import annotations

import functools
import time

from ..contract.errors import ProfilerError
from . import activity_trace, runtime
from .runtime import check_name as _check_name, disabled

CPU_TIME = "cpu_time"  # reserved: cpu_timed_scope's metric "cpu_time (ns)"


def _host():
    return runtime._host()


def _add_metrics(node: int, name: str, metrics: dict) -> None:
    """Adds a scope's metrics in every active session: to the scope's node,
    or under a state (proton.state) to that state's node below it, as
    Triton's Proton does."""
    node = _host().state_node(node)
    sessions = runtime.active_sessions()
    for session in sessions:  # all checked before any is added
        session.check_metrics(name, metrics)
    for session in sessions:
        session.add_metrics(node, name, metrics)


def _check_metrics_type(name, metrics) -> None:
    if metrics is not None and not isinstance(metrics, dict):
        raise ProfilerError(f"metrics of scope {name!r} must be a dict, got {type(metrics).__name__}")


def enter_scope(name: str, *, metrics: dict | None = None, triton_op: bool = False) -> int | None:
    """Opens scope `name` on this thread; returns its id (None when disabled).
    `triton_op` is accepted for compatibility and has no effect."""
    if disabled():
        return None
    _check_name(name, "scope")
    _check_metrics_type(name, metrics)
    host = _host()
    node = host.enter_scope(name)
    if metrics:
        try:
            _add_metrics(node, name, metrics)
        except ProfilerError:
            host.exit_scope(name)  # a rejected scope is not left open
            raise
    if activity_trace.recording:  # a session with data="trace" draws each instance
        activity_trace.scope_entered(node, metrics)
    return node


def exit_scope(name: str | None = None, *, metrics: dict | None = None) -> int | None:
    """Closes this thread's innermost scope (which must be `name` when one is
    given) and returns its id; `metrics` are added to that scope."""
    if disabled():
        return None
    if name is not None:
        _check_name(name, "scope")
    _check_metrics_type(name, metrics)
    host = _host()
    label = name
    if metrics and label is None:
        stack = host.scope_stack()
        label = stack[-1] if stack else ""
    try:
        node = host.exit_scope(name)
    except ValueError as error:
        raise ProfilerError(str(error)) from None
    if metrics:
        _add_metrics(node, label, metrics)
    if activity_trace.recording:
        activity_trace.scope_exited(node, metrics)
    return node


class scope:
    """`with proton.scope("name", metrics={"flops": 2e9}):` or `@proton.scope("name")`."""

    def __init__(self, name: str, metrics: dict | None = None):
        self.name, self.metrics = name, metrics
        self.id = None

    def _enter(self):
        self.id = enter_scope(self.name, metrics=self.metrics)

    def _exit(self):
        exit_scope(self.name)

    def __enter__(self):
        self._enter()
        return self

    def __exit__(self, *exc):
        self._exit()
        return False

    def __call__(self, function):
        @functools.wraps(function)
        def wrapped(*args, **kwargs):
            self._enter()
            try:
                return function(*args, **kwargs)
            finally:
                self._exit()

        return wrapped


class cpu_timed_scope(scope):
    """A scope that also records its wall-clock CPU time, in nanoseconds, as
    the exclusive metric "cpu_time (ns)" on its node."""

    def __init__(self, name: str, metrics: dict | None = None):
        if metrics and any(_base(key) == CPU_TIME for key in metrics):
            raise ProfilerError(f"the metric name {CPU_TIME!r} is reserved by cpu_timed_scope")
        super().__init__(name, metrics)
        self._start = None

    def _enter(self):
        self._start = time.time_ns()
        super()._enter()

    def _exit(self):
        elapsed = time.time_ns() - self._start
        exit_scope(self.name, metrics=None if disabled() else {"cpu_time (ns)(exc)": elapsed})


def _base(key: str) -> str:
    return key.split("(")[0].strip()
