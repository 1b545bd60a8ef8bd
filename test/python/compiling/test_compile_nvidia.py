"""Instrumented compiles for sm_90 on the CPU: Triton's LLVM IR goes through the
binding, then Triton's own ptx and cubin stages (ptxas)."""

import json
import re

import pytest
import triton
from triton.backends.compiler import GPUTarget

from proton.compiling.compiler import InstrumentationError, PipelineOptions
from proton.compiling import stage_hook as hook_mod
from proton.compiling.stage_hook import StageHook

from kernels import MATMUL_SIGNATURE, VECTOR_ADD_SIGNATURE, compile_kernel, crossing, matmul, never_closed, vector_add

SM90 = GPUTarget("cuda", 90, 32)


def ptx_lines(kernel, pattern):
    return [line.strip() for line in kernel.asm["ptx"].splitlines() if re.search(pattern, line)]


def compile_instrumented(fn, signature, options=PipelineOptions(), key="test", **constexprs):
    with StageHook(options, key):
        return compile_kernel(fn, signature, SM90, **constexprs)


def test_vector_add_records_reach_ptx_and_cubin():
    kernel = compile_instrumented(
        vector_add, VECTOR_ADD_SIGNATURE, PipelineOptions(clock_bits=32, buffer_type="shared"), key="shared", BLOCK=1024
    )
    meta = json.loads(kernel.metadata.proton)
    scopes = {s["name"]: s for s in meta["scopes"]}
    assert [s["name"] for s in meta["scopes"]] == ["kernel", "load", "store"]
    assert scopes["kernel"]["parent"] == -1
    assert scopes["load"]["parent"] == scopes["kernel"]["id"]
    assert scopes["store"]["parent"] == scopes["kernel"]["id"]
    assert re.fullmatch(r".*kernels\.py:\d+:\d+", scopes["load"]["loc"])
    # Six records: a 32-bit clock read and a predicated 8-byte shared store each.
    assert len(ptx_lines(kernel, r"mov\.u32 %r\d+, %clock;")) == 6
    # Six records and, stored by the first record (a record late), the
    # entry's placeholder in the header's exit part.
    assert len(ptx_lines(kernel, r"st\.shared\.v2\.b32")) == 6 + 1
    # Entry and exit stamps: the global timer and the 64-bit clock.
    assert len(ptx_lines(kernel, r"%globaltimer")) == 2
    assert len(ptx_lines(kernel, r"%smid")) == 1
    # The header (entry, identity, exit) is staged in shared memory too; the
    # warp's block goes out with one predicated 16-byte store per lane.
    assert len(ptx_lines(kernel, r"st\.shared\.v4\.b32")) == 3
    assert len(ptx_lines(kernel, r"st\.global")) == 8 + 1  # the kernel's 8 stores, then the copy
    assert kernel.asm["cubin"]
    layout = meta["layout"]
    assert layout["num_warps"] == 4 and layout["warps"] == [0, 1, 2, 3]
    # Six 8-byte records per warp: 48 bytes, rounded up to a 64-byte segment;
    # with the 48-byte header, a 128-byte block (whole 32-byte sectors).
    assert layout["segment_bytes"] == 64 and layout["block_bytes"] == 128
    assert kernel.metadata.profile_scratch_size == layout["bytes_per_cta"] == 4 * 128
    assert kernel.metadata.profile_scratch_align == 16
    assert kernel.metadata.shared == layout["shared_bytes"] == 4 * 128


