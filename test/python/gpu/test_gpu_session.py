"""On a GPU, through the user API (proton.start ... proton.finalize): event
counts, nesting, positive durations, bit-identical results, a spin kernel
measured within 2%, overflow reported, time_shift calibrated, outputs
written. Also saves small real buffers as fixtures for the CPU tests when
PROTON_SAVE_FIXTURES names a directory."""

import json
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import proton  # noqa: E402
import proton.language as pl  # noqa: E402
from proton.contract import kernel_metadata  # noqa: E402

from kernels import matmul, matmul_load_scope, vector_add  # noqa: E402

pytestmark = pytest.mark.gpu

SPIN_CYCLES = 200_000
SPIN_NS = 100_000


@triton.jit
def _clock64():
    return tl.inline_asm_elementwise("mov.u64 $0, %clock64;", "=l", [], dtype=tl.int64, is_pure=False, pack=1)


@triton.jit
def _globaltimer():
    return tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64, is_pure=False, pack=1)


@triton.jit
def spin(out, CYCLES: tl.constexpr, NS: tl.constexpr):
    with pl.scope("spin_cycles"):
        t0 = _clock64()
        t = t0
        while t - t0 < CYCLES:
            t = _clock64()
    with pl.scope("spin_ns"):
        g0 = _globaltimer()
        g = g0
        while g - g0 < NS:
            g = _globaltimer()
    tl.store(out + tl.program_id(0), (t - t0 + g - g0).to(tl.int32))


def run_vector_add(n=1 << 20, block=1024):
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    vector_add[(triton.cdiv(n, block),)](x, y, out, n, BLOCK=block, num_warps=4)
    return out, x + y


def test_vector_add_events(tmp_path):
    torch.manual_seed(0)
    plain, _ = run_vector_add()
    name = str(tmp_path / "vadd")
    proton.start(name, mode="default", quiet=True)
    torch.manual_seed(0)
    profiled, expected = run_vector_add()
    report = proton.finalize()
    torch.cuda.synchronize()
    # bit-identical: same inputs, with and without instrumentation
    assert torch.equal(profiled, plain) and torch.equal(profiled, expected)
    ctas, warps, scopes = 1024, 4, 3
    assert report.launches_kept == 1 and report.errors == []
    assert report.events == ctas * warps * scopes
    assert report.dropped_events == 0 and report.unmatched_records == 0
    for kind in ("chrome_trace", "pftrace", "tree"):
        assert os.path.getsize(report.files[kind]) > 0
    events = [e for e in json.load(open(report.files["chrome_trace"]))["traceEvents"] if e["ph"] == "X"]
    assert len(events) == ctas * warps * scopes
    assert all(e["dur"] > 0 for e in events)
    # nesting: load and store inside kernel, load before store, per warp
    by_warp = {}
    for e in events:
        by_warp.setdefault((e["pid"], e["tid"]), {})[e["name"]] = (e["ts"], e["ts"] + e["dur"])
    for spans in by_warp.values():
        k, ld, st = spans["kernel"], spans["load"], spans["store"]
        assert k[0] <= ld[0] <= ld[1] <= st[0] <= st[1] <= k[1] + 1e-3
    root, _devices = json.load(open(report.files["tree"]))
    assert root["frame"]["name"] == "ROOT" and root["children"][0]["frame"]["name"] == "vector_add"


def test_spin_kernel_is_measured_within_two_percent(tmp_path):
    out = torch.zeros(4, dtype=torch.int32, device="cuda")
    proton.start(str(tmp_path / "spin"), mode="default", outputs=["tree"], quiet=True)
    spin[(4,)](out, CYCLES=SPIN_CYCLES, NS=SPIN_NS, num_warps=4)
    launches = _decoded_launches()
    report = proton.finalize()
    assert report.errors == []
    (ev,) = launches
    cyc = ev.duration_cycles[ev.scope == 0]
    ns = (ev.end_ns - ev.start_ns)[ev.scope == 1]
    assert cyc.size == ns.size == 16
    assert np.abs(cyc / SPIN_CYCLES - 1).max() < 0.02, cyc
    assert np.abs(ns / SPIN_NS - 1).max() < 0.02, ns
    print(
        f"spin: cycles {cyc.mean():.0f} for {SPIN_CYCLES}, ns {ns.mean():.0f} for {SPIN_NS}, "
        f"clock {ev.clock_ghz:.3f} GHz"
    )


