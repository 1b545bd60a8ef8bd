"""The fake librocprofiler-sdk (fake_rocprofiler/fake_rocprofiler_sdk.c) as
pytest fixtures: built once per test session, loaded and configured once per
process (rocprofiler-sdk takes one tool per process, for good). It is built
against the runtime's own transcription of the SDK's types
(include/proton/Host/RocprofilerSdkTypes.h), so it needs no ROCm headers."""

import ctypes
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import suite_paths

h = pytest.importorskip("proton._host", reason="proton._host (the host profiler runtime) is not built")

FAKE_DIR = Path(__file__).resolve().parent / "fake_rocprofiler"
INCLUDE_DIR = suite_paths.REPO / "include"


def _compiler():
    compiler = next(
        (path for path in map(shutil.which, (os.environ.get("CC") or "", "cc", "gcc", "clang")) if path), None
    )
    if not compiler:
        pytest.skip("no C compiler (cc/gcc/clang) to build the fake librocprofiler-sdk")
    return compiler


@pytest.fixture(scope="session")
def rocprofiler_fake_path(tmp_path_factory):
    library = tmp_path_factory.mktemp("fake_rocprofiler") / "librocprofiler-sdk.so.1"
    result = subprocess.run(
        [
            _compiler(),
            "-shared",
            "-fPIC",
            "-O1",
            f"-I{INCLUDE_DIR}",
            "-o",
            str(library),
            str(FAKE_DIR / "fake_rocprofiler_sdk.c"),
            "-lpthread",
        ],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        pytest.fail(f"building the fake librocprofiler-sdk failed:\n{result.stderr}")
    return library


_U64, _U32 = ctypes.c_uint64, ctypes.c_uint32
_SIGNATURES = {
    "fake_register_kernel": (None, [_U64, ctypes.c_char_p]),
    "fake_hip_launch": (_U64, [_U32, _U64, _U64, _U64, _U32, _U64, ctypes.c_int]),
    "fake_hip_launch_many": (None, [_U32, _U64, _U64]),
    "fake_hip_memcpy": (_U64, [_U32, _U32, _U64, _U64, _U64]),
    "fake_hip_graph_launch": (_U64, [_U32, ctypes.POINTER(_U64), ctypes.c_size_t, _U64, _U64]),
    "fake_hip_api_call": (_U64, [_U32]),
    "fake_dispatch_record": (None, [_U64, _U64, _U64, _U64]),
    "fake_drop_records": (None, [_U64]),
    "fake_op_id": (_U32, [ctypes.c_char_p]),
    "fake_op_count": (_U32, []),
    "fake_op_traced": (ctypes.c_int, [_U32]),
    "fake_ops_traced": (_U32, []),
    "fake_initialized": (ctypes.c_int, []),
    "fake_context_active": (ctypes.c_int, []),
    "fake_symbols_traced": (ctypes.c_int, []),
    "fake_buffer_services": (ctypes.c_int, []),
    "fake_client_name": (ctypes.c_char_p, []),
    "fake_pending_records": (_U64, []),
    "fake_watermark_records": (_U64, []),
    "fake_callback_count": (_U64, []),
    "fake_deliveries": (_U64, []),
    "fake_async_deliveries": (_U64, []),
    "fake_fail_create_buffer": (None, [ctypes.c_int]),
    "fake_names_unavailable": (None, [ctypes.c_int]),
    "fake_skip_initialize": (None, [ctypes.c_int]),
    "fake_configured_by_other_tool": (None, []),
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
def rocprofiler_fake(rocprofiler_fake_path):
    """The fake librocprofiler-sdk, loaded into the runtime and configured
    (the first start), and bound through ctypes: the same path, so the same
    library. Nothing is tracing when the module ends."""
    loaded = h.rocprofiler_path()
    if loaded and loaded != str(rocprofiler_fake_path):
        pytest.skip(f"a rocprofiler-sdk ({loaded}) is already loaded in this process; run this module on its own")
    lib = bind(rocprofiler_fake_path)
    if not h.rocprofiler_configured():
        # Registered before the SDK takes the tool: its names come by replay.
        lib.fake_register_kernel(1, b"rp_early_kernel.kd")
    h.load_rocprofiler(str(rocprofiler_fake_path))
    h.start_rocprofiler()
    yield lib
    h.set_active_sessions(0)
    h.stop_rocprofiler()
