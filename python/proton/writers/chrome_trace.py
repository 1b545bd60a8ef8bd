"""Chrome trace JSON (chrome://tracing, ui.perfetto.dev): one process per
launch and CTA (named after its kernel, launch and SM), one thread per warp,
one complete ("X") event per scope instance with its cycles; asynchronous
events (with flow events) and marks as writers/async_events draws them,
values as counters (writers/chrome_counters). Times are
microseconds (ns precision) from the session's first warp entry. Text is
built with numpy (proton.writers.packed_text), a slice of the events at a
time, and streamed to the file: no Python object per event, and memory
bounded by the slice."""

from __future__ import annotations

import json

import numpy as np

from . import async_events, chrome_counters, packed_text as T
from ..instrument.decode import LaunchEvents

EVENTS_PER_SLICE = 1 << 15  # 32k events: about 3 MB of text, small next to the events


def write(path: str, launches: list[LaunchEvents], t0_ns: int) -> int:
    """Writes the trace; returns the number of scope events written."""
    written = 0
    pid_base = 0
    with open(path, "wb") as out:
        out.write(b'{"displayTimeUnit":"ns","traceEvents":[\n')
        for ev in launches:
            _slices(out, ev, pid_base, t0_ns)
            out.write(async_events.chrome_rows(ev, pid_base, t0_ns))
            out.write(chrome_counters.rows(ev, pid_base, t0_ns))
            _names(out, ev, pid_base)
            written += ev.num_events
            pid_base += ev.num_ctas
        # The last row ends with ",\n": close with an event that names the trace.
        out.write(b'{"ph":"M","name":"process_name","pid":-1,"args":{"name":"proton"}}\n]}\n')
    return written


def _slices(out, ev: LaunchEvents, pid_base: int, t0_ns: int) -> None:
    if ev.num_events == 0:
        return
    names = [b'{"ph":"X","name":' + json.dumps(name).encode() for name in ev.scope_names]
    # What depends on the warp only, once per warp.
    rows = np.arange(ev.warp_ids.size)
    per_warp, per_warp_length = T.record_strings(
        rows.size,
        [
            T.const(b',"pid":'),
            *T.decimal(rows // ev.num_segments + pid_base),
            T.const(b',"tid":'),
            *T.decimal(ev.warp_ids),
            T.const(b',"ts":'),
        ],
    )
    shift = ev.origin_ns - t0_ns
    text = T.Text()
    for lo in range(0, ev.num_events, EVENTS_PER_SLICE):
        hi = min(lo + EVENTS_PER_SLICE, ev.num_events)
        row = ev.row[lo:hi]
        start, end = ev.ns_at(ev.start_cycles[lo:hi], row), ev.ns_at(ev.end_cycles[lo:hi], row)
        ts = np.rint(np.maximum(start + shift, 0)).astype(np.uint64)
        dur = np.rint(np.maximum(end - start, 0)).astype(np.uint64)
        cycles = np.maximum(ev.end_cycles[lo:hi] - ev.start_cycles[lo:hi], 0)
        # Constant text rides on the piece before it where that one has a fixed width.
        out.write(
            text.rows(
                hi - lo,
                [
                    T.table(names, ev.scope[lo:hi]),
                    (per_warp[row], per_warp_length[row]),
                    *T.microseconds(ts, b',"dur":'),
                    *T.microseconds(dur, b',"args":{"cycles":'),
                    *T.decimal(cycles),
                    T.const(b"}},\n"),
                ],
            )
        )


def _names(out, ev: LaunchEvents, pid_base: int) -> None:
    """Process names and sort order per CTA, thread names per warp."""
    C, D = T.const, T.decimal
    ctas, segments = ev.num_ctas, ev.num_segments
    cta = np.arange(ctas)
    pid = D(cta + pid_base)
    label = json.dumps(f"{ev.kernel} #{ev.launch} CTA ")[:-1].encode()
    text = T.Text()
    out.write(
        text.rows(
            ctas,
            [
                C(b'{"ph":"M","name":"process_name","pid":'),
                *pid,
                C(b',"args":{"name":' + label),
                *D(cta),
                C(b" (SM "),
                *D(ev.warp_sm.reshape(ctas, segments)[:, 0]),
                C(b')"}},\n{"ph":"M","name":"process_sort_index","pid":'),
                *pid,
                C(b',"args":{"sort_index":'),
                *pid,
                C(b"}},\n"),
            ],
        )
    )
    w = ctas * segments
    warp_names = sorted(set(ev.warp_ids.tolist()))
    names = [json.dumps(ev.row_name(n)).encode() for n in warp_names]
    out.write(
        text.rows(
            w,
            [
                C(b'{"ph":"M","name":"thread_name","pid":'),
                *D(np.repeat(cta, segments) + pid_base),
                C(b',"tid":'),
                *D(ev.warp_ids),
                C(b',"args":{"name":'),
                T.table(names, np.searchsorted(warp_names, ev.warp_ids)),
                C(b'}},\n'),
            ],
        )
    )


def session_origin(launches: list[LaunchEvents]) -> int:
    """The first warp entry over all launches, global-timer ns."""
    return min((ev.origin_ns for ev in launches), default=0)
