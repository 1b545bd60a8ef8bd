"""Warp-specialized kernels on the CPU: the partition layout read from the
TTGIR around Triton's allocate-warp-groups pass, the example kernel
(examples/gluon_warp_specialized.py) compiled for sm_90 with the installed
Triton (CI runs this file with 3.6, 3.7, 3.8 and 3.9), and the trace tracks
named by partition."""

import dataclasses
import json
import sys
import warnings

import numpy as np
import pytest

from proton.recording import decode
from proton.contract.compiler_exports import marker_text
from proton.compiling.stage_hook import StageHook, triton_version
from proton.compiling.compiler import PipelineOptions
from proton.compiling.warp_specialize import LayoutError, layout_from_text, partition_layout, scope_warps, warp_labels
from proton.writers import chrome_trace, perfetto_trace

from test_decode import make
from test_perfetto_trace import read as read_pftrace
import suite_paths

sys.path.insert(0, str(suite_paths.EXAMPLES))
import gluon_warp_specialized as example  # noqa: E402


def marker(kind, name):
    return f'    %m = tt.elementwise_inline_asm "{marker_text(kind, name)}" {{pure = false}} %c0 : i32 -> i32\n'


def ws_op(partitions, start_ids=None, default_scope="d", scopes=()):
    """A ttg.warp_specialize op as Triton prints it; `partitions` are warp
    counts, `scopes` a scope name (or None) per partition."""
    attrs = f"requestedRegisters = array<i32: {', '.join('24' for _ in partitions)}>"
    if start_ids is not None:
        attrs += f", warpGroupStartIds = array<i32: {', '.join(map(str, start_ids))}>"
    text = f"    ttg.warp_specialize(%a) attributes {{{attrs}}}\n    default {{\n"
    text += marker("start", default_scope) + marker("end", default_scope) + "      ttg.warp_yield\n    }\n"
    for i, warps in enumerate(partitions):
        name = scopes[i] if i < len(scopes) else None
        text += f"    partition{i}(%arg1: !tt.ptr<f32> loc(\"a\"(#loc1))) num_warps({warps}) {{\n"
        if name:
            text += marker("start", name) + marker("end", name)
        text += "      ttg.warp_return\n"
        text += "    } : (!tt.ptr<f32>) -> () loc(#loc1)\n" if i == len(partitions) - 1 else "    }\n"
    return text


def kernel(*ops, outside="k"):
    body = marker("start", outside) + "".join(ops) + marker("end", outside)
    return (
        'module attributes {"ttg.num-warps" = 4 : i32} {\n  tt.func public @k(%a: !tt.ptr<f32>) {\n'
        + body
        + "    tt.return\n  }\n}\n"
    )


def test_layout_of_two_ops_with_padding():
    # Op 1: workers of 1 and 2 warps, placed (by Triton) at 7 and 4, a
    # padding partition of 1 warp at 6. Op 2: one 4-warp worker at 4.
    before = kernel(ws_op([1, 2], scopes=["load", "store"]), ws_op([4], default_scope="d2", scopes=["mma"]))
    after = kernel(
        ws_op([1, 2, 1], [7, 4, 6], scopes=["load", "store"]), ws_op([4], [4], default_scope="d2", scopes=["mma"])
    )
    layout = layout_from_text(before, after, total_warps=8, default_warps=4)
    first, second = layout["ops"]
    assert [(p["start"], p["num_warps"], p["padding"]) for p in first["partitions"]] == [
        (7, 1, False),
        (4, 2, False),
        (6, 1, True),
    ]
    assert first["partitions"][0]["scopes"] == ["load"] and first["default_scopes"] == ["d"]
    assert second["partitions"][0]["scopes"] == ["mma"] and layout["outside_scopes"] == ["k"]
    assert warp_labels(layout) == {
        0: "default",
        1: "default",
        2: "default",
        3: "default",
        4: "worker 1 | worker 0",
        5: "worker 1 | worker 0",
        6: "worker 0",
        7: "worker 0",
    }
    assert scope_warps(layout) == {
        "k": [0, 1, 2, 3],
        "d": [0, 1, 2, 3],
        "d2": [0, 1, 2, 3],
        "load": [7],
        "store": [4, 5],
        "mma": [4, 5, 6, 7],
    }


