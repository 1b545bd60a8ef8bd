"""The kernel corpus (test/python/corpus) compiled on the CPU for every target
each case supports: a plain build is unchanged by an active session whose
markers are off, and an instrumented build goes through the assembler with
exactly the kernel's scopes and a counter read per record site, and (for
NVIDIA targets) the floating-point instructions of the unprofiled build."""

import json
import re

import pytest
import triton

import proton.language
from proton.compiling.compiler import PipelineOptions
from proton.compiling.stage_hook import StageHook

from corpus import ALL, CASES, compile_case, triton_version
from ptx_arithmetic import float_ops

PARAMS = [
    pytest.param(case, target, id=f"{case.name}-{target}") for case in CASES for target in ALL if target in case.targets
]


@pytest.fixture(autouse=True)
def always_compile():
    """Plain, unmarked and marked builds share a source: compile each anew
    rather than take another's from Triton's cache."""
    compilation = triton.knobs.compilation
    saved = compilation.always_compile
    compilation.always_compile = True
    try:
        yield
    finally:
        compilation.always_compile = saved


def _skip_unsupported_version(case):
    version = triton_version()
    if not case.min_version <= version <= case.max_version:
        pytest.skip(f"{case.name} needs Triton {case.min_version} to {case.max_version}, have {triton.__version__}")


def _declarations(llvm_ir):
    """`declare` lines without their attribute-group and metadata numbers."""
    return {
        re.sub(r"!\d+", "!N", re.sub(r"\s*#\d+$", "", line))
        for line in llvm_ir.splitlines()
        if line.startswith("declare")
    }


def _final_asm(kernel, target):
    return kernel.asm["ptx"] if target.startswith("cuda") else kernel.asm["amdgcn"]


@pytest.mark.parametrize("case, target", PARAMS)
def test_plain_build_unchanged_by_session(case, target, monkeypatch):
    _skip_unsupported_version(case)
    plain = compile_case(case, target)
    with StageHook(PipelineOptions(), "corpus"):
        # The session is active, but the markers see it as off: they emit nothing.
        monkeypatch.setattr(proton.language.instrumentation_state, "instrumentation_active", lambda: False)
        unmarked = compile_case(case, target)
        monkeypatch.undo()
    assert _final_asm(unmarked, target) == _final_asm(plain, target)
    assert "@proton" not in _final_asm(unmarked, target)


@pytest.mark.parametrize("case, target", PARAMS)
def test_instrumented_build_assembles(case, target):
    _skip_unsupported_version(case)
    with StageHook(PipelineOptions(), "corpus"):
        kernel = compile_case(case, target)
    binary = kernel.asm["cubin"] if target.startswith("cuda") else kernel.asm["hsaco"]
    assert binary, "no binary: the build did not go through the assembler"
    names = [scope["name"] for scope in json.loads(kernel.metadata.proton)["scopes"]]
    # Exactly the kernel's scope names; a scope whose code a compiler copied
    # (tl.static_range, a loop LLVM unrolled) is in the table once per copy.
    assert set(names) == set(case.scopes) and len(names) >= len(case.scopes)
    # Triton's own declarations (intrinsic names, parameter attributes) are
    # in the instrumented LLVM IR as Triton wrote them in the plain build.
    plain = compile_case(case, target)
    for line in _declarations(plain.asm["llir"]):
        assert line in _declarations(kernel.asm["llir"]), f"{line!r} changed"
    asm = _final_asm(kernel, target)
    assert "@proton" not in asm
    if target.startswith("cuda"):
        clock_reads = [line for line in asm.splitlines() if re.search(r"%clock", line)]
        assert len(clock_reads) >= case.record_sites
        # The records change no arithmetic: the floating-point instructions
        # are the unprofiled build's (plain_arithmetic.py).
        assert float_ops(asm) == float_ops(plain.asm["ptx"])
    else:
        assert "s_memtime" in asm or "s_memrealtime" in asm
        assert asm.count("s_memtime") >= case.record_sites
