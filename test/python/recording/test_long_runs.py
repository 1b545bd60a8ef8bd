"""Long runs on the CPU: periodic flushing (parts per phase, memory released,
write failures keep the data), output names with the rank of a
torch.distributed run, and proton.data's phase API. Launches and buffers
are simulated as in test_session (FakeTorch, synthetic buffers)."""

import json
import os
import sys
import types

import pytest
import triton
from triton.runtime import _allocation

import proton
from proton.contract import kernel_metadata
from proton.session import paths
from proton.writers import hatchet_tree

from test_decode import make
from test_session import FakeTorch, Launch
from fake_gpu_memory_support import write

EVENTS_PER_LAUNCH = 36  # make(ctas=3): 3 CTAs x 4 warps x 3 scopes


pytestmark = pytest.mark.usefixtures("no_instrumentation_session_left")


@pytest.fixture
def buffer():
    data, meta = make(ctas=3, kernel_id=31)
    kernel_metadata.register(meta)
    return data


def launch(session, data, name):
    """One instrumented launch of kernel `name`, as Triton's launcher makes it."""
    session._torch = session._torch or FakeTorch()
    scratch = _allocation._profile_allocator(data.size, 16, 0)
    write(scratch, data)
    triton.knobs.runtime.launch_enter_hook(Launch(name))


def launches_in_chrome_trace(path):
    """The "<kernel> #<launch>" of every CTA process in a Chrome trace."""
    events = json.load(open(path))["traceEvents"]
    return sorted({e["pid"].rsplit(" Core", 1)[0] for e in events})


def slices_in_pftrace(path):
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace

    trace = Trace.FromString(open(path, "rb").read())
    return sum(1 for p in trace.packet if p.HasField("track_event") and p.track_event.type == 1)


def test_each_phase_is_written_as_its_own_part(tmp_path, buffer):
    name = str(tmp_path / "run")
    session = proton.start(
        name, backend="instrumentation", periodic_flushing=True, max_launches_per_kernel=10, quiet=True
    )
    for _ in range(2):
        launch(session, buffer, "a")
    assert proton.data.advance_phase(session) == 1
    assert proton.data.is_phase_flushed(session, 0) and not proton.data.is_phase_flushed(session, 1)
    for kernel in ("b", "b", "a", "b"):
        launch(session, buffer, kernel)
    assert proton.data.advance_phase(session) == 2
    launch(session, buffer, "a")
    report = proton.finalize()

    assert [p["phase"] for p in report.parts] == [0, 1, 2]
    assert [p["launches_kept"] for p in report.parts] == [2, 4, 1]
    written = sorted(os.listdir(tmp_path))
    assert written == sorted(
        f"run.part_{n}{ext}" for n in range(3) for ext in (".chrome_trace", ".pftrace", ".hatchet")
    )
    # Each part holds exactly its phase's launches (launch numbers count on over the session).
    assert launches_in_chrome_trace(tmp_path / "run.part_0.chrome_trace") == ["a #0", "a #1"]
    assert launches_in_chrome_trace(tmp_path / "run.part_1.chrome_trace") == ["a #2", "b #0", "b #1", "b #2"]
    assert launches_in_chrome_trace(tmp_path / "run.part_2.chrome_trace") == ["a #3"]
    assert [slices_in_pftrace(tmp_path / f"run.part_{n}.pftrace") for n in range(3)] == [
        2 * EVENTS_PER_LAUNCH,
        4 * EVENTS_PER_LAUNCH,
        EVENTS_PER_LAUNCH,
    ]
    root, _devices = json.load(open(tmp_path / "run.part_1.hatchet"))
    assert {c["frame"]["name"]: c["metrics"]["count"] for c in root["children"]} == {"a": 1, "b": 3}
    # The totals add the parts up; files are the last part's.
    assert report.launches_kept == 7 and report.events == 7 * EVENTS_PER_LAUNCH and report.errors == []
    assert report.per_kernel["a"]["kept"] == 4 and report.per_kernel["b"]["kept"] == 3
    assert report.files["pftrace"] == str(tmp_path / "run.part_2.pftrace")
    assert "wrote 3 parts, phases 0 to 2" in report.summary()


def test_a_flush_releases_the_buffers(tmp_path, buffer):
    session = proton.start(
        str(tmp_path / "run"),
        backend="instrumentation",
        periodic_flushing=True,
        max_launches_per_kernel=100,
        outputs="tree",
        quiet=True,
    )
    for _ in range(3):
        launch(session, buffer, "k")
    assert session.kept_bytes == 3 * buffer.size and len(session.kept) == 3
    proton.data.advance_phase(session)
    assert session.kept_bytes == 0 and session.kept == [] and session.retention.not_kept == {}
    proton.finalize()


