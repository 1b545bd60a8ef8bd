"""What an instrumentation session writes, at finalize or at each phase
with periodic flushing: the kept launches copied back, decoded with their
kernels' metadata and written (chrome_trace, pftrace, tree), each trace with
the host-clock offset measured around its launches (clock_sync); and the
report of what was kept, lost and written (SessionReport)."""

from __future__ import annotations

import os
import sys
import threading
from dataclasses import dataclass, field

from ..contract import kernel_metadata
from ..contract.errors import ProfilerError
from ..contract.events import LaunchEvents
from ..contract.kernel_metadata import BufferLayout
from ..device import memory as device_memory
from ..session.interface import Report
from ..session.paths import distributed_rank, output_path
from ..writers import chrome_trace as trace_chrome, hatchet_tree, launch_windows, perfetto_trace
from ..writers.files import threads_allowed, write_or_fall_back
from ..writers.launch_windows import LaunchFacts
from ..writers.progress import Progress
from . import arena as arenas, calibration, clock_sync, kept_decoding
from . import launches as retention
from .buffer import BufferFormatError
from .launches import KeptLaunch

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


class SessionOutputs:
    """InstrumentationSession's decoding and writing of its kept launches
    (its state is made in InstrumentationSession.__init__)."""

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
            self._forget_arena()
            self.arena.release() if final else self.arena.reset()
        for graph in {id(k.graph): k.graph for k in self.captured if k.graph}.values():
            graph.replays = graph.copied = 0  # recorded: later replays are the next phase's
        part.unlaunched_buffers, self._unlaunched = self._unlaunched, 0
        self.report.add(part)

    def _synchronize(self, kept_launches) -> None:
        """Waits for every GPU the session's memory is on."""
        keys = {k.buffer.allocation.key for k in kept_launches}
        if self.arena is not None:
            keys |= self.arena.device_keys()
        if keys:
            device_memory.memory().synchronize(keys)

    def _decode(self, kept_launches: list[KeptLaunch], report: SessionReport) -> kept_decoding.DecodedKeptLaunches:
        """Decodes the launches a window at a time, counting into `report`;
        returns them as the writers' source (kept_decoding)."""
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
        report.graphs += self._graph_notes(names)
        report.errors += self.replay_errors
        self.replay_errors = []
        decoded, facts, held = [], LaunchFacts(), []
        progress = Progress(f"proton: session {self.name!r}: decoding", len(kept_launches), "launches")
        windows = list(
            kept_decoding.windows(
                kept_launches, lambda kept: kept.buffer.nbytes, max_bytes=kept_decoding.FIRST_PASS_BYTES
            )
        )
        done, memory = 0, kept_decoding.WindowMemory()
        # Buffers that fit in one writer's window stay decoded for the writers.
        hold = len(kept_launches) <= 1 or sum(k.buffer.nbytes for k in kept_launches) <= kept_decoding.WINDOW_BYTES
        for window in windows:
            progress.update(done, f"{facts.num_events:,} events")
            items = [self._prepare(kept, names, report) for kept in window]
            readable = [item for item in items if isinstance(item, kept_decoding.KeptBuffer)]
            results = iter(kept_decoding.decode_window(readable, cost, memory, workers=_decode_workers()))
            good = []
            for kept, item in zip(window, items):
                result = next(results) if isinstance(item, kept_decoding.KeptBuffer) else item
                if self._count(kept, item, result, names, report):
                    item.data, item.events = None, result.num_events
                    decoded.append(item)
                    good.append(result)
            facts.add_window(good)
            held += good
            if not hold:
                held = []  # decoded again as the writers write
            done += len(window)
        progress.close()
        report.events = facts.num_events
        report.dropped_events = sum(info["dropped"] for info in report.per_kernel.values())
        if report.unmatched_records:
            report.warnings.append(
                f"{report.unmatched_records} records had no partner (a scope cut by a full "
                "buffer, or a warp that returned inside a scope)"
            )
        return kept_decoding.DecodedKeptLaunches(decoded, cost, facts, held if hold else None)

    def _prepare(self, kept: KeptLaunch, names, report: SessionReport):
        """The launch's buffer read, with its metadata (KeptBuffer), or why
        it cannot be (an error message); counts it as kept."""
        kernel = names[(kept.kernel, kept.variant)]
        info = report.per_kernel.setdefault(kernel, _kernel_counts())
        info["kept"] += 1
        if kept.graph:
            report.graphs.append(
                f"{kernel} launch {kept.index}, captured in graph {kept.graph.number}: "
                f"{kept.graph.replays} replay{'s' if kept.graph.replays != 1 else ''}; the last is recorded"
                + (" (each replay overwrites the one before)" if kept.graph.replays > 1 else "")
            )
        warnings = []
        try:
            if not arenas.guard_intact(kept.buffer):
                raise ProfilerError(
                    "the memory right after its profile buffer was overwritten (a kernel wrote out of "
                    "bounds there); its records are not trusted"
                )
            data, meta = None, kernel_metadata.KERNELS.get(kept.kernel_id)
            if meta is None:  # the buffer says which kernel wrote it
                data = kept.buffer.read()
                meta = kernel_metadata.metadata_for_buffer(data, kernel)
            if info["kept"] == 1:
                warnings = meta.warnings
                asked = self.mode.pipeline_options().buffer_type
                report.buffers[kernel] = buffer_description(meta.layout, asked)
        except (BufferFormatError, ProfilerError) as error:
            return _Unreadable(f"{kernel} launch {kept.index}: {error}", warnings)
        return kept_decoding.KeptBuffer(kept, kernel, meta, data, warnings=warnings)

    @staticmethod
    def _count(kept: KeptLaunch, item, result, names, report: SessionReport) -> bool:
        """Adds a launch's outcome to `report`, in launch order; whether it decoded."""
        report.warnings += item.warnings
        if not isinstance(result, LaunchEvents):
            unreadable = isinstance(result, _Unreadable)
            report.errors.append(result.message if unreadable else f"{item.kernel} launch {kept.index}: {result}")
            return False
        info = report.per_kernel[item.kernel]
        info["events"] += result.num_events
        info["dropped"] += int(result.dropped.sum())
        info["lossy_warps"] += int((result.dropped > 0).sum())
        report.unmatched_records += result.unmatched
        report.warnings += result.warnings
        return True

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
        facts = launch_windows.source(launches).facts
        if not facts.num_launches:
            return None
        device = devices[0] if devices else next(iter(self.clock_offsets), None)
        if len(devices) > 1:
            warnings.append(f"launches of GPUs {devices} in one trace: its host time uses GPU {device}'s clock offset")
        middle = (facts.origin_ns + facts.last_origin_ns) // 2
        offset = clock_sync.interpolate(self.clock_offsets.get(device, []), middle)
        return None if offset is None else offset.host_clock()


