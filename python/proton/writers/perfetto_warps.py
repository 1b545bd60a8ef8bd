"""The warp part of a .pftrace: per warp (row of a launch) a header and its
slice packets (perfetto_packets), written by first timestamp a chunk of
warps at a time.

Warps that wrote the same scope sequence (usually all of a kernel) share
one packet order, taken from one of them and checked on all, and one byte
layout (each varint as wide as its column's widest value, narrower ones
padded), filled from a template with each warp's values, as whole
(warps x bytes) matrices. Any other warp is sorted and encoded packet by
packet (still vectorized, a few times slower). The chunk's bytes go to the
file in order with writev, without joining them first. Chunks are small
(CHUNK_PACKETS) so that their arrays are memory the allocator reuses.
"""

from __future__ import annotations

import functools
import os

import numpy as np

from . import byte_rows
from .perfetto_tracks import warp_uuids
from .perfetto_packets import (
    SLICE_BEGIN,
    SLICE_END,
    header_value_columns,
    packet_order,
    slice_packets,
    varint_width,
    warp_headers,
)

CHUNK_PACKETS = 1 << 15  # slice packets encoded at a time
MAX_PATTERNS = 8  # scope sequences tried per event count before the general path
MIN_SHARED = 4  # warps a template must serve (building one costs about as much as encoding a few warps)
IOV_MAX = 1024  # buffers per writev (Linux's limit)


def rounded_ns(ns: np.ndarray, shift) -> np.ndarray:
    """Trace timestamps: ns + shift (a number, or one per value), rounded,
    at least 0 (in place on a float copy)."""
    out = np.add(ns, np.asarray(shift, dtype=np.float64))
    np.maximum(out, 0, out=out)
    np.rint(out, out=out)
    return out.astype(np.uint64)


class Warps:
    """Stacked launches' warps that have events (writers/stacked_launches):
    where each one's events are (in row order), its track uuid and its
    first timestamp, the launch's time shift applied."""

    def __init__(self, ev, iid_of_scope: np.ndarray, warp_uuid: np.ndarray):
        self.ev, self.iid_of_scope, self.uuid = ev, iid_of_scope, warp_uuid
        self.shift = ev.shift  # per row
        row = ev.row
        rows = ev.warp_ids.size
        self.counts, sorted_rows = _row_counts(row, rows)
        self.perm = None if sorted_rows else np.argsort(row, kind="stable")
        self.starts = np.cumsum(self.counts) - self.counts
        self.rows = np.flatnonzero(self.counts)
        # A warp's ns rise with its cycles (and rounding keeps the order), so
        # its earliest start is the ns of its smallest start cycle: no
        # per-event ns column (ev.start_ns would keep 8 bytes per event).
        if self.perm is None:
            low = np.minimum.reduceat(ev.start_cycles, self.starts[self.rows]) if self.rows.size else row[:0]
        else:
            low = np.full(rows, np.iinfo(np.int64).max)
            np.minimum.at(low, row, ev.start_cycles)
            low = low[self.rows]
        first = ev.ns_at(low, self.rows)
        self.first = rounded_ns(first, self.shift[self.rows])  # a slice's begin is its warp's earliest packet
        # Rows of equal length in row order: a row's events are one row of a matrix.
        self.slab = self.perm is None and self.rows.size == rows > 0 and bool((self.counts == self.counts[0]).all())
        self.clamp = bool(first.size) and bool((first + self.shift[self.rows] < 0).any())  # below 0 becomes 0

    def take(self, values: np.ndarray, rows, count: int) -> np.ndarray:
        """values (per event) of `rows`, each with `count` events, as a matrix."""
        if self.slab:
            return values.reshape(-1, count)[rows]
        return values[self.events(rows, count)]

    def take_ns(self, cycles: np.ndarray, rows, count: int) -> np.ndarray:
        """ns of per-event `cycles` of `rows`, each with `count` events, as a
        matrix (converted here, a chunk of warps at a time)."""
        return self.ev.ns_at(self.take(cycles, rows, count), rows[:, None])

    def events(self, rows, count=None):
        """Event indices of `rows`: (rows, count) when each has `count`
        events, else flat, row after row."""
        if count is not None:
            index = self.starts[rows][:, None] + np.arange(count)
        else:
            counts = self.counts[rows]
            index = np.repeat(self.starts[rows] - np.cumsum(counts) + counts, counts) + np.arange(counts.sum())
        return index if self.perm is None else self.perm[index]


