"""The instrumentation compiler: Triton's LLVM IR text in, instrumented LLVM IR
text and a description of the profile buffer out. It runs Proton's MLIR
pipeline (--proton-pipeline) in the `_C` extension, which holds its own
LLVM/MLIR and shares no objects with Triton's."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from . import bridge


def extension():
    """The compiler extension (proton._C, 20 MB with its MLIR), imported on
    first use so that host-only profiling never loads it."""
    from .. import _C

    return _C


def option_choices() -> dict[str, tuple[str, ...]]:
    """Valid values of the enumerated pipeline options, from the compiler's
    own enums, for early, clear errors ("auto" buffer type included: the
    compiler resolves it per kernel)."""
    from ..contract import compiler_exports

    buffer_types = sorted(compiler_exports.BufferType, key=lambda kind: kind.name != "auto")  # the default first
    return {
        "buffer_type": tuple(kind.name for kind in buffer_types),
        "granularity": tuple(kind.name for kind in compiler_exports.Granularity),
        "sampling_strategy": tuple(kind.name for kind in compiler_exports.SamplingStrategy),
    }


#: The architectures each target takes: NVIDIA sm_50 to sm_129 (a/f
#: suffixes), AMD gfx9-12 names.
ARCH_FORMS = {"nvptx": r"sm_(5\d|[6-9]\d|1[0-2]\d)[af]?", "amdgpu": r"gfx(9|1[0-2])[0-9a-f]{1,3}"}

CLOCK_BITS = (32, 64)
TARGETS = ("nvptx", "amdgpu")


#: The module triples of each target (Triton 3.9's AMD LLVM writes
#: "amdgpu9.42-amd-amdhsa").
TRIPLE_TARGETS = {"nvptx": re.compile(r"^nvptx"), "amdgpu": re.compile(r"^(amdgcn|amdgpu)")}


#: Text that may be an MMA instruction for proton-mma-scopes (which decides):
#: without it, an MMA-mode kernel is not round-tripped, as without markers.
MMA_INSTRUCTION = re.compile(
    r"wgmma\.|tcgen05\.(mma|commit)|mma\.(sync|sp)|llvm\.nvvm\.mma\.|llvm\.amdgcn\.s?(mfma|wmma)"
)


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
    #: The MMA mode: scopes around matrix-multiply instructions (proton-mma-scopes).
    mma_scopes: bool = False
    #: Granularities warp_N / warp_group_N of Triton's Proton: one unit (warp
    #: or warp group) of every `unit_stride` records. Resolved per kernel,
    #: once its warp count is known (`for_warps`); not a pass option.
    unit_stride: int = 1

    def __post_init__(self):
        _check_choice("target", self.target, TARGETS)
        choices = option_choices()
        for option in ("buffer_type", "granularity", "sampling_strategy"):
            _check_choice(option, getattr(self, option), choices[option])
        _check_choice("clock_bits", self.clock_bits, CLOCK_BITS)
        for name in ("buffer_size", "num_warps", "shared_offset", "kernel_id"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
        if self.kernel_id >= 1 << 32:
            raise ValueError(f"kernel_id must fit in 32 bits, got {self.kernel_id}")
        # The arch goes into the pass options: it must be one word of the
        # target's form (no spaces that would smuggle in other options).
        if self.arch and not re.fullmatch(ARCH_FORMS[self.target], self.arch):
            raise ValueError(
                f"arch {self.arch!r} is not a {self.target} architecture "
                f"({'sm_80 ... sm_120a' if self.target == 'nvptx' else 'gfx90a, gfx942, gfx950 ...'})"
            )
        if self.unit_stride not in (1, 2, 4, 8):
            raise ValueError(f"unit_stride must be 1, 2, 4 or 8, got {self.unit_stride!r}")
        if any(not isinstance(w, int) or w < 0 for w in self.sampling_options):
            raise ValueError(f"sampling_options must be non-negative warp ids, got {self.sampling_options!r}")

    def for_warps(self, num_warps: int) -> "PipelineOptions":
        """These options for a kernel of `num_warps` warps: a unit stride
        becomes selective sampling of units 0, N, 2N, ... (within the units
        the sampling options name, if any)."""
        if self.unit_stride == 1:
            return self
        unit = 4 if self.granularity == "warp_group" else 1
        units = [u for u in range(0, max(num_warps // unit, 1), self.unit_stride)]
        if self.sampling_strategy == "selective":
            units = [u for u in units if u in self.sampling_options]
        return PipelineOptions(
            **{**self.__dict__, "unit_stride": 1, "sampling_strategy": "selective", "sampling_options": tuple(units)}
        )

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
        if self.mma_scopes:
            parts.append("mma-scopes=true")
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
    """Runs the pipeline on one module. A module without markers is not
    touched at all. Otherwise everything of Triton's module that the
    instrumentation does not change comes back as Triton wrote it, or the
    kernel is refused (see proton.compiling.bridge). Raises InstrumentationError with
    the compiler's diagnostics; never aborts the process on bad input."""
    from ..contract.compiler_exports import MARKER_PREFIX

    options = options or PipelineOptions()
    if MARKER_PREFIX not in llvm_ir and not (options.mma_scopes and MMA_INSTRUCTION.search(llvm_ir)):
        return InstrumentedKernel(llvm_ir, {"instrumented": False})
    triple = re.search(r'^target triple = "([^"]*)"', llvm_ir, re.M)
    if triple and not TRIPLE_TARGETS[options.target].search(triple.group(1)):
        raise InstrumentationError(
            f"target={options.target} does not match the module's triple "
            f"{triple.group(1)!r}: the instrumentation would use the wrong GPU's intrinsics"
        )
    _check_warp_count(llvm_ir, options)
    try:
        readable = bridge.legacy_float_literals(llvm_ir)
        hidden = bridge.hide_intrinsics(readable, extension().HIDDEN_INTRINSIC_PREFIX)
    except ValueError as error:  # LiteralError, or text the bridge cannot split
        raise InstrumentationError(
            f"{error} ({_triton_description()}; Proton's LLVM {extension().LLVM_VERSION})"
        ) from None
    try:
        text, metadata_json, warnings = extension().instrument(hidden, options.to_pass_options())
    except extension().CompilerError as error:
        message = str(error).strip()
        if message.startswith("LLVM IR parse error"):
            # Syntax of a newer LLVM that ours cannot read.
            message += f" ({_triton_description()}; Proton's LLVM {extension().LLVM_VERSION} cannot read this LLVM IR)"
        raise InstrumentationError(message) from None
    metadata = json.loads(metadata_json)
    if not metadata.get("instrumented"):
        return InstrumentedKernel(llvm_ir, metadata, warnings)
    try:
        text = bridge.restore(llvm_ir, text, metadata["kernel"])
        problems = bridge.check(llvm_ir, text, metadata["kernel"])
    except ValueError as error:
        problems = [f"the bridge could not read the module: {error}"]
    if problems:
        raise InstrumentationError(_bridge_error(metadata["kernel"], problems))
    return InstrumentedKernel(text, metadata, warnings)


