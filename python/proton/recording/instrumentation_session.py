"""A profiling session: installs the stage hook, gives every instrumented
launch its profile_scratch buffer, a slice of the session's arena of device
memory of the profiler's own (arena.py, device/memory.py: never the
program's allocator), keeps the raw buffers on the device (no allocation,
synchronization, copy or decoding per launch), and at finalize copies them
back, decodes them and writes the outputs.

Every launch is kept, in order, within `max_buffer_bytes` of buffers in
all; do_bench repetitions keep the last launch of each kernel variant, and
`max_launches_per_kernel=N` the last N everywhere (launches.py says the
policy). Every launch runs instrumented; the slices of launches not kept go
back to the arena, and the report counts those launches per kernel and
reason. Launches captured in CUDA graphs record their last replay
(cuda_graphs.py). After the session, kernels it compiled that are launched
again (libraries keep compiled kernels) write into memory nobody reads.
Compiled variants of one kernel (other constexprs, num_warps, ...) are
reported as distinct kernels.

Long runs (periodic_flushing=True, Triton's Proton's mode of that name):
proton.data.advance_phase(session) ends a phase; its kept launches are
decoded, written as `<name>.part_<phase>.<ext>` and released, so memory stays
within one phase's buffers. finalize writes the last phase. docs/long-runs.md.

At start, at each flush and at finalize the session measures, on each GPU
its launches used, the offset between the GPU's global timer and the host's
real-time clock (clock_sync); each trace gets the offset interpolated to its
launches, so that ranks on several GPUs and machines can be aligned on host
time.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from dataclasses import dataclass, field

import triton
import triton.knobs
from triton.runtime import _allocation

from . import arena as arenas, calibration, clock_sync, cuda_graphs, decode
from ..compiling import inductor
from ..device import memory as device_memory
from . import launches as retention
from ..compiling import instrumentation_state, stage_hook
from .benchmark_loops import BenchmarkLoops
from .flush_policy import FlushPolicy
from .launches import KeptLaunch
from ..writers import chrome_trace as trace_chrome, perfetto_trace, hatchet_tree
from .buffer import BufferFormatError
from ..contract import kernel_metadata
from ..contract.errors import ProfilerError
from ..contract.events import LaunchEvents
from ..contract.kernel_metadata import BufferLayout
from ..session.modes import OpMeasure, parse
from ..session.options import SessionOptions
from ..writers.files import write_or_fall_back
from ..session.paths import distributed_rank, output_path
from ..writers.progress import Progress
from ..session.interface import ProfilerSession, Report

OUTPUT_SUFFIXES = {"chrome_trace": ".chrome_trace", "pftrace": ".pftrace", "tree": ".hatchet"}
#: From this many events, finalize says which file it is writing (on a terminal).
BIG_SESSION_EVENTS = 1_000_000


@dataclass
class SessionReport(Report):
    """What an instrumentation session's finalize read and wrote."""

    events: int = 0
    launches_kept: int = 0
    launches_skipped: int = 0
    dropped_events: int = 0  # records lost to full buffers
    unmatched_records: int = 0
    record_cost_cycles: float = 0.0  # time_shift's cost per record
    per_kernel: dict = field(default_factory=dict)  # kernel -> counts
    errors: list = field(default_factory=list)  # launches that could not be decoded
    clock: dict = field(default_factory=dict)  # GPU -> host-clock offsets measured, drift
    graphs: list = field(default_factory=list)  # what each CUDA-graph-captured launch recorded
    unrecorded: dict = field(default_factory=dict)  # kernel launched without records -> launches, reason
    buffers: dict = field(default_factory=dict)  # kernel -> which buffer its records went to, and why
    unlaunched_buffers: int = 0  # buffers handed out whose launch hook never came

    def summary(self) -> str:
        lines = [f"proton: session {self.name!r}: {self.events} scope events from {self.launches_kept} launches"]
        if self.launches_skipped:
            lines[0] += f" ({self.launches_skipped} launches not kept: see below)"
        for kernel, info in self.per_kernel.items():
            line = f"  {kernel}: {info['kept']} launches kept, {info['events']} events"
            if kernel in self.buffers:
                line += f" ({self.buffers[kernel]})"
            reasons = info.get("not_kept") or {}
            if reasons:
                line += "; not kept: " + ", ".join(
                    f"{count} {retention.NOT_KEPT_REASONS.get(reason, reason)}" for reason, count in reasons.items()
                )
            if info["dropped"]:
                line += (
                    f", {info['dropped']} records lost to full buffers in {info['lossy_warps']} warps "
                    "(raise buffer_size)"
                )
            lines.append(line)
        lines += [f"  CUDA graph: {g}" for g in self.graphs]
        if self.unlaunched_buffers:
            lines.append(
                f"  {self.unlaunched_buffers} profile buffers were handed out to launches that did not reach "
                "Triton's launch hook (a launch that failed, or a launcher that calls no hooks): nothing was kept"
            )
        for kernel, info in self.unrecorded.items():
            count = info["launches"]
            lines.append(f"  no records: {kernel} ({count} launch{'es' if count != 1 else ''}): {info['reason']}")
        for device, info in self.clock.items():
            last = info["offsets"][-1]
            line = (
                f"  host clock of GPU {device}: realtime - globaltimer = "
                f"{last['realtime_minus_globaltimer_ns']} ns +- {last['uncertainty_ns']} ns"
            )
            if "drift" in info:
                d = info["drift"]
                line += (
                    f"; drifted {d['drift_ns']} ns (+- {d['uncertainty_ns']}) over {d['over_ns'] / 1e9:.1f} s "
                    f"({d['drift_ppm']:.2f} ppm)"
                )
            lines.append(line)
        lines += [f"  warning: {w}" for w in self.warnings]
        lines += [f"  error: {e}" for e in self.errors]
        return "\n".join(lines + self.files_summary())

    def add(self, part: "SessionReport") -> None:
        """Adds a part's counts to these totals; its files become the latest."""
        for key in (
            "events",
            "launches_kept",
            "launches_skipped",
            "dropped_events",
            "unmatched_records",
            "unlaunched_buffers",
        ):
            setattr(self, key, getattr(self, key) + getattr(part, key))
        self.record_cost_cycles = part.record_cost_cycles or self.record_cost_cycles
        for kernel, info in part.per_kernel.items():
            total = self.per_kernel.setdefault(kernel, _kernel_counts())
            for key, value in info.items():
                if key == "not_kept":
                    for reason, count in value.items():
                        total[key][reason] = total[key].get(reason, 0) + count
                else:
                    total[key] += value
        self.graphs += part.graphs
        self.buffers.update(part.buffers)
        self.errors += part.errors
        self.warnings += [w for w in part.warnings if w not in self.warnings]
        if part.files:
            self.files = part.files


