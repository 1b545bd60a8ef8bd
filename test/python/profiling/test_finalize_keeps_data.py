"""Finalize never loses a profile (CPU: host sessions over the fake
libcupti, instrumentation sessions with simulated launches): what a metric
API accepts every format writes, or it is refused when added, naming the
metric; a session whose outputs cannot be written anywhere keeps its data
and is finalized again, leaving no partial file; what only finalize uses
(RANK, the name) is checked at start; sessions started with one name are
one session (as in Triton's Proton), never files written over each other."""

import errno
import json
import os
import re

import numpy as np
import pytest

import proton
from proton.writers import files, msgpack_codec
from proton.recording import instrumentation_session as runtime

from fake_cupti_support import fake_host_sessions  # noqa: F401 (fixture)
from test_host_runtime import CBID_cuLaunchKernel
from test_long_runs import buffer, launch  # noqa: F401 (fixture)


@pytest.fixture
def host(fake, fake_host_sessions):  # noqa: F811
    return fake


def _tree(path):
    if path.endswith(".hatchet_msgpack"):
        return msgpack_codec.unpackb(open(path, "rb").read())
    return json.load(open(path))


def _node(tree, name):
    stack = [tree[0]]
    while stack:
        node = stack.pop()
        if node["frame"]["name"] == name:
            return node
        stack += node["children"]
    raise KeyError(name)


@pytest.mark.parametrize("fmt", ["hatchet", "hatchet_msgpack"])
def test_every_metric_value_accepted_is_written_by_every_format(host, tmp_path, fmt):
    session = proton.start(str(tmp_path / "m"), backend="cupti", quiet=True)
    big = (1 << 64) - 1
    with proton.scope("s", metrics={"big": big, "neg": -(1 << 63), "vec": [1, 2.5], "nan": float("nan")}):
        host.fake_launch(CBID_cuLaunchKernel, b"k", 0, 10, 1)
    with proton.scope("s", metrics={"inf": float("inf"), "note(pty)": "é", "tag(exc)": "t"}):
        pass
    refused = [
        ({"big": 1}, "metric 'big' of scope 's': its sum on this scope cannot be written: an integer of 20 digits"),
        ({"huge": 1 << 64}, "metric 'huge' of scope 's': its value cannot be written: an integer of 20 digits"),
        ({"low": -(1 << 63) - 1}, "metric 'low' of scope 's': its value cannot be written: an integer of 19 digits"),
        ({"note(pty)": "a\ud800"}, "the string is not valid Unicode text ('a\\ud800': character 1 is a lone"),
        ({"bad\udcff": 1}, "a metric of scope 's' has a name that is not valid Unicode text ('bad\\udcff'"),
        ({"vec": [1.0]}, "metric 'vec' of scope 's': a vector metric of 2 values got [1.0]"),
    ]
    for metrics, message in refused:
        with pytest.raises(proton.ProfilerError, match=re.escape(message)):
            with proton.scope("s", metrics=metrics):
                pass
    with pytest.raises(proton.ProfilerError, match=re.escape("scope name is not valid Unicode text ('x\\ud800'")):
        proton.enter_scope("x\ud800")
    with pytest.raises(proton.ProfilerError, match="metrics of scope 's' must be a dict, got list"):
        proton.enter_scope("s", metrics=[1])
    report = proton.finalize(session, fmt)
    node = _node(_tree(report.files["tree"]), "s")
    assert node["metrics"]["big"] == big and node["metrics"]["neg"] == -(1 << 63) and node["metrics"]["vec"] == [1, 2.5]
    assert node["metrics"]["inf"] == float("inf") and node["metrics"]["nan"] != node["metrics"]["nan"]
    assert node["metrics"]["note"] == "é" and node["metrics"]["tag"] == "t"


def test_launch_metadata_metrics_are_plain_numbers_or_refused(host, tmp_path):
    session = proton.start(str(tmp_path / "k"), backend="cupti", quiet=True)
    session.add_kernel_metrics(0, "k", {"n": np.int64(7), "f": np.float32(0.5)})
    for value, message in ((1 << 70, "beyond 64 bits"), (1j, "as complex"), ([1, "a"], "as list")):
        with pytest.raises(proton.ProfilerError, match=f"launch_metadata of kernel k.* metric 'x'.*{message}"):
            session.add_kernel_metrics(0, "k", {"x": value})
    sums = session.phases[0].kernel_metrics[(0, "k")]
    assert sums == {"n": 7, "f": 0.5} and type(sums["n"]) is int
    proton.finalize(session)


def _unwritable(monkeypatch, tmp_path):
    """The output directory and the temporary directory both full: a
    write gets some bytes in, then ENOSPC."""
    real_output = files.output

    def full(path, **kwargs):
        manager = real_output(path, **kwargs)

        class Full:
            def __enter__(self):
                self.target = manager.__enter__()
                return self.target

            def __exit__(self, *exc):
                if exc[0] is None and os.path.exists(self.target):
                    error = OSError(errno.ENOSPC, "No space left on device", path)
                    manager.__exit__(OSError, error, None)
                    raise error
                return manager.__exit__(*exc)

        return Full()

    monkeypatch.setattr(files, "output", full)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)


