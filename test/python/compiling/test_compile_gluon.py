"""Instrumented compiles of a Gluon Hopper matmul (TMA + WGMMA) for sm_90 on the
CPU: the markers travel through Gluon's frontend like Triton's, Proton's
pipeline rewrites the LLVM IR, Triton's ptx and cubin stages (ptxas) finish."""

import json
import re
import sys

import pytest

from proton.compiling.compiler import PipelineOptions
from proton.compiling.stage_hook import StageHook
import suite_paths

sys.path.insert(0, str(suite_paths.EXAMPLES))
import gluon_matmul  # noqa: E402

BM, BN, BK = gluon_matmul.BLOCK_M, gluon_matmul.BLOCK_N, gluon_matmul.BLOCK_K
SCOPES = ["matmul", "tma_load", "wgmma", "epilogue"]
# Two records (start, end) per scope occurrence in the code: the loop's
# scopes appear once in the code, so once in the PTX.
RECORDS = 2 * len(SCOPES)
# One m64nBNk16 WGMMA per 64 rows of the tile and 16 of its K depth.
WGMMAS = (BM // 64) * (BK // 16)


def ptx_lines(kernel, pattern):
    return [line.strip() for line in kernel.asm["ptx"].splitlines() if re.search(pattern, line)]


def compile_instrumented(options=PipelineOptions(), label="gluon-test", **kwargs):
    with StageHook(options, label=label):
        return gluon_matmul.compile_for_sm90(**kwargs)


def event_sequence(kernel):
    """The kernel's clock reads, TMA loads/stores, WGMMAs and shared stores of
    C in PTX order; runs of the same WGMMA / stmatrix event collapse to one."""
    events = []
    for line in kernel.asm["ptx"].splitlines():
        if "%clock" in line:
            event = "clock"
        elif "cp.async.bulk.tensor" in line:
            event = "tma_store" if ".global.shared::cta" in line else "tma_load"
        elif "wgmma.mma_async" in line:
            event = "wgmma"
        elif "wgmma.wait_group" in line:
            event = "wgmma_wait"
        elif "stmatrix" in line:
            event = "stmatrix"
        else:
            continue
        if event in ("wgmma", "stmatrix") and events and events[-1] == event:
            continue
        events.append(event)
    return events


@pytest.fixture(scope="module")
def plain():
    return gluon_matmul.compile_for_sm90()


def test_gluon_matmul_scopes_reach_ptx_and_cubin():
    kernel = compile_instrumented()
    meta = json.loads(kernel.metadata.proton)
    scopes = {s["name"]: s for s in meta["scopes"]}
    assert [s["name"] for s in meta["scopes"]] == SCOPES
    assert scopes["matmul"]["parent"] == -1
    for child in ("tma_load", "wgmma", "epilogue"):
        assert scopes[child]["parent"] == scopes["matmul"]["id"]
    assert all(re.fullmatch(r".*gluon_matmul\.py:\d+:\d+", s["loc"]) for s in meta["scopes"])

    # The kernel itself: 8 WGMMAs (2 x m64n128k16 per 16 of K, BK=64), two TMA
    # loads (A, B) and one TMA store (C).
    assert len(ptx_lines(kernel, r"wgmma\.mma_async")) == WGMMAS == 8
    # Triton 3.6 writes shared::cluster, 3.7+ shared::cta.
    assert len(ptx_lines(kernel, r"cp\.async\.bulk\.tensor\.2d\.shared::(cluster|cta)\.global")) == 2
    assert len(ptx_lines(kernel, r"cp\.async\.bulk\.tensor\.2d\.global\.shared::cta")) == 1
    # clock64 (the default): 8 record reads, plus one entry and one exit stamp.
    assert len(ptx_lines(kernel, r"mov\.u64 %rd\d+, %clock64;")) == RECORDS + 2 == 10
    assert len(ptx_lines(kernel, r"%clock")) == 10
    # One predicated 8-byte shared store per record, one more that fills the
    # ring's overhang at entry (records in the K loop share one slot
    # computation), one for the entry's placeholder (records are stored a
    # record late), and three 16-byte ones for the header (C goes out by
    # stmatrix).
    assert len(ptx_lines(kernel, r"@%p\d+ st\.shared\.v2\.b32")) == RECORDS + 2
    assert len(ptx_lines(kernel, r"@%p\d+ st\.shared\.v4\.b32")) == 3
    assert len(ptx_lines(kernel, r"%globaltimer")) == 2
    assert len(ptx_lines(kernel, r"%smid")) == 1
    assert not ptx_lines(kernel, r"@proton")
    assert kernel.asm["cubin"]

    layout = meta["layout"]
    assert layout["num_warps"] == 4 and layout["warps"] == [0, 1, 2, 3] and layout["clock_bits"] == 64
    assert kernel.metadata.profile_scratch_size == layout["bytes_per_cta"]
    # The profile buffer sits above the A and B tiles (2 x 16 KiB) and the mbarrier.
    assert layout["shared_offset"] >= 2 * BM * BK * 2
    assert kernel.metadata.shared == layout["shared_offset"] + layout["shared_bytes"]


def test_gluon_matmul_records_wrap_the_tma_and_wgmma_instructions():
    kernel = compile_instrumented()
    assert event_sequence(kernel) == [
        "clock",  # entry stamp
        "clock",  # matmul start
        "clock",
        "tma_load",
        "tma_load",
        "clock",  # tma_load scope (loop body)
        "clock",
        "wgmma",
        "wgmma_wait",
        "clock",  # wgmma scope (loop body)
        "clock",
        "stmatrix",
        "tma_store",
        "clock",  # epilogue
        "clock",  # matmul end
        "clock",  # exit stamp
    ]


def test_gluon_matmul_clock32_and_fp32_output():
    kernel = compile_instrumented(PipelineOptions(clock_bits=32), label="gluon-test-32", out_dtype="fp32")
    meta = json.loads(kernel.metadata.proton)
    assert [s["name"] for s in meta["scopes"]] == SCOPES
    assert meta["layout"]["clock_bits"] == 32
    assert len(ptx_lines(kernel, r"mov\.u32 %r\d+, %clock;")) == RECORDS
    assert len(ptx_lines(kernel, r"mov\.u64 %rd\d+, %clock64;")) == 2
    assert len(ptx_lines(kernel, r"wgmma\.mma_async")) == WGMMAS
    assert kernel.asm["cubin"]


def test_tma_descriptor_params_stay_grid_constant(plain):
    # Lost in the MLIR round trip, the attribute made NVPTX copy the
    # descriptors to local memory and the TMA ops fault (seen on an H200).
    grid_constant = re.compile(r'byval\(\[128 x i8\]\) align 64 "nvvm\.grid_constant"')
    assert len(grid_constant.findall(plain.asm["llir"])) == 3
    assert not ptx_lines(plain, r"__local_depot")
    kernel = compile_instrumented(label="gluon-test-grid-constant")
    assert len(grid_constant.findall(kernel.asm["llir"])) == 3
    # The descriptors are used in place (cvta.param), never copied to a local depot.
    assert not ptx_lines(kernel, r"__local_depot|st\.local")


def test_plain_gluon_matmul_has_no_markers(plain):
    assert not ptx_lines(plain, r"%clock")
    assert "@proton" not in plain.asm["ptx"] and "@proton" not in plain.asm["ttgir"]
    assert len(ptx_lines(plain, r"wgmma\.mma_async")) == WGMMAS
    assert len(ptx_lines(plain, r"cp\.async\.bulk\.tensor")) == 3
    assert plain.metadata.profile_scratch_size == 0
    assert not hasattr(plain.metadata, "proton")


def test_gluon_cache_separates_plain_and_instrumented(plain):
    instrumented = compile_instrumented(label="gluon-test-cache")
    assert instrumented.hash != plain.hash
    again = gluon_matmul.compile_for_sm90()
    assert again.hash == plain.hash and not ptx_lines(again, r"%clock")
