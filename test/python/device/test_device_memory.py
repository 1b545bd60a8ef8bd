"""The profiler's own device memory and the session's arena, on the CPU
through the fake GPU runtime (fake_gpu_memory/): what a session allocates
never comes from the program's allocator, is filled so that unwritten bytes
are told from records, is safe to allocate during a CUDA graph capture, and
is given back; a launch takes a slice with no allocation of its own; a
launch whose hook never comes, or that is not kept, gives its slice back;
past the budget launches write into a sink nobody reads; kernels launched
after every session write into the profiler's memory, never fail."""

import ctypes

import numpy as np
import pytest
import triton
from triton.runtime import _allocation

import proton
from proton.contract import kernel_metadata
from proton.contract.errors import ProfilerError
from proton.recording import arena as arenas, instrumentation_session as runtime
from proton.device import memory as device_memory

from fake_gpu_memory_support import view, write
from test_decode import make
from test_session import FakeTorch, Launch


def memory() -> device_memory.DeviceMemory:
    return device_memory.memory()


def test_allocations_are_filled_and_read_back(fake_gpu_memory):
    allocation = memory().allocate(1000)
    assert allocation.nbytes == 1000 and fake_gpu_memory.live_bytes() >= 1000
    assert (allocation.read().view("<u4") == device_memory.FILL_WORD).all()  # not what the runtime left (0xEE)
    piece = allocation.slice(256, 16)
    write(piece, bytes(range(16)))
    assert piece.read().tolist() == list(range(16)) and piece.data_ptr() == allocation.pointer + 256
    memory().refill(allocation, fill=0)
    assert not allocation.read().any()
    with pytest.raises(ValueError, match="outside an allocation of 1000 bytes"):
        allocation.slice(992, 16)
    memory().free(allocation)
    memory().free(allocation)  # twice is once
    assert allocation.freed


def test_allocation_in_a_capture_relaxes_the_threads_mode_and_gives_it_back(fake_gpu_memory):
    fake_gpu_memory.set_capture_mode(0)  # global: a cudaMalloc would invalidate the capture
    relaxed = fake_gpu_memory.relaxed_calls()
    allocation = memory().allocate(64)
    memory().free(allocation)
    assert fake_gpu_memory.relaxed_calls() == relaxed + 2 and fake_gpu_memory.capture_mode() == 0
    fake_gpu_memory.set_capture_mode(1)  # thread-local: kept as the program set it
    memory().free(memory().allocate(64))
    assert fake_gpu_memory.capture_mode() == 1
    fake_gpu_memory.set_capture_mode(0)


def test_an_allocation_that_fails_names_the_runtime_and_the_size(fake_gpu_memory):
    fake_gpu_memory.fail_allocations(1)
    with pytest.raises(ProfilerError, match=r"CUDA driver cuMemAlloc of 4096 bytes failed: CUDA_ERROR_OUT_OF_MEMORY"):
        memory().allocate(4096)
    assert fake_gpu_memory.capture_mode() == 0  # the mode was given back on the way out


def test_hip_runtime_calls(fake_gpu_memory_path, fake_gpu_memory):
    hip = device_memory.DeviceMemory(device_memory.HipRuntime(str(fake_gpu_memory_path)))
    fake_gpu_memory.set_device(1, None)
    allocation = hip.allocate(64)
    assert allocation.device == 1 and (allocation.read().view("<u4") == device_memory.FILL_WORD).all()
    fake_gpu_memory.set_device(0, ctypes.c_void_p(0x1000))
    assert hip.read(allocation, 0, 8).size == 8
    hip.free(allocation)
    fake_gpu_memory.set_device(0, ctypes.c_void_p(0x1000))


def test_a_missing_runtime_is_a_clear_error(tmp_path):
    with pytest.raises(ProfilerError, match="cannot load the CUDA driver runtime for profiler memory"):
        device_memory.CudaDriver(str(tmp_path / "libcuda.so.1"))


# -- the arena ----------------------------------------------------------------


