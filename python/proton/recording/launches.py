"""Which launches an instrumentation session keeps, how a compiled variant of
a kernel is named, and what the session says of the launches it did not keep.

Policy (docs/options.md, "What a session keeps"):
- By default every launch is kept, in launch order, until the kept buffers
  reach `max_buffer_bytes`; later launches are not kept and are counted per
  kernel ("over max_buffer_bytes"). The bound is a hard one, kept by the
  session's arena (arena.py): launches past it write into memory nobody reads.
- Launches made inside `triton.testing.do_bench` (or `do_bench_cudagraph`)
  are benchmark repetitions: only the last of each kernel variant is kept,
  warm, and the others are counted ("do_bench repetitions").
- `max_launches_per_kernel=N` keeps the last N launches of each kernel
  variant everywhere, as before (the do_bench behaviour for any loop).
- Launches while the session is deactivated are counted, not kept.
- Launches captured in a CUDA graph are handled by cuda_graphs.
"""

from __future__ import annotations

import collections
import sys
from dataclasses import dataclass

#: Why a launch was not kept, as the report says it.
NOT_KEPT_REASONS = {
    "budget": "over max_buffer_bytes",
    "do_bench": "do_bench repetitions (the last is kept)",
    "max_launches_per_kernel": "older than the last max_launches_per_kernel",
    "inactive": "launched while the session was deactivated",
    "stale": "its profile buffer was allocated but the launch did not happen (the launch failed)",
}


@dataclass(slots=True)
class KeptLaunch:
    kernel: str  # Triton's name of the kernel
    index: int  # this kernel variant's launch number in the session
    buffer: object  # device_memory.Slice: grid x bytes_per_cta
    sequence: int = 0  # the launch's number among all launches of the session
    variant: str = ""  # describe_variant's text of the compiled variant
    call_stack: tuple = ()  # host scopes open at the launch, outermost first
    graph: object = None  # cuda_graphs.CapturedGraph for a launch captured in a CUDA graph
    kernel_id: int | None = None  # the launched kernel's id (kernel_metadata.LAUNCHED), if known
    stream: object = None  # the stream it was launched on


def describe_variant(kernel) -> str:
    """What tells a compiled variant of a Triton kernel apart, for a reader:
    its constexpr and specialized-constant arguments, num_warps and
    num_stages ("BLOCK=1024, num_warps=4, num_stages=3"); "" if the
    compiled kernel does not say."""
    parts = []
    src = getattr(kernel, "src", None)
    names = list(getattr(getattr(src, "fn", None), "arg_names", None) or [])
    constants = getattr(src, "constants", None)
    if isinstance(constants, dict):
        for key, value in constants.items():
            index = key[0] if isinstance(key, tuple) and len(key) == 1 else key
            name = names[index] if isinstance(index, int) and 0 <= index < len(names) else str(key)
            text = str(getattr(value, "value", value))
            parts.append(f"{name}={text if len(text) <= 32 else text[:29] + '...'}")
    metadata = getattr(kernel, "metadata", None)
    for option in ("num_warps", "num_stages"):
        value = getattr(metadata, option, None)
        if isinstance(value, int):
            parts.append(f"{option}={value}")
    return ", ".join(parts)


def launching_kernel(max_depth: int = 6):
    """The CompiledKernel being launched, found in the frame of Triton's
    JITFunction.run above the launch hook (None if not found)."""
    frame = sys._getframe(2)
    for _ in range(max_depth):
        if frame is None:
            return None
        kernel = frame.f_locals.get("kernel") if frame.f_code.co_name == "run" else None
        if kernel is not None and hasattr(kernel, "metadata") and hasattr(kernel, "src"):
            return kernel
        frame = frame.f_back
    return None


def variant_names(variants: dict[str, set[str]]) -> dict[tuple[str, str], str]:
    """(kernel, variant description) -> the name a report shows: the kernel's
    own name where the session saw one variant of it, else the name with the
    description ("matmul[BLOCK_M=128, num_warps=8]"); variants that describe
    alike are told apart by a number."""
    names = {}
    for kernel, descriptions in variants.items():
        if len(descriptions) == 1:
            names[(kernel, next(iter(descriptions)))] = kernel
            continue
        for number, description in enumerate(sorted(descriptions), start=1):
            names[(kernel, description)] = f"{kernel}[{description or f'variant {number}'}]"
    return names


class Retention:
    """The kept launches of one phase and the counts of those not kept, per
    (kernel name, variant description). The arena holds their buffers and
    its budget; `offer` says which launch's buffer is free again."""

    def __init__(self, max_launches: int | None):
        self.max_launches = max_launches
        self.in_order: list[KeptLaunch] = []  # every launch, within the budget
        self.last_only: dict[tuple, collections.deque] = {}  # capped per variant
        self.not_kept: dict[tuple, collections.Counter] = {}

    def count(self, key, reason: str) -> None:
        """Counts a launch not kept."""
        counts = self.not_kept.get(key)
        if counts is None:
            counts = self.not_kept[key] = collections.Counter()
        counts[reason] += 1

    def offer(self, key: tuple, launch: KeptLaunch, active: bool, benchmark: bool) -> KeptLaunch | None:
        """Keeps `launch` or counts it; returns the launch whose buffer is no
        longer kept (this one, an older one it replaces, or None)."""
        if not active:
            self.count(key, "inactive")
            return launch
        if self.max_launches is None and not benchmark:
            self.in_order.append(launch)
            return None
        cap, reason = (
            (self.max_launches, "max_launches_per_kernel") if self.max_launches is not None else (1, "do_bench")
        )
        kept = self.last_only.setdefault(key, collections.deque())
        kept.append(launch)
        if len(kept) <= cap:
            return None
        # The oldest ran before this one on its stream; the arena hands its
        # buffer out again only to a later launch on that stream.
        self.count(key, reason)
        return kept.popleft()

    def kept(self) -> list[KeptLaunch]:
        """Every kept launch, in launch order."""
        launches = self.in_order + [k for kept in self.last_only.values() for k in kept]
        return sorted(launches, key=lambda k: k.sequence)

    def not_kept_count(self) -> int:
        return sum(sum(c.values()) for c in self.not_kept.values())

    def clear(self) -> None:
        self.in_order.clear()
        self.last_only.clear()
        self.not_kept.clear()
