"""A profiling session: installs the stage hook, gives every instrumented
launch its profile_scratch buffer, keeps the raw buffers on the device (no
synchronization, copy or decoding per launch), and at finalize copies them
back, decodes them and writes the outputs.

The last `max_launches_per_kernel` launches of each kernel are kept (the
most recent ones: warm caches and clocks, as in a do_bench loop), within
`max_buffer_bytes` of buffers in all. Every launch runs instrumented; the
buffers of launches not kept go back to PyTorch's caching allocator, and the
report counts those launches.
"""

from __future__ import annotations

import collections
import os
import sys
from dataclasses import dataclass, field

import triton
import triton.knobs
from triton.runtime import _allocation

from . import calibration, decode, stage_hook
from ..writers import chrome_trace as trace_chrome, perfetto_trace, hatchet_tree
from .buffer import BufferFormatError
from ..errors import ProfilerError
from ..mode import Default, OpMeasure, parse
from ..paths import output_path, write_or_fall_back

OUTPUT_SUFFIXES = {"chrome_trace": ".chrome_trace", "pftrace": ".pftrace", "tree": ".hatchet"}


@dataclass
class KeptLaunch:
    kernel: str
    index: int          # this kernel's launch number in the session
    buffer: object      # device tensor (uint8), grid x bytes_per_cta


@dataclass
class SessionReport:
    """What finalize read and wrote."""

    name: str
    files: dict = field(default_factory=dict)          # output kind -> path
    events: int = 0
    launches_kept: int = 0
    launches_skipped: int = 0
    dropped_events: int = 0                             # records lost to full buffers
    unmatched_records: int = 0
    record_cost_cycles: float = 0.0                     # time_shift's cost per record
    per_kernel: dict = field(default_factory=dict)      # kernel -> counts
    errors: list = field(default_factory=list)          # launches that could not be decoded
    warnings: list = field(default_factory=list)

    def summary(self) -> str:
        lines = [f"proton: session {self.name!r}: {self.events} scope events from {self.launches_kept} launches"
                 + (f" (the last of each kernel; {self.launches_skipped} earlier launches not kept: raise "
                    "max_launches_per_kernel to keep more)"
                    if self.launches_skipped else "")]
        for kernel, info in self.per_kernel.items():
            line = f"  {kernel}: {info['kept']} launches kept, {info['skipped']} skipped, {info['events']} events"
            if info["dropped"]:
                line += (f", {info['dropped']} records lost to full buffers in {info['lossy_warps']} warps "
                         "(raise buffer_size)")
            lines.append(line)
        lines += [f"  warning: {w}" for w in self.warnings]
        lines += [f"  error: {e}" for e in self.errors]
        lines += [f"  wrote {path}" for path in self.files.values()]
        return "\n".join(lines)


