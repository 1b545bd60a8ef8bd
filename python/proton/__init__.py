"""Proton: an intra-kernel profiler for Triton and Gluon kernels, and a host
profiler of kernel launches.

    import proton
    proton.start("run", mode="default:optimizations=clock32")   # inside kernels
    kernel[grid](...)
    proton.finalize()   # run.chrome_trace, run.pftrace, run.hatchet

    proton.start("app", backend="cupti", hook="triton")          # every launch
    with proton.scope("step"):
        model(x)
    proton.finalize()   # app.hatchet (view with proton-view app.hatchet)
"""

import os as _os

from . import gpu, hooks, mode, specs
from . import profile as _profile_module  # noqa: F401 - loaded first: `proton.profile` stays the function below
from .profiling.api import activate, deactivate, finalize, profile, sessions, start
from .contract.errors import PipeliningWarning, ProfilerError
from .session.options import DEFAULT_PROFILE_NAME
from . import context, data
from . import state as _state_module  # noqa: F401 - loaded first: `proton.state` stays the function below
from . import metric
from .host.scope import cpu_timed_scope, enter_scope, exit_scope, scope
from .host.state import enter_state, exit_state, state
from .state import metadata_state
from .compiling.compiler import InstrumentationError, InstrumentedKernel, PipelineOptions, instrument_llvm_ir
from .compiling.instrumentation_state import DUMP_ENV as _DUMP_ENV
from .mode import ModeError

if _os.environ.get(_DUMP_ENV) == "1":  # proton-dump-ttgir's run: see stage_hook.install_dump_hook
    from .compiling.stage_hook import install_dump_hook as _install_dump_hook

    _install_dump_hook()


def __getattr__(name):
    # The intra-kernel session (and the compiler extension it loads) only when used.
    if name == "SessionReport":
        from .recording.session_outputs import SessionReport

        return SessionReport
    if name == "export_with_torch":  # one timeline with torch.profiler's trace (proton-merge-traces --torch)
        from .commands.torch_merge import export_with_torch

        return export_with_torch
    raise AttributeError(f"module 'proton' has no attribute {name!r}")


__all__ = [
    "DEFAULT_PROFILE_NAME",
    "context",
    "data",
    "gpu",
    "specs",
    "cpu_timed_scope",
    "enter_state",
    "exit_state",
    "export_with_torch",
    "hooks",
    "metadata_state",
    "metric",
    "InstrumentationError",
    "InstrumentedKernel",
    "ModeError",
    "PipelineOptions",
    "PipeliningWarning",
    "ProfilerError",
    "SessionReport",
    "activate",
    "deactivate",
    "enter_scope",
    "exit_scope",
    "finalize",
    "instrument_llvm_ir",
    "mode",
    "profile",
    "scope",
    "sessions",
    "start",
    "state",
]
