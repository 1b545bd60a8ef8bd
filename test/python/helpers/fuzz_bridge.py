"""Mutations of a real Triton kernel's LLVM IR (debug info included) through
Proton's compiler; run as a child process by test_fuzz.py, so that an abort
shows as the child's death. Prints the outcome counts; exits 1 on an
exception other than InstrumentationError."""

import sys

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget

import proton.compiling.stage_hook as hook
import proton.language as pl
from proton.compiling.compiler import InstrumentationError, PipelineOptions, instrument_llvm_ir

from ir_mutations import mutations
from kernels import compile_kernel


@triton.jit
def softmax(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    with pl.scope("softmax"):
        x = tl.load(x_ptr + row * n + offs, mask=offs < n, other=-float("inf"))
        e = tl.exp(x - tl.max(x, 0))
        tl.store(out_ptr + row * n + offs, e / tl.sum(e, 0), mask=offs < n)


def real_llvm_ir() -> str:
    seen = []
    original = hook.instrument_llvm_ir
    hook.instrument_llvm_ir = lambda text, options: seen.append(text) or original(text, options)
    triton.knobs.compilation.always_compile = True
    with hook.StageHook(PipelineOptions(), "fuzz"):
        compile_kernel(
            softmax, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}, GPUTarget("cuda", 90, 32), BLOCK=256
        )
    hook.instrument_llvm_ir = original
    return seen[0]


#: Tokens of real Triton LLVM IR, spliced into mutated lines.
TOKENS = ["%0", "i32", "i64", "float", "ptr", "!dbg !3", "#0", "(", ")", ",", "!{", "}", "@llvm.", "0x", "-1"]


def main(count: int) -> int:
    text = real_llvm_ir()
    assert "!dbg" in text and "// @proton" in text
    outcomes = {"instrumented": 0, "refused": 0}
    options = PipelineOptions(arch="sm_90", num_warps=4)
    for mutated in mutations(text, count, 1234, TOKENS, max_edits=3):
        try:
            instrument_llvm_ir(mutated, options)
            outcomes["instrumented"] += 1
        except InstrumentationError:
            outcomes["refused"] += 1
    print(outcomes)
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1])))
