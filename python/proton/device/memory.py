"""Device memory that belongs to the profiler alone.

Everything a session writes on the GPU (profile buffers, clock reads,
device-metric sums) lives in memory allocated here, with the GPU runtime's
own allocator (the CUDA driver's cuMemAlloc, HIP's hipMalloc), never with
the program's (PyTorch's caching allocator). So a session never takes or
returns a block the program would otherwise have used: the program's
tensors lie where they lie in a plain run, and what a buggy library reads
or writes out of its own bounds is what it would be without the profiler.

Allocation is safe during CUDA graph capture (the thread's capture mode is
relaxed around it: the allocation is not part of the graph). New memory is
filled with FILL_WORD, on a stream of the profiler's own, so that bytes no
kernel wrote are told from records.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import threading
from dataclasses import dataclass, field

import numpy as np

from ..contract.errors import ProfilerError

#: What fresh profiler memory holds: a 32-bit word no record header starts
#: with (a header's word 0 has 0x5250 in its top half).
FILL_WORD = 0x5A5A5A5A

_c_ptr = ctypes.c_void_p
_c_size = ctypes.c_size_t


class _Runtime:
    """One GPU runtime's memory calls, through ctypes."""

    name: str
    library_names: tuple[str, ...]
    env: str  # the variable that names the library instead

    def __init__(self, path: str | None = None):
        candidates = [path] if path else [os.environ.get(self.env) or None, *self.library_names]
        errors = []
        for candidate in filter(None, candidates):
            try:
                self.lib = ctypes.CDLL(candidate)
                self.path = candidate
                break
            except OSError as error:
                errors.append(str(error))
        else:
            raise ProfilerError(f"cannot load the {self.name} runtime for profiler memory: {'; '.join(errors)}")

    def _fn(self, name, *argtypes):
        function = getattr(self.lib, name)
        function.argtypes = argtypes
        function.restype = ctypes.c_int
        return function

    def context_function_address(self) -> int | None:
        """The address of the C function that gives current_key's value
        (for the launch fast path, which calls it itself), or None."""
        return None

    def check(self, result: int, what: str) -> None:
        if result != 0:
            raise ProfilerError(f"{self.name} {what} failed: {self.error_name(result)}")


