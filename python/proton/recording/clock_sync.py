"""The offset between a GPU's global timer and the host's real-time clock, so
that traces of several GPUs and machines can be aligned on host time.

One sample: read the host clock (time.time_ns, CLOCK_REALTIME), launch a
one-thread kernel that stores the global timer, synchronize, read the host
clock again. The GPU read happened inside that host window, so
offset = window midpoint - GPU value, known to within half the window.
Several samples; the narrowest window wins (the others were widened by
launch latency, other work on the GPU or the host being descheduled).

The estimation (estimate, interpolate, drift) is plain arithmetic on
samples and is tested on the CPU with simulated ones; only `measure` and
the kernel need a GPU.

Global timer: NVIDIA's %globaltimer counts ns; AMD's s_memrealtime counts at
100 MHz and is scaled to ns as the decoder scales it (x10).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import triton
import triton.language as tl

from ..device import memory as device_memory
from ..compiling import instrumentation_state
from ..contract.errors import ProfilerError

#: Samples per measurement: each costs one launch and one synchronize
#: (about 10-20 us); 16 give a narrow window with high probability.
SAMPLES = 16


@dataclass(frozen=True)
class ClockSample:
    """One bracketed read: host clock before, GPU global timer (ns), host clock after."""

    host_before_ns: int
    gpu_ns: int
    host_after_ns: int


@dataclass(frozen=True)
class ClockOffset:
    """realtime_minus_globaltimer_ns: add it to a global-timer time to get
    host real time (ns since 1970); true to within +- uncertainty_ns."""

    realtime_minus_globaltimer_ns: int
    uncertainty_ns: int
    samples: int
    globaltimer_ns: int  # when it was measured, on the GPU's timer (for interpolation)

    def host_clock(self) -> dict:
        """The Perfetto writer's `host_clock` argument."""
        return {
            "realtime_minus_globaltimer_ns": int(self.realtime_minus_globaltimer_ns),
            "uncertainty_ns": int(self.uncertainty_ns),
            "samples": int(self.samples),
        }


def estimate(samples) -> ClockOffset:
    """The offset from the sample with the narrowest host window. Samples
    whose host clock went backwards (an NTP or PTP step during the read) are
    left out; none left is an error."""
    samples = list(samples)
    valid = [s for s in samples if s.host_after_ns >= s.host_before_ns]
    if not valid:
        raise ProfilerError(
            f"no usable host/GPU clock sample among {len(samples)}: "
            + (
                "none taken"
                if not samples
                else "the host clock went backwards in every one (was it being stepped by NTP/PTP?)"
            )
        )
    best = min(valid, key=lambda s: s.host_after_ns - s.host_before_ns)
    window = best.host_after_ns - best.host_before_ns
    midpoint = best.host_before_ns + window // 2
    return ClockOffset(
        realtime_minus_globaltimer_ns=midpoint - best.gpu_ns,
        uncertainty_ns=(window + 1) // 2,
        samples=len(samples),
        globaltimer_ns=best.gpu_ns,
    )


def interpolate(offsets, globaltimer_ns: int) -> ClockOffset | None:
    """The offset at `globaltimer_ns` from measurements taken at other
    times (start, flushes, finalize): linear between the two around it (the
    clocks drift apart at a steady rate over minutes), the nearest one
    outside them; None without any."""
    offsets = sorted(offsets, key=lambda o: o.globaltimer_ns)
    if not offsets:
        return None
    before = [o for o in offsets if o.globaltimer_ns <= globaltimer_ns]
    after = [o for o in offsets if o.globaltimer_ns > globaltimer_ns]
    if not before or not after:
        return before[-1] if before else after[0]
    a, b = before[-1], after[0]
    fraction = (globaltimer_ns - a.globaltimer_ns) / (b.globaltimer_ns - a.globaltimer_ns)
    value = a.realtime_minus_globaltimer_ns + round(
        fraction * (b.realtime_minus_globaltimer_ns - a.realtime_minus_globaltimer_ns)
    )
    return ClockOffset(
        realtime_minus_globaltimer_ns=value,
        uncertainty_ns=max(a.uncertainty_ns, b.uncertainty_ns),
        samples=a.samples + b.samples,
        globaltimer_ns=globaltimer_ns,
    )


def drift(first: ClockOffset, last: ClockOffset) -> dict:
    """How far the offset moved between two measurements: ns, over how long,
    and as parts per million of the elapsed GPU time."""
    elapsed = last.globaltimer_ns - first.globaltimer_ns
    moved = last.realtime_minus_globaltimer_ns - first.realtime_minus_globaltimer_ns
    return {
        "drift_ns": int(moved),
        "over_ns": int(elapsed),
        "drift_ppm": moved / elapsed * 1e6 if elapsed > 0 else 0.0,
        "uncertainty_ns": int(first.uncertainty_ns + last.uncertainty_ns),
    }


# -- the GPU part ----------------------------------------------------------------


@triton.jit
def _read_globaltimer(out_address):
    # The address of the profiler's own memory (device_memory), not a tensor.
    now = tl.inline_asm_elementwise(
        "mov.u64 $0, %globaltimer;", "=l,r", [tl.full([], 0, tl.int32)], dtype=tl.int64, is_pure=False, pack=1
    )
    tl.store(out_address.to(tl.pointer_type(tl.int64)), now)


@triton.jit
def _read_memrealtime(out_address):
    # AMD: the 100 MHz constant-rate counter the records' global stamps use.
    now = tl.inline_asm_elementwise(
        "s_memrealtime $0\ns_waitcnt lgkmcnt(0)",
        "=s,v",
        [tl.full([], 0, tl.int32)],
        dtype=tl.int64,
        is_pure=False,
        pack=1,
    )
    tl.store(out_address.to(tl.pointer_type(tl.int64)), now)


#: Where each device's clock reads go: 8 bytes of the profiler's memory.
_OUT: dict = {}


def measure(torch, device: int, samples: int = SAMPLES) -> ClockOffset | None:
    """Measures the offset of GPU `device`. None when PyTorch has not set
    up that GPU in this process (so that measuring never creates a CUDA
    context on a GPU the program does not use)."""
    cuda = getattr(torch, "cuda", None)
    if cuda is None or not callable(getattr(cuda, "is_initialized", None)) or not cuda.is_initialized():
        return None
    hip = bool(getattr(getattr(torch, "version", None), "hip", None))
    kernel, ns_per_tick = (_read_memrealtime, 10) if hip else (_read_globaltimer, 1)
    with cuda.device(device), instrumentation_state.own_kernels():
        memory = device_memory.memory()
        key, _ = memory.runtime.current_device()
        out = _OUT.get(key)
        if out is None:
            out = _OUT[key] = memory.allocate(8)

        def read() -> ClockSample:
            before = time.time_ns()
            kernel[(1,)](out.pointer)
            cuda.synchronize(device)
            after = time.time_ns()
            return ClockSample(before, int(out.read(0, 8).view("<i8")[0]) * ns_per_tick, after)

        read()  # compiles and loads the kernel; its window is not representative
        return estimate(read() for _ in range(samples))
