"""Phases of host sessions over the fake libcupti (proton.data, as Triton
3.9's Proton has it): get / get_msgpack / clear / is_phase_complete,
deactivate(flushing=True), periodic flushing into one file per phase in
either tree format, finalize(output_format="hatchet_msgpack"), and the
viewer's get_raw_metrics on a tree in memory; plus the MessagePack codec."""

import glob
import json
import math

import pytest

import proton
from proton.writers import msgpack_codec

from fake_cupti_support import fake_host_sessions  # noqa: F401 (fixture)

CBID_cuLaunchKernel = 307


pytestmark = pytest.mark.usefixtures("fake_host_sessions")


def _launch(fake, name: bytes, ns: int = 10):
    fake.fake_launch(CBID_cuLaunchKernel, name, 100, 100 + ns, 1)


def _names(tree) -> list:
    return [child["frame"]["name"] for child in tree[0]["children"]]


def _load(path: str):
    if path.endswith(".hatchet_msgpack"):
        with open(path, "rb") as f:
            return msgpack_codec.unpackb(f.read())
    with open(path) as f:
        return json.load(f)


def test_get_is_the_phase_tree_and_get_msgpack_its_encoding(fake, tmp_path):
    session = proton.start(str(tmp_path / "get"), backend="cupti", quiet=True)
    with proton.scope("test", metrics={"tokens": 3}):
        _launch(fake, b"foo", 5)
        _launch(fake, b"foo", 7)
        _launch(fake, b"elementwise", 1)
    proton.deactivate(session, flushing=True)
    tree = proton.data.get(session)
    test = tree[0]["children"][0]
    assert test["frame"]["name"] == "test" and test["metrics"] == {"tokens": 3}
    leaves = {c["frame"]["name"]: c["metrics"] for c in test["children"]}
    assert leaves["foo"]["count"] == 2 and leaves["foo"]["time (ns)"] == 12
    assert leaves["elementwise"]["count"] == 1
    packed = proton.data.get_msgpack(session)
    assert isinstance(packed, bytes) and msgpack_codec.unpackb(packed) == tree
    # get takes nothing away: a second call, and finalize's file, hold the same.
    assert proton.data.get(session) == tree
    path = proton.finalize(session).files["tree"]
    assert path.endswith("get.hatchet") and json.load(open(path)) == tree


def test_get_raw_metrics_reads_a_tree_in_memory(fake, tmp_path):
    pytest.importorskip("hatchet")
    from proton import viewer

    session = proton.start(str(tmp_path / "raw"), backend="cupti", quiet=True)
    with proton.scope("test"):
        _launch(fake, b"foo_kernel")
        _launch(fake, b"foo_kernel")
    proton.deactivate(session, flushing=True)
    database = proton.data.get(session)
    before = json.dumps(database)
    gf, inclusive, _, _ = viewer.get_raw_metrics(database)
    foo = gf.filter("MATCH ('*', c) WHERE c.'name' =~ '.*foo.*' AND c IS LEAF").dataframe
    assert len(foo) == 1 and int(foo["count"].values[0]) == 2 and "time (ns)" in inclusive
    assert json.dumps(database) == before  # the caller's list is left as it was
    # An open file, JSON or MessagePack, as before.
    (tmp_path / "raw.msgpack").write_bytes(proton.data.get_msgpack(session))
    with open(tmp_path / "raw.msgpack", "rb") as f:
        assert len(viewer.get_raw_metrics(f)[0].dataframe) == len(gf.dataframe)
    proton.finalize(session)


def test_clear_empties_the_phase_and_later_records_still_go_to_it(fake, tmp_path):
    session = proton.start(str(tmp_path / "clear"), backend="cupti", quiet=True)
    with proton.scope("test0", metrics={"n": 1}):
        _launch(fake, b"add")
    proton.deactivate(session, flushing=True)
    proton.data.clear(session)
    assert proton.data.get(session)[0]["children"] == []
    proton.activate(session)
    with proton.scope("test1"):
        _launch(fake, b"mul")
    proton.deactivate(session, flushing=True)
    tree = proton.data.get(session)
    assert _names(tree) == ["test1"] and tree[0]["children"][0]["children"][0]["frame"]["name"] == "mul"
    report = proton.finalize(session)
    assert _names(json.load(open(report.files["tree"]))) == ["test1"]
    assert report.kernels == 2  # the report counts what was recorded, cleared or not


