"""The fake GPU runtime of fake_gpu_memory/fake_gpu_memory.c as the
profiler's device memory for every CPU test (an autouse fixture of
conftest.py): "device pointers" are host addresses, so tests write what a
kernel would have written (write) and read it back (view)."""

import ctypes
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from proton.device import memory as device_memory

SOURCE = Path(__file__).resolve().parent / "fake_gpu_memory" / "fake_gpu_memory.c"


@pytest.fixture(scope="session")
def fake_gpu_memory_path(tmp_path_factory):
    compiler = next((p for p in map(shutil.which, ("cc", "gcc", "clang")) if p), None)
    if compiler is None:
        pytest.skip("no C compiler (cc/gcc/clang) to build the fake GPU runtime")
    library = tmp_path_factory.mktemp("fake_gpu_memory") / "libfake_gpu_memory.so"
    result = subprocess.run(
        [compiler, "-shared", "-fPIC", "-O1", "-o", str(library), str(SOURCE)], capture_output=True, text=True
    )
    if result.returncode != 0:
        pytest.fail(f"building the fake GPU runtime failed:\n{result.stderr}")
    return library


class FakeRuntime:
    """The fake library's test functions."""

    def __init__(self, path):
        self.lib = ctypes.CDLL(str(path))
        for name in ("fake_live_allocations", "fake_live_bytes", "fake_fills", "fake_synchronizations", "fake_copies"):
            getattr(self.lib, name).restype = ctypes.c_long
        self.lib.fake_set_device.argtypes = [ctypes.c_int, ctypes.c_void_p]
        self.lib.fake_last_copy_stream.restype = ctypes.c_void_p

    def __getattr__(self, name):
        return getattr(self.lib, f"fake_{name}")


@pytest.fixture(autouse=True)
def fake_gpu_memory(request, fake_gpu_memory_path):
    """Every CPU test's profiler memory is the fake's (GPU tests keep the
    real one)."""
    if "gpu" in request.keywords:
        yield None
        return
    previous = device_memory.use(device_memory.DeviceMemory(device_memory.CudaDriver(str(fake_gpu_memory_path))))
    try:
        yield FakeRuntime(fake_gpu_memory_path)
    finally:
        device_memory.use(previous)


def view(piece, nbytes: int | None = None) -> np.ndarray:
    """The bytes of a slice of fake device memory, writable in place:
    `piece` is a Slice, or the address the launch fast path hands Triton
    (an int), whose size the launch asked for (`nbytes`)."""
    if isinstance(piece, int):
        assert nbytes is not None, "an address from the launch fast path: pass the size asked for"
        return np.ctypeslib.as_array((ctypes.c_uint8 * nbytes).from_address(piece))
    return np.ctypeslib.as_array((ctypes.c_uint8 * piece.nbytes).from_address(piece.data_ptr()))


def write(piece, data) -> None:
    """Writes `data` (bytes or a uint8 array) where a kernel would have."""
    data = np.frombuffer(bytes(data), dtype=np.uint8) if isinstance(data, (bytes, bytearray)) else data
    view(piece, len(data))[:] = data
