"""Markers never change how LLVM compiles a kernel's arithmetic: the llir
stage puts them into the unprofiled build's optimized IR
(proton.compiling.plain_arithmetic), so an instrumented kernel's floating-point
instructions pair their operands as the plain kernel's do. Compiled on the
CPU for sm_90, through ptxas."""

import json
import re

import pytest
import triton
from triton.backends.compiler import GPUTarget

from proton.compiling import plain_arithmetic
from proton.compiling import stage_hook as hook_mod
from proton.compiling.compiler import PipelineOptions
from proton.compiling.override import translate
from proton.compiling.stage_hook import StageHook
from proton.compiling.ttgir_rewriter import rewrite_text
from proton.contract.errors import PipeliningWarning

from kernels import DECAYED_STATE_SIGNATURE, compile_kernel, decayed_state
from ptx_arithmetic import float_ops

SM90 = GPUTarget("cuda", 90, 32)
SCOPES = ["load_q", "load_k", "load_v", "load_g", "compute"]


def _compile(hook_key=None):
    if hook_key is None:
        return compile_kernel(decayed_state, DECAYED_STATE_SIGNATURE, SM90, K=64, V=64)
    with StageHook(PipelineOptions(), hook_key):
        return compile_kernel(decayed_state, DECAYED_STATE_SIGNATURE, SM90, K=64, V=64)


def _scopes(kernel) -> list[dict]:
    return json.loads(kernel.metadata.proton)["scopes"]


def test_scopes_between_loads_keep_the_plain_builds_arithmetic(recwarn):
    plain = _compile()
    instrumented = _compile("plain-arithmetic")
    assert float_ops(instrumented.asm["ptx"]) == float_ops(plain.asm["ptx"])
    assert [scope["name"] for scope in _scopes(instrumented)] == SCOPES
    # Every marker became a record (two clock reads per scope per iteration at least).
    assert len(re.findall(r"%clock", instrumented.asm["ptx"])) >= 2 * len(SCOPES)
    assert "@proton" not in instrumented.asm["ptx"]
    # The scope table still names each marker's own source line.
    for scope in _scopes(instrumented):
        file, line, _ = scope["loc"].rsplit(":", 2)
        assert file.endswith("kernels.py"), scope
        with open(file) as source:
            assert f'"{scope["name"]}"' in source.read().splitlines()[int(line) - 1], scope
    assert not [w for w in recwarn if "LLVM optimized" in str(w.message)]


def test_markers_left_where_O3_put_them_change_the_arithmetic_and_say_so(monkeypatch):
    """Without the placement (as before it), this kernel's FMAs pair other
    products; where the placement cannot be done, the compile says so."""
    monkeypatch.setattr(hook_mod, "place_in_plain_build", lambda marked, plain: None)
    monkeypatch.setattr(hook_mod, "same_without_markers", lambda marked, plain: False)
    plain = _compile()
    with pytest.warns(PipeliningWarning, match=r"kernel decayed_state: LLVM optimized this kernel differently"):
        instrumented = _compile("markers-through-O3")
    assert float_ops(instrumented.asm["ptx"]) != float_ops(plain.asm["ptx"])
    warnings = json.loads(instrumented.metadata.proton)["warnings"]
    assert any("LLVM optimized" in w for w in warnings), warnings


def test_override_records_keep_the_plain_builds_arithmetic(tmp_path):
    """The override workflow's records (insert_proton_records' default: a
    scope around each load) on the plain kernel's own TTGIR."""
    plain = _compile()
    plain_ttgir = tmp_path / "plain.ttgir"
    plain_ttgir.write_text(plain.asm["ttgir"])
    recorded = rewrite_text(plain.asm["ttgir"], path=str(plain_ttgir)).text
    assert recorded.count("proton.record start") >= 4
    marked = tmp_path / "marked.ttgir"
    marked.write_text(translate(recorded, str(marked))[0])
    reference = triton.compile(str(plain_ttgir), target=SM90)
    with StageHook(PipelineOptions(), "override-arithmetic"):
        instrumented = triton.compile(str(marked), target=SM90)
    assert instrumented.metadata.profile_scratch_size > 0
    assert float_ops(instrumented.asm["ptx"]) == float_ops(reference.asm["ptx"])


# The placement itself, on small modules.

PLAIN = """\
define void @k(ptr %0, ptr %1) {
  %3 = load float, ptr %0
  %4 = fmul float %3, 2.0
  store float %4, ptr %1
  br label %5

5:
  %6 = phi float [ %4, %2 ], [ %8, %5 ]
  %7 = fadd float %6, %3
  %8 = fmul float %7, %7
  store float %8, ptr %1
  br i1 true, label %5, label %9

9:
  ret void
}
"""


def _marker(kind, name, value="%99", result="%m"):
    return f'  {result} = tail call i32 asm sideeffect "// @proton {kind} {name}", "=r,r"(i32 {value}) #3, !dbg !7'


