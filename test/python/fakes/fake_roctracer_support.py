"""The fake libroctracer64 (fake_roctracer/fake_roctracer.c) as pytest
fixtures shared by every test module (conftest.py imports them): built once
per test session, loaded once per process (a process loads one ROCTracer for
good). Its state in the runtime is separate from CUPTI's, so both fakes can
be loaded in one pytest process."""

import ctypes
import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

import pytest

h = pytest.importorskip("proton._host", reason="proton._host (the host profiler runtime) is not built")

FAKE_DIR = Path(__file__).resolve().parent / "fake_roctracer"


def _amd_include_dir():
    spec = importlib.util.find_spec("triton")
    if spec is None or not spec.submodule_search_locations:
        return None
    include = Path(list(spec.submodule_search_locations)[0]) / "backends" / "amd" / "include"
    return include if (include / "roctracer" / "roctracer_hip.h").is_file() else None


def _compiler():
    compiler = next(
        (path for path in map(shutil.which, (os.environ.get("CC") or "", "cc", "gcc", "clang")) if path), None
    )
    if not compiler:
        pytest.skip("no C compiler (cc/gcc/clang) to build the fake libroctracer64")
    return compiler


def _build(args, what):
    result = subprocess.run(args, capture_output=True, text=True)
    if result.returncode != 0:
        pytest.fail(f"building {what} failed:\n{result.stderr}")


@pytest.fixture(scope="session")
def roctracer_fake_path(tmp_path_factory):
    if not h.roctracer_built():
        pytest.skip("proton._host was built without the ROCTracer backend (no AMD headers at build time)")
    include = _amd_include_dir()
    if include is None:
        pytest.skip("no ROCTracer headers (triton/backends/amd/include/roctracer) to build the fake libroctracer64")
    library = tmp_path_factory.mktemp("fake_roctracer") / "libroctracer64_fake.so"
    # HIP's host headers (through roctracer_hip.h) need the platform named.
    _build(
        [
            _compiler(),
            "-shared",
            "-fPIC",
            "-O1",
            "-D__HIP_PLATFORM_AMD__",
            f"-I{include}",
            "-o",
            str(library),
            str(FAKE_DIR / "fake_roctracer.c"),
            "-lpthread",
        ],
        "the fake libroctracer64",
    )
    return library


@pytest.fixture(scope="session")
def fake_amdhip_path(tmp_path_factory):
    """A stand-in libamdhip64.so (soname libamdhip64.so) that counts
    hipDeviceSynchronize calls. Load it only in a subprocess."""
    library = tmp_path_factory.mktemp("fake_amdhip") / "libamdhip64.so"
    _build(
        [
            _compiler(),
            "-shared",
            "-fPIC",
            "-O1",
            "-Wl,-soname,libamdhip64.so",
            "-o",
            str(library),
            str(FAKE_DIR / "fake_amdhip64.c"),
        ],
        "the fake libamdhip64",
    )
    return library


_SIGNATURES = {
    "fake_hip_launch": (
        ctypes.c_uint64,
        [ctypes.c_uint32, ctypes.c_char_p, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_int],
    ),
    "fake_hip_launch_many": (ctypes.c_uint64, [ctypes.c_uint32, ctypes.c_char_p, ctypes.c_uint64, ctypes.c_int]),
    "fake_hip_memcpy": (
        ctypes.c_uint64,
        [ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64],
    ),
    "fake_hip_memset": (ctypes.c_uint64, [ctypes.c_uint32, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64]),
    "fake_hip_graph_launch": (
        ctypes.c_uint64,
        [ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t, ctypes.c_uint64, ctypes.c_uint64],
    ),
    "fake_hip_api_call": (ctypes.c_uint64, [ctypes.c_uint32]),
    "fake_hip_ops_record": (
        None,
        [ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64],
    ),
    "fake_callback_enabled": (ctypes.c_int, [ctypes.c_uint32]),
    "fake_callbacks_enabled": (ctypes.c_uint32, []),
    "fake_activity_enabled": (ctypes.c_int, [ctypes.c_uint32]),
    "fake_open_pools": (ctypes.c_int, []),
    "fake_pool_capacity": (ctypes.c_uint64, []),
    "fake_pending_records": (ctypes.c_uint64, []),
    "fake_callback_count": (ctypes.c_uint64, []),
    "fake_buffers_delivered": (ctypes.c_uint64, []),
    "fake_async_deliveries": (ctypes.c_uint64, []),
    "fake_set_device_queue": (None, [ctypes.c_int, ctypes.c_uint64]),
    "fake_fail_open_pool": (None, [ctypes.c_int]),
    "fake_names_unavailable": (None, [ctypes.c_int]),
    "fake_name_api": (None, [ctypes.c_uint32, ctypes.c_char_p]),
    "fake_api_id": (ctypes.c_uint32, [ctypes.c_char_p]),
    "fake_last_api_id": (ctypes.c_uint32, []),
}


def bind(path) -> ctypes.CDLL:
    """The fake's test-driver functions through ctypes, with their signatures."""
    lib = ctypes.CDLL(str(path))
    for name, (restype, argtypes) in _SIGNATURES.items():
        function = getattr(lib, name)
        function.restype = restype
        function.argtypes = argtypes
    return lib


@pytest.fixture(scope="module")
def roctracer_fake(roctracer_fake_path):
    """The fake libroctracer64, loaded into the runtime and (for the
    test-driver functions) through ctypes: the same path, so the same
    library. Nothing is tracing when the module ends."""
    loaded = h.roctracer_path()
    if loaded and loaded != str(roctracer_fake_path):
        pytest.skip(f"a ROCTracer ({loaded}) is already loaded in this process; run this module on its own")
    h.load_roctracer(str(roctracer_fake_path))
    lib = bind(roctracer_fake_path)
    yield lib
    h.set_active_sessions(0)
    h.stop_roctracer()