class CudaDriver(_Runtime):
    name = "CUDA driver"
    library_names = ("libcuda.so.1", "libcuda.so")
    env = "PROTON_CUDA_DRIVER_LIB"
    RELAXED_CAPTURE = 2  # CU_STREAM_CAPTURE_MODE_RELAXED

    def __init__(self, path: str | None = None):
        super().__init__(path)
        u64 = ctypes.c_uint64
        self._alloc = self._fn("cuMemAlloc_v2", ctypes.POINTER(u64), _c_size)
        self._free = self._fn("cuMemFree_v2", u64)
        self._to_host = self._fn("cuMemcpyDtoH_v2", _c_ptr, u64, _c_size)
        self._fill = self._fn("cuMemsetD32Async", u64, ctypes.c_uint, _c_size, _c_ptr)
        self._copy = self._fn("cuMemcpyDtoDAsync_v2", u64, u64, _c_size, _c_ptr)
        self._stream_create = self._fn("cuStreamCreate", ctypes.POINTER(_c_ptr), ctypes.c_uint)
        self._stream_sync = self._fn("cuStreamSynchronize", _c_ptr)
        self._get_context = self._fn("cuCtxGetCurrent", ctypes.POINTER(_c_ptr))
        self._set_context = self._fn("cuCtxSetCurrent", _c_ptr)
        self._context_device = self._fn("cuCtxGetDevice", ctypes.POINTER(ctypes.c_int))
        self._context_sync = self._fn("cuCtxSynchronize")
        self._primary_retain = self._fn("cuDevicePrimaryCtxRetain", ctypes.POINTER(_c_ptr), ctypes.c_int)
        self._local = threading.local()  # current_key's out-parameter, one per thread
        self._capture_mode = self._fn("cuThreadExchangeStreamCaptureMode", ctypes.POINTER(ctypes.c_int))
        self._error_name = self._fn("cuGetErrorName", ctypes.c_int, ctypes.POINTER(ctypes.c_char_p))

    def error_name(self, result: int) -> str:
        name = ctypes.c_char_p()
        if self._error_name(result, ctypes.byref(name)) == 0 and name.value:
            return name.value.decode()
        return f"error {result}"

    def context_function_address(self) -> int | None:
        return ctypes.cast(self._get_context, ctypes.c_void_p).value  # cuCtxGetCurrent

    def current_key(self) -> object:
        """The current context (per launch: one call), else None."""
        local = self._local
        out = getattr(local, "out", None)
        if out is None:
            out = local.out = _c_ptr()
            local.ref = ctypes.byref(out)
        self._get_context(local.ref)
        return out.value

    def current_device(self) -> tuple[object, int]:
        """(the current context, its device index): where launches on this
        thread run and where their memory must be."""
        context = _c_ptr()
        self.check(self._get_context(ctypes.byref(context)), "cuCtxGetCurrent")
        if not context.value:
            # A thread where the CUDA runtime made no context current yet: the
            # primary context of PyTorch's current device, as the runtime would.
            torch = __import__("sys").modules.get("torch")
            ordinal = torch.cuda.current_device() if torch is not None else 0
            self.check(self._primary_retain(ctypes.byref(context), ordinal), "cuDevicePrimaryCtxRetain")
            self.check(self._set_context(context), "cuCtxSetCurrent")
        device = ctypes.c_int()
        self.check(self._context_device(ctypes.byref(device)), "cuCtxGetDevice")
        return context.value, device.value

    def enter(self, key) -> object:
        """Makes `key` (a context) current; returns what was."""
        context = _c_ptr()
        self.check(self._get_context(ctypes.byref(context)), "cuCtxGetCurrent")
        if context.value != key:
            self.check(self._set_context(key), "cuCtxSetCurrent")
        return context.value

    def leave(self, previous, key) -> None:
        if previous != key and previous:
            self._set_context(previous)

    def exchange_capture_mode(self, mode: int) -> int:
        value = ctypes.c_int(mode)
        self.check(self._capture_mode(ctypes.byref(value)), "cuThreadExchangeStreamCaptureMode")
        return value.value

    def allocate(self, nbytes: int) -> int:
        pointer = ctypes.c_uint64()
        self.check(self._alloc(ctypes.byref(pointer), nbytes), f"cuMemAlloc of {nbytes} bytes")
        return pointer.value

    def free(self, pointer: int) -> None:
        self.check(self._free(pointer), "cuMemFree")

    def stream(self) -> object:
        stream = _c_ptr()
        self.check(self._stream_create(ctypes.byref(stream), 1), "cuStreamCreate")  # CU_STREAM_NON_BLOCKING
        return stream.value

    def fill(self, pointer: int, words: int, word: int, stream) -> None:
        self.check(self._fill(pointer, word, words, stream), "cuMemsetD32Async")
        self.check(self._stream_sync(stream), "cuStreamSynchronize")

    def to_host(self, out: np.ndarray, pointer: int) -> None:
        self.check(self._to_host(out.ctypes.data, pointer, out.nbytes), "cuMemcpyDtoH")

    def copy_async(self, destination: int, source: int, nbytes: int, stream) -> None:
        self.check(self._copy(destination, source, nbytes, stream), "cuMemcpyDtoDAsync")

    def synchronize(self) -> None:
        self.check(self._context_sync(), "cuCtxSynchronize")


