"""Perfetto TracePacket bytes for the slices of warp tracks, built with numpy.

All slice packets share one packet sequence (SEQUENCE_ID). Each warp's
packets are written together, after a header packet that (a) makes the
warp's track the sequence's default track (TrackEventDefaults.track_uuid),
so slice packets carry no track, and (b) resets the sequence's incremental
clock (CLOCK_ID, ClockSnapshot.Clock.is_incremental) to the warp's first
timestamp, so every slice packet's timestamp is the small delta from the
packet before it. A slice packet is then 10 to 13 bytes (deltas of up to
two varint bytes, name ids below 128):

    begin: 0a L | 50 seq | 40 delta | 5a n 48 01 50 name_iid
    end:   0a L | 50 seq | 40 delta | 5a n 48 02

(Trace.packet; TracePacket trusted_packet_sequence_id = 10, timestamp = 8,
track_event = 11; TrackEvent type = 9, name_iid = 10.)

A "rows" value is byte_rows' (matrix, lengths), one row per packet or warp.
"""

from __future__ import annotations

import numpy as np

from . import byte_rows

SEQUENCE_ID = 1
CLOCK_ID = 64  # the first sequence-scoped clock id
BOOTTIME = 6  # the trace's clock (BuiltinClock.BOOTTIME)
SLICE_BEGIN, SLICE_END = 1, 2
SEQ_INCREMENTAL_STATE_CLEARED = 1
HEADER_FIELDS = bytes([0x50, SEQUENCE_ID])  # trusted_packet_sequence_id


def varint_bytes(value: int) -> bytes:
    """The protobuf varint of one non-negative integer (for the few packets
    built one at a time)."""
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def trace_packet(body: bytes) -> bytes:
    """A TracePacket's bytes framed as a Trace.packet (field 1)."""
    return b"\x0a" + varint_bytes(len(body)) + body


def varint_width(values: np.ndarray) -> np.ndarray:
    """Bytes of the protobuf varint of each value (non-negative integers)."""
    width = np.ones(values.shape, dtype=np.uint8)
    top = int(values.max()) if values.size else 0
    for bits in range(7, 64, 7):
        if top < 1 << bits:
            break
        width += values >= (1 << bits)
    return width


def slice_packets(kind: np.ndarray, name_iid: np.ndarray, delta: np.ndarray):
    """One TracePacket (with its Trace.packet tag and length) per slice
    begin or end, as (flat bytes, length of each packet). Fixed bytes and
    each varint byte are scattered to their places a column at a time, so
    the cost is a few passes over the packets whatever their widths."""
    n = kind.size
    begin = kind == SLICE_BEGIN
    delta_width = varint_width(delta).astype(np.int64)
    iid_width = np.where(begin, varint_width(name_iid), 0).astype(np.int64)
    event_len = 2 + np.where(begin, 1 + iid_width, 0)  # 48 kind [50 iid]
    packet_len = 5 + delta_width + event_len  # 50 seq 40 delta 5a n event: under 128, one byte
    lengths = 2 + packet_len
    at = np.cumsum(lengths) - lengths
    out = np.empty(int(lengths.sum()) if n else 0, dtype=np.uint8)
    for k, byte in enumerate((0x0A, None, 0x50, SEQUENCE_ID, 0x40)):
        out[at + k] = packet_len if byte is None else byte
    _scatter_varints(out, at + 5, delta, delta_width)
    at = at + 5 + delta_width
    for k, byte in enumerate((0x5A, None, 0x48, None)):
        out[at + k] = (event_len if k == 1 else kind) if byte is None else byte
    b = np.flatnonzero(begin)
    out[at[b] + 4] = 0x50
    _scatter_varints(out, at[b] + 5, name_iid[b], iid_width[b])
    return out, lengths


def _scatter_varints(out: np.ndarray, at: np.ndarray, values, width: np.ndarray) -> None:
    """Writes values as varints of `width` bytes each, starting at `at`."""
    values = np.asarray(values, dtype=np.uint64)
    top = int(width.max()) if width.size else 0
    for k in range(top):
        some = width > k
        part = values if some.all() else values[some]
        last = (width if some.all() else width[some]) - 1 == k
        byte = ((part >> np.uint64(7 * k)) & np.uint64(0x7F)).astype(np.uint8)
        byte[~last] |= 0x80
        out[(at if some.all() else at[some]) + k] = byte


