"""Host sessions and other CUPTI clients (torch.profiler's Kineto, Nsight),
over the fake libcupti, whose subscription another client can take
(fake_subscribe_other): a session started then goes on without kernel
timings, says so in one line naming the likely holder and in its report,
and never ends the program; torch.profiler started while a session holds
CUPTI is named in one line and in the report (a stand-in for
torch.autograd.profiler, since torch is not needed here)."""

import json
import sys
import types

import pytest

import proton
from proton.host import cupti_clients, session as host_session

from test_host_runtime import CBID_cuLaunchKernel, h

pytestmark = pytest.mark.usefixtures("no_session_left")  # every test ends with no session open


@pytest.fixture
def fake_torch(monkeypatch):
    """sys.modules' torch.autograd.profiler as torch 2.x has it: a module
    flag and the switch that torch.profiler's start and stop call."""
    profiler = types.ModuleType("torch.autograd.profiler")
    profiler._is_profiler_enabled = False

    def _set_is_profiler_enabled(enable):
        profiler._is_profiler_enabled = enable

    def start():  # as torch.profiler.profile.start reaches it: a global lookup in the module
        profiler._set_is_profiler_enabled(True)

    def stop():
        profiler._set_is_profiler_enabled(False)

    profiler._set_is_profiler_enabled = _set_is_profiler_enabled
    profiler.start, profiler.stop = start, stop
    torch = types.ModuleType("torch")
    torch.autograd = types.ModuleType("torch.autograd")
    torch.autograd.profiler = profiler
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setitem(sys.modules, "torch.autograd", torch.autograd)
    monkeypatch.setitem(sys.modules, "torch.autograd.profiler", profiler)
    monkeypatch.setattr(host_session, "_synchronize", lambda: None)
    return profiler


@pytest.fixture
def cupti_taken(fake):
    assert fake.fake_subscribe_other() == 0
    yield fake
    fake.fake_release_other()


def test_a_session_started_while_another_client_holds_cupti_goes_on_without_kernels(
    cupti_taken, fake_path, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("PROTON_CUPTI_LIB", str(fake_path))
    monkeypatch.delenv("CUDA_INJECTION64_PATH", raising=False)
    session = proton.start(str(tmp_path / "run"), backend="cupti", hook="triton")
    assert session is not None and not h.cupti_tracing()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("proton: warning: CUPTI is held by another CUPTI client")
    assert "no kernel timings" in err[0] and "backend='instrumentation'" in err[0]
    with proton.scope("step", metrics={"tokens": 7}):
        cupti_taken.fake_launch(CBID_cuLaunchKernel, b"k1", 100, 300, 1)  # the other client's, not ours
    report = proton.finalize()
    assert report.kernels == 0
    assert any(w.startswith("no kernel timings: CUPTI is held by") for w in report.warnings)
    assert "warning: no kernel timings" in capsys.readouterr().err  # the report says it again
    tree = json.load(open(report.files["tree"]))
    step = next(c for c in tree[0]["children"] if c["frame"]["name"] == "step")
    assert step["metrics"] == {"tokens": 7} and step["children"] == []
    assert cupti_taken.fake_subscribed() == 1  # the other client keeps its subscription


def test_the_holder_is_named_torch_profiler_or_nsight(cupti_taken, fake_torch, fake_path, tmp_path, monkeypatch):
    monkeypatch.setenv("PROTON_CUPTI_LIB", str(fake_path))
    monkeypatch.delenv("CUDA_INJECTION64_PATH", raising=False)
    fake_torch.start()
    proton.start(str(tmp_path / "a"), backend="cupti", quiet=True)
    report = proton.finalize()
    assert any("CUPTI is held by torch.profiler (Kineto)" in w for w in report.warnings)
    fake_torch.stop()
    nsys = "/opt/nvidia/nsight-systems/2025.1/target-linux-x64/libToolsInjection64.so"
    monkeypatch.setenv("CUDA_INJECTION64_PATH", nsys)
    proton.start(str(tmp_path / "b"), backend="cupti", quiet=True)
    report = proton.finalize()
    assert any("CUPTI is held by Nsight Systems (libToolsInjection64.so" in w for w in report.warnings)


def test_cupti_released_later_is_taken_by_the_next_session(cupti_taken, fake_path, tmp_path, monkeypatch):
    monkeypatch.setenv("PROTON_CUPTI_LIB", str(fake_path))
    proton.start(str(tmp_path / "first"), backend="cupti", quiet=True)
    proton.finalize()
    cupti_taken.fake_release_other()
    proton.start(str(tmp_path / "second"), backend="cupti", quiet=True)
    with proton.scope("s"):
        cupti_taken.fake_launch(CBID_cuLaunchKernel, b"k2", 100, 400, 1)
    report = proton.finalize()
    assert report.kernels == 1 and not any("CUPTI is held" in w for w in report.warnings)
    assert cupti_taken.fake_subscribe_other() == 0  # for the fixture's release


def test_torch_profiler_started_inside_a_session_is_named(fake, fake_torch, fake_path, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PROTON_CUPTI_LIB", str(fake_path))
    original = fake_torch._set_is_profiler_enabled
    proton.start(str(tmp_path / "run"), backend="cupti", quiet=True)
    assert h.cupti_tracing()
    fake_torch.start()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "torch.profiler started while Proton's host session" in err[0]
    assert "records no CUDA kernels" in err[0] and fake_torch._is_profiler_enabled is True  # torch's own switch ran
    fake_torch.stop()
    report = proton.finalize()
    assert sum("torch.profiler started while" in w for w in report.warnings) == 1
    assert fake_torch._set_is_profiler_enabled is original  # the watch is gone with the last session
    fake_torch.start()
    assert capsys.readouterr().err == ""  # no session, no warning
    fake_torch.stop()


def test_a_torch_profiler_running_at_finalize_is_noted_without_the_switch(
    fake, fake_torch, fake_path, tmp_path, monkeypatch
):
    monkeypatch.setenv("PROTON_CUPTI_LIB", str(fake_path))
    del fake_torch._set_is_profiler_enabled  # a torch without the switch
    assert cupti_clients.watch_torch_profiler(lambda: None) is None
    proton.start(str(tmp_path / "run"), backend="cupti", quiet=True)
    fake_torch._is_profiler_enabled = True
    report = proton.finalize()
    fake_torch._is_profiler_enabled = False
    assert any("torch.profiler started while" in w for w in report.warnings)


def test_a_failing_warning_never_breaks_torch_profiler(fake_torch):
    def broken():
        raise RuntimeError("boom")

    watch = cupti_clients.watch_torch_profiler(broken)
    try:
        fake_torch.start()
        assert fake_torch._is_profiler_enabled is True
    finally:
        watch.remove()
        fake_torch.stop()