def test_memory_stays_within_the_bound_over_many_phases(tmp_path, buffer):
    # Three launches fit the bound; each phase makes five: the last two of a
    # phase are not kept, and every phase starts again from nothing.
    session = proton.start(
        str(tmp_path / "run"),
        backend="instrumentation",
        periodic_flushing=True,
        max_launches_per_kernel=100,
        max_buffer_bytes=3 * buffer.size,
        outputs="tree",
        quiet=True,
    )
    peak = 0
    for _ in range(20):
        for _ in range(5):
            launch(session, buffer, "k")
            peak = max(peak, session.kept_bytes)
        proton.data.advance_phase(session)
    report = proton.finalize()
    assert peak == 3 * buffer.size
    assert len(report.parts) == 20 and report.launches_kept == 60 and report.launches_skipped == 40
    assert len(os.listdir(tmp_path)) == 20


def test_phases_without_launches_write_nothing_but_a_session_leaves_files(tmp_path, buffer):
    session = proton.start(
        str(tmp_path / "run"), backend="instrumentation", periodic_flushing=True, outputs="tree", quiet=True
    )
    proton.data.advance_phase(session)  # phase 0: nothing launched
    launch(session, buffer, "k")
    proton.data.advance_phase(session)  # phase 1
    proton.data.advance_phase(session)  # phase 2: nothing
    report = proton.finalize()  # phase 3: nothing, a part was written: no file
    assert os.listdir(tmp_path) == ["run.part_1.hatchet"] and [p["phase"] for p in report.parts] == [1]

    empty = tmp_path / "empty"
    empty.mkdir()
    session = proton.start(
        str(empty / "run"), backend="instrumentation", periodic_flushing=True, outputs="tree", quiet=True
    )
    proton.data.advance_phase(session)
    report = proton.finalize()
    assert os.listdir(empty) == ["run.part_1.hatchet"] and report.events == 0


def test_an_unwritable_directory_sends_the_part_to_the_temporary_directory(tmp_path, buffer):
    out = tmp_path / "out"
    out.mkdir()
    session = proton.start(
        str(out / "run"), backend="instrumentation", periodic_flushing=True, outputs="tree", quiet=True
    )
    launch(session, buffer, "k")
    out.rmdir()  # the directory went away during the run
    proton.data.advance_phase(session)
    fallback = session.report.parts[0]["files"]["tree"]
    assert os.path.basename(fallback).endswith("-run.part_0.hatchet") and os.path.getsize(fallback) > 0
    assert any(f"could not write {out / 'run.part_0.hatchet'}" in w for w in session.report.warnings)
    out.mkdir()
    launch(session, buffer, "k")
    report = proton.finalize()
    assert report.files["tree"] == str(out / "run.part_1.hatchet") and report.launches_kept == 2
    os.remove(fallback)


def test_a_part_that_cannot_be_written_at_all_stays_kept(tmp_path, buffer, monkeypatch):
    session = proton.start(
        str(tmp_path / "run"),
        backend="instrumentation",
        periodic_flushing=True,
        max_launches_per_kernel=10,
        outputs="tree",
        quiet=True,
    )
    launch(session, buffer, "k")
    launch(session, buffer, "k")

    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(hatchet_tree, "write", disk_full)  # the fallback fails too
    with pytest.raises(proton.ProfilerError, match=r"could not write part 0 .*No space left.*its 2 launches stay kept"):
        proton.data.advance_phase(session)
    assert session.phase == 0 and session.kept_bytes == 2 * buffer.size and session.report.parts == []
    monkeypatch.undo()
    launch(session, buffer, "k")
    assert proton.data.advance_phase(session) == 1
    report = proton.finalize()
    assert [(p["phase"], p["launches_kept"]) for p in report.parts] == [(0, 3)]
    assert os.listdir(tmp_path) == ["run.part_0.hatchet"]


def test_without_periodic_flushing_phases_are_only_counted(tmp_path, buffer):
    session = proton.start(
        str(tmp_path / "run"), backend="instrumentation", max_launches_per_kernel=10, outputs="tree", quiet=True
    )
    launch(session, buffer, "k")
    assert proton.data.advance_phase(session) == 1 and not proton.data.is_phase_flushed(session, 0)
    launch(session, buffer, "k")
    report = proton.finalize()
    assert os.listdir(tmp_path) == ["run.hatchet"] and report.launches_kept == 2 and report.parts == []


