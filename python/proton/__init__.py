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

from .instrument import stage_hook as _hook
from . import mode
from . import gpu, hooks, specs
from .api import DEFAULT_PROFILE_NAME, activate, deactivate, finalize, profile, sessions, start
from .instrument.compiler import InstrumentationError, InstrumentedKernel, PipelineOptions, instrument_llvm_ir
from .errors import PipeliningWarning, ProfilerError
from .host import context
from .host.scope import cpu_timed_scope, enter_scope, enter_state, exit_scope, exit_state, scope, state
from .mode import ModeError
from .instrument.session import SessionReport

if _os.environ.get(_hook.DUMP_ENV) == "1":  # proton-dump-ttgir's run: see hook.install_dump_keying_hook
    _hook.install_dump_keying_hook()

__all__ = [
    "DEFAULT_PROFILE_NAME", "context", "specs", "cpu_timed_scope", "enter_state", "exit_state", "hooks",
    "InstrumentationError", "InstrumentedKernel", "ModeError", "PipelineOptions", "PipeliningWarning", "ProfilerError",
    "SessionReport",
    "activate", "deactivate", "enter_scope", "exit_scope", "finalize", "instrument_llvm_ir", "mode", "profile",
    "scope", "sessions", "start", "state",
]
