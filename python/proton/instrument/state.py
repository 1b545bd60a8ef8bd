"""Process-wide instrumentation state shared by the markers and the hook."""

_active_sessions = 0


def instrumentation_active() -> bool:
    """Whether markers should be emitted into kernels compiled now."""
    return _active_sessions > 0


def _enter() -> None:
    global _active_sessions
    _active_sessions += 1


def _exit() -> None:
    global _active_sessions
    _active_sessions = max(0, _active_sessions - 1)