class HipRuntime(_Runtime):
    name = "HIP runtime"
    library_names = ("libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.7")
    env = "PROTON_HIP_RUNTIME_LIB"
    RELAXED_CAPTURE = 2  # hipStreamCaptureModeRelaxed

    def __init__(self, path: str | None = None):
        super().__init__(path or _torch_hip_library())
        self._alloc = self._fn("hipMalloc", ctypes.POINTER(_c_ptr), _c_size)
        self._free = self._fn("hipFree", _c_ptr)
        self._to_host = self._fn("hipMemcpyDtoH", _c_ptr, _c_ptr, _c_size)
        self._fill = self._fn("hipMemsetD32Async", _c_ptr, ctypes.c_int, _c_size, _c_ptr)
        self._copy = self._fn("hipMemcpyDtoDAsync", _c_ptr, _c_ptr, _c_size, _c_ptr)
        self._stream_create = self._fn("hipStreamCreateWithFlags", ctypes.POINTER(_c_ptr), ctypes.c_uint)
        self._stream_sync = self._fn("hipStreamSynchronize", _c_ptr)
        self._get_device = self._fn("hipGetDevice", ctypes.POINTER(ctypes.c_int))
        self._set_device = self._fn("hipSetDevice", ctypes.c_int)
        self._device_sync = self._fn("hipDeviceSynchronize")
        self._capture_mode = self._fn("hipThreadExchangeStreamCaptureMode", ctypes.POINTER(ctypes.c_int))
        self.lib.hipGetErrorName.restype = ctypes.c_char_p
        self.lib.hipGetErrorName.argtypes = [ctypes.c_int]

    def error_name(self, result: int) -> str:
        name = self.lib.hipGetErrorName(result)
        return name.decode() if name else f"error {result}"

    def current_key(self) -> object:
        return self.current_device()[0]

    def current_device(self) -> tuple[object, int]:
        device = ctypes.c_int()
        self.check(self._get_device(ctypes.byref(device)), "hipGetDevice")
        return device.value, device.value

    def enter(self, key) -> object:
        device = ctypes.c_int()
        self.check(self._get_device(ctypes.byref(device)), "hipGetDevice")
        if device.value != key:
            self.check(self._set_device(key), "hipSetDevice")
        return device.value

    def leave(self, previous, key) -> None:
        if previous != key:
            self._set_device(previous)

    def exchange_capture_mode(self, mode: int) -> int:
        value = ctypes.c_int(mode)
        self.check(self._capture_mode(ctypes.byref(value)), "hipThreadExchangeStreamCaptureMode")
        return value.value

    def allocate(self, nbytes: int) -> int:
        pointer = _c_ptr()
        self.check(self._alloc(ctypes.byref(pointer), nbytes), f"hipMalloc of {nbytes} bytes")
        return pointer.value

    def free(self, pointer: int) -> None:
        self.check(self._free(pointer), "hipFree")

    def stream(self) -> object:
        stream = _c_ptr()
        self.check(self._stream_create(ctypes.byref(stream), 1), "hipStreamCreateWithFlags")  # hipStreamNonBlocking
        return stream.value

    def fill(self, pointer: int, words: int, word: int, stream) -> None:
        self.check(self._fill(pointer, ctypes.c_int(word).value, words, stream), "hipMemsetD32Async")
        self.check(self._stream_sync(stream), "hipStreamSynchronize")

    def to_host(self, out: np.ndarray, pointer: int) -> None:
        self.check(self._to_host(out.ctypes.data, pointer, out.nbytes), "hipMemcpyDtoH")

    def copy_async(self, destination: int, source: int, nbytes: int, stream) -> None:
        self.check(self._copy(destination, source, nbytes, stream), "hipMemcpyDtoDAsync")

    def synchronize(self) -> None:
        self.check(self._device_sync(), "hipDeviceSynchronize")


def _torch_hip_library() -> str | None:
    """ROCm builds of PyTorch carry their libamdhip64 in torch/lib."""
    try:
        import torch
    except ImportError:
        return None
    path = os.path.join(os.path.dirname(torch.__file__), "lib", "libamdhip64.so")
    return path if os.path.exists(path) else None


@dataclass(eq=False)
class Allocation:
    """A block of profiler memory on one device."""

    memory: "DeviceMemory" = field(repr=False)
    pointer: int
    nbytes: int
    key: object  # the runtime's handle of the device (CUDA: its context)
    device: int
    freed: bool = False

    def slice(self, offset: int, nbytes: int) -> "Slice":
        if offset < 0 or offset + nbytes > self.nbytes:
            raise ValueError(f"slice [{offset}, {offset + nbytes}) outside an allocation of {self.nbytes} bytes")
        return Slice(self, offset, nbytes)

    def read(self, offset: int = 0, nbytes: int | None = None, out: np.ndarray | None = None) -> np.ndarray:
        """Its bytes [offset, offset + nbytes) on the host (the GPU must be
        done writing them), into `out` (contiguous uint8) if given."""
        nbytes = self.nbytes - offset if nbytes is None else nbytes
        return self.memory.read(self, offset, nbytes, out)


@dataclass(eq=False)
class Slice:
    """Part of an allocation: what a launch gets as its profile_scratch
    (Triton's launcher calls data_ptr())."""

    allocation: Allocation
    offset: int
    nbytes: int

    def data_ptr(self) -> int:
        return self.allocation.pointer + self.offset

    @property
    def device(self) -> int:
        return self.allocation.device

    def read(self, out: np.ndarray | None = None) -> np.ndarray:
        return self.allocation.read(self.offset, self.nbytes, out)


