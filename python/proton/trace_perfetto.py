"""Perfetto protobuf traces (.pftrace, open in ui.perfetto.dev).

Tracks: GPU > SM > CTA (one per launch and CTA) > warp, each level ordered
numerically (explicit sibling ranks). Every scope instance is a slice on its
warp's track. Descriptors and interned scope names are built with the
`perfetto` package's TraceProtoBuilder; the slice packets, millions of them,
are encoded with numpy in the same wire format (TracePacket fields
timestamp=8, trusted_packet_sequence_id=10, track_event=11, sequence_flags=13;
TrackEvent fields type=9, name_iid=10, track_uuid=11), which the tests check
by parsing the file back with the perfetto package's protos.
"""

from __future__ import annotations

import numpy as np

from .decode import LaunchEvents

SEQUENCE_ID = 1  # all packets come from one writer (a one-byte varint)
SLICE_BEGIN, SLICE_END = 1, 2
SEQ_INCREMENTAL_STATE_CLEARED, SEQ_NEEDS_INCREMENTAL_STATE = 1, 2
EXPLICIT_ORDER = 3  # TrackDescriptor.ChildTracksOrdering.EXPLICIT


def _protos():
    try:
        from perfetto.trace_builder.proto_builder import TraceProtoBuilder
        from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import TrackEvent
    except ImportError as error:  # pragma: no cover - the package is a dependency
        raise RuntimeError("writing .pftrace files needs the `perfetto` Python package "
                           "(pip install perfetto)") from error
    return TraceProtoBuilder, TrackEvent


def write(path: str, launches: list[LaunchEvents], gpu_name: str = "GPU 0", origin_ns: float | None = None) -> int:
    """Writes the trace; returns the number of slices written. Timestamps
    are global-timer ns minus `origin_ns` (default: the first warp entry),
    which is noted in the GPU track's description so that traces of
    several GPUs can be aligned."""
    if origin_ns is None:
        starts = [float(np.min(ev.warp_begin_ns)) for ev in launches if ev.warp_begin_ns.size]
        origin_ns = float(np.floor(min(starts))) if starts else 0.0
    TraceProtoBuilder, TrackEvent = _protos()
    builder = TraceProtoBuilder()
    next_uuid = [1]

    def track(name, parent=None, rank=None, ordered_children=False):
        uuid = next_uuid[0]
        next_uuid[0] += 1
        packet = builder.add_packet()
        packet.trusted_packet_sequence_id = SEQUENCE_ID
        desc = packet.track_descriptor
        desc.uuid = uuid
        desc.name = name
        if parent is not None:
            desc.parent_uuid = parent
        if rank is not None:
            desc.sibling_order_rank = rank
        if ordered_children:
            desc.child_ordering = EXPLICIT_ORDER
        return uuid

    gpu = track(gpu_name, ordered_children=True)
    builder.trace.packet[-1].track_descriptor.description = f"global timer origin ns = {int(origin_ns)}"
    sm_tracks: dict[int, int] = {}
    # Interned scope names: one id per distinct name over all kernels.
    name_iids: dict[str, int] = {}
    slices = []
    for order, ev in enumerate(launches):
        iid_of_scope = np.array([name_iids.setdefault(n, len(name_iids) + 1) for n in ev.scope_names],
                                dtype=np.uint64)
        ctas, segments = ev.num_ctas, ev.num_segments
        warp_sm = ev.warp_sm.reshape(ctas, segments)
        warp_uuid = np.zeros(ctas * segments, dtype=np.uint64)
        for cta in range(ctas):  # per CTA and warp, not per event
            sm = int(warp_sm[cta, 0])
            if sm not in sm_tracks:
                sm_tracks[sm] = track(f"SM {sm}", gpu, rank=sm, ordered_children=True)
            cta_track = track(f"{ev.kernel} #{ev.launch} CTA {cta}", sm_tracks[sm],
                              rank=order * (1 << 20) + cta, ordered_children=True)
            for seg in range(segments):
                w = int(ev.warp_ids[cta * segments + seg])
                warp_uuid[cta * segments + seg] = track(f"warp {w}", cta_track, rank=w)
        if ev.num_events:
            slices.append((ev, warp_uuid, iid_of_scope))

    interned = builder.add_packet()
    interned.trusted_packet_sequence_id = SEQUENCE_ID
    interned.sequence_flags = SEQ_INCREMENTAL_STATE_CLEARED
    for name, iid in name_iids.items():
        entry = interned.interned_data.event_names.add()
        entry.iid = iid
        entry.name = name
    header = builder.serialize()

    with open(path, "wb") as out:
        out.write(header)
        if slices:
            out.write(_slice_packets(slices, origin_ns))
    return sum(ev.num_events for ev, _, _ in slices)


