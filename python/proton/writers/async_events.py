"""Asynchronous events and marks in the traces (proton.recording.decode_non_scope).

Chrome trace, in the layout of Triton's Proton: an event that one warp
started and ended is a complete ("X") slice with `cat` "async" on that
warp's thread, or, where it would cross the bounds of a scope or of another
event there (viewers drop slices that do not nest), on a thread
"<warp> (line k)" of that warp's own (k from 1, a line holding events that do
not overlap). An event started in one warp and ended in another is two
zero-length X slices with `cat` "flow", one on each warp, bound into an
arrow by a shared integer `bind_id`: `flow_out` on the start, `flow_in` on
the end; their args keep the pair's warps and cycles. A mark is an instant
("i") on its warp.

Perfetto: an event is drawn as a slice on an event track of its CTA ("event
<name>", one track per lane: a lane holds events that do not overlap, so
that overlapping instances, e.g. copies in flight for several iterations,
are each drawn whole), and as an arrow (a flow) from an instant "<name>
start" on the warp that started it to an instant "<name> end" on the warp
that ended it. Events are few (one per start/end pair, not per scope), so
both writers build them one by one.
"""

from __future__ import annotations

import json

import numpy as np

from ..contract.events import LaunchEvents

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


def _range_reduce(ufunc, values: np.ndarray, lo: np.ndarray, hi: np.ndarray, empty) -> np.ndarray:
    """ufunc over values[lo[i]:hi[i]] for each i; `empty` where the range is empty."""
    if lo.size == 0:
        return np.zeros(0, dtype=np.asarray(values).dtype)
    padded = np.append(values, empty)  # hi may equal values.size
    reduced = ufunc.reduceat(padded, np.stack([lo, hi], axis=1).reshape(-1))[::2]
    return np.where(hi > lo, reduced, empty)


def _crosses_scopes(s: np.ndarray, e: np.ndarray, scope_s: np.ndarray, scope_e: np.ndarray) -> np.ndarray:
    """Per interval [s, e]: does a scope of the warp ([scope_s, scope_e],
    nested among themselves) overlap it without nesting? That is a scope
    starting inside it and ending after it, or starting before it and
    ending inside it; shared bounds count as nested."""
    by_start = np.argsort(scope_s, kind="stable")
    starts, ends_of_starts = scope_s[by_start], scope_e[by_start]
    lo, hi = np.searchsorted(starts, s, "right"), np.searchsorted(starts, e, "left")
    out_after = _range_reduce(np.maximum, ends_of_starts, lo, hi, np.iinfo(np.int64).min) > e
    by_end = np.argsort(scope_e, kind="stable")
    ends, starts_of_ends = scope_e[by_end], scope_s[by_end]
    lo, hi = np.searchsorted(ends, s, "right"), np.searchsorted(ends, e, "left")
    in_before = _range_reduce(np.minimum, starts_of_ends, lo, hi, np.iinfo(np.int64).max) < s
    return out_after | in_before


def warp_lines(ev: LaunchEvents, start: np.ndarray, end: np.ndarray, same: np.ndarray, t0_ns: int) -> np.ndarray:
    """The line of each same-warp event (`same`; others get -1): 0 is the
    warp's own thread, where the event nests with the warp's scopes and with
    the events already placed there (in start order, longest first); the
    rest go to lines 1, 2, ... of events that do not overlap. Decided on the
    ns the trace writes (start, end: ns since t0_ns, rounded), as a viewer
    sees them."""
    a = ev.asynchronous
    line = np.full(a.num_events, -1, dtype=np.int64)
    events = np.flatnonzero(same)
    if events.size == 0:
        return line
    events = events[np.argsort(a.start_row[events], kind="stable")]
    rows, first = np.unique(a.start_row[events], return_index=True)
    # The warps' scope slices as written (writers/chrome_trace).
    shift = ev.origin_ns - t0_ns
    in_order = bool(np.all(ev.row[1:] >= ev.row[:-1]))  # the decoder's usual order
    order = None if in_order else np.argsort(ev.row, kind="stable")
    sorted_rows = ev.row if in_order else ev.row[order]
    for r, mine in zip(rows.tolist(), np.split(events, first[1:])):
        lo, hi = np.searchsorted(sorted_rows, [r, r + 1])
        pick = slice(lo, hi) if in_order else order[lo:hi]
        rr = np.full(hi - lo, r)
        scope_start_ns = ev.ns_at(ev.start_cycles[pick], rr)
        scope_s = np.rint(np.maximum(scope_start_ns + shift, 0)).astype(np.int64)
        scope_e = scope_s + np.rint(np.maximum(ev.ns_at(ev.end_cycles[pick], rr) - scope_start_ns, 0)).astype(np.int64)
        crosses = _crosses_scopes(start[mine], end[mine], scope_s, scope_e)
        open_ends: list[int] = []  # line 0's events still open, innermost last
        free: list[int] = []  # end of each line's (from 1) last event
        for k in np.lexsort((-end[mine], start[mine])).tolist():
            i = int(mine[k])
            s, e = int(start[i]), int(end[i])
            while open_ends and open_ends[-1] <= s:
                open_ends.pop()
            if not crosses[k] and (not open_ends or e <= open_ends[-1]):
                open_ends.append(e)
                line[i] = 0
                continue
            j = next((j for j, f in enumerate(free) if f <= s), len(free))
            if j == len(free):
                free.append(0)
            free[j] = e
            line[i] = j + 1
    return line


