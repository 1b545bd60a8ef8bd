"""A session's finalize a window of launches at a time (kept_decoding):
the outputs hold every launch; a write that fails in the middle of the
stream leaves nothing partial and keeps the profile (writers/files.py's
rules: the fallback in the temporary directory, else the data kept for
another finalize). Launches are simulated as in test_long_runs."""

import json
import os
import tempfile

import pytest

import proton
from proton.contract import kernel_metadata
from proton.recording import kept_decoding
from proton.writers import chrome_trace, launch_windows

from test_decode import make
from test_long_runs import EVENTS_PER_LAUNCH, launch, launches_in_chrome_trace, slices_in_pftrace

pytestmark = pytest.mark.usefixtures("no_instrumentation_session_left")
LAUNCHES = 5


@pytest.fixture
def session(tmp_path, monkeypatch):
    """A trace session of LAUNCHES launches, finalized a launch per window."""
    monkeypatch.setattr(launch_windows, "WINDOW_EVENTS", EVENTS_PER_LAUNCH)
    monkeypatch.setattr(kept_decoding, "WINDOW_BYTES", 1)
    monkeypatch.setattr(kept_decoding, "FIRST_PASS_BYTES", 1)
    data, meta = make(ctas=3, kernel_id=31)
    kernel_metadata.register(meta)
    s = proton.start(str(tmp_path / "run"), backend="instrumentation", data="trace", quiet=True)
    for _ in range(LAUNCHES):
        launch(s, data, "k")
    return s


def fail_from_window(monkeypatch, first: int, last: int = 10**9):
    """The Chrome writer's windows `first` to `last` (counted over all
    attempts, from 1) fail as a full disk does."""
    calls = []
    original = chrome_trace._write_window

    def write_window(*args):
        calls.append(1)
        if first <= len(calls) <= last:
            raise OSError(28, "No space left on device")
        return original(*args)

    monkeypatch.setattr(chrome_trace, "_write_window", write_window)


def partial_files():
    return [f for f in os.listdir(tempfile.gettempdir()) if f.endswith(".partial") or "-run.chrome_trace" in f]


def test_every_launch_is_written_a_window_at_a_time(tmp_path, session):
    report = proton.finalize()
    assert report.events == LAUNCHES * EVENTS_PER_LAUNCH and report.launches_kept == LAUNCHES
    assert launches_in_chrome_trace(tmp_path / "run.chrome_trace") == [f"k #{i}" for i in range(LAUNCHES)]
    assert len(json.load(open(tmp_path / "run.chrome_trace"))["traceEvents"]) == report.events
    assert slices_in_pftrace(tmp_path / "run.pftrace") == report.events


def test_a_write_failing_mid_stream_keeps_the_profile(tmp_path, session, monkeypatch):
    before, original = set(partial_files()), chrome_trace._write_window
    fail_from_window(monkeypatch, 2)  # the file and its fallback both fail after some rows
    with pytest.raises(proton.ProfilerError, match="No space left on device.*nothing is lost"):
        proton.finalize()
    # Nothing partial anywhere; the Perfetto trace, written beside, is kept whole.
    assert os.listdir(tmp_path) == ["run.pftrace"] and set(partial_files()) == before
    assert slices_in_pftrace(tmp_path / "run.pftrace") == LAUNCHES * EVENTS_PER_LAUNCH
    monkeypatch.setattr(chrome_trace, "_write_window", original)
    report = proton.finalize()  # the session kept its launches
    assert sorted(os.listdir(tmp_path)) == ["run.chrome_trace", "run.pftrace"]
    assert (
        len(json.load(open(tmp_path / "run.chrome_trace"))["traceEvents"])
        == report.events
        == LAUNCHES * EVENTS_PER_LAUNCH
    )


def test_a_destination_failing_mid_stream_falls_back_whole(tmp_path, session, monkeypatch):
    fail_from_window(monkeypatch, 2, 2)  # only the destination's attempt fails
    report = proton.finalize()
    fallback = report.files["chrome_trace"]
    try:
        assert os.path.dirname(fallback) == tempfile.gettempdir()
        assert any("could not write" in w and fallback in w for w in report.warnings)
        assert launches_in_chrome_trace(fallback) == [f"k #{i}" for i in range(LAUNCHES)]
        assert sorted(os.listdir(tmp_path)) == ["run.pftrace"]  # nothing partial beside it
    finally:
        os.remove(fallback)


def test_the_first_decoding_in_small_windows_holds_what_fits_one(tmp_path, monkeypatch):
    """The first decoding's windows are smaller than a writer's: launches
    whose buffers fit in one writer's window stay decoded for the writers
    (no second decoding), the others are decoded again as written."""
    data, meta = make(ctas=3, kernel_id=31)
    kernel_metadata.register(meta)
    monkeypatch.setattr(kept_decoding, "FIRST_PASS_BYTES", 1)  # a launch per window
    decoded = []
    original = kept_decoding.decode_window

    def counting(window, *args, **kwargs):
        decoded.append(len(window))
        return original(window, *args, **kwargs)

    monkeypatch.setattr(kept_decoding, "decode_window", counting)
    s = proton.start(str(tmp_path / "run"), backend="instrumentation", data="trace", quiet=True)
    for _ in range(LAUNCHES):
        launch(s, data, "k")
    report = proton.finalize()
    assert decoded == [1] * LAUNCHES  # held: the writers did not decode again
    assert launches_in_chrome_trace(tmp_path / "run.chrome_trace") == [f"k #{i}" for i in range(LAUNCHES)]
    assert slices_in_pftrace(tmp_path / "run.pftrace") == report.events
