"""Instrumentation modes: what the compiler inserts and how the host decodes it.

A mode is an object (`proton.mode.Default(...)`, `proton.mode.OpMeasure(...)`)
or a string of `:`-separated fields, the first being the mode's name:

    default:optimizations=clock32,time_shift,sched_stores:sampling_strategy=selective:
        sampling_options=0,2:granularity=warp:buffer_type=shared:buffer_size=4096

Unknown names, keys or values raise ModeError listing the valid ones.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Union

from ..compiling.compiler import PipelineOptions, option_choices

#: clock32: read the 32-bit cycle counter (records keep 32 instead of 48
#: clock bits; wrap-around is undone by the decoder). time_shift: subtract
#: the measured cost of earlier records from later time stamps. sched_stores:
#: move record stores out of measured windows. sched_barriers: AMD
#: scheduling barriers around records.
OPTIMIZATIONS = ("clock32", "time_shift", "sched_stores", "sched_barriers")


#: A CTA has at most 1024 threads: 32 warps of 32 (NVIDIA), 16 of 64 (AMD).
MAX_WARPS = 32
#: Record bytes per CTA (the pass option is a 32-bit count).
MAX_BUFFER_SIZE = 1 << 30


class ModeError(ValueError):
    """A mode string or object with an unknown or invalid field."""


#: Triton's Proton's names: metric types and buffer strategies it has; its
#: buffer types (plus "shared_mem", the spelling of its tutorial's table);
#: granularities where one warp (or warp group) of every N records.
METRIC_TYPES = ("cycle",)
BUFFER_STRATEGIES = ("circular",)
BUFFER_TYPE_ALIASES = {"shared_mem": "shared", "global_mem": "global"}
STRIDED_GRANULARITIES = {f"{base}_{n}": (base, n) for base in ("warp", "warp_group") for n in (2, 4, 8)}


def _name(value) -> str:
    """An option value as text: Triton's Proton passes enum members too."""
    text = getattr(value, "value", value)
    text = getattr(text, "name", text) if not isinstance(text, (str, int)) else text
    return str(text).lower() if not isinstance(text, str) else text


