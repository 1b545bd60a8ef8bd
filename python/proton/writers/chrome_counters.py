"""Values (proton.language.record_value) in the Chrome trace: counter
("ph": "C") events. A Chrome counter belongs to a process (here a CTA), so
each warp's values form their own series, named "<value> [warp <id>]",
with the value in args "value" (as writers/perfetto_counters keeps one
track per warp and value name)."""

from __future__ import annotations

import json

import numpy as np

from ..instrument.decode import LaunchEvents


def rows(ev: LaunchEvents, pid_base: int, t0_ns: int) -> bytes:
    """Chrome trace lines (each ending ",\\n") for the launch's values, in
    time order. One formatted line per value: values are per loop
    iteration at most, far fewer than scope slices in practice."""
    a = ev.asynchronous
    if a.num_values == 0:
        return b""
    shift = ev.origin_ns - t0_ns
    series = {}  # (value id, warp id) -> JSON name, once per series
    lines = []
    for i in np.argsort(a.value_ns, kind="stable"):
        row = int(a.value_row[i])
        warp = int(ev.warp_ids[row])
        key = (int(a.value_id[i]), warp)
        if key not in series:
            series[key] = json.dumps(f"{ev.scope_names[key[0]]} [warp {warp}]")
        ts = max(float(a.value_ns[i]) + shift, 0.0) / 1000
        lines.append(
            f'{{"ph":"C","name":{series[key]},"pid":{row // ev.num_segments + pid_base},'
            f'"ts":{ts:.3f},"args":{{"value":{number(a.value[i])}}}}},\n'
        )
    return "".join(lines).encode()


def number(value: float) -> str:
    """A value as JSON: integers without a fraction; NaN and infinities
    (an f32 may hold them, JSON may not) as null."""
    value = float(value)
    if not np.isfinite(value):
        return "null"
    return str(int(value)) if value.is_integer() and abs(value) < 2**53 else repr(value)
