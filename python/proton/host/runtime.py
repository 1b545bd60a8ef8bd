"""The host profiler's runtime (`proton._host`, C++), loaded with a clear
error where it is not built, and the host sessions open in it, by slot."""

from __future__ import annotations

from ..contract.errors import ProfilerError


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