def _check_warp_count(llvm_ir: str, options: PipelineOptions) -> None:
    """num_warps must match the threads the kernel declares: fewer would
    record a subset of the warps without a word."""
    declared = re.search(
        r'"(?:nvvm\.reqntid|nvvm\.maxntid)"="([\d,]+)"|"amdgpu-flat-work-group-size"="\d+,(\d+)"', llvm_ir
    )
    if not options.num_warps or not declared:
        return
    values = declared.group(1) or declared.group(2)
    if not re.fullmatch(r"\d+(,\d+)*", values):
        raise InstrumentationError(f"the kernel declares an unreadable thread count: {declared.group(0)}")
    threads = 1
    for part in values.split(","):
        threads *= int(part)
    lanes = options.threads_per_warp or (32 if options.target == "nvptx" else 64)
    if options.num_warps * lanes != threads:
        raise InstrumentationError(
            f"num_warps={options.num_warps} does not match the kernel, which declares "
            f"{threads} threads per CTA ({threads // lanes} warps of {lanes})"
        )


def _bridge_error(kernel: str, problems: list[str]) -> str:
    shown = problems[:8]
    more = f"\n  ... and {len(problems) - len(shown)} more" if len(problems) > len(shown) else ""
    return (
        f"kernel {kernel}: Proton's LLVM IR bridge would change more than the instrumentation "
        f"({_triton_description()}; Proton's LLVM {extension().LLVM_VERSION}), so the kernel is not instrumented:\n  "
        + "\n  ".join(shown)
        + more
        + "\nProfile this kernel without scopes, or report this with the kernel's LLVM IR (TRITON_KERNEL_DUMP=1)."
    )


def triton_version() -> tuple[int, int]:
    """The installed Triton's (major, minor); (0, 0) for a version without them."""
    import triton  # the hook needs Triton; this module does not

    parts = re.findall(r"\d+", triton.__version__)[:2]
    return (int(parts[0]), int(parts[1])) if len(parts) == 2 else (0, 0)


def _triton_description() -> str:
    try:
        import triton
    except ImportError:
        return "Triton not installed"
    return f"Triton {triton.__version__}, LLVM {TRITON_LLVM.get(triton_version(), 'unknown')}"


#: The LLVM each supported Triton release is built with (its llvm-hash.txt).
TRITON_LLVM = {(3, 6): "22-git", (3, 7): "23-git", (3, 8): "23-git", (3, 9): "24-git"}


def triton_arch(target) -> tuple[str, str]:
    """(pipeline target, arch) for a triton GPUTarget."""
    if target.backend == "cuda":
        return "nvptx", f"sm_{target.arch}"
    if target.backend == "hip":
        return "amdgpu", str(target.arch)
    raise InstrumentationError(f"Proton instruments NVIDIA (cuda) and AMD (hip) kernels, not {target.backend!r}")
