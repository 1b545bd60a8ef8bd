"""Scopes in software-pipelined loops: the warning about what pipelining did
to a scope (NVIDIA), the loops with markers that Triton's AMD pipeliner
cannot take compiled unpipelined (the kernel's other loops pipelined) with a
warning, both on real compiles, and the TTIR/TTGIR reading and rewriting on
small handwritten modules."""

import inspect
import json
import re
import warnings

import pytest
import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget

import proton.language as pl

from proton import PipelineOptions, PipeliningWarning
from proton.compiling.stage_hook import StageHook
from proton.compiling.pipelining import (
    _loop_bodies,
    markers_in_loops,
    pipelining_moved_markers,
    pipelining_warnings,
    unpipeline_marker_loops,
)

from kernels import MATMUL_SIGNATURE, compile_kernel, matmul, matmul_load_scope

SM90 = GPUTarget("cuda", 90, 32)
GFX942 = GPUTarget("hip", "gfx942", 64)
TILES = dict(BM=128, BN=128, BK=64)


def compile_matmul(fn, target, num_stages, key):
    with StageHook(PipelineOptions(), key):
        return compile_kernel(fn, MATMUL_SIGNATURE, target, options={"num_stages": num_stages}, aligned=True, **TILES)


def source_line(jit_fn, text):
    lines, first = inspect.getsourcelines(jit_fn.fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def test_pipelined_loads_leaving_a_scope_are_reported_at_compile_and_in_metadata():
    with pytest.warns(PipeliningWarning) as caught:
        kernel = compile_matmul(matmul_load_scope, SM90, 3, "pipelined-load-scope")
    load_a = source_line(matmul_load_scope, "a = tl.load")
    message = next(str(w.message) for w in caught if "scope 'load'" in str(w.message))
    assert message.startswith("kernel matmul_load_scope: scope 'load' (")
    assert f"kernels.py:{load_a - 1})" in message  # where the scope starts
    assert f"line(s) {load_a}, {load_a + 1} in an earlier stage" in message
    # The loads did become asynchronous copies outside the scope.
    assert "ttg.async_copy_global_to_local" in kernel.asm["ttgir"]
    # The dot scope kept its contents: no message about it.
    assert not any("scope 'dot'" in str(w.message) for w in caught)
    assert json.loads(kernel.metadata.proton)["warnings"] == [message]


def test_no_pipelining_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error", PipeliningWarning)
        kernel = compile_matmul(matmul_load_scope, SM90, 1, "unpipelined-load-scope")
    assert "ttg.async_copy_global_to_local" not in kernel.asm["ttgir"]
    assert json.loads(kernel.metadata.proton)["warnings"] == []


def test_amd_loop_with_scopes_compiles_unpipelined_with_a_warning(capfd):
    with pytest.warns(PipeliningWarning) as caught:
        kernel = compile_matmul(matmul, GFX942, 2, "amd-pipelined")
    # The failed first attempt (3.6-3.8) printed its MLIR reproducer to a held-back stderr.
    assert "reproducer" not in capfd.readouterr().err
    line = source_line(matmul, 'pl.scope("iteration")')
    [message] = [str(w.message) for w in caught if "AMD software pipeliner" in str(w.message)]
    assert message.startswith("kernel matmul: Triton's AMD software pipeliner cannot pipeline a loop that holds")
    assert "'iteration' (" in message and f"kernels.py:{line})" in message
    assert "num_stages=1 for those loops only" in message
    metadata = json.loads(kernel.metadata.proton)
    assert [s["name"] for s in metadata["scopes"]] == ["mainloop", "iteration"]
    assert message in metadata["warnings"]
    assert kernel.asm["hsaco"]


@triton.jit
def two_k_loops(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        with pl.scope("profiled_k"):
            a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
            b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
            acc += tl.dot(a, b)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


def _shared_stores_per_loop(kernel):
    return [sum("ttg.local_store" in op.text for op in body) for body in _loop_bodies(kernel.asm["ttgir"])]


def test_amd_only_the_loops_with_scopes_lose_pipelining():
    plain = compile_kernel(two_k_loops, MATMUL_SIGNATURE, GFX942, options={"num_stages": 2}, aligned=True, **TILES)
    with pytest.warns(PipeliningWarning, match="'profiled_k'"):
        profiled = compile_matmul(two_k_loops, GFX942, 2, "amd-two-loops")
    pipelined = _shared_stores_per_loop(plain)
    assert len(pipelined) == 2 and all(pipelined), pipelined  # the stream pipeliner stages both through LDS
    # The loop with the scope runs as written; the other as in the plain build.
    assert _shared_stores_per_loop(profiled) == [0, pipelined[1]]
    assert [s["name"] for s in json.loads(profiled.metadata.proton)["scopes"]] == ["profiled_k"]


def test_amd_kernel_compiled_unpipelined_is_not_rewritten():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kernel = compile_matmul(matmul, GFX942, 1, "amd-unpipelined")
    assert not [w for w in caught if "cannot pipeline a loop" in str(w.message)]
    assert [s["name"] for s in json.loads(kernel.metadata.proton)["scopes"]] == ["mainloop", "iteration"]


LOCATIONS = """
#loc = loc("k.py":1:0)
#loc3 = loc("k.py":3:5)
#loc4 = loc("k.py":4:9)
#loc5 = loc("k.py":5:9)
#loc6 = loc("k.py":6:5)
#loc7 = loc("k.py":7:5)
#loc8 = loc("k.py":8:5)
#loc40 = loc("a"(#loc4))
#loc50 = loc(callsite(#loc5 at #loc))
"""


def loop(*body):
    return (
        "module {\n  tt.func public @k() {\n    %0 = scf.for %i = %c0 to %n step %c1 iter_args() -> () {\n"
        + "".join(f"      {op}\n" for op in body)
        + "    } loc(#loc)\n    tt.return loc(#loc)\n  } loc(#loc)\n}\n"
        + LOCATIONS
    )


def marker(kind, name, loc):
    return (
        f'%m = tt.elementwise_inline_asm "// @proton {kind} {name}" {{constraints = "=r,r", '
        f"packed_element = 1 : i32, pure = false}} %c0 : i32 -> i32 loc({loc})"
    )


def load(loc):
    return f"%x = tt.load %p : tensor<128x!tt.ptr<f32>> loc({loc})"


def copy(loc):
    return f"%y = ttg.async_copy_global_to_local %p, %s : tensor<128x!tt.ptr<f32>> -> <128xf32> loc({loc})"


def test_loads_that_stay_inside_their_scope_give_no_message():
    text = loop(marker("start", "load", "#loc3"), load("#loc40"), load("#loc50"), marker("end", "load", "#loc6"))
    assert pipelining_warnings(text) == []
    assert markers_in_loops(text) == ["'load' (k.py:3)"]


def test_loads_moved_out_are_found_through_named_and_callsite_locations():
    text = loop(copy("#loc40"), marker("start", "load", "#loc3"), marker("end", "load", "#loc6"), copy("#loc50"))
    [message] = pipelining_warnings(text)
    assert message.startswith("scope 'load' (k.py:3): software pipelining issues the loads of line(s) 4, 5 ")


def test_loads_of_other_lines_moved_into_a_scope():
    text = loop(marker("start", "dot", "#loc7"), copy("#loc40"), marker("end", "dot", "#loc8"))
    [message] = pipelining_warnings(text)
    assert message.startswith("scope 'dot' (k.py:7): software pipelining placed loads of line(s) 4 ")


def test_start_and_end_in_different_stages():
    # The end of one iteration's scope, then the start of the next one's.
    text = loop(marker("end", "load", "#loc6"), load("#loc40"), marker("start", "load", "#loc3"))
    messages = pipelining_warnings(text)
    assert len(messages) == 2
    assert all("its start and end are in different software-pipeline stages" in m for m in messages)
    assert messages[0].startswith("scope 'load' (k.py:6)") and messages[1].startswith("scope 'load' (k.py:3)")


def test_markers_outside_loops_are_not_reported():
    text = (
        "module {\n  tt.func public @k() {\n    "
        + marker("start", "s", "#loc3")
        + "\n    "
        + load("#loc40")
        + "\n    "
        + marker("end", "s", "#loc6")
        + "\n    tt.return loc(#loc)\n  } loc(#loc)\n}\n"
        + LOCATIONS
    )
    assert pipelining_warnings(text) == []
    assert markers_in_loops(text) == []


def closing_line(text):
    return next(line for line in text.splitlines() if line.strip().startswith("}") and "num_stages" in line)


def test_unpipeline_sets_one_stage_on_loops_with_markers_only():
    with_scope = loop(marker("start", "s", "#loc3"), load("#loc40"), marker("end", "s", "#loc6"))
    rewritten, scopes = unpipeline_marker_loops(with_scope, 2)
    assert closing_line(rewritten).strip() == "} {tt.num_stages = 1 : i32} loc(#loc)"
    assert scopes == ["'s' (k.py:3)"]
    # Every other line as it was.
    assert rewritten.replace(" {tt.num_stages = 1 : i32}", "") == with_scope
    without = loop(load("#loc40"))
    assert unpipeline_marker_loops(without, 2) == (without, [])
    # Not pipelined anyway: the kernel's num_stages is 1.
    assert unpipeline_marker_loops(with_scope, 1) == (with_scope, [])


def test_unpipeline_rewrites_a_loops_own_stages_and_keeps_its_other_attributes():
    base = loop(marker("start", "s", "#loc3"), marker("end", "s", "#loc6"))
    own = base.replace(
        "} loc(#loc)\n    tt.return",
        "} {tt.disallow_acc_multi_buffer, tt.num_stages = 3 : i32} loc(#loc)\n    tt.return",
    )
    rewritten, scopes = unpipeline_marker_loops(own, 1)  # its own 3 stages count, not the kernel's 1
    assert closing_line(rewritten).strip() == "} {tt.disallow_acc_multi_buffer, tt.num_stages = 1 : i32} loc(#loc)"
    assert scopes == ["'s' (k.py:3)"]
    other = base.replace("} loc(#loc)\n    tt.return", "} {tt.flatten} loc(#loc)\n    tt.return")
    rewritten, _ = unpipeline_marker_loops(other, 2)
    assert "} {tt.num_stages = 1 : i32, tt.flatten} loc(#loc)" in rewritten
    # Only loops that also hold an op matching `holding` (sm_100: its MMA loops).
    assert unpipeline_marker_loops(base, 2, re.compile(r"= tt\.dot ")) == (base, [])
    with_dot = base.replace(
        "%m = tt.elementwise_inline_asm", "%d = tt.dot %a, %b, %c\n      %m = tt.elementwise_inline_asm", 1
    )
    assert unpipeline_marker_loops(with_dot, 2, re.compile(r"= tt\.dot "))[1] == ["'s' (k.py:3)"]
    # A loop already at one stage is left as it is.
    single = base.replace("} loc(#loc)\n    tt.return", "} {tt.num_stages = 1 : i32} loc(#loc)\n    tt.return")
    assert unpipeline_marker_loops(single, 4) == (single, [])


def test_unpipeline_marks_the_loop_that_holds_the_marker_not_its_parent():
    text = (
        "module {\n  tt.func public @k() {\n"
        "    %0 = scf.for %i = %c0 to %n step %c1 iter_args() -> () {\n"
        "      %1 = scf.for %j = %c0 to %n step %c1 iter_args() -> () {\n"
        "        scf.if %c {\n"
        f"          {marker('start', 'inner', '#loc3')}\n"
        f"          {marker('end', 'inner', '#loc6')}\n"
        "        } loc(#loc)\n"
        "      } loc(#loc7)\n"
        f"      {load('#loc40')}\n"
        "    } loc(#loc8)\n    tt.return loc(#loc)\n  } loc(#loc)\n}\n" + LOCATIONS
    )
    rewritten, scopes = unpipeline_marker_loops(text, 2)
    changed = [line.strip() for line in rewritten.splitlines() if "num_stages" in line]
    assert changed == ["} {tt.num_stages = 1 : i32} loc(#loc7)"]  # the inner loop; the if's brace is not a loop's
    assert scopes == ["'inner' (k.py:3)"]


def branches(*bodies):
    """A function whose body is one scf.if per argument, each holding those ops."""
    ifs = "".join("    scf.if %c {\n" + "".join(f"      {op}\n" for op in ops) + "    } loc(#loc)\n" for ops in bodies)
    return "module {\n  tt.func public @k() {\n" + ifs + "    tt.return loc(#loc)\n  } loc(#loc)\n}\n" + LOCATIONS


def test_scopes_split_across_regions_by_pipelining_are_detected():
    ttir = loop(marker("start", "s", "#loc3"), load("#loc40"), marker("end", "s", "#loc6"))
    # Paired in the loop, plus a peeled copy paired in one branch: nothing split.
    assert not pipelining_moved_markers(
        ttir, ttir + branches([marker("start", "s", "#loc3"), marker("end", "s", "#loc6")])
    )
    # The peeled epilogue's start in one branch and its end in another (Triton 3.9's AMD pipeliner).
    split = branches([marker("start", "s", "#loc3")], [marker("end", "s", "#loc6")])
    assert pipelining_moved_markers(ttir, split)
    # A start and end in different stages of the loop: the end first.
    assert pipelining_moved_markers(
        ttir, loop(marker("end", "s", "#loc6"), load("#loc40"), marker("start", "s", "#loc3"))
    )
    # What the TTIR already had unpaired (a user's early return) is not pipelining's doing.
    assert not pipelining_moved_markers(split, split)
