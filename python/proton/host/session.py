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
import threading
from dataclasses import dataclass, field

from ..errors import ProfilerError
from ..paths import output_path, write_or_fall_back
from . import libraries, hatchet_tree, records, chrome_trace

CONTEXTS = ("shadow", "python")
DATA = ("tree", "trace")
HOOKS = (None, "triton")
HOST_BACKENDS = ("cupti", "rocprofiler", "roctracer")
MAX_SESSIONS = 64
TRACE_CAP = 10_000_000  # timeline rows kept per session


def _host():
    try:
        from .. import _host
    except ImportError as error:
        raise ProfilerError(
            f"the host profiler's runtime (proton._host) is not built into this install: {error}"
        ) from None
    return _host


@dataclass
class HostReport:
    """What finalize read and wrote."""

    name: str
    files: dict = field(default_factory=dict)
    kernels: int = 0  # kernel activities attributed to this session
    activities: int = 0  # kernels, copies and sets
    unattributed: int = 0  # activities whose launch was not seen (process-wide)
    dropped_records: int = 0  # records the tracer dropped (process-wide, this tracer)
    trace_dropped: int = 0  # timeline rows over the cap
    pc_samples: int = 0  # PC samples attributed to this session (mode="pcsampling")
    warnings: list = field(default_factory=list)

    def summary(self) -> str:
        lines = [
            f"proton: session {self.name!r}: {self.kernels} kernel launches, {self.activities} activities"
            + (f", {self.pc_samples} PC samples" if self.pc_samples else "")
        ]
        lines += [f"  warning: {w}" for w in self.warnings]
        lines += [f"  wrote {path}" for path in self.files.values()]
        return "\n".join(lines)


class HostSession:
    def __init__(
        self,
        name: str,
        backend: str,
        context: str = "shadow",
        data: str = "tree",
        hook=None,
        pc_sampling=None,
        quiet: bool = False,
    ):
        if backend not in HOST_BACKENDS:
            raise ProfilerError(f"unknown host backend {backend!r}; valid: {', '.join(HOST_BACKENDS)}")
        if context not in CONTEXTS:
            raise ProfilerError(f"unknown context {context!r}; valid: {', '.join(CONTEXTS)}")
        if data not in DATA:
            raise ProfilerError(f"unknown data {data!r}; valid: {', '.join(DATA)}")
        if hook not in HOOKS:
            raise ProfilerError(f"unknown hook {hook!r}; valid: None, 'triton'")
        self.name, self.backend, self.context, self.data, self.hook = name, backend, context, data, hook
        self.tracer = _tracer_for(backend)
        self.pc_sampling = pc_sampling
        self.quiet = quiet
        self.slot = -1
        self.active = False
        self.user_metrics: dict[int, dict[str, float]] = {}  # scope node -> metric -> sum
        self.metric_types: dict[str, tuple] = {}  # name -> (type, "inc" | "exc" | "pty")
        self._launch_hook = None

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
        self.tracer.start(host, self)
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
        self.activate()

    def activate(self) -> None:
        if not self.active:
            self.active = True
            _publish_active()

    def deactivate(self) -> None:
        if self.active:
            self.active = False
            _publish_active()

    def finalize(self) -> HostReport:
        host = _host()
        self.deactivate()
        if self._launch_hook is not None:
            from .launch_hook import uninstall

            uninstall(self._launch_hook)
            self._launch_hook = None
        _synchronize()
        report = HostReport(self.name)
        try:
            self.tracer.flush(host)
        except RuntimeError as error:
            report.warnings.append(f"flushing {self.tracer.name}: {error}")
        aggregate_bytes, trace_bytes, trace_dropped = host.take_session(self.slot)
        pc_samples = host.take_pc_samples(self.slot)
        pc_error = host.pc_sampling_error() if self.pc_sampling is not None else ""
        del _sessions[self.slot]
        _update_context()
        counters = host.counters()
        if not _sessions:
            try:
                self.tracer.stop(host)
            except RuntimeError as error:
                report.warnings.append(f"stopping {self.tracer.name}: {error}")
        aggregates = records.aggregates(aggregate_bytes)
        names = host.names()
        nodes = records.nodes(host.nodes())
        trace_rows = records.trace_rows(trace_bytes)
        # Activity names are shown demangled (CUDA C++ kernels); context names as they are.
        for index in set(aggregates["name"].tolist()) | set(trace_rows["name"].tolist()):
            names[index] = host.demangle(names[index])
        pc_samples = [(node, host.demangle(kernel), *rest) for node, kernel, *rest in pc_samples]
        report.kernels = int(aggregates["count"][aggregates["kind"] == 0].sum())
        report.activities = int(aggregates["count"].sum())
        report.unattributed = counters["unattributed"]
        report.dropped_records = counters[self.tracer.dropped_key] if self.tracer.dropped_key else 0
        report.trace_dropped = int(trace_dropped)
        if report.dropped_records:
            report.warnings.append(f"{self.tracer.name} dropped {report.dropped_records} activity records")
        if report.trace_dropped:
            report.warnings.append(f"{report.trace_dropped} timeline rows over the cap of {TRACE_CAP} were not kept")
        report.pc_samples = sum(int(row[4]) for row in pc_samples if not row[3].endswith(hatchet_tree.NOT_ISSUED))
        if pc_error:
            report.warnings.append(f"PC sampling: {pc_error}")
        if self.pc_sampling is not None and counters["pc_samples_dropped"]:
            report.warnings.append(f"the GPU dropped {counters['pc_samples_dropped']} PC samples (process-wide)")
        tree = hatchet_tree.build(
            nodes,
            names,
            aggregates,
            self.user_metrics,
            self.tracer.device_info(aggregates),
            pc_samples=pc_samples,
            device_type=self.tracer.device_type,
        )
        report.files["tree"] = write_or_fall_back(
            output_path(self.name, ".hatchet"), lambda path: hatchet_tree.write(path, tree), report.warnings
        )
        if self.data == "trace":
            report.files["chrome_trace"] = write_or_fall_back(
                output_path(self.name, ".chrome_trace"),
                lambda path: chrome_trace.write_chrome(path, trace_rows, nodes, names),
                report.warnings,
            )
        if not self.quiet:
            print(report.summary(), file=sys.stderr)
        return report

    # -- user metrics (proton.scope(..., metrics=...)) -----------------------
    # As Triton's Proton: "name" and "name(exc)" are int or float, summed on
    # the scope's node; "name(pty)" is a property (int, float or str), the
    # last value kept. The suffix is not part of the name in the tree. A
    # metric keeps its type (and kind) for the whole session.
    def check_metrics(self, scope_name: str, metrics: dict) -> None:
        """A metric name keeps its kind (summed, "(exc)", "(pty)") in the
        session. Numbers are summed per node and keep their type (int or
        float); a property keeps its last value, of any type, per scope;
        strings are allowed for properties and "(exc)" metrics, where the
        last value is kept (as in Triton's Proton)."""
        for key, value in metrics.items():
            name, kind = split_metric(key)
            allowed = (int, float) if kind == "inc" else (int, float, str)
            if isinstance(value, bool) or not isinstance(value, allowed):
                raise ProfilerError(
                    f"metric {key!r} of scope {scope_name!r} is {type(value).__name__}; metrics "
                    "must be int or float" + (" (str only for '(pty)' and '(exc)')" if isinstance(value, str) else "")
                )
            vtype = (int if isinstance(value, int) else float) if _summed(kind, value) else None
            previous = self.metric_types.get(name, (vtype, kind))
            if previous[1] != kind or None not in (vtype, previous[0]) and previous[0] != vtype:
                raise ProfilerError(
                    f"metric {name!r} of scope {scope_name!r} changed type from "
                    f"{_describe(*previous)} to {_describe(vtype, kind)} in session {self.name!r}"
                )

    def add_metrics(self, node: int, scope_name: str, metrics: dict) -> None:
        self.check_metrics(scope_name, metrics)  # all checked before any is added
        sums = self.user_metrics.setdefault(node, {})
        for key, value in metrics.items():
            name, kind = split_metric(key)
            if _summed(kind, value):
                self.metric_types[name] = (int if isinstance(value, int) else float, kind)
                sums[name] = sums.get(name, 0) + value
            else:
                self.metric_types.setdefault(name, (None, kind))
                sums[name] = value


