"""On a Hopper GPU: the warp-specialized matmul of
examples/gluon_warp_specialized.py (a 1-warp TMA producer partition, a
4-warp WGMMA consumer as the default partition) under a Proton session.
Checks the result against torch, that each scope is recorded by exactly the
warps of its partition (the producer's being the warp Triton assigned, read
from the kernel's metadata), as many times as the code runs, that the
producer issues each K step's loads before the consumer's MMA on them, and
that the trace names each warp's track with its partition.

    python -m pytest test/python/test_gpu_warp_specialize.py -v -s
"""

import json
import sys

import numpy as np
import pytest
import suite_paths

torch = pytest.importorskip("torch")

import proton  # noqa: E402
from proton.compiling.warp_specialize import scope_warps, warp_labels  # noqa: E402

sys.path.insert(0, str(suite_paths.EXAMPLES))
import gluon_warp_specialized as example  # noqa: E402
from kept_launches import decode_kept  # noqa: E402

pytestmark = pytest.mark.gpu

M = N = 512
K = 1024
K_STEPS = K // example.BLOCK_K  # 16
CTAS = (M // example.BLOCK_M) * (N // example.BLOCK_N)  # 16
PER_STEP = {"wait_empty", "tma_load", "wait_ready", "wgmma"}  # scopes inside the K loops


@pytest.fixture(scope="module")
def profiled(tmp_path_factory):
    if torch.cuda.get_device_capability()[0] != 9:
        pytest.skip(f"WGMMA and TMA need a Hopper GPU (sm_90), not {torch.cuda.get_device_name()}")
    torch.manual_seed(0)
    a = torch.randn((M, K), device="cuda", dtype=torch.float16)
    b = torch.randn((K, N), device="cuda", dtype=torch.float16)
    plain, _, _ = example.run_ws_matmul(M, N, K, a=a, b=b)
    proton.start(str(tmp_path_factory.mktemp("ws") / "ws_matmul"), backend="instrumentation", quiet=True)
    c, kernel, grid = example.run_ws_matmul(M, N, K, a=a, b=b)
    launches = [ev for ev, _ in decode_kept()]
    report = proton.finalize()
    return {
        "a": a,
        "b": b,
        "plain": plain,
        "c": c,
        "meta": json.loads(kernel.metadata.proton),
        "grid": grid,
        "launches": launches,
        "report": report,
    }


def test_results_match_torch_and_the_plain_kernel(profiled):
    ref = profiled["a"].float() @ profiled["b"].float()
    torch.testing.assert_close(profiled["plain"].float(), ref, atol=0.25, rtol=1e-2)
    assert torch.equal(profiled["c"], profiled["plain"]), "the profiled kernel computed another C than the plain one"
    report = profiled["report"]
    assert report.errors == [] and report.launches_kept == 1
    assert report.dropped_events == 0 and report.unmatched_records == 0


def test_each_scope_is_recorded_by_its_partitions_warps(profiled):
    ws = profiled["meta"]["warp_specialize"]
    expected = scope_warps(ws)
    (ev,) = profiled["launches"]
    assert ev.num_ctas == CTAS and sorted(set(ev.warp_ids.tolist())) == list(range(ws["total_warps"]))
    for sid, name in enumerate(ev.scope_names):
        mine = ev.scope == sid
        warps = sorted(set(ev.warp[mine].tolist()))
        assert warps == expected[name], f"scope {name!r} was recorded by warps {warps}, expected {expected[name]}"
        times = K_STEPS if name in PER_STEP else 1
        want = len(expected[name]) * CTAS * times
        assert mine.sum() == want, (
            f"scope {name!r}: {mine.sum()} events, expected {len(expected[name])} warps x {CTAS} CTAs x {times}"
        )
        per_warp = np.bincount(ev.row[mine], minlength=ev.warp_ids.size)
        assert set(per_warp[np.isin(ev.warp_ids, expected[name])].tolist()) == {times}, (
            f"scope {name!r}: some warp recorded it other than {times} times"
        )


def test_producer_warp_is_the_one_triton_assigned(profiled):
    ws = profiled["meta"]["warp_specialize"]
    (op,) = ws["ops"]
    (producer,) = [p for p in op["partitions"] if not p["padding"]]
    assigned = list(range(producer["start"], producer["start"] + producer["num_warps"]))
    (ev,) = profiled["launches"]
    for name in ("producer", "wait_empty", "tma_load"):
        sid = ev.scope_names.index(name)
        recorded = sorted(set(ev.warp[ev.scope == sid].tolist()))
        assert recorded == assigned, (
            f"the producer's scope {name!r} ran on warps {recorded}; Triton's "
            f"warpGroupStartIds put the producer on {assigned}"
        )
    padding = [w for p in op["partitions"] if p["padding"] for w in range(p["start"], p["start"] + p["num_warps"])]
    assert not np.isin(ev.warp, padding).any(), f"padding warps {padding} recorded events"


def test_producer_loads_come_before_the_consumers_mma(profiled):
    # Warps of a CTA share their SM's cycle counter: K step i's WGMMA (any
    # consumer warp) cannot start before the producer issued its loads.
    (ev,) = profiled["launches"]
    load, mma = ev.scope_names.index("tma_load"), ev.scope_names.index("wgmma")
    for cta in range(ev.num_ctas):
        here = ev.cta == cta
        issued = np.sort(ev.start_cycles[here & (ev.scope == load)])
        consumed = ev.start_cycles[here & (ev.scope == mma)]
        consumer_rows = ev.row[here & (ev.scope == mma)]
        for row in np.unique(consumer_rows):
            starts = np.sort(consumed[consumer_rows == row])
            assert (starts > issued).all(), (
                f"CTA {cta} warp {ev.warp_ids[row]}: a WGMMA started before the producer issued that K step's loads"
            )


def test_trace_tracks_name_the_partitions(profiled):
    labels = warp_labels(profiled["meta"]["warp_specialize"])
    trace = json.load(open(profiled["report"].files["chrome_trace"]))["traceEvents"]
    cta0 = [e for e in trace if e["ph"] == "X" and e["pid"].endswith(" CTA0")]
    threads = {e["tid"] for e in cta0}
    # Padding warps run no partition and record nothing: no events, no track.
    assert threads == {f"warp {w} ({labels[w]})" for w in range(8) if labels[w] != "padding"}
    producer = next(f"warp {w} ({label})" for w, label in labels.items() if label == "worker 0")
    names = {e["name"] for e in cta0 if e["tid"] == producer}
    assert names == {"producer", "wait_empty", "tma_load"}
    print("CTA 0 tracks:", ", ".join(sorted(threads)))
