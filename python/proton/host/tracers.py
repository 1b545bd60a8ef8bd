"""The vendor tracers behind the host backends, one adapter shape (Tracer)
over proton._host's CUPTI, ROCTracer and rocprofiler-sdk runtimes: a host
session starts, flushes and stops its tracer and reads its names and drop
counter without knowing which one it holds."""

from __future__ import annotations

import abc
import os

from ..contract.errors import ProfilerError
from . import libraries


class CuptiTaken(ProfilerError):
    """Another CUPTI client holds the subscription (cupti_clients)."""


class Tracer(abc.ABC):
    """One vendor tracer. Tracing is process-wide: host sessions open at the
    same time share one tracer, started by the first and stopped after the
    last."""

    name: str  # in messages
    device_type: str  # the tree's device_type label
    dropped_key: str | None  # its drop counter in proton._host.counters(), None: it reports none
    samples_pcs: bool = False  # mode="pcsampling" (CUPTI only)

    @abc.abstractmethod
    def start(self, host, session) -> None:
        """Loads and starts the tracer for `session` (a HostSession) unless
        it is tracing already; ProfilerError if it cannot."""

    @abc.abstractmethod
    def flush(self, host) -> None:
        """Delivers the activity records buffered so far."""

    @abc.abstractmethod
    def stop(self, host) -> None:
        """Stops tracing (the last host session closed)."""

    def device_info(self, aggregates) -> dict:
        """The tree's device-info object for the devices in `aggregates`
        (none for AMD yet: the viewer then shows no utilization)."""
        return {}

    def tracing(self, host) -> bool:
        """Whether the tracer is started (a session may be open without it:
        CuptiTaken)."""
        return True


class Cupti(Tracer):
    """backend="cupti" (NVIDIA): libcupti, optionally with PC sampling."""

    name = "CUPTI"
    device_type = "CUDA"
    dropped_key = "dropped_records"  # in proton._host.counters()
    samples_pcs = True

    def start(self, host, session) -> None:
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
            if "MULTIPLE_SUBSCRIBERS" in str(error):
                from .cupti_clients import taken_message

                raise CuptiTaken(taken_message(session.name)) from None
            raise ProfilerError(f"cannot start CUPTI tracing: {error}") from None

    def tracing(self, host) -> bool:
        return bool(host.cupti_tracing())

    def flush(self, host) -> None:
        host.flush_cupti()

    def stop(self, host) -> None:
        try:
            host.stop_cupti()
        finally:
            host.set_pc_sampling(False, 0)

    def device_info(self, aggregates) -> dict:
        from ..device.info import describe

        devices = sorted({int(d) for d in aggregates["device"]}) if aggregates.size else []
        return describe(devices)


class Roctracer(Tracer):
    """backend="roctracer" (AMD): libroctracer64. Tested on the CPU through a
    fake library only; see lib/Host/RoctracerTracer.cpp."""

    name = "ROCTracer"
    device_type = "HIP"
    dropped_key = None  # ROCTracer reports no drops

    def start(self, host, session) -> None:
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


class Rocprofiler(Tracer):
    """backend="rocprofiler" (AMD), and backend="roctracer" where the SDK is
    found: librocprofiler-sdk. Tested on the CPU through a fake library only;
    see lib/Host/RocprofilerTracer.cpp. The SDK takes one tool per process,
    before the HIP runtime starts: the first such session should start
    before the first kernel launch."""

    name = "rocprofiler-sdk"
    device_type = "HIP"
    dropped_key = "rocprofiler_dropped_records"

    def start(self, host, session) -> None:
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


TRACERS = {"cupti": Cupti(), "rocprofiler": Rocprofiler(), "roctracer": Roctracer()}


def tracer_for(backend: str) -> Tracer:
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
