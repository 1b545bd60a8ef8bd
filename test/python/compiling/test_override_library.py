"""The override workflow on kernels written the way libraries write them
(library_kernels: early and multiple returns, reductions, branches in loops,
autotuned variants), on the CPU for sm_90: proton-dump-ttgir dumps every
kernel, insert_proton_records instruments every one (no file skipped), and
Triton's TRITON_KERNEL_OVERRIDE compile with the session's hook records the
inserted scopes; a file that cannot be instrumented is skipped with its
reason while the others are written. The GPU run is test_gpu_override.py."""

import json
import re
import subprocess
import sys

import pytest
import triton
from triton.backends.compiler import GPUTarget

from proton.compiling.compiler import PipelineOptions
from proton.compiling.override import is_variant_file
from proton.compiling.stage_hook import StageHook
from proton.compiling.ttgir_rewriter import RewriteError, rewrite_text, verify_records

import library_kernels
from kernels import compile_kernel
from test_override import cli
import suite_paths

SM90 = GPUTarget("cuda", 90, 32)

DUMP_SCRIPT = """
import sys
sys.path[:0] = {import_path!r}
from triton.backends.compiler import GPUTarget
from kernels import compile_kernel
from library_kernels import COMPILES
for fn, signature, constexprs in COMPILES:
    compile_kernel(fn, signature, GPUTarget("cuda", 90, 32), **constexprs)
"""


