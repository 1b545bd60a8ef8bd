"""Values (proton.language.record_value) in the Perfetto trace: counter
tracks, one per launch, warp and value name, each a child of its warp's
track and named after the value.

Per warp rather than per CTA: the warps of a CTA may record different
values at the same time (a producer's and a consumer's iteration, or each
warp its own partial sum); one CTA-wide track would interleave them into a
saw-tooth. Sites that share a name share the warp's track.

The counter points are built with numpy (a loop records a value per
iteration, so they can be as many as the scope slices), on a packet
sequence of their own with absolute timestamps on the trace clock:

    0a L | 50 seq | 40 ts | 5a n 48 04 58 track e1 02 <f64>

(Trace.packet = 1; TracePacket trusted_packet_sequence_id = 10, timestamp
= 8, track_event = 11; TrackEvent type = 9 (TYPE_COUNTER = 4), track_uuid =
11, double_counter_value = 44, a fixed64.) An i32 is exact as a double.
"""

from __future__ import annotations

import numpy as np

from . import byte_rows
from .perfetto_packets import SEQ_INCREMENTAL_STATE_CLEARED, trace_packet, varint_bytes
from ..contract.events import LaunchEvents

SEQUENCE_ID = 3  # 1: warp slices, 2: asynchronous events (async_events)
TYPE_COUNTER = 4
#: Counter tracks rank after any warp-level child track.
RANK_BASE = 1 << 20


def has_values(launches) -> bool:
    return any(ev.asynchronous.num_values for ev, _, _ in launches)


def packets(launches, origin_ns: int, next_uuid: int) -> tuple[bytes, int]:
    """Trace bytes of the counter tracks and points of `launches`, a list of
    (LaunchEvents, CTA track uuids, warp track uuids); track uuids start at
    `next_uuid`. Returns the bytes and the next free uuid."""
    if not has_values(launches):
        return b"", next_uuid
    out = [first_packet()]
    for ev, _, warp_uuid in launches:
        data, next_uuid = launch_packets(ev, ev.origin_ns - origin_ns, warp_uuid, next_uuid)
        out.append(data)
    return b"".join(out), next_uuid


def first_packet() -> bytes:
    """The packet that opens the counters' sequence."""
    return trace_packet(bytes([0x50, SEQUENCE_ID, 0x68, SEQ_INCREMENTAL_STATE_CLEARED]))


def track_keys(ev: LaunchEvents):
    """The launch's counter tracks: (value names sorted, the tracks' keys
    `warp row * len(names) + name index` sorted, each value's index into
    those keys)."""
    a = ev.asynchronous
    names = sorted({ev.scope_names[i] for i in np.unique(a.value_id)})
    name_of_id = np.array([names.index(n) if n in names else -1 for n in ev.scope_names], dtype=np.int64)
    key = a.value_row * len(names) + name_of_id[a.value_id]
    used, dense = np.unique(key, return_inverse=True)
    return names, used, dense


def launch_packets(ev: LaunchEvents, shift_ns: int, warp_uuid: np.ndarray, next_uuid: int) -> tuple[bytes, int]:
    """A launch's counter tracks and points; and the next free uuid."""
    a = ev.asynchronous
    if a.num_values == 0:
        return b"", next_uuid
    names, used, dense = track_keys(ev)
    uuid = next_uuid + np.arange(used.size, dtype=np.uint64)
    rows, name_index = used // len(names), used % len(names)
    descriptors = b"".join(
        _descriptor(int(uuid[k]), int(warp_uuid[rows[k]]), names[name_index[k]], RANK_BASE + int(name_index[k]))
        for k in range(used.size)  # per track, not per point
    )
    order = np.argsort(a.value_ns, kind="stable")
    ts = np.maximum(np.rint(a.value_ns[order] + shift_ns), 0).astype(np.uint64)
    C, V = byte_rows.const, byte_rows.varint
    n = order.size
    event = byte_rows.concat(
        [
            C(bytes([0x48, TYPE_COUNTER, 0x58]), n),
            V(uuid[dense[order]]),
            C(b"\xe1\x02", n),
            (a.value[order].astype("<f8").view(np.uint8).reshape(n, 8), np.full(n, 8, dtype=np.int64)),
        ]
    )
    packet = byte_rows.concat([C(bytes([0x50, SEQUENCE_ID, 0x40]), n), V(ts), C(b"\x5a", n), V(event[1]), event])
    points = byte_rows.join(byte_rows.concat([C(b"\x0a", n), V(packet[1]), packet]))
    return descriptors + points, next_uuid + used.size


def _descriptor(uuid: int, parent: int, name: str, rank: int) -> bytes:
    """A TracePacket with a counter TrackDescriptor {uuid 1, name 2,
    parent_uuid 5, counter 8 (empty), sibling_order_rank 12}."""
    name_bytes = name.encode()
    desc = (
        b"\x08"
        + varint_bytes(uuid)
        + b"\x12"
        + varint_bytes(len(name_bytes))
        + name_bytes
        + b"\x28"
        + varint_bytes(parent)
        + b"\x42\x00"
        + b"\x60"
        + varint_bytes(rank)
    )
    return trace_packet(b"\xe2\x03" + varint_bytes(len(desc)) + desc)  # track_descriptor = 60
