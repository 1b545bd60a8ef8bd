"""Errors raised to users of the profiler."""


class ProfilerError(RuntimeError):
    """Misuse of the session API, a buffer without known metadata, or a
    runtime the profiler cannot use (no torch, no GPU)."""


class PipeliningWarning(UserWarning):
    """Software pipelining changed what a scope inside a loop measures."""
