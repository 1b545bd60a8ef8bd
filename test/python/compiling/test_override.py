"""The TTGIR override workflow on the CPU, for sm_90: proton-dump-ttgir, then
insert_proton_records, then Triton's own TRITON_KERNEL_OVERRIDE compile with
the instrumentation hook installed; and the record translation on its own."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import triton
from triton.backends.compiler import GPUTarget

from proton.compiling import stage_hook as hook_mod
from proton.compiling.compiler import PipelineOptions
from proton.compiling.stage_hook import StageHook
from proton.compiling.override import OverrideError, is_variant_file, translate

from kernels import VECTOR_ADD_SIGNATURE, compile_kernel, vector_add
import suite_paths

SM90 = GPUTarget("cuda", 90, 32)
BIN = Path(sys.executable).parent


def cli(name, module):
    """A console script next to this Python, or its module (a --target install has no scripts there)."""
    return [str(BIN / name)] if (BIN / name).exists() else [sys.executable, "-m", module]


TTGIR = """\
module {
  tt.func public @k(%x: !tt.ptr<f32>) {
    proton.record start "load x"
    %0 = tt.load %x : !tt.ptr<f32>
    proton.record end "load x" loc(#loc3)
    tt.return
  }
}
"""


def test_translate_keeps_lines_and_emits_the_language_markers():
    text, count = translate(TTGIR, "/d/k.ttgir")
    assert count == 2
    lines = text.split("\n")
    assert len(lines) == len(TTGIR.split("\n"))
    assert lines[2] == (
        '    %proton_c3 = arith.constant 0 : i32 loc("/d/k.ttgir":3:5) %proton_m3 = '
        'tt.elementwise_inline_asm "// @proton start load x ;loc=/d/k.ttgir:3:5" '
        '{constraints = "=r,r", packed_element = 1 : i32, pure = false} %proton_c3 : i32 -> i32 '
        'loc("/d/k.ttgir":3:5)'
    )
    # An explicit location is kept.
    assert lines[4].endswith(
        '"// @proton end load x ;loc=/d/k.ttgir:5:5" {constraints = "=r,r", '
        'packed_element = 1 : i32, pure = false} %proton_c5 : i32 -> i32 loc(#loc3)'
    )
    assert lines[3] == "    %0 = tt.load %x : !tt.ptr<f32>"


@pytest.mark.parametrize(
    "line, message",
    [
        ('proton.record begin "x"', r"/d/k\.ttgir:3: malformed record"),
        ('proton.record start x', r"/d/k\.ttgir:3: malformed record"),
        ('proton.record start "a;b"', r"/d/k\.ttgir:3: .*contains ';'"),
        ('proton.record start ""', r"/d/k\.ttgir:3: .*must be non-empty"),
    ],
)
def test_bad_records_name_the_file_and_line(line, message):
    bad = TTGIR.replace('proton.record start "load x"', line)
    with pytest.raises(OverrideError, match=message):
        translate(bad, "/d/k.ttgir")


DUMP_SCRIPT = """
import sys
sys.path[:0] = {import_path!r}
from triton.backends.compiler import GPUTarget
from kernels import VECTOR_ADD_SIGNATURE, compile_kernel, vector_add
compile_kernel(vector_add, VECTOR_ADD_SIGNATURE, GPUTarget("cuda", 90, 32), BLOCK=1024)
"""


@pytest.fixture
def dump_dir(tmp_path, monkeypatch):
    """proton-dump-ttgir over a script that compiles the vector add for sm_90,
    then insert_proton_records (default strategy) over the dump."""
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "cache"))
    script = tmp_path / "compile_vector_add.py"
    script.write_text(DUMP_SCRIPT.format(import_path=suite_paths.IMPORT_PATH))
    out = tmp_path / "ttgir_dump"
    subprocess.run(
        cli("proton-dump-ttgir", "proton.commands.dump_ttgir") + ["--out", str(out), sys.executable, str(script)],
        check=True,
    )
    files = [f for f in out.rglob("*.ttgir") if not is_variant_file(f)]
    assert [f.name for f in files] == ["vector_add.ttgir"]
    # The script never imports proton: the dump's startup hook kept its one compiled variant too.
    (variant,) = files[0].parent.glob("vector_add.variant-*.ttgir")
    assert variant.read_text() == files[0].read_text()
    assert "proton.record" not in files[0].read_text()
    done = subprocess.run(
        cli("insert_proton_records", "proton.commands.insert_proton_records") + [str(out)],
        check=True,
        capture_output=True,
        text=True,
    )
    assert "vector_add.ttgir" in done.stdout
    return out, files[0]


def test_override_compile_instruments_the_inserted_records(dump_dir, tmp_path):
    out, ttgir = dump_dir
    inserted = re.findall(r'proton\.record (start|end) "([^"]+)"', ttgir.read_text())
    assert inserted and len(inserted) % 2 == 0
    names = sorted({name for _, name in inserted})
    with triton.knobs.compilation.scope(), triton.knobs.cache.scope():
        triton.knobs.compilation.override = True
        triton.knobs.compilation.always_compile = True
        triton.knobs.cache.override_dir = str(out)
        triton.knobs.cache.dir = str(tmp_path / "cache2")
        hook = StageHook(PipelineOptions(clock_bits=32), "override-test")
        with hook:
            # While installed, Triton reads a translated mirror; the user's
            # files are left as they are.
            assert triton.knobs.cache.override_dir != str(out)
            assert hook.overrides.records == 2 * len(inserted)  # Triton's file and the variant's
            kernel = compile_kernel(vector_add, VECTOR_ADD_SIGNATURE, SM90, BLOCK=1024)
        assert triton.knobs.cache.override_dir == str(out)
        assert hook.overrides.mirror is None
    meta = json.loads(kernel.metadata.proton)
    assert sorted(s["name"] for s in meta["scopes"]) == names
    # Scope locations name the user's override file (the compiled variant's) and the record's line.
    (variant,) = ttgir.parent.glob("vector_add.variant-*.ttgir")
    lines = variant.read_text().split("\n")
    for scope in meta["scopes"]:
        file, line, column = scope["loc"].rsplit(":", 2)
        assert file == str(variant), scope
        assert f'proton.record start "{scope["name"]}"' in lines[int(line) - 1], scope
    ptx = kernel.asm["ptx"]
    assert len(re.findall(r"mov\.u32 %r\d+, %clock;", ptx)) == len(inserted)
    assert "@proton" not in ptx
    assert kernel.asm["cubin"]
    assert "proton.record" in ttgir.read_text()  # untouched


def test_override_without_a_session_is_left_to_triton(dump_dir, tmp_path):
    """Without the hook Triton parses the file itself: the mirror is not made."""
    out, _ = dump_dir
    hook = StageHook(PipelineOptions(), "unused")
    with triton.knobs.compilation.scope(), triton.knobs.cache.scope():
        triton.knobs.compilation.override = False
        triton.knobs.cache.override_dir = str(out)
        with hook:
            assert triton.knobs.cache.override_dir == str(out)
            assert hook.overrides.mirror is None


def test_missing_override_dir_is_a_clear_error(tmp_path):
    with triton.knobs.compilation.scope(), triton.knobs.cache.scope():
        triton.knobs.compilation.override = True
        triton.knobs.cache.override_dir = str(tmp_path / "nowhere")
        with pytest.raises(OverrideError, match="override directory .*nowhere does not exist"):
            StageHook(PipelineOptions(), "missing").install()


def test_malformed_override_file_fails_at_install(tmp_path):
    (tmp_path / "HASH").mkdir()
    bad = tmp_path / "HASH" / "k.ttgir"
    bad.write_text(TTGIR.replace('"load x"', '"load;x"'))
    with triton.knobs.compilation.scope(), triton.knobs.cache.scope():
        triton.knobs.compilation.override = True
        triton.knobs.cache.override_dir = str(tmp_path)
        hook = StageHook(PipelineOptions(), "malformed")
        with pytest.raises(OverrideError, match=re.escape(str(bad)) + ":3:"):
            hook.install()
        assert triton.knobs.runtime.add_stages_inspection_hook is not hook


def test_dump_run_installs_a_dump_hook():
    # Triton 3.7+ specializes a launch made under any stage inspection hook
    # with one more entry, which changes the hash TRITON_KERNEL_OVERRIDE
    # files are looked up by: the dump run gets a hook that gives no key and
    # changes no stage but for keeping each compiled variant's TTGIR.
    code = (
        "import proton, triton; h = triton.knobs.runtime.add_stages_inspection_hook; "
        "print(h is not None, h() if h else None, h(None, {'llir': 1}, None, None, None) if h else None)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, hook_mod.DUMP_ENV: "1"}
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True ('', '') None"
    plain = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert plain.stdout.strip() == "False None None"


def test_unreadable_override_file_is_a_clear_error(tmp_path):
    from proton.compiling.override import OverrideError, OverrideTranslation

    (tmp_path / "k").mkdir()
    (tmp_path / "k" / "kernel.ttgir").write_bytes(b'proton.record start "a"\n\xff\xfe')
    with triton.knobs.compilation.scope(), triton.knobs.cache.scope():
        triton.knobs.compilation.override = True
        triton.knobs.cache.override_dir = str(tmp_path)
        with pytest.raises(OverrideError, match=r"kernel.ttgir: not UTF-8 text \(byte 0xff at offset 24\)"):
            OverrideTranslation().install()


def test_override_builds_are_keyed_by_the_override_files(tmp_path):
    """A kernel built from override files must never come back from
    Triton's cache to a session without them (or with edited ones): the
    files' digest is part of the builds' cache key while overriding is on."""
    (tmp_path / "HASH").mkdir()
    ttgir = tmp_path / "HASH" / "k.ttgir"
    ttgir.write_text(TTGIR)
    plain_key = StageHook(PipelineOptions(), "keyed").cache_key()
    keys = []
    for text in (TTGIR, TTGIR.replace('"load x"', '"load y"')):
        ttgir.write_text(text)
        with triton.knobs.compilation.scope(), triton.knobs.cache.scope():
            triton.knobs.compilation.override = True
            triton.knobs.cache.override_dir = str(tmp_path)
            with StageHook(PipelineOptions(), "keyed") as hook:
                keys.append(hook.cache_key())
                if not hook_mod.HOOK_GIVES_CACHE_KEY:
                    assert triton.knobs.compilation.instrumentation_mode == keys[-1]
                else:
                    assert hook()[0] == keys[-1]
            assert hook.cache_key() == plain_key  # the digest goes with the override
    assert keys[0].startswith(plain_key + "|override:") and keys[0] != keys[1]


VARIANTS_SCRIPT = """
import sys
sys.path[:0] = {import_path!r}
from triton.backends.compiler import GPUTarget
from kernels import VECTOR_ADD_SIGNATURE, compile_kernel, vector_add
target = GPUTarget("cuda", 90, 32)
for warps in (4, 8):  # an autotuner's two configs: same source and constexprs, other num_warps
    compile_kernel(vector_add, VECTOR_ADD_SIGNATURE, target, options={{"num_warps": warps}}, BLOCK=1024)
"""


def test_each_compiled_variant_compiles_from_its_own_override_file(tmp_path, monkeypatch):
    """Triton keys its dump and override files by the kernel's source only:
    two configs of one kernel (num_warps 4 and 8) share one file, the last
    compiled, and Triton's override would compile both from it (other
    layouts, other results). proton-dump-ttgir keeps a file per variant and
    the session's hook gives each compile its own; a variant the dump never
    saw compiles as it is, without the override's records, and says so."""
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "cache"))
    script = tmp_path / "two_variants.py"
    script.write_text(VARIANTS_SCRIPT.format(import_path=suite_paths.IMPORT_PATH))
    out = tmp_path / "ttgir_dump"
    subprocess.run(
        cli("proton-dump-ttgir", "proton.commands.dump_ttgir") + ["--out", str(out), sys.executable, str(script)],
        check=True,
    )
    variants = sorted(out.glob("*/vector_add.variant-*.ttgir"))
    assert len(variants) == 2 and len(list(out.glob("*/vector_add.ttgir"))) == 1
    assert variants[0].parent == variants[1].parent  # one source hash: Triton keeps one file for both
    subprocess.run(cli("insert_proton_records", "proton.commands.insert_proton_records") + [str(out)], check=True)
    with triton.knobs.compilation.scope(), triton.knobs.cache.scope():
        triton.knobs.compilation.override = True
        triton.knobs.compilation.always_compile = True
        triton.knobs.cache.override_dir = str(out)
        triton.knobs.cache.dir = str(tmp_path / "cache2")
        with StageHook(PipelineOptions(), "variants") as hook:
            for warps in (4, 8):
                kernel = compile_kernel(
                    vector_add, VECTOR_ADD_SIGNATURE, SM90, options={"num_warps": warps}, BLOCK=1024
                )
                meta = json.loads(kernel.metadata.proton)
                assert kernel.metadata.num_warps == warps and meta["layout"]["num_warps"] == warps
                assert f'"ttg.num-warps" = {warps}' in kernel.asm["ttgir"] and "kernel" in {
                    s["name"] for s in meta["scopes"]
                }
            with pytest.warns(UserWarning, match="other compiled variants of it only .*num_warps=2"):
                plain = compile_kernel(vector_add, VECTOR_ADD_SIGNATURE, SM90, options={"num_warps": 2}, BLOCK=1024)
            # As it is: its own pl.scope markers (the test kernel has some), none of the dump's records.
            assert plain.metadata.num_warps == 2
            assert {s["name"] for s in json.loads(plain.metadata.proton)["scopes"]} == {"kernel", "load", "store"}
            assert hook.override_variant_missing == {"vector_add"}
