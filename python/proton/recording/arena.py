"""A session's profile buffers: slices of chunks of the profiler's own device
memory (device_memory), handed out on the host by moving an offset, so that
a launch costs no allocation, no host-device copy and no synchronization.

- Each slice is followed by GUARD_BYTES of the fill word that no kernel is
  given: the decoder checks them to tell a buffer that something wrote past
  (guard_intact).
- A launch the session does not keep gives its slice back (give_back); the
  next launch of the same size on the same stream takes it again, after
  that launch on the stream, so no two kernels ever share a slice.
- `kept_bytes` (the slices handed out and not given back) never exceeds the
  budget (max_buffer_bytes); past it `take` returns None and the launch
  writes into `sink`: memory of the profiler's that nobody reads.
- Nothing is freed while kernels may still write it: reset() (between
  phases) and release() (at finalize) come after the GPU was synchronized.
"""

from __future__ import annotations

from ..device.memory import FILL_WORD, Allocation, DeviceMemory, Slice

#: Slices start on 256-byte boundaries (Triton asks for at most 128).
ALIGN = 256
#: Fill words after each slice, checked at decode.
GUARD_BYTES = 64
#: The smallest chunk reserved at a time (a chunk holds whole slices).
MIN_CHUNK_BYTES = 16 << 20


def guard_intact(piece: Slice) -> bool:
    """Whether the fill words after `piece` (up to GUARD_BYTES, within its
    allocation) are as they were allocated; read after the GPU is done."""
    start = piece.offset + piece.nbytes
    guard = piece.allocation.read(start, min(GUARD_BYTES, piece.allocation.nbytes - start))
    return guard.size % 4 == 0 and bool((guard.view("<u4") == FILL_WORD).all())


class Sinks:
    """Memory written and never read, one block per device, grown to the
    largest launch asked for (a power of two); a block outgrown stays
    allocated until release, since a kernel may still write it. Launches
    that write a sink may run beside each other."""

    def __init__(self, memory: DeviceMemory):
        self.memory = memory
        self._blocks: dict[object, list[Allocation]] = {}  # device key -> blocks, the largest last

    def slice(self, nbytes: int) -> Slice:
        key, _device = self.memory.runtime.current_device()
        blocks = self._blocks.setdefault(key, [])
        if not blocks or blocks[-1].nbytes < nbytes:
            blocks.append(self.memory.allocate(1 << max(12, (nbytes - 1).bit_length())))
        return blocks[-1].slice(0, nbytes)

    def keys(self) -> set:
        return set(self._blocks)

    def reserved_bytes(self) -> int:
        return sum(block.nbytes for blocks in self._blocks.values() for block in blocks)

    def release(self) -> None:
        for blocks in self._blocks.values():
            for block in blocks:
                self.memory.free(block)
        self._blocks.clear()


def _round_up(n: int, to: int) -> int:
    return -(-n // to) * to


class Arena:
    def __init__(self, memory: DeviceMemory, budget_bytes: int):
        self.memory = memory
        self.budget = budget_bytes
        self.kept_bytes = 0
        self._chunks: dict[object, list[list]] = {}  # device key -> [[allocation, used bytes]]
        self._given_back: dict[tuple, list[Slice]] = {}  # (device key, stream, size) -> slices
        self.sinks = Sinks(memory)  # for launches past the budget
        # Called before a launch is refused: slices reserved ahead and not
        # used come back; whether any did.
        self.reclaim = None

    @property
    def reserved_bytes(self) -> int:
        """Device memory the arena holds now."""
        chunks = sum(a.nbytes for chunks in self._chunks.values() for a, _ in chunks)
        return chunks + self.sinks.reserved_bytes()

    def take(self, nbytes: int, stream) -> Slice | None:
        """A slice of `nbytes` for a launch on `stream` of the current
        device, or None when it would pass the budget."""
        key = self.memory.runtime.current_key()
        if self.kept_bytes + nbytes > self.budget:
            if self.reclaim is None or not self.reclaim():  # slices reserved ahead and not used come back
                return None
            return self.take(nbytes, stream)
        again = self._given_back.get((key, stream, nbytes)) or self._given_back.get((key, None, nbytes))
        if again:
            self.kept_bytes += nbytes
            return again.pop()
        need = _round_up(nbytes + GUARD_BYTES, ALIGN)
        chunk = self._chunk_with_room(key, need, 1)
        offset = chunk[1]
        chunk[1] += need
        self.kept_bytes += nbytes
        return chunk[0].slice(offset, nbytes)

    def reserve(self, nbytes: int, count: int) -> tuple | None:
        """Up to `count` slices of `nbytes` on the current device, kept from
        now on, in one chunk: (allocation, offset of the first, stride,
        count), or None past the budget. The launch fast path hands them
        out; what it does not use comes back through `unreserve`."""
        count = min(count, (self.budget - self.kept_bytes) // max(1, nbytes))
        if count <= 0:
            return None
        key = self.memory.runtime.current_key()
        need = _round_up(nbytes + GUARD_BYTES, ALIGN)
        chunk = self._chunk_with_room(key, need, count)
        offset = chunk[1]
        count = min(count, (chunk[0].nbytes - offset) // need)
        chunk[1] += need * count
        self.kept_bytes += nbytes * count
        return chunk[0], offset, need, count

    def unreserve(self, allocation: Allocation, offset: int, nbytes: int, stride: int, count: int) -> None:
        """Reserved slices never handed out: free for a launch on any stream."""
        self.kept_bytes -= nbytes * count
        fresh = self._given_back.setdefault((allocation.key, None, nbytes), [])
        fresh.extend(allocation.slice(offset + i * stride, nbytes) for i in range(count))

    def _chunk_with_room(self, key, need: int, count: int) -> list:
        """The device's last chunk, [allocation, bytes used], if it has room
        for a slice of `need` bytes, else a new one with room for `count`."""
        chunks = self._chunks.get(key) or self._chunks.setdefault(self.memory.runtime.current_device()[0], [])
        if not chunks or chunks[-1][0].nbytes - chunks[-1][1] < need:
            room = self.budget - self.kept_bytes
            size = max(need * count, min(MIN_CHUNK_BYTES, _round_up(room + room // 8 + ALIGN, ALIGN)))
            chunks.append([self.memory.allocate(size), 0])
        return chunks[-1]

    def give_back(self, piece: Slice, stream) -> None:
        """A slice whose launch is not kept: the next launch of its size on
        `stream` takes it."""
        self.kept_bytes -= piece.nbytes
        self._given_back.setdefault((piece.allocation.key, stream, piece.nbytes), []).append(piece)

    def sink(self, nbytes: int) -> Slice:
        """Memory for a launch past the budget (Sinks)."""
        return self.sinks.slice(nbytes)

    def device_keys(self) -> set:
        """The devices the arena has memory on."""
        return set(self._chunks) | self.sinks.keys()

    def reset(self) -> None:
        """Every slice free again, its memory refilled (between phases; the
        GPU is done with them)."""
        for chunks in self._chunks.values():
            for chunk in chunks:
                self.memory.refill(chunk[0])
                chunk[1] = 0
        self._given_back.clear()
        self.kept_bytes = 0

    def release(self) -> None:
        """Gives all memory back (at finalize, after synchronizing)."""
        for chunks in self._chunks.values():
            for allocation, _used in chunks:
                self.memory.free(allocation)
        self.sinks.release()
        self._chunks.clear()
        self._given_back.clear()
        self.kept_bytes = 0