def test_clear_of_the_current_phase_takes_records_launched_before_it(fake, tmp_path):
    session = proton.start(str(tmp_path / "pending"), backend="cupti", quiet=True)
    with proton.scope("before"):
        _launch(fake, b"k")  # its record is still in the tracer's buffer
    proton.data.clear(session)
    assert proton.data.get(session)[0]["children"] == []
    proton.finalize(session)


def test_clear_up_to_phase(fake, tmp_path):
    session = proton.start(str(tmp_path / "upto"), backend="cupti", quiet=True)
    with proton.scope("phase0"):
        _launch(fake, b"add")
    phase1 = proton.data.advance_phase(session)
    with proton.scope("phase1"):
        _launch(fake, b"add")
    proton.deactivate(session, flushing=True)
    assert _names(proton.data.get(session, phase=0)) == ["phase0"]
    assert _names(proton.data.get(session, phase=phase1)) == ["phase1"]
    proton.data.clear(session, phase=phase1, clear_up_to_phase=True)
    assert proton.data.get(session, phase=phase1)[0]["children"] == []  # the current phase: empty
    with pytest.raises(RuntimeError, match="phase 0 has no data: it was cleared"):
        proton.data.get(session, phase=0)
    with pytest.raises(RuntimeError, match="phase 5 has no data: the current phase is 1"):
        proton.data.get(session, phase=5)
    report = proton.finalize(session)
    # A session that advanced writes its phases as parts: only the current one is left.
    assert [p["phase"] for p in report.parts] == [1]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["upto.part_1.hatchet"]


def test_clear_one_past_phase_keeps_the_others(fake, tmp_path):
    session = proton.start(str(tmp_path / "one"), backend="cupti", quiet=True)
    for i in range(3):
        with proton.scope(f"p{i}"):
            _launch(fake, b"k")
        proton.data.advance_phase(session)
    proton.data.clear(session, phase=1)
    assert _names(proton.data.get(session, 0)) == ["p0"] and _names(proton.data.get(session, 2)) == ["p2"]
    proton.finalize(session)
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"one.part_{i}.hatchet" for i in (0, 2, 3)]


def test_is_phase_complete(fake, tmp_path):
    session = proton.start(str(tmp_path / "complete"), backend="cupti", quiet=True)

    def work():
        with proton.scope("test0"):
            _launch(fake, b"add")

    work()
    assert not proton.data.is_phase_complete(session, 0)
    proton.deactivate(session)
    assert not proton.data.is_phase_complete(session, 0)  # the current phase never is
    proton.activate(session)
    phase = proton.data.advance_phase(session)
    assert phase == 1
    work()
    proton.deactivate(session, flushing=True)
    assert proton.data.is_phase_complete(session, 0) is True
    assert proton.data.is_phase_complete(session, phase) is False
    proton.data.advance_phase(session)
    assert proton.data.is_phase_complete(session, phase - 1) and proton.data.is_phase_complete(session, phase)
    assert proton.data.is_phase_flushed(session, 0)  # the older name, the same answer for host sessions
    proton.finalize(session)


def test_data_api_as_triton_39_uses_it(fake, tmp_path):
    session = proton.start(str(tmp_path / "api"), backend="cupti", quiet=True)
    proton.enter_scope("test0")
    proton.exit_scope()
    proton.deactivate(session)
    assert proton.data.get(session) is not None
    assert isinstance(proton.data.get_msgpack(session), bytes)
    assert proton.data.is_phase_complete(session, 0) is False
    assert proton.data.advance_phase(session) == 1
    assert proton.data.is_phase_complete(session, 1) is False
    proton.activate(session)  # a phase without any record still completes
    assert proton.data.advance_phase(session) == 2
    proton.deactivate(session, flushing=True)
    assert proton.data.is_phase_complete(session, 1) is True
    assert proton.data.is_phase_complete(session, 2) is False
    proton.data.clear(session, phase=0)
    proton.data.clear(session, phase=2, clear_up_to_phase=True)
    proton.finalize()


