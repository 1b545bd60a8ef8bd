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


class DeviceSlots:
    """A session's slots: key (any hashable: a scope node and metric name)
    -> where its sum accumulates."""

    def __init__(self):
        self._chunks = {True: [], False: []}  # integral? -> [[allocation, tensor over it, used, captured]]
        self._where: dict = {}  # key -> (integral, chunk index, offset, count, scalar)

    def add(self, key, name: str, tensor, capturing: bool) -> None:
        """Adds `tensor` into `key`'s slots on the current stream (captured
        with it while the stream is `capturing` into a CUDA graph)."""
        import torch

        where = self._where.get(key)
        if where is None:
            place = self._allocate(_integral(tensor), tensor.numel(), tensor.device)
            where = self._where[key] = place + (tensor.dim() == 0 or tensor.numel() == 1,)
        if where[3] != tensor.numel():
            raise ProfilerError(
                f"metric {name!r}: a tensor of {tensor.numel()} values where earlier ones had {where[3]}"
            )
        chunk = self._chunks[where[0]][where[1]]
        chunk[3] = chunk[3] or capturing
        target = self._view(where).view(tensor.shape)
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
            where = self._where[source]
            if target not in self._where:
                place = self._allocate(where[0], where[3], self._chunks[where[0]][where[1]][1].device)
                self._where[target] = place + (where[4],)
            self._view(self._where[target]).add_(self._view(where))
        self.zero(source for source, _ in pairs)

    def zero(self, keys) -> None:
        """Sets the slots of `keys` to zero, on the current stream."""
        for key in keys:
            self._view(self._where[key]).zero_()

    def _view(self, where: tuple):
        integral, chunk, offset, count = where[:4]
        return self._chunks[integral][chunk][1][offset : offset + count]

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
            chunks.append([allocation, torch.as_tensor(view, device=device), count, False])
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
            for index, chunk in enumerate(chunks):
                host[(integral, index)] = chunk[0].read().view("<i8" if integral else "<f8").tolist()
                memory.refill(chunk[0], fill=0)
        out = {}
        for key, (integral, chunk, offset, count, scalar) in self._where.items():
            values = host[(integral, chunk)][offset : offset + count]
            out[key] = values[0] if scalar else values
        return out

    def release(self) -> None:
        """Gives the slots' memory back (at finalize, the device
        synchronized), but for chunks a captured add writes into."""
        from ..device import memory as device_memory

        for chunks in self._chunks.values():
            for chunk in chunks:
                if chunk[3]:
                    _CAPTURED_CHUNKS.append(chunk[0])
                else:
                    device_memory.memory().free(chunk[0])
            chunks.clear()
        self._where.clear()