class DeviceMemory:
    """The profiler's memory on every device of one runtime (one instance
    per process: memory() below)."""

    def __init__(self, runtime: _Runtime):
        self.runtime = runtime
        self._streams: dict = {}  # device key -> the profiler's own stream (fills)
        self._lock = threading.Lock()
        self.allocated_bytes = 0  # held now, all devices

    def allocate(self, nbytes: int, fill: int = FILL_WORD) -> Allocation:
        """`nbytes` (rounded up to whole words) on the current device, each
        32-bit word set to `fill`. Allowed while a stream is being captured."""
        runtime = self.runtime
        nbytes = max(4, -(-nbytes // 4) * 4)
        key, device = runtime.current_device()
        mode = runtime.exchange_capture_mode(runtime.RELAXED_CAPTURE)
        try:
            with self._lock:
                stream = self._streams.get(key)
                if stream is None:
                    stream = self._streams[key] = runtime.stream()
            with profiler_work():
                pointer = runtime.allocate(nbytes)
                try:
                    runtime.fill(pointer, nbytes // 4, fill, stream)
                except ProfilerError:
                    runtime.free(pointer)
                    raise
        finally:
            runtime.exchange_capture_mode(mode)
        self.allocated_bytes += nbytes
        return Allocation(self, pointer, nbytes, key, device)

    @contextlib.contextmanager
    def _on(self, key, relaxed: bool = False):
        """With `key`'s device current on this thread (and, if `relaxed`,
        the thread's capture mode relaxed), as it was afterwards."""
        runtime = self.runtime
        previous = runtime.enter(key)
        mode = runtime.exchange_capture_mode(runtime.RELAXED_CAPTURE) if relaxed else None
        try:
            with profiler_work():
                yield runtime
        finally:
            if relaxed:
                runtime.exchange_capture_mode(mode)
            runtime.leave(previous, key)

    def refill(self, allocation: Allocation, fill: int = FILL_WORD) -> None:
        """Sets every 32-bit word of `allocation` to `fill` again (the GPU is
        done with it)."""
        with self._on(allocation.key) as runtime:
            runtime.fill(allocation.pointer, allocation.nbytes // 4, fill, self._streams[allocation.key])

    def free(self, allocation: Allocation) -> None:
        """Gives `allocation` back to the runtime (which waits for the
        device to finish with it). Allowed while a stream is captured."""
        if allocation.freed:
            return
        with self._on(allocation.key, relaxed=True) as runtime:
            runtime.free(allocation.pointer)
        allocation.freed = True
        self.allocated_bytes -= allocation.nbytes

    def copy_async(self, destination: Slice, source: Slice, stream) -> None:
        """Copies `source` into `destination` (of the same size, on one
        device) in the order of `stream`: after what is queued on it, with
        nothing waited for on the host."""
        if destination.nbytes != source.nbytes:
            raise ValueError(f"copy of {source.nbytes} bytes into {destination.nbytes}")
        with self._on(destination.allocation.key) as runtime:
            runtime.copy_async(destination.data_ptr(), source.data_ptr(), source.nbytes, stream)

    def read(self, allocation: Allocation, offset: int, nbytes: int, out: np.ndarray | None = None) -> np.ndarray:
        """The bytes, into `out` where given (finalize reads a window of
        launches into one array: no copy to put them side by side)."""
        if out is None:
            out = np.empty(nbytes, dtype=np.uint8)
        elif out.nbytes != nbytes or out.dtype != np.uint8 or not out.flags.c_contiguous:
            raise ValueError(f"cannot read {nbytes} bytes into an array of {out.nbytes} ({out.dtype})")
        if nbytes:
            with self._on(allocation.key) as runtime:
                runtime.to_host(out, allocation.pointer + offset)
        return out

    def synchronize(self, keys) -> None:
        """Waits for the devices behind `keys` (allocations' keys)."""
        for key in keys:
            with self._on(key) as runtime:
                runtime.synchronize()


@contextlib.contextmanager
def profiler_work():
    """This thread's GPU work inside is the profiler's own: host sessions
    do not show it as the program's (its fills, copies, reads, and the moves
    of graph metrics). A no-op where no host session ever ran."""
    host = sys.modules.get("proton._host")  # loaded by host sessions only
    if host is None:
        yield
        return
    previous = host.set_profiler_work(True)
    try:
        yield
    finally:
        host.set_profiler_work(previous)


_memory: DeviceMemory | None = None


def memory(hip: bool | None = None) -> DeviceMemory:
    """The process's profiler memory: HIP's where PyTorch is a ROCm build
    (or `hip` says so), else the CUDA driver's."""
    global _memory
    if _memory is None:
        if hip is None:
            torch = __import__("sys").modules.get("torch")
            hip = bool(getattr(getattr(torch, "version", None), "hip", None))
        _memory = DeviceMemory(HipRuntime() if hip else CudaDriver())
    return _memory


def use(replacement: DeviceMemory | None) -> DeviceMemory | None:
    """Replaces the process's profiler memory (tests: a fake runtime);
    returns the one it replaces."""
    global _memory
    previous, _memory = _memory, replacement
    return previous