def test_user_metrics_belong_to_their_phase(fake, tmp_path):
    session = proton.start(str(tmp_path / "metrics"), backend="cupti", quiet=True)
    for phase in range(2):
        for _ in range(3):
            with proton.scope("step", metrics={"bytes": 16}):
                _launch(fake, b"k")
        if phase == 0:
            proton.data.advance_phase(session)
    for phase in range(2):
        step = proton.data.get(session, phase)[0]["children"][0]
        assert step["metrics"]["bytes"] == 48 and step["children"][0]["metrics"]["count"] == 3
    proton.finalize(session)


@pytest.mark.parametrize("data_format", ["hatchet", "hatchet_msgpack"])
def test_periodic_flushing_writes_one_file_per_phase(fake, tmp_path, data_format):
    session = proton.start(
        str(tmp_path / "periodic"), backend="cupti", mode=f"periodic_flushing:format={data_format}", quiet=True
    )
    for i in range(50):
        if i != 0 and i % 5 == 0:
            proton.data.advance_phase(session=session)
            # Written and let go at once: its data is in the file now.
            with pytest.raises(RuntimeError, match="has no data: it was written to .*periodic.part_"):
                proton.data.get(session, session.phase - 1)
        with proton.scope(f"test_{i}", metrics={"count": 1}):
            _launch(fake, b"zeros", 3)
    report = proton.finalize(output_format=data_format)
    files = sorted(glob.glob(str(tmp_path / f"*.{data_format}")))
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"periodic.part_{i}.{data_format}" for i in range(10))
    assert [p["phase"] for p in report.parts] == list(range(10)) and report.kernels == 50
    scopes = []
    for path in files:
        data = _load(path)
        assert len(data[0]["children"]) == 5
        first = data[0]["children"][0]
        assert first["metrics"]["count"] == 1 and first["frame"]["name"].startswith("test_")
        assert first["children"][0]["metrics"]["time (ns)"] == 3
        scopes += _names(data)
    assert sorted(scopes) == sorted(f"test_{i}" for i in range(50))


def test_periodic_flushing_msgpack_is_msgpacks_encoding_of_the_tree(fake, tmp_path):
    msgpack = pytest.importorskip("msgpack")
    session = proton.start(str(tmp_path / "m"), backend="cupti", mode="periodic_flushing:format=hatchet_msgpack")
    with proton.scope("s", metrics={"x": 1.5, "n": -3}):
        _launch(fake, b"k")
    proton.data.advance_phase(session)
    proton.finalize(session, output_format="hatchet_msgpack")
    with open(tmp_path / "m.part_0.hatchet_msgpack", "rb") as f:
        data = msgpack.load(f, raw=False, strict_map_key=False)
    assert data == _load(str(tmp_path / "m.part_0.hatchet_msgpack"))
    assert data[0]["children"][0]["metrics"] == {"x": 1.5, "n": -3}


def test_finalize_output_format_hatchet_msgpack(fake, tmp_path):
    proton.start(str(tmp_path / "fmt"), backend="cupti", quiet=True)
    with proton.scope("s"):
        _launch(fake, b"k")
    report = proton.finalize(output_format="hatchet_msgpack")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fmt.hatchet_msgpack"]
    data = _load(report.files["tree"])
    assert _names(data) == ["s"] and isinstance(data[1], dict)
    # proton-view reads it by its name.
    from proton import viewer

    assert viewer.main([report.files["tree"], "-m", "count"]) == 0


def test_periodic_flushing_argument_and_mode_errors(fake, tmp_path):
    with pytest.raises(proton.ModeError, match="invalid format value 'json'"):
        proton.start(str(tmp_path / "x"), mode="periodic_flushing:format=json")
    with pytest.raises(proton.ModeError, match="periodic_flushing=True"):
        proton.start(str(tmp_path / "x"), backend="instrumentation", mode="periodic_flushing")
    # periodic_flushing=True on a host backend: mode "periodic_flushing" (hatchet parts).
    session = proton.start(str(tmp_path / "flag"), backend="cupti", periodic_flushing=True, quiet=True)
    assert session.periodic_flushing == "hatchet"
    proton.data.advance_phase(session)
    proton.finalize(session)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["flag.part_0.hatchet", "flag.part_1.hatchet"]
    with pytest.raises(proton.ProfilerError, match="a phase is a number from 0"):
        session = proton.start(str(tmp_path / "y"), backend="cupti", quiet=True)
        proton.data.get(session, phase=-1)


