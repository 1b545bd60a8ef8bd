"""The session API without a GPU: start/activate/deactivate/finalize, hooks
installed and restored, instrumented compiles for cuda:90 through the session,
launch bookkeeping and finalize on simulated launches, and misuse errors."""

import json
import os
import sys

import numpy as np
import pytest
import triton
from triton.backends.compiler import GPUTarget
from triton.runtime import _allocation

import proton
from proton.contract import kernel_metadata
from proton.contract.kernel_metadata import KernelMetadata
from proton.compiling import stage_hook as hook_mod
from proton.recording import instrumentation_session as runtime
from proton.session.options import SessionOptions

from kernels import VECTOR_ADD_SIGNATURE, compile_kernel, vector_add
from test_decode import make
from fake_gpu_memory_support import view, write
import suite_paths

CUDA90 = GPUTarget("cuda", 90, 32)


pytestmark = pytest.mark.usefixtures("no_instrumentation_session_left")


def test_start_instruments_and_finalize_restores(tmp_path):
    previous_allocator = _allocation._profile_allocator.get()
    proton.start(str(tmp_path / "run"), mode="default:optimizations=clock32", quiet=True, backend="instrumentation")
    hook = triton.knobs.runtime.add_stages_inspection_hook
    assert isinstance(hook, hook_mod.StageHook)
    # Triton 3.6 keys instrumented builds by the mode option, 3.7+ by the hook's key.
    assert (
        triton.knobs.compilation.instrumentation_mode.startswith(hook_mod.MODE_PREFIX) != hook_mod.HOOK_GIVES_CACHE_KEY
    )
    kernel = compile_kernel(vector_add, VECTOR_ADD_SIGNATURE, CUDA90, BLOCK=1024)
    meta = json.loads(kernel.metadata.proton)
    assert kernel_metadata.KERNELS[meta["kernel_id"]] == KernelMetadata.from_dict(meta)
    assert meta["layout"]["clock_bits"] == 32 and [s["name"] for s in meta["scopes"]] == ["kernel", "load", "store"]
    # the kernel id is written into every segment header
    assert f"{meta['kernel_id']}" in kernel.asm["llir"]
    assert kernel.asm["ptx"].count("%clock;") == 6
    report = proton.finalize()
    # Nothing recorded: the outputs are written all the same (empty).
    assert report.events == 0 and sorted(report.files) == ["chrome_trace", "pftrace", "tree"]
    assert triton.knobs.runtime.add_stages_inspection_hook is None
    assert not triton.knobs.compilation.instrumentation_mode
    # Kernels the session compiled may be launched later (libraries keep them): they write into the
    # profiler's memory, where Triton's own null allocator would refuse them.
    assert previous_allocator is runtime.late_launch_sink or isinstance(previous_allocator, _allocation.NullAllocator)
    assert _allocation._profile_allocator.get() is runtime.late_launch_sink
    plain = compile_kernel(vector_add, VECTOR_ADD_SIGNATURE, CUDA90, BLOCK=1024)
    assert "%clock" not in plain.asm["ptx"] and plain.hash != kernel.hash


def test_modes_compile_separately(tmp_path):
    hashes = set()
    for mode in (
        "default",
        "default:optimizations=clock32",
        proton.mode.Default(buffer_type="global"),
        "default:buffer_type=registers",
    ):
        with proton.profile(str(tmp_path / "run"), mode=mode, quiet=True, backend="instrumentation"):
            hashes.add(compile_kernel(vector_add, VECTOR_ADD_SIGNATURE, CUDA90, BLOCK=1024).hash)
    assert len(hashes) == 4


def test_deactivate_compiles_plain(tmp_path):
    proton.start(str(tmp_path / "run"), quiet=True, backend="instrumentation")
    proton.deactivate()
    assert "%clock" not in compile_kernel(vector_add, VECTOR_ADD_SIGNATURE, CUDA90, BLOCK=512).asm["ptx"]
    proton.activate()
    assert "%clock" in compile_kernel(vector_add, VECTOR_ADD_SIGNATURE, CUDA90, BLOCK=512).asm["ptx"]
    proton.finalize()


