"""Instrumented compiles through Triton's AMD backend on the CPU."""

import pytest
from triton.backends.compiler import GPUTarget

from proton.compiling.compiler import PipelineOptions
from proton.compiling.stage_hook import StageHook

from kernels import VECTOR_ADD_SIGNATURE, compile_kernel, vector_add


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_hsaco_holds_counter_reads_lds_stores_and_sched_barriers(arch):
    with StageHook(PipelineOptions(clock_bits=32, buffer_type="shared"), f"amd-{arch}"):
        kernel = compile_kernel(vector_add, VECTOR_ADD_SIGNATURE, GPUTarget("hip", arch, 64), BLOCK=1024)
    isa = kernel.asm["amdgcn"]
    assert kernel.asm["hsaco"]
    assert isa.count("s_memtime") >= 6 + 2
    assert isa.count("s_memrealtime") == 2
    assert "hwreg(HW_REG_HW_ID)" in isa and "hwreg(HW_REG_XCC_ID)" in isa
    assert isa.count("ds_write_b64") >= 6
    assert isa.count("sched_barrier mask(0x00000000)") == 12
    # 256 threads: 4 waves of 64, each a 64-byte header and six 8-byte
    # records rounded up to a 64-byte segment.
    assert kernel.metadata.profile_scratch_size == 4 * (64 + 64)


def test_registers_buffer_on_amd_writes_one_chunk_per_lane():
    with StageHook(PipelineOptions(clock_bits=32, buffer_type="registers"), "amd-registers"):
        kernel = compile_kernel(vector_add, VECTOR_ADD_SIGNATURE, GPUTarget("hip", "gfx942", 64), BLOCK=1024)
    isa = kernel.asm["amdgcn"]
    assert "ds_write" not in isa and "ds_read" not in isa
    assert isa.count("s_memtime") >= 6 + 2
    assert "global_store_dwordx4" in isa
    assert kernel.metadata.shared == 0


def test_sched_barriers_can_be_turned_off():
    with StageHook(PipelineOptions(sched_barriers=False), "amd-nobarrier"):
        kernel = compile_kernel(vector_add, VECTOR_ADD_SIGNATURE, GPUTarget("hip", "gfx942", 64), BLOCK=1024)
    assert "sched_barrier" not in kernel.asm["amdgcn"]
    assert "s_memtime" in kernel.asm["amdgcn"]