def header_value_columns(uuid_width: int):
    """Where a warp header's track uuid and first timestamp varints start."""
    return 13, 13 + uuid_width + 7


def warp_headers(track_uuid: np.ndarray, first_ns: np.ndarray):
    """Per warp: TracePacket{trusted_packet_sequence_id, trace_packet_defaults
    {timestamp_clock_id: CLOCK_ID, track_event_defaults{track_uuid}},
    clock_snapshot{clocks: [{clock_id: CLOCK_ID, timestamp: first_ns,
    is_incremental}]}}, as rows."""
    n = track_uuid.size
    C = byte_rows.const
    uuid = byte_rows.varint(track_uuid)
    track_defaults = byte_rows.concat([C(b"\x58", n), uuid])  # track_uuid = 11
    defaults = byte_rows.concat(
        [
            C(bytes([0xD0, 0x03, CLOCK_ID, 0x5A]), n),  # timestamp_clock_id = 58,
            byte_rows.varint(track_defaults[1]),
            track_defaults,
        ]
    )  # track_event_defaults = 11
    clock = byte_rows.concat(
        [C(bytes([0x08, CLOCK_ID, 0x10]), n), byte_rows.varint(first_ns), C(b"\x18\x01", n)]
    )  # clock_id, timestamp, is_incremental
    snapshot = byte_rows.concat([C(b"\x0a", n), byte_rows.varint(clock[1]), clock])  # ClockSnapshot.clocks = 1
    packet = byte_rows.concat(
        [
            C(HEADER_FIELDS + b"\xda\x03", n),
            byte_rows.varint(defaults[1]),
            defaults,
            C(b"\x32", n),
            byte_rows.varint(snapshot[1]),
            snapshot,
        ]
    )  # defaults = 59, clock_snapshot = 6
    return byte_rows.concat([C(b"\x0a", n), byte_rows.varint(packet[1]), packet])


def packet_order(start_cycles, end_cycles, group):
    """Order of the begin (first n) and end (last n) packets of n slices
    that are grouped (by `group`, sorted, e.g. the warp) so that each
    group's slices nest: by cycle; at one cycle, the ends of slices that
    began earlier (innermost first), then the begins, longest first, each
    zero-length slice's end right after its begin.

    One sort on (group, cycle) packed into an int64; only packets that
    share a group and cycle are then ordered by the rest of the rule."""
    n = start_cycles.size
    cycle = np.concatenate((start_cycles, end_cycles)).astype(np.int64)
    groups = np.concatenate((group, group))
    if not n:
        return np.zeros(0, dtype=np.int64)
    first = np.flatnonzero(np.concatenate(([True], group[1:] != group[:-1])))
    low = np.minimum(np.minimum.reduceat(start_cycles, first), np.minimum.reduceat(end_cycles, first))
    member = np.repeat(np.arange(first.size), np.diff(np.append(first, n)))
    since = cycle - np.concatenate((low, low))[np.concatenate((member, member))]
    span = int(since.max()) + 1
    if first.size * span >= 1 << 62:  # does not pack: sort on every key
        return _order_by_rule(start_cycles, end_cycles, groups, cycle, np.arange(2 * n))
    key = np.concatenate((member, member)).astype(np.int64) * span + since
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    tie = sorted_key[1:] == sorted_key[:-1]
    if tie.any():
        tied = np.zeros(2 * n, dtype=bool)
        tied[1:] |= tie
        tied[:-1] |= tie
        at = np.flatnonzero(tied)
        members = order[at]
        order[at] = members[_order_by_rule(start_cycles, end_cycles, groups[members], cycle[members], members)]
    return order


def _order_by_rule(start_cycles, end_cycles, groups, cycle, packets):
    """packet_order's rule on some packets (indices into the 2n), by
    group, cycle and the tie-breaks; returns positions into `packets`."""
    n = start_cycles.size
    index = packets % n
    is_end = packets >= n
    duration = end_cycles[index] - start_cycles[index]
    zero = duration == 0
    after_begins = np.where(is_end, zero, True).astype(np.int8)
    within = np.where(is_end, np.where(zero, 0, -start_cycles[index]), -duration)
    return np.lexsort((is_end.astype(np.int8), index, within, after_begins, cycle, groups))
