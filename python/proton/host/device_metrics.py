"""Metric values that live on the GPU (a loss, a token count: device
tensors handed to `proton.scope(metrics=...)` or returned by a kernel's
launch_metadata). Reading one at the scope would synchronize the program;
instead each is added, on the device and in stream order, into slots of
memory the session owns (the profiler's own, device_memory: never the
program's allocator, made when a first device metric needs it, also inside
a CUDA graph capture, where nothing of it is captured but the add), and the
slots are read when the session collects its records (finalize, a phase
boundary). Inside a capture the add is captured: every replay adds its
value again, as upstream's Proton counts it.

Slots are never moved or reused (a captured graph keeps their addresses);
reading them copies the sums out and sets them back to zero."""

from __future__ import annotations

from ..contract.errors import ProfilerError
from .metrics import _FLOPS_NAMES

CHUNK_SLOTS = 4096  # per dtype (float64, int64): 32 KiB each


def _integral(name: str, tensor) -> bool:
    """Sums are ints for byte counts and integer tensors, floats otherwise
    (flops counts are floats whatever the tensor's type)."""
    if name in _FLOPS_NAMES:
        return False
    if name == "bytes":
        return True
    return not (tensor.is_floating_point() or tensor.is_complex())


class _DeviceArray:
    """Profiler memory as PyTorch reads it (the CUDA array interface): a
    tensor over it shares the memory, which stays the session's."""

    def __init__(self, pointer: int, count: int, typestr: str):
        self.__cuda_array_interface__ = {"shape": (count,), "typestr": typestr, "data": (pointer, False), "version": 3}


class DeviceSlots:
    """A session's slots: key (any hashable: a scope node and metric name)
    -> where its sum accumulates."""

    def __init__(self):
        self._chunks = {True: [], False: []}  # integral? -> [[allocation, tensor over it, used]]
        self._where: dict = {}  # key -> (integral, chunk index, offset, count, scalar)

    def add(self, key, name: str, tensor) -> bool:
        """Adds `tensor` into `key`'s slots on the current stream (captured
        with it during a CUDA graph capture)."""
        import torch

        flat = tensor.detach().reshape(-1)
        where = self._where.get(key)
        if where is None:
            place = self._allocate(_integral(name, tensor), flat.numel(), flat.device)
            scalar = tensor.dim() == 0 or tensor.numel() == 1
            where = self._where[key] = place + (scalar,)
        integral, chunk, offset, count, _ = where
        if count != flat.numel():
            raise ProfilerError(f"metric {name!r}: a tensor of {flat.numel()} values where earlier ones had {count}")
        slots = self._chunks[integral][chunk][1]
        dtype = torch.int64 if integral else torch.float64
        slots[offset : offset + count].add_(flat.to(device=slots.device, dtype=dtype))
        return True

    def _allocate(self, integral: bool, count: int, device) -> tuple:
        import torch

        from ..device import memory as device_memory

        if count > CHUNK_SLOTS:
            raise ProfilerError(f"a device metric of {count} values: at most {CHUNK_SLOTS} per metric")
        chunks = self._chunks[integral]
        for index, chunk in enumerate(chunks):
            if chunk[1].device == device and chunk[2] + count <= CHUNK_SLOTS:
                chunk[2] += count
                return integral, index, chunk[2] - count, count
        with torch.cuda.device(device):
            allocation = device_memory.memory().allocate(8 * CHUNK_SLOTS, fill=0)
            view = _DeviceArray(allocation.pointer, CHUNK_SLOTS, "<i8" if integral else "<f8")
            chunks.append([allocation, torch.as_tensor(view, device=device), count])
        return integral, len(chunks) - 1, 0, count

    def take(self) -> dict:
        """{key: sum} of every slot (int, float, or a list), then zeros them;
        the caller has synchronized the device."""
        if not self._where:
            return {}
        from ..device import memory as device_memory

        memory = device_memory.memory()
        host = {}
        for integral, chunks in self._chunks.items():
            for index, (allocation, _tensor, _used) in enumerate(chunks):
                host[(integral, index)] = allocation.read().view("<i8" if integral else "<f8").tolist()
                memory.refill(allocation, fill=0)
        out = {}
        for key, (integral, chunk, offset, count, scalar) in self._where.items():
            values = host[(integral, chunk)][offset : offset + count]
            out[key] = values[0] if scalar else values
        return out

    def release(self) -> None:
        """Gives the slots' memory back (at finalize, the device synchronized)."""
        from ..device import memory as device_memory

        for chunks in self._chunks.values():
            for allocation, _tensor, _used in chunks:
                device_memory.memory().free(allocation)
            chunks.clear()
        self._where.clear()
