"""Instrumented compiles for Blackwell on the CPU, through Triton's ptx stage
and ptxas (Triton's `ptxas-blackwell` for capability 100 and up): datacenter
Blackwell, sm_100a (B200/GB200: `tl.dot` becomes a tcgen05 MMA into tensor
memory), and consumer Blackwell, sm_120a (RTX 50x0: `mma.sync`, 99 KiB of
shared memory per block). Compile-verified only: no Blackwell GPU has run
these kernels. The corpus (test_corpus.py) compiles every everyday kernel for
both targets too."""

import json
import re
import warnings

import pytest
from triton.backends.compiler import GPUTarget
from triton.tools.disasm import get_sass

import proton.language
from proton.contract.errors import PipeliningWarning
from proton.compiling.compiler import InstrumentationError, PipelineOptions, triton_arch
from proton.compiling.stage_hook import StageHook

from corpus import BY_NAME, compile_case
from kernels import MATMUL_SIGNATURE, VECTOR_ADD_SIGNATURE, compile_kernel, matmul, matmul_outer, vector_add

SM100 = GPUTarget("cuda", 100, 32)
SM120 = GPUTarget("cuda", 120, 32)
BLACKWELL = [pytest.param(SM100, id="sm_100a"), pytest.param(SM120, id="sm_120a")]
MATMUL_TILE = {"BM": 128, "BN": 128, "BK": 64}


def lines(text, pattern):
    return [line.strip() for line in text.splitlines() if re.search(pattern, line)]


def compile_instrumented(
    fn, signature, target, options=PipelineOptions(), key="bw", compile_options=None, **constexprs
):
    with StageHook(options, key):
        return compile_kernel(fn, signature, target, options=compile_options, aligned=True, **constexprs)


def scope_names(kernel):
    return [scope["name"] for scope in json.loads(kernel.metadata.proton)["scopes"]]


@pytest.mark.parametrize("target", BLACKWELL)
def test_vector_add_reads_clock_globaltimer_and_smid_in_ptx_and_sass(target):
    kernel = compile_instrumented(
        vector_add, VECTOR_ADD_SIGNATURE, target, PipelineOptions(clock_bits=32, buffer_type="shared"), BLOCK=1024
    )
    ptx = kernel.asm["ptx"]
    assert lines(ptx, r"^\.target ") == [f".target sm_{target.arch}a"], "Triton's arch-specific PTX target"
    # Six 32-bit clock reads (three scopes), the entry and exit global timer
    # and the SM id, as on Hopper.
    assert len(lines(ptx, r"mov\.u32 %r\d+, %clock;")) == 6
    assert len(lines(ptx, r"%globaltimer")) == 2
    assert len(lines(ptx, r"%smid")) == 1
    # Six records and the entry's placeholder (records are stored a record late).
    assert len(lines(ptx, r"st\.shared\.v2\.b32")) == 6 + 1
    # ptxas assembled them: the special registers are read in the SASS.
    sass = get_sass(kernel.asm["cubin"])
    assert len(lines(sass, r"CS2R\.32 R\d+, SR_CLOCKLO")) >= 6, "32-bit clock reads missing from the SASS"
    assert lines(sass, r"SR_GLOBALTIMER"), "no global timer read in the SASS"
    assert lines(sass, r"SR_(VIRTUAL)?SMID"), "no SM id read in the SASS"
    assert kernel.metadata.profile_scratch_size == 4 * 128
    assert triton_arch(target) == ("nvptx", f"sm_{target.arch}")


def test_dot_on_sm100_is_a_tcgen05_mma_with_the_scopes_around_it():
    kernel = compile_instrumented(matmul_outer, MATMUL_SIGNATURE, SM100, **MATMUL_TILE)
    ptx = kernel.asm["ptx"]
    assert lines(ptx, r"tcgen05\.mma"), "sm_100's tl.dot should be a tcgen05 MMA"
    assert not lines(ptx, r"wgmma|mma\.sync")
    assert scope_names(kernel) == ["mainloop", "epilogue"]
    # Records outside the loop: in registers, 4 64-bit clock reads plus the
    # header's.
    assert json.loads(kernel.metadata.proton)["layout"]["buffer_type"] == "registers"
    assert len(lines(ptx, r"mov\.u64 %rd\d+, %clock64;")) >= 4
    # The MMA lies between the mainloop scope's start and the epilogue's.
    order = [i for i, line in enumerate(ptx.splitlines()) if "%clock64" in line or "tcgen05.mma" in line]
    text = ptx.splitlines()
    first_mma = next(i for i in order if "tcgen05.mma" in text[i])
    assert any("%clock64" in text[i] for i in order if i < first_mma), "no clock read before the MMA"
    assert any("%clock64" in text[i] for i in order if i > first_mma), "no clock read after the MMA"
    assert kernel.asm["cubin"]


def test_dot_on_sm120_is_mma_sync_and_pipelines_with_scopes_in_the_loop():
    # Consumer Blackwell has no tcgen05: Triton pipelines the loop as on
    # Hopper and Ampere (num_stages=3), markers and all.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PipeliningWarning)  # test_pipelining.py checks those
        kernel = compile_instrumented(
            matmul, MATMUL_SIGNATURE, SM120, key="sm120-pipelined", compile_options={"num_stages": 3}, **MATMUL_TILE
        )
    ptx = kernel.asm["ptx"]
    assert lines(ptx, r"mma\.sync") and not lines(ptx, r"tcgen05|wgmma")
    assert scope_names(kernel) == ["mainloop", "iteration"]
    assert json.loads(kernel.metadata.proton)["layout"]["buffer_type"] == "shared"
    assert kernel.asm["cubin"]