def test_misuse_errors(tmp_path):
    assert proton.finalize() is None  # nothing open: nothing to do, as in Triton's Proton
    with pytest.raises(proton.ProfilerError, match="unknown backend 'nsight'"):
        proton.start("x", backend="nsight")
    with pytest.raises(proton.ProfilerError, match="context='python' applies to host backends"):
        proton.start("x", backend="instrumentation", context="python")
    with pytest.raises(proton.ModeError, match="pcsampling is a host profiler mode"):
        proton.start("x", backend="instrumentation", mode="pcsampling")
    with pytest.raises(proton.ModeError, match="valid keys"):
        proton.start("x", mode="default:clock=32", backend="instrumentation")
    with pytest.raises(proton.ProfilerError, match="unknown output 'svg'"):
        proton.start("x", outputs=["svg"], backend="instrumentation")
    proton.start(str(tmp_path / "a"), quiet=True, backend="instrumentation")
    with pytest.raises(proton.ProfilerError, match="one instrumentation session at a time"):
        proton.start("b", backend="instrumentation")
    proton.finalize()


class FakeTorch:
    """Stands in for torch on a CPU machine: buffers are numpy arrays that a
    test fills with what a kernel would have written."""

    uint8 = np.uint8

    class cuda:
        @staticmethod
        def synchronize():
            pass

        @staticmethod
        def current_device():
            return 0

        @staticmethod
        def get_device_name():
            return "FakeGPU"

    class Buffer:
        def __init__(self, size):
            self.array = np.zeros(size, dtype=np.uint8)

        def numel(self):
            return self.array.size

        def cpu(self):
            return self

        def numpy(self):
            return self.array

    def empty(self, size, dtype=None, device=None):
        return self.Buffer(size)


class Launch:
    """What Triton's launcher passes to launch_enter_hook."""

    def __init__(self, name):
        self.data = {"name": name}


def simulate_launches(session, count, kernel_id=7, name="vector_add"):
    session._torch = FakeTorch()
    data, meta = make(ctas=3, kernel_id=kernel_id)
    kernel_metadata.register(meta)
    for _ in range(count):
        buffer = _allocation._profile_allocator(data.size, 16, 0)  # what the launcher calls
        write(buffer, data)
        triton.knobs.runtime.launch_enter_hook(Launch(name))


def test_finalize_decodes_kept_launches_and_writes_outputs(tmp_path, capsys):
    name = str(tmp_path / "run")
    session = proton.start(name, max_launches_per_kernel=3, backend="instrumentation")
    simulate_launches(session, 5)
    report = proton.finalize()
    assert report.launches_kept == 3 and report.launches_skipped == 2
    assert report.events == 3 * 36 and report.errors == []
    # the last three launches are the ones kept
    root, _devices = json.load(open(report.files["tree"]))
    assert root["children"][0]["metrics"]["count"] == 3  # the kernel's node counts launches
    assert set(report.files) == {"chrome_trace", "pftrace", "tree"}
    assert all(os.path.getsize(p) > 0 for p in report.files.values())
    assert report.files["pftrace"] == os.path.abspath(name + ".pftrace")
    err = capsys.readouterr().err
    assert "108 scope events from 3 launches (2 launches not kept: see below)" in err
    assert "vector_add: 3 launches kept, 108 events (shared buffer, 1024 B (128 records) per warp); not kept: 2 " in err
    assert "2 older than the last max_launches_per_kernel" in err
    assert report.buffers == {"vector_add": "shared buffer, 1024 B (128 records) per warp"}
    assert launch_hooks_empty()


def test_op_measure_writes_only_the_tree(tmp_path):
    session = proton.start(str(tmp_path / "run"), mode="op_measure", quiet=True, backend="instrumentation")
    simulate_launches(session, 1)
    report = proton.finalize()
    assert set(report.files) == {"tree"}
    root, _devices = json.load(open(report.files["tree"]))
    assert root["children"][0]["children"][0]["metrics"]["count"] == 12


def test_buffer_of_unknown_kernel_is_reported_not_raised(tmp_path):
    session = proton.start(str(tmp_path / "run"), quiet=True, backend="instrumentation")
    simulate_launches(session, 1, kernel_id=123456)
    kernel_metadata.KERNELS.pop(123456)
    report = proton.finalize()
    assert report.events == 0
    assert report.errors == [
        "vector_add launch 0: no metadata for kernel id 123456 of vector_add: it was not "
        "compiled or loaded while a Proton session was active (or its buffer is corrupted)"
    ]


