"""The trace writers a window of launches at a time (launch_windows,
stacked_launches): interleaved kernels, overlapping and sequential
launches write the same Chrome trace byte for byte as launches written
one by one, and a Perfetto trace with the same slices, its warps still by
first timestamp over the whole file; the Chrome trace streams valid JSON
with exactly the events decoded."""

import json

import numpy as np
import pytest

from proton.recording import decode
from proton.writers import chrome_trace, launch_windows, perfetto_trace

from test_decode import make
from test_perfetto_trace import by_warp, expected, read


def loop(overlapping: bool):
    """Launches of two kernels interleaved (a, a, b, a, b, ...), each a
    few microseconds after the one before, or all at the same time."""
    out = []
    for launch in range(9):
        later = 0 if overlapping else launch
        ctas = 3 if launch % 3 != 2 else 2
        data, meta = make(ctas=ctas, clk0=10**12 + 9_000 * later, gt0=1_763_000_000 * 10**9 + 5_000 * later)
        kernel = "a" if launch % 3 != 2 else "b"
        ev = decode.decode(data, meta, ctas, kernel=kernel, launch=launch)
        ev.call_stack = ("loop",) if kernel == "a" else ("loop", "inner")
        out.append(ev)
    return out


@pytest.fixture
def one_launch_a_window(monkeypatch):
    """Writes each launch on its own (as before windows): the reference."""

    def use():
        monkeypatch.setattr(launch_windows, "WINDOW_EVENTS", 1)

    return use


def small_windows(monkeypatch):
    monkeypatch.setattr(launch_windows, "WINDOW_EVENTS", 100)  # about three launches
    monkeypatch.setattr(chrome_trace, "EVENTS_PER_SLICE", 40)  # slices across launches and within one


@pytest.mark.parametrize("overlapping", [False, True])
def test_chrome_trace_is_the_same_bytes_as_launch_by_launch(tmp_path, monkeypatch, one_launch_a_window, overlapping):
    launches = loop(overlapping)
    small_windows(monkeypatch)
    windowed = tmp_path / "windowed.chrome_trace"
    chrome_trace.write(str(windowed), launches, chrome_trace.session_origin(launches))
    one_launch_a_window()
    alone = tmp_path / "alone.chrome_trace"
    chrome_trace.write(str(alone), launches, chrome_trace.session_origin(launches))
    assert windowed.read_bytes() == alone.read_bytes()


def test_chrome_trace_holds_exactly_the_decoded_events(tmp_path, monkeypatch):
    launches = loop(overlapping=False)
    small_windows(monkeypatch)
    path = tmp_path / "run.chrome_trace"
    t0 = chrome_trace.session_origin(launches)
    assert chrome_trace.write(str(path), launches, t0) == sum(ev.num_events for ev in launches)
    events = json.load(open(path))["traceEvents"]
    got = sorted((e["pid"], e["tid"], e["name"], round(e["ts"] * 1000), round(e["dur"] * 1000)) for e in events)
    want = []
    for ev in launches:
        start = np.rint(np.maximum(ev.start_ns + (ev.origin_ns - t0), 0)).astype(np.int64)
        dur = np.rint(np.maximum(ev.end_ns - ev.start_ns, 0)).astype(np.int64)
        for i in range(ev.num_events):
            pid = f"{ev.kernel} #{ev.launch} Core{ev.sm[i]} CTA{ev.cta[i]}"
            want.append((pid, f"warp {ev.warp[i]}", ev.scope_names[ev.scope[i]], int(start[i]), int(dur[i])))
    assert got == sorted(want)
    stacks = {e["pid"].split(" Core")[0]: e["args"]["call_stack"] for e in events}
    assert stacks["b #2"] == ["ROOT", "loop", "inner", "b"] and stacks["a #7"] == ["ROOT", "loop", "a"]


def clock_resets(path):
    """The warps' first timestamps, in file order (their headers' clock snapshots)."""
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace

    trace = Trace.FromString(open(path, "rb").read())
    return [
        c.timestamp
        for p in trace.packet
        if p.trusted_packet_sequence_id == 1 and p.HasField("trace_packet_defaults")
        for c in p.clock_snapshot.clocks
    ]


@pytest.mark.parametrize("overlapping", [False, True])
def test_perfetto_trace_has_every_slice_and_warps_in_time_order(
    tmp_path, monkeypatch, one_launch_a_window, overlapping
):
    launches = loop(overlapping)
    small_windows(monkeypatch)
    windowed = tmp_path / "windowed.pftrace"
    assert perfetto_trace.write(str(windowed), launches) == sum(ev.num_events for ev in launches)
    tracks, slices = read(windowed)
    assert by_warp(tracks, slices) == expected(launches)
    resets = clock_resets(windowed)
    assert len(resets) == sum(ev.warp_ids.size for ev in launches) and resets == sorted(resets)
    one_launch_a_window()
    alone = tmp_path / "alone.pftrace"
    perfetto_trace.write(str(alone), launches)
    assert by_warp(*read(alone)) == by_warp(tracks, slices)
    assert sorted(clock_resets(alone)) == resets
    cta_tracks = sorted((d.name, d.description, d.sibling_order_rank) for d in tracks.values() if "CTA" in d.name)
    assert cta_tracks == sorted(
        (d.name, d.description, d.sibling_order_rank) for d in read(alone)[0].values() if "CTA" in d.name
    )


def test_groups_are_launches_of_one_layout():
    launches = loop(overlapping=False)
    assert launch_windows.groups(launches) == [[0, 1, 3, 4, 6, 7], [2, 5, 8]]
    launches[4].call_stack = ("elsewhere",)
    assert launch_windows.groups(launches) == [[0, 1, 3, 6, 7], [2, 5, 8], [4]]
