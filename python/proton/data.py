"""Phases of a session, with Triton's Proton's names (`proton.data`):

    phase = proton.data.advance_phase(session)          # ends the current phase; returns the next one's number
    proton.data.is_phase_flushed(session, phase)        # whether that phase is written

In a session started with periodic_flushing=True (backend="instrumentation"),
advance_phase writes the ended phase's kept launches as
<name>.part_<phase>.<ext> and frees their buffers: docs/long-runs.md. In
other instrumentation sessions phases are only counted, as in Triton's
Proton without periodic flushing. Host sessions have no phases here.
"""

from __future__ import annotations

from . import api
from .errors import ProfilerError


def advance_phase(session: int | None = 0) -> int | None:
    """Ends the session's current phase; returns the next phase's number
    (None when session is None: profiling is off)."""
    target = _session(session, "advanced to its next phase")
    return None if target is None else target.advance_phase()


def is_phase_flushed(session: int | None = 0, phase: int = 0) -> bool:
    target = _session(session, "checked for flushed phases")
    return False if target is None else target.is_phase_flushed(phase)


def _session(session, verb: str):
    if session is None:
        return None
    if api._check_command_line(session, verb):
        session = api._command_line_session
    (target,) = api._select(session)
    if not api._is_instrumentation(target):
        raise ProfilerError(
            f"session {target.name!r} is a host session: phases (periodic flushing) apply to "
            "backend='instrumentation' sessions here"
        )
    return target
