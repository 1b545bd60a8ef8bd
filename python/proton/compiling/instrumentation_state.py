"""Process-wide instrumentation state shared by the markers and the hook.
Imports no Triton: `import proton` works without it (the viewer, the merge
tool and proton-opt need none)."""

#: Set by proton-dump-ttgir for the command it runs (see
#: stage_hook.install_dump_hook).
DUMP_ENV = "PROTON_TTGIR_DUMP"

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


#: While > 0, Proton runs kernels of its own (clock reads, calibration): they
#: are not the user's launches, and are never written to the user's dump or
#: override directories.
_own_kernels = 0


def running_own_kernels() -> bool:
    return _own_kernels > 0


class own_kernels:
    """`with own_kernels():` around Proton's own compiles and launches."""

    def __enter__(self):
        global _own_kernels
        import triton.knobs

        _own_kernels += 1
        self._scope = triton.knobs.compilation.scope()
        self._scope.__enter__()
        triton.knobs.compilation.dump_ir = False
        triton.knobs.compilation.override = False
        return self

    def __exit__(self, *exc):
        global _own_kernels
        self._scope.__exit__(*exc)
        _own_kernels -= 1
        return False