def _slice_packets(slices, origin_ns: float) -> bytes:
    """Begin and end packets of every event of every launch, in time order,
    as Trace bytes."""
    ts, uuid, kind, iid, cyc = [], [], [], [], []
    for ev, warp_uuid, iid_of_scope in slices:
        n = ev.num_events
        start = np.rint(np.maximum(ev.start_ns - origin_ns, 0)).astype(np.uint64)
        end = np.maximum(np.rint(np.maximum(ev.end_ns - origin_ns, 0)).astype(np.uint64), start)
        ts += [start, end]
        uuid += [warp_uuid[ev.row]] * 2
        kind += [np.full(n, SLICE_BEGIN, np.uint64), np.full(n, SLICE_END, np.uint64)]
        iid += [iid_of_scope[ev.scope], np.zeros(n, np.uint64)]
        cyc += [ev.start_cycles, ev.end_cycles]
    ts, uuid, kind, iid, cyc = (np.concatenate(a) for a in (ts, uuid, kind, iid, cyc))
    n = ts.size // 2
    # Time order; at equal times a warp's records keep the order they were
    # written in (begins of outer scopes first, ends of inner scopes first).
    within = np.lexsort((kind == SLICE_BEGIN, cyc, uuid))  # per warp, in record order
    order = within[np.argsort(ts[within], kind="stable")]
    ts, uuid, kind, iid = ts[order], uuid[order], kind[order], iid[order]

    begin = kind == SLICE_BEGIN
    # TrackEvent: type (9), name_iid (10, begins only), track_uuid (11).
    event = _concat([
        (_const(0x48, 2 * n), None), (_varint(kind), None),
        (_const(0x50, 2 * n), begin), (_varint(iid), begin),
        (_const(0x58, 2 * n), None), (_varint(uuid), None),
    ])
    event_bytes, event_len = event
    # TracePacket: timestamp (8), trusted_packet_sequence_id (10),
    # track_event (11), sequence_flags (13).
    seq = _varint(np.full(2 * n, SEQUENCE_ID, np.uint64))
    flags = _varint(np.full(2 * n, SEQ_NEEDS_INCREMENTAL_STATE, np.uint64))
    packet = _concat([
        (_const(0x40, 2 * n), None), (_varint(ts), None),
        (_const(0x50, 2 * n), None), (seq, None),
        (_const(0x5A, 2 * n), None), (_varint(event_len.astype(np.uint64)), None), ((event_bytes, event_len), None),
        (_const(0x68, 2 * n), None), (flags, None),
    ])
    packet_bytes, packet_len = packet
    # Trace: repeated TracePacket packet = 1.
    trace_bytes, _ = _concat([(_const(0x0A, 2 * n), None), (_varint(packet_len.astype(np.uint64)), None),
                              ((packet_bytes, packet_len), None)])
    return trace_bytes.tobytes()


def _varint(values: np.ndarray):
    """(bytes matrix (n, width), lengths) of protobuf varints."""
    values = np.asarray(values, dtype=np.uint64)
    bits = np.zeros(values.shape, dtype=np.int64)
    v = values.copy()
    groups = 1
    while True:
        v >>= np.uint64(7)
        more = v > 0
        if not more.any():
            break
        bits += more
        groups += 1
    lengths = bits + 1
    out = np.zeros((values.size, groups), dtype=np.uint8)
    for k in range(groups):
        byte = ((values >> np.uint64(7 * k)) & np.uint64(0x7F)).astype(np.uint8)
        out[:, k] = np.where(k < lengths - 1, byte | np.uint8(0x80), byte)
    return out, lengths


def _const(byte: int, n: int):
    return np.full((n, 1), byte, dtype=np.uint8), np.ones(n, dtype=np.int64)


def _concat(pieces):
    """Row-wise concatenation of variable-length byte rows. Each piece is
    ((matrix, lengths), mask): a row's bytes are matrix[row, :length], and
    rows where mask is False contribute nothing. Returns (flat bytes when
    called for the whole trace, i.e. rows joined in order; lengths)."""
    mats, masks, total = [], [], None
    for (matrix, lengths), include in pieces:
        if matrix.ndim == 1:  # already flat bytes with per-row lengths
            matrix, lengths = _unflatten(matrix, lengths)
        lengths = lengths if include is None else np.where(include, lengths, 0)
        mask = np.arange(matrix.shape[1])[None, :] < lengths[:, None]
        mats.append(matrix)
        masks.append(mask)
        total = lengths if total is None else total + lengths
    flat = np.hstack(mats)[np.hstack(masks)]
    return flat, total


def _unflatten(flat: np.ndarray, lengths: np.ndarray):
    """Flat bytes of rows back to a (rows, max length) matrix."""
    width = int(lengths.max()) if lengths.size else 0
    out = np.zeros((lengths.size, width), dtype=np.uint8)
    mask = np.arange(width)[None, :] < lengths[:, None]
    out[mask] = flat
    return out, lengths
