"""A picture of a merged torch.profiler + Proton timeline, as SVG
(`proton-merge-traces --torch trace.json run.pftrace -o t.pftrace --svg t.svg`):
a window around the first few matched launches, on torch's time axis.

Rows, top to bottom: torch's CPU threads (ops nested by depth), torch's GPU
streams (kernels and copies), then under each drawn launch its first CTAs'
warps with their Proton scopes, re-timed as the merged trace re-times them
(torch_merge's map). The torch kernel a launch ran as is outlined on its
warps' rows, so a reader sees the scopes inside it."""

from __future__ import annotations

from xml.sax.saxutils import escape

import numpy as np

from ..writers.perfetto_packets import SLICE_BEGIN
from ..writers.timeline_svg import PALETTE

LABEL_WIDTH, WIDTH, ROW, GAP = 230, 1100, 16, 8
MAX_LAUNCHES, MAX_WARPS, MAX_CPU_ROWS = 3, 8, 3


def render(torch, protons: list, matched: list, map_ns, max_launches: int = MAX_LAUNCHES) -> str:
    """SVG text; `map_ns(match, absolute global-timer ns array)` gives torch-axis ns."""
    drawn = sorted((m for m in matched if m.torch_kernel is not None), key=lambda m: m.torch_ts_ns)[:max_launches]
    if not drawn:
        return _svg([], 0, 1, "no matched launch to draw")
    lo = min(m.torch_ts_ns for m in drawn)
    hi = max(m.torch_ts_ns + m.torch_dur_ns for m in drawn)
    margin = max((hi - lo) // 10, 1000)
    lo, hi = lo - margin, hi + margin
    rows = _cpu_rows(torch, lo, hi) + _stream_rows(torch, lo, hi)
    by_path = {t.path: t for t in protons}
    for m in drawn:
        rows += _warp_rows(by_path[m.file], m, map_ns)
    note = f"{len(drawn)} of {len(matched)} matched launches; Proton's scopes on torch's time axis"
    return _svg(rows, lo, hi, note)


def _overlapping(events, lo, hi):
    return [e for e in events if e.ns < hi and e.ns + e.dur_ns > lo]


def _depths(events) -> list:
    """(event, nesting depth) for events of one thread, in time order."""
    out, open_ends = [], []
    for e in sorted(events, key=lambda e: (e.ns, -e.dur_ns)):
        while open_ends and open_ends[-1] <= e.ns:
            open_ends.pop()
        out.append((e, len(open_ends)))
        open_ends.append(e.ns + e.dur_ns)
    return out


def _cpu_rows(torch, lo, hi) -> list:
    threads: dict = {}
    kernels = {id(torch.events[k]) for k in torch.kernels}
    for e in torch.events:
        if e.ph == "X" and id(e) not in kernels and e.cat not in ("kernel", "gpu_memcpy", "gpu_memset"):
            threads.setdefault((e.pid, e.tid), []).append(e)
    rows = []
    for key, events in threads.items():
        inside = _overlapping(events, lo, hi)
        if inside:
            name = torch.thread_names.get(key) or f"thread {key[1]}"
            bars = [(e.ns, e.ns + e.dur_ns, e.name, depth) for e, depth in _depths(inside)]
            rows.append(("torch CPU: " + str(name), bars, None))
    rows.sort(key=lambda r: -len(r[1]))
    return rows[:MAX_CPU_ROWS]


def _stream_rows(torch, lo, hi) -> list:
    streams: dict = {}
    for e in torch.events:
        if e.ph == "X" and e.cat in ("kernel", "gpu_memcpy", "gpu_memset"):
            streams.setdefault((e.pid, e.tid), []).append(e)
    rows = []
    for key, events in sorted(streams.items(), key=lambda kv: str(kv[0])):
        inside = _overlapping(events, lo, hi)
        if inside:
            name = torch.thread_names.get(key) or f"stream {key[1]}"
            rows.append(("torch GPU: " + str(name), [(e.ns, e.ns + e.dur_ns, e.name, 0) for e in inside], None))
    return rows


def _warp_rows(trace, m, map_ns) -> list:
    """The first MAX_WARPS warps (CTA order) of launch `m`, scopes re-timed."""
    key = (m.kernel, m.launch)
    picked = [w for w in range(trace.warp_uuid.size) if trace.launch_of_track.get(int(trace.warp_uuid[w])) == key]
    rows = []
    kernel = (m.torch_ts_ns, m.torch_ts_ns + m.torch_dur_ns)
    for w in picked[:MAX_WARPS]:
        a, b = int(trace.warp_lo[w]), int(trace.warp_hi[w])
        times = map_ns(m, trace.origin_ns + trace.ts[a:b].astype(np.int64))
        bars, stack = [], []
        for kind, iid, t in zip(trace.kind[a:b].tolist(), trace.iid[a:b].tolist(), times.tolist()):
            if kind == SLICE_BEGIN:
                stack.append((t, trace.names.get(iid, "?")))
            elif stack:
                begin, name = stack.pop()
                bars.append((begin, t, name, len(stack)))
        uuid = int(trace.warp_uuid[w])
        warp = trace.tracks[uuid]
        cta = trace.tracks.get(warp.parent_uuid)
        cta_text = f" CTA {cta.name.split(' CTA ')[-1]}" if cta is not None and " CTA " in cta.name else ""
        label = f"{m.label}{cta_text} {warp.name}"
        rows.append((label, bars, kernel))
    return rows


def _svg(rows, lo, hi, note) -> str:
    span = max(hi - lo, 1)
    height = 40 + len(rows) * (ROW + 2) + GAP + 30

    def x(t):
        return LABEL_WIDTH + (t - lo) / span * (WIDTH - LABEL_WIDTH - 10)

    colours: dict = {}
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" font-family="sans-serif" '
        f'font-size="10"><rect width="100%" height="100%" fill="white"/>',
        f'<text x="10" y="16" font-size="12">{escape(note)}</text>',
    ]
    y = 30
    for label, bars, kernel in rows:
        out.append(f'<text x="4" y="{y + ROW - 4}">{escape(label[:40])}</text>')
        if kernel is not None:  # the torch kernel this launch ran as
            width = max(x(kernel[1]) - x(kernel[0]), 1)
            out.append(
                f'<rect class="kernel" x="{x(kernel[0]):.2f}" y="{y}" width="{width:.2f}" '
                f'height="{ROW}" fill="none" stroke="#555" stroke-dasharray="3,2"/>'
            )
        for begin, end, name, depth in sorted(bars, key=lambda bar: bar[3]):  # parents under children
            begin, end = max(begin, lo), min(end, hi)
            if end <= begin and not (lo <= begin <= hi):
                continue
            colour = colours.setdefault(name, PALETTE[len(colours) % len(PALETTE)])
            inset = min(depth * 3, ROW // 2 - 1)
            out.append(
                f'<rect class="bar" x="{x(begin):.2f}" y="{y + inset}" width="{max(x(end) - x(begin), 0.5):.2f}" '
                f'height="{ROW - 2 * inset}" fill="{colour}"><title>{escape(str(name))}: '
                f"{(end - begin) / 1000:.3f} us</title></rect>"
            )
        y += ROW + 2
    y += GAP
    for k in range(6):  # time axis, us from the window's start
        t = lo + span * k / 5
        out.append(f'<text x="{x(t):.2f}" y="{y + 12}" text-anchor="middle">{(t - lo) / 1000:.1f} us</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