def _row_counts(row: np.ndarray, rows: int, at_once: int = 1 << 20):
    """Events per warp, and whether `row` is sorted, a slice at a time
    (np.bincount would copy all of `row` to int64)."""
    counts = np.zeros(rows, dtype=np.int64)
    ordered = True
    for lo in range(0, row.size, at_once):
        part = row[lo : lo + at_once + 1]  # one past: the order across slices
        counts += np.bincount(part[:at_once], minlength=rows)
        ordered = ordered and bool((part[1:] >= part[:-1]).all())
    return counts, ordered


def later_first(facts, origin_ns: int) -> list:
    """Per launch index i (0 to the number of launches): the earliest warp
    timestamp, as Warps.first writes it, of launches i and after (None:
    none has events), from LaunchFacts.launch_first and the origins."""
    n = len(facts.launch_first)
    has = np.array([f is not None for f in facts.launch_first], dtype=bool)
    first = np.array([f for f in facts.launch_first if f is not None], dtype=np.float64)
    # A launch's shift, as the float its int becomes (StackedLaunches.shift).
    shift = np.array([float(o - origin_ns) for o, h in zip(facts.launch_origins, has.tolist()) if h])
    stamps = np.full(n + 1, np.iinfo(np.int64).max, dtype=np.int64)
    stamps[:n][has] = rounded_ns(first, shift).astype(np.int64)  # ns of a trace: below 2**63
    low = np.minimum.accumulate(stamps[::-1])[::-1]
    return [None if v == np.iinfo(np.int64).max else v for v in low.tolist()]


class WarpWriter:
    """All warps' headers and slice packets, by first timestamp over the
    whole trace, ties in launch order, then warp order (the incremental
    clock's resets must not go back in time), a window at a time. A
    window's warps are encoded a chunk at a time; bytes wait only for warps
    of earlier timestamps not yet encoded (launches that overlap in time):
    `later` (later_first) says which timestamps are still to come.
    `layout`: perfetto_tracks.TrackLayout; `warps_of(stack, uuid)` makes a
    group's Warps."""

    def __init__(self, out, layout, warps_of, origin_ns: int, later: list):
        self.out, self.layout, self.warps_of, self.later = out, layout, warps_of, later
        self.origin_ns = origin_ns
        self.pending = _Pending()

    def window(self, stacks: list, launch0: int, launches: int) -> None:
        """`stacks`: (indices in the window, StackedLaunches, first uuids)
        per group of the window, whose first launch is `launch0`."""
        pending, later = self.pending, self.later[launch0 + launches]
        chunks = _WindowWarps(stacks, launch0, self.warps_of)
        for chunk, before in chunks.chunks():
            pending.first, pending.enum = chunks.first[chunk], chunks.enum[chunk]
            for g, warps in enumerate(chunks.warps):
                at = np.flatnonzero(chunks.group[chunk] == g)
                if at.size:
                    _encode(warps, chunks.row[chunk[at]], at, pending)
            _write_views(self.out, pending.take(before, later))

    def close(self) -> None:
        _write_views(self.out, self.pending.take(None, None))


