"""Chrome trace JSON (chrome://tracing, ui.perfetto.dev): one process per
launch and CTA (named after its kernel, launch and SM), one thread per warp,
one complete ("X") event per scope instance. Times are microseconds from the
session's first warp entry."""

from __future__ import annotations

import json

import numpy as np

from .decode import LaunchEvents


def write(path: str, launches: list[LaunchEvents], t0_ns: float) -> int:
    """Writes the trace; returns the number of scope events written."""
    written = 0
    with open(path, "w") as out:
        out.write('{"displayTimeUnit":"ns","traceEvents":[\n')
        first = [True]

        def emit(items):
            if items:
                out.write(("" if first[0] else ",\n") + ",\n".join(items))
                first[0] = False

        pid_base = 0
        for ev in launches:
            ctas = ev.num_ctas
            segments = ev.num_segments
            # Metadata: process and thread names, sorted by CTA and warp.
            meta = []
            cta_sm = ev.warp_sm.reshape(ctas, segments)[:, 0]
            warp_ids = ev.warp_ids.reshape(ctas, segments)
            for cta in range(ctas):  # per CTA and warp, not per event
                pid = pid_base + cta
                meta.append(f'{{"ph":"M","name":"process_name","pid":{pid},"args":{{"name":'
                            f'{json.dumps(f"{ev.kernel} #{ev.launch} CTA {cta} (SM {cta_sm[cta]})")}}}}}')
                meta.append(f'{{"ph":"M","name":"process_sort_index","pid":{pid},"args":{{"sort_index":{pid}}}}}')
                for w in warp_ids[cta]:
                    meta.append(f'{{"ph":"M","name":"thread_name","pid":{pid},"tid":{w},'
                                f'"args":{{"name":"warp {w}"}}}}')
            emit(meta)
            if ev.num_events:
                names = [json.dumps(n) for n in ev.scope_names]
                ts = ((ev.start_ns - t0_ns) / 1000.0).tolist()
                dur = ((ev.end_ns - ev.start_ns) / 1000.0).tolist()
                pid = (ev.cta + pid_base).tolist()
                tid = ev.warp.tolist()
                cyc = ev.duration_cycles.tolist()
                name = [names[s] for s in ev.scope.tolist()]
                rows = [f'{{"ph":"X","cat":"scope","name":{n},"pid":{p},"tid":{t},"ts":{a:.3f},"dur":{d:.3f},'
                        f'"args":{{"cycles":{c}}}}}' for n, p, t, a, d, c in zip(name, pid, tid, ts, dur, cyc)]
                emit(rows)
                written += len(rows)
            pid_base += ctas
        out.write("\n]}\n")
    return written


def session_origin(launches: list[LaunchEvents]) -> float:
    """The first warp entry over all launches, ns."""
    starts = [float(np.min(ev.warp_begin_ns)) for ev in launches if ev.warp_begin_ns.size]
    return min(starts) if starts else 0.0