def test_padding_only_warps_are_labelled_padding():
    before = kernel(ws_op([1], scopes=["w"]))
    after = kernel(ws_op([1, 2, 1], [6, 4, 7], scopes=["w"]))
    labels = warp_labels(layout_from_text(before, after, 8, 4))
    assert [labels[w] for w in range(4, 8)] == ["padding", "padding", "worker 0", "padding"]
    assert warp_labels(None) == {}


@pytest.mark.parametrize(
    "after, message",
    [
        (kernel(ws_op([1], None, scopes=["w"])), "warpGroupStartIds None do not match its 1 partitions"),
        (kernel(ws_op([2], [4], scopes=["w"])), r"partitions of \[2\] warps, expected \[1\] first"),
        (kernel(ws_op([1], [2], scopes=["w"])), r"a partition on warps 2..2, outside the workers' warps 4..7"),
        (kernel(ws_op([1], [4]), ws_op([1], [5])), "1 ttg.warp_specialize ops before Triton's pass but 2 after"),
    ],
)
def test_inconsistent_layouts_are_named(after, message):
    with pytest.raises(LayoutError, match=message):
        layout_from_text(kernel(ws_op([1], scopes=["w"])), after, 8, 4)


def test_a_failing_pass_warns_and_keeps_the_compile():
    class Broken:
        def load_dialects(self, context):
            raise RuntimeError("no dialects here")

    with pytest.warns(UserWarning, match="could not read the warp-specialization layout.*no dialects here"):
        assert partition_layout(kernel(ws_op([1])), Broken(), None, 8, 4) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert partition_layout(kernel(), Broken(), None, 4, 4) is None  # no op: nothing to do


@pytest.fixture(scope="module")
def compiled():
    with StageHook(PipelineOptions(), label="ws-example-test"):
        return example.compile_for_sm90()


def test_example_compiles_with_its_partition_layout(compiled):
    meta = json.loads(compiled.metadata.proton)
    ws = meta["warp_specialize"]
    # 4 consumer warps + 1 producer warp, rounded up to whole warp groups.
    assert compiled.metadata.num_warps == ws["total_warps"] == 8 and ws["default_warps"] == example.NUM_WARPS
    assert meta["layout"]["warps"] == list(range(8)), "every warp records (warp granularity)"
    (op,) = ws["ops"]
    producer, *padding = op["partitions"]
    assert (producer["num_warps"], producer["padding"]) == (example.PRODUCER_WARPS, False)
    assert producer["scopes"] == ["producer", "tma_load", "wait_empty"]
    assert op["default_scopes"] == ["consumer", "epilogue", "wait_ready", "wgmma"]
    assert all(p["padding"] and not p["scopes"] for p in padding)
    warps = sorted(w for p in op["partitions"] for w in range(p["start"], p["start"] + p["num_warps"]))
    assert warps == [4, 5, 6, 7], "the workers' partitions tile the warps after the default ones"
    if (3, 6) <= triton_version() <= (3, 9):
        # What Triton 3.6-3.9 assign: the producer on warp 6, padding of 2 and 1 warps on 4-5 and 7.
        assert [(p["start"], p["num_warps"]) for p in op["partitions"]] == [(6, 1), (4, 2), (7, 1)]
    recorded_by = scope_warps(ws)
    for scope in ("producer", "wait_empty", "tma_load"):
        assert recorded_by[scope] == [producer["start"]]
    for scope in ("consumer", "wait_ready", "wgmma", "epilogue"):
        assert recorded_by[scope] == [0, 1, 2, 3]


