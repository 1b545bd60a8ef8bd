"""The Chrome trace writer: its content (json.load), and its exact bytes
against a straightforward per-event formatting of the same events, on both
of its ways of laying out text and for large and zero values."""

import json

import numpy as np
import pytest

from proton.instrument import decode
from proton.writers import chrome_trace as trace_chrome, packed_text

from test_decode import make, random_buffer


@pytest.fixture
def launches():
    out = []
    for launch in range(2):
        buf, meta = make(ctas=3, segments=4)
        out.append(decode.decode(buf, meta, 3, kernel="vector_add", launch=launch))
    return out


def reference(launches, t0_ns) -> bytes:
    """The trace formatted one event at a time."""
    out = ['{"displayTimeUnit":"ns","traceEvents":[\n']
    pid_base = 0
    for ev in launches:
        cycles = np.maximum(ev.duration_cycles, 0)
        for i in range(ev.num_events):
            ts = int(np.rint(max(ev.start_ns[i] + (ev.origin_ns - t0_ns), 0)))
            dur = int(np.rint(max(ev.end_ns[i] - ev.start_ns[i], 0)))
            out.append(
                f'{{"ph":"X","name":{json.dumps(ev.scope_names[ev.scope[i]])},"pid":{ev.cta[i] + pid_base},'
                f'"tid":{ev.warp[i]},"ts":{ts // 1000}.{ts % 1000:03d},"dur":{dur // 1000}.{dur % 1000:03d},'
                f'"args":{{"cycles":{cycles[i]}}}}},\n'
            )
        for c in range(ev.num_ctas):
            label = json.dumps(f"{ev.kernel} #{ev.launch} CTA {c} (SM {ev.warp_sm[c * ev.num_segments]})")
            out.append(
                f'{{"ph":"M","name":"process_name","pid":{c + pid_base},"args":{{"name":{label}}}}},\n'
                f'{{"ph":"M","name":"process_sort_index","pid":{c + pid_base},"args":{{"sort_index":'
                f'{c + pid_base}}}}},\n'
            )
        for r in range(ev.warp_ids.size):
            out.append(
                f'{{"ph":"M","name":"thread_name","pid":{r // ev.num_segments + pid_base},'
                f'"tid":{ev.warp_ids[r]},"args":{{"name":"{ev.row_label} {ev.warp_ids[r]}"}}}},\n'
            )
        pid_base += ev.num_ctas
    out.append('{"ph":"M","name":"process_name","pid":-1,"args":{"name":"proton"}}\n]}\n')
    return "".join(out).encode()


def test_chrome_trace(tmp_path, launches):
    path = tmp_path / "run.chrome_trace"
    assert trace_chrome.write(str(path), launches, trace_chrome.session_origin(launches)) == 72
    events = json.loads(path.read_text())["traceEvents"]
    slices = [e for e in events if e["ph"] == "X"]
    assert (
        sorted(e["name"] for e in events if e["ph"] == "M")
        == ["process_name"] * 7 + ["process_sort_index"] * 6 + ["thread_name"] * 24
    )
    assert len(slices) == 72
    assert {e["name"] for e in slices} == {"kernel", "load", "store"}
    # one process per launch and CTA, one thread per warp
    assert len({e["pid"] for e in slices}) == 6 and {e["tid"] for e in slices} == {0, 1, 2, 3}
    names = {e["pid"]: e["args"]["name"] for e in events if e.get("name") == "process_name"}
    assert {e["args"]["name"] for e in events if e.get("name") == "thread_name"} == {f"warp {w}" for w in range(4)}
    # values as decoded: ts/dur in us with ns precision, cycles exact
    by_key = {(e["pid"], e["tid"], e["name"]): e for e in slices}
    ev = launches[1]
    i = int(np.flatnonzero((ev.cta == 2) & (ev.warp == 3) & (ev.scope == 1))[0])
    e = by_key[(3 + 2, 3, "load")]
    assert e["args"]["cycles"] == ev.duration_cycles[i]
    t0 = trace_chrome.session_origin(launches)
    assert e["ts"] == pytest.approx((ev.start_ns[i] + (ev.origin_ns - t0)) / 1000, abs=1e-3)
    assert e["dur"] == pytest.approx((ev.end_ns[i] - ev.start_ns[i]) / 1000, abs=1e-3)
    assert names[0] == "vector_add #0 CTA 0 (SM 0)" and names[5] == "vector_add #1 CTA 2 (SM 2)"
    assert min(e["ts"] for e in slices) >= 0
    assert all(e["dur"] > 0 and e["args"]["cycles"] > 0 for e in slices)
    assert path.read_bytes() == reference(launches, t0)


def renamed(ev, names):
    ev.scope_names = names
    return ev


@pytest.mark.parametrize(
    "names",
    [
        ["kernel", "load", "store"],
        # very different lengths, quotes and non-ASCII: the padding-dropping layout
        ["k", "a \"quoted\" and rather long scope name, longer than the rest of its row" * 2, "é\n"],
    ],
)
@pytest.mark.parametrize("slice_events", [5, 1 << 20])
def test_bytes_match_a_per_event_formatting(tmp_path, monkeypatch, names, slice_events):
    monkeypatch.setattr(trace_chrome, "EVENTS_PER_SLICE", slice_events)
    launches = [renamed(decode.decode(*make(clock_bits=32, clk0=(5 << 32) - 250), 3, kernel='k"é', launch=0), names)]
    launches += [
        renamed(decode.decode(*random_buffer(seed, 64), 3, kernel="r", launch=seed), names) for seed in range(1, 4)
    ]
    for t0 in (
        trace_chrome.session_origin(launches),
        trace_chrome.session_origin(launches) - 7 * 10**9,
        trace_chrome.session_origin(launches) + 10**6,
    ):  # ts past 2^32 ns, and clipped to 0
        path = tmp_path / "t.json"
        trace_chrome.write(str(path), launches, t0)
        assert path.read_bytes() == reference(launches, t0)
        json.loads(path.read_text())


@pytest.mark.parametrize(
    "value", [0, 1, 9, 10, 999, 1000, 9999, 10000, 10001, 123456789, 2**32 - 1, 2**32, 10**16 + 7, 2**63]
)
def test_decimal_digits(value):
    values = np.array([value, 0, 5, value], dtype=np.uint64)
    text = packed_text.Text().rows(4, [*packed_text.decimal(values), packed_text.const(b";")])
    assert bytes(text) == f"{value};0;5;{value};".encode()
