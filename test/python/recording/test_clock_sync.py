"""The host-clock offset of a GPU's global timer on the CPU: estimation from
simulated samples, interpolation and drift, and the whole session path with
simulated GPUs whose timers are offset from the host's clock (and from each
other), down to the argument the Perfetto writer gets."""

import inspect
import os
import random
import sys
import types

import numpy as np
import pytest
import triton
from triton.runtime import _allocation

import proton
from proton.contract import kernel_metadata
from proton.recording import buffer as raw_buffer, clock_sync
from proton.recording.clock_sync import ClockOffset, ClockSample
from proton.writers import perfetto_trace

from test_decode import make
from test_session import FakeTorch, Launch
from fake_gpu_memory_support import write


pytestmark = pytest.mark.usefixtures("no_instrumentation_session_left")


# -- estimation ----------------------------------------------------------------


def test_the_narrowest_window_gives_the_offset():
    samples = [
        ClockSample(1_000, 500, 9_000),  # window 8000
        ClockSample(20_000, 18_100, 20_400),  # window 400: midpoint 20200
        ClockSample(30_000, 28_000, 31_000),
    ]
    offset = clock_sync.estimate(samples)
    assert offset == ClockOffset(
        realtime_minus_globaltimer_ns=2_100, uncertainty_ns=200, samples=3, globaltimer_ns=18_100
    )
    assert offset.host_clock() == {"realtime_minus_globaltimer_ns": 2_100, "uncertainty_ns": 200, "samples": 3}


def test_samples_across_a_clock_step_are_left_out():
    stepped_back = ClockSample(50_000, 100, 49_990)  # NTP stepped the host clock back mid-read
    assert clock_sync.estimate([stepped_back, ClockSample(10, 0, 1_010)]).uncertainty_ns == 500
    with pytest.raises(proton.ProfilerError, match="went backwards in every one"):
        clock_sync.estimate([stepped_back])
    with pytest.raises(proton.ProfilerError, match="none taken"):
        clock_sync.estimate([])


def test_estimate_recovers_a_simulated_offset():
    """A GPU whose timer is 1.7e18 ns behind the host's plus 123_456 ns;
    launch and synchronize latencies of 3-40 us, asymmetric."""
    rng = random.Random(7)
    true_offset, host = 123_456, 1_763_000_000 * 10**9

    def read():
        nonlocal host
        host += rng.randrange(10_000, 1_000_000)
        before = host
        gpu_read = before + rng.randrange(3_000, 20_000)  # launch latency
        after = gpu_read + rng.randrange(2_000, 20_000)  # completion seen by synchronize
        return ClockSample(before, gpu_read - true_offset, after)

    offset = clock_sync.estimate(read() for _ in range(16))
    assert abs(offset.realtime_minus_globaltimer_ns - true_offset) <= offset.uncertainty_ns
    assert offset.uncertainty_ns < 20_000 and offset.samples == 16


def test_interpolation_between_measurements_and_drift():
    start = ClockOffset(1_000, 300, 16, globaltimer_ns=10**9)
    end = ClockOffset(3_000, 500, 16, globaltimer_ns=3 * 10**9)  # 2000 ns over 2 s: 1 ppm
    middle = clock_sync.interpolate([end, start], 2 * 10**9)
    assert middle == ClockOffset(2_000, 500, 32, globaltimer_ns=2 * 10**9)
    assert clock_sync.interpolate([start, end], 0) is start  # before the first: the first
    assert clock_sync.interpolate([start, end], 4 * 10**9) is end  # after the last: the last
    assert clock_sync.interpolate([start], 5) is start
    assert clock_sync.interpolate([], 5) is None
    assert clock_sync.drift(start, end) == {
        "drift_ns": 2_000,
        "over_ns": 2 * 10**9,
        "drift_ppm": 1.0,
        "uncertainty_ns": 800,
    }


def test_measure_creates_no_gpu_context():
    # PyTorch without CUDA set up (or a test double): nothing is launched.
    cold = types.SimpleNamespace(cuda=types.SimpleNamespace(is_initialized=lambda: False))
    assert clock_sync.measure(cold, 0) is None
    assert clock_sync.measure(FakeTorch(), 0) is None


# -- the session path, simulated GPUs --------------------------------------------

GT0 = 1_763_000_000 * 10**9  # the synthetic buffers' global timer (make())