def test_the_arena_hands_out_slices_of_chunks_within_its_budget(fake_gpu_memory):
    arena = arenas.Arena(memory(), budget_bytes=3000)
    live = fake_gpu_memory.live_allocations()
    a, b = arena.take(1000, stream=7), arena.take(1000, stream=7)
    assert fake_gpu_memory.live_allocations() == live + 1  # one chunk, no allocation per launch
    assert b.data_ptr() - a.data_ptr() >= 1000 + arenas.GUARD_BYTES and a.data_ptr() % arenas.ALIGN == 0
    assert arena.kept_bytes == 2000 and arena.take(1001, stream=7) is None  # past the budget
    arena.give_back(a, stream=7)
    assert arena.take(1000, stream=8).data_ptr() != a.data_ptr()  # another stream: not the given-back one
    arena.give_back(b, stream=7)
    assert arena.take(1000, stream=7) is b  # after b's launch on its stream
    sink = arena.sink(5000)
    assert sink.nbytes == 5000 and arena.sink(100).allocation is sink.allocation
    arena.release()
    assert fake_gpu_memory.live_allocations() == live


def test_guards_tell_a_buffer_something_wrote_past(fake_gpu_memory):
    arena = arenas.Arena(memory(), budget_bytes=1 << 20)
    piece = arena.take(512, stream=0)
    write(piece, np.zeros(512, np.uint8))  # the kernel's own bytes: guard untouched
    assert arenas.guard_intact(piece)
    end = piece.data_ptr() + piece.nbytes
    ctypes.memset(end + 8, 0, 4)  # someone wrote 8 bytes past it
    assert not arenas.guard_intact(piece)
    arena.reset()  # refilled between phases
    assert arenas.guard_intact(arena.take(512, stream=0))
    arena.release()


# -- sessions -------------------------------------------------------------------


@pytest.fixture
def session(tmp_path):
    s = proton.start(str(tmp_path / "run"), backend="instrumentation", quiet=True)
    s._torch = FakeTorch()
    yield s
    if runtime._session is s:
        proton.finalize()


def launch(data, name="vector_add", handle=None, hook=True):
    """What Triton's launcher does: allocate, then call the launch hook."""
    piece = _allocation._profile_allocator(data.size, 16, 0)
    write(piece, data)
    if hook:
        launch_data = Launch(name)
        launch_data.data["function"] = handle
        triton.knobs.runtime.launch_enter_hook(launch_data)
    return piece


def test_the_launch_is_decoded_with_its_own_kernels_metadata(session, fake_gpu_memory):
    """The launched kernel's id (Triton's load hook, by its handle) picks
    the metadata; a buffer holding another kernel's records is reported as
    overwritten, never decoded as this kernel's."""
    data, meta = make(ctas=2, kernel_id=301)
    other, other_meta = make(ctas=2, kernel_id=302)
    kernel_metadata.register(meta)
    kernel_metadata.register(other_meta)
    kernel_metadata.register_loaded(0xAB01, 301)
    launch(data, handle=0xAB01)
    launch(other, handle=0xAB01)  # kernel 302's records in kernel 301's launch
    report = proton.finalize()
    assert report.per_kernel["vector_add"]["events"] > 0 and len(report.errors) == 1
    assert "launch 1" in report.errors[0] and "written by kernel id 302, not 301" in report.errors[0]


def test_a_buffer_nobody_wrote_is_reported_as_such(session):
    data, meta = make(ctas=2, kernel_id=303)
    kernel_metadata.register(meta)
    kernel_metadata.register_loaded(0xAB02, 303)
    piece = _allocation._profile_allocator(data.size, 16, 0)  # the kernel never ran: fill words only
    hook = Launch("vector_add")
    hook.data["function"] = 0xAB02
    triton.knobs.runtime.launch_enter_hook(hook)
    assert (view(piece).view("<u4") == device_memory.FILL_WORD).all()
    report = proton.finalize()
    assert report.events == 0 and "has no header magic" in report.errors[0]
    assert "was the kernel launched, and did it return normally?" in report.errors[0]


def test_a_write_past_the_buffer_is_reported(session):
    data, meta = make(ctas=2, kernel_id=304)
    kernel_metadata.register(meta)
    piece = launch(data)
    ctypes.memset(piece.data_ptr() + piece.nbytes, 0x11, 16)  # a kernel writing out of its bounds
    report = proton.finalize()
    assert report.events == 0 and "the memory right after its profile buffer was overwritten" in report.errors[0]