class InstrumentationSession(ProfilerSession):
    reads_gpu_buffers_at_finalize = True

    def __init__(self, options: SessionOptions):
        """A session of `options` (start has checked them for
        instrumentation: SessionOptions.check_instrumentation)."""
        mode = parse(options.mode)
        self.options = options
        self.flush_policy = FlushPolicy.parse(options.periodic_flushing)
        compress_pftrace = options.compress_pftrace
        if not isinstance(compress_pftrace, bool):
            raise ProfilerError(f"compress_pftrace is True or False, got {compress_pftrace!r}")
        self.compress_pftrace = compress_pftrace
        # hook="triton": a kernel's launch_metadata "name" names its launches, as in Triton's Proton.
        self.launch_metadata_names = options.hook == "triton"
        self._host = _host_runtime()
        max_launches_per_kernel, max_buffer_bytes = options.max_launches_per_kernel, options.max_buffer_bytes
        if max_launches_per_kernel is not None and (
            not isinstance(max_launches_per_kernel, int)
            or isinstance(max_launches_per_kernel, bool)
            or max_launches_per_kernel < 0
        ):
            raise ProfilerError(
                f"max_launches_per_kernel must be None (keep every launch) or an integer >= 0, got "
                f"{max_launches_per_kernel!r}"
            )
        if not isinstance(max_buffer_bytes, int) or max_buffer_bytes < 0:
            raise ProfilerError(f"max_buffer_bytes must be a number of bytes >= 0, got {max_buffer_bytes!r}")
        self.name = name = options.name
        self.mode = mode
        self.max_launches = max_launches_per_kernel
        self.max_buffer_bytes = max_buffer_bytes
        outputs = options.outputs
        if outputs is None and options.data is not None:
            outputs = ("tree",) if options.data == "tree" else ("chrome_trace", "pftrace")
        default_outputs = ("tree",) if isinstance(mode, OpMeasure) else ("chrome_trace", "pftrace", "tree")
        if isinstance(outputs, str):  # outputs="tree": one output, not the letters of one
            outputs = (outputs,)
        self.outputs = tuple(outputs) if outputs is not None else default_outputs
        for kind in self.outputs:
            if kind not in OUTPUT_SUFFIXES:
                raise ProfilerError(f"unknown output {kind!r}; valid: {', '.join(OUTPUT_SUFFIXES)}")
        self.quiet = options.quiet
        self.periodic_flushing = self.flush_policy.phases
        self._phase_began = time.monotonic()
        self.phase = 0  # advance_phase counts up; parts are named by it
        self.report = SessionReport(name)  # totals over the parts written so far
        self.clock_offsets: dict[int, list] = {}  # GPU -> clock_sync.ClockOffset, oldest first
        self._clock_warned = False
        self._rank: int | None = None  # read once, when the first file is written
        self._rank_read = False
        self._record_cost: float | None = None
        self.hook = stage_hook.StageHook(mode.pipeline_options(), label=str(mode))
        self.retention = retention.Retention(max_launches_per_kernel)
        self.arena: arenas.Arena | None = None  # made at the first instrumented launch
        self.graphs = cuda_graphs.GraphTracker()
        self.benchmarks = BenchmarkLoops()
        self.inductor = inductor.InductorSettings()
        self.captured: list[KeptLaunch] = []  # launches captured in CUDA graphs
        self.launch_counts: dict[tuple, int] = {}  # (kernel, variant) -> launches so far
        self._launches = 0  # all launches of instrumented kernels so far
        self._variants: dict = {}  # CUfunction handle -> (kernel, variant description)
        self._unrecorded: dict[str, int] = {}  # kernel -> launches without a profile buffer
        self.active = False
        self._local = threading.local()  # .pending: the buffer handed out for the launch about to be made
        self._unlaunched = 0  # buffers handed out whose launch hook never came
        self._closed = False  # finalize stopped recording (its writing may be tried again)
        self._previous_allocator = None
        self._torch = None  # imported at the first instrumented launch

    # -- lifecycle -----------------------------------------------------------
    def start(self) -> None:
        # Before anything is installed: the clock kernel is compiled plain.
        self._measure_clock(sys.modules.get("torch"), devices=())
        self._previous_allocator = _allocation._profile_allocator.get()
        _allocation.set_profile_allocator(self._allocate)
        triton.knobs.runtime.launch_enter_hook.add(self._on_launch)
        self.benchmarks.install()
        torch = sys.modules.get("torch")
        if torch is not None:
            self.graphs.install(torch)
        self.activate()

    def activate(self) -> None:
        if not self.active:
            self.hook.install()
            self.inductor.apply()
            self.active = True

    def deactivate(self) -> None:
        # Kernels compiled while active keep writing records; their buffers
        # are still handed out, but not kept.
        if self.active:
            self.hook.uninstall()
            self.inductor.restore()
            self.active = False

    def choose_output(self, kind: str) -> None:
        if kind == "tree_msgpack":
            raise ProfilerError("output_format='hatchet_msgpack' applies to host sessions (cupti, roctracer, ...)")
        self.outputs = (kind,)

    def finalize(self) -> SessionReport:
        """Stops recording (once) and writes the kept launches. If nothing
        could be written, raises ProfilerError and keeps them: finalize may
        be called again."""
        if not self._closed:
            if _session is self:
                close_instrumentation()  # another may start while this one writes
            self.deactivate()
            triton.knobs.runtime.launch_enter_hook.remove(self._on_launch)
            self.benchmarks.uninstall()
            previous = self._previous_allocator
            # Libraries keep compiled kernels and launch them after the session:
            # they still get memory to write into, never Triton's refusal.
            _allocation.set_profile_allocator(
                late_launch_sink if previous is None or isinstance(previous, _allocation.NullAllocator) else previous
            )
            self.graphs.uninstall()
            self.report.unrecorded = self._unrecorded_kernels()  # before the tree is written: it lists them
            self._closed = True
        self._flush(final=True)
        self._final_notes()
        report = self.report
        for device, offsets in self.clock_offsets.items():
            report.clock[device] = {
                "offsets": [{**o.host_clock(), "globaltimer_ns": o.globaltimer_ns} for o in offsets]
            }
            if len(offsets) > 1:
                report.clock[device]["drift"] = clock_sync.drift(offsets[0], offsets[-1])
        if not self.quiet:
            print(report.summary(), file=sys.stderr)
        return report

    # -- phases (periodic flushing) ------------------------------------------
    def advance_phase(self) -> int:
        """Ends the current phase and returns the next one's number. With
        periodic flushing the phase's kept launches are written now as part
        <phase> and released (this waits for the GPU); if writing fails they
        stay kept, the phase does not advance, and ProfilerError says why."""
        if self.periodic_flushing:
            self._flush(final=False)
        self.phase += 1
        self._phase_began = time.monotonic()
        return self.phase

    def is_phase_complete(self, phase: int) -> bool:
        """Whether `phase` is written (or had nothing to write)."""
        return self.periodic_flushing and 0 <= phase < self.phase

    def phase_tree(self, phase: int) -> list:
        raise self._no_phase_data()

    def clear(self, phase: int, up_to: bool = False) -> None:
        raise self._no_phase_data()

    def _no_phase_data(self) -> ProfilerError:
        return ProfilerError(
            f"session {self.name!r} is an instrumentation session: proton.data.get, get_msgpack and clear "
            "apply to host sessions here (its data is decoded at finalize or advance_phase)"
        )

    def _load_torch(self):
        self._torch = _torch()
        return self._torch

    # -- per launch (hot path) -----------------------------------------------
    def _allocate(self, size, alignment, stream):
        """Triton's profile allocator: a slice of the arena, of memory for
        the life of a CUDA graph during capture, or (past the budget) of a
        sink nobody reads."""
        torch = self._torch or self._load_torch()
        self.graphs.install(torch)  # at once if torch was imported after the session started
        local = self._local
        if getattr(local, "pending", None) is not None:
            self._unlaunched_buffer(local.pending)
        capturing = getattr(torch.cuda, "is_current_stream_capturing", None)
        if capturing is not None and capturing():
            piece, where = graph_memory(size), "graph"
        else:
            if self.flush_policy.automatic and self.flush_policy.due(self._phase_began, self.kept_bytes):
                self.advance_phase()  # before this launch takes a slice: the part holds the launches before it
            if self.arena is None:
                self.arena = arenas.Arena(device_memory.memory(), self.max_buffer_bytes)
            piece, where = self.arena.take(size, stream), "arena"
            if piece is None:
                piece, where = self.arena.sink(size), "sink"
        local.pending = (piece, stream, where)
        return piece

    def _unlaunched_buffer(self, pending) -> None:
        """A buffer handed out whose launch never reached the launch hook:
        nothing of it is kept (an arena slice is free again)."""
        piece, stream, where = pending
        self._unlaunched += 1
        if where == "arena":
            self.arena.give_back(piece, stream)

    def _on_launch(self, launch_metadata) -> None:
        local = self._local
        pending = getattr(local, "pending", None)
        local.pending = None
        data = getattr(launch_metadata, "data", None) or {}
        name = data.get("name", "kernel")
        handle = data.get("function")
        kernel_id = kernel_metadata.LAUNCHED.get(handle) if handle is not None else None
        if pending is not None and handle is not None and kernel_id is None:
            # This kernel records nothing: the buffer was another launch's, which failed.
            self._unlaunched_buffer(pending)
            pending = None
        if pending is None:  # a kernel without profile_scratch: it records nothing
            if self.active and not instrumentation_state.running_own_kernels():
                self._unrecorded[name] = self._unrecorded.get(name, 0) + 1
            return
        piece, stream, where = pending
        if self.launch_metadata_names:
            name = _launch_metadata_name(launch_metadata, name)
        key = self._variants.get(handle)
        if key is None:
            kernel = retention.launching_kernel()
            key = (name, retention.describe_variant(kernel) if kernel is not None else "")
            if handle is not None:
                self._variants[handle] = key
        index = self.launch_counts.get(key, 0)
        self.launch_counts[key] = index + 1
        launch = KeptLaunch(
            name,
            index,
            piece,
            self._launches,
            variant=key[1],
            call_stack=self._host_scopes(),
            kernel_id=kernel_id,
            stream=stream,
        )
        self._launches += 1
        if where == "graph":
            # Replays write this memory for as long as the graph lives (cuda_graphs.py).
            launch.graph = self.graphs.adopt(piece)
            self.captured.append(launch)
        elif where == "sink":
            self.retention.count(key, "budget")
        else:
            benchmark = self.retention.max_launches is None and self.benchmarks.inside()
            released = self.retention.offer(key, launch, self.active, benchmark)
            if released is not None:
                self.arena.give_back(released.buffer, released.stream)

    def _host_scopes(self) -> tuple:
        """The host scopes (proton.scope) open on this thread, outermost first."""
        host = self._host
        if host is None or host.scope_depth() == 0:
            return ()
        return tuple(host.scope_stack())

    @property
    def kept_bytes(self) -> int:
        return self.arena.kept_bytes if self.arena is not None else 0

    @property
    def kept(self) -> list[KeptLaunch]:
        """The kept launches of the current phase, in launch order (captured
        ones that were replayed included)."""
        replayed = [k for k in self.captured if k.graph and k.graph.replays > 0]
        return sorted(self.retention.kept() + replayed, key=lambda k: k.sequence)

    # -- finalize ------------------------------------------------------------
    def _flush(self, final: bool) -> None:
        """Decodes the kept launches and writes them (as part <phase> with
        periodic flushing), then releases their buffers. A phase that kept
        nothing writes nothing, except that a session always leaves files."""
        kept_launches = self.kept
        self._synchronize(kept_launches)
        writes = bool(kept_launches) or (final and not self.report.files)
        devices = sorted({k.buffer.device for k in kept_launches})
        if kept_launches:
            self._measure_clock(self._torch, devices)
        part = SessionReport(self.name)
        launches = self._decode(kept_launches, part)
        if writes:
            number = self.phase if self.periodic_flushing else None
            try:
                part.files = write_outputs(
                    self.name,
                    launches,
                    self.outputs,
                    _gpu_name(self._torch),
                    *_device(self._torch),
                    warnings=part.warnings,
                    rank=self._output_rank(),
                    part=number,
                    host_clock=self._host_clock(launches, devices, part.warnings),
                    compress_pftrace=self.compress_pftrace,
                    unrecorded=self.report.unrecorded if final else None,
                )
            except Exception as error:
                what = "the outputs" if number is None else f"part {number}"
                keep = (
                    ""
                    if final
                    else (
                        f"; its {len(kept_launches)} launches stay kept and are written with the next "
                        "flush or at finalize"
                    )
                )
                raise ProfilerError(f"session {self.name!r}: could not write {what} ({error}){keep}") from error
            if number is not None:
                self.report.parts.append(
                    {"phase": number, "files": part.files, "events": part.events, "launches_kept": part.launches_kept}
                )
                if not final and not self.quiet:
                    print(
                        f"proton: session {self.name!r} phase {number}: {part.events} scope events from "
                        f"{part.launches_kept} launches, wrote " + ", ".join(part.files.values()),
                        file=sys.stderr,
                    )
        self.retention.clear()
        if self.arena is not None:  # the GPU is done with it (synchronized above)
            self.arena.release() if final else self.arena.reset()
        for graph in {id(k.graph): k.graph for k in self.captured if k.graph}.values():
            graph.replays = 0  # recorded: later replays are the next phase's
        part.unlaunched_buffers, self._unlaunched = self._unlaunched, 0
        self.report.add(part)

    def _synchronize(self, kept_launches) -> None:
        """Waits for every GPU the session's memory is on."""
        keys = {k.buffer.allocation.key for k in kept_launches}
        if self.arena is not None:
            keys |= self.arena.device_keys()
        if keys:
            device_memory.memory().synchronize(keys)

    def _decode(self, kept_launches: list[KeptLaunch], report: SessionReport) -> list[LaunchEvents]:
        """Decodes the launches, counting into `report`."""
        names = self._kernel_names()
        report.launches_kept = len(kept_launches)
        report.launches_skipped = self.retention.not_kept_count()
        if self.mode.time_shift and kept_launches and self._record_cost is None:
            self._record_cost = calibration.record_cost_cycles(self.mode)
        cost = report.record_cost_cycles = self._record_cost or 0.0
        for key, reasons in self.retention.not_kept.items():
            info = report.per_kernel.setdefault(names[key], _kernel_counts())
            info["skipped"] += sum(reasons.values())
            for reason, count in reasons.items():
                info["not_kept"][reason] = info["not_kept"].get(reason, 0) + count
        launches: list[LaunchEvents] = []
        progress = Progress(f"proton: session {self.name!r}: decoding", len(kept_launches), "launches")
        decoded_events = 0
        for done, kept in enumerate(kept_launches):
            progress.update(done, f"{decoded_events:,} events")
            kernel = names[(kept.kernel, kept.variant)]
            info = report.per_kernel.setdefault(kernel, _kernel_counts())
            info["kept"] += 1
            if kept.graph:
                report.graphs.append(
                    f"{kernel} launch {kept.index}, captured in graph {kept.graph.number}: "
                    f"{kept.graph.replays} replay{'s' if kept.graph.replays != 1 else ''}; the last is recorded"
                    + (" (each replay overwrites the one before)" if kept.graph.replays > 1 else "")
                )
            try:
                if not arenas.guard_intact(kept.buffer):
                    raise ProfilerError(
                        "the memory right after its profile buffer was overwritten (a kernel wrote out of "
                        "bounds there); its records are not trusted"
                    )
                data = kept.buffer.read()
                meta = kernel_metadata.KERNELS.get(kept.kernel_id) or kernel_metadata.metadata_for_buffer(data, kernel)
                if info["kept"] == 1:
                    report.warnings += meta.warnings
                    asked = self.mode.pipeline_options().buffer_type
                    report.buffers[kernel] = buffer_description(meta.layout, asked)
                events = decode.decode(
                    data,
                    meta,
                    data.nbytes // meta.layout.bytes_per_cta,
                    kernel=kernel,
                    launch=kept.index,
                    record_cost_cycles=cost,
                )
            except (BufferFormatError, ProfilerError) as error:
                report.errors.append(f"{kernel} launch {kept.index}: {error}")
                continue
            events.call_stack = kept.call_stack
            launches.append(events)
            decoded_events += events.num_events
            info["events"] += events.num_events
            info["dropped"] += int(events.dropped.sum())
            info["lossy_warps"] += int((events.dropped > 0).sum())
            report.unmatched_records += events.unmatched
            report.warnings += events.warnings
        progress.close()
        report.events = sum(ev.num_events for ev in launches)
        report.dropped_events = sum(info["dropped"] for info in report.per_kernel.values())
        if report.unmatched_records:
            report.warnings.append(
                f"{report.unmatched_records} records had no partner (a scope cut by a full "
                "buffer, or a warp that returned inside a scope)"
            )
        return launches

    def _kernel_names(self) -> dict[tuple, str]:
        """(kernel, variant) -> the name the outputs use (launches.variant_names)."""
        variants: dict[str, set] = {}
        for kernel, variant in self.launch_counts:  # every variant seen has launched
            variants.setdefault(kernel, set()).add(variant)
        return retention.variant_names(variants)

    def _unrecorded_kernels(self) -> dict:
        """Kernels launched while the session was active without a profile
        buffer: launches, the reason, and the reason in a few words."""
        compiled_plain = self.hook.compiled_without_records | stage_hook.LOADED_WITHOUT_RECORDS
        out = {}
        for kernel, count in self._unrecorded.items():
            if kernel in self.hook.override_variant_missing:
                reason, short = (
                    "the override directory holds TTGIR files of other compiled variants of it only (other "
                    "num_warps, num_stages, ...): dump again with proton-dump-ttgir running the same program",
                    "no override file for this variant",
                )
            elif kernel in compiled_plain:
                reason, short = (
                    "compiled by this session with nothing to record (no Proton markers, nothing the mode instruments)",
                    "nothing to record",
                )
            else:
                reason, short = (
                    "not compiled through this session: compiled before it started (Triton's caches) or in "
                    "another process (such as Inductor's compile workers), or with nothing to record",
                    "not compiled by the session",
                )
            out[kernel] = {"launches": count, "reason": reason, "short": short}
        return out

    def _final_notes(self) -> None:
        """What finalize says of launches that recorded nothing: captured
        launches never replayed, and kernels launched without records."""
        names = self._kernel_names()
        for kept in self.captured:
            kernel = names[(kept.kernel, kept.variant)]
            if kept.graph is None:
                self.report.graphs.append(
                    f"{kernel} launch {kept.index}: captured in a CUDA graph outside torch.cuda.CUDAGraph; its "
                    "replays cannot be counted, so nothing was decoded"
                )
            elif kept.graph.total_replays == 0:
                self.report.graphs.append(
                    f"{kernel} launch {kept.index}, captured in graph {kept.graph.number}: never replayed while "
                    "the session was open, no records"
                )
        if self.report.events == 0:
            self.report.warnings.append(
                "this session recorded no scope events"
                + (
                    f": {len(self._unrecorded)} kernels were launched without records (listed above)"
                    if self._unrecorded
                    else ": no instrumented kernel ran while it was active"
                )
            )

    # -- output names and host clock -----------------------------------------
    def _output_rank(self) -> int | None:
        # Read once, so that all parts of a session carry the same name.
        if not self._rank_read:
            self._rank, self._rank_read = distributed_rank(), True
        return self._rank

    def _measure_clock(self, torch, devices) -> None:
        """Adds a host-clock offset for each GPU in `devices` (none given:
        the current one, if PyTorch has set it up). Alignment is an extra:
        a failure is reported once and the traces are written without it."""
        if torch is None:
            return
        if not devices:
            initialized = getattr(getattr(torch, "cuda", None), "is_initialized", None)
            if not callable(initialized) or not initialized():
                return  # never create a CUDA context only to read a clock
            devices = [torch.cuda.current_device()]
        for device in devices:
            try:
                offset = clock_sync.measure(torch, device)
            except Exception as error:  # noqa: BLE001 - see above
                if not self._clock_warned:
                    self.report.warnings.append(
                        f"could not measure GPU {device}'s global timer against the host "
                        f"clock ({type(error).__name__}: {error}); traces are written without "
                        "host time"
                    )
                    self._clock_warned = True
                continue
            if offset is not None:
                self.clock_offsets.setdefault(device, []).append(offset)

    def _host_clock(self, launches, devices: list, warnings: list) -> dict | None:
        """The offset at these launches' time, interpolated between the
        measurements around them; None without measurements."""
        if not launches:
            return None
        device = devices[0] if devices else next(iter(self.clock_offsets), None)
        if len(devices) > 1:
            warnings.append(f"launches of GPUs {devices} in one trace: its host time uses GPU {device}'s clock offset")
        origins = [ev.origin_ns for ev in launches]
        offset = clock_sync.interpolate(self.clock_offsets.get(device, []), (min(origins) + max(origins)) // 2)
        return None if offset is None else offset.host_clock()


def buffer_description(layout: BufferLayout, asked: str) -> str:
    """Which buffer a kernel's records went to, and why (for the report)."""
    kind, segment = layout.buffer_type, layout.segment_bytes
    text = f"{kind} buffer, {segment} B ({layout.capacity} records) per warp"
    if kind == "global" and asked == "auto":
        text += ": the kernel leaves no shared memory to spare"
    elif kind == "registers":
        text += ": every record site is outside loops"
    return text


def _host_runtime():
    """proton._host (host scopes), or None in an install built without it."""
    try:
        from .. import _host
    except ImportError:
        return None
    return _host


def _launch_metadata_name(launch_metadata, name: str) -> str:
    """The "name" a kernel's launch_metadata function gives this launch
    (Triton's Proton's hook="triton"), else `name`."""
    if not getattr(launch_metadata, "extras", None):
        return name  # no launch_metadata function: nothing to evaluate
    named = launch_metadata.get().get("name")
    return named if isinstance(named, str) and named else name


def _kernel_counts() -> dict:
    """A kernel's counts in the report."""
    return {"kept": 0, "skipped": 0, "not_kept": {}, "events": 0, "dropped": 0, "lossy_warps": 0}


def write_outputs(
    name: str,
    launches,
    outputs,
    gpu_name: str = "GPU 0",
    devices: dict | None = None,
    device_type: str = "CUDA",
    warnings: list | None = None,
    *,
    rank: int | None = None,
    part: int | None = None,
    host_clock: dict | None = None,
    compress_pftrace: bool = False,
    unrecorded: dict | None = None,
) -> dict:
    """Writes each output as `<name>[.rank_<rank>][.part_<part>]<ext>`;
    host_clock (clock_sync.ClockOffset.host_clock()) goes into the .pftrace,
    compress_pftrace deflates its packets."""
    # Only with a host clock or compression: keeps the call valid for writers without the keywords.
    clock = {} if host_clock is None else {"host_clock": host_clock}
    if compress_pftrace:
        clock["compress"] = True
    writers = {
        "chrome_trace": lambda path: trace_chrome.write(path, launches, trace_chrome.session_origin(launches)),
        "pftrace": lambda path: perfetto_trace.write(path, launches, gpu_name, **clock),
        "tree": lambda path: hatchet_tree.write(path, launches, devices, device_type, unrecorded=unrecorded),
    }
    warnings = [] if warnings is None else warnings
    # Writing tens of millions of events takes seconds per file: say which, on a terminal.
    big = sum(ev.num_events for ev in launches) >= BIG_SESSION_EVENTS
    progress = Progress("proton: writing", len(outputs), "files")
    written = {}
    for done, kind in enumerate(outputs):
        path = output_path(name, OUTPUT_SUFFIXES[kind], rank=rank, part=part)
        progress.update(done, os.path.basename(path), now=big)
        written[kind] = write_or_fall_back(path, writers[kind], warnings)
    progress.close()
    return written


#: Memory of launches captured in CUDA graphs: a graph replays them whenever
#: the program wants, so it stays allocated until the process ends.
_GRAPH_MEMORY: list = []
#: Memory for instrumented kernels launched with no session open, one per
#: device (the largest so far; smaller ones stay allocated too).
_LATE_SINKS: dict = {}


def graph_memory(size: int):
    """A profile buffer for a launch being captured in a CUDA graph."""
    allocation = device_memory.memory().allocate(size + arenas.GUARD_BYTES)
    _GRAPH_MEMORY.append(allocation)
    return allocation.slice(0, size)


def late_launch_sink(size, alignment, stream):
    """The profile allocator once every session is finalized: kernels a
    session compiled, launched again later (libraries keep compiled
    kernels), write into memory of the profiler's that nobody reads, never
    into the program's; Triton's own allocator would refuse them."""
    memory = device_memory.memory()
    key, _device = memory.runtime.current_device()
    sinks = _LATE_SINKS.setdefault(key, [])
    if not sinks or sinks[-1].nbytes < size:
        sinks.append(memory.allocate(1 << max(12, (size - 1).bit_length())))
    return sinks[-1].slice(0, size)


def _device(torch) -> tuple[dict, str]:
    """The tree's device-info object and device type (empty without a GPU)."""
    if torch is None:
        return {}, "CUDA"
    from ..device import info as device_info

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
        raise ProfilerError(
            "the instrumentation runtime allocates profile buffers with PyTorch; install torch"
        ) from None
    if not torch.cuda.is_available():
        # torch.cuda is CUDA on NVIDIA and HIP on ROCm builds of PyTorch.
        runtime = (
            f"ROCm (HIP {torch.version.hip})"
            if getattr(torch.version, "hip", None)
            else f"CUDA {torch.version.cuda}"
            if getattr(torch.version, "cuda", None)
            else "no GPU runtime (CPU-only build)"
        )
        raise ProfilerError(
            f"an instrumented kernel was launched but PyTorch sees no GPU: this PyTorch is built "
            f"for {runtime} and torch.cuda.is_available() is False (no driver, no device, or "
            "CUDA_VISIBLE_DEVICES/HIP_VISIBLE_DEVICES hides them)"
        )
    return torch


_session: InstrumentationSession | None = None  # the open instrumentation session (one at a time)


def start_instrumentation(options: SessionOptions) -> InstrumentationSession:
    """Starts intra-kernel profiling: kernels compiled from now on record their scopes."""
    global _session
    if _session is not None:
        raise ProfilerError(
            f"instrumentation session {_session.name!r} is still open; finalize it first "
            "(one instrumentation session at a time)"
        )
    session = InstrumentationSession(options)
    session.start()
    _session = session
    return session


def close_instrumentation() -> None:
    global _session
    _session = None
