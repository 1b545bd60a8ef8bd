"""Explicit-buffer task profiling: the kernel takes a profile buffer as an
ordinary argument and records task starts and ends into it itself (no
compiler plugin). Device side: `Profiler`; host side: `alloc_profiler_buffer`,
`reset_profiler_buffer`, `export_to_perfetto_trace`, `ProfilerBuffer`,
`set_export_trace_on` / `set_export_trace_off`."""

from .device import Profiler
from .host import (
    ProfilerBuffer,
    TaskBufferError,
    TaskReport,
    alloc_profiler_buffer,
    export_to_perfetto_trace,
    reset_profiler_buffer,
    set_export_trace_off,
    set_export_trace_on,
)

__all__ = [
    "Profiler",
    "ProfilerBuffer",
    "TaskBufferError",
    "TaskReport",
    "alloc_profiler_buffer",
    "export_to_perfetto_trace",
    "reset_profiler_buffer",
    "set_export_trace_off",
    "set_export_trace_on",
]
