"""The MMA mode compiled on the CPU: a matmul without markers gets mma.issue
and mma.wait scopes on Hopper (wgmma), `mma` on Ampere (mma.sync) and AMD
CDNA (MFMA), mma.issue on Blackwell (tcgen05, compile-verified only), each
with its counter reads in the PTX or AMDGCN where the scopes say; kernels
without MMA are left alone; user scopes nest; reserved names are refused;
and a K loop longer than the ring decodes to the newest iterations."""

import json
import re

import numpy as np
import pytest
from triton.backends.compiler import GPUTarget

from proton.recording import decode
from proton.compiling.compiler import InstrumentationError
from proton.compiling.stage_hook import StageHook
from proton.contract.kernel_metadata import KernelMetadata
from proton.mode import MMA, Default, parse

import synthetic_buffers as synthetic
from kernels import MATMUL_SIGNATURE, VECTOR_ADD_SIGNATURE, compile_kernel, matmul
from mma_kernels import add_plain, dot_line, matmul_plain, reserved_name
import suite_paths

SM90 = GPUTarget("cuda", 90, 32)
SM80 = GPUTarget("cuda", 80, 32)
SM100 = GPUTarget("cuda", 100, 32)
GFX942 = GPUTarget("hip", "gfx942", 64)
BLOCKS = dict(BM=128, BN=128, BK=64)


def compile_mma(fn, signature, target, mode=MMA(), **kwargs):
    with StageHook(mode.pipeline_options(), str(mode)):
        return compile_kernel(fn, signature, target, **kwargs)


def proton_meta(kernel) -> dict:
    return json.loads(kernel.metadata.proton)


def sequence(asm: str, symbols: dict[str, str]) -> str:
    """One letter per line of `asm` that matches a pattern of `symbols`."""
    out = []
    for line in asm.splitlines():
        for letter, pattern in symbols.items():
            if re.search(pattern, line):
                out.append(letter)
                break
    return "".join(out)


def check_locations(meta, names):
    """The scope names in id order; those in the K loop point at tl.dot."""
    assert [s["name"] for s in meta["scopes"]] == names, meta["scopes"]
    for scope in meta["scopes"][:2]:
        assert scope["loc"].endswith(f"mma_kernels.py:{dot_line()}:{scope['loc'].rsplit(':', 1)[1]}"), (
            f"scope {scope['name']} should point at the tl.dot line, got {scope['loc']!r}"
        )


@pytest.mark.parametrize("aligned", [False, True], ids=["plain", "pipelined"])
def test_hopper_wgmma_gets_issue_and_wait_scopes(aligned):
    kernel = compile_mma(matmul_plain, MATMUL_SIGNATURE, SM90, aligned=aligned, **BLOCKS)
    meta = proton_meta(kernel)
    # Pipelined, the loop waits for the previous iteration's group
    # (wait_group 1), and the last group is waited for after the loop.
    check_locations(meta, ["mma.issue", "mma.wait"] + (["mma.wait"] if aligned else []))
    assert all(s["parent"] == -1 for s in meta["scopes"])
    # C: a cycle-counter read; F fence, M mma_async, K commit, W wait.
    ptx = kernel.asm["ptx"]
    seq = sequence(
        ptx,
        {
            "C": r"%clock64;",
            "F": r"wgmma\.fence",
            "M": r"wgmma\.mma_async",
            "K": r"wgmma\.commit_group",
            "W": r"wgmma\.wait_group",
        },
    )
    assert re.search(r"CFM+KCCWC", seq), f"expected reads around the issue run and the wait, got {seq}"
    # Every wgmma instruction is inside a window: an issue run or a wait.
    assert not set(re.sub(r"CW(?=C)", "", re.sub(r"CFM+KC", "", seq))) & set("FMKW"), seq
    # Records in the K loop: auto picks the shared buffer, 2 to 4 KiB per
    # warp (what keeps the CTAs per SM that shared memory allows).
    assert meta["layout"]["buffer_type"] == "shared" and meta["layout"]["segment_bytes"] in (2048, 4096)
    assert kernel.asm["cubin"]


def test_user_scopes_keep_working_and_mma_scopes_nest_in_them():
    kernel = compile_mma(matmul, MATMUL_SIGNATURE, SM90, **BLOCKS)
    scopes = {s["name"]: s for s in proton_meta(kernel)["scopes"]}
    assert set(scopes) == {"mainloop", "iteration", "mma.issue", "mma.wait"}
    assert scopes["iteration"]["parent"] == scopes["mainloop"]["id"]
    assert scopes["mma.issue"]["parent"] == scopes["iteration"]["id"]
    assert scopes["mma.wait"]["parent"] == scopes["iteration"]["id"]


def test_ampere_mma_sync_run_is_one_mma_scope():
    kernel = compile_mma(matmul_plain, MATMUL_SIGNATURE, SM80, **BLOCKS)
    check_locations(proton_meta(kernel), ["mma"])
    seq = sequence(kernel.asm["ptx"], {"C": r"%clock64;", "M": r"\bmma\.sync"})
    assert re.search(r"CM{128}C", seq), f"one read before and after the 128 mma.sync of an iteration: {seq}"
    assert kernel.asm["cubin"]