@dataclass(frozen=True)
class Default:
    """Every recording warp's scopes as a timeline (trace outputs and tree)."""

    optimizations: tuple[str, ...] = ()
    sampling_strategy: str = "none"
    sampling_options: tuple[int, ...] = ()
    granularity: str = "warp"
    buffer_type: str = "auto"
    buffer_size: int = 0
    metric_type: str = "cycle"
    buffer_strategy: str = "circular"

    name = "default"

    def __post_init__(self):
        if isinstance(self.optimizations, str):
            object.__setattr__(self, "optimizations", _split(self.optimizations))
        if isinstance(self.sampling_options, str):
            object.__setattr__(self, "sampling_options", _ints("sampling_options", self.sampling_options))
        elif isinstance(self.sampling_options, int):
            object.__setattr__(self, "sampling_options", (self.sampling_options,))
        object.__setattr__(self, "optimizations", tuple(_name(o) for o in _items("optimizations", self.optimizations)))
        object.__setattr__(self, "sampling_options", _items("sampling_options", self.sampling_options))
        for key in ("sampling_strategy", "granularity", "buffer_type", "metric_type", "buffer_strategy"):
            object.__setattr__(self, key, _name(getattr(self, key)))
        object.__setattr__(self, "buffer_type", BUFFER_TYPE_ALIASES.get(self.buffer_type, self.buffer_type))
        for opt in self.optimizations:
            _check("optimizations", opt, OPTIMIZATIONS)
        choices = option_choices()
        _check("sampling_strategy", self.sampling_strategy, choices["sampling_strategy"])
        _check("granularity", self.granularity, (*choices["granularity"], *STRIDED_GRANULARITIES))
        _check("buffer_type", self.buffer_type, choices["buffer_type"])
        _check("metric_type", self.metric_type, METRIC_TYPES)
        if self.buffer_strategy == "flush":
            raise ModeError(
                "buffer_strategy=flush is not supported: records go to a circular buffer per warp "
                "(buffer_strategy=circular, the default), and full buffers are counted in the report"
            )
        _check("buffer_strategy", self.buffer_strategy, BUFFER_STRATEGIES)
        if not isinstance(self.buffer_size, int) or self.buffer_size < 0:
            raise ModeError(f"buffer_size must be a non-negative number of bytes, got {self.buffer_size!r}")
        if self.buffer_size and (self.buffer_size & (self.buffer_size - 1) or self.buffer_size > MAX_BUFFER_SIZE):
            raise ModeError(
                f"buffer_size must be 0 (inferred) or a power of two up to {MAX_BUFFER_SIZE} bytes "
                f"(each warp's ring is a power of two), got {self.buffer_size}"
            )
        for warp in self.sampling_options:
            if not isinstance(warp, int) or not 0 <= warp < MAX_WARPS:
                raise ModeError(
                    f"sampling_options are warp (or warp-group) ids from 0 to {MAX_WARPS - 1} "
                    f"(a CTA has at most {MAX_WARPS} warps), got {warp!r}"
                )
        if self.sampling_strategy == "selective" and not self.sampling_options:
            raise ModeError("sampling_strategy=selective needs sampling_options (the warp ids that record, e.g. 0,2)")
        if self.sampling_strategy == "none" and self.sampling_options:
            raise ModeError("sampling_options is only used with sampling_strategy=selective")

    @property
    def time_shift(self) -> bool:
        return "time_shift" in self.optimizations

    def pipeline_options(self) -> PipelineOptions:
        """The compiler options of this mode (target-independent part)."""
        granularity, stride = STRIDED_GRANULARITIES.get(self.granularity, (self.granularity, 1))
        return PipelineOptions(
            buffer_type=self.buffer_type,
            buffer_size=self.buffer_size,
            granularity=granularity,
            unit_stride=stride,
            sampling_strategy=self.sampling_strategy,
            sampling_options=self.sampling_options,
            clock_bits=32 if "clock32" in self.optimizations else 64,
            sched_stores="sched_stores" in self.optimizations,
            # On by default for AMD; "sched_barriers" in a string is accepted
            # for symmetry with the other optimizations.
            sched_barriers=True,
        )

    def __str__(self) -> str:
        parts = [self.name]
        for f in fields(self):
            value = getattr(self, f.name)
            if value != f.default:
                if isinstance(value, tuple):
                    value = ",".join(str(v) for v in value)
                parts.append(f"{f.name}={value}")
        return ":".join(parts)


@dataclass(frozen=True)
class OpMeasure(Default):
    """Cycles per scope aggregated into a tree only (no timeline files)."""

    name = "op_measure"


@dataclass(frozen=True)
class MMA(Default):
    """Default plus scopes the compiler adds around the kernel's
    matrix-multiply instructions, with no marker in the kernel: `mma.issue`
    (Hopper wgmma and Blackwell tcgen05 issue runs), `mma.wait` (each wgmma
    wait_group) and `mma` (runs of mma.sync or AMD MFMA/WMMA). The names
    `mma` and `mma.*` are reserved for them. Upstream's name and fields;
    what it records is this project's design (docs/mma_mode.md)."""

    name = "mma"

    def pipeline_options(self) -> PipelineOptions:
        return PipelineOptions(**{**super().pipeline_options().__dict__, "mma_scopes": True})


@dataclass(frozen=True)
class PCSampling:
    """Host backend (CUPTI): PC sampling of every kernel launched while
    active; samples per source line and stall reason under each kernel.
    interval: the sampling period. 5..31 is CUPTI's exponent (one sample
    every 2**interval cycles per SM); larger values are a period in cycles,
    as Triton's Proton takes it (rounded to the nearest power of two within
    CUPTI's range); 0 keeps CUPTI's default. The default, 1000 cycles
    (2**10), is the period Triton's Proton samples at; a kernel of a
    microsecond then gets about one sample per four launches (a lower
    exponent samples more often)."""

    interval: int = 1000

    name = "pcsampling"

    def __post_init__(self):
        if not isinstance(self.interval, int) or self.interval < 0 or 0 < self.interval < 5:
            raise ModeError(
                f"pcsampling interval is a period exponent in 5..31, a period in cycles (32 or more), "
                f"or 0 for CUPTI's default; got {self.interval!r}"
            )

    @property
    def exponent(self) -> int:
        """CUPTI's sampling-period exponent (0: CUPTI's default)."""
        if self.interval <= 31:
            return self.interval
        return min(31, max(5, round(math.log2(self.interval))))

    def __str__(self) -> str:
        return self.name + (f":interval={self.interval}" if self.interval else "")