@pytest.fixture(scope="module")
def instrumented_dump(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("library")
    script = tmp / "compile_library.py"
    script.write_text(DUMP_SCRIPT.format(import_path=suite_paths.IMPORT_PATH))
    out = tmp / "ttgir_dump"
    env = dict(__import__("os").environ, TRITON_CACHE_DIR=str(tmp / "cache"))
    subprocess.run(
        cli("proton-dump-ttgir", "proton.commands.dump_ttgir") + ["--out", str(out), sys.executable, str(script)],
        check=True,
        env=env,
    )
    done = subprocess.run(
        cli("insert_proton_records", "proton.commands.insert_proton_records") + [str(out)],
        capture_output=True,
        text=True,
    )
    return tmp, out, done


def test_every_library_kernel_is_instrumented(instrumented_dump):
    _tmp, out, done = instrumented_dump
    assert done.returncode == 0 and "skipped" not in done.stderr, done.stderr
    files = sorted(out.rglob("*.ttgir"))
    tritons = [f for f in files if not is_variant_file(f)]
    assert sorted(f.name for f in tritons) == sorted(
        ["rms_norm_fwd.ttgir", "cross_entropy_fwd.ttgir", "block_sums.ttgir", "swiglu_fwd.ttgir", "swiglu_fwd.ttgir"]
    )
    # And one file per compiled variant, every one of them instrumented too.
    variants = sorted(f.name.split(".variant-")[0] for f in files if is_variant_file(f))
    assert variants == ["block_sums", "cross_entropy_fwd", "rms_norm_fwd", "swiglu_fwd", "swiglu_fwd"]
    for f in files:
        text = f.read_text()
        returns = len(re.findall(r"^\s*tt\.return\b", text, re.M))
        # The kernel scope ends on every way out: one end per tt.return.
        assert text.count('proton.record end "kernel"') == returns, f
        assert text.count('proton.record start "kernel"') == 1, f
        names = [n for n, _, _ in verify_records(text, str(f))]
        assert "kernel" in names and any(n.startswith("load_") for n in names), f
    ce = next(f for f in tritons if f.name == "cross_entropy_fwd.ttgir").read_text()
    assert ce.count('proton.record end "kernel"') == 3  # past the last row, ignored label, the end


def test_override_compiles_record_the_inserted_scopes(instrumented_dump):
    tmp, out, _done = instrumented_dump
    with triton.knobs.compilation.scope(), triton.knobs.cache.scope():
        triton.knobs.compilation.override = True
        triton.knobs.compilation.always_compile = True
        triton.knobs.cache.override_dir = str(out)
        triton.knobs.cache.dir = str(tmp / "cache2")
        with StageHook(PipelineOptions(), "library-override"):
            kernels = [compile_kernel(fn, sig, SM90, **constexprs) for fn, sig, constexprs in library_kernels.COMPILES]
    for kernel in kernels:
        meta = json.loads(kernel.metadata.proton)
        names = {s["name"] for s in meta["scopes"]}
        assert "kernel" in names and any(n.startswith("load_") for n in names), kernel.name
        assert "%clock64" in kernel.asm["ptx"] and kernel.asm["cubin"]


EARLY_RETURN = """\
module {
  tt.func public @k(%x: !tt.ptr<f32>, %n: i32) {
    %c = arith.constant 0 : i32
    %0 = arith.cmpi sge, %n, %c : i32
    cf.cond_br %0, ^bb1, ^bb2
  ^bb1:  // pred: ^bb0
    tt.return
  ^bb2:  // pred: ^bb0
    %1 = tt.load %x : !tt.ptr<f32>
    %2 = arith.addf %1, %1 : f32
    tt.store %x, %2 : !tt.ptr<f32>
    tt.return
  }
}
"""


def test_default_strategy_ends_the_kernel_scope_at_every_return():
    text = rewrite_text(EARLY_RETURN, path="k.ttgir").text
    lines = text.splitlines()
    ends = [i for i, line in enumerate(lines) if 'proton.record end "kernel"' in line]
    assert [lines[i + 1].strip() for i in ends] == ["tt.return", "tt.return"]
    assert lines[2].strip() == 'proton.record start "kernel"'
    assert sorted(n for n, _, _ in verify_records(text)) == ["compute", "kernel", "kernel", "load_1"]


def test_records_may_not_cross_blocks_except_on_every_path():
    # An end on one path out but not the other: named with the start's line.
    one_path = EARLY_RETURN.replace(
        "    %c = arith.constant", '    proton.record start "a"\n    %c = arith.constant'
    ).replace(
        "  ^bb1:  // pred: ^bb0\n    tt.return", '  ^bb1:  // pred: ^bb0\n    proton.record end "a"\n    tt.return'
    )
    with pytest.raises(RewriteError, match=r"x\.ttgir:3: proton\.record start 'a' is never ended"):
        verify_records(one_path, "x.ttgir")
    # A scope cannot be asked to span blocks.
    with pytest.raises(RewriteError, match="not in the same block"):
        rewrite_text(EARLY_RETURN, path="x.ttgir", scopes=["a:4:9"])
    # Nor be put after a branch.
    with pytest.raises(RewriteError, match="after the terminator cf.cond_br"):
        rewrite_text(EARLY_RETURN, path="x.ttgir", scopes=["a:5:5"])


def test_a_file_that_cannot_be_instrumented_is_skipped_and_the_others_written(tmp_path):
    good = tmp_path / "d" / "A" / "good.ttgir"
    bad = tmp_path / "d" / "B" / "bad.ttgir"
    good.parent.mkdir(parents=True)
    bad.parent.mkdir(parents=True)
    good.write_text(EARLY_RETURN)
    bad.write_text(EARLY_RETURN.replace("tt.func public", "tt.func public", 1) + "}\n")  # unbalanced
    done = subprocess.run(
        cli("insert_proton_records", "proton.commands.insert_proton_records") + [str(tmp_path / "d")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert f"skipped {bad}: {bad}:15: unbalanced '}}'" in done.stderr
    assert "1 file(s) instrumented, 1 skipped" in done.stderr
    assert "proton.record" in good.read_text() and "proton.record" not in bad.read_text()
    assert not (bad.parent / "bad.ttgir.bak").exists()
    # Every file refused: nothing written, status 2.
    only_bad = subprocess.run(
        cli("insert_proton_records", "proton.commands.insert_proton_records") + [str(bad)],
        capture_output=True,
        text=True,
    )
    assert only_bad.returncode == 2 and "nothing written" in only_bad.stderr
