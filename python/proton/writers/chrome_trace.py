"""Chrome trace JSON (chrome://tracing, ui.perfetto.dev): one process per
launch and CTA (named after its kernel, launch and SM), one thread per warp,
one complete ("X") event per scope instance with its cycles. Times are
microseconds (ns precision) from the session's first warp entry. Rows are
assembled with numpy (proton.writers.byte_rows), not formatted one by one."""

from __future__ import annotations

import json

import numpy as np

from . import byte_rows
from ..instrument.decode import LaunchEvents


def write(path: str, launches: list[LaunchEvents], t0_ns: int) -> int:
    """Writes the trace; returns the number of scope events written."""
    written = 0
    pid_base = 0
    with open(path, "wb") as out:
        out.write(b'{"displayTimeUnit":"ns","traceEvents":[\n')
        for ev in launches:
            out.write(_slices(ev, pid_base, t0_ns))
            out.write(_names(ev, pid_base))
            written += ev.num_events
            pid_base += ev.num_ctas
        # The last row ends with ",\n": close with an event that names the trace.
        out.write(b'{"ph":"M","name":"process_name","pid":-1,"args":{"name":"proton"}}\n]}\n')
    return written


def _slices(ev: LaunchEvents, pid_base: int, t0_ns: float) -> bytes:
    n = ev.num_events
    if n == 0:
        return b""
    C = byte_rows.const
    ts = np.rint(np.maximum(ev.start_ns + (ev.origin_ns - t0_ns), 0)).astype(np.uint64)
    dur = np.rint(np.maximum(ev.end_ns - ev.start_ns, 0)).astype(np.uint64)
    names = [json.dumps(name).encode() for name in ev.scope_names]
    return byte_rows.concat([
        C(b'{"ph":"X","name":', n), byte_rows.table(names, ev.scope),
        C(b',"pid":', n), byte_rows.decimal(ev.cta + pid_base), C(b',"tid":', n), byte_rows.decimal(ev.warp),
        C(b',"ts":', n), byte_rows.decimal(ts // np.uint64(1000)), C(b".", n),
        byte_rows.fixed_decimal(ts % np.uint64(1000), 3),
        C(b',"dur":', n), byte_rows.decimal(dur // np.uint64(1000)), C(b".", n),
        byte_rows.fixed_decimal(dur % np.uint64(1000), 3),
        C(b',"args":{"cycles":', n), byte_rows.decimal(np.maximum(ev.duration_cycles, 0)), C(b"}},\n", n),
    ], flat=True)


def _names(ev: LaunchEvents, pid_base: int) -> bytes:
    """Process names and sort order per CTA, thread names per warp."""
    C = byte_rows.const
    ctas, segments = ev.num_ctas, ev.num_segments
    cta = np.arange(ctas)
    pid = byte_rows.decimal(cta + pid_base)
    label = json.dumps(f"{ev.kernel} #{ev.launch} CTA ")[:-1].encode()
    processes = byte_rows.concat([
        C(b'{"ph":"M","name":"process_name","pid":', ctas), pid, C(b',"args":{"name":', ctas), C(label, ctas),
        byte_rows.decimal(cta), C(b" (SM ", ctas), byte_rows.decimal(ev.warp_sm.reshape(ctas, segments)[:, 0]),
        C(b')"}},\n{"ph":"M","name":"process_sort_index","pid":', ctas), pid,
        C(b',"args":{"sort_index":', ctas), pid, C(b"}},\n", ctas),
    ], flat=True)
    w = ctas * segments
    warp_names = sorted(set(ev.warp_ids.tolist()))
    names = byte_rows.table([json.dumps(ev.row_name(n)).encode() for n in warp_names],
                            np.searchsorted(warp_names, ev.warp_ids))
    threads = byte_rows.concat([
        C(b'{"ph":"M","name":"thread_name","pid":', w), byte_rows.decimal(np.repeat(cta, segments) + pid_base),
        C(b',"tid":', w), byte_rows.decimal(ev.warp_ids), C(b',"args":{"name":', w), names, C(b'}},\n', w),
    ], flat=True)
    return processes + threads


def session_origin(launches: list[LaunchEvents]) -> int:
    """The first warp entry over all launches, global-timer ns."""
    return min((ev.origin_ns for ev in launches), default=0)
