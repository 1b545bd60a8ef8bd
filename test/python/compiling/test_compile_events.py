"""Kernels with asynchronous events and marks compile on the CPU for sm_90
(through ptxas) and gfx942: event records are not checked as scopes, and
the scope table names each id's kind."""

import json
import re

import pytest
from triton.backends.compiler import GPUTarget

import proton.language as pl
from proton.compiling.compiler import PipelineOptions
from proton.compiling.stage_hook import StageHook

from events_kernels import PIPELINED_SUM_SIGNATURE, pipelined_sum
from kernels import compile_kernel


@pytest.mark.parametrize("target", [GPUTarget("cuda", 90, 32), GPUTarget("hip", "gfx942", 64)], ids=["sm_90", "gfx942"])
def test_events_crossing_iterations_and_marks_compile(target):
    with StageHook(PipelineOptions(), f"events-{target.arch}"):
        kernel = compile_kernel(pipelined_sum, PIPELINED_SUM_SIGNATURE, target, BLOCK=128)
    meta = json.loads(kernel.metadata.proton)
    table = [(s["name"], s["kind"], s["parent"]) for s in meta["scopes"]]
    # One id per event name; one per mark site, and Triton's LLVM may copy
    # the loop's mark (3.8+ unrolls or peels it): each copy is its own site.
    assert table[0] == ("copy", "event", -1), table
    assert table[1:] and set(table[1:]) == {("tile", "mark", -1)}, table
    if target.backend == "cuda":
        assert kernel.asm["cubin"]
        # Four record sites (two event starts, two ends; the mark): a clock read each.
        clocks = [line for line in kernel.asm["ptx"].splitlines() if re.search(r"%clock", line)]
        assert len(clocks) >= 5, clocks
    else:
        assert kernel.asm["hsaco"]
        assert kernel.asm["amdgcn"].count("s_memtime") >= 5 + 2


def test_an_event_handle_is_needed():
    import triton

    @triton.jit
    def bad(x):
        pl.start_event("copy")

    with StageHook(PipelineOptions(), "events-bad"):
        with pytest.raises(Exception, match="start_event takes an event from proton.language.allocate_event"):
            compile_kernel(bad, {"x": "*fp32"}, GPUTarget("cuda", 90, 32))
