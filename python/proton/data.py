"""Phases of a session and their data, with Triton's Proton's names (`proton.data`):

    phase = proton.data.advance_phase(session)          # ends the current phase; returns the next one's number
    proton.data.is_phase_complete(session, phase)       # whether no more records can come to that phase
    tree = proton.data.get(session, phase)              # the phase's .hatchet tree, as a list
    packed = proton.data.get_msgpack(session, phase)    # the same as MessagePack bytes
    proton.data.clear(session, phase, clear_up_to_phase=False)

Host sessions (CUPTI, ROCTracer, rocprofiler-sdk): advance_phase waits for
the GPU and takes the ended phase's records from the runtime, so an ended
phase is complete at once and the current one never is;
`proton.deactivate(session, flushing=True)` and get or clear of the current
phase take the records so far the same way. A session that advanced writes
each phase not cleared as <name>.part_<phase>.<ext> at finalize; with mode
"periodic_flushing:format=hatchet|hatchet_msgpack" each ended phase is
written at advance_phase instead, and let go. A cleared phase's data is gone;
records that come later to the current phase still go to it.

Instrumentation sessions: with periodic_flushing=True advance_phase writes
the ended phase's kept launches as <name>.part_<phase>.<ext> and frees their
buffers (docs/long-runs.md); otherwise phases are only counted. get, clear
and get_msgpack apply to host sessions.
"""

from __future__ import annotations

from .profiling import api
from .contract.errors import ProfilerError
from .writers.msgpack_codec import packb


def advance_phase(session: int | None = 0) -> int | None:
    """Ends the session's current phase; returns the next phase's number
    (None when session is None: profiling is off)."""
    target = _session(session, "advanced to its next phase")
    return None if target is None else target.advance_phase()


def _phase_done(session: int | None, phase: int, what: str) -> bool:
    target = _session(session, what)
    if target is None:
        return False
    return target.is_phase_complete(phase)


def is_phase_complete(session: int | None = 0, phase: int = 0) -> bool:
    """Whether `phase` has all its records: an ended phase of a host session,
    a written one of an instrumentation session."""
    return _phase_done(session, phase, "checked for complete phases")


def is_phase_flushed(session: int | None = 0, phase: int = 0) -> bool:
    """The same question, by its older name."""
    return _phase_done(session, phase, "checked for flushed phases")


def get(session: int | None = 0, phase: int = 0) -> list | None:
    """The phase's profile tree as the .hatchet file holds it: [root, device
    info]. The current phase's holds the records so far (this waits for the
    GPU). RuntimeError ("... has no data") for a cleared or written phase."""
    target = _session(session, "read")
    return None if target is None else target.phase_tree(_phase(phase))


def get_msgpack(session: int | None = 0, phase: int = 0) -> bytes | None:
    """get(session, phase) as MessagePack (the .hatchet_msgpack file's bytes)."""
    tree = get(session, phase)
    return None if tree is None else packb(tree)


def clear(session: int | None = 0, phase: int = 0, clear_up_to_phase: bool = False) -> None:
    """Lets go of the phase's data (of every phase up to it with
    clear_up_to_phase); the current phase, cleared, keeps recording."""
    target = _session(session, "cleared")
    if target is not None:
        target.clear(_phase(phase), up_to=bool(clear_up_to_phase))


def _phase(phase) -> int:
    if isinstance(phase, bool) or not isinstance(phase, int) or phase < 0:
        raise ProfilerError(f"a phase is a number from 0, got {phase!r}")
    return int(phase)


def _session(session, verb: str):
    if session is None:
        return None
    if api._check_command_line(session, verb):
        session = api._command_line_session
    (target,) = api._select(session)
    if getattr(target, "id", None) in api._unwritten:
        raise ProfilerError(
            f"session {target.name!r} (id {target.id}) was finalized but could not write its outputs: it cannot be "
            f"{verb}; call proton.finalize again to write what it holds"
        )
    return target
