"""The session API, as Triton's Proton has it (a script switches by changing
`import triton.profiler as proton` to `import proton`):

    session = proton.start(name, backend=..., mode=..., data=..., hook=...)   # an int: 0, 1, 2, ...
    proton.activate([session]) / proton.deactivate([session])                 # None: every session
    proton.finalize([session], [output_format])                               # None: every session
    proton.data.advance_phase(session) / proton.data.get(session, phase) / ...  # see proton.data
    @proton.profile / @proton.profile(name=...)                               # start at the call, stays open

Without a backend a session profiles kernel launches on the host (CUPTI on
NVIDIA, ROCTracer on AMD); backend="instrumentation", or an instrumentation
mode ("default", "op_measure", proton.mode.Default(...)), profiles inside
kernels. What Proton adds: finalize returns the session's report (a list
for several), the session id also reads as the session (`session.name`),
and `with proton.profile(name, ...):` finalizes at the end of the block.
PROTON_DISABLE=1, TRITON_PROTON_DISABLE=1 or triton.knobs.proton.disable
make all of it do nothing.
"""

from __future__ import annotations

import functools
import sys
import itertools

from ..contract.errors import ProfilerError
from ..host import session as host_session
from ..host.launch_hook import LaunchHook
from ..session.disable import profiling_disabled
from ..session.hooks import HookManager, InstrumentationHook
from ..session.interface import ProfilerSession
from ..session.options import SessionOptions
from ..session.paths import output_path
from . import at_exit as session_exit

#: finalize's output_format: Triton's names for the outputs.
OUTPUT_FORMATS = {"hatchet": "tree", "hatchet_msgpack": "tree_msgpack", "chrome_trace": "chrome_trace"}

_next_id = itertools.count()
_open: dict[int, ProfilerSession] = {}  # session id -> open session
#: Sessions whose finalize could not write their outputs: closed to
#: recording, open to another finalize, which writes what they hold.
_unwritten: set[int] = set()
#: The session proton-profile opened around a script, as in Triton's Proton:
#: the script's own start and finalize calls are then ignored (its session is
#: the command's), and it may activate and deactivate only that session.
_command_line_session: int | None = None


def _check_command_line(session, verb: str) -> bool:
    """True if the call is the script's, under proton-profile, to ignore."""
    if _command_line_session is None:
        return False
    if session is not None and int(getattr(session, "id", session)) not in (0, _command_line_session):
        raise ProfilerError(f"Only one session can be {verb} when running from the command line.")
    return True


class SessionId(int):
    """What start returns: the session id (an int, as in Triton's Proton)
    that also reads as the session: `session.name`, `session.active`."""

    def __new__(cls, value: int, session):
        self = super().__new__(cls, value)
        self.__dict__["session"] = session
        return self

    def __getattr__(self, attribute):
        return getattr(self.__dict__["session"], attribute)

    def __setattr__(self, attribute, value):
        if attribute == "session":
            self.__dict__["session"] = value
        else:
            setattr(self.__dict__["session"], attribute, value)


