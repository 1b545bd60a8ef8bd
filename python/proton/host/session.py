"""Host profiling sessions (backends "cupti", "rocprofiler" and "roctracer"): every kernel
launch, memory copy and set is timed by the vendor tracer and attributed to
its calling context (proton.scope nesting, or the Python call path).

The per-launch work happens in C++ (`proton._host`): a callback stores the
launch's context by correlation id; the tracer's activity records are summed
per session and context. Python runs only at start, at scope boundaries, and
at finalize, when the tree (and, with data="trace", the timeline) is written.
"""

from __future__ import annotations

import os
import sys
import dataclasses
import threading
from dataclasses import dataclass

from ..contract.errors import ProfilerError
from ..writers.msgpack_codec import packb
from ..writers.files import write_or_fall_back
from ..session.paths import output_path
from ..session.interface import ProfilerSession, Report
from ..session.modes import PCSampling, PeriodicFlushing
from ..session.options import SessionOptions
from . import activity_trace, activity_tree, libraries, records, tracers
from ..writers.hatchet_tree import write_tree
from .device_metrics import DeviceSlots
from ..device.memory import profiler_work
from .graph_metrics import GraphMetrics, grafted
from .metrics import SessionMetrics, _sum, add_value, read_value
from .runtime import _host, _sessions, active_sessions, open_sessions  # noqa: F401 - the host sessions' names

CONTEXTS = ("shadow", "python")
DATA = ("tree", "trace")
HOOKS = (None, "triton")
HOST_BACKENDS = ("cupti", "rocprofiler", "roctracer")
MAX_SESSIONS = 64
TRACE_CAP = 10_000_000  # timeline rows kept per session
#: The profile tree's file formats (finalize's output_format, periodic flushing's format=).
TREE_FORMATS = ("hatchet", "hatchet_msgpack")


def default_backend() -> str:
    """The host backend of this machine's GPUs (backend="host"): ROCTracer
    with a ROCm build of PyTorch, CUPTI otherwise."""
    torch = sys.modules.get("torch")
    if torch is None:
        try:
            import torch
        except ImportError:
            return "cupti"
    return "roctracer" if getattr(torch.version, "hip", None) else "cupti"


@dataclass
class HostReport(Report):
    """What a host session's finalize read and wrote."""

    kernels: int = 0  # kernel activities attributed to this session
    activities: int = 0  # kernels, copies and sets
    unattributed: int = 0  # activities whose launch was not seen (process-wide)
    dropped_records: int = 0  # records the tracer dropped (process-wide, this tracer)
    trace_dropped: int = 0  # timeline rows over the cap
    pc_samples: int = 0  # PC samples attributed to this session (mode="pcsampling")

    def summary(self) -> str:
        lines = [
            f"proton: session {self.name!r}: {self.kernels} kernel launches, {self.activities} activities"
            + (f", {self.pc_samples} PC samples" if self.pc_samples else "")
        ]
        lines += [f"  warning: {w}" for w in self.warnings]
        return "\n".join(lines + self.files_summary())


class _Phase:
    """One phase's records, moved out of the runtime's store at each phase
    boundary (the store sums a session's records with no notion of phases)."""

    def __init__(self):
        self.aggregates: list = []  # arrays of records.AGGREGATE rows
        self.trace: list = []  # arrays of records.TRACE rows
        self.pc_samples: list = []  # (node, kernel demangled, line, stall reason, samples)
        self.user_metrics: dict[int, dict] = {}  # scope node -> metric -> sum
        self.scopes: list = []  # activity_trace.ScopeRecord per scope instance (data="trace")
        # (launch node, kernel name) -> metric -> sum: launch_metadata's
        # metrics beyond flops8..64 and bytes (which the runtime keeps).
        self.kernel_metrics: dict[tuple, dict] = {}

    def metric_sums(self, where: str, place) -> dict:
        """The metrics of a scope node ("scope") or a (launch node, kernel)
        pair ("kernel")."""
        return (self.user_metrics if where == "scope" else self.kernel_metrics).setdefault(place, {})