class SimulatedGpu(FakeTorch):
    """FakeTorch with CUDA set up, and a global timer whose offset from the
    host clock drifts: offset(t) = base + ppm * 1e-6 * (t - GT0)."""

    def __init__(self, base_ns, ppm=0.0):
        self.base, self.ppm, self.now = base_ns, ppm, GT0 - 10**9
        self.cuda = types.SimpleNamespace(
            synchronize=lambda: None,
            current_device=lambda: 0,
            get_device_name=lambda: "SimGPU",
            is_initialized=lambda: True,
        )

    def offset_at(self, t):
        return self.base + round(self.ppm * 1e-6 * (t - GT0))

    def measure(self, torch, device):
        assert torch is self and device == 0
        return ClockOffset(self.offset_at(self.now), 250, 16, globaltimer_ns=self.now)


def shifted(data, meta, shift_ns):
    """The buffer as the same kernel writes it on a GPU whose timer reads shift_ns more."""
    words = data.copy().view(np.uint32).reshape(-1, meta.layout.block_bytes // 4)
    for w in (raw_buffer.W_TIMER_START, raw_buffer.W_TIMER_END):
        value = (words[:, w].astype(np.uint64) | (words[:, w + 1].astype(np.uint64) << np.uint64(32))) + np.uint64(
            shift_ns
        )
        words[:, w] = (value & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        words[:, w + 1] = (value >> np.uint64(32)).astype(np.uint32)
    return words.reshape(-1).view(np.uint8)


@pytest.fixture
def captured(monkeypatch):
    """The Perfetto writer's host_clock argument, per file (the writer that
    takes it is another change; this one stands in for it)."""
    calls = {}

    def write(path, launches, gpu_name="GPU 0", origin_ns=None, *, host_clock=None):
        # Outputs are written beside their name (".<name>.<id>.partial"), then renamed.
        final = os.path.join(os.path.dirname(path), os.path.basename(path)[1:].rsplit(".", 2)[0])
        calls[final] = {"host_clock": host_clock, "origin_ns": min(ev.origin_ns for ev in launches)}
        open(path, "wb").close()
        return 0

    monkeypatch.setattr(perfetto_trace, "write", write)
    return calls


def run(monkeypatch, gpu, data, path, phases=1):
    """A session on the simulated GPU: start (1 s before the kernel), one
    launch per phase, finalize (1 s after the last)."""
    monkeypatch.setitem(sys.modules, "torch", gpu)
    monkeypatch.setattr(clock_sync, "measure", gpu.measure)
    session = proton.start(path, backend="instrumentation", periodic_flushing=phases > 1, outputs="pftrace", quiet=True)
    session._torch = gpu
    for phase in range(phases):
        scratch = _allocation._profile_allocator(data.size, 16, 0)
        write(scratch, data)
        triton.knobs.runtime.launch_enter_hook(Launch("k"))
        gpu.now = GT0 + 10**9 * (phase + 1)
        if phase < phases - 1:
            proton.data.advance_phase(session)
    return proton.finalize()


def test_each_trace_gets_the_offset_interpolated_to_its_launches(tmp_path, monkeypatch, captured):
    data, meta = make(ctas=3, kernel_id=41)
    kernel_metadata.register(meta)
    gpu = SimulatedGpu(base_ns=5_000_000, ppm=2.0)  # 2 us per second
    report = run(monkeypatch, gpu, data, str(tmp_path / "run"))
    (call,) = captured.values()
    origin = call["origin_ns"]
    assert abs(origin - GT0) < 10_000  # the kernel ran at GT0 on the GPU's timer
    # Measured 1 s before (offset - 2 us) and 1 s after (+ 2 us): interpolated at the kernel.
    assert call["host_clock"] == {
        "realtime_minus_globaltimer_ns": gpu.offset_at(origin),
        "uncertainty_ns": 250,
        "samples": 32,
    }
    assert report.clock[0]["drift"] == {
        "drift_ns": 4_000,
        "over_ns": 2 * 10**9,
        "drift_ppm": 2.0,
        "uncertainty_ns": 500,
    }
    assert "host clock of GPU 0: realtime - globaltimer = 5002000 ns +- 250 ns; drifted 4000 ns" in report.summary()


def test_each_part_gets_the_offset_of_its_own_time(tmp_path, monkeypatch, captured):
    data, meta = make(ctas=3, kernel_id=42)
    kernel_metadata.register(meta)
    gpu = SimulatedGpu(base_ns=-7_000, ppm=-3.0)
    # Phases at GT0, GT0 + 1 s, GT0 + 2 s (the same buffer, its timer shifted).
    parts = [shifted(data, meta, 10**9 * p) for p in range(3)]
    monkeypatch.setitem(sys.modules, "torch", gpu)
    monkeypatch.setattr(clock_sync, "measure", gpu.measure)
    session = proton.start(
        str(tmp_path / "run"), backend="instrumentation", periodic_flushing=True, outputs="pftrace", quiet=True
    )
    session._torch = gpu
    for p, part in enumerate(parts):
        scratch = _allocation._profile_allocator(part.size, 16, 0)
        write(scratch, part)
        triton.knobs.runtime.launch_enter_hook(Launch("k"))
        gpu.now = GT0 + 10**9 * p + 5 * 10**8  # the flush comes 0.5 s after the phase's kernel
        if p < 2:
            proton.data.advance_phase(session)
    report = proton.finalize()
    assert len(report.clock[0]["offsets"]) == 4  # start, two flushes, finalize
    for p in range(3):
        call = captured[str(tmp_path / f"run.part_{p}.pftrace")]
        assert call["host_clock"]["realtime_minus_globaltimer_ns"] == gpu.offset_at(call["origin_ns"])


def test_two_ranks_agree_on_host_time(tmp_path, monkeypatch, captured):
    """Two ranks whose GPU timers differ by about 160.5 us (as measured
    between two H200s), each kernel at the same host instant: global timer +
    offset is the same instant for both, and each rank writes its own file."""
    data, meta = make(ctas=3, kernel_id=43)
    kernel_metadata.register(meta)
    for var in ("RANK", "WORLD_SIZE"):
        monkeypatch.delenv(var, raising=False)
    skew = 160_512  # a multiple of 256: the decoder's origin_ns goes through float64 (256 ns steps near 1.7e18)
    for rank, (base, shift) in enumerate([(9_000_000, 0), (9_000_000 - skew, skew)]):
        monkeypatch.setitem(
            sys.modules,
            "torch.distributed",
            types.SimpleNamespace(
                is_available=lambda: True, is_initialized=lambda: True, get_rank=lambda rank=rank: rank
            ),
        )
        run(monkeypatch, SimulatedGpu(base), shifted(data, meta, shift), str(tmp_path / "run"))
    ranks = [captured[str(tmp_path / f"run.rank_{r}.pftrace")] for r in (0, 1)]
    assert ranks[1]["origin_ns"] - ranks[0]["origin_ns"] == skew  # the timers disagree...
    host = [c["origin_ns"] + c["host_clock"]["realtime_minus_globaltimer_ns"] for c in ranks]
    assert host[0] == host[1]  # ...host time does not


def test_a_failed_measurement_is_a_warning_and_the_trace_is_still_written(tmp_path, monkeypatch, captured):
    data, meta = make(ctas=3, kernel_id=44)
    kernel_metadata.register(meta)
    gpu = SimulatedGpu(0)

    def broken(torch, device):
        raise RuntimeError("no kernel image is available")

    gpu.measure = broken
    report = run(monkeypatch, gpu, data, str(tmp_path / "run"))
    (call,) = captured.values()
    assert call["host_clock"] is None and report.clock == {}
    assert report.warnings == [
        "could not measure GPU 0's global timer against the host clock (RuntimeError: no "
        "kernel image is available); traces are written without host time"
    ]


@pytest.mark.skipif(
    "host_clock" not in inspect.signature(perfetto_trace.write).parameters,
    reason="this Perfetto writer does not take host_clock",
)
def test_the_perfetto_writer_takes_the_host_clock(tmp_path, monkeypatch):
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace

    data, meta = make(ctas=3, kernel_id=45)
    kernel_metadata.register(meta)
    run(monkeypatch, SimulatedGpu(1_234_567), data, str(tmp_path / "run"))
    trace = Trace.FromString(open(tmp_path / "run.pftrace", "rb").read())
    assert sum(1 for p in trace.packet if p.HasField("track_event")) > 0
    # The offset is in the file: as text, or as a clock snapshot (the writer's choice).
    assert "1234567" in str(trace) or any(p.HasField("clock_snapshot") for p in trace.packet)


def test_the_clock_kernels_compile_for_nvidia_and_amd():
    from triton.backends.compiler import GPUTarget
    from kernels import compile_kernel

    nvidia = compile_kernel(clock_sync._read_globaltimer, {"out_address": "i64"}, GPUTarget("cuda", 90, 32))
    assert ", %globaltimer;" in nvidia.asm["ptx"]
    amd = compile_kernel(clock_sync._read_memrealtime, {"out_address": "i64"}, GPUTarget("hip", "gfx942", 64))
    assert "s_memrealtime s[" in amd.asm["amdgcn"] and "global_store_dwordx2" in amd.asm["amdgcn"]
