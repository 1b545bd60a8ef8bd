"""The instrumentation compiler: Triton's LLVM IR text in, instrumented LLVM IR
text and a description of the profile buffer out. It runs Proton's MLIR
pipeline (--proton-pipeline) in the `_C` extension, which holds its own
LLVM/MLIR and shares no objects with Triton's."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable

from . import _C
from .buffer import BUFFER_TYPES as _BUFFER_TYPE_CODES

#: Valid values of the enumerated pipeline options, for early, clear errors.
#: "auto" is an option only: the compiler resolves it to a buffer type.
BUFFER_TYPES = ("auto", *_BUFFER_TYPE_CODES)
GRANULARITIES = ("warp", "warp_group", "cta")
SAMPLING_STRATEGIES = ("none", "selective")
CLOCK_BITS = (32, 64)
TARGETS = ("nvptx", "amdgpu")


class InstrumentationError(RuntimeError):
    """The pipeline rejected a kernel; the message holds its diagnostics with
    source locations (file:line:col)."""


@dataclass(frozen=True)
class PipelineOptions:
    """Options of --proton-pipeline; the names follow the pass options."""

    target: str = "nvptx"
    arch: str = ""
    buffer_type: str = "auto"
    buffer_size: int = 0
    granularity: str = "warp"
    sampling_strategy: str = "none"
    sampling_options: tuple[int, ...] = ()
    clock_bits: int = 64
    num_warps: int = 0
    shared_offset: int = 0
    shared_limit: int | None = None
    threads_per_warp: int | None = None
    sched_stores: bool = False
    sched_barriers: bool = True
    kernel_id: int = 0

    def __post_init__(self):
        _check_choice("target", self.target, TARGETS)
        _check_choice("buffer_type", self.buffer_type, BUFFER_TYPES)
        _check_choice("granularity", self.granularity, GRANULARITIES)
        _check_choice("sampling_strategy", self.sampling_strategy, SAMPLING_STRATEGIES)
        _check_choice("clock_bits", self.clock_bits, CLOCK_BITS)
        for name in ("buffer_size", "num_warps", "shared_offset", "kernel_id"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
        if self.kernel_id >= 1 << 32:
            raise ValueError(f"kernel_id must fit in 32 bits, got {self.kernel_id}")
        if any(not isinstance(w, int) or w < 0 for w in self.sampling_options):
            raise ValueError(f"sampling_options must be non-negative warp ids, got {self.sampling_options!r}")

    def to_pass_options(self) -> str:
        """The option string of --proton-pipeline{...}."""
        parts = [
            f"target={self.target}",
            f"buffer-type={self.buffer_type}",
            f"buffer-size={self.buffer_size}",
            f"granularity={self.granularity}",
            f"sampling-strategy={self.sampling_strategy}",
            f"clock-bits={self.clock_bits}",
            f"num-warps={self.num_warps}",
            f"shared-offset={self.shared_offset}",
            f"sched-stores={str(self.sched_stores).lower()}",
            f"sched-barriers={str(self.sched_barriers).lower()}",
        ]
        if self.arch:
            parts.append(f"arch={self.arch}")
        if self.kernel_id:
            parts.append(f"kernel-id={self.kernel_id}")
        if self.sampling_options:
            parts.append("sampling-options=" + ",".join(str(w) for w in self.sampling_options))
        if self.shared_limit is not None:
            parts.append(f"shared-limit={self.shared_limit}")
        if self.threads_per_warp is not None:
            parts.append(f"threads-per-warp={self.threads_per_warp}")
        return " ".join(parts)


def _check_choice(name: str, value: Any, choices: Iterable[Any]) -> None:
    choices = tuple(choices)
    if value not in choices:
        valid = ", ".join(str(c) for c in choices)
        raise ValueError(f"invalid {name} {value!r}; valid: {valid}")


@dataclass
class InstrumentedKernel:
    llvm_ir: str
    metadata: dict = field(default_factory=dict)
    warnings: str = ""

    @property
    def instrumented(self) -> bool:
        return bool(self.metadata.get("instrumented"))


def instrument_llvm_ir(llvm_ir: str, options: PipelineOptions | None = None) -> InstrumentedKernel:
    """Runs the pipeline on one module. Raises InstrumentationError with the
    compiler's diagnostics; never aborts the process on bad input."""
    options = options or PipelineOptions()
    try:
        text, metadata_json, warnings = _C.instrument(llvm_ir, options.to_pass_options())
    except _C.CompilerError as error:
        raise InstrumentationError(str(error).strip()) from None
    return InstrumentedKernel(text, json.loads(metadata_json), warnings)


def triton_arch(target) -> tuple[str, str]:
    """(pipeline target, arch) for a triton GPUTarget."""
    if target.backend == "cuda":
        return "nvptx", f"sm_{target.arch}"
    if target.backend == "hip":
        return "amdgpu", str(target.arch)
    raise InstrumentationError(f"Proton instruments NVIDIA (cuda) and AMD (hip) kernels, not {target.backend!r}")