def test_matmul_with_k_loop_keeps_wgmma_and_records_the_loop():
    kernel = compile_instrumented(matmul, MATMUL_SIGNATURE, BM=128, BN=128, BK=64)
    meta = json.loads(kernel.metadata.proton)
    names = {s["id"]: s["name"] for s in meta["scopes"]}
    iteration = next(s for s in meta["scopes"] if s["name"] == "iteration")
    assert names[iteration["parent"]] == "mainloop"
    assert "wgmma" in kernel.asm["ptx"]
    assert len(ptx_lines(kernel, r"mov\.u64 %rd\d+, %clock64;")) >= 4
    # Four 8-byte records (clock64): mainloop and iteration, start and end;
    # and the header's three parts.
    # Two records in the loop, two around it, the entry's fill of the ring's
    # overhang (records in a loop share one slot computation), and the
    # entry's placeholder (records are stored a record late).
    assert len(ptx_lines(kernel, r"st\.shared\.v2\.b32")) == 6
    assert len(ptx_lines(kernel, r"st\.shared\.v4\.b32")) == 3
    # Records in a loop: auto picks shared memory, 2 KiB per warp here (what
    # keeps the CTAs per SM that this kernel's shared memory allows).
    assert meta["layout"]["buffer_type"] == "shared"
    assert meta["layout"]["segment_bytes"] == 2048
    assert kernel.asm["cubin"]
    # The kernel's own shared memory stays below the profile buffer.
    assert meta["layout"]["shared_offset"] >= 16 * 1024
    assert kernel.metadata.shared == meta["layout"]["shared_offset"] + meta["layout"]["shared_bytes"]


def test_global_buffer_writes_records_to_profile_scratch():
    kernel = compile_instrumented(
        vector_add, VECTOR_ADD_SIGNATURE, PipelineOptions(buffer_type="global"), key="global", BLOCK=1024
    )
    meta = json.loads(kernel.metadata.proton)
    assert meta["layout"]["shared_bytes"] == 0
    assert not ptx_lines(kernel, r"st\.shared")
    # Six 8-byte records plus the header's three parts.
    assert len(ptx_lines(kernel, r"st\.global\.v2\.b32")) == 6 + 1  # and the entry's placeholder
    assert len(ptx_lines(kernel, r"st\.global\.v4\.b32")) == 3
    assert kernel.metadata.shared == 0


def test_registers_buffer_keeps_records_in_registers_and_writes_once():
    kernel = compile_instrumented(
        vector_add,
        VECTOR_ADD_SIGNATURE,
        PipelineOptions(buffer_type="registers", clock_bits=32),
        key="registers",
        BLOCK=1024,
    )
    meta = json.loads(kernel.metadata.proton)
    assert meta["layout"]["buffer_type"] == "registers"
    assert meta["layout"]["shared_bytes"] == 0 and kernel.metadata.shared == 0
    assert not ptx_lines(kernel, r"st\.shared|ld\.shared|bar\.warp\.sync")
    assert len(ptx_lines(kernel, r"mov\.u32 %r\d+, %clock;")) == 6
    # Two selects per 8-byte record (tag and clock) pick the owning lane's
    # chunk; the whole block goes out with one 16-byte store per lane.
    assert len(ptx_lines(kernel, r"selp\.b32")) >= 6 * 2
    assert ptx_lines(kernel, r"st\.global\.v4\.b32") == ptx_lines(kernel, r"st\.global\.v4\.b32 \[%rd\d+\], \{")
    assert len(ptx_lines(kernel, r"st\.global")) == 8 + 1
    assert kernel.metadata.profile_scratch_size == 4 * 128


def test_registers_buffer_rejects_records_in_loops():
    with pytest.raises(InstrumentationError, match="buffer-type=registers needs every record outside loops"):
        compile_instrumented(
            matmul, MATMUL_SIGNATURE, PipelineOptions(buffer_type="registers"), key="reg-loop", BM=64, BN=64, BK=32
        )


def test_sampling_and_granularity_pick_recording_warps():
    selective = compile_instrumented(
        vector_add,
        VECTOR_ADD_SIGNATURE,
        PipelineOptions(sampling_strategy="selective", sampling_options=(1, 3)),
        key="sel",
        BLOCK=1024,
    )
    assert json.loads(selective.metadata.proton)["layout"]["warps"] == [1, 3]
    cta = compile_instrumented(
        vector_add, VECTOR_ADD_SIGNATURE, PipelineOptions(granularity="cta"), key="cta", BLOCK=1024
    )
    layout = json.loads(cta.metadata.proton)["layout"]
    assert layout["warps"] == [0] and layout["bytes_per_cta"] == 128