@dataclass(frozen=True)
class PeriodicFlushing:
    """Host backends, as Triton's Proton's mode of that name: each phase that
    proton.data.advance_phase ends is written at once as
    <name>.part_<phase>.<format> and let go; finalize writes the last one.
    format: "hatchet" (JSON) or "hatchet_msgpack" (MessagePack)."""

    format: str = "hatchet"

    name = "periodic_flushing"

    def __post_init__(self):
        _check("format", self.format, PERIODIC_FORMATS)

    def __str__(self) -> str:
        return f"{self.name}:format={self.format}"


#: The tree formats of periodic flushing (and of finalize's output_format).
PERIODIC_FORMATS = ("hatchet", "hatchet_msgpack")
MODES = {
    "default": Default,
    "op_measure": OpMeasure,
    "op-measure": OpMeasure,
    "mma": MMA,
    "pcsampling": PCSampling,
    "periodic_flushing": PeriodicFlushing,
}
Mode = Union[Default, OpMeasure, MMA, PCSampling, PeriodicFlushing]
HOST_MODES = (PCSampling, PeriodicFlushing)
INTEGER_KEYS = ("buffer_size", "interval")


def is_host_mode(mode) -> bool:
    """Whether `mode` (object or string) selects a host backend mode."""
    if isinstance(mode, HOST_MODES):
        return True
    return isinstance(mode, str) and mode.split(":", 1)[0].strip() in (m.name for m in HOST_MODES)


def parse(mode: Union[str, Default, None]) -> Default:
    """An instrumentation mode object from None (the default mode), an object, or a string."""
    parsed = parse_any(mode)
    if isinstance(parsed, PCSampling):
        raise ModeError("pcsampling is a host profiler mode: use it with backend='cupti'")
    if isinstance(parsed, PeriodicFlushing):
        raise ModeError(
            "periodic_flushing is a host profiler mode (backend='cupti', 'roctracer', 'rocprofiler'); "
            "instrumentation sessions take periodic_flushing=True"
        )
    return parsed


def parse_any(mode) -> Mode:
    """Any mode object (instrumentation or host) from None, an object, or a string."""
    if mode is None:
        return Default()
    if isinstance(mode, (Default, *HOST_MODES)):
        return mode
    if not isinstance(mode, str):
        raise ModeError(f"a mode is a string or a proton.mode object, got {type(mode).__name__}")
    name, *items = [part.strip() for part in mode.split(":")]
    if name not in MODES:
        raise ModeError(f"unknown mode {name!r} in {mode!r}; valid modes: {', '.join(MODES)}")
    cls = MODES[name]
    valid_keys = [f.name for f in fields(cls)]
    kwargs = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep:
            raise ModeError(f"mode field {item!r} in {mode!r} is not key=value; valid keys: {', '.join(valid_keys)}")
        if key not in valid_keys:
            raise ModeError(f"unknown mode key {key!r} in {mode!r}; valid keys: {', '.join(valid_keys)}")
        if key in kwargs:
            raise ModeError(f"mode key {key!r} given twice in {mode!r}")
        value = value.strip()
        if key in INTEGER_KEYS:
            kwargs[key] = _int(key, value)
        else:
            kwargs[key] = value
    return cls(**kwargs)


def _items(key: str, value) -> tuple:
    """A list-valued field as a tuple; ModeError naming it for what is no list."""
    try:
        return tuple(value)
    except TypeError:
        raise ModeError(
            f"{key} must be a comma-separated string or a list, got {type(value).__name__} {value!r}"
        ) from None


def _split(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip())


def _int(key: str, text: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        raise ModeError(f"mode key {key} needs an integer, got {text!r}") from None


def _ints(key: str, text: str) -> tuple[int, ...]:
    return tuple(_int(key, part) for part in _split(text))


def _check(key: str, value, valid) -> None:
    if value not in valid:
        raise ModeError(f"invalid {key} value {value!r}; valid values: {', '.join(str(v) for v in valid)}")
