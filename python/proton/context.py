"""`proton.context.depth(session)`, as `triton.profiler.context.depth`: the
number of scopes (NVTX ranges included) open on the calling thread, or None
when `session` is not an open, active host session (upstream: profiling off)."""

from __future__ import annotations

from .host import runtime
from .host.runtime import disabled


def depth(session: int | None = 0) -> int | None:
    if disabled():
        return None
    key = 0 if session is None else int(session)
    # proton.start numbers sessions (api.py sets `id`); the slot otherwise.
    sessions = {getattr(s, "id", s.slot): s for s in runtime.open_sessions()}
    chosen = sessions.get(key)
    if chosen is None or not chosen.active:
        return None
    return int(runtime._host().scope_depth())
