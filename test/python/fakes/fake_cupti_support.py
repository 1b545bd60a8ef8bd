"""The fake libcupti (fake_cupti/fake_cupti.c) as pytest fixtures shared by
every test module (conftest.py imports them): built once per test session,
loaded once per process (a process loads one CUPTI for good)."""

import ctypes
import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

import pytest

h = pytest.importorskip("proton._host", reason="proton._host (the host profiler runtime) is not built")

FAKE_SOURCE = Path(__file__).resolve().parent / "fake_cupti" / "fake_cupti.c"


def _cupti_include_dir():
    spec = importlib.util.find_spec("triton")
    if spec is None or not spec.submodule_search_locations:
        return None
    include = Path(list(spec.submodule_search_locations)[0]) / "backends" / "nvidia" / "include"
    return include if (include / "cupti.h").is_file() else None


def _compile_fake(out_dir: Path) -> Path:
    compiler = next(
        (path for path in map(shutil.which, (os.environ.get("CC") or "", "cc", "gcc", "clang")) if path), None
    )
    if not compiler:
        pytest.skip("no C compiler (cc/gcc/clang) to build the fake libcupti")
    include = _cupti_include_dir()
    if include is None:
        pytest.skip("no CUPTI headers (triton/backends/nvidia/include/cupti.h) to build the fake libcupti")
    library = out_dir / "libcupti_fake.so"
    result = subprocess.run(
        [compiler, "-shared", "-fPIC", "-O1", "-o", str(library), str(FAKE_SOURCE), f"-I{include}", "-lpthread"],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        pytest.fail(f"building the fake libcupti failed:\n{result.stderr}")
    return library


@pytest.fixture(scope="session")
def fake_path(tmp_path_factory):
    return _compile_fake(tmp_path_factory.mktemp("fake_cupti"))


@pytest.fixture(scope="module")
def fake(fake_path):
    """The fake libcupti, loaded into the runtime and (for the test-driver
    functions) through ctypes: the same path, so the same library. A process
    loads one CUPTI for good: once the fake is in, a real one cannot be."""
    loaded = h.cupti_path()
    if loaded and loaded != str(fake_path):
        pytest.skip(f"a CUPTI ({loaded}) is already loaded in this process; run this module on its own")
    h.load_cupti(str(fake_path))
    lib = ctypes.CDLL(str(fake_path))
    u32, u64, cstr, i32 = ctypes.c_uint32, ctypes.c_uint64, ctypes.c_char_p, ctypes.c_int
    signatures = {
        "fake_launch": (u32, [u32, cstr, u64, u64, i32]),
        "fake_launch_many": (u32, [cstr, u64, i32]),
        "fake_kernel_record": (None, [u32, u64, cstr, u64, u64]),
        "fake_capture_launch": (u64, [cstr]),
        "fake_add_kernel_node": (u64, [cstr]),
        "fake_clone_node": (u64, [u64]),
        "fake_destroy_node": (i32, [u64]),
        "fake_graph_launch": (u32, [ctypes.POINTER(u64), ctypes.c_size_t, u64, u64]),
        "fake_memcpy": (u32, [u32, u32, u64, u64, u64]),
        "fake_memset": (u32, [u64, u64, u64]),
        "fake_api_call": (u32, [u32]),
        "fake_is_enabled": (i32, [u32, u32]),
        "fake_activity_enabled": (i32, [u32]),
        "fake_subscribed": (i32, []),
        "fake_subscribe_other": (i32, []),
        "fake_release_other": (None, []),
        "fake_set_dropped": (None, [u64]),
        "fake_set_device_stream": (None, [u32, u32]),
        "fake_callback_count": (u64, []),
        "fake_buffers_completed": (u64, []),
        "fake_finalize_count": (u64, []),
        "fake_pending_records": (u64, []),
        "fake_slot_bytes": (u64, []),
    }
    for name, (restype, argtypes) in signatures.items():
        function = getattr(lib, name)
        function.restype = restype
        function.argtypes = argtypes
    yield lib
    # Leave no tracing running on the fake for tests after this module.
    h.set_active_sessions(0)
    h.stop_cupti()


def reset_thread_state():
    """No session active, no state, no pending launch metrics, no scope open
    on this thread: the runtime's per-thread state is process-wide."""
    h.set_active_sessions(0)
    h.set_state(None)
    h.clear_launch_metrics()
    for name in reversed(h.scope_stack()):
        h.exit_scope(name)


@pytest.fixture
def fake_host_sessions(fake_path, monkeypatch):
    """Host sessions over the fake libcupti: PROTON_CUPTI_LIB points at it,
    and no session, scope or state is left from the test before or for the
    one after (a session still open is finalized)."""
    import proton

    monkeypatch.setenv("PROTON_CUPTI_LIB", str(fake_path))
    reset_thread_state()
    yield
    if proton.sessions():
        proton.finalize()
    reset_thread_state()