class Session:

    def __init__(self, name: str, mode: Default, max_launches_per_kernel: int = 1,
                 max_buffer_bytes: int = 2 << 30, outputs=None, quiet: bool = False):
        if not isinstance(max_launches_per_kernel, int) or max_launches_per_kernel < 0:
            raise ProfilerError(f"max_launches_per_kernel must be an integer >= 0, got {max_launches_per_kernel!r}")
        if not isinstance(max_buffer_bytes, int) or max_buffer_bytes < 0:
            raise ProfilerError(f"max_buffer_bytes must be a number of bytes >= 0, got {max_buffer_bytes!r}")
        self.name = name
        self.mode = mode
        self.max_launches = max_launches_per_kernel
        self.max_buffer_bytes = max_buffer_bytes
        default_outputs = ("tree",) if isinstance(mode, OpMeasure) else ("chrome_trace", "pftrace", "tree")
        if isinstance(outputs, str):  # outputs="tree": one output, not the letters of one
            outputs = (outputs, )
        self.outputs = tuple(outputs) if outputs is not None else default_outputs
        for kind in self.outputs:
            if kind not in OUTPUT_SUFFIXES:
                raise ProfilerError(f"unknown output {kind!r}; valid: {', '.join(OUTPUT_SUFFIXES)}")
        self.quiet = quiet
        self.hook = stage_hook.InstrumentationHook(mode.pipeline_options(), label=str(mode))
        self.kept_per_kernel: dict[str, collections.deque] = {}
        self.launch_counts: dict[str, int] = {}
        self.skipped: dict[str, int] = {}
        self.kept_bytes = 0
        self.active = False
        self._pending = None
        self._previous_allocator = None
        self._torch = None  # imported at the first instrumented launch

    # -- lifecycle -----------------------------------------------------------
    def start(self) -> None:
        self._previous_allocator = _allocation._profile_allocator.get()
        _allocation.set_profile_allocator(self._allocate)
        triton.knobs.runtime.launch_enter_hook.add(self._on_launch)
        self.activate()

    def activate(self) -> None:
        if not self.active:
            self.hook.install()
            self.active = True

    def deactivate(self) -> None:
        # Kernels compiled while active keep writing records; their buffers
        # are still handed out, but not kept.
        if self.active:
            self.hook.uninstall()
            self.active = False

    def finalize(self) -> SessionReport:
        self.deactivate()
        if self.kept_per_kernel:
            self._torch.cuda.synchronize()
        triton.knobs.runtime.launch_enter_hook.remove(self._on_launch)
        _allocation.set_profile_allocator(self._previous_allocator)
        report = self._decode_and_write()
        if not self.quiet:
            print(report.summary(), file=sys.stderr)
        return report

    def _load_torch(self):
        self._torch = _torch()
        return self._torch

    # -- per launch (hot path) -----------------------------------------------
    def _allocate(self, size, alignment, stream):
        torch = self._torch or self._load_torch()
        buffer = torch.empty(size, dtype=torch.uint8, device="cuda")
        self._pending = buffer
        return buffer

    def _on_launch(self, launch_metadata) -> None:
        buffer, self._pending = self._pending, None
        if buffer is None:
            return  # a kernel without profile_scratch
        name = launch_metadata.data["name"] if launch_metadata is not None else "kernel"
        index = self.launch_counts.get(name, 0)
        self.launch_counts[name] = index + 1
        size = buffer.numel()
        kept = self.kept_per_kernel.get(name)
        if kept is None:
            kept = self.kept_per_kernel[name] = collections.deque()
        if self.active and self.max_launches and self.kept_bytes + size <= self.max_buffer_bytes:
            kept.append(KeptLaunch(name, index, buffer))
            self.kept_bytes += size
            if len(kept) > self.max_launches:
                # Its kernel ran before this one on the stream: the memory
                # is safe to reuse.
                self.kept_bytes -= kept.popleft().buffer.numel()
                self.skipped[name] = self.skipped.get(name, 0) + 1
        else:
            self.skipped[name] = self.skipped.get(name, 0) + 1

    # -- finalize ------------------------------------------------------------
    @property
    def kept(self) -> list[KeptLaunch]:
        return [launch for kept in self.kept_per_kernel.values() for launch in kept]

    def _decode_and_write(self) -> SessionReport:
        report = SessionReport(self.name)
        kept_launches = self.kept
        report.launches_kept = len(kept_launches)
        report.launches_skipped = sum(self.skipped.values())
        cost = 0.0
        if self.mode.time_shift and kept_launches:
            cost = calibration.record_cost_cycles(self.mode)
        report.record_cost_cycles = cost
        launches: list[decode.LaunchEvents] = []
        for kept in kept_launches:
            info = report.per_kernel.setdefault(kept.kernel, {"kept": 0, "skipped": self.skipped.get(kept.kernel, 0),
                                                               "events": 0, "dropped": 0, "lossy_warps": 0})
            info["kept"] += 1
            try:
                data = kept.buffer.cpu().numpy()
                meta = stage_hook.metadata_for_buffer(data, kept.kernel)
                if info["kept"] == 1:
                    report.warnings += meta.get("warnings", [])
                events = decode.decode(data, meta, data.nbytes // meta["layout"]["bytes_per_cta"],
                                       kernel=kept.kernel, launch=kept.index, record_cost_cycles=cost)
            except (BufferFormatError, ProfilerError) as error:
                report.errors.append(f"{kept.kernel} launch {kept.index}: {error}")
                continue
            launches.append(events)
            info["events"] += events.num_events
            info["dropped"] += int(events.dropped.sum())
            info["lossy_warps"] += int((events.dropped > 0).sum())
            report.unmatched_records += events.unmatched
            report.warnings += events.warnings
        for kernel, count in self.skipped.items():
            report.per_kernel.setdefault(kernel, {"kept": 0, "skipped": count, "events": 0, "dropped": 0,
                                                  "lossy_warps": 0})
        report.events = sum(ev.num_events for ev in launches)
        report.dropped_events = sum(info["dropped"] for info in report.per_kernel.values())
        if report.unmatched_records:
            report.warnings.append(f"{report.unmatched_records} records had no partner (a scope cut by a full "
                                   "buffer, or a warp that returned inside a scope)")
        self.kept_per_kernel.clear()
        # A session that recorded nothing still writes its (empty) outputs,
        # as in Triton's Proton: a script can always find its files.
        report.files = write_outputs(self.name, launches, self.outputs, _gpu_name(self._torch), *_device(self._torch),
                                     warnings=report.warnings)
        return report


