"""proton-merge-traces: inputs aligned on host real time when every one
notes its host clock offset (on the global timers otherwise), every slice
of every input at its place in the merged file, inputs never overwritten."""

import dataclasses
import os
import subprocess
import sys

import pytest

from proton.commands.merge_traces import MergeError, main, merge
from proton.recording import decode
from proton.writers import perfetto_trace

from test_decode import make
from test_perfetto_trace import expected, read, synthetic_events

GT_GAP = 160_000  # ns: how far apart two GPUs' global timers were measured


def command():
    script = os.path.join(os.path.dirname(sys.executable), "proton-merge-traces")
    return [script] if os.path.exists(script) else [sys.executable, "-m", "proton.commands.merge_traces"]


def by_rank(path):
    """Merged slices keyed by (process name, CTA track, warp track)."""
    tracks, slices = read(path)
    out = []
    for track, name, begin, end in slices:
        warp = tracks[track]
        cta = tracks[warp.parent_uuid]
        root = tracks[tracks[cta.parent_uuid].parent_uuid]
        out.append(((root.process.process_name, cta.name, warp.name), name, begin, end))
    return sorted(out)


def shifted(events, label, shift):
    return sorted(((label, *key), name, b + shift, e + shift) for key, name, b, e in expected(events))


def two_gpus(tmp_path, host_b=True):
    """GPU 1's global timer reads 160 us ahead of GPU 0's, but the host
    clock offsets say its launch really began 5 us after GPU 0's."""
    buf, meta = make(ctas=4, segments=2, reps=3)
    a = decode.decode(buf, meta, 4)
    b = dataclasses.replace(a, origin_ns=a.origin_ns + GT_GAP)
    paths = [str(tmp_path / "rank0.pftrace"), str(tmp_path / "rank1.pftrace")]
    offset = 1_700_000_000_000_000_000 - a.origin_ns
    perfetto_trace.write(
        paths[0],
        [a],
        "GPU 0",
        host_clock={"realtime_minus_globaltimer_ns": offset, "uncertainty_ns": 300, "samples": 8},
    )
    perfetto_trace.write(
        paths[1],
        [b],
        "GPU 1",
        host_clock={"realtime_minus_globaltimer_ns": offset - GT_GAP + 5_000, "uncertainty_ns": 400, "samples": 8}
        if host_b
        else None,
    )
    return a, b, paths