class HostSession(SessionMetrics, ProfilerSession):
    def __init__(self, options: SessionOptions):
        """A host session of `options` (start has checked them for a host
        backend: SessionOptions.check_host)."""
        self.options = options
        name, context, data, hook = options.name, options.context, options.data or "tree", options.hook
        backend = default_backend() if options.backend == "host" else options.backend
        mode = options.mode
        pc_sampling = mode if isinstance(mode, PCSampling) else None
        # periodic_flushing=True is mode "periodic_flushing" (hatchet parts).
        periodic_flushing = (
            mode.format if isinstance(mode, PeriodicFlushing) else "hatchet" if options.periodic_flushing else None
        )
        if backend not in HOST_BACKENDS:
            raise ProfilerError(f"unknown host backend {backend!r}; valid: {', '.join(HOST_BACKENDS)}")
        if context not in CONTEXTS:
            raise ProfilerError(f"unknown context {context!r}; valid: {', '.join(CONTEXTS)}")
        if data not in DATA:
            raise ProfilerError(f"unknown data {data!r}; valid: {', '.join(DATA)}")
        if hook not in HOOKS:
            raise ProfilerError(f"unknown hook {hook!r}; valid: None, 'triton'")
        if periodic_flushing not in (None, *TREE_FORMATS):
            raise ProfilerError(
                f"unknown periodic flushing format {periodic_flushing!r}; valid: {', '.join(TREE_FORMATS)}"
            )
        self.name, self.backend, self.context, self.data, self.hook = name, backend, context, data, hook
        self.tracer = tracers.tracer_for(backend)
        self.pc_sampling = pc_sampling
        self.quiet = options.quiet
        self.slot = -1
        self.active = False
        # Phases (proton.data): records are moved from the runtime's store into
        # the current phase at each boundary; a cleared phase has no entry.
        self.phase = 0
        self.phases: dict[int, _Phase] = {0: _Phase()}
        self.periodic_flushing = periodic_flushing  # the parts' format, or None
        self.tree_format = periodic_flushing or "hatchet"  # finalize's output_format may change it
        self._parts: list[dict] = []  # phases written at advance_phase (periodic flushing)
        self._taken = {"kernels": 0, "activities": 0, "trace_rows": 0, "trace_dropped": 0, "pc_samples": 0}
        self._warnings: list[str] = []
        self.metric_types: dict[str, tuple] = {}  # name -> (type, "inc" | "exc" | "pty")
        self._launch_hook = None
        self.clock_offset = 0  # set at start with data="trace" (activity_trace.clock_offset)
        self.device_slots = DeviceSlots()  # metrics that are device tensors
        self.graph_metrics = GraphMetrics(self._graph_replayed)  # metrics captured in CUDA graphs
        self.skipped_in_capture: dict[str, int] = {}  # why a metric was left out of a capture -> times
        self._uncaptured_at_start = 0
        self._closed: HostReport | None = None  # finalize's counts, once the runtime has let go of the session
        self.untraced: str | None = None  # why the tracer could not start (CUPTI held by another client)

    # -- lifecycle -----------------------------------------------------------
    def start(self) -> None:
        host = _host()
        for other in _sessions.values():
            if other.tracer is not self.tracer:
                raise ProfilerError(
                    f"session {other.name!r} is open with backend={other.backend!r}; host sessions "
                    f"open at the same time share one tracer, not backend={self.backend!r}"
                )
            if other.context != self.context:
                raise ProfilerError(
                    f"session {other.name!r} is open with context={other.context!r}; host sessions "
                    f"open at the same time share one context mode, not {self.context!r}"
                )
        used = {s.slot for s in _sessions.values()}
        free = [slot for slot in range(MAX_SESSIONS) if slot not in used]
        if not free:
            raise ProfilerError(f"at most {MAX_SESSIONS} host sessions can be open at once")
        if self.pc_sampling is not None and self.tracer.samples_pcs:
            _check_pc_sampling(host, self)
        try:
            self.tracer.start(host, self)
        except tracers.CuptiTaken as error:
            # Another CUPTI client (torch.profiler, Nsight) holds CUPTI: go on
            # without kernel timings rather than end the user's program.
            self.untraced = str(error)
            self._warnings.append(f"no kernel timings: {error}")
            if not self.quiet or not _taken_warned:
                print(f"proton: warning: {error}", file=sys.stderr)
            _note_taken_warned()
        if self.data == "trace" and self.untraced is None:  # read the tracer's clock while it is surely loaded
            activity_trace.clock = activity_trace.tracer_clock(host, self.tracer.name)
            self.clock_offset = activity_trace.clock_offset(activity_trace.clock)
        if threading.current_thread() is threading.main_thread():
            # Launches from threads with no scope of their own (autograd's
            # backward) go below the main thread's innermost scope.
            host.mark_main_thread()
        self.slot = free[0]
        host.open_session(self.slot, self.data == "trace", TRACE_CAP)
        _sessions[self.slot] = self
        _update_context()
        if self.hook == "triton":
            from .launch_hook import install

            self._launch_hook = install()
        self._uncaptured_at_start = host.counters().get("uncaptured_graph_kernels", 0)
        _watch_torch_profiler(host)
        self.graph_metrics.listen()
        self.activate()

    def activate(self) -> None:
        if not self.active:
            self.active = True
            _publish_active()

    def deactivate(self) -> None:
        if self.active:
            self.active = False
            _publish_active()

    def choose_output(self, kind: str) -> None:
        if kind in ("tree", "tree_msgpack"):
            self.tree_format = "hatchet" if kind == "tree" else "hatchet_msgpack"
        elif kind == "chrome_trace" and self.data != "trace":
            raise ProfilerError(
                f"session {self.name!r} recorded no timeline: output_format='chrome_trace' needs "
                "data='trace' at start (the session is still open)"
            )

    def finalize(self) -> HostReport:
        """Closes the session in the runtime (once), then writes what it
        holds. If nothing could be written, raises ProfilerError and keeps
        the data: finalize may be called again."""
        host = _host()
        if self._closed is None:
            self.deactivate()
            self._uninstall_launch_hook()
            self.graph_metrics.close()
            _synchronize()
            report = HostReport(self.name)
            report.warnings += self._warnings
            counters, pc_error = self._take_last_records(host, report.warnings)
            self._count_into(report, counters, pc_error)
            self._closed = report
        report = dataclasses.replace(self._closed, warnings=list(self._closed.warnings))
        try:
            self._write_unwritten_phases(host, report)
        except ProfilerError as error:
            raise ProfilerError(f"session {self.name!r}: {error}") from error
        self.phases.clear()
        self.device_slots.release()
        if not self.quiet:
            print(report.summary(), file=sys.stderr)
        return report

    def _uninstall_launch_hook(self) -> None:
        if self._launch_hook is not None:
            from .launch_hook import uninstall

            uninstall(self._launch_hook)
            self._launch_hook = None

    def _take_last_records(self, host, warnings: list) -> tuple[dict, str]:
        """Flushes the tracer into this session's current phase and closes
        the session in the runtime (the tracer stops with the last one).
        Returns the runtime's counters and PC sampling's error, if any."""
        from .cupti_clients import torch_profiler_active

        if self.tracer.tracing(host) and self.tracer.name == "CUPTI" and torch_profiler_active():
            self._note_torch_profiler()
        try:
            if self.tracer.tracing(host):
                self.tracer.flush(host)
        except RuntimeError as error:
            warnings.append(f"flushing {self.tracer.name}: {error}")
        warnings[:] = list(dict.fromkeys(warnings + self._warnings))
        self._take(host, reopen=False)
        pc_error = host.pc_sampling_error() if self.pc_sampling is not None else ""
        del _sessions[self.slot]
        _update_context()
        counters = host.counters()
        if not _sessions:
            _unwatch_torch_profiler()
            try:
                self.tracer.stop(host)
            except RuntimeError as error:
                warnings.append(f"stopping {self.tracer.name}: {error}")
        return counters, pc_error

    def _note_torch_profiler(self) -> None:
        from .cupti_clients import TORCH_STARTED

        message = TORCH_STARTED.format(names=repr(self.name))
        if message not in self._warnings:
            self._warnings.append(message)

    def _count_into(self, report: HostReport, counters: dict, pc_error: str) -> None:
        """The report's counts, and a warning for each loss."""
        report.kernels = self._taken["kernels"]
        report.activities = self._taken["activities"]
        report.unattributed = counters["unattributed"]
        report.dropped_records = counters[self.tracer.dropped_key] if self.tracer.dropped_key else 0
        report.trace_dropped = self._taken["trace_dropped"]
        if report.dropped_records:
            report.warnings.append(f"{self.tracer.name} dropped {report.dropped_records} activity records")
        if report.trace_dropped:
            report.warnings.append(f"{report.trace_dropped} timeline rows over the cap of {TRACE_CAP} were not kept")
        report.pc_samples = self._taken["pc_samples"]
        if pc_error:
            report.warnings.append(f"PC sampling: {pc_error}")
        uncaptured = counters.get("uncaptured_graph_kernels", 0) - self._uncaptured_at_start
        if uncaptured > 0:
            report.warnings.append(
                f"{uncaptured} kernels were replayed by CUDA graphs captured before profiling started: they are "
                "under the scope that replayed them, not where they were captured (start the session before "
                "capturing to see that)"
            )
        for what, times in self.skipped_in_capture.items():
            report.warnings.append(
                f"{what}: left out of a CUDA graph capture {times} time(s) (the capture went on without it)"
            )
        if self.pc_sampling is not None and counters["pc_samples_dropped"]:
            report.warnings.append(f"the GPU dropped {counters['pc_samples_dropped']} PC samples (process-wide)")

    def _write_unwritten_phases(self, host, report: HostReport) -> None:
        """A session that never advanced writes <name>.<ext>; one that did,
        each phase not cleared (and not written already) as
        <name>.part_<phase>.<ext>."""
        report.parts = list(self._parts)
        for phase in sorted(set(self.phases) | {self.phase}):
            part = phase if self.phase > 0 else None
            report.files = self._write_phase(host, phase, part, report.warnings)
            if part is not None:
                report.parts.append({"phase": phase, "files": report.files})

    # -- phases (proton.data) ------------------------------------------------
    # The runtime's store sums records per session with no notion of phases:
    # at each phase boundary (advance_phase, and get/clear of the current
    # phase) the session waits for the GPU, flushes the tracer and moves what
    # the store summed into the current phase, here. An ended phase is thus
    # complete at once.
    def advance_phase(self) -> int:
        """Ends the current phase (waiting for the GPU) and returns the next
        one's number. With periodic flushing the ended phase is written as
        <name>.part_<phase>.<format> and its records are let go."""
        self._collect()
        ended = self.phase
        self.phase += 1
        self.phases[self.phase] = _Phase()
        if self.periodic_flushing and ended in self.phases:
            files = self._write_phase(_host(), ended, ended, self._warnings)
            del self.phases[ended]
            self._parts.append({"phase": ended, "files": files})
            if not self.quiet:
                print(
                    f"proton: session {self.name!r} phase {ended}: wrote " + ", ".join(files.values()), file=sys.stderr
                )
        return self.phase

    def is_phase_complete(self, phase: int) -> bool:
        """Whether no more records can come to `phase`: every ended phase."""
        return 0 <= phase < self.phase

    def flush(self) -> None:
        """deactivate(flushing=True): the records so far go to the current phase."""
        self._collect()

    def phase_tree(self, phase: int) -> list:
        """The hatchet tree of `phase` (the current one: of the records so far)."""
        if phase == self.phase:
            self._collect()
            return self._tree(_host(), self.phases.get(phase) or _Phase())
        data = self.phases.get(phase)
        if data is None:
            written = next((p["files"] for p in self._parts if p["phase"] == phase), None)
            if written:
                why = "it was written to " + ", ".join(written.values()) + " (periodic flushing)"
            elif 0 <= phase < self.phase:
                why = "it was cleared"
            else:
                why = f"the current phase is {self.phase}"
            raise ProfilerError(f"session {self.name!r}: phase {phase} has no data: {why}")
        return self._tree(_host(), data)

    def clear(self, phase: int, up_to: bool = False) -> None:
        """Lets go of `phase`'s records (of every phase up to it with
        `up_to`). A cleared current phase gets the records that come later."""
        if phase == self.phase or up_to and phase > self.phase:
            self._collect()  # what was launched before the clear is cleared with it
        for number in list(self.phases):
            if number == phase or up_to and number <= phase:
                del self.phases[number]

    def current_phase(self) -> _Phase:
        return self.phases.setdefault(self.phase, _Phase())

    @property
    def user_metrics(self) -> dict:
        """The current phase's scope metrics: node -> metric -> sum."""
        return self.current_phase().user_metrics

    def scope_records(self) -> list:
        """The current phase's host scope records (data="trace")."""
        return self.current_phase().scopes

    def _collect(self) -> None:
        host = _host()
        _synchronize()
        try:
            if self.tracer.tracing(host):
                self.tracer.flush(host)
        except RuntimeError as error:
            self._warnings.append(f"flushing {self.tracer.name}: {error}")
        self._take(host, reopen=True)

    def _take(self, host, reopen: bool) -> None:
        """Moves what the store summed for this session into the current phase."""
        aggregate_bytes, trace_bytes, trace_dropped = host.take_session(self.slot)
        pc_samples = host.take_pc_samples(self.slot)  # before open_session, which clears them
        if reopen:
            # take_session closed the store's session: records completing
            # between these two calls (launched by other threads during the
            # flush) are not attributed to it.
            cap = max(0, TRACE_CAP - self._taken["trace_rows"] - len(trace_bytes) // records.TRACE.itemsize)
            host.open_session(self.slot, self.data == "trace", cap)
        aggregates = records.aggregates(aggregate_bytes)
        trace_rows = records.trace_rows(trace_bytes)
        pc_samples = [(node, host.demangle(kernel), *rest) for node, kernel, *rest in pc_samples]
        taken = self._taken
        taken["kernels"] += int(aggregates["count"][aggregates["kind"] == 0].sum())
        taken["activities"] += int(aggregates["count"].sum())
        taken["trace_rows"] += len(trace_rows)
        taken["trace_dropped"] += int(trace_dropped)
        taken["pc_samples"] += sum(int(row[4]) for row in pc_samples if not row[3].endswith(activity_tree.NOT_ISSUED))
        if len(aggregates) or len(trace_rows) or pc_samples:
            data = self.phases.setdefault(self.phase, _Phase())
            data.aggregates.append(aggregates)
            data.trace.append(trace_rows)
            data.pc_samples += pc_samples
        device_values = self.device_slots.take()  # the device was synchronized
        if device_values:
            data = self.phases.setdefault(self.phase, _Phase())
            for key, value in device_values.items():
                if key[0] == "captured":
                    # A graph's own slots hold only replays that were not
                    # moved (made other than by torch.cuda.CUDAGraph.replay):
                    # shown where they were captured.
                    if not any(value if isinstance(value, list) else [value]):
                        continue
                    key = key[2:]
                where, place, metric = key
                sums = data.metric_sums(where, place)
                sums[metric] = _sum(sums.get(metric), read_value(metric, value))

    def _graph_replayed(self, record) -> None:
        """Right after a replay of a graph whose capture recorded metrics
        for this session (graph_metrics.py): adds them below the replay's
        context if the session is active, and sets the graph's device sums
        back to zero either way. A failure is reported at finalize, never
        raised into the program's replay."""
        host = _host()
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_current_stream_capturing():
            return  # a replay captured into another graph: nothing has run yet
        try:
            with profiler_work():
                if not self.active:
                    self.device_slots.zero(record.device)
                    return
                replay_node = host.current_launch_node()
                phase = self.current_phase()
                for (where, place, name), (value, summed) in record.host.items():
                    add_value(phase.metric_sums(where, grafted(host, replay_node, where, place)), name, value, summed)
                self.device_slots.move(
                    [
                        (key, (where, grafted(host, replay_node, where, place), name))
                        for key, (where, place, name) in record.device.items()
                    ]
                )
        except Exception as error:  # noqa: BLE001 - the program's replay goes on
            message = f"metrics of a CUDA graph replay were not attributed: {error}"
            if message not in self._warnings:
                self._warnings.append(message)

    def _tree(self, host, data: _Phase, names=None) -> list:
        aggregates = _joined(data.aggregates, records.AGGREGATE)
        nodes = records.nodes(host.nodes())
        names = names if names is not None else self._names(host, aggregates)
        return activity_tree.build(
            nodes,
            names,
            aggregates,
            data.user_metrics,
            self.tracer.device_info(aggregates),
            kernel_metrics=data.kernel_metrics,
            pc_samples=data.pc_samples,
            pc_sampled=self.pc_sampling is not None and self.tracer.samples_pcs,
            device_type=self.tracer.device_type,
            not_summed=frozenset(name for name, (_, kind) in self.metric_types.items() if kind != "inc"),
        )

    @staticmethod
    def _names(host, *row_arrays) -> list:
        # Activity names are shown demangled (CUDA C++ kernels); context names as they are.
        names = host.names()
        for index in set().union(*(set(rows["name"].tolist()) for rows in row_arrays)):
            names[index] = host.demangle(names[index])
        return names

    def _write_phase(self, host, phase: int, part: int | None, warnings: list) -> dict:
        """Writes `phase` (a cleared one as empty) as <name>[.part_<part>].<ext>; returns the files."""
        data = self.phases.get(phase) or _Phase()
        aggregates = _joined(data.aggregates, records.AGGREGATE)
        trace_rows = _joined(data.trace, records.TRACE)
        names = self._names(host, aggregates, trace_rows)
        tree = self._tree(host, data, names)
        fmt = self.tree_format
        files = {
            "tree": write_or_fall_back(
                output_path(self.name, "." + fmt, part=part), lambda path: _write_tree(path, tree, fmt), warnings
            )
        }
        if self.data == "trace":
            nodes = records.nodes(host.nodes())
            files["chrome_trace"] = write_or_fall_back(
                output_path(self.name, ".chrome_trace", part=part),
                lambda path: activity_trace.write_chrome(
                    path, trace_rows, nodes, names, data.scopes, self.clock_offset
                ),
                warnings,
            )
        return files


def _joined(arrays: list, dtype):
    """One array of a phase's row arrays (empty of `dtype` when none)."""
    import numpy as np

    if not arrays:
        return np.zeros(0, dtype=dtype)
    return arrays[0] if len(arrays) == 1 else np.concatenate(arrays)


def _write_tree(path: str, tree: list, fmt: str) -> str:
    if fmt == "hatchet_msgpack":
        with open(path, "wb") as out:
            out.write(packb(tree))
        return os.path.abspath(path)
    return write_tree(path, tree)


def _check_pc_sampling(host, session: HostSession) -> None:
    # CUPTI's PC sampling is process-wide and must be set up before tracing
    # starts: the first host session decides.
    samplers = [s for s in _sessions.values() if s.pc_sampling is not None]
    if host.cupti_tracing() and not samplers:
        raise ProfilerError(
            "PC sampling (mode='pcsampling') must be the first host session: CUPTI is already "
            "tracing for a session without it; finalize the open host sessions first"
        )
    for other in samplers:
        if other.pc_sampling.interval != session.pc_sampling.interval:
            raise ProfilerError(
                f"session {other.name!r} samples PCs with interval={other.pc_sampling.interval}; "
                f"sessions open at the same time share it, not interval={session.pc_sampling.interval}"
            )


_taken_warned = False
_torch_watch = None  # cupti_clients._Watch while host sessions are open


def _note_taken_warned() -> None:
    global _taken_warned
    _taken_warned = True


def _watch_torch_profiler(host) -> None:
    """While CUPTI host sessions are open: a torch.profiler starting then
    gets no kernels; say so (once per start) and note it in their reports."""
    global _torch_watch
    if _torch_watch is not None:
        return
    from . import cupti_clients

    def started() -> None:
        tracing = [s for s in _sessions.values() if s.tracer.name == "CUPTI" and s.tracer.tracing(host)]
        if not tracing:
            return
        names = ", ".join(repr(s.name) for s in tracing)
        print(f"proton: warning: {cupti_clients.TORCH_STARTED.format(names=names)}", file=sys.stderr)
        for s in tracing:
            s._note_torch_profiler()

    _torch_watch = cupti_clients.watch_torch_profiler(started)


def _unwatch_torch_profiler() -> None:
    global _torch_watch
    if _torch_watch is not None:
        _torch_watch.remove()
        _torch_watch = None


def _publish_active() -> None:
    mask = 0
    for session in _sessions.values():
        if session.active:
            mask |= 1 << session.slot
    _host().set_active_sessions(mask)
    activity_trace.recording = any(s.active and s.data == "trace" for s in _sessions.values())


def _update_context() -> None:
    # One calling-context mode for the process: Python call paths if any
    # open session asked for them.
    python = any(s.context == "python" for s in _sessions.values())
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    # Frozen stdlib frames (runpy, importlib) are how a script was started, not where it launches.
    skipped = [package, os.path.join(os.path.dirname(os.__file__), "runpy.py"), "<frozen "]
    triton_dir = libraries._package_dir("triton")
    if triton_dir:
        skipped.append(triton_dir + os.sep)
    _host().set_python_context(python, skipped)


def _synchronize() -> None:
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            if torch.cuda.is_initialized():
                for device in range(torch.cuda.device_count()):
                    torch.cuda.synchronize(device)
        except Exception:  # noqa: BLE001 - the C++ flush synchronizes the current context anyway
            pass
