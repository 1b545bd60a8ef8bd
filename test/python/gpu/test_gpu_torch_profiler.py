"""GPU: Proton with torch.profiler (docs/torch_profiler.md). Each case runs
in its own process (CUPTI's subscription is process-wide):

- an instrumentation session inside torch.profiler.profile(): both
  complete (torch has every kernel, Proton every launch and event), results
  unchanged, and proton.export_with_torch puts every launch under its
  kernel, every warp slice inside it, with small residuals; the same with
  a torch.compile'd step calling a kernel with a scope;
- a host session started inside torch.profiler: one warning naming
  torch.profiler, no exception, a report without kernels, torch's kernels
  intact;
- torch.profiler started inside a host session: one warning naming it,
  Proton's kernels intact;
- a host session after torch.profiler has ended: kernels timed, or the
  warning (never an exception); which one is printed."""

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.gpu

PRELUDE = textwrap.dedent(
    """
    import json, sys
    import torch
    import triton
    import triton.language as tl
    from torch.profiler import ProfilerActivity, profile
    import proton
    import proton.language as pl

    @triton.jit
    def add_kernel(x, y, out, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        with pl.scope("load"):
            a = tl.load(x + offsets, mask=mask)
            b = tl.load(y + offsets, mask=mask)
        with pl.scope("store"):
            tl.store(out + offsets, a + b, mask=mask)

    N, BLOCK, LAUNCHES = 1 << 16, 1024, 5
    GRID = (N // BLOCK,)
    x = torch.randn(N, device="cuda")
    y = torch.randn(N, device="cuda")
    out = torch.empty_like(x)

    def kernels(path, name):
        events = json.load(open(path))["traceEvents"]
        return [e for e in events if e.get("cat", "").lower() == "kernel" and e.get("name", "").startswith(name)]
    """
)


def run(tmp_path, body):
    script = tmp_path / "case.py"
    script.write_text(PRELUDE + textwrap.dedent(body))
    env = dict(os.environ, TRITON_CACHE_DIR=str(tmp_path / "triton"), TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "ind"))
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=500
    )
    assert done.returncode == 0, done.stdout + done.stderr[-6000:]
    return done


def test_instrumentation_session_inside_torch_profiler_merges_into_one_timeline(tmp_path):
    done = run(
        tmp_path,
        """
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            proton.start("run", mode="default:optimizations=clock32", quiet=True)
            for _ in range(LAUNCHES):
                add_kernel[GRID](x, y, out, N, BLOCK=BLOCK)
                z = torch.relu(out)
            torch.cuda.synchronize()
            report = proton.finalize()
        torch.testing.assert_close(out, x + y, rtol=0, atol=0)
        prof.export_chrome_trace("torch_trace.json")
        merged = proton.export_with_torch("torch_trace.json", report.files["pftrace"], "timeline.pftrace")
        json.dump({
            "torch_add": len(kernels("torch_trace.json", "add_kernel")),
            "proton": {"launches": report.launches_kept, "events": report.events, "dropped": report.dropped_events},
            "matched": [m.to_dict() for m in merged.matched],
            "unmatched": [m.to_dict() for m in merged.unmatched],
        }, open("result.json", "w"))
        """,
    )
    result = json.loads((tmp_path / "result.json").read_text())
    assert result["torch_add"] == 5  # torch.profiler lost no kernel
    # Proton lost nothing: 64 CTAs x 4 warps x 2 scopes per launch.
    assert result["proton"] == {"launches": 5, "events": 5 * 64 * 4 * 2, "dropped": 0}
    assert result["unmatched"] == [] and len(result["matched"]) == 5
    for m in result["matched"]:
        span = m["end_ns"] - m["begin_ns"]
        assert 0 < span <= m["torch_dur_ns"]  # the warps' span fits in torch's kernel: the clocks agree
        assert m["start_gap_ns"] >= 0 and m["end_gap_ns"] >= 0
        assert abs(m["residual_ns"]) < 5_000, m  # the same clock relation for every launch, within 5 us
    print(done.stderr[-3000:])
    print("residuals ns:", [m["residual_ns"] for m in result["matched"]])
    _every_warp_slice_inside_its_kernel(tmp_path / "timeline.pftrace", expected_launches=5)