def test_plain_build_has_no_markers_and_cache_separates_modes():
    plain = compile_kernel(vector_add, VECTOR_ADD_SIGNATURE, SM90, BLOCK=256)
    assert not ptx_lines(plain, r"%clock|@proton")
    assert plain.metadata.profile_scratch_size == 0
    instrumented = compile_instrumented(vector_add, VECTOR_ADD_SIGNATURE, key="cache", BLOCK=256)
    assert ptx_lines(instrumented, r"%clock64")
    assert instrumented.hash != plain.hash
    # After the session, the plain build comes back (from the cache).
    again = compile_kernel(vector_add, VECTOR_ADD_SIGNATURE, SM90, BLOCK=256)
    assert again.hash == plain.hash and not ptx_lines(again, r"%clock")


def test_hook_chains_and_restores_a_previous_hook():
    calls = []

    def previous(backend=None, stages=None, options=None, language=None, capability=None):
        if stages is None:  # Triton 3.7+ asks every hook for its cache key
            return "previous", "0"
        calls.append(sorted(stages))

    triton.knobs.runtime.add_stages_inspection_hook = previous
    try:
        hook = StageHook(PipelineOptions(), "chain")
        with hook:
            assert triton.knobs.runtime.add_stages_inspection_hook is hook
            key = "proton-ext:chain:" + PipelineOptions().to_pass_options()
            if hook_mod.HOOK_GIVES_CACHE_KEY:  # Triton 3.7+: a (key, hash) pair
                assert hook()[0] == key + "|previous" and len(hook()[1]) == 64
            else:
                assert hook() == key
            compile_kernel(vector_add, VECTOR_ADD_SIGNATURE, SM90, BLOCK=512)
        assert calls and "llir" in calls[0]
        assert triton.knobs.runtime.add_stages_inspection_hook is previous
        assert triton.knobs.compilation.instrumentation_mode == ""
    finally:
        triton.knobs.runtime.add_stages_inspection_hook = None


def test_unclosed_scope_is_reported_with_its_source_line():
    with pytest.raises(InstrumentationError, match=r"kernels\.py:\d+:\d+: error: scope 'open' is never closed"):
        compile_instrumented(never_closed, {"x": "*fp32"}, key="err1", BLOCK=128)


def test_crossing_scopes_are_reported():
    with pytest.raises(InstrumentationError, match=r"scope 'a' ends while scope 'b' opened inside it is still open"):
        compile_instrumented(crossing, {"x": "*fp32"}, key="err2", BLOCK=128)


def test_builds_with_different_options_do_not_share_the_cache():
    clock32 = compile_instrumented(
        vector_add, VECTOR_ADD_SIGNATURE, PipelineOptions(clock_bits=32), key="same", BLOCK=2048
    )
    clock64 = compile_instrumented(
        vector_add, VECTOR_ADD_SIGNATURE, PipelineOptions(clock_bits=64), key="same", BLOCK=2048
    )
    assert json.loads(clock32.metadata.proton)["layout"]["clock_bits"] == 32
    assert json.loads(clock64.metadata.proton)["layout"]["clock_bits"] == 64


def test_instrumented_build_keeps_the_users_compile_options():
    # Triton 3.9 drops maxnreg for any non-empty instrumentation_mode; Proton
    # keys its builds through the hook there, so the user's limit stays.
    with StageHook(PipelineOptions(), "maxnreg"):
        kernel = compile_kernel(vector_add, VECTOR_ADD_SIGNATURE, SM90, options={"maxnreg": 128}, BLOCK=1024)
        assert triton.knobs.compilation.instrumentation_mode == (
            ""
            if hook_mod.HOOK_GIVES_CACHE_KEY
            else hook_mod.MODE_PREFIX + "maxnreg:" + PipelineOptions().to_pass_options()
        )
    assert json.loads(kernel.metadata.proton)["instrumented"]
    assert ".maxnreg 128" in kernel.asm["ptx"]