def test_corrupted_buffer_is_reported_with_kernel_and_launch(tmp_path):
    session = proton.start(str(tmp_path / "run"), quiet=True, backend="instrumentation")
    session._torch = FakeTorch()
    data, meta = make(ctas=3, kernel_id=99)
    kernel_metadata.register(meta)
    buffer = _allocation._profile_allocator(data.size, 16, 0)
    write(buffer, data)
    view(buffer)[-200:] = 0xAB  # garbage over the last CTA's records
    view(buffer)[meta.layout.bytes_per_cta * 2 + 3] = 0  # and its magic (header word 0, top byte)
    triton.knobs.runtime.launch_enter_hook(Launch("k"))
    report = proton.finalize()
    assert len(report.errors) == 1 and report.errors[0].startswith("k launch 0: profile buffer is corrupted: CTA 2")


def launch_hooks_empty():
    """No launch hook of an instrumentation session is left in Triton's
    chain (its Python hook, or the launch fast path's)."""
    calls = triton.knobs.runtime.launch_enter_hook.calls
    python = runtime.InstrumentationSession._on_launch in [getattr(c, "__func__", None) for c in calls]
    fast = any(type(getattr(c, "__self__", None)).__name__ == "InstrumentedLaunches" for c in calls)
    return not python and not fast


def test_recorded_gpu_buffers_decode():
    """Buffers an H200 wrote (test_gpu_session.py::test_save_fixtures)."""
    directory = str(suite_paths.FIXTURES)
    names = sorted(f[:-4] for f in os.listdir(directory) if f.endswith(".npy"))
    assert names == ["vector_add_clock32", "vector_add_clock64"]
    from proton.recording import decode

    for name in names:
        info = json.load(open(os.path.join(directory, name + ".json")))
        meta = KernelMetadata.from_dict(info["metadata"])
        ev = decode.decode(np.load(os.path.join(directory, name + ".npy")), meta, info["num_ctas"])
        assert ev.num_events == info["num_ctas"] * 4 * 3 and ev.unmatched == 0 and ev.dropped.sum() == 0
        assert (ev.duration_cycles > 0).all()
        # ns keep sub-ns precision: durations follow the cycles
        ns = ev.end_ns - ev.start_ns
        assert np.allclose(ns, ev.duration_cycles / ev.clock_ghz, rtol=1e-6)
        assert 0.5 < ev.clock_ghz < 3.5
        assert set(ev.sm.tolist()) <= set(range(200))


@pytest.mark.parametrize(
    "version, built_for",
    [
        ({"hip": "6.2.41133", "cuda": None}, r"ROCm \(HIP 6\.2\.41133\)"),
        ({"hip": None, "cuda": "12.8"}, r"CUDA 12\.8"),
        ({"hip": None, "cuda": None}, r"no GPU runtime \(CPU-only build\)"),
    ],
)
def test_launch_without_a_gpu_runtime_is_a_clear_error(monkeypatch, version, built_for):
    """A machine whose PyTorch sees no device (no ROCm or CUDA driver): the
    first instrumented launch fails with what is missing, not a crash."""
    import types

    fake = types.ModuleType("torch")
    fake.cuda = types.SimpleNamespace(is_available=lambda: False)
    fake.version = types.SimpleNamespace(**version)
    monkeypatch.setitem(sys.modules, "torch", fake)
    options = SessionOptions("nogpu", "instrumentation", proton.mode.Default(), quiet=True)
    session = runtime.InstrumentationSession(options)
    with pytest.raises(proton.ProfilerError, match=f"PyTorch sees no GPU: this PyTorch is built for {built_for}"):
        session._allocate(1024, 16, None)


@pytest.mark.parametrize("version", ["3.5.1", "3.4.0", "2.3.1"])
def test_triton_without_the_stage_hook_is_a_clear_error(monkeypatch, tmp_path, version):
    monkeypatch.setattr(triton, "__version__", version)
    with pytest.raises(
        proton.ProfilerError,
        match=rf"needs Triton 3\.6 to 3\.9; the installed Triton {version} has no "
        "stage inspection hook",
    ):
        proton.start(str(tmp_path / "old"), backend="instrumentation", quiet=True)
    assert runtime._session is None and triton.knobs.runtime.add_stages_inspection_hook is None
    # Nothing of the session that did not start stays installed.
    assert _allocation._profile_allocator.get() is not None
    assert not any(
        getattr(c, "__self__", None).__class__.__name__ == "InstrumentationSession"
        for c in [_allocation._profile_allocator.get(), *triton.knobs.runtime.launch_enter_hook.calls]
    )


def test_newer_triton_gets_a_warning(monkeypatch):
    monkeypatch.setattr(triton, "__version__", "3.10.0")
    with pytest.warns(UserWarning, match="tested with Triton 3.6 to 3.9, not 3.10.0"):
        hook_mod.check_triton_version()