def test_a_buffer_whose_launch_never_came_is_not_kept(session):
    """A launch that fails after Triton allocated its buffer never calls the
    launch hook: the next allocation, or a launch of a kernel without
    records, finds the buffer unclaimed; nothing of it is decoded."""
    data, meta = make(ctas=2, kernel_id=305)
    kernel_metadata.register(meta)
    launch(data, hook=False)  # failed
    launch(data)  # kept
    launch(data, hook=False)  # failed
    plain = Launch("plain_kernel")
    plain.data["function"] = 0xAB99  # not an instrumented kernel: the buffer was not its
    triton.knobs.runtime.launch_enter_hook(plain)
    assert len(session.kept) == 1
    report = proton.finalize()
    assert report.launches_kept == 1 and report.errors == [] and report.unlaunched_buffers == 2
    assert "2 profile buffers were handed out to launches that did not reach Triton's launch hook" in report.summary()


def test_launches_past_the_budget_write_into_a_sink(tmp_path):
    data, meta = make(ctas=2, kernel_id=306)
    kernel_metadata.register(meta)
    s = proton.start(str(tmp_path / "run"), backend="instrumentation", quiet=True, max_buffer_bytes=data.size)
    s._torch = FakeTorch()
    kept, past = launch(data), launch(data)
    assert past.allocation is not kept.allocation and s.kept_bytes == data.size
    report = proton.finalize()
    assert report.launches_kept == 1 and report.per_kernel["vector_add"]["not_kept"] == {"budget": 1}


def test_kernels_launched_after_the_session_write_into_profiler_memory(tmp_path, fake_gpu_memory):
    """Libraries keep the kernels a session compiled and launch them later:
    Triton then calls the profile allocator, which must not refuse (Triton's
    own raises) nor hand out the program's memory."""
    s = proton.start(str(tmp_path / "run"), backend="instrumentation", quiet=True)
    s._torch = FakeTorch()
    proton.finalize()
    allocator = _allocation._profile_allocator.get()
    assert allocator is runtime.late_launch_sink
    first = allocator(5000, 16, 0)
    assert first.nbytes == 5000 and allocator(100, 16, 0).allocation is first.allocation
    assert allocator(20000, 16, 0).nbytes == 20000
    _allocation.set_profile_allocator(None)


def test_the_load_hook_registers_handles_and_kernels_compiled_with_nothing_to_record(tmp_path):
    """Triton calls the load hook for every kernel it loads (compiled now or
    from its disk cache): an instrumented kernel's handle gets its kernel
    id; a kernel a session compiled with nothing to record is named so."""
    import json

    from proton.compiling import stage_hook

    data, meta = make(ctas=1, kernel_id=307)
    instrumented = tmp_path / "k.json"
    instrumented.write_text(json.dumps({"proton": json.dumps(meta.to_dict())}))
    stage_hook.register_loaded_kernel(None, 0xCD01, "k", {"k.json": str(instrumented)}, "h")
    assert kernel_metadata.LAUNCHED[0xCD01] == 307 and kernel_metadata.KERNELS[307] == meta
    plain = tmp_path / "p.json"
    plain.write_text(json.dumps({"instrumentation_mode": stage_hook.MODE_PREFIX + "default:..."}))
    stage_hook.register_loaded_kernel(None, 0xCD02, "p", {"p.json": str(plain)}, "h")
    assert 0xCD02 not in kernel_metadata.LAUNCHED and "p" in stage_hook.LOADED_WITHOUT_RECORDS
    other = tmp_path / "o.json"
    other.write_text(json.dumps({"instrumentation_mode": ""}))
    stage_hook.register_loaded_kernel(None, 0xCD03, "o", {"o.json": str(other)}, "h")
    assert "o" not in stage_hook.LOADED_WITHOUT_RECORDS


def test_a_thread_without_a_current_context_gets_the_primary_one(fake_gpu_memory):
    fake_gpu_memory.set_device(0, None)  # no context current on this thread
    allocation = memory().allocate(64)
    assert allocation.key == 0x1000  # the primary context of device 0, made current
    memory().free(allocation)
    fake_gpu_memory.set_device(0, ctypes.c_void_p(0x1000))
