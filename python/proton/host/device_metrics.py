"""Metric values that live on the GPU (a loss, a token count: device
tensors handed to `proton.scope(metrics=...)` or returned by a kernel's
launch_metadata). Reading one at the scope would synchronize the program;
instead each is added, on the device and in stream order, into slots of
memory the session owns (the profiler's own, device_memory: never the
program's allocator, made when a first device metric needs it, also inside
a CUDA graph capture, where nothing of it is captured but the add), and the
slots are read when the session collects its records (finalize, a phase
boundary). The add is one kernel, shown as "<metric>" below the metadata
scope, as Triton's Proton shows its own. Inside a capture the add is
captured: every replay adds its value again (graph_metrics.py says where
those values are shown).

Slots are never moved or reused (a captured graph keeps their addresses);
reading them copies the sums out and sets them back to zero. Memory that a
captured add writes is never given back: the graph may be replayed after
the session, and it must write into memory nothing else was given."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from ..contract.errors import ProfilerError

CHUNK_SLOTS = 4096  # per dtype (float64, int64): 32 KiB each

#: Chunks that captured adds write into, kept for the life of the process.
_CAPTURED_CHUNKS: list = []


def _integral(tensor) -> bool:
    """Integer tensors sum into int64 slots, others into float64 ones (the
    value read is then typed by its metric's name: metrics.py)."""
    return not (tensor.is_floating_point() or tensor.is_complex())


class _DeviceArray:
    """Profiler memory as PyTorch reads it (the CUDA array interface): a
    tensor over it shares the memory, which stays the session's."""

    def __init__(self, pointer: int, count: int, typestr: str):
        self.__cuda_array_interface__ = {"shape": (count,), "typestr": typestr, "data": (pointer, False), "version": 3}


@dataclass
class _Chunk:
    """CHUNK_SLOTS slots of one dtype in profiler memory."""

    allocation: object  # device_memory's
    slots: object  # a torch tensor over it
    used: int  # slots handed out
    captured: bool = False  # a captured add writes into it: never freed


class _Place(NamedTuple):
    """Where one key's sum accumulates."""

    integral: bool
    chunk: int  # index in DeviceSlots._chunks[integral]
    offset: int
    count: int
    scalar: bool  # read back as one value, not a list


class DeviceSlots:
    """A session's slots: key (any hashable: a scope node and metric name)
    -> where its sum accumulates."""

    def __init__(self):
        self._chunks: dict[bool, list[_Chunk]] = {True: [], False: []}  # integral? -> chunks
        self._where: dict = {}  # key -> _Place

    def add(self, key, name: str, tensor, capturing: bool) -> None:
        """Adds `tensor` into `key`'s slots on the current stream (captured
        with it while the stream is `capturing` into a CUDA graph)."""
        import torch

        place = self._where.get(key)
        if place is None:
            scalar = tensor.dim() == 0 or tensor.numel() == 1
            place = self._where[key] = self._allocate(_integral(tensor), tensor.numel(), tensor.device, scalar)
        if place.count != tensor.numel():
            raise ProfilerError(
                f"metric {name!r}: a tensor of {tensor.numel()} values where earlier ones had {place.count}"
            )
        chunk = self._chunks[place.integral][place.chunk]
        chunk.captured = chunk.captured or capturing
        target = self._view(place).view(tensor.shape)
        value = tensor.detach()
        if value.device != target.device:
            value = value.to(target.device)  # a copy, not a kernel
        if not torch.can_cast(value.dtype, target.dtype):
            value = value.to(target.dtype)
        target.add_(value)

    def move(self, pairs) -> None:
        """For each (source key, target key): adds the source's sums into the
        target's slots (made like the source's if new), then sets the
        source's to zero; on the current stream."""
        for source, target in pairs:
            place = self._where[source]
            if target not in self._where:
                device = self._chunks[place.integral][place.chunk].slots.device
                self._where[target] = self._allocate(place.integral, place.count, device, place.scalar)
            self._view(self._where[target]).add_(self._view(place))
        self.zero(source for source, _ in pairs)

    def zero(self, keys) -> None:
        """Sets the slots of `keys` to zero, on the current stream."""
        for key in keys:
            self._view(self._where[key]).zero_()

    def _view(self, place: _Place):
        return self._chunks[place.integral][place.chunk].slots[place.offset : place.offset + place.count]

    def _allocate(self, integral: bool, count: int, device, scalar: bool) -> _Place:
        import torch

        from ..device import memory as device_memory

        if count > CHUNK_SLOTS:
            raise ProfilerError(f"a device metric of {count} values: at most {CHUNK_SLOTS} per metric")
        chunks = self._chunks[integral]
        for index, chunk in enumerate(chunks):
            if chunk.slots.device == device and chunk.used + count <= CHUNK_SLOTS:
                chunk.used += count
                return _Place(integral, index, chunk.used - count, count, scalar)
        with torch.cuda.device(device):
            allocation = device_memory.memory().allocate(8 * CHUNK_SLOTS, fill=0)
            view = _DeviceArray(allocation.pointer, CHUNK_SLOTS, "<i8" if integral else "<f8")
            chunks.append(_Chunk(allocation, torch.as_tensor(view, device=device), count))
        return _Place(integral, len(chunks) - 1, 0, count, scalar)

    def take(self) -> dict:
        """{key: sum} of every slot (int, float, or a list), then zeros them;
        the caller has synchronized the device."""
        if not self._where:
            return {}
        from ..device import memory as device_memory

        memory = device_memory.memory()
        host = {}
        for integral, chunks in self._chunks.items():
            for index, chunk in enumerate(chunks):
                host[(integral, index)] = chunk.allocation.read().view("<i8" if integral else "<f8").tolist()
                memory.refill(chunk.allocation, fill=0)
        out = {}
        for key, place in self._where.items():
            values = host[(place.integral, place.chunk)][place.offset : place.offset + place.count]
            out[key] = values[0] if place.scalar else values
        return out

    def release(self) -> None:
        """Gives the slots' memory back (at finalize, the device
        synchronized), but for chunks a captured add writes into."""
        from ..device import memory as device_memory

        for chunks in self._chunks.values():
            for chunk in chunks:
                if chunk.captured:
                    _CAPTURED_CHUNKS.append(chunk.allocation)
                else:
                    device_memory.memory().free(chunk.allocation)
            chunks.clear()
        self._where.clear()
