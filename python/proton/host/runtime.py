"""The host profiler's runtime (`proton._host`, C++), loaded with a clear
error where it is not built; the host sessions open in it, by slot; the
names it holds (of scopes and states); whether profiling is off."""

from __future__ import annotations

from ..contract.errors import ProfilerError, unicode_problem
from ..session.disable import profiling_disabled


def _host():
    try:
        from .. import _host
    except ImportError as error:
        raise ProfilerError(
            f"the host profiler's runtime (proton._host) is not built into this install: {error}"
        ) from None
    return _host


_sessions: dict = {}  # slot -> open HostSession


def open_sessions() -> list:
    return list(_sessions.values())


def active_sessions() -> list:
    return [s for s in _sessions.values() if s.active]


def disabled() -> bool:
    return profiling_disabled()


def check_name(name, what: str) -> None:
    """A scope or state name: non-empty text the runtime and the outputs can hold."""
    if not isinstance(name, str) or not name:
        raise ProfilerError(f"a {what} name must be a non-empty string, got {name!r}")
    if unicode_problem(name):
        raise ProfilerError(f"{what} name {unicode_problem(name)}")
