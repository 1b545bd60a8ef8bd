"""Scopes in software-pipelined loops: the warning about what pipelining did
to a scope (NVIDIA), the clear error where Triton's AMD pipeliner cannot
pipeline a loop with markers, both on real compiles, and the TTGIR reading
on small handwritten modules."""

import inspect
import json
import warnings

import pytest
from triton.backends.compiler import GPUTarget

from proton import InstrumentationError, PipelineOptions, PipeliningWarning
from proton.compiling.stage_hook import StageHook
from proton.compiling.pipelining import markers_in_loops, pipelining_warnings

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


def test_amd_pipeliner_failure_names_the_scopes_in_the_loop():
    with pytest.raises(InstrumentationError) as error:
        compile_matmul(matmul, GFX942, 2, "amd-pipelined")
    line = source_line(matmul, 'pl.scope("iteration")')
    assert "Triton's AMD software pipeliner (num_stages=2)" in str(error.value)
    assert "'iteration' (" in str(error.value) and f"kernels.py:{line})" in str(error.value)
    assert "num_stages=1" in str(error.value)
    # Without pipelining the same kernel compiles, records in the loop.
    kernel = compile_matmul(matmul, GFX942, 1, "amd-unpipelined")
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