def _every_warp_slice_inside_its_kernel(path, expected_launches):
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "commands"))
    from test_merge_torch import proton_slices, read_merged

    tracks, slices, _, _ = read_merged(path)
    got, under = proton_slices(tracks, slices)
    launches = {k[0] for k in got}
    assert len(launches) == expected_launches and all(not name.endswith("not matched)") for name in launches)
    assert all(stream and stream.startswith("stream") for stream in under.values()), under
    kernel_spans = {}
    for track, name, begin, end, args in slices:
        if tracks[track].name.endswith("(Proton)"):
            kernel_spans[tracks[track].name] = (begin, end)
    for (launch, _, _), rows in got.items():
        lo, hi = kernel_spans[launch]
        assert all(lo <= b <= e <= hi for _, b, e in rows)


def test_torch_compiled_step_inside_torch_profiler(tmp_path):
    run(
        tmp_path,
        """
        def step(a, b):
            c = torch.empty_like(a)
            add_kernel[GRID](a, b, c, N, BLOCK=BLOCK)
            return torch.nn.functional.gelu(c) * 2

        expected = torch.nn.functional.gelu(x + y) * 2
        compiled = torch.compile(step)
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            proton.start("compiled", mode="default:optimizations=clock32", quiet=True)
            results = [compiled(x, y) for _ in range(3)]
            torch.cuda.synchronize()
            report = proton.finalize()
        for r in results:
            torch.testing.assert_close(r, expected)
        prof.export_chrome_trace("torch_trace.json")
        merged = proton.export_with_torch("torch_trace.json", report.files["pftrace"], "timeline.pftrace")
        names = [m.kernel for m in merged.matched]
        json.dump({"torch_add": len(kernels("torch_trace.json", "add_kernel")), "matched": names,
                   "unmatched": [m.to_dict() for m in merged.unmatched]}, open("result.json", "w"))
        """,
    )
    result = json.loads((tmp_path / "result.json").read_text())
    assert result["torch_add"] == 3, result
    assert sum(name.startswith("add_kernel") for name in result["matched"]) == 3, result
    assert result["unmatched"] == [], result


def test_torch_compiled_training_step_merges_into_one_timeline(tmp_path):
    """A torch.compile'd training step (forward, AOTAutograd's backward, SGD)
    and the user's kernel with scopes, run under torch.profiler and an
    instrumentation session together: the losses are bit-identical to the
    same steps run plain before, torch has every add_kernel, every
    instrumented launch lies under its torch kernel within 1 us, and the
    picture of the merged timeline is drawn (saved to PROTON_SAVE_FIXTURES
    where it is set, for docs/torch_profiler.md)."""
    run(
        tmp_path,
        """
        STEPS = 5
        torch.manual_seed(0)
        xb, yb = torch.randn(256, 512, device="cuda"), torch.randn(256, 1, device="cuda")

        def train():
            torch.manual_seed(1)
            model = torch.nn.Sequential(
                torch.nn.Linear(512, 512), torch.nn.GELU(), torch.nn.Linear(512, 1)
            ).cuda()
            compiled = torch.compile(model)
            opt = torch.optim.SGD(model.parameters(), lr=0.01)
            losses = []
            for _ in range(STEPS):
                opt.zero_grad()
                loss = torch.nn.functional.mse_loss(compiled(xb), yb)
                loss.backward()
                opt.step()
                add_kernel[GRID](x, y, out, N, BLOCK=BLOCK)  # the user's own kernel, with scopes
                losses.append(loss.item())
            return losses

        plain = train()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            proton.start("train", mode="default:optimizations=clock32", quiet=True)
            profiled = train()
            torch.cuda.synchronize()
            report = proton.finalize()
        prof.export_chrome_trace("torch_trace.json")
        merged = proton.export_with_torch(
            "torch_trace.json", report.files["pftrace"], "timeline.pftrace", svg="timeline.svg"
        )
        json.dump({
            "plain": plain, "profiled": profiled,
            "torch_add": len(kernels("torch_trace.json", "add_kernel")),
            "proton": {"launches": report.launches_kept, "events": report.events, "errors": report.errors},
            "matched": [m.to_dict() for m in merged.matched],
            "unmatched": [m.to_dict() for m in merged.unmatched],
        }, open("result.json", "w"))
        """,
    )
    result = json.loads((tmp_path / "result.json").read_text())
    saved = os.environ.get("PROTON_SAVE_FIXTURES")
    if saved:
        os.makedirs(saved, exist_ok=True)
        for name in ("timeline.svg", "result.json"):
            shutil.copy(tmp_path / name, os.path.join(saved, f"compiled_training_step_{name}"))
    assert result["profiled"] == result["plain"]  # the losses, bit for bit
    assert result["torch_add"] == 5
    assert result["proton"] == {"launches": 5, "events": 5 * 64 * 4 * 2, "errors": []}
    assert result["unmatched"] == [] and [m["kernel"] for m in result["matched"]] == ["add_kernel"] * 5
    for m in result["matched"]:
        assert m["start_gap_ns"] >= 0 and m["end_gap_ns"] >= 0  # inside torch's kernel
        assert abs(m["residual_ns"]) <= 1_000, m
    assert "add_kernel" in (tmp_path / "timeline.svg").read_text()
    print("residuals ns:", [m["residual_ns"] for m in result["matched"]])