def test_example_kernel_reaches_ptx(compiled):
    meta = json.loads(compiled.metadata.proton)
    assert [s["name"] for s in meta["scopes"]] == list(example.SCOPES)
    parents = {s["name"]: meta["scopes"][s["parent"]]["name"] if s["parent"] >= 0 else None for s in meta["scopes"]}
    assert parents == {
        "producer": None,
        "wait_empty": "producer",
        "tma_load": "producer",
        "consumer": None,
        "wait_ready": "consumer",
        "wgmma": "consumer",
        "epilogue": "consumer",
    }
    ptx = compiled.asm["ptx"]
    assert ptx.count("wgmma.mma_async") == 8 and "setmaxnreg" in ptx
    # A clock read per record site plus the entry and exit stamps.
    assert sum("%clock" in line for line in ptx.splitlines()) == 2 * len(example.SCOPES) + 2
    assert len(compiled.asm["cubin"]) > 0


def test_corpus_kernel_gets_its_layout_too():
    from corpus import BY_NAME, compile_case

    with StageHook(PipelineOptions(), label="ws-corpus-test"):
        kernel_ = compile_case(BY_NAME["gluon_warp_specialize"], "cuda:90")
    ws = json.loads(kernel_.metadata.proton)["warp_specialize"]
    assert scope_warps(ws)["default_partition"] == [0, 1, 2, 3]
    assert len(scope_warps(ws)["worker_partition"]) == 1 and scope_warps(ws)["worker_partition"][0] >= 4


def test_plain_kernels_have_no_layout():
    from corpus import BY_NAME, compile_case

    with StageHook(PipelineOptions(), label="ws-plain-test"):
        kernel_ = compile_case(BY_NAME["gluon_elementwise"], "cuda:90")
    assert "warp_specialize" not in json.loads(kernel_.metadata.proton)


def test_trace_tracks_are_named_by_partition(tmp_path):
    buf, meta = make(ctas=2, segments=8)
    before = kernel(ws_op([1], scopes=["w"]))
    ws = layout_from_text(before, kernel(ws_op([1, 2, 1], [6, 4, 7], scopes=["w"])), 8, 4)
    meta = dataclasses.replace(meta, warp_specialize=ws)
    ev = decode.decode(buf, meta, 2)
    assert ev.row_name(6) == "warp 6 (worker 0)" and ev.row_name(0) == "warp 0 (default)"

    chrome_trace.write(str(tmp_path / "t.chrome_trace"), [ev], chrome_trace.session_origin([ev]))
    events = json.load(open(tmp_path / "t.chrome_trace"))["traceEvents"]
    threads = {(e["pid"].rsplit(" CTA", 1)[1], e["tid"]) for e in events}
    assert ("1", "warp 6 (worker 0)") in threads and ("0", "warp 3 (default)") in threads
    assert ("0", "warp 4 (padding)") in threads and len(threads) == 16

    perfetto_trace.write(str(tmp_path / "t.pftrace"), [ev])
    tracks, slices = read_pftrace(tmp_path / "t.pftrace")
    names = sorted({t.name for t in tracks.values() if t.name.startswith("warp ")})
    assert names == [
        "warp 0 (default)",
        "warp 1 (default)",
        "warp 2 (default)",
        "warp 3 (default)",
        "warp 4 (padding)",
        "warp 5 (padding)",
        "warp 6 (worker 0)",
        "warp 7 (padding)",
    ]
    # Tracks keep their warp-id order: producer and consumer side by side.
    rank = {t.name: t.sibling_order_rank for t in tracks.values() if t.name.startswith("warp ")}
    assert rank["warp 6 (worker 0)"] == 6 and len(slices) == ev.num_events


def test_kernels_without_partitions_keep_plain_track_names(tmp_path):
    buf, meta = make(ctas=1, segments=4)
    ev = decode.decode(buf, meta, 1)
    assert ev.warp_labels == {} and ev.row_name(2) == "warp 2"
    chrome_trace.write(str(tmp_path / "t.chrome_trace"), [ev], 0)
    names = {e["tid"] for e in json.load(open(tmp_path / "t.chrome_trace"))["traceEvents"]}
    assert names == {"warp 0", "warp 1", "warp 2", "warp 3"}
    assert np.array_equal(ev.warp_ids, np.arange(4))
