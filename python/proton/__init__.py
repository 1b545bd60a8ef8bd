"""Proton: an intra-kernel profiler for Triton and Gluon kernels.

    import proton
    proton.start("run", mode="default:optimizations=clock32")
    kernel[grid](...)
    proton.finalize()   # run.chrome_trace, run.pftrace, run.hatchet
"""

from . import mode
from .compiler import InstrumentationError, InstrumentedKernel, PipelineOptions, instrument_llvm_ir
from .errors import ProfilerError
from .mode import ModeError
from .runtime import SessionReport, activate, deactivate, finalize, profile, start

__all__ = [
    "InstrumentationError", "InstrumentedKernel", "ModeError", "PipelineOptions", "ProfilerError", "SessionReport",
    "activate", "deactivate", "finalize", "instrument_llvm_ir", "mode", "profile", "start",
]