def test_scope_in_a_pipelined_tcgen05_loop_compiles_unpipelined_with_a_warning():
    # Triton's sm_100 pipeliner cannot predicate a marker in the loop that
    # holds the tcgen05 MMA (3.6-3.8), or splits the scope over stages (3.9):
    # that loop is compiled again with num_stages=1, and the user told so.
    with pytest.warns(PipeliningWarning) as caught:
        pipelined = compile_instrumented(matmul, MATMUL_SIGNATURE, SM100, key="sm100-pipelined", **MATMUL_TILE)
    [message] = [str(w.message) for w in caught if "cannot pipeline a loop" in str(w.message)]
    assert message.startswith("kernel matmul: Triton's software pipeliner for sm_100 (tcgen05 MMA loops)"), message
    assert "'iteration' (" in message and "kernels.py:" in message
    assert "num_stages=1 for those loops only" in message
    assert scope_names(pipelined) == ["mainloop", "iteration"]
    assert message in json.loads(pipelined.metadata.proton)["warnings"]
    assert lines(pipelined.asm["ptx"], r"tcgen05\.mma") and pipelined.asm["cubin"]
    # Unpipelined, the same kernel records in the loop around the tcgen05 MMA.
    kernel = compile_instrumented(
        matmul, MATMUL_SIGNATURE, SM100, key="sm100-unpipelined", compile_options={"num_stages": 1}, **MATMUL_TILE
    )
    assert scope_names(kernel) == ["mainloop", "iteration"]
    assert lines(kernel.asm["ptx"], r"tcgen05\.mma")
    assert json.loads(kernel.metadata.proton)["layout"]["buffer_type"] == "shared"
    assert kernel.asm["cubin"]


@pytest.mark.parametrize(
    "target,fits", [pytest.param(SM100, True, id="sm_100a"), pytest.param(SM120, False, id="sm_120a")]
)
def test_shared_buffer_is_bounded_by_each_blackwells_shared_memory(target, fits):
    # 128 KiB of records beside the matmul's 32 KiB: within sm_100's 227 KiB
    # per block, beyond sm_120's 99 KiB.
    options = PipelineOptions(buffer_type="shared", buffer_size=128 * 1024)
    build = dict(key=f"big-{target.arch}", compile_options={"num_stages": 1}, **MATMUL_TILE)
    if fits:
        kernel = compile_instrumented(matmul, MATMUL_SIGNATURE, target, options, **build)
        layout = json.loads(kernel.metadata.proton)["layout"]
        assert layout["shared_bytes"] >= 128 * 1024
        assert kernel.metadata.shared == layout["shared_offset"] + layout["shared_bytes"] <= 232448
    else:
        with pytest.raises(
            InstrumentationError,
            match=r"buffer-size=131072 does not fit: kernel @matmul uses \d+ "
            r"of 101376 bytes of shared memory",
        ):
            compile_instrumented(matmul, MATMUL_SIGNATURE, target, options, **build)


def test_gluon_tcgen05_matmul_records_around_the_mma():
    case = BY_NAME["gluon_blackwell_matmul"]
    with StageHook(PipelineOptions(), "bw-gluon"):
        kernel = compile_case(case, "cuda:100")
    # LLVM peels the loop's first iteration (use_acc=False): the loop's scopes
    # are in the table once per copy.
    assert set(scope_names(kernel)) == {"k_loop", "tma", "mma", "epilogue"}
    ptx = kernel.asm["ptx"]
    for instruction in ("tcgen05.alloc", "tcgen05.mma", "tcgen05.commit", "tcgen05.ld", "cp.async.bulk.tensor"):
        assert lines(ptx, re.escape(instruction)), f"{instruction} missing from the PTX"
    # Each scope's start and end: 8 record sites, 64-bit clock reads.
    assert len(lines(ptx, r"mov\.u64 %rd\d+, %clock64;")) >= 8
    # The mma scope's records enclose the tcgen05 MMA: a clock read comes
    # between the TMA loads and the MMA, and another between the MMA and the
    # TMEM load of the epilogue.
    events = [
        ("clock" if "%clock64" in line else "mma" if "tcgen05.mma" in line else "ld" if "tcgen05.ld" in line else None)
        for line in ptx.splitlines()
    ]
    events = [e for e in events if e]
    mma, ld = events.index("mma"), events.index("ld")
    assert "clock" in events[:mma] and "clock" in events[mma + 1 : ld], events
    assert kernel.asm["cubin"]


@pytest.mark.parametrize("target", BLACKWELL)
def test_plain_build_is_unchanged_when_markers_are_off(target, monkeypatch):
    plain = compile_kernel(matmul, MATMUL_SIGNATURE, target, options={"num_stages": 1}, aligned=True, **MATMUL_TILE)
    assert not lines(plain.asm["ptx"], r"%clock|%globaltimer|@proton")
    assert plain.metadata.profile_scratch_size == 0
    with StageHook(PipelineOptions(), "bw-off"):
        monkeypatch.setattr(proton.language.instrumentation_state, "instrumentation_active", lambda: False)
        unmarked = compile_kernel(
            matmul, MATMUL_SIGNATURE, target, options={"num_stages": 1}, aligned=True, **MATMUL_TILE
        )
    assert unmarked.asm["ptx"] == plain.asm["ptx"]


@pytest.mark.parametrize("arch", ["sm_100", "sm_100a", "sm_100f", "sm_103a", "sm_110a", "sm_120", "sm_120a", "sm_121a"])
def test_blackwell_arch_names_are_accepted(arch):
    assert f"arch={arch}" in PipelineOptions(arch=arch).to_pass_options()
