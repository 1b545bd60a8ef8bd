"""Perfetto TracePacket bytes for the slices of warp tracks, built with numpy.

All slice packets share one packet sequence (SEQUENCE_ID). Each warp's
packets are written together, after a header packet that (a) makes the
warp's track the sequence's default track (TrackEventDefaults.track_uuid),
so slice packets carry no track, and (b) resets the sequence's incremental
clock (CLOCK_ID, ClockSnapshot.Clock.is_incremental) to the warp's first
timestamp, so every slice packet's timestamp is the small delta from the
packet before it. A slice packet is then 10 to 12 bytes:

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
    begin or end, as rows."""
    n = kind.size
    begin = kind == SLICE_BEGIN
    iid = byte_rows.varint(name_iid)
    event_len = 2 + np.where(begin, 1 + iid[1], 0)
    stamp = byte_rows.varint(delta)
    packet_len = 2 + 1 + stamp[1] + 2 + event_len
    C = byte_rows.const
    pieces = [
        C(b"\x0a", n),
        byte_rows.varint(packet_len),
        C(HEADER_FIELDS + b"\x40", n),
        stamp,
        C(b"\x5a", n),
        byte_rows.varint(event_len),
        C(b"\x48", n),
        byte_rows.varint(kind),
        C(b"\x50", n),
        iid,
    ]
    masks = [None] * 8 + [begin, begin]
    return byte_rows.concat(pieces, masks)


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
    that are grouped (by `group`, e.g. the warp) so that each group's
    slices nest: by cycle; at one cycle, the ends of slices that began
    earlier (innermost first), then the begins, longest first, each
    zero-length slice's end right after its begin."""
    n = start_cycles.size
    duration = end_cycles - start_cycles
    zero = duration == 0
    index = np.arange(n)
    cycle = np.concatenate((start_cycles, end_cycles))
    after_begins = np.concatenate((np.ones(n, np.int8), zero.astype(np.int8)))
    within = np.concatenate((-duration, np.where(zero, 0, -start_cycles)))
    is_end = np.concatenate((np.zeros(n, np.int8), np.ones(n, np.int8)))
    return np.lexsort(
        (is_end, np.concatenate((index, index)), within, after_begins, cycle, np.concatenate((group, group)))
    )