def write_outputs(name: str, launches, outputs, gpu_name: str = "GPU 0", devices: dict | None = None,
                  device_type: str = "CUDA", warnings: list | None = None) -> dict:
    writers = {
        "chrome_trace": lambda path: trace_chrome.write(path, launches, trace_chrome.session_origin(launches)),
        "pftrace": lambda path: perfetto_trace.write(path, launches, gpu_name),
        "tree": lambda path: hatchet_tree.write(path, launches, devices, device_type),
    }
    warnings = [] if warnings is None else warnings
    return {kind: write_or_fall_back(output_path(name, OUTPUT_SUFFIXES[kind]), writers[kind], warnings)
            for kind in outputs}


def _device(torch) -> tuple[dict, str]:
    """The tree's device-info object and device type (empty without a GPU)."""
    if torch is None:
        return {}, "CUDA"
    from ..host import device_info
    device_type = "HIP" if getattr(getattr(torch, "version", None), "hip", None) else "CUDA"
    try:
        devices = device_info.describe([torch.cuda.current_device()]) if device_type == "CUDA" else {}
    except Exception:  # noqa: BLE001 - device info is descriptive only
        devices = {}
    return devices, device_type


def _gpu_name(torch) -> str:
    try:
        return f"GPU {torch.cuda.current_device()} ({torch.cuda.get_device_name()})"
    except Exception:  # noqa: BLE001 - a name is cosmetic
        return "GPU 0"


def _torch():
    try:
        import torch
    except ImportError:
        raise ProfilerError("the instrumentation runtime allocates profile buffers with PyTorch; "
                            "install torch") from None
    if not torch.cuda.is_available():
        # torch.cuda is CUDA on NVIDIA and HIP on ROCm builds of PyTorch.
        runtime = f"ROCm (HIP {torch.version.hip})" if getattr(torch.version, "hip", None) else \
            f"CUDA {torch.version.cuda}" if getattr(torch.version, "cuda", None) else "no GPU runtime (CPU-only build)"
        raise ProfilerError(f"an instrumented kernel was launched but PyTorch sees no GPU: this PyTorch is built "
                            f"for {runtime} and torch.cuda.is_available() is False (no driver, no device, or "
                            "CUDA_VISIBLE_DEVICES/HIP_VISIBLE_DEVICES hides them)")
    return torch


_session: Session | None = None   # the open instrumentation session (one at a time)


def start_instrumentation(name: str, *, mode=None, max_launches_per_kernel: int = 1,
                          max_buffer_bytes: int = 2 << 30, outputs=None, quiet: bool = False) -> Session:
    """Starts intra-kernel profiling: kernels compiled from now on record their scopes."""
    global _session
    if _session is not None:
        raise ProfilerError(f"instrumentation session {_session.name!r} is still open; finalize it first "
                            "(one instrumentation session at a time)")
    session = Session(name, parse(mode), max_launches_per_kernel, max_buffer_bytes, outputs, quiet)
    session.start()
    _session = session
    return session


def close_instrumentation() -> None:
    global _session
    _session = None
