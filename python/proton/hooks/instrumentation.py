"""backend="instrumentation": upstream's InstrumentationHook over Proton's stage
hook (proton.compiling.stage_hook.StageHook), which compiles kernels with
their markers instrumented while it is active."""

from __future__ import annotations

from .hook import Hook


class InstrumentationHook(Hook):
    """`InstrumentationHook(mode)` with a mode as Triton's Proton takes it
    (None, "", a mode string or a proton.mode object), or wrapping the stage
    hook of an instrumentation session (`stage_hook=`)."""

    priority = 0
    #: Instrumentation hooks active now; one at a time, as in Triton's Proton.
    active_count: int = 0
    #: Alignment of each launch's profile buffer (Triton's profile_scratch).
    profile_buffer_alignment: int = 16

    def __init__(self, mode=None, *, stage_hook=None):
        from ..compiling.stage_hook import StageHook
        from ..mode import parse

        self.mode = parse(mode or None)
        self.stage_hook = stage_hook or StageHook(self.mode.pipeline_options(), label=str(self.mode))

    def activate(self) -> None:
        if InstrumentationHook.active_count > 0:
            raise RuntimeError("Only one instance of the instrumentation hook can be active at a time.")
        self.stage_hook.install()
        InstrumentationHook.active_count += 1

    def deactivate(self) -> None:
        self.stage_hook.uninstall()
        InstrumentationHook.active_count -= 1
