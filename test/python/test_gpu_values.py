"""On a GPU: a loop records its iteration index as the value "iter" and
the result's first element as "acc0"; the decoded values are 0..n-1 in
order in every warp, and the final f32 equals the sum computed.

Run: pytest test/python/test_gpu_values.py -m gpu -q"""

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import proton  # noqa: E402
from proton.instrument import decode, session as runtime  # noqa: E402
from proton.instrument import stage_hook as hook_mod  # noqa: E402

from values_kernels import sum_with_values  # noqa: E402

pytestmark = pytest.mark.gpu

CTAS, WARPS, TILES, BLOCK = 4, 4, 7, 128


def test_loop_index_values_come_back(tmp_path):
    x = torch.randn(TILES * BLOCK, device="cuda")
    out = torch.empty(CTAS * BLOCK, device="cuda")
    proton.start(str(tmp_path / "values"), mode="default", quiet=True)
    sum_with_values[(CTAS,)](x, out, TILES, BLOCK=BLOCK, num_warps=WARPS)
    torch.cuda.synchronize()
    (kept,) = runtime._session.kept
    data = kept.buffer.cpu().numpy()
    meta = hook_mod.metadata_for_buffer(data, kept.kernel)
    ev = decode.decode(data, meta, CTAS, kernel=kept.kernel)
    report = proton.finalize()
    assert report.errors == [], report.errors
    expected = x.view(TILES, BLOCK).sum(0)
    assert torch.allclose(out.view(CTAS, BLOCK), expected.expand(CTAS, BLOCK), atol=1e-4), "results changed"

    a = ev.asynchronous
    ids = {s["name"]: s["id"] for s in meta["scopes"]}
    assert a.unpaired_values == 0, f"{a.unpaired_values} value halves lost; warnings: {ev.warnings}"
    for row in range(CTAS * WARPS):
        mine = (a.value_row == row) & (a.value_id == ids["iter"])
        order = np.argsort(a.value_ns[mine], kind="stable")
        got = a.value[mine][order].tolist()
        assert got == list(range(TILES)), f"warp row {row}: iteration values {got}, expected 0..{TILES - 1}"
        acc0 = a.value[(a.value_row == row) & (a.value_id == ids["acc0"])]
        assert acc0.size == 1 and acc0[0] == pytest.approx(float(out[0]), rel=1e-6), (acc0, float(out[0]))

    trace = json.load(open(report.files["chrome_trace"]))["traceEvents"]
    counters = [t for t in trace if t["ph"] == "C" and t["name"].startswith("iter [warp")]
    assert len(counters) == CTAS * WARPS * TILES, f"{len(counters)} counter points"
