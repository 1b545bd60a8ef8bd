"""What proton.start was asked for: its arguments, checked and typed once
(SessionOptions.from_start) and handed to the session that runs them
(proton.host.session.HostSession, proton.recording.instrumentation_session).
A start with the output names of an open session continues that session,
if it asks for the same (differences)."""

from __future__ import annotations

import sys
from dataclasses import dataclass

from ..contract.errors import ProfilerError
from .modes import Default, Mode, ModeError, PCSampling, PeriodicFlushing, parse_any
from .paths import check_output_directory, distributed_rank, output_path

#: The session name when start gets none, as in Triton's Proton.
DEFAULT_PROFILE_NAME = "proton"
BACKENDS = ("instrumentation", "cupti", "rocprofiler", "roctracer", "host")


@dataclass(frozen=True)
class SessionOptions:
    """proton.start's arguments (its docstring says what each does; its
    defaults are these fields')."""

    name: str  # the outputs' path without extension
    backend: str  # one of BACKENDS; "host" is the GPU's own tracer, chosen by the host session
    mode: Mode | None = None  # parsed; Default() for instrumentation without a mode
    data: str | None = None  # "tree", "trace", or None: each backend's own outputs
    context: str = "shadow"
    hook: str | None = None  # None or "triton"
    outputs: object = None  # instrumentation's outputs as given: None, a name, or a collection of names
    max_launches_per_kernel: int | None = None
    max_buffer_bytes: int = 2 << 30
    periodic_flushing: bool | str = False
    compress_pftrace: bool = False
    quiet: bool = False

    #: What a start of an open session's name must ask for the same, in the
    #: order its error lists them.
    COMPARED = (
        "backend",
        "mode",
        "data",
        "context",
        "hook",
        "outputs",
        "max_launches_per_kernel",
        "max_buffer_bytes",
        "periodic_flushing",
        "compress_pftrace",
    )

    @classmethod
    def from_start(
        cls,
        name: str | None,
        *,
        context: str,
        data: str | None,
        backend: str | None,
        mode,
        hook: str | None,
        max_launches_per_kernel: int | None,
        max_buffer_bytes: int,
        outputs,
        quiet: bool,
        periodic_flushing: bool | str,
        compress_pftrace: bool,
    ) -> SessionOptions:
        """The options of proton.start's arguments (hook as a name: "triton"
        for LaunchHook()); what one backend's session checks is checked when
        it is made (check_instrumentation, check_host)."""
        name = _checked_name(name, quiet)
        if data not in (None, "tree", "trace"):
            raise ProfilerError(f"unknown data {data!r}; valid: 'tree', 'trace'")
        if hook not in (None, "triton"):
            raise ProfilerError(f"unknown hook {hook!r}; valid: None, 'triton', LaunchHook()")
        parsed = parse_any(mode) if mode is not None else None  # "" is an unknown mode, as any other
        if backend is None:
            backend = "instrumentation" if isinstance(parsed, Default) else "host"
        if backend not in BACKENDS:
            raise ProfilerError(f"unknown backend {backend!r}; valid: {', '.join(BACKENDS)}")
        return cls(
            name=name,
            backend=backend,
            mode=Default() if parsed is None and backend == "instrumentation" else parsed,
            data=data,
            context=context,
            hook=hook,
            outputs=outputs,
            max_launches_per_kernel=max_launches_per_kernel,
            max_buffer_bytes=max_buffer_bytes,
            periodic_flushing=periodic_flushing,
            compress_pftrace=compress_pftrace,
            quiet=quiet,
        )

    def differences(self, other: SessionOptions) -> list[str]:
        """Each compared option that differs, as "key=this, not other"."""
        return [
            f"{key}={getattr(self, key)!r}, not {getattr(other, key)!r}"
            for key in self.COMPARED
            if getattr(self, key) != getattr(other, key)
        ]

    def check_instrumentation(self) -> None:
        """Refuses the host backends' options for backend="instrumentation", and
        what finalize would trip on: a bad RANK (the files are named by rank), an
        `outputs` that is no collection of names."""
        distributed_rank()
        if self.outputs is not None and not isinstance(self.outputs, (str, list, tuple, set, frozenset)):
            raise ProfilerError(
                "outputs is a list of 'chrome_trace', 'pftrace', 'tree' (or one of them), got "
                f"{type(self.outputs).__name__}"
            )
        if self.context != "shadow":
            raise ProfilerError(
                f"context={self.context!r} applies to host backends (cupti, rocprofiler, roctracer, host); "
                "instrumented kernels are attributed to their scopes"
            )
        if isinstance(self.mode, PCSampling):
            raise ModeError("pcsampling is a host profiler mode: use it with backend='cupti'")
        if isinstance(self.mode, PeriodicFlushing):
            raise ModeError(
                "mode 'periodic_flushing' is for host backends; instrumentation sessions take periodic_flushing=True"
            )

    def check_host(self) -> None:
        """Refuses the instrumentation backend's options for host backends."""
        if self.outputs is not None or self.max_launches_per_kernel is not None:
            raise ProfilerError("outputs and max_launches_per_kernel apply to backend='instrumentation'")
        if self.compress_pftrace:
            raise ProfilerError("compress_pftrace applies to backend='instrumentation' (.pftrace outputs)")
        if self.mode is not None and not isinstance(self.mode, (PCSampling, PeriodicFlushing)):
            raise ProfilerError(
                f"mode {str(self.mode)!r} is an instrumentation mode; host backends take mode=None, "
                "'pcsampling' or 'periodic_flushing'"
            )
        if not isinstance(self.periodic_flushing, bool):
            raise ProfilerError(
                f"periodic_flushing is True or False for host sessions, got {self.periodic_flushing!r} (a duration "
                "or size of buffers applies to backend='instrumentation')"
            )


def _checked_name(name: str | None, quiet: bool) -> str:
    """The session's name (output path without extension), checked."""
    name = DEFAULT_PROFILE_NAME if name is None else name
    if not isinstance(name, str) or not name:
        raise ProfilerError(f"a session name is a non-empty path without extension, got {name!r}")
    check_output_directory(name)
    if ".." in name.replace("\\", "/").split("/") and not quiet:
        print(f"proton: session {name!r} writes its outputs as {output_path(name, '.*')}", file=sys.stderr)
    return name