def test_a_marker_goes_after_the_instruction_it_followed():
    marked = PLAIN.replace(
        "  %4 = fmul float %3, 2.0\n",
        "  %4 = fmul float %3, 2.0\n" + _marker("start", "a", "0", "%90") + "\n",
    ).replace("  store float %4, ptr %1\n", "  store float %4, ptr %1\n" + _marker("end", "a", "0", "%91") + "\n")
    placed = plain_arithmetic.place_in_plain_build(marked, PLAIN)
    lines = placed.splitlines()
    start = next(i for i, line in enumerate(lines) if "@proton start a" in line)
    end = next(i for i, line in enumerate(lines) if "@proton end a" in line)
    assert "fmul float %3, 2.0" in lines[start - 1]
    assert "store float %4" in lines[end - 1] and end == start + 2
    # Fresh names, no attribute group or metadata of the other module.
    assert "%proton.marker." in lines[start] and "#3" not in lines[start] and "!dbg" not in lines[start]


def test_a_marker_never_crosses_a_side_effect_nor_lands_among_phis():
    marked = PLAIN.replace(
        "  %6 = phi float [ %4, %2 ], [ %8, %5 ]\n",
        "  %6 = phi float [ %4, %2 ], [ %8, %5 ]\n" + _marker("start", "loop", "0", "%90") + "\n",
    ).replace("  store float %8, ptr %1\n", _marker("end", "loop", "0", "%91") + "\n  store float %8, ptr %1\n")
    placed = plain_arithmetic.place_in_plain_build(marked, PLAIN).splitlines()
    start = next(i for i, line in enumerate(placed) if "@proton start loop" in line)
    end = next(i for i, line in enumerate(placed) if "@proton end loop" in line)
    assert "phi float" in placed[start - 1]
    assert "store float %8" in placed[end + 1]


def test_builds_that_differ_in_side_effects_are_not_matched():
    marked = PLAIN.replace("  store float %4, ptr %1\n", "  store float %4, ptr %0\n  store float %4, ptr %1\n")
    marked = marked.replace("  br label %5\n", _marker("start", "x", "0", "%90") + "\n  br label %5\n")
    assert plain_arithmetic.place_in_plain_build(marked, PLAIN) is None


def test_a_value_marker_records_the_plain_builds_value_or_is_not_placed():
    marked = PLAIN.replace(
        "  %8 = fmul float %7, %7\n", "  %8 = fmul float %7, %7\n" + _marker("value", "v", "%8", "%90") + "\n"
    )
    placed = plain_arithmetic.place_in_plain_build(marked, PLAIN.replace("%8", "%80"))
    assert placed is not None and '"=r,r"(i32 %80)' in placed
    unknown = PLAIN.replace("  br label %5\n", _marker("value", "w", "%77", "%90") + "\n  br label %5\n")
    assert plain_arithmetic.place_in_plain_build(unknown, PLAIN) is None


def test_markers_on_an_edge_get_a_block_of_their_own():
    """A scope closed on an early return: the instrumented build has a block
    of markers on the edge, the plain one branches straight on."""
    plain = PLAIN
    marked = plain.replace(
        "label %9\n\n9:", "label %20\n\n20:\n" + _marker("end", "early", "0", "%90") + "\n  br label %9\n\n9:"
    )
    placed = plain_arithmetic.place_in_plain_build(marked, plain)
    assert placed is not None
    assert "label %proton.edge.0" in placed
    edge = placed.split("proton.edge.0:\n", 1)[1]
    assert "@proton end early" in edge.splitlines()[0] and edge.splitlines()[1].strip() == "br label %9"


def test_without_markers_removes_only_the_marker_ops():
    ttgir = (
        "    %c0 = arith.constant 0 : i32\n"
        '    %0 = tt.elementwise_inline_asm "// @proton start a" {constraints = "=r,r"} %c0 : i32 -> i32\n'
        "    %1 = arith.addi %c0, %c0 : i32\n"
    )
    assert (
        plain_arithmetic.without_markers(ttgir)
        == "    %c0 = arith.constant 0 : i32\n\n    %1 = arith.addi %c0, %c0 : i32\n"
    )


def test_a_placement_the_pipeline_refuses_keeps_the_instrumented_build(monkeypatch):
    """A bug in the placement never fails the user's compile: the kernel
    keeps its instrumented build, records and all, and the compile warns."""
    monkeypatch.setattr(hook_mod, "place_in_plain_build", lambda marked, plain: "this is not LLVM IR")
    monkeypatch.setattr(hook_mod, "same_without_markers", lambda marked, plain: False)
    with pytest.warns(PipeliningWarning, match=r"kernel decayed_state: LLVM optimized"):
        instrumented = _compile("placement-refused")
    assert [scope["name"] for scope in _scopes(instrumented)] == SCOPES
    assert instrumented.metadata.profile_scratch_size > 0
