"""Kernels recording values (proton.language.record_value) compile on the
CPU for sm_90 (through ptxas) and gfx942; the scope table names each value
with its type; bad values are refused at the call."""

import json
import re

import pytest
from triton.backends.compiler import GPUTarget

import proton.language as pl
from proton.compiling.compiler import PipelineOptions
from proton.compiling.stage_hook import StageHook

from kernels import compile_kernel
from values_kernels import SUM_WITH_VALUES_SIGNATURE, sum_with_values


@pytest.mark.parametrize("target", [GPUTarget("cuda", 90, 32), GPUTarget("hip", "gfx942", 64)], ids=["sm_90", "gfx942"])
def test_values_compile(target):
    with StageHook(PipelineOptions(), f"values-{target.arch}"):
        kernel = compile_kernel(sum_with_values, SUM_WITH_VALUES_SIGNATURE, target, BLOCK=128)
    meta = json.loads(kernel.metadata.proton)
    table = [(s["name"], s["kind"], s.get("dtype")) for s in meta["scopes"]]
    # A backend may unroll the loop (Triton 3.8's AMD one does): each copy
    # of the "iter" site is a site of its own, under the same name.
    assert table[-1] == ("acc0", "value", "f32") and set(table[:-1]) == {("iter", "value", "i32")}, table
    if target.backend == "cuda":
        assert kernel.asm["cubin"]
        ptx = kernel.asm["ptx"]
        assert "@proton" not in ptx, "a marker survived into the PTX"
        clocks = [line for line in ptx.splitlines() if re.search(r"%clock", line)]
        assert len(clocks) >= 2, clocks
    else:
        assert kernel.asm["hsaco"]
        assert "@proton" not in kernel.asm["amdgcn"]


@pytest.mark.parametrize("buffer_type", ["registers", "shared", "global"])
@pytest.mark.parametrize("clock_bits", [32, 64])
def test_values_compile_with_every_buffer(buffer_type, clock_bits):
    import triton
    import triton.language as tl

    @triton.jit
    def straight(x):
        # No loop: registers can hold every record (a value site takes two).
        pl.record_value("pid", tl.program_id(0))
        pl.record_value("x0", tl.load(x))

    options = PipelineOptions(buffer_type=buffer_type, clock_bits=clock_bits)
    with StageHook(options, f"values-{buffer_type}-{clock_bits}"):
        kernel = compile_kernel(straight, {"x": "*fp32"}, GPUTarget("cuda", 90, 32))
    meta = json.loads(kernel.metadata.proton)
    assert meta["layout"]["buffer_type"] == buffer_type, meta["layout"]
    assert [(s["name"], s.get("dtype")) for s in meta["scopes"]] == [("pid", "i32"), ("x0", "f32")]
    assert kernel.asm["cubin"] and "@proton" not in kernel.asm["ptx"]


def _compile(fn):
    with StageHook(PipelineOptions(), "values-bad"):
        return compile_kernel(fn, {"x": "*fp32"}, GPUTarget("cuda", 90, 32))


@pytest.mark.parametrize("cast", ["int64", "float64", "uint32"])
def test_a_value_wider_than_a_record_is_refused(cast):
    import triton
    import triton.language as tl

    @triton.jit
    def bad(x, CAST: tl.constexpr):
        pl.record_value("v", tl.program_id(0).to(CAST))

    dtype = getattr(tl, cast)
    with pytest.raises(
        Exception, match=r"(?s)def bad.*record_value\('v', \.\.\.\) records int32 or float32 values"
    ) as err:
        with StageHook(PipelineOptions(), "values-bad"):
            compile_kernel(bad, {"x": "*fp32", "CAST": "constexpr"}, GPUTarget("cuda", 90, 32), CAST=dtype)
    assert f"got {dtype}" in str(err.value), str(err.value)


def test_a_block_value_is_refused():
    import triton
    import triton.language as tl

    @triton.jit
    def bad(x):
        pl.record_value("v", tl.arange(0, 16))

    with pytest.raises(Exception, match=r"record_value\('v', \.\.\.\) takes a scalar"):
        _compile(bad)