@dataclass
class _Unreadable:
    """A kept launch whose buffer could not be read or trusted."""

    message: str
    warnings: list


def buffer_description(layout: BufferLayout, asked: str) -> str:
    """Which buffer a kernel's records went to, and why (for the report)."""
    kind, segment = layout.buffer_type, layout.segment_bytes
    text = f"{kind} buffer, {segment} B ({layout.capacity} records) per warp"
    if kind == "global" and asked == "auto":
        text += ": the kernel leaves no shared memory to spare"
    elif kind == "registers":
        text += ": every record site is outside loops"
    return text


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
    launches = launch_windows.source(launches)  # each writer decodes a window at a time
    writers = {
        "chrome_trace": lambda path, source: trace_chrome.write(path, source, source.facts.origin_ns),
        "pftrace": lambda path, source: perfetto_trace.write(path, source, gpu_name, **clock),
        "tree": lambda path, source: hatchet_tree.write(path, source, devices, device_type, unrecorded=unrecorded),
    }
    warnings = [] if warnings is None else warnings
    # Writing tens of millions of events takes seconds per file: say which, on a terminal.
    big = launches.facts.num_events >= BIG_SESSION_EVENTS
    progress = Progress("proton: writing", len(outputs), "files")
    paths = {kind: output_path(name, OUTPUT_SUFFIXES[kind], rank=rank, part=part) for kind in outputs}
    progress.update(0, ", ".join(os.path.basename(p) for p in paths.values()), now=big)
    written = _write_side_by_side(launches, paths, writers, warnings)
    progress.close()
    return written


def _write_side_by_side(launches, paths: dict, writers: dict, warnings: list) -> dict:
    """Writes each output (write_or_fall_back) on a thread of its own, all
    reading one decoding of each window (launch_windows.SharedPasses): the
    writers' numpy work and file writes overlap, and each window is decoded
    once for all of them. Warnings come in the outputs' order; where
    outputs fail, the first one's error is raised once all have ended (the
    outputs written are kept)."""
    kinds = list(paths)
    if len(kinds) == 1 or not threads_allowed():
        # One output, or no threads at the program's end: each output from a
        # decoding of its own, one after the other.
        return {
            kind: write_or_fall_back(paths[kind], lambda path, kind=kind: writers[kind](path, launches), warnings)
            for kind in kinds
        }
    shared = launch_windows.SharedPasses(launches, len(kinds))
    results: dict = {kind: None for kind in kinds}
    notes: dict = {kind: [] for kind in kinds}

    def run(k: int, kind: str) -> None:
        reader = shared.reader(k)
        try:
            results[kind] = write_or_fall_back(paths[kind], lambda path: writers[kind](path, reader), notes[kind])
        except BaseException as error:  # noqa: BLE001 - raised by the caller, in the outputs' order
            results[kind] = error
        finally:
            reader.close()

    threads = [
        threading.Thread(target=run, args=(k, kind), name=f"proton-write-{kind}", daemon=True)
        for k, kind in enumerate(kinds)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    failed = next((k for k, kind in enumerate(kinds) if isinstance(results[kind], BaseException)), None)
    for kind in kinds[: len(kinds) if failed is None else failed + 1]:
        warnings += notes[kind]
    if failed is not None:
        # Outputs that were written stay: each is complete, and removing one
        # would leave no file where the last run's stood; finalize again
        # writes them all.
        raise results[kinds[failed]]
    return results


def _decode_workers() -> int:
    """Threads that decode a window of kept launches before the outputs are written."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(4, cores))


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