def test_session_that_never_advances_writes_what_it_always_did(fake, tmp_path):
    proton.start(str(tmp_path / "plain"), backend="cupti", data="trace", quiet=True)
    with proton.scope("s"):
        _launch(fake, b"k")
    report = proton.finalize()
    assert report.parts == [] and sorted(p.name for p in tmp_path.iterdir()) == ["plain.chrome_trace", "plain.hatchet"]


def test_trace_sessions_write_a_timeline_per_phase(fake, tmp_path):
    session = proton.start(str(tmp_path / "tl"), backend="cupti", data="trace", quiet=True)
    _launch(fake, b"k0")
    proton.data.advance_phase(session)
    _launch(fake, b"k1")
    _launch(fake, b"k1")
    proton.finalize(session)
    traces = [json.load(open(tmp_path / f"tl.part_{i}.chrome_trace"))["traceEvents"] for i in range(2)]
    events = [[e for e in trace if e.get("cat") == "kernel"] for trace in traces]  # either layout
    assert [[e["name"] for e in phase] for phase in events] == [["k0"], ["k1", "k1"]]


def test_instrumentation_sessions_have_no_get(monkeypatch, tmp_path):
    from proton.profiling import api
    from proton import data
    from proton.recording.instrumentation_session import InstrumentationSession

    session = object.__new__(InstrumentationSession)  # not started: only its name is read
    session.name = "kernels"
    monkeypatch.setattr(api, "_select", lambda _: [session])
    for call in (data.get, data.get_msgpack, data.clear):
        with pytest.raises(proton.ProfilerError, match="apply to host sessions"):
            call(0)
    assert data.get(None) is None and data.get_msgpack(None) is None and data.clear(None) is None


# -- the MessagePack codec -----------------------------------------------------
VALUES = [
    None,
    True,
    False,
    0,
    127,
    128,
    255,
    256,
    65535,
    65536,
    2**32 - 1,
    2**32,
    2**64 - 1,
    -1,
    -32,
    -33,
    -128,
    -129,
    -32768,
    -32769,
    -(2**31),
    -(2**31) - 1,
    -(2**63),
    0.0,
    -1.5,
    1e300,
    "",
    "a" * 31,
    "b" * 32,
    "é" * 200,
    "c" * 70_000,
    b"\x00\x01",
    b"x" * 300,
    list(range(15)),
    list(range(16)),
    list(range(70_000)),
    {str(i): i for i in range(15)},
    {str(i): i for i in range(16)},
    {"0": {"arch": "90", "num_sms": 132}, "nested": [[], {}, [None]]},
]


@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_msgpack_codec_round_trips(value):
    assert msgpack_codec.unpackb(msgpack_codec.packb(value)) == value


@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_msgpack_codec_matches_msgpack(value):
    msgpack = pytest.importorskip("msgpack")
    packed = msgpack_codec.packb(value)
    assert msgpack.unpackb(packed, raw=False, strict_map_key=False) == value
    assert msgpack_codec.unpackb(msgpack.packb(value, use_bin_type=True)) == value
    assert packed == msgpack.packb(value, use_bin_type=True)  # the same smallest formats


def test_msgpack_codec_formats_and_errors():
    assert msgpack_codec.packb([1, -1, "a", {"k": 1.0}]).hex() == "9401ffa16181a16bcb3ff0000000000000"
    assert msgpack_codec.packb((1, 2)) == msgpack_codec.packb([1, 2])
    assert math.isnan(msgpack_codec.unpackb(msgpack_codec.packb(float("nan"))))
    assert msgpack_codec.unpackb(bytes.fromhex("ca3fc00000")) == 1.5  # float32, which others write
    with pytest.raises(OverflowError):
        msgpack_codec.packb(2**64)
    with pytest.raises(TypeError, match="cannot pack object"):
        msgpack_codec.packb(object())
    for bad, message in (
        (b"", "truncated"),
        (b"\x92\x01", "truncated"),
        (b"\xda\x00", "truncated"),
        (b"\x01\x02", "1 bytes after the value"),
        (b"\xc1", "unsupported format byte 0xc1"),
        (b"\xd4\x01\x02", "unsupported format byte 0xd4"),  # extension types
        (b"\x81\x90\x01", "map key"),
    ):
        with pytest.raises(ValueError, match=message):
            msgpack_codec.unpackb(bad)