class _WindowWarps:
    """A window's warps with events, over its groups of stacked launches:
    per warp its group, row, first timestamp and launch-and-warp key."""

    def __init__(self, stacks: list, launch0: int, warps_of):
        self.warps, firsts, enums, groups, rows = [], [], [], [], []
        for g, (group, stack, base) in enumerate(stacks):
            warps = warps_of(stack, warp_uuids(stack, base))
            launch = (launch0 + np.array(group, dtype=np.int64))[warps.rows // stack.rows_per_launch]
            self.warps.append(warps)
            firsts.append(warps.first)
            enums.append(launch * (1 << 32) + warps.rows % stack.rows_per_launch)
            groups.append(np.full(warps.rows.size, g))
            rows.append(warps.rows)
        self.first, self.enum = np.concatenate(firsts), np.concatenate(enums)
        self.group, self.row = np.concatenate(groups), np.concatenate(rows)
        self.packets = np.concatenate([2 * w.counts[w.rows] for w in self.warps])

    def chunks(self):
        """(warps of a chunk, in trace order; the key (first, enum) of the
        next chunk's first warp, or None) for chunks of CHUNK_PACKETS."""
        order = np.lexsort((self.enum, self.first))
        ends = np.cumsum(self.packets[order])
        begin = 0
        while begin < order.size:
            done = int(ends[begin - 1]) if begin else 0
            end = max(int(np.searchsorted(ends, done + CHUNK_PACKETS, "right")), begin + 1)
            after = None if end >= order.size else (int(self.first[order[end]]), int(self.enum[order[end]]))
            yield order[begin:end], after
            begin = end


class _Pending:
    """Byte ranges of encoded warps not yet written, each with its warp's
    key (first timestamp, launch and warp) and part (header, packets):
    `take` gives those whose turn has come, in trace order. Each added
    batch is kept sorted by key, so a turn is a prefix of each batch:
    warps held long (launches that overlap) cost nothing per turn."""

    def __init__(self):
        self.batches: list[tuple[np.ndarray, np.ndarray]] = []  # (buffer, entries sorted by key)
        self.first = self.enum = None  # keys of the warps being added, by position

    def add(self, buffer: np.ndarray, position, offset, length, part: int = 0):
        position = np.asarray(position, dtype=np.int64)
        n = position.size
        entries = np.stack(
            [
                self.first[position].astype(np.int64),  # ns of a trace: below 2**63
                self.enum[position],
                np.full(n, part),
                np.broadcast_to(np.asarray(offset, np.int64), (n,)),
                np.broadcast_to(np.asarray(length, np.int64), (n,)),
            ]
        )
        if not bool((position[1:] > position[:-1]).all()):  # positions are in key order: sorted already
            entries = entries[:, np.lexsort((entries[2], entries[1], entries[0]))]
        self.batches.append((buffer, entries))

    def take(self, before, up_to_first) -> list:
        """Views of the ranges of warps with key < `before` (None: any) and
        first timestamp <= `up_to_first` (None: any), in trace order."""
        taken, kept = [], []
        for buffer, entries in self.batches:
            first, enum = entries[0], entries[1]
            turn = len(first)
            if up_to_first is not None:
                turn = int(np.searchsorted(first, up_to_first, "right"))
            if before is not None:
                lo = int(np.searchsorted(first[:turn], before[0], "left"))
                hi = int(np.searchsorted(first[:turn], before[0], "right"))
                turn = lo + int(np.searchsorted(enum[lo:hi], before[1], "left"))
            if turn:
                taken.append((buffer, entries[:, :turn]))
            if turn < len(first):
                kept.append((buffer, entries[:, turn:]))
        self.batches = kept
        return _views(taken)


def _views(batches: list) -> list:
    """Memory views of the ranges of (buffer, entries), by key and part;
    ranges that continue the previous one in the same buffer merge."""
    if not batches:
        return []
    entries = np.concatenate([e for _, e in batches], axis=1)
    buf = np.concatenate([np.full(e.shape[1], k) for k, (_, e) in enumerate(batches)])
    first, enum, part, off, length = entries
    order = np.lexsort((part, enum, first))
    buf, off, length = buf[order], off[order], length[order]
    new = np.ones(buf.size, dtype=bool)
    new[1:] = (buf[1:] != buf[:-1]) | (off[1:] != off[:-1] + length[:-1])
    starts = np.flatnonzero(new)
    ends = np.append(starts[1:], buf.size)
    total = np.cumsum(length)
    sizes = total[ends - 1] - total[starts] + length[starts]
    views = [memoryview(b) for b, _ in batches]
    return [views[b][o : o + s] for b, o, s in zip(buf[starts].tolist(), off[starts].tolist(), sizes.tolist())]


def _encode(w: Warps, rows: np.ndarray, position: np.ndarray, parts: _Pending) -> None:
    """Adds the bytes of `rows` (to be written at `position`)."""
    counts = w.counts[rows]
    distinct, number = np.unique(counts, return_counts=True)
    general = np.isin(counts, distinct[number < MIN_SHARED])
    for count in distinct[number >= MIN_SHARED].tolist():
        todo = np.flatnonzero(counts == count)
        scopes = w.take(w.ev.scope, rows[todo], count)
        for _ in range(MAX_PATTERNS):
            same = (scopes == scopes[0]).all(axis=1)
            mine = todo[same]
            if mine.size >= MIN_SHARED:
                general[mine[_encode_pattern(w, rows[mine], position[mine], scopes[0], parts)]] = True
            else:
                general[mine] = True
            todo, scopes = todo[~same], scopes[~same]
            if not todo.size:
                break
        general[todo] = True
    if general.any():
        _encode_general(w, rows[general], position[general], parts)


def _encode_pattern(w: Warps, rows, position, scopes, parts: _Pending) -> np.ndarray:
    """Rows that wrote the same scope sequence (`scopes`) in one packet
    order, taken from the first row; returns a mask of the rows left to the
    general path (where that order is not the order of their cycles)."""
    ev = w.ev
    n, m = rows.size, scopes.size
    first = w.events(rows[:1], m)[0]
    order = packet_order(ev.start_cycles[first], ev.end_cycles[first], np.zeros(m, np.int64))
    stamps = np.empty((n, 2 * m))
    stamps[:, :m] = w.take_ns(ev.start_cycles, rows, m)
    stamps[:, m:] = w.take_ns(ev.end_cycles, rows, m)
    stamps = np.take(stamps, order, axis=1)
    # Nanoseconds rise with a warp's cycles, so this checks the order on the
    # cycles; where two packets share a cycle (zero-length scopes, one
    # ending as the next begins) the rule's tie-breaks decide.
    left = ~(stamps[:, 1:] >= stamps[:, :-1]).all(axis=1)
    tied = np.flatnonzero(~left & (stamps[:, 1:] == stamps[:, :-1]).any(axis=1))
    if tied.size:
        left[tied] = ~_ties_follow_the_rule(w, rows[tied], m, order, stamps[tied])
    if left.all():
        return left
    keep = ~left
    if not keep.all():
        stamps, rows, position = stamps[keep], rows[keep], position[keep]
    # Timestamps as written (rounded ns; an end is never before its begin
    # since ns rise with cycles), as whole floats: their differences are exact.
    stamps += w.shift[rows][:, None]
    if w.clamp:
        np.maximum(stamps, 0, out=stamps)
    np.rint(stamps, out=stamps)
    delta = np.diff(stamps, axis=1)
    head = np.stack((w.uuid[rows], stamps[:, 0].astype(np.uint64)), axis=1)
    is_end = order >= m
    kind = np.where(is_end, SLICE_END, SLICE_BEGIN).astype(np.uint64)
    iid = np.zeros(2 * m, dtype=np.uint64)
    iid[~is_end] = w.iid_of_scope[scopes[order[~is_end]]]
    # One byte layout for the group: each varint as wide as the widest
    # value in its column; narrower values are written padded (continuation
    # bytes of zero bits, which protobuf readers accept). A group of warps
    # then costs one template fill, however their deltas differ.
    width = np.concatenate((varint_width(head.max(axis=0)), varint_width(delta.max(axis=0))))
    block = _fill(kind, iid, width, head, delta)
    count, size = block.shape
    parts.add(block.reshape(-1), position, np.arange(count) * size, np.full(count, size))
    return left


def _ties_follow_the_rule(w: Warps, rows, m: int, order, stamps) -> np.ndarray:
    """Per row (each with m events and a tie somewhere in `order`): whether
    every two packets of one cycle are in packet_order's order (ends of
    slices that began earlier, then begins longest first, a zero-length
    slice's end right after its begin; then by event and kind)."""
    ev = w.ev
    start, end = w.take(ev.start_cycles, rows, m).astype(np.int64), w.take(ev.end_cycles, rows, m).astype(np.int64)
    src, is_end = order % m, order >= m
    duration = (end - start)[:, src]
    zero = duration == 0
    after_begins = np.where(is_end, zero, True)
    within = np.where(is_end, np.where(zero, 0, -start[:, src]), -duration)
    a, b = slice(None, -1), slice(1, None)
    ahead = (after_begins[:, a] < after_begins[:, b]) | (
        (after_begins[:, a] == after_begins[:, b])
        & (
            (within[:, a] < within[:, b])
            | ((within[:, a] == within[:, b]) & ((src[a] < src[b]) | ((src[a] == src[b]) & (is_end[a] < is_end[b]))))
        )
    )
    return np.where(stamps[:, 1:] == stamps[:, :-1], ahead, True).all(axis=1)


def _fill(kind, iid, width, head, delta) -> np.ndarray:
    """Warps whose header and packets have the same varint widths (uuid,
    first timestamp, the 2m - 1 deltas after the first packet's 0): one
    warp's bytes as a template, each warp's values written in place."""
    template, start = _template(kind.tobytes(), iid.tobytes(), width.astype(np.int64).tobytes())
    width = width.astype(np.int64)
    block = np.empty((head.shape[0], template.size), dtype=np.uint8)
    block[:] = template
    _put_varints(block, start[:2], width[:2], head)  # u64: the first timestamp needs all its bits
    _put_varints(block, start[2:], width[2:], delta)
    return block


@functools.lru_cache(maxsize=1024)
def _template(kind: bytes, iid: bytes, width: bytes):
    """One warp's bytes for packet kinds, name iids and varint widths (as
    bytes, to be a cache key: a kernel's warps of one event count share it
    across chunks), and the columns where the header's two values and each
    delta start."""
    kind, iid = np.frombuffer(kind, np.uint64), np.frombuffer(iid, np.uint64)
    width = np.frombuffer(width, np.int64)
    probe = np.where(width == 1, 0, np.left_shift(1, 7 * (width - 1))).astype(np.uint64)
    header = warp_headers(probe[:1], probe[1:2])
    packets, lengths = slice_packets(kind, iid, np.concatenate(([0], probe[2:])).astype(np.uint64))
    template = np.concatenate((np.frombuffer(byte_rows.join(header), dtype=np.uint8), packets))
    packet_start = int(header[1][0]) + np.cumsum(lengths) - lengths
    start = np.concatenate((header_value_columns(int(width[0])), packet_start[1:] + 5))  # 0a L 50 seq 40 delta
    return template, start


def _put_varints(block, start, width, values) -> None:
    """Writes values (rows x k of whole numbers: u64, or float deltas) as
    varints of the given widths at columns `start`: a byte position at a
    time over all rows, in 32-bit integers where they fit (most deltas take
    one or two bytes)."""
    top = float(values.max()) if values.size else 0.0
    values = values.astype(np.uint32 if top < 2**32 else np.uint64)
    for size in np.unique(width).tolist():
        at = np.flatnonzero(width == size)
        part = values if at.size == width.size else values[:, at]
        for k in range(size):
            byte = part >> (7 * k) if k else part
            if k < size - 1:
                byte = (byte & 0x7F) | 0x80
            block[:, start[at] + k] = byte


def _encode_general(w: Warps, rows, position, parts: _Pending) -> None:
    """Any warps: packets sorted per warp and encoded one by one (with numpy)."""
    ev = w.ev
    events = w.events(rows)
    counts = w.counts[rows]
    n = events.size
    order = packet_order(ev.start_cycles[events], ev.end_cycles[events], np.repeat(np.arange(rows.size), counts))
    is_end = order >= n
    at = events[order % n]
    row = ev.row[at]
    start = rounded_ns(ev.ns_at(ev.start_cycles[at], row), w.shift[row])
    end = rounded_ns(ev.ns_at(ev.end_cycles[at], row), w.shift[row])
    stamps = np.where(is_end, np.maximum(end, start), start).view(np.int64)
    delta = np.zeros_like(stamps)
    delta[1:] = stamps[1:] - stamps[:-1]
    first = np.cumsum(2 * counts) - 2 * counts
    delta[first] = 0
    kind = np.where(is_end, SLICE_END, SLICE_BEGIN).astype(np.uint64)
    iid = np.where(is_end, np.uint64(0), w.iid_of_scope[ev.scope[at]])
    headers = warp_headers(w.uuid[rows], stamps[first].view(np.uint64))
    parts.add(
        np.frombuffer(byte_rows.join(headers), np.uint8),
        position,
        np.cumsum(headers[1]) - headers[1],
        headers[1],
        part=0,
    )
    packets, lengths = slice_packets(kind, iid, delta.view(np.uint64))
    ends = np.cumsum(lengths)[np.cumsum(2 * counts) - 1]
    parts.add(
        packets,
        position,
        np.concatenate(([0], ends[:-1])),
        np.diff(ends, prepend=0),
        part=1,
    )


def _write_views(out, views: list) -> None:
    """Writes byte views in order: gathered by the kernel (writev) where
    the system has it, else joined; a sink of its own (perfetto_deflate)
    takes them as they are."""
    if hasattr(out, "write_views"):
        out.write_views(views)
        return
    if not hasattr(os, "writev"):
        out.write(b"".join(views))
        return
    out.flush()
    fd = out.fileno()
    for i in range(0, len(views), IOV_MAX):
        batch = views[i : i + IOV_MAX]
        written = os.writev(fd, batch)
        total = sum(v.nbytes for v in batch)
        if written < total:  # a short write: the rest, plainly
            rest = b"".join(bytes(v) for v in batch)[written:]
            while rest:
                rest = rest[os.write(fd, rest) :]
