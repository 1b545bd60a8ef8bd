"""MMA mode on a Hopper GPU (H100/H200), through the user API: a fp16 matmul
with a K loop and no markers, profiled with mode="mma", records mma.issue
(the wgmma fence / mma_async / commit run) and mma.wait (wgmma.wait_group)
on every warp of every CTA, once per K iteration (the pipelined loop waits
once more after the loop), with positive durations and unchanged results.
A longer loop overflows the 1 KiB ring per warp, which keeps the newest
records.

Run: python -m pytest test/python/test_gpu_mma.py -q -p no:cacheprovider"""

import json
import re
from collections import Counter

import pytest

torch = pytest.importorskip("torch")

import proton  # noqa: E402

from mma_kernels import matmul_plain  # noqa: E402

pytestmark = pytest.mark.gpu

BM, BN, BK = 128, 128, 64
M = N = 256
WARPS = 4  # one warp group: Triton issues wgmma with 4 warps


def hopper_or_skip():
    if torch.version.hip or torch.cuda.get_device_capability()[0] != 9:
        pytest.skip(f"needs a Hopper GPU (sm_90) for wgmma, got {torch.cuda.get_device_name()}")


def run_matmul(k: int):
    torch.manual_seed(0)
    a = torch.randn(M, k, device="cuda", dtype=torch.float16)
    b = torch.randn(k, N, device="cuda", dtype=torch.float16)
    c = torch.empty(M, N, device="cuda", dtype=torch.float16)
    matmul_plain[(M // BM, N // BN)](a, b, c, M, N, k, BM=BM, BN=BN, BK=BK, num_warps=WARPS)
    torch.cuda.synchronize()
    return c, a, b


def profile(tmp_path, k: int):
    plain, _, _ = run_matmul(k)
    proton.start(str(tmp_path / f"mma_{k}"), backend="instrumentation", mode="mma", quiet=True)
    profiled, a, b = run_matmul(k)
    report = proton.finalize()
    assert torch.equal(profiled, plain), "instrumentation changed the matmul's result"
    torch.testing.assert_close(profiled, (a.float() @ b.float()).half(), rtol=2e-2, atol=2e-1)
    slices = [e for e in json.load(open(report.files["chrome_trace"]))["traceEvents"] if e["ph"] == "X"]
    return report, slices


def per_warp(slices) -> dict:
    counts = {}
    for e in slices:
        counts.setdefault((e["pid"], e["tid"]), Counter())[e["name"]] += 1
    return counts


def test_every_warp_records_issue_and_wait_per_k_iteration(tmp_path):
    hopper_or_skip()
    k = 16 * BK  # 16 iterations: 4 records each (+2 for the wait after the loop) fit the ring
    report, slices = profile(tmp_path, k)
    assert report.errors == [] and report.unmatched_records == 0 and report.dropped_events == 0, report
    assert {e["name"] for e in slices} == {"mma.issue", "mma.wait"}, {e["name"] for e in slices}
    assert all(e["dur"] > 0 for e in slices), "an MMA slice has no duration"
    counts = per_warp(slices)
    ctas = (M // BM) * (N // BN)
    assert len(counts) == ctas * WARPS, f"expected every warp of {ctas} CTAs, got {sorted(counts)}"
    iterations = k // BK
    for warp, names in counts.items():
        assert names["mma.issue"] == iterations, f"warp {warp}: {names}"
        assert iterations <= names["mma.wait"] <= iterations + 1, f"warp {warp}: {names}"
    # Per warp, issue and wait alternate in time: each wait follows an issue.
    for warp in counts:
        mine = sorted((e["ts"], e["name"]) for e in slices if (e["pid"], e["tid"]) == warp)
        assert mine[0][1] == "mma.issue" and mine[-1][1] == "mma.wait", mine[:3]


def test_a_loop_longer_than_the_ring_keeps_the_newest_records(tmp_path):
    hopper_or_skip()
    k = 256 * BK  # 256 iterations: 1,024+ records, more than a ring per warp holds (at most 512)
    report, slices = profile(tmp_path, k)
    assert report.dropped_events > 0, "the ring should have overflowed"
    ring = int(re.search(r"\((\d+) records\)", report.buffers["matmul_plain"]).group(1))
    for warp, names in per_warp(slices).items():
        kept = names["mma.issue"] + names["mma.wait"]
        assert ring // 2 - 1 <= kept <= ring // 2, f"warp {warp}: {ring} records are {ring // 2} slices, got {names}"
        assert ring // 4 - 1 <= names["mma.issue"] <= ring // 4, f"warp {warp}: {names}"