def start(
    name: str | None = None,
    *,
    context: str = SessionOptions.context,
    data: str | None = None,
    backend: str | None = None,
    mode=None,
    hook: str | None = None,
    max_launches_per_kernel: int | None = None,
    max_buffer_bytes: int = SessionOptions.max_buffer_bytes,
    outputs=None,
    quiet: bool = SessionOptions.quiet,
    periodic_flushing: bool | str = SessionOptions.periodic_flushing,
    compress_pftrace: bool = SessionOptions.compress_pftrace,
) -> SessionId | None:
    """Opens a profiling session, active; returns its id (None when
    profiling is disabled). `name` is the output files' path without
    extension (default "proton"); data="tree" writes <name>.hatchet,
    data="trace" <name>.chrome_trace (instrumentation: also <name>.pftrace);
    without data, instrumentation writes all three and host sessions the tree.
    In a torch.distributed run the names carry the rank (<name>.rank_<r>.*).
    periodic_flushing=True, or on host backends Triton's Proton's
    mode="periodic_flushing:format=hatchet|hatchet_msgpack":
    proton.data.advance_phase writes each phase as <name>.part_<phase>.*
    and frees its data; instrumentation sessions also take a duration
    ("30s") or a size of kept buffers ("256MB") to end phases by themselves.
    Open sessions are finalized when the program ends (exit, an uncaught
    exception, Ctrl-C, SIGTERM: at_exit.py).
    compress_pftrace=True (instrumentation) deflates the .pftrace's packets:
    about a third of the bytes, slower to write (docs/options.md).
    Instrumentation keeps every launch within max_buffer_bytes of profile
    buffers (do_bench repetitions: the last of each kernel);
    max_launches_per_kernel=N keeps the last N of each kernel instead. The
    report counts every launch not kept, per kernel and reason."""
    if profiling_disabled() or _command_line_session is not None:
        return None
    if isinstance(hook, LaunchHook):
        hook = "triton"  # LaunchHook() (configured or not) is hook="triton"
    options = SessionOptions.from_start(
        name,
        context=context,
        data=data,
        backend=backend,
        mode=mode,
        hook=hook,
        max_launches_per_kernel=max_launches_per_kernel,
        max_buffer_bytes=max_buffer_bytes,
        outputs=outputs,
        quiet=quiet,
        periodic_flushing=periodic_flushing,
        compress_pftrace=compress_pftrace,
    )
    same = _open_with_outputs_of(options.name)
    if same is not None:
        return _continue(same, options)
    if options.backend == "instrumentation":
        options.check_instrumentation()
        session = _instrumentation().start_instrumentation(options)
        hooks = [InstrumentationHook(stage_hook=session.hook)]
    else:
        options.check_host()
        session = host_session.HostSession(options)
        session.start()
        hooks = []
    if options.hook == "triton":
        hooks.append(LaunchHook())
    return _register(session, hooks)


def _open_with_outputs_of(name: str):
    """The open session whose outputs have the names `name` gives, if any."""
    base = output_path(name, "")
    return next((s for s in _open.values() if output_path(s.name, "") == base), None)


def _continue(session, options: SessionOptions) -> SessionId:
    """start() with the name of an open session continues it, as in Triton's
    Proton (a function under @proton.profile, called again): activated again,
    the same id, one set of files. Its other arguments must be the same."""
    if session.id in _unwritten:
        raise ProfilerError(
            f"session {session.name!r} (id {session.id}) could not write its outputs at finalize; call "
            "proton.finalize again before starting a session of that name"
        )
    differ = session.options.differences(options)
    if differ:
        raise ProfilerError(
            f"session {session.name!r} (id {session.id}) is open with the same output files and "
            f"{'; '.join(differ)}: starting a session of that name continues it, so its arguments must be the "
            "same (finalize it first, or choose another name)"
        )
    activate(session.id)
    return SessionId(session.id, session)


def _register(session: ProfilerSession, hooks: list) -> SessionId:
    """Gives a started session its id and its hooks; open sessions are
    finalized when the program ends (session_exit)."""
    session.id = next(_next_id)
    _open[session.id] = session
    session_exit.install(_finalize_at_end)
    for h in hooks:
        HookManager.register(h, session.id)
    return SessionId(session.id, session)


def activate(session: int | None = None) -> None:
    """Records again in `session` (None: every open session)."""
    if _check_command_line(session, "activated"):
        session = _command_line_session
    for s in _select(session):
        if s.id in _unwritten:
            if session is None:
                continue
            raise ProfilerError(
                f"session {s.name!r} (id {s.id}) was finalized but could not write its outputs: it records "
                "no more; call proton.finalize again to write what it holds"
            )
        HookManager.activate(s.id)
        s.activate()


def deactivate(session: int | None = None, flushing: bool = False) -> None:
    """Stops recording in `session` (None: every open session); its data
    stays until finalize. Deactivating twice is no error. `flushing`, as in
    Triton's Proton: a host session waits for the GPU and takes the records
    so far into its current phase (proton.data); instrumentation sessions
    write ended phases at advance_phase already, so it changes nothing there."""
    if _check_command_line(session, "deactivated"):
        session = _command_line_session
    for s in _select(session):
        s.deactivate()
        HookManager.deactivate(s.id)
        if flushing:
            s.flush()