def test_phase_api_misuse(tmp_path):
    assert proton.data.advance_phase(None) is None and proton.data.is_phase_flushed(None, 0) is False
    with pytest.raises(proton.ProfilerError, match="periodic_flushing is True, False, a duration"):
        proton.start(str(tmp_path / "x"), backend="instrumentation", periodic_flushing="yes")
    with pytest.raises(proton.ProfilerError, match="periodic_flushing is True or False for host sessions"):
        proton.start(str(tmp_path / "x"), backend="cupti", periodic_flushing="yes")  # host: test_host_phases.py
    session = proton.start(str(tmp_path / "run"), backend="instrumentation", periodic_flushing=True, quiet=True)
    proton.deactivate(session, flushing=True)  # Triton's Proton's keyword: accepted
    proton.finalize()
    with pytest.raises(proton.ProfilerError, match="Session has not been initialized"):
        proton.data.advance_phase(session)


def test_compressed_pftrace_parts(tmp_path, buffer):
    """compress_pftrace=True: every part's .pftrace is deflated and holds
    what the plain one holds; the option is checked where it is given."""
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace

    from proton.writers import perfetto_deflate

    with pytest.raises(proton.ProfilerError, match="compress_pftrace is True or False"):
        proton.start(str(tmp_path / "x"), backend="instrumentation", compress_pftrace=1)
    with pytest.raises(proton.ProfilerError, match="compress_pftrace applies to backend='instrumentation'"):
        proton.start(str(tmp_path / "x"), backend="cupti", compress_pftrace=True)
    for packed in (False, True):
        name = str(tmp_path / ("packed" if packed else "plain"))
        session = proton.start(
            name,
            backend="instrumentation",
            periodic_flushing=True,
            outputs="pftrace",
            compress_pftrace=packed,
            quiet=True,
        )
        launch(session, buffer, "k")
        proton.data.advance_phase(session)
        proton.finalize()
    raw = open(tmp_path / "packed.part_0.pftrace", "rb").read()
    assert all(p.HasField("compressed_packets") for p in Trace.FromString(raw).packet)
    assert perfetto_deflate.inflate(raw) == open(tmp_path / "plain.part_0.pftrace", "rb").read()


# -- ranks ---------------------------------------------------------------------


def fake_distributed(rank, initialized=True):
    return types.SimpleNamespace(is_available=lambda: True, is_initialized=lambda: initialized, get_rank=lambda: rank)


def test_output_paths_carry_rank_and_part(tmp_path):
    base = str(tmp_path / "run")
    assert paths.output_path(base, ".pftrace") == base + ".pftrace"
    assert paths.output_path(base + ".hatchet", ".pftrace", rank=2) == base + ".rank_2.pftrace"
    assert paths.output_path(base, ".hatchet", part=7) == base + ".part_7.hatchet"
    assert paths.output_path(base, ".chrome_trace", rank=0, part=3) == base + ".rank_0.part_3.chrome_trace"


def test_distributed_rank(monkeypatch):
    for var in ("RANK", "WORLD_SIZE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.delitem(sys.modules, "torch.distributed", raising=False)
    assert paths.distributed_rank() is None
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "1")
    assert paths.distributed_rank() is None  # one process is no distributed run
    monkeypatch.setenv("WORLD_SIZE", "4")
    assert paths.distributed_rank() == 1  # torchrun's variables, before init_process_group
    monkeypatch.setitem(sys.modules, "torch.distributed", fake_distributed(3))
    assert paths.distributed_rank() == 3  # the process group's rank wins
    monkeypatch.setitem(sys.modules, "torch.distributed", fake_distributed(3, initialized=False))
    assert paths.distributed_rank() == 1


def test_ranks_name_their_files(tmp_path, buffer, monkeypatch):
    for var in ("RANK", "WORLD_SIZE"):
        monkeypatch.delenv(var, raising=False)
    for rank in (0, 1):
        monkeypatch.setitem(sys.modules, "torch.distributed", fake_distributed(rank))
        session = proton.start(str(tmp_path / "run"), backend="instrumentation", quiet=True)
        launch(session, buffer, "k")
        proton.finalize()
        session = proton.start(
            str(tmp_path / "long"), backend="instrumentation", periodic_flushing=True, outputs="pftrace", quiet=True
        )
        launch(session, buffer, "k")
        proton.data.advance_phase(session)
        launch(session, buffer, "k")
        proton.finalize()
    assert sorted(os.listdir(tmp_path)) == sorted(
        [f"run.rank_{r}{ext}" for r in (0, 1) for ext in (".chrome_trace", ".pftrace", ".hatchet")]
        + [f"long.rank_{r}.part_{p}.pftrace" for r in (0, 1) for p in (0, 1)]
    )
