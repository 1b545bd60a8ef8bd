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
reason. Each replay of a CUDA graph is recorded as a launch of its own
(cuda_graphs.py, graph_replays.py). After the session, kernels it compiled that are launched
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

import sys
import threading
import time

import triton
import triton.knobs
from triton.runtime import _allocation

from ..compiling import inductor, stage_hook
from ..contract.errors import ProfilerError
from ..session.interface import ProfilerSession
from ..session.modes import OpMeasure, parse
from ..session.options import SessionOptions
from ..writers import perfetto_trace
from . import arena as arenas, clock_sync, cuda_graphs
from . import launches as retention
from .benchmark_loops import BenchmarkLoops
from .flush_policy import FlushPolicy
from .graph_replays import GraphReplays
from .launch_bookkeeping import LaunchBookkeeping
from .launch_fast_path import LaunchFastPath
from .launch_memory import LaunchMemory, late_launch_sink
from .launches import KeptLaunch
from .session_outputs import OUTPUT_SUFFIXES, SessionOutputs, SessionReport


class InstrumentationSession(
    LaunchFastPath, LaunchMemory, LaunchBookkeeping, GraphReplays, SessionOutputs, ProfilerSession
):
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
        if "pftrace" in self.outputs:
            perfetto_trace.prepare()  # not at the program's end (perfetto_trace.prepare says why)
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
        self.graphs.on_replay = self._on_graph_replay
        self.benchmarks = BenchmarkLoops()
        self.inductor = inductor.InductorSettings()
        self.captured: list[KeptLaunch] = []  # launches captured in CUDA graphs
        self.replay_errors: list[str] = []  # copies of graph replays that failed (graph_replays.py)
        # (kernel, variant) -> launches so far; once the fast path has a
        # counter for a key (_launch_counter), that counter is the count.
        self.launch_counts: dict[tuple, int] = {}
        self._launches = 0  # all launches of instrumented kernels so far
        self._variants: dict = {}  # CUfunction handle -> (kernel, variant description)
        self._unrecorded: dict[str, int] = {}  # kernel -> launches without a profile buffer
        self.active = False
        self._local = threading.local()  # .pending: the buffer handed out for the launch about to be made
        self._unlaunched = 0  # buffers handed out whose launch hook never came
        self._closed = False  # finalize stopped recording (its writing may be tried again)
        self._previous_allocator = None
        self._torch = None  # imported at the first instrumented launch
        # The launch fast path (launch_fast_path.py), made at start.
        self._fast = None  # proton._host.InstrumentedLaunches, or None
        self._fast_chunks: list = []  # the arena chunks its runs are in, by index
        self._fast_chunk_index: dict[int, int] = {}  # id(chunk) -> index
        self._fast_sinks: set[int] = set()  # indexes of the sink blocks among them
        self._fast_variants: list[tuple] = []  # (kernel, (kernel, variant), kernel id), by index
        self._fast_counters: dict[tuple, int] = {}  # (kernel, variant) -> its launch counter there
        self._fast_handles: set = set()  # CUfunction handles it knows
        self._fast_runs: dict[int, int] = {}  # buffer size -> length of its next run
        self._hooks = (self._allocate, self._on_launch)  # (allocator, launch hook) installed

    # -- lifecycle -----------------------------------------------------------
    def start(self) -> None:
        # Before anything is installed: the clock kernel is compiled plain.
        self._measure_clock(sys.modules.get("torch"), devices=())
        self._previous_allocator = _allocation._profile_allocator.get()
        self._fast = self._make_fast_path()
        if self._fast is not None:
            self._hooks = (self._fast.allocate, self._fast.on_launch)
        _allocation.set_profile_allocator(self._hooks[0])
        triton.knobs.runtime.launch_enter_hook.add(self._hooks[1])
        try:
            self.benchmarks.install()
            torch = sys.modules.get("torch")
            if torch is not None:
                self.graphs.install(torch)
            self.activate()
        except BaseException:
            self._uninstall(self._previous_allocator)  # a session that did not start leaves nothing behind
            raise

    def _uninstall(self, allocator) -> None:
        """Takes out what start installed; `allocator` becomes Triton's
        profile allocator."""
        self.deactivate()
        triton.knobs.runtime.launch_enter_hook.remove(self._hooks[1])
        self.benchmarks.uninstall()
        _allocation.set_profile_allocator(allocator)
        self.graphs.uninstall()

    def activate(self) -> None:
        if not self.active:
            self.hook.install()
            self.inductor.apply()
            self.active = True
            self._update_fast_path()

    def deactivate(self) -> None:
        # Kernels compiled while active keep writing records; their buffers
        # are still handed out, but not kept.
        if self.active:
            self.hook.uninstall()
            self.inductor.restore()
            self.active = False
            self._update_fast_path()

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
            previous = self._previous_allocator
            # Libraries keep compiled kernels and launch them after the session:
            # they still get memory to write into, never Triton's refusal.
            self._uninstall(
                late_launch_sink if previous is None or isinstance(previous, _allocation.NullAllocator) else previous
            )
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
        self._update_fast_path()  # the next flush's deadline
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


def _host_runtime():
    """proton._host (host scopes), or None in an install built without it."""
    try:
        from .. import _host
    except ImportError:
        return None
    return _host


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