def test_host_session_inside_torch_profiler_warns_and_goes_on(tmp_path):
    done = run(
        tmp_path,
        """
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            proton.start("host", backend="cupti")
            with proton.scope("step", metrics={"tokens": 3}):
                for _ in range(LAUNCHES):
                    add_kernel[GRID](x, y, out, N, BLOCK=BLOCK)
            torch.cuda.synchronize()
            report = proton.finalize()
        prof.export_chrome_trace("torch_trace.json")
        json.dump({"kernels": report.kernels, "warnings": report.warnings,
                   "torch_add": len(kernels("torch_trace.json", "add_kernel"))}, open("result.json", "w"))
        """,
    )
    result = json.loads((tmp_path / "result.json").read_text())
    warned = [line for line in done.stderr.splitlines() if "CUPTI is held by torch.profiler" in line]
    assert len(warned) >= 1 and warned[0].startswith("proton: warning: CUPTI is held by torch.profiler (Kineto)")
    assert result["kernels"] == 0 and any("no kernel timings" in w for w in result["warnings"])
    assert result["torch_add"] == 5  # torch.profiler keeps every kernel


def test_torch_profiler_inside_host_session_is_named(tmp_path):
    done = run(
        tmp_path,
        """
        proton.start("host", backend="cupti")
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(LAUNCHES):
                add_kernel[GRID](x, y, out, N, BLOCK=BLOCK)
            torch.cuda.synchronize()
        report = proton.finalize()
        prof.export_chrome_trace("torch_trace.json")
        json.dump({"kernels": report.kernels, "warnings": report.warnings,
                   "torch_add": len(kernels("torch_trace.json", "add_kernel"))}, open("result.json", "w"))
        """,
    )
    result = json.loads((tmp_path / "result.json").read_text())
    warning = "proton: warning: torch.profiler started while"
    lines = [line for line in done.stderr.splitlines() if line.startswith(warning)]
    assert len(lines) == 1 and "records no CUDA kernels" in lines[0], done.stderr[-3000:]
    assert result["kernels"] == 5 and any("torch.profiler started while" in w for w in result["warnings"])
    print(f"torch.profiler recorded {result['torch_add']} of 5 add_kernel launches inside the host session")


def test_host_session_after_torch_profiler_has_ended(tmp_path):
    run(
        tmp_path,
        """
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            add_kernel[GRID](x, y, out, N, BLOCK=BLOCK)
            torch.cuda.synchronize()
        proton.start("after", backend="cupti")
        for _ in range(LAUNCHES):
            add_kernel[GRID](x, y, out, N, BLOCK=BLOCK)
        torch.cuda.synchronize()
        report = proton.finalize()
        json.dump({"kernels": report.kernels, "warnings": report.warnings}, open("result.json", "w"))
        """,
    )
    result = json.loads((tmp_path / "result.json").read_text())
    held = any("CUPTI is held" in w for w in result["warnings"])
    assert result["kernels"] == 5 or (held and result["kernels"] == 0), result
    print("after torch.profiler ended:", "CUPTI still held by Kineto" if held else "Proton timed every kernel")
