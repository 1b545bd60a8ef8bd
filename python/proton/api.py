"""The session API shared by both profilers:

    proton.start(name, backend=..., ...)  -> a session (several may be open)
    proton.activate([session]) / proton.deactivate([session])
    proton.finalize([session])            -> its report (a list for several)
    with proton.profile(name, ...):  /  @proton.profile(name, ...)

backend="instrumentation" (the default) profiles inside kernels;
backend="cupti" (NVIDIA), "roctracer" (AMD) or "host" (the one for this
GPU) profiles every launch on the host side. Without a backend, arguments
only host backends take (context="python", data="trace", hook="triton",
mode="pcsampling") select "host". With PROTON_DISABLE=1, everything here does nothing, so that other
profilers can run.
"""

from __future__ import annotations

import functools
import itertools

from . import runtime
from .errors import ProfilerError
from .host import session as host_session
from .host.scope import disabled
from .mode import PCSampling, is_host_mode, parse_any

BACKENDS = ("instrumentation", "cupti", "roctracer", "host")

_next_id = itertools.count()
_open: dict[int, object] = {}   # session id -> open session


class DisabledSession:
    """What start returns under PROTON_DISABLE=1."""

    def __init__(self, name: str):
        self.name, self.id, self.active = name, -1, False

    def activate(self):
        pass

    def deactivate(self):
        pass


def start(name: str = "proton", *, backend: str | None = None, context: str = "shadow", data: str = "tree",
          hook: str | None = None, mode=None, max_launches_per_kernel: int = 1, max_buffer_bytes: int = 2 << 30,
          outputs=None, quiet: bool = False):
    """Opens a profiling session and activates it; returns the session."""
    if disabled():
        return DisabledSession(name)
    if backend is None:
        # Arguments only host backends take select one, as in Triton's profiler.
        host_only = is_host_mode(mode) or context != "shadow" or data != "tree" or hook is not None
        backend = "host" if host_only else "instrumentation"
    if backend not in BACKENDS:
        raise ProfilerError(f"unknown backend {backend!r}; valid: {', '.join(BACKENDS)}")
    if backend == "instrumentation":
        host_only = {k: v for k, v in (("context", context), ("hook", hook)) if v not in ("shadow", None)}
        if data == "trace":
            host_only["data"] = data
        if host_only:
            raise ProfilerError(f"{', '.join(f'{k}={v!r}' for k, v in host_only.items())} applies to host "
                                "backends (cupti, roctracer, host), not to backend='instrumentation'")
        session = runtime.start_instrumentation(name, mode=mode, max_launches_per_kernel=max_launches_per_kernel,
                                                max_buffer_bytes=max_buffer_bytes, outputs=outputs, quiet=quiet)
    else:
        if outputs is not None or max_launches_per_kernel != 1:
            raise ProfilerError("outputs and max_launches_per_kernel apply to backend='instrumentation'")
        parsed = parse_any(mode) if mode is not None else None
        if parsed is not None and not isinstance(parsed, PCSampling):
            raise ProfilerError(f"mode {str(parsed)!r} is an instrumentation mode; host backends take "
                                "mode=None or 'pcsampling'")
        if backend == "host":
            backend = _host_backend()
        session = host_session.HostSession(name, backend, context, data, hook, pc_sampling=parsed, quiet=quiet)
        session.start()
    session.id = next(_next_id)
    _open[session.id] = session
    return session


def activate(session=None) -> None:
    for s in _select(session):
        s.activate()


def deactivate(session=None) -> None:
    for s in _select(session):
        s.deactivate()


def finalize(session=None):
    """Finalizes one session (or all); returns its report, or a list of
    reports when several were open."""
    if disabled() and not _open:
        return None
    reports = []
    for s in _select(session):
        del _open[s.id]
        if s is runtime._session:
            runtime.close_instrumentation()
        reports.append(s.finalize())
    return reports[0] if len(reports) == 1 else reports


def sessions() -> list:
    """The open sessions, oldest first."""
    return list(_open.values())


def _select(session) -> list:
    if session is None:
        if not _open:
            raise ProfilerError("no open Proton session: call proton.start() first")
        return list(_open.values())
    key = session if isinstance(session, int) else getattr(session, "id", None)
    if key not in _open:
        raise ProfilerError(f"session {session!r} is not open")
    return [_open[key]]


def _host_backend() -> str:
    import sys
    torch = sys.modules.get("torch")
    if torch is None:
        try:
            import torch
        except ImportError:
            return "cupti"
    return "roctracer" if getattr(torch.version, "hip", None) else "cupti"


class profile:
    """`with proton.profile("name", **start_kwargs) as p:` opens a session and
    finalizes it on exit (`p.report`); `@proton.profile("name")` profiles each
    call of the function."""

    def __init__(self, name: str = "proton", **kwargs):
        self.name, self.kwargs, self.report, self.session = name, kwargs, None, None

    def __enter__(self):
        self.session = start(self.name, **self.kwargs)
        return self

    def __exit__(self, *exc):
        if not isinstance(self.session, DisabledSession):
            self.report = finalize(self.session)
        return False

    def __call__(self, function):
        @functools.wraps(function)
        def wrapped(*args, **kwargs):
            with profile(self.name, **self.kwargs):
                return function(*args, **kwargs)
        return wrapped
