"""Asynchronous events and marks in the traces (proton.instrument.decode_async).

An event is drawn as a slice on an event track of its CTA ("event <name>",
one track per lane: a lane holds events that do not overlap, so that
overlapping instances, e.g. copies in flight for several iterations, are
each drawn whole), and as an arrow (a flow) from an instant "<name> start"
on the warp that started it to an instant "<name> end" on the warp that
ended it. A mark is an instant on its warp. Events are few (one per
start/end pair, not per scope), so the packets are built one by one.
"""

from __future__ import annotations

import json

import numpy as np

from ..instrument.decode import LaunchEvents

#: The Perfetto packet sequence of these packets: absolute timestamps on the
#: trace clock, apart from the warp slices' incremental sequence.
SEQUENCE_ID = 2
TYPE_SLICE_BEGIN, TYPE_SLICE_END, TYPE_INSTANT = 1, 2, 3
#: Perfetto sibling rank of event lanes: after every warp of their CTA.
LANE_TID_BASE = 1 << 20


def lanes(start_ns: np.ndarray, end_ns: np.ndarray, group: np.ndarray) -> np.ndarray:
    """A lane per event such that events of one group in one lane do not
    overlap (greedy, in start order)."""
    lane = np.zeros(start_ns.size, dtype=np.int64)
    free: dict[int, list[float]] = {}  # group -> end time of each lane's last event
    for i in np.lexsort((start_ns, group)):
        ends = free.setdefault(int(group[i]), [])
        k = next((k for k, e in enumerate(ends) if e <= start_ns[i]), len(ends))
        if k == len(ends):
            ends.append(0.0)
        ends[k] = float(end_ns[i])
        lane[i] = k
    return lane


def _lane_keys(ev: LaunchEvents):
    a = ev.asynchronous
    group = a.event_cta * (len(ev.scope_names) + 1) + a.event_id
    return lanes(a.start_ns, a.end_ns, group)


def chrome_rows(ev: LaunchEvents, tracks, t0_ns: int) -> bytes:
    """Chrome trace lines (each ending ",\\n") for the launch's events and
    marks: X slices on lane threads ("event <name> (2)"), zero-length X
    slices on the warps with flow events (ph s/f) between them, and instant
    (ph i) marks. `tracks` (chrome_trace.Tracks) names processes and threads."""
    a = ev.asynchronous
    if a.num_events == 0 and a.num_marks == 0:
        return b""
    shift = ev.origin_ns - t0_ns
    us = lambda ns: f"{max(ns + shift, 0) / 1000:.3f}"  # noqa: E731
    lines = []
    lane = _lane_keys(ev)
    for i in range(a.num_events):
        name = ev.scope_names[a.event_id[i]]
        pid = tracks.process(int(a.event_cta[i]))
        tid = json.dumps(f"event {name}" + (f" ({lane[i] + 1})" if lane[i] else ""))
        s_warp, e_warp = int(ev.warp_ids[a.start_row[i]]), int(ev.warp_ids[a.end_row[i]])
        start, end = float(a.start_ns[i]), float(a.end_ns[i])
        q = json.dumps(name)
        args = f'"args":{{"start_warp":{s_warp},"end_warp":{e_warp}}}'
        lines.append(
            f'{{"ph":"X","name":{q},"cat":{tracks.kernel},"pid":{pid},"tid":{tid},"ts":{us(start)},'
            f'"dur":{max(end - start, 0) / 1000:.3f},{args}}}'
        )
        flow = json.dumps(f"{ev.kernel}#{ev.launch}.{i + 1}")  # unique in the file
        for phase, warp, at, what in (("s", s_warp, start, "start"), ("f", e_warp, end, "end")):
            tid_ = tracks.thread(warp)
            label = json.dumps(f"{name} {what}")
            lines.append(f'{{"ph":"X","name":{label},"pid":{pid},"tid":{tid_},"ts":{us(at)},"dur":0}}')
            bind = ',"bp":"e"' if phase == "f" else ""
            lines.append(
                f'{{"ph":"{phase}","name":{q},"cat":"event","id":{flow},"pid":{pid},"tid":{tid_},"ts":{us(at)}{bind}}}'
            )
    for i in range(a.num_marks):
        row = int(a.mark_row[i])
        lines.append(
            f'{{"ph":"i","s":"t","name":{json.dumps(ev.scope_names[a.mark_id[i]])},'
            f'"pid":{tracks.process(row // ev.num_segments)},"tid":{tracks.thread(ev.warp_ids[row])},'
            f'"ts":{us(float(a.mark_ns[i]))}}}'
        )
    return ("".join(line + ",\n" for line in lines)).encode()


def perfetto_packets(
    builder,
    ev: LaunchEvents,
    shift_ns: int,
    cta_uuid: np.ndarray,
    warp_uuid: np.ndarray,
    next_uuid: int,
    next_flow: int,
) -> tuple[int, int]:
    """Adds the launch's event tracks, slices, flow instants and marks to
    `builder` (a perfetto TraceProtoBuilder); returns the next free track
    uuid and flow id."""
    a = ev.asynchronous
    if a.num_events == 0 and a.num_marks == 0:
        return next_uuid, next_flow
    lane = _lane_keys(ev)
    track_of: dict[tuple[int, int, int], int] = {}

    def event(track, ts, kind, name=None):
        packet = builder.add_packet()
        packet.trusted_packet_sequence_id = SEQUENCE_ID
        packet.timestamp = max(int(round(ts + shift_ns)), 0)
        te = packet.track_event
        te.type, te.track_uuid = kind, int(track)
        if name is not None:
            te.name = name
        return te

    for i in range(a.num_events):
        cta, eid, k = int(a.event_cta[i]), int(a.event_id[i]), int(lane[i])
        name = ev.scope_names[eid]
        if (cta, eid, k) not in track_of:
            track_of[(cta, eid, k)] = next_uuid
            desc = builder.add_packet().track_descriptor
            desc.uuid, desc.parent_uuid = next_uuid, int(cta_uuid[cta])
            desc.name = f"event {name}" + (f" ({k + 1})" if k else "")
            # After the CTA's warps (ranked by warp id).
            desc.sibling_order_rank = LANE_TID_BASE + eid * 64 + k
            next_uuid += 1
        track = track_of[(cta, eid, k)]
        event(track, a.start_ns[i], TYPE_SLICE_BEGIN, name)
        event(track, a.end_ns[i], TYPE_SLICE_END)
        event(warp_uuid[a.start_row[i]], a.start_ns[i], TYPE_INSTANT, f"{name} start").flow_ids.append(next_flow)
        event(warp_uuid[a.end_row[i]], a.end_ns[i], TYPE_INSTANT, f"{name} end").terminating_flow_ids.append(next_flow)
        next_flow += 1
    for i in range(a.num_marks):
        event(warp_uuid[a.mark_row[i]], a.mark_ns[i], TYPE_INSTANT, ev.scope_names[a.mark_id[i]])
    return next_uuid, next_flow