def _summed(kind: str, value) -> bool:
    """Whether a metric value adds up on its node (else the last one is kept)."""
    return kind != "pty" and not isinstance(value, str)


def split_metric(key: str) -> tuple[str, str]:
    """("cpu_time (ns)", "exc") for "cpu_time (ns)(exc)"; kind "inc" without a suffix."""
    if not isinstance(key, str) or not key:
        raise ProfilerError(f"a metric name must be a non-empty string, got {key!r}")
    stripped = key.rstrip()
    for kind in ("exc", "pty"):
        if stripped.endswith(f"({kind})"):
            return stripped[: -len(kind) - 2].strip(), kind
    return key, "inc"


def _describe(vtype: type | None, kind: str) -> str:
    return (vtype.__name__ if vtype else "a kept value") + (f" ({kind})" if kind != "inc" else "")


_sessions: dict[int, HostSession] = {}  # slot -> open session


def open_sessions() -> list[HostSession]:
    return list(_sessions.values())


def active_sessions() -> list[HostSession]:
    return [s for s in _sessions.values() if s.active]


# -- the vendor tracers behind the backends ----------------------------------
class _Cupti:
    """backend="cupti" (NVIDIA): libcupti, optionally with PC sampling."""

    name = "CUPTI"
    device_type = "CUDA"
    dropped_key = "dropped_records"  # in proton._host.counters()

    def start(self, host, session: HostSession) -> None:
        if session.pc_sampling is not None:
            _check_pc_sampling(host, session)
        if host.cupti_tracing():
            return
        path = libraries.find_cupti()
        nvtx = nvtx_enabled()
        host.set_nvtx(nvtx)
        if nvtx:
            # NVTX calls reach CUPTI's NVTX callbacks through NVTX's injection
            # library, read when NVTX first initializes in this process.
            os.environ.setdefault("NVTX_INJECTION64_PATH", path)
        try:
            host.load_cupti(path)
            if session.pc_sampling is not None:  # before tracing starts: it then keeps the cubins
                host.set_pc_sampling(True, session.pc_sampling.exponent)
            host.start_cupti()
        except RuntimeError as error:
            host.set_pc_sampling(False, 0)
            raise ProfilerError(f"cannot start CUPTI tracing: {error}") from None

    def flush(self, host) -> None:
        host.flush_cupti()

    def stop(self, host) -> None:
        try:
            host.stop_cupti()
        finally:
            host.set_pc_sampling(False, 0)

    def device_info(self, aggregates) -> dict:
        from .device_info import describe

        devices = sorted({int(d) for d in aggregates["device"]}) if aggregates.size else []
        return describe(devices)


