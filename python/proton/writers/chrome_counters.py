"""Values (proton.language.record_value) in the Chrome trace: counter
("ph": "C") events. A Chrome counter belongs to a process (here a CTA), so
each warp's values form their own series, named "<value> [warp <id>]",
with the value in args "value" (as writers/perfetto_counters keeps one
track per warp and value name)."""

from __future__ import annotations

import json

import numpy as np

from ..contract.events import LaunchEvents
from . import packed_text as T


def rows(ev: LaunchEvents, tracks, t0_ns: int) -> bytes:
    """Chrome trace lines (each ending ",\\n") for the launch's values, in
    time order, built with packed_text: Python work per series and per
    distinct value, not per point. `tracks` (chrome_trace.Tracks) names the processes."""
    a = ev.asynchronous
    if a.num_values == 0:
        return b""
    order = np.argsort(a.value_ns, kind="stable")
    row, value_id = a.value_row[order], a.value_id[order]
    # Per series (value id, warp row): the text before the time.
    keys, series = np.unique(value_id.astype(np.int64) * ev.warp_ids.size + row, return_inverse=True)
    heads = []
    for key in keys.tolist():
        vid, r = divmod(key, ev.warp_ids.size)
        name = json.dumps(f"{ev.scope_names[vid]} [warp {int(ev.warp_ids[r])}]")
        heads.append(f'{{"ph":"C","name":{name},"pid":{tracks.process(r // ev.num_segments)},"ts":'.encode())
    ns = np.rint(np.maximum(a.value_ns[order] + (ev.origin_ns - t0_ns), 0)).astype(np.uint64)
    values, which = np.unique(a.value[order], return_inverse=True)
    return bytes(
        T.Text().rows(
            order.size,
            [
                T.table(heads, series.reshape(-1)),
                *T.microseconds(ns, b',"args":{"value":'),
                T.table([number(v).encode() for v in values.tolist()], which.reshape(-1)),
                T.const(b"}},\n"),
            ],
        )
    )


def number(value: float) -> str:
    """A value as JSON: integers without a fraction; NaN and infinities
    (an f32 may hold them, JSON may not) as null."""
    value = float(value)
    if not np.isfinite(value):
        return "null"
    return str(int(value)) if value.is_integer() and abs(value) < 2**53 else repr(value)