def finalize(session: int | None = None, output_format: str | None = ""):
    """Writes and closes `session` (None: every open session). Returns the
    report, a list of them when several were open, None when none was.
    output_format "hatchet" or "chrome_trace" writes that output instead of
    the session's own choice; "hatchet_msgpack" (host sessions) writes the
    tree as MessagePack, <name>.hatchet_msgpack."""
    if _check_command_line(session, "finalized"):
        return None  # proton-profile finalizes its session when the script ends
    if output_format and output_format not in OUTPUT_FORMATS:
        raise ProfilerError(f"unknown output_format {output_format!r}; valid: {', '.join(OUTPUT_FORMATS)}")
    if session is None and not _open:
        return None
    selected = _select(session)
    if output_format:  # before anything closes: a refused format loses nothing
        for s in selected:
            s.choose_output(OUTPUT_FORMATS[output_format])
    reports, failed, cause = {}, [], None
    # Sessions that read GPU buffers back last: a session still open would record the copies.
    for s in sorted(selected, key=lambda s: s.reads_gpu_buffers_at_finalize):
        HookManager.unregister(s.id)
        try:
            reports[s.id] = s.finalize()
        except Exception as error:  # nothing written: the session keeps its data for another finalize
            _unwritten.add(s.id)
            failed.append(str(error) if isinstance(error, ProfilerError) else f"{type(error).__name__}: {error}")
            cause = cause or error
            continue
        del _open[s.id]
        _unwritten.discard(s.id)
    if failed:
        raise ProfilerError(
            "; ".join(failed) + "; nothing is lost: the session keeps its data, and proton.finalize() "
            "again writes it (make room, or fix the path, first)"
        ) from cause
    ordered = [reports[s.id] for s in selected]
    return ordered[0] if len(ordered) == 1 else ordered


def _finalize_at_end(why: str) -> None:
    """Finalizes every open session as the program ends (session_exit)."""
    if not _open:
        return
    names = ", ".join(repr(s.name) for s in _open.values())
    print(f"proton: finalizing open session(s) {names} {why}", file=sys.stderr)
    finalize()


def run_from_command_line(session: int | None) -> None:
    """proton-profile: `session` is the command's (None: the script ended)."""
    global _command_line_session
    _command_line_session = None if session is None else int(session)


def sessions() -> list:
    """The open sessions, oldest first."""
    return list(_open.values())


def _select(session) -> list:
    if session is None:
        return list(_open.values())
    key = getattr(session, "id", session) if not isinstance(session, int) else int(session)
    if not isinstance(key, int) or isinstance(key, bool):
        raise ProfilerError(
            f"a session is the id proton.start returned (an int), got {type(session).__name__} {session!r}"
        )
    if key not in _open:
        raise ProfilerError(f"Session has not been initialized: {key}")
    return [_open[key]]


class _Profiling:
    """`with proton.profile(name, ...):` starts a session and finalizes it at
    the end of the block (`.report`); used as a decorator, each call starts a
    session that stays open (deactivated after the call) until finalize, as
    in Triton's Proton."""

    def __init__(self, name: str | None, kwargs: dict):
        self.name, self.kwargs, self.report, self.session = name, kwargs, None, None

    def __enter__(self):
        self.session = start(self.name, **self.kwargs)
        return self

    def __exit__(self, *exc):
        if self.session is not None:
            self.report = finalize(self.session)
        return False

    def __call__(self, function):
        @functools.wraps(function)
        def wrapped(*args, **kwargs):
            session = start(self.name, **self.kwargs)
            try:
                return function(*args, **kwargs)
            finally:
                if session is not None and int(session) in _open:
                    deactivate(session)

        return wrapped


def profile(func=None, *, name: str | None = None, **kwargs):
    """`@proton.profile`, `@proton.profile(name=..., backend=..., ...)`, or
    `with proton.profile("name", ...):` (the name may also come first)."""
    if callable(func):
        return _Profiling(name, kwargs)(func)
    if isinstance(func, str):
        if name is not None:
            raise ProfilerError("profile: the name is given twice")
        name = func
    elif func is not None:
        raise ProfilerError(f"profile takes a function or a session name, got {type(func).__name__}")
    return _Profiling(name, kwargs)


def _instrumentation():
    """The intra-kernel session module, imported on first use: it loads the
    compiler extension, which host-only profiling does not need."""
    from ..recording import instrumentation_session

    return instrumentation_session