class _Roctracer:
    """backend="roctracer" (AMD): libroctracer64. Tested on the CPU through a
    fake library only; see lib/Host/RoctracerTracer.cpp."""

    name = "ROCTracer"
    device_type = "HIP"
    dropped_key = None  # ROCTracer reports no drops

    def start(self, host, session: HostSession) -> None:
        if session.pc_sampling is not None:
            raise ProfilerError(
                "PC sampling (mode='pcsampling') is a CUPTI feature (backend='cupti', NVIDIA); "
                "backend='roctracer' has none"
            )
        if host.roctracer_tracing():
            return
        try:
            path = libraries.find_roctracer()
        except ProfilerError as error:
            if os.environ.get("PROTON_ROCTRACER_LIB"):
                raise
            raise ProfilerError(
                f"{error}; rocprofiler-sdk, which backend={session.backend!r} prefers, was not found "
                "either (set PROTON_ROCPROFILER_LIB to librocprofiler-sdk.so)"
            ) from None
        try:
            host.load_roctracer(path)
            host.start_roctracer()
        except RuntimeError as error:
            raise ProfilerError(f"cannot start ROCTracer tracing: {error}") from None

    def flush(self, host) -> None:
        host.flush_roctracer()

    def stop(self, host) -> None:
        host.stop_roctracer()

    def device_info(self, aggregates) -> dict:
        return {}  # no AMD device properties yet: the viewer shows no utilization


class _Rocprofiler:
    """backend="rocprofiler" (AMD), and backend="roctracer" where the SDK is
    found: librocprofiler-sdk. Tested on the CPU through a fake library only;
    see lib/Host/RocprofilerTracer.cpp. The SDK takes one tool per process,
    before the HIP runtime starts: the first such session should start
    before the first kernel launch."""

    name = "rocprofiler-sdk"
    device_type = "HIP"
    dropped_key = "rocprofiler_dropped_records"

    def start(self, host, session: HostSession) -> None:
        if session.pc_sampling is not None:
            raise ProfilerError(
                "PC sampling (mode='pcsampling') is a CUPTI feature (backend='cupti', NVIDIA); "
                f"backend={session.backend!r} (rocprofiler-sdk) has none here"
            )
        if host.rocprofiler_tracing():
            return
        # The SDK is configured once per process: keep the library loaded.
        path = host.rocprofiler_path() or libraries.find_rocprofiler()
        try:
            host.load_rocprofiler(path)
            host.start_rocprofiler()
        except RuntimeError as error:
            raise ProfilerError(f"cannot start rocprofiler-sdk tracing: {error}") from None

    def flush(self, host) -> None:
        host.flush_rocprofiler()

    def stop(self, host) -> None:
        host.stop_rocprofiler()

    def device_info(self, aggregates) -> dict:
        return {}  # no AMD device properties yet: the viewer shows no utilization


TRACERS = {"cupti": _Cupti(), "rocprofiler": _Rocprofiler(), "roctracer": _Roctracer()}


def _tracer_for(backend: str):
    """The tracer behind a backend. backend="roctracer" (the default host
    backend on AMD) takes rocprofiler-sdk where it is found, as Triton 3.8's
    Proton prefers it (ROCTracer is deprecated), else ROCTracer;
    PROTON_ROCTRACER_LIB pins ROCTracer, PROTON_ROCPROFILER_LIB the SDK."""
    if backend != "roctracer" or os.environ.get("PROTON_ROCTRACER_LIB"):
        return TRACERS[backend]
    if os.environ.get("PROTON_ROCPROFILER_LIB"):
        return TRACERS["rocprofiler"]
    try:
        libraries.find_rocprofiler()
    except ProfilerError:
        return TRACERS["roctracer"]
    return TRACERS["rocprofiler"]


def nvtx_enabled() -> bool:
    """NVTX ranges become tree nodes unless triton.knobs.proton.enable_nvtx
    (TRITON_ENABLE_NVTX) is off, as in Triton's Proton."""
    try:
        import triton.knobs

        return bool(triton.knobs.proton.enable_nvtx)
    except (ImportError, AttributeError):
        return os.environ.get("TRITON_ENABLE_NVTX", "1").lower() not in ("0", "false", "off", "no")


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


def _publish_active() -> None:
    mask = 0
    for session in _sessions.values():
        if session.active:
            mask |= 1 << session.slot
    _host().set_active_sessions(mask)


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
