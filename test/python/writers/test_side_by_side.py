"""Outputs written side by side (session_outputs.write_outputs): one
decoding of each window shared by the writers' threads
(launch_windows.SharedPasses), the Chrome trace's writes on a thread of
their own (files.BackgroundWrites with packed_text.Text's two memories),
Perfetto's CTA and warp tracks encoded apart; each gives the bytes the
writers give alone."""

import json
import os
import threading

import numpy as np
import pytest

from proton.recording import decode, session_outputs
from proton.writers import chrome_trace, files, launch_windows, packed_text as T, perfetto_trace, perfetto_tracks
from proton.writers.stacked_launches import StackedLaunches

from test_decode import make


class CountingSource:
    """Windows of integers, counting the passes and windows made."""

    def __init__(self, windows: int, fail_at: int | None = None):
        self.count, self.fail_at = windows, fail_at
        self.facts = launch_windows.LaunchFacts()
        self.passes = self.made = 0

    def windows(self):
        self.passes += 1
        for i in range(self.count):
            if i == self.fail_at:
                raise ValueError("decode failed")
            self.made += 1
            yield [i]


def read_all(reader, out: list, stop_after: int | None = None, passes: int = 1):
    try:
        for _ in range(passes):
            seen = []
            for window in reader.windows():
                seen.append(window[0])
                if stop_after is not None and len(seen) >= stop_after:
                    break
            out.append(seen)
    except Exception as error:  # noqa: BLE001 - looked at by the test
        out.append(error)
    finally:
        reader.close()