def chrome_rows(ev: LaunchEvents, tracks, t0_ns: int, next_flow: int = 1) -> tuple[bytes, int]:
    """Chrome trace lines (each ending ",\\n") for the launch's events and
    marks, in the module's layout; flows take bind_ids from `next_flow` on.
    Returns the text and the next free bind_id. `tracks` (chrome_trace.Tracks)
    names processes and threads and gives each CTA's timer args."""
    a = ev.asynchronous
    if a.num_events == 0 and a.num_marks == 0:
        return b"", next_flow
    shift = ev.origin_ns - t0_ns
    # Written ns, as the scope slices' (integers: ts and dur in us with ns precision).
    start = np.rint(np.maximum(a.start_ns + shift, 0)).astype(np.int64)
    end = start + np.rint(np.maximum(a.end_ns - a.start_ns, 0)).astype(np.int64)
    # Cycles on the launch's measured clock: exact for a warp's own events
    # (its times are its cycles over that clock), the CTA's common SM clock
    # over global-timer-aligned warps otherwise.
    cycles = np.rint(np.maximum(a.end_ns - a.start_ns, 0) * ev.clock_ghz).astype(np.int64)
    same = a.start_row == a.end_row
    line = warp_lines(ev, start, end, same, t0_ns)
    us = lambda ns: f"{ns // 1000}.{ns % 1000:03d}"  # noqa: E731
    lines = []
    for i in range(a.num_events):
        name = json.dumps(ev.scope_names[a.event_id[i]])
        cta = int(a.event_cta[i])
        pid, timing = tracks.process(cta), tracks.timing(cta)
        s_warp, e_warp = int(ev.warp_ids[a.start_row[i]]), int(ev.warp_ids[a.end_row[i]])
        s, e = int(start[i]), int(end[i])
        if same[i]:
            thread = ev.row_name(s_warp) + (f" (line {line[i]})" if line[i] else "")
            lines.append(
                f'{{"ph":"X","name":{name},"cat":"async","pid":{pid},"tid":{json.dumps(thread)},'
                f'"ts":{us(s)},"dur":{us(e - s)},'
                f'"args":{{"cycles":{cycles[i]},{timing},"call_stack":{tracks.call_stack}}}}}'
            )
            continue
        args = (
            f'"args":{{"start_warp":{s_warp},"end_warp":{e_warp},"cycles":{cycles[i]},{timing},'
            f'"call_stack":{tracks.call_stack}}}'
        )
        for warp, at, side in ((s_warp, s, "flow_out"), (e_warp, e, "flow_in")):
            lines.append(
                f'{{"ph":"X","name":{name},"cat":"flow","pid":{pid},"tid":{tracks.thread(warp)},'
                f'"ts":{us(at)},"dur":0,"bind_id":{next_flow},"{side}":true,{args}}}'
            )
        next_flow += 1
    for i in range(a.num_marks):
        row = int(a.mark_row[i])
        cta = row // max(ev.num_segments, 1)
        ns = int(np.rint(max(float(a.mark_ns[i]) + shift, 0)))
        lines.append(
            f'{{"ph":"i","s":"t","name":{json.dumps(ev.scope_names[a.mark_id[i]])},'
            f'"pid":{tracks.process(cta)},"tid":{tracks.thread(ev.warp_ids[row])},"ts":{us(ns)},'
            f'"args":{{{tracks.timing(cta)},"call_stack":{tracks.call_stack}}}}}'
        )
    return ("".join(text + ",\n" for text in lines)).encode(), next_flow


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
