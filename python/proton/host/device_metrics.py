"""Metric values that live on the GPU (a loss, a token count: device
tensors handed to `proton.scope(metrics=...)` or returned by a kernel's
launch_metadata). Reading one at the scope would synchronize the program;
instead each is added, on the device and in stream order, into slots of a
buffer the session owns, and the slots are read when the session collects
its records (finalize, a phase boundary). Inside a CUDA graph capture the
add is captured too: every replay adds its value again, as upstream's
Proton counts it.

Slots are never moved or reused (a captured graph keeps their addresses);
reading them copies the sums out and sets them back to zero."""

from __future__ import annotations

from ..errors import ProfilerError
from ..metric import _FLOPS_NAMES

CHUNK_SLOTS = 4096  # per dtype (float64, int64): 32 KiB each


def is_device_tensor(value) -> bool:
    device = getattr(value, "device", None)
    return hasattr(value, "data_ptr") and getattr(device, "type", "cpu") != "cpu"


def _integral(name: str, tensor) -> bool:
    """Sums are ints for byte counts and integer tensors, floats otherwise
    (flops counts are floats whatever the tensor's type)."""
    if name in _FLOPS_NAMES:
        return False
    if name == "bytes":
        return True
    return not (tensor.is_floating_point() or tensor.is_complex())


class DeviceSlots:
    """A session's slots: key (any hashable: a scope node and metric name)
    -> where its sum accumulates."""

    def __init__(self):
        self._chunks = {True: [], False: []}  # integral? -> [(tensor, used)]
        self._where: dict = {}  # key -> (integral, chunk index, offset, count, scalar)

    def add(self, key, name: str, tensor) -> bool:
        """Adds `tensor` into `key`'s slots on the current stream; False
        (nothing added) when its slots would have to be made inside a CUDA
        graph capture."""
        import torch

        flat = tensor.detach().reshape(-1)
        where = self._where.get(key)
        if where is None:
            place = self._allocate(_integral(name, tensor), flat.numel(), flat.device)
            if place is None:
                return False
            scalar = tensor.dim() == 0 or tensor.numel() == 1
            where = self._where[key] = place + (scalar,)
        integral, chunk, offset, count, _ = where
        if count != flat.numel():
            raise ProfilerError(f"metric {name!r}: a tensor of {flat.numel()} values where earlier ones had {count}")
        buffer = self._chunks[integral][chunk][0]
        dtype = torch.int64 if integral else torch.float64
        buffer[offset : offset + count].add_(flat.to(device=buffer.device, dtype=dtype))
        return True

    def _allocate(self, integral: bool, count: int, device) -> tuple | None:
        import torch

        if count > CHUNK_SLOTS:
            raise ProfilerError(f"a device metric of {count} values: at most {CHUNK_SLOTS} per metric")
        chunks = self._chunks[integral]
        for index, (buffer, used) in enumerate(chunks):
            if buffer.device == device and used + count <= CHUNK_SLOTS:
                chunks[index] = (buffer, used + count)
                return integral, index, used, count
        if torch.cuda.is_current_stream_capturing():
            # A buffer made now would belong to the graph's memory pool and
            # its zeroing would be replayed with the graph.
            return None
        dtype = torch.int64 if integral else torch.float64
        chunks.append((torch.zeros(CHUNK_SLOTS, dtype=dtype, device=device), count))
        return integral, len(chunks) - 1, 0, count

    def prepare(self, device) -> None:
        """Makes one chunk of each kind on `device` ahead of time (so that a
        first use inside a graph capture finds a slot)."""
        import torch

        for integral, dtype in ((True, torch.int64), (False, torch.float64)):
            if not any(buffer.device == device for buffer, _ in self._chunks[integral]):
                self._chunks[integral].append((torch.zeros(CHUNK_SLOTS, dtype=dtype, device=device), 0))

    def take(self) -> dict:
        """{key: sum} of every slot (int, float, or a list), then zeros them;
        the caller has synchronized the device."""
        if not self._where:
            return {}
        host = {
            (integral, index): buffer.cpu().tolist()
            for integral, chunks in self._chunks.items()
            for index, (buffer, _) in enumerate(chunks)
        }
        for chunks in self._chunks.values():
            for buffer, _ in chunks:
                buffer.zero_()
        out = {}
        for key, (integral, chunk, offset, count, scalar) in self._where.items():
            values = host[(integral, chunk)][offset : offset + count]
            out[key] = values[0] if scalar else values
        return out