def run_readers(source, plans):
    shared = launch_windows.SharedPasses(source, len(plans))
    outs = [[] for _ in plans]
    threads = [
        threading.Thread(target=read_all, args=(shared.reader(k), outs[k]), kwargs=plan) for k, plan in enumerate(plans)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
        assert not t.is_alive(), "a reader is stuck"
    return shared, outs


def test_readers_share_one_decoding_of_each_window():
    source = CountingSource(9)
    shared, outs = run_readers(source, [{}, {}, {}])
    assert outs == [[list(range(9))]] * 3
    assert source.passes == 1 and source.made == 9
    assert shared._windows == {}  # nothing held once all have read


def test_a_reader_that_stops_early_does_not_hold_the_others():
    source = CountingSource(12)
    _, outs = run_readers(source, [{"stop_after": 2}, {}])
    assert outs[0] == [[0, 1]] and outs[1] == [list(range(12))]


def test_a_second_pass_reads_the_source_alone():
    source = CountingSource(5)
    _, outs = run_readers(source, [{"passes": 2}, {}])
    assert outs[0] == [list(range(5))] * 2 and outs[1] == [list(range(5))]
    assert source.passes == 2 and source.made == 10


def test_an_error_of_the_source_reaches_every_reader():
    source = CountingSource(8, fail_at=3)
    _, outs = run_readers(source, [{}, {}])
    for out in outs:
        assert len(out) == 1 and isinstance(out[0], ValueError)


def test_a_reader_runs_at_most_lag_windows_ahead():
    source = CountingSource(20)
    shared = launch_windows.SharedPasses(source, 2)
    slow, fast = shared.reader(0), shared.reader(1)
    fast_seen, gate = [], threading.Event()

    def run_fast():
        for window in fast.windows():
            fast_seen.append(window[0])
        gate.set()

    thread = threading.Thread(target=run_fast)
    thread.start()
    slow_windows = slow.windows()
    for expected in range(20):
        assert next(slow_windows) == [expected]
        thread.join(timeout=0.05)
        # the fast reader waits for the slow one: at most LAG windows ahead, decoded once
        assert len(fast_seen) <= expected + launch_windows.SharedPasses.LAG + 1
        assert len(shared._windows) <= launch_windows.SharedPasses.LAG + 1
    assert list(slow_windows) == []
    assert gate.wait(10) and fast_seen == list(range(20)) and source.made == 20


def loop_launches(count=7):
    """Launches of two kernels and two layouts, some with names to escape."""
    out = []
    for launch in range(count):
        ctas = 3 if launch % 3 else 2
        data, meta = make(ctas=ctas, clk0=10**12 + 7_000 * launch, gt0=1_763_000_000 * 10**9 + 4_000 * launch)
        kernel = 'add"é' if launch % 3 else "mul\\n"
        ev = decode.decode(data, meta, ctas, kernel=kernel, launch=launch * 997)
        ev.scope_names = ["k", 'a "quoted" ünïcode scope\t', "s" * 70]
        ev.call_stack = ("step", "✓")
        out.append(ev)
    return out


@pytest.mark.parametrize("window_events", [1, 100, 1 << 17])
def test_side_by_side_writes_the_bytes_of_each_writer_alone(tmp_path, monkeypatch, window_events):
    monkeypatch.setattr(launch_windows, "WINDOW_EVENTS", window_events)
    monkeypatch.setattr(chrome_trace, "EVENTS_PER_SLICE", 50)
    launches = loop_launches()
    written = session_outputs.write_outputs(str(tmp_path / "run"), launches, ("chrome_trace", "pftrace"))
    alone = launch_windows.source(launches)
    chrome_trace.write(str(tmp_path / "alone.chrome_trace"), alone, alone.facts.origin_ns)
    perfetto_trace.write(str(tmp_path / "alone.pftrace"), alone, "GPU 0")
    assert open(written["chrome_trace"], "rb").read() == (tmp_path / "alone.chrome_trace").read_bytes()
    assert open(written["pftrace"], "rb").read() == (tmp_path / "alone.pftrace").read_bytes()
    events = json.load(open(written["chrome_trace"]))["traceEvents"]
    assert len(events) == sum(ev.num_events for ev in launches)
    assert {e["cat"] for e in events} == {'add"é', "mul\\n"}


def test_a_failed_output_keeps_the_outputs_written(tmp_path, monkeypatch):
    """The Chrome trace fails (and its fallback); the Perfetto trace written
    beside it stays, complete: removing it would leave no file where the
    last run's stood."""

    def fail(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(chrome_trace, "_write_window", fail)
    monkeypatch.setattr(files.tempfile, "gettempdir", lambda: str(tmp_path / "missing"))  # no fallback either
    with pytest.raises(Exception, match="No space left"):
        session_outputs.write_outputs(str(tmp_path / "run"), loop_launches(3), ("chrome_trace", "pftrace"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.pftrace"]
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace

    trace = Trace.FromString((tmp_path / "run.pftrace").read_bytes())
    slices = sum(1 for p in trace.packet if p.HasField("track_event") and p.track_event.type == 1)
    assert slices == sum(ev.num_events for ev in loop_launches(3))


def test_chrome_text_through_background_writes(tmp_path):
    """Text's two memories: each text stays whole until written, however
    the file's writes lag."""
    rng = np.random.default_rng(3)
    expected, path = [], tmp_path / "t"
    with open(path, "wb") as f:
        writes = files.BackgroundWrites(f, depth=1)
        text = T.Text(writes)
        for k in range(40):
            n = int(rng.integers(1, 3000))
            values = rng.integers(0, 2**63, n, dtype=np.uint64)
            pieces = [T.const(f"[{k}]".encode()), *T.decimal(values), T.const(b",\n")]
            data = text.rows(n, pieces)
            expected.append("".join(f"[{k}]{v},\n" for v in values.tolist()).encode())
            writes.write(data)
        writes.close()
    assert path.read_bytes() == b"".join(expected)


def test_background_writes_raise_the_files_error():
    class Broken:
        def write(self, data):
            raise OSError(5, "I/O error")

    writes = files.BackgroundWrites(Broken())
    writes.write(b"x")
    with pytest.raises(OSError, match="I/O error"):
        writes.wait(1)
    writes.abandon()


@pytest.mark.parametrize(
    "entries",
    [
        [b"a", b"bb" * 40, b""],
        ['"é" \\ ✓'.encode(), b"x"],
    ],
)
def test_record_strings_on_edge_values(entries):
    values = np.array([0, 9, 10**4, 2**32, 2**64 - 1], dtype=np.uint64)
    index = np.arange(values.size) % len(entries)
    strings, lengths = T.record_strings(
        values.size, [T.const(b"<"), T.table(entries, index), T.const(b"|"), *T.decimal(values), T.const(b">")]
    )
    width = strings.dtype.itemsize
    got = [bytes(s)[:n] for s, n in zip(strings.view(np.uint8).reshape(-1, width), lengths.tolist())]
    assert got == [b"<" + entries[i] + b"|" + str(v).encode() + b">" for i, v in zip(index, values.tolist())]
    assert width == max(lengths)
    assert all(bytes(s)[n:] == b"\0" * (width - n) for s, n in zip(strings.view(np.uint8).reshape(-1, width), lengths))
    empty = T.record_strings(0, [T.const(b"x"), *T.decimal(np.zeros(0, np.uint64))])
    assert empty[0].size == 0 and empty[1].size == 0


def test_tracks_of_stacked_launches_are_each_launchs_tracks():
    """CTA and warp tracks encoded apart, then put side by side per launch:
    the bytes of each launch encoded alone, launch numbers of any width."""
    launches = []
    for k, number in enumerate([3, 10, 99_999, 7]):
        data, meta = make(ctas=11, clk0=10**12 + 5_000 * k)
        launches.append(decode.decode(data, meta, 11, kernel="kern", launch=number))
    stack = StackedLaunches(launches, launches[0].origin_ns)
    per = launches[0].num_ctas * (1 + launches[0].num_segments)
    base = 100 + np.arange(len(launches), dtype=np.uint64) * per
    sm_uuid = {sm: 2 + sm for sm in range(200)}
    data, bounds = perfetto_tracks._group_tracks(stack, base, np.arange(len(launches)), sm_uuid)
    for k, ev in enumerate(launches):
        alone, _ = perfetto_tracks._group_tracks(
            StackedLaunches([ev], launches[0].origin_ns), base[k : k + 1], np.array([k]), sm_uuid
        )
        assert data[bounds[k] : bounds[k + 1]] == alone


def test_earliest_warps_are_the_perfetto_warps_first(monkeypatch):
    """LaunchFacts.launch_first, shifted and rounded, is the earliest
    Warps.first of each launch: rows in order or not, launches without
    events, launches of several layouts in one window."""
    from proton.writers import perfetto_warps

    launches = loop_launches(6)
    shuffled = launches[4]
    order = np.random.default_rng(0).permutation(shuffled.num_events)
    for name in ("row", "scope", "start_cycles", "end_cycles"):
        setattr(shuffled, name, getattr(shuffled, name)[order])
    empty = launches[5]
    for name in ("row", "scope", "start_cycles", "end_cycles"):
        setattr(empty, name, getattr(empty, name)[:0])
    facts = launch_windows.LaunchFacts.of(launches)
    t0 = facts.origin_ns - 12_345
    assert facts.launch_first[5] is None and facts.launch_tracks == [ev.num_ctas * 5 for ev in launches]
    for ev, first in zip(launches[:5], facts.launch_first):
        warps = perfetto_warps.Warps(StackedLaunches([ev], t0), np.ones(3, np.uint64), np.arange(99, dtype=np.uint64))
        shifted = perfetto_warps.rounded_ns(np.array([first]), float(ev.origin_ns - t0))[0]
        assert shifted == warps.first.min()
    later = perfetto_warps.later_first(facts, t0)
    firsts = [
        int(perfetto_warps.rounded_ns(np.array([f]), float(ev.origin_ns - t0))[0]) if f is not None else None
        for ev, f in zip(launches, facts.launch_first)
    ]
    for i in range(len(launches) + 1):
        rest = [f for f in firsts[i:] if f is not None]
        assert later[i] == (min(rest) if rest else None)


@pytest.mark.parametrize("refuse", [(), ("copy_file_range",), ("copy_file_range", "sendfile")])
def test_the_warps_spill_is_appended_whole_and_removed(tmp_path, monkeypatch, refuse):
    """The Perfetto warps' packets, spilled beside the trace, are appended
    by copy_file_range, else sendfile, else read and written; the spill
    is gone afterwards."""
    launches = loop_launches()
    reference = tmp_path / "reference.pftrace"
    perfetto_trace.write(str(reference), launches, "GPU 0")

    def refused(*args, **kwargs):
        raise OSError(22, "Invalid argument")

    for name in refuse:
        monkeypatch.setattr(perfetto_trace, f"_{name}", refused)
    path = tmp_path / "out" / "run.pftrace"
    path.parent.mkdir()
    perfetto_trace.write(str(path), launches, "GPU 0")
    assert path.read_bytes() == reference.read_bytes()
    assert os.listdir(path.parent) == ["run.pftrace"]


def test_a_pftrace_to_a_device_spills_in_the_temporary_directory(tmp_path, monkeypatch):
    monkeypatch.setattr(perfetto_trace.tempfile, "tempdir", str(tmp_path))
    perfetto_trace.write(os.devnull, loop_launches(3), "GPU 0")
    assert os.listdir(tmp_path) == []