def test_a_host_session_that_cannot_write_keeps_its_data(host, tmp_path, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    session = proton.start(str(out / "h"), backend="cupti", quiet=True)
    for _ in range(3):
        host.fake_launch(CBID_cuLaunchKernel, b"k", 0, 10, 1)
    with monkeypatch.context() as patch:
        _unwritable(patch, tmp_path)
        with pytest.raises(proton.ProfilerError, match=r"could not write .*h.hatchet \(No space left on device\), nor"):
            proton.finalize(session)
        assert os.listdir(out) == [] and os.listdir(tmp_path / "tmp") == []  # no partial file anywhere
    assert proton.sessions() == [session.session]
    with pytest.raises(proton.ProfilerError, match="could not write its outputs: it records no more"):
        proton.activate(session)
    with pytest.raises(proton.ProfilerError, match="call proton.finalize again before starting"):
        proton.start(str(out / "h"), backend="cupti")
    report = proton.finalize(session)
    assert report.kernels == 3 and _node(_tree(report.files["tree"]), "k")["metrics"]["count"] == 3
    assert proton.sessions() == []


def test_a_writer_that_fails_otherwise_keeps_the_data_too(host, tmp_path, monkeypatch):
    from proton.host import session as host_session

    session = proton.start(str(tmp_path / "h"), backend="cupti", quiet=True)
    host.fake_launch(CBID_cuLaunchKernel, b"k", 0, 10, 1)

    def broken(*args):
        raise TypeError("a writer's bug")

    with monkeypatch.context() as patch:
        patch.setattr(host_session, "_write_tree", broken)
        with pytest.raises(proton.ProfilerError, match="TypeError: a writer's bug; nothing is lost") as error:
            proton.finalize(session)
        assert isinstance(error.value.__cause__, TypeError) and os.listdir(tmp_path) == []
    assert proton.finalize(session).kernels == 1 and os.listdir(tmp_path) == ["h.hatchet"]


def test_an_instrumentation_session_that_cannot_write_keeps_its_launches(tmp_path, buffer, monkeypatch):  # noqa: F811
    session = proton.start(str(tmp_path / "run"), backend="instrumentation", outputs="tree", quiet=True)
    launch(session, buffer, "k")
    launch(session, buffer, "k")
    with monkeypatch.context() as patch:
        _unwritable(patch, tmp_path)
        with pytest.raises(proton.ProfilerError, match="could not write the outputs .*nothing is lost"):
            proton.finalize()
    assert sorted(os.listdir(tmp_path)) == ["tmp"] and os.listdir(tmp_path / "tmp") == []
    report = proton.finalize()
    assert report.launches_kept == 2 and report.events == 72 and sorted(os.listdir(tmp_path)) == ["run.hatchet", "tmp"]
    assert runtime._session is None


def test_the_task_exporter_leaves_no_truncated_file(tmp_path, monkeypatch):
    from proton.tasks import host as tasks

    words = np.zeros(tasks.HEADER_WORDS + tasks.ENTRY_WORDS * 4, dtype=np.int64)
    words[0], words[1] = np.uint64(tasks.MAGIC).view(np.int64), 4
    _unwritable(monkeypatch, tmp_path)
    with pytest.raises(proton.ProfilerError, match="could not write .*t.pftrace"):
        tasks.export_to_perfetto_trace(words, ["t"], str(tmp_path / "t.pftrace"), gpu_name="GPU 0")
    assert sorted(os.listdir(tmp_path)) == ["tmp"] and os.listdir(tmp_path / "tmp") == []


@pytest.mark.parametrize("rank", ["²", "9" * 5000, "-1", ""])
def test_a_bad_rank_is_refused_at_start(tmp_path, monkeypatch, rank):
    monkeypatch.setenv("RANK", rank)
    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(proton.ProfilerError, match="environment variable RANK=.* is not a process count or rank"):
        proton.start(str(tmp_path / "r"), backend="instrumentation")
    assert runtime._session is None and os.listdir(tmp_path) == []


@pytest.mark.parametrize("name, message", [("x" * 250, "is too long"), ("a\ud800", "character 1 is a lone surrogate")])
def test_names_finalize_could_not_write_are_refused_at_start(tmp_path, name, message):
    with pytest.raises(proton.ProfilerError, match=message):
        proton.start(str(tmp_path / name), backend="instrumentation")
    assert runtime._session is None


def test_an_output_that_is_a_directory_is_refused_at_start(tmp_path):
    (tmp_path / "run.pftrace").mkdir()
    with pytest.raises(proton.ProfilerError, match=r"run.pftrace: it is a directory"):
        proton.start(str(tmp_path / "run"), backend="instrumentation")


def test_sessions_started_with_one_name_are_one_session(host, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    @proton.profile
    def step():
        host.fake_launch(CBID_cuLaunchKernel, b"k", 0, 10, 1)

    for _ in range(3):
        step()
    (session,) = proton.sessions()
    report = proton.finalize()
    assert report.kernels == 3 and os.listdir(tmp_path) == ["proton.hatchet"]
    # A name whose files are those of an open session, with other arguments: refused at start.
    first = proton.start(str(tmp_path / "run"), backend="cupti", quiet=True)
    with pytest.raises(proton.ProfilerError, match=r"same output files and backend='cupti', not 'instrumentation'"):
        proton.start(str(tmp_path / "run.hatchet"), backend="instrumentation")
    with pytest.raises(proton.ProfilerError, match=r"data=None, not 'trace'"):
        proton.start(str(tmp_path / "run"), backend="cupti", data="trace")
    assert proton.start(str(tmp_path / "run"), backend="cupti", quiet=True) == first
    proton.finalize()
    # An instrumentation session: mode None is the default mode, so these are one session.
    first = proton.start(str(tmp_path / "k"), backend="instrumentation", quiet=True)
    assert proton.start(str(tmp_path / "k"), mode="default", quiet=True) == first
    proton.finalize()