def test_overflow_is_reported(tmp_path):
    a = torch.randn(256, 512, device="cuda", dtype=torch.float16)
    b = torch.randn(512, 256, device="cuda", dtype=torch.float16)
    c = torch.empty(256, 256, device="cuda", dtype=torch.float16)
    # 16 iterations x 2 records + 2 per warp, into 8-record rings
    proton.start(str(tmp_path / "overflow"), mode="default:buffer_size=512:optimizations=clock32", quiet=True)
    matmul[(2, 2)](a, b, c, 256, 256, 512, BM=128, BN=128, BK=32, num_warps=4)
    report = proton.finalize()
    info = report.per_kernel["matmul"]
    assert info["dropped"] == 4 * 4 * (34 - 16) and info["lossy_warps"] == 16
    assert "raise buffer_size" in report.summary()
    torch.testing.assert_close(c, (a.float() @ b.float()).half(), rtol=1e-2, atol=1e-1)


def test_pipelined_scope_is_reported(tmp_path):
    a = torch.randn(256, 512, device="cuda", dtype=torch.float16)
    b = torch.randn(512, 256, device="cuda", dtype=torch.float16)
    c = torch.empty(256, 256, device="cuda", dtype=torch.float16)
    proton.start(str(tmp_path / "pipelined"), mode="default", outputs=["tree"], quiet=True)
    with pytest.warns(proton.PipeliningWarning, match="scope 'load'"):
        matmul_load_scope[(2, 2)](a, b, c, 256, 256, 512, BM=128, BN=128, BK=64, num_warps=4, num_stages=3)
    report = proton.finalize()
    assert report.errors == [] and report.events == 4 * 4 * 8 * 2
    assert [w for w in report.warnings if "scope 'load'" in w and "earlier stage" in w]
    torch.testing.assert_close(c, (a.float() @ b.float()).half(), rtol=1e-2, atol=1e-1)


def test_time_shift_is_calibrated(tmp_path, monkeypatch):
    monkeypatch.setenv("PROTON_CACHE_DIR", str(tmp_path / "cache"))
    proton.start(str(tmp_path / "shift"), mode="default:optimizations=time_shift", outputs=["tree"], quiet=True)
    run_vector_add()
    report = proton.finalize()
    assert 1 < report.record_cost_cycles < 200
    cache = json.load(open(tmp_path / "cache" / "calibration.json"))
    assert list(cache.values()) == [report.record_cost_cycles]
    print(f"time_shift: {report.record_cost_cycles} cycles per record")


def test_launch_cap_and_deactivate(tmp_path):
    proton.start(
        str(tmp_path / "cap"), backend="instrumentation", max_launches_per_kernel=2, outputs=["tree"], quiet=True
    )
    for _ in range(5):
        run_vector_add(n=4096)
    proton.deactivate()
    run_vector_add(n=4096)  # a plain build: not instrumented, not counted
    proton.activate()
    kept_before_finalize = proton.recording.instrumentation_session._session.kept
    report = proton.finalize()
    assert report.launches_kept == 2 and report.launches_skipped == 3
    assert report.per_kernel["vector_add"]["skipped"] == 3
    assert sorted(launch.index for launch in kept_before_finalize) == [3, 4]  # the last two


def _decoded_launches():
    """Decodes the active session's kept launches without finalizing."""
    from proton.recording import decode, instrumentation_session as runtime

    session = runtime._session
    torch.cuda.synchronize()
    out = []
    for kept in session.kept:
        data = kept.buffer.read()
        meta = kernel_metadata.metadata_for_buffer(data, kept.kernel)
        out.append(decode.decode(data, meta, data.nbytes // meta.layout.bytes_per_cta, kernel=kept.kernel))
    return out


@pytest.mark.parametrize("mode", ["default", "default:optimizations=clock32"])
def test_save_fixtures(tmp_path, mode):
    """Small real buffers (8 CTAs) for the CPU decoder tests."""
    directory = os.environ.get("PROTON_SAVE_FIXTURES")
    if not directory:
        pytest.skip("PROTON_SAVE_FIXTURES not set")
    proton.start(str(tmp_path / "fixture"), backend="instrumentation", mode=mode, outputs=[], quiet=True)
    run_vector_add(n=8 * 1024)
    session = proton.recording.instrumentation_session._session
    torch.cuda.synchronize()
    (kept,) = session.kept
    data = kept.buffer.read()
    meta = kernel_metadata.metadata_for_buffer(data, kept.kernel)
    proton.finalize()
    name = "vector_add_" + ("clock32" if "clock32" in mode else "clock64")
    os.makedirs(directory, exist_ok=True)
    np.save(os.path.join(directory, name + ".npy"), data)
    with open(os.path.join(directory, name + ".json"), "w") as f:
        json.dump({"num_ctas": 8, "gpu": torch.cuda.get_device_name(), "metadata": meta.to_dict()}, f, indent=1)
