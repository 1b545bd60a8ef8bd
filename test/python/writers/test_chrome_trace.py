"""The Chrome trace writer: its content (json.load), and its exact bytes
against a straightforward per-event formatting of the same events, on both
of its ways of laying out text and for large and zero values."""

import json

import numpy as np
import pytest

from proton.recording import decode
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
    """The trace formatted one event at a time: Triton's Proton's layout
    (X events only, string pid and tid, cat, args with the CTA's timer
    stamps and call_stack), events by warp and start within each launch."""
    rows = []
    for ev in launches:
        cycles = np.maximum(ev.duration_cycles, 0)
        stack = json.dumps(["ROOT", *ev.call_stack, ev.kernel])
        # The CTA's first entry and last return on the global timer, absolute ns.
        cta_rows = lambda cta: slice(cta * ev.num_segments, (cta + 1) * ev.num_segments)  # noqa: E731
        init = [ev.origin_ns + int(np.rint(ev.warp_begin_ns[cta_rows(c)].min())) for c in range(ev.num_ctas)]
        post = [ev.origin_ns + int(np.rint(ev.warp_end_ns[cta_rows(c)].max())) for c in range(ev.num_ctas)]
        for i in np.lexsort((ev.start_cycles, ev.row)):
            ts = int(np.rint(max(ev.start_ns[i] + (ev.origin_ns - t0_ns), 0)))
            dur = int(np.rint(max(ev.end_ns[i] - ev.start_ns[i], 0)))
            sm = ev.warp_sm[ev.cta[i] * ev.num_segments]
            pid = json.dumps(f"{ev.kernel} #{ev.launch} Core{sm} CTA{ev.cta[i]}")
            rows.append(
                f'{{"ph":"X","name":{json.dumps(ev.scope_names[ev.scope[i]])},"cat":{json.dumps(ev.kernel)},'
                f'"pid":{pid},"tid":{json.dumps(f"{ev.row_label} {ev.warp[i]}")},'
                f'"ts":{ts // 1000}.{ts % 1000:03d},"dur":{dur // 1000}.{dur % 1000:03d},'
                f'"args":{{"cycles":{cycles[i]},"Init Time (ns)":{init[ev.cta[i]]},'
                f'"Post Final Time (ns)":{post[ev.cta[i]]},"Finalization Time (ns)":0,"call_stack":{stack}}}}}'
            )
    return ('{"displayTimeUnit":"ns","traceEvents":[\n' + ",\n".join(rows) + "\n]}\n").encode()


def test_chrome_trace(tmp_path, launches):
    launches[1].call_stack = ("step", "forward")
    path = tmp_path / "run.chrome_trace"
    assert trace_chrome.write(str(path), launches, trace_chrome.session_origin(launches)) == 72
    events = json.loads(path.read_text())["traceEvents"]
    # Triton's Proton's layout: complete events only, named tracks
    assert len(events) == 72 and {e["ph"] for e in events} == {"X"}
    assert {e["name"] for e in events} == {"kernel", "load", "store"} and {e["cat"] for e in events} == {"vector_add"}
    # one process per launch and CTA, one thread per warp
    pids = sorted({e["pid"] for e in events})
    assert pids == [f"vector_add #{launch} Core{c} CTA{c}" for launch in range(2) for c in range(3)]
    assert {e["tid"] for e in events} == {f"warp {w}" for w in range(4)}
    assert {tuple(e["args"]["call_stack"]) for e in events} == {
        ("ROOT", "vector_add"),
        ("ROOT", "step", "forward", "vector_add"),
    }
    # within a warp, outer scopes first
    assert [e["name"] for e in events[:3]] == ["kernel", "load", "store"]
    # values as decoded: ts/dur in us with ns precision, cycles exact
    by_key = {(e["pid"], e["tid"], e["name"]): e for e in events}
    ev = launches[1]
    i = int(np.flatnonzero((ev.cta == 2) & (ev.warp == 3) & (ev.scope == 1))[0])
    e = by_key[("vector_add #1 Core2 CTA2", "warp 3", "load")]
    assert e["args"]["cycles"] == ev.duration_cycles[i]
    t0 = trace_chrome.session_origin(launches)
    assert e["ts"] == pytest.approx((ev.start_ns[i] + (ev.origin_ns - t0)) / 1000, abs=1e-3)
    assert e["dur"] == pytest.approx((ev.end_ns[i] - ev.start_ns[i]) / 1000, abs=1e-3)
    assert min(e["ts"] for e in events) >= 0
    assert all(e["dur"] > 0 and e["args"]["cycles"] > 0 for e in events)
    # Triton 3.9's args: the CTA's entry and return stamps, no finalization timing.
    for e in events:
        cta = int(e["pid"].rsplit("CTA", 1)[1])
        ev = launches[int(e["pid"].split("#")[1].split()[0])]
        rows = slice(cta * ev.num_segments, (cta + 1) * ev.num_segments)
        assert e["args"]["Init Time (ns)"] == ev.origin_ns + round(ev.warp_begin_ns[rows].min())
        assert e["args"]["Post Final Time (ns)"] == ev.origin_ns + round(ev.warp_end_ns[rows].max())
        assert e["args"]["Post Final Time (ns)"] >= e["args"]["Init Time (ns)"] >= 0
        assert e["args"]["Finalization Time (ns)"] == 0
    assert path.read_bytes() == reference(launches, t0)


def test_a_trace_without_events_is_valid_json(tmp_path):
    path = tmp_path / "empty.chrome_trace"
    assert trace_chrome.write(str(path), [], 0) == 0
    assert json.loads(path.read_text()) == {"displayTimeUnit": "ns", "traceEvents": []}


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


def test_events_are_written_by_warp_and_start_whatever_the_decoded_order(tmp_path):
    ev = decode.decode(*make(ctas=2, segments=2), 2, kernel="k", launch=0)
    shuffled = np.random.default_rng(5).permutation(ev.num_events)
    for column in ("row", "scope", "start_cycles", "end_cycles"):
        setattr(ev, column, getattr(ev, column)[shuffled])
    path = tmp_path / "t.json"
    trace_chrome.write(str(path), [ev], ev.origin_ns)
    assert path.read_bytes() == reference([ev], ev.origin_ns)
    events = json.loads(path.read_text())["traceEvents"]
    assert [e["name"] for e in events[:3]] == ["kernel", "load", "store"]
