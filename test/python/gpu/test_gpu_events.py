"""On a GPU: an asynchronous event that starts in iteration i and ends in
iteration i + 1 (through a function call), and a mark per iteration, come
back as recorded: n_tiles + 1 copies and n_tiles marks per warp, in order,
and drawn in the Chrome trace as Triton's Proton draws an event that stays
in its warp: an async slice on the warp, no flow.

Run: pytest test/python/test_gpu_events.py -m gpu -q"""

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import proton  # noqa: E402

from kept_launches import decode_kept  # noqa: E402
from events_kernels import pipelined_sum  # noqa: E402

pytestmark = pytest.mark.gpu

CTAS, WARPS, TILES, BLOCK = 8, 4, 6, 128


def test_event_across_iterations_and_marks(tmp_path):
    x = torch.randn(TILES * BLOCK, device="cuda")
    out = torch.empty(CTAS * BLOCK, device="cuda")
    proton.start(str(tmp_path / "events"), mode="default", quiet=True)
    pipelined_sum[(CTAS,)](x, out, TILES, BLOCK=BLOCK, num_warps=WARPS)
    ((ev, meta),) = decode_kept()
    report = proton.finalize()
    assert report.errors == [], report.errors
    expected = x.view(TILES, BLOCK).sum(0)
    assert torch.allclose(out.view(CTAS, BLOCK), expected.expand(CTAS, BLOCK), atol=1e-4), "results changed"

    a = ev.asynchronous
    kinds = {row.name: row.kind for row in meta.rows}
    assert kinds == {"copy": "event", "tile": "mark"}, kinds
    assert a.unpaired == 0, f"{a.unpaired} unpaired event records; warnings: {ev.warnings}"
    assert a.num_events == CTAS * WARPS * (TILES + 1), f"{a.num_events} copies, expected {CTAS * WARPS * (TILES + 1)}"
    assert (a.start_row == a.end_row).all(), "each warp starts and ends its own copies: pairs stay in the warp"
    assert (a.end_ns >= a.start_ns).all(), "an event ends before it starts"
    assert a.num_marks == CTAS * WARPS * TILES, f"{a.num_marks} marks, expected {CTAS * WARPS * TILES}"
    # Per warp, the copies follow each other and each mark lies between a
    # copy's end and the next copy's start.
    for row in range(CTAS * WARPS):
        s = np.sort(a.start_ns[a.start_row == row])
        e = np.sort(a.end_ns[a.end_row == row])
        m = np.sort(a.mark_ns[a.mark_row == row])
        assert (e[:-1] <= s[1:] + 1e-3).all(), f"warp row {row}: copy i+1 starts before copy i ends"
        assert ((e[:-1] <= m + 1e-3) & (m <= s[1:] + 1e-3)).all(), f"warp row {row}: marks out of place"

    trace = json.load(open(report.files["chrome_trace"]))["traceEvents"]
    copies = [t for t in trace if t["name"] == "copy"]
    assert len(copies) == a.num_events, "one slice per copy"
    assert all(t["ph"] == "X" and t["cat"] == "async" and t["dur"] > 0 for t in copies)
    assert not [t for t in trace if "bind_id" in t or t["ph"] in ("s", "f")], "copies stay in their warps: no flows"
    assert all(t["tid"].startswith("warp ") for t in copies)
    assert sum(t["ph"] == "i" and t["name"] == "tile" for t in trace) == a.num_marks
