"""`proton.mode`, as Triton's Proton has it: the instrumentation modes
(`proton.mode.Default(...)`, `OpMeasure`, `MMA`) and the host modes
(`PCSampling`, `PeriodicFlushing`), or their strings, e.g.

    default:optimizations=clock32,time_shift:sampling_strategy=selective:sampling_options=0,2

They are defined in proton.session.modes."""

from .session.modes import (
    BUFFER_STRATEGIES,
    BUFFER_TYPE_ALIASES,
    HOST_MODES,
    MAX_BUFFER_SIZE,
    MAX_WARPS,
    METRIC_TYPES,
    MMA,
    MODES,
    OPTIMIZATIONS,
    PERIODIC_FORMATS,
    STRIDED_GRANULARITIES,
    Default,
    Mode,
    ModeError,
    OpMeasure,
    PCSampling,
    PeriodicFlushing,
    is_host_mode,
    parse,
    parse_any,
)

__all__ = [
    "BUFFER_STRATEGIES",
    "BUFFER_TYPE_ALIASES",
    "HOST_MODES",
    "MAX_BUFFER_SIZE",
    "MAX_WARPS",
    "METRIC_TYPES",
    "MMA",
    "MODES",
    "OPTIMIZATIONS",
    "PERIODIC_FORMATS",
    "STRIDED_GRANULARITIES",
    "Default",
    "Mode",
    "ModeError",
    "OpMeasure",
    "PCSampling",
    "PeriodicFlushing",
    "is_host_mode",
    "parse",
    "parse_any",
]