def test_ranks_are_aligned_on_host_time(tmp_path):
    a, b, paths = two_gpus(tmp_path)
    out = tmp_path / "merged.pftrace"
    done = subprocess.run(command() + ["-o", str(out), *paths], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "rank1.pftrace: shifted by 5000 ns" in done.stdout and "rank0.pftrace: shifted by 0 ns" in done.stdout
    assert "aligned on host real time (+- 700 ns" in done.stderr
    assert by_rank(out) == sorted(shifted([a], "rank 0: GPU 0", 0) + shifted([b], "rank 1: GPU 1", 5_000))
    tracks, _ = read(out)
    roots = sorted((d.process.pid, d.process.process_name) for d in tracks.values() if d.HasField("process"))
    assert roots == [(1, "rank 0: GPU 0"), (2, "rank 1: GPU 1")]


def test_without_every_host_offset_ranks_align_on_global_timers(tmp_path):
    a, b, paths = two_gpus(tmp_path, host_b=False)
    out = tmp_path / "merged.pftrace"
    messages = []
    assert merge(paths, str(out), ["left", "right"], report=messages.append) == {paths[0]: 0, paths[1]: GT_GAP}
    assert "global timers" in messages[0] and "rank1.pftrace has no host clock offset" in messages[0]
    assert by_rank(out) == sorted(shifted([a], "left: GPU 0", 0) + shifted([b], "right: GPU 1", GT_GAP))


def test_compressed_inputs_and_a_compressed_output(tmp_path):
    """Compressed traces merge like plain ones; --compress deflates the
    merged file, which inflates to the plain merge."""
    from proton.writers import perfetto_deflate

    a, b, paths = two_gpus(tmp_path)
    packed_inputs = []
    for path in paths:
        raw = open(path, "rb").read()
        packed = path.replace(".pftrace", ".packed.pftrace")
        with open(packed, "wb") as f:
            out = perfetto_deflate.DeflateOut(f, workers=1)
            out.write(raw)
            out.close()
        packed_inputs.append(packed)
    plain = tmp_path / "plain.pftrace"
    merge(packed_inputs, str(plain))  # the descriptions name the inputs
    out = tmp_path / "merged.pftrace"
    done = subprocess.run(command() + ["--compress", "-o", str(out), *packed_inputs], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert out.read_bytes() != plain.read_bytes()
    assert perfetto_deflate.inflate(out.read_bytes()) == plain.read_bytes()
    assert by_rank(out) == sorted(shifted([a], "rank 0: GPU 0", 0) + shifted([b], "rank 1: GPU 1", 5_000))
    cut = tmp_path / "cut.pftrace"
    cut.write_bytes(open(packed_inputs[0], "rb").read()[:-3])
    done = subprocess.run(
        command() + ["-o", str(tmp_path / "m2.pftrace"), str(cut), paths[1]], capture_output=True, text=True
    )
    assert done.returncode == 2 and "cut.pftrace: corrupted compressed Perfetto trace" in done.stderr, done.stderr
    assert not (tmp_path / "m2.pftrace").exists()  # nothing partial left behind


def test_the_later_input_may_come_first(tmp_path):
    """Inputs are written in time order whatever their rank order."""
    a, b, paths = two_gpus(tmp_path)
    out = tmp_path / "merged.pftrace"
    assert merge(paths[::-1], str(out)) == {paths[1]: 5_000, paths[0]: 0}
    assert by_rank(out) == sorted(shifted([a], "rank 1: GPU 0", 0) + shifted([b], "rank 0: GPU 1", 5_000))


def test_traces_without_events_and_many_inputs(tmp_path):
    paths = []
    for rank in range(5):
        path = tmp_path / f"r{rank}.pftrace"
        ev = synthetic_events([(1, 0, 10 * rank, 10 * rank + 3)] if rank % 2 else [])
        perfetto_trace.write(str(path), [ev], f"GPU {rank}")
        paths.append(str(path))
    out = tmp_path / "all.pftrace"
    merge(paths, str(out))
    slices = by_rank(out)
    assert [s[0][0] for s in slices] == ["rank 1: GPU 1", "rank 3: GPU 3"]


def test_merge_rejects_a_file_that_is_not_a_proton_trace(tmp_path):
    bad = tmp_path / "x.pftrace"
    bad.write_bytes(b"\xff\xff\xff")
    with pytest.raises(MergeError, match="x.pftrace: not a Perfetto trace"):
        merge([str(bad)], str(tmp_path / "out.pftrace"))
    other = tmp_path / "y.pftrace"
    other.write_bytes(b"\x0a\x02\x50\x01")  # a packet, but no Proton GPU track
    with pytest.raises(MergeError, match="y.pftrace: not a Proton trace"):
        merge([str(other)], str(tmp_path / "out.pftrace"))


def test_merge_takes_task_traces_too(tmp_path):
    """A proton.tasks export merges with a plugin session's trace."""
    pytest.importorskip("triton")
    from proton.tasks import export_to_perfetto_trace
    from test_tasks import NAMES, buffer_words, nested

    buf, meta = make()
    plugin = tmp_path / "plugin.pftrace"
    events = decode.decode(buf, meta, 3)
    perfetto_trace.write(str(plugin), [events], "GPU 0")
    tasks = tmp_path / "tasks.pftrace"
    export_to_perfetto_trace(
        buffer_words(1, 1, 8, {(0, 0): nested(events.origin_ns + 5_000, 2)}), NAMES, str(tasks), gpu_name="GPU 1"
    )
    shifts = merge([str(plugin), str(tasks)], str(tmp_path / "both.pftrace"))
    assert shifts == {str(plugin): 0, str(tasks): 5_000}
    slices = by_rank(tmp_path / "both.pftrace")
    assert len(slices) == events.num_events + 3
    assert sorted(s[1] for s in slices if s[0][0] == "rank 1: GPU 1") == sorted(NAMES)


def test_merge_never_overwrites_an_input_or_an_existing_file(tmp_path, capsys):
    # The output is explicit (-o); a forgotten output, an output that is an
    # input, or an existing file are refused, and every input stays as it was.
    _, _, paths = two_gpus(tmp_path)
    before = [open(p, "rb").read() for p in paths]
    for argv, problem in (
        (paths, "the following arguments are required: -o/--output"),
        (["-o", str(tmp_path), *paths], "is a directory"),
        (["-o", str(tmp_path / "no" / "such" / "m.pftrace"), *paths], "does not exist"),
        (["--labels", ",", "-o", str(tmp_path / "l.pftrace"), *paths], "every label must be non-empty"),
        (["-o", paths[0], *paths], "is also an input"),
        (["-o", paths[0], paths[1]], "exists: pass --force"),
        (["--force", "-o", paths[0], *paths], "is also an input"),
        (["-o", str(tmp_path / "twice.pftrace"), paths[0], paths[0]], "is given twice"),
    ):
        with pytest.raises(SystemExit) as error:
            main(argv)
        assert error.value.code == 2 and problem in capsys.readouterr().err
    assert [open(p, "rb").read() for p in paths] == before
    out = str(tmp_path / "merged.pftrace")
    assert main(["-o", out, *paths]) == 0
    with pytest.raises(SystemExit):
        main(["-o", out, *paths])  # exists now
    assert main(["--force", "-o", out, *paths]) == 0
    with pytest.raises(SystemExit):
        main([str(tmp_path / "mistyped.pftrace"), *paths])  # no -o: never taken as the output
    assert not (tmp_path / "mistyped.pftrace").exists()
    assert [open(p, "rb").read() for p in paths] == before


def test_slice_regions_are_framed_at_once_as_packet_by_packet(tmp_path, monkeypatch):
    from proton.writers import perfetto_frames

    _, _, paths = two_gpus(tmp_path)
    data = open(paths[0], "rb").read()
    at_once = perfetto_frames.frame(data, paths[0])
    monkeypatch.setattr(perfetto_frames, "frame_slices", lambda data, at: None)
    one_by_one = perfetto_frames.frame(data, paths[0])
    assert all((a == b).all() for a, b in zip(at_once, one_by_one)) and at_once[0].size > 100
    # A region that does not tile into packets is framed one by one.
    monkeypatch.undo()
    assert perfetto_frames.frame_slices(data[:-1], int(at_once[0][-5])) is None
