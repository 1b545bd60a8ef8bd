"""PC sampling on a GPU (CUPTI, mode="pcsampling"): a long-running Triton
kernel's samples land under its kernel node, on source lines of this file,
with stall reasons. One CUPTI per process: run this file on its own, or
before anything that loads the fake libcupti (then it skips)."""

import json
import os

import pytest

import proton
from proton.writers.hatchet_tree import inclusive

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")
import triton.language as tl  # noqa: E402

N = 4096  # a small tensor, read over and over (cache hits, dependent FMAs)
ITERATIONS = 200_000


@triton.jit
def spin(x_ptr, out_ptr, iterations, N: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(iterations):
        x = tl.load(x_ptr + ((offsets + i * 7) & (N - 1)))  # moves every iteration: not hoisted
        acc = acc * 0.999 + x
    tl.store(out_ptr + offsets, acc)


@pytest.fixture(autouse=True)
def real_cupti():
    from proton import _host

    loaded = _host.cupti_path()
    if loaded and os.path.basename(loaded) == "libcupti_fake.so":
        pytest.skip("the fake libcupti is loaded in this process; run this file on its own")


def run(block):
    x = torch.rand(N, device="cuda")
    programs = 2 * torch.cuda.get_device_properties(0).multi_processor_count
    out = torch.empty(programs * block, device="cuda")
    for _ in range(3):
        spin[(programs,)](x, out, ITERATIONS, N=N, BLOCK=block)
    torch.cuda.synchronize()


def kernel_nodes(node, name):
    out = [node] if node["frame"]["type"] == "kernel" and node["frame"]["name"].startswith(name) else []
    for child in node["children"]:
        out += kernel_nodes(child, name)
    return out


def check_samples(report):
    assert report.pc_samples > 0, report.summary()
    with open(report.files["tree"]) as f:
        root = inclusive(json.load(f)[0])  # the file holds each node's own samples
    kernels = kernel_nodes(root, "spin")
    assert len(kernels) == 1, [k["frame"]["name"] for k in kernels]
    kernel = kernels[0]
    metrics = kernel["metrics"]
    assert metrics["num_samples"] > 0 and metrics["count"] == 3
    lines = [c for c in kernel["children"] if c["frame"]["type"] == "line"]
    assert lines and sum(c["metrics"]["num_samples"] for c in lines) == metrics["num_samples"]
    here = os.path.basename(__file__)
    assert any(here in c["frame"]["name"] for c in lines), [c["frame"]["name"] for c in lines]
    stalls = {k: v for k, v in metrics.items() if k.startswith("stall_")}
    assert any(v > 0 for v in stalls.values()), metrics
    # Each sample has one reason; a "_not_issued" reason repeats a subset.
    assert sum(v for k, v in stalls.items() if not k.endswith("_not_issued")) == metrics["num_samples"]
    return root, kernel


def test_pc_samples_on_source_lines(tmp_path):
    # The kernel is compiled and its module loaded inside the session, so
    # the profiler sees its cubin (source lines).
    proton.start(str(tmp_path / "pc"), backend="cupti", mode="pcsampling", quiet=True)
    with proton.scope("spin_scope"):
        run(block=128)
    report = proton.finalize()
    root, kernel = check_samples(report)
    assert kernel in [c for s in root["children"] if s["frame"]["name"] == "spin_scope" for c in s["children"]]
    print(report.summary())
    print({k: v for k, v in kernel["metrics"].items() if k.startswith(("num_", "stall_")) and v})


def test_pc_sampling_again_with_an_interval(tmp_path):
    # A second session in the process: sampling enabled anew on the context.
    proton.start(str(tmp_path / "pc_interval"), mode=proton.mode.PCSampling(interval=12), quiet=True)
    run(block=256)
    check_samples(proton.finalize())
