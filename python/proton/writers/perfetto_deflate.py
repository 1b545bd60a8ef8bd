"""Deflate-compressed .pftrace output, Perfetto's own compression: the
file is a Trace whose packets each hold, in TracePacket.compressed_packets
(field 50), the zlib stream of a run of ordinary Trace.packet bytes. The
Perfetto UI and trace_processor inflate them on load (as they do for
traces recorded with `perfetto --compress`); readers that do not must
inflate first (`inflate` below, used by proton-merge-traces and tests).

A slice packet is 10 to 13 bytes with few distinct values, so deflate at
its fastest level takes a trace to about a third. Chunks of about
CHUNK_BYTES are compressed on worker threads (zlib works without the GIL)
and written in order, a bounded number in flight.
"""

from __future__ import annotations

import collections
import contextlib
import os
import zlib
from concurrent.futures import ThreadPoolExecutor

from .files import threads_allowed
from .perfetto_packets import trace_packet, varint_bytes

CHUNK_BYTES = 1 << 20
LEVEL = 1
COMPRESSED_PACKETS_TAG = b"\x92\x03"  # TracePacket field 50, length-delimited
TRACE_PACKET_TAG = 0x0A  # Trace field 1, length-delimited


def _packet(chunk: bytes) -> bytes:
    """The Trace.packet that carries one compressed chunk."""
    body = zlib.compress(chunk, LEVEL)
    return trace_packet(COMPRESSED_PACKETS_TAG + varint_bytes(len(body)) + body)


def _usable_cores() -> int:
    """The cores this process may run on (its affinity, e.g. under taskset)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


class DeflateOut:
    """A sink with write() and write_views() (what the Perfetto writer
    calls): bytes given to it reach `out` compressed. Each call's bytes are
    whole packets, so a chunk ends between packets, as Perfetto requires."""

    def __init__(self, out, workers: int | None = None):
        self.out = out
        self.pending: list = []
        self.size = 0
        workers = workers if workers is not None else min(8, _usable_cores())
        if not threads_allowed():
            workers = 1  # compressed in the calling thread
        self.pool = ThreadPoolExecutor(workers) if workers > 1 else None
        self.in_flight: collections.deque = collections.deque()
        self.max_in_flight = 2 * max(workers, 1)
        self.written = 0  # compressed bytes

    def write(self, data) -> None:
        self.write_views([memoryview(data)])

    def write_views(self, views) -> None:
        for view in views:
            if not view.nbytes:
                continue
            self.pending.append(view)
            self.size += view.nbytes
            if self.size >= CHUNK_BYTES:
                self._submit()

    def _submit(self) -> None:
        if not self.pending:
            return
        chunk = b"".join(self.pending)
        self.pending, self.size = [], 0
        if self.pool is None:
            self._emit(_packet(chunk))
            return
        self.in_flight.append(self.pool.submit(_packet, chunk))
        while len(self.in_flight) > self.max_in_flight:
            self._emit(self.in_flight.popleft().result())

    def _emit(self, packet: bytes) -> None:
        self.out.write(packet)
        self.written += len(packet)

    def close(self) -> None:
        """Compresses what is left and waits for every chunk (in order)."""
        self._submit()
        while self.in_flight:
            self._emit(self.in_flight.popleft().result())
        self.stop()

    def stop(self) -> None:
        """Stops the worker threads, dropping chunks not yet compressed."""
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None
        self.in_flight.clear()


@contextlib.contextmanager
def sink(file, compress: bool):
    """`file` itself, or a DeflateOut over it, closed (its last chunks
    written) when the block ends normally and stopped either way."""
    if not compress:
        yield file
        return
    out = DeflateOut(file)
    try:
        yield out
        out.close()
    finally:
        out.stop()


def _read_varint(data, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data):
            raise ValueError("truncated varint")
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at += 1
        if not byte & 0x80:
            return value, at
        shift += 7


def _first_is_compressed(data) -> bool:
    if len(data) < 4 or data[0] != TRACE_PACKET_TAG:
        return False
    try:
        _, at = _read_varint(data, 1)
    except ValueError:
        return False
    return bytes(data[at : at + 2]) == COMPRESSED_PACKETS_TAG


#: What inflating a file may give, per byte of it: zlib at the level
#: Proton writes (1) stays under 230x even on constant bytes; a file that
#: inflates to more is not one Proton wrote, and is refused before it
#: takes the machine's memory.
MAX_INFLATE_RATIO = 256


def inflate(data: bytes, path: str = "trace") -> bytes:
    """The Trace bytes with every compressed_packets packet replaced by the
    packets it holds. Written by DeflateOut, every packet is one; a trace
    whose first packet is not comes back unchanged. ValueError for a
    corrupted file, or one that would inflate past MAX_INFLATE_RATIO
    times its size."""
    if not _first_is_compressed(data):
        return data
    parts, at = [], 0
    budget = MAX_INFLATE_RATIO * len(data) + (1 << 20)
    view = memoryview(data)
    while at < len(data):
        try:
            if data[at] != TRACE_PACKET_TAG:
                raise ValueError(f"byte {at} does not start a packet")
            length, body = _read_varint(data, at + 1)
            end = body + length
            if end > len(data):
                raise ValueError(f"the packet at byte {at} runs past the end of the file")
            if bytes(view[body : body + 2]) == COMPRESSED_PACKETS_TAG:
                size, start = _read_varint(data, body + 2)
                inflater = zlib.decompressobj()
                part = inflater.decompress(view[start : start + size], budget + 1)
                if len(part) > budget or inflater.unconsumed_tail:
                    raise ValueError(
                        f"the packets at byte {at} inflate past {MAX_INFLATE_RATIO} times the file's "
                        f"{len(data):,} bytes, more than Proton's compression gives"
                    )
                if not inflater.eof:
                    raise ValueError(f"the compressed packets at byte {at} are truncated")
            else:
                part = bytes(view[at:end])
        except (ValueError, zlib.error) as error:
            raise ValueError(f"{path}: corrupted compressed Perfetto trace: {error}") from None
        parts.append(part)
        budget -= len(part)
        at = end
    return b"".join(parts)