def test_amd_mfma_run_is_one_mma_scope_fenced_by_scheduling_barriers():
    kernel = compile_mma(matmul_plain, MATMUL_SIGNATURE, GFX942, **BLOCKS)
    check_locations(proton_meta(kernel), ["mma"])
    amdgcn = kernel.asm["amdgcn"]
    seq = sequence(amdgcn, {"C": r"s_memtime", "M": r"v_mfma"})
    assert re.search(r"CM+C", seq) and "M" not in re.sub(r"CM+C", "", seq), seq
    assert len(re.findall(r"sched_barrier", amdgcn)) >= 4
    assert kernel.asm["hsaco"]


def test_blackwell_tcgen05_run_is_an_issue_scope():
    # Compile-verified only: no Blackwell GPU has run it.
    kernel = compile_mma(matmul_plain, MATMUL_SIGNATURE, SM100, **BLOCKS)
    meta = proton_meta(kernel)
    assert {s["name"] for s in meta["scopes"]} == {"mma.issue"}
    seq = sequence(kernel.asm["ptx"], {"C": r"%clock64;", "M": r"tcgen05\.mma", "K": r"tcgen05\.commit"})
    assert re.search(r"CM+KC", seq) and not set(re.sub(r"CM+KC", "", seq)) & set("MK"), seq
    assert kernel.asm["cubin"]


def test_kernels_without_mma_are_left_as_in_default_mode():
    plain = compile_kernel(add_plain, VECTOR_ADD_SIGNATURE, SM90, BLOCK=1024)
    kernel = compile_mma(add_plain, VECTOR_ADD_SIGNATURE, SM90, BLOCK=1024)
    assert "proton" not in kernel.metadata._asdict() or not kernel.metadata.proton
    assert kernel.asm["llir"] == plain.asm["llir"], "a kernel without MMA must not be round-tripped"
    # And Default mode does not add MMA scopes to a matmul.
    kernel = compile_mma(matmul_plain, MATMUL_SIGNATURE, SM90, mode=Default(), **BLOCKS)
    assert not getattr(kernel.metadata, "proton", None)


def test_reserved_names_are_refused_with_the_scope_named():
    with pytest.raises(InstrumentationError, match=r"mma_kernels\.py:\d+:\d+: error: the name 'mma.wait' is reserved"):
        compile_mma(reserved_name, {"x": "*fp32"}, SM90, BLOCK=128)


def test_mode_strings_select_the_mma_scopes():
    assert parse("mma:granularity=warp").pipeline_options().mma_scopes
    assert parse("mma:optimizations=clock32").pipeline_options().clock_bits == 32
    assert "mma-scopes=true" in MMA().pipeline_options().to_pass_options()


def test_a_k_loop_longer_than_the_ring_keeps_the_newest_iterations():
    """The compiled kernel's scope table and layout, and a buffer as its warps
    would write it for 100 K iterations: each warp's ring holds fewer than
    the 400 records written, so only the newest iterations of (issue, wait)
    are decoded, and the rest are counted as dropped."""
    meta = proton_meta(compile_mma(matmul_plain, MATMUL_SIGNATURE, SM90, **BLOCKS))
    lay = meta["layout"]
    issue, wait = (next(s["id"] for s in meta["scopes"] if s["name"] == n) for n in ("mma.issue", "mma.wait"))
    iterations, ctas, warps = 100, 2, lay["num_warps"]
    ids = np.tile([issue, issue, wait, wait], iterations)
    ends = np.tile([0, 1, 0, 1], iterations)
    tags = np.broadcast_to(synthetic.tag(ids, ends), (ctas, warps, ids.size))
    clk0 = 10**9
    clocks = np.broadcast_to(clk0 + 50 * np.arange(1, ids.size + 1, dtype=np.uint64), tags.shape)
    end = clk0 + 50 * (ids.size + 1)
    buf = synthetic.build(lay, tags, clocks, clk_start=clk0, clk_end=end, gt_start=10**12, gt_end=10**12 + (end - clk0))
    events = decode.decode(buf, KernelMetadata.from_dict({**meta, "kernel_id": 0}), ctas)
    kept = lay["capacity"] // 4
    assert lay["capacity"] < ids.size and kept >= 32
    for scope in (issue, wait):
        per_warp = np.bincount(events.row[events.scope == scope], minlength=ctas * warps)
        assert (per_warp == kept).all(), f"scope {scope}: {per_warp}"
    assert (events.dropped == ids.size - lay["capacity"]).all()
    assert (events.duration_cycles == 50).all()


def test_warp_specialized_gluon_kernel_gets_mma_scopes_in_its_consumer():
    """MMA mode on examples/gluon_warp_specialized.py: the consumer
    partition's WGMMA gets its issue and wait scopes, inside the user's
    `wgmma` scope, and the kernel still assembles."""
    import sys

    sys.path.insert(0, str(suite_paths.EXAMPLES))
    import gluon_warp_specialized as example

    mode = MMA()
    with StageHook(mode.pipeline_options(), str(mode)):
        kernel = example.compile_for_sm90()
    scopes = {s["name"]: s for s in proton_meta(kernel)["scopes"]}
    assert {"mma.issue", "mma.wait", "wgmma", "producer", "tma_load"} <= set(scopes), sorted(scopes)
    assert scopes["mma.issue"]["parent"] == scopes["wgmma"]["id"] == scopes["mma.wait"]["parent"], scopes
    assert kernel.asm["cubin"]
