"""Proton: an intra-kernel profiler for Triton and Gluon kernels."""

from .compiler import InstrumentationError, InstrumentedKernel, PipelineOptions, instrument_llvm_ir

__all__ = ["InstrumentationError", "InstrumentedKernel", "PipelineOptions", "instrument_llvm_ir"]
