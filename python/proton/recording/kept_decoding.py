"""A session's kept launches decoded a window at a time, as the trace
writers read them (writers/launch_windows): finalize's memory is then a
window's, not the session's, whatever the number of launches.

The session decodes every launch once to count and check it
(session_outputs._decode, through `decode_window`, in small windows,
FIRST_PASS_BYTES, on several threads); the writers then decode the
launches again, a window at a time, as they write: the outputs' threads
share one decoding of each window (launch_windows.SharedPasses). Passes
never change the items, so that they may run at once. A session whose
buffers fit in one writer's window keeps its decoded launches instead.

Within a window, launches of one kernel, metadata and buffer size are
decoded together (decode_batch), in any order of launches; the window
comes back in launch order."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from ..contract.errors import ProfilerError
from ..contract.events import LaunchEvents
from ..contract.kernel_metadata import KernelMetadata
from ..writers import launch_windows
from ..writers.files import threads_allowed
from ..writers.launch_windows import LaunchFacts
from . import decode, decode_batch
from .buffer import BufferFormatError
from .launches import KeptLaunch

#: Buffer bytes read and decoded at a time.
WINDOW_BYTES = 64 << 20
#: The same, in the first decoding (session_outputs._decode), which holds
#: no more than a window: small windows keep its arrays small enough for
#: the allocator to reuse (fresh memory costs a page fault per page).
FIRST_PASS_BYTES = 4 << 20


@dataclass
class KeptBuffer:
    """A kept launch ready to decode: its buffer's bytes, its name in the
    report, its metadata; `events` once decoded."""

    kept: KeptLaunch
    kernel: str
    meta: KernelMetadata
    data: object = None  # the buffer's bytes while its window is decoded
    events: int = 0
    warnings: list = field(default_factory=list)  # the metadata's, for the report


def windows(items: list, nbytes, events=lambda item: 0, max_bytes: int | None = None):
    """Consecutive items, at most `max_bytes` (WINDOW_BYTES; by
    `nbytes(item)`) and WINDOW_EVENTS (by `events(item)`) a window; an
    item larger than a window alone."""
    max_events = launch_windows.WINDOW_EVENTS
    max_bytes = WINDOW_BYTES if max_bytes is None else max_bytes
    window, size, count = [], 0, 0
    for item in items:
        grows, more = nbytes(item), events(item)
        over = size + grows > max_bytes or count + more > max_events
        if window and over:
            yield window
            window, size, count = [], 0, 0
        window.append(item)
        size, count = size + grows, count + more
    if window:
        yield window


class WindowMemory:
    """Host memory a window's buffers are read into, kept for the next
    window (fresh memory costs a page fault per page)."""

    def __init__(self):
        self.memory = np.empty(0, dtype=np.uint8)

    def take(self, nbytes: int) -> np.ndarray:
        if self.memory.size < nbytes:
            self.memory = np.empty(nbytes, dtype=np.uint8)
        return self.memory[:nbytes]


#: Launches of a batch decoded apart at least, when a window is decoded on several threads.
MIN_PART = 32


def decode_window(window: list[KeptBuffer], cost: float, memory: WindowMemory | None = None, workers: int = 1) -> list:
    """Each launch's LaunchEvents (with its call stack) or its decode
    error, in the window's order. Launches of one kernel, metadata and
    buffer size are read side by side (those not read yet) and decoded
    together; where that fails, one by one (so that each error names its
    launch). With `workers` > 1, a batch is cut into up to that many parts
    decoded on threads at once (numpy works without the GIL); a launch
    decodes the same in any batch (decode_batch)."""
    out: list = [None] * len(window)
    batches: dict[tuple, list[int]] = {}
    for i, item in enumerate(window):
        batches.setdefault((item.kernel, id(item.meta), item.kept.buffer.nbytes), []).append(i)
    blocks, rows = _read(window, list(batches.values()), memory or WindowMemory())
    jobs = []
    for members, block in zip(batches.values(), blocks):
        parts = max(1, min(workers, len(members) // MIN_PART))
        cuts = [len(members) * k // parts for k in range(parts + 1)]
        jobs += [(members[lo:hi], block[lo:hi]) for lo, hi in zip(cuts[:-1], cuts[1:])]

    def run(job):
        members, block = job
        items = [window[i] for i in members]
        try:
            if len(items) < 2:
                raise decode_batch.NotBatchable("one launch")
            return decode_batch.decode_launches(
                block,
                items[0].meta,
                kernel=items[0].kernel,
                launches=[item.kept.index for item in items],
                record_cost_cycles=cost,
            )
        except (decode_batch.NotBatchable, BufferFormatError, ProfilerError):
            return [_decode_one(window[i], rows[i], cost) for i in members]

    if workers > 1 and len(jobs) > 1 and threads_allowed():
        with ThreadPoolExecutor(min(workers, len(jobs))) as pool:
            done = list(pool.map(run, jobs))
    else:
        done = [run(job) for job in jobs]
    for (members, _), results in zip(jobs, done):
        for i, result in zip(members, results):
            if isinstance(result, LaunchEvents):
                result.call_stack = window[i].kept.call_stack
            out[i] = result
    return out


def _read(window: list[KeptBuffer], batches: list[list[int]], memory: WindowMemory) -> tuple[list, list]:
    """Each batch's buffers as one (launches, bytes) array, read side by
    side into `memory` (a buffer read before, `data`, is copied there), and
    each item's row. The items are not changed: several passes may decode
    them at once (launch_windows.SharedPasses)."""
    sizes = [window[b[0]].kept.buffer.nbytes for b in batches]
    room = memory.take(sum(size * len(b) for size, b in zip(sizes, batches)))
    blocks, rows, at = [], [None] * len(window), 0
    for members, size in zip(batches, sizes):
        block = room[at : at + size * len(members)].reshape(len(members), size)
        for row, i in zip(block, members):
            item = window[i]
            if item.data is None:
                item.kept.buffer.read(out=row)
            else:
                row[:] = item.data
            rows[i] = row
        blocks.append(block)
        at += size * len(members)
    return blocks, rows


def _decode_one(item: KeptBuffer, data, cost: float):
    try:
        return decode.decode(
            data,
            item.meta,
            data.nbytes // item.meta.layout.bytes_per_cta,
            kernel=item.kernel,
            launch=item.kept.index,
            record_cost_cycles=cost,
        )
    except (BufferFormatError, ProfilerError) as error:
        return error


class DecodedKeptLaunches:
    """The writers' source of a session's decoded launches
    (launch_windows.source): re-iterable, each pass reading and decoding
    the buffers again (or the launches kept from the first pass,
    `kept_events`), a window of at most WINDOW_EVENTS events (or one
    launch) at a time."""

    def __init__(self, items: list[KeptBuffer], cost: float, facts: LaunchFacts, kept_events: list | None = None):
        self.items, self.cost, self.facts = items, cost, facts
        self.kept_events = kept_events

    def __iter__(self):
        for window in self.windows():
            yield from window

    def windows(self):
        if self.kept_events is not None:
            yield from windows(self.kept_events, lambda ev: 0, lambda ev: ev.num_events)
            return
        memory = WindowMemory()
        for window in windows(self.items, lambda item: item.kept.buffer.nbytes, lambda item: item.events):
            decoded = decode_window(window, self.cost, memory)
            for result in decoded:
                if not isinstance(result, LaunchEvents):
                    raise ProfilerError(f"a launch decoded at first failed to decode again: {result}")
            yield decoded
