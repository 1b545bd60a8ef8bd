"""CPU tests of `insert_proton_records` (the TTGIR rewriter) and
`proton-dump-ttgir`, on TTGIR that Triton compiles for sm_90 without a GPU."""

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import triton
from triton.backends.compiler import GPUTarget

from proton.commands import dump_ttgir
from proton.commands import insert_proton_records as rewriter_command

from proton.compiling.override import is_variant_file
from proton.compiling.ttgir_rewriter import RewriteError, rewrite_text, verify_records

from kernels import MATMUL_SIGNATURE, VECTOR_ADD_SIGNATURE, matmul, vector_add

TARGET = GPUTarget("cuda", 90, 32)


def _ttgir(fn, signature, **constexprs):
    # Compiled outside any Proton session: the kernels' markers emit nothing.
    src = triton.compiler.ASTSource(fn=fn, signature=signature, constexprs=constexprs)
    return triton.compile(src, target=TARGET).asm["ttgir"]


@pytest.fixture(scope="module")
def add_ttgir():
    return _ttgir(vector_add, VECTOR_ADD_SIGNATURE, BLOCK=1024)


@pytest.fixture(scope="module")
def mm_ttgir():
    return _ttgir(matmul, MATMUL_SIGNATURE, BM=64, BN=64, BK=32)


def _records(text):
    """[(kind, name, 1-based line, indent)] of every proton.record line."""
    out = []
    for i, line in enumerate(text.splitlines(), 1):
        m = re.match(r'^(\s*)proton\.record (start|end) "([^"]+)"$', line)
        if m:
            out.append((m.group(2), m.group(3), i, m.group(1)))
    return out


def _line_no(text, pattern, nth=0):
    hits = [i for i, line in enumerate(text.splitlines(), 1) if re.search(pattern, line)]
    return hits[nth]


def _strip_records(text):
    return "".join(line for line in text.splitlines(keepends=True) if "proton.record" not in line)


def _check_common(original, new):
    assert _strip_records(new) == original  # only whole lines were added
    lines = new.splitlines()
    for kind, name, i, indent in _records(new):
        # indented like the op that follows (start) or precedes (end) in the same block
        neighbour = lines[i] if kind == "start" else lines[i - 2]
        if not neighbour.lstrip().startswith(("}", "proton.record")):
            assert indent == neighbour[: len(neighbour) - len(neighbour.lstrip())]
    return verify_records(new)


# -- default strategy ----------------------------------------------------------


def test_default_vector_add(add_ttgir):
    res = rewrite_text(add_ttgir)
    found = _check_common(add_ttgir, res.text)
    names = sorted(n for n, _, _ in found)
    loads = [m.group(1) for m in re.finditer(r"%(\w+) = tt\.load", add_ttgir)]
    assert len(loads) == 2
    assert names == sorted(["kernel", "compute"] + [f"load_{v}" for v in loads])
    recs = _records(res.text)
    lines = res.text.splitlines()
    # kernel: first op of the body, ends right before tt.return
    assert recs[0][:2] == ("start", "kernel") and "tt.func public @vector_add" in lines[recs[0][2] - 2]
    assert recs[-1][:2] == ("end", "kernel") and lines[recs[-1][2]].strip().startswith("tt.return")
    # each load alone in its scope
    for v in loads:
        i = _line_no(res.text, rf"%{v} = tt\.load")
        assert lines[i - 2].strip() == f'proton.record start "load_{v}"'
        assert lines[i].strip() == f'proton.record end "load_{v}"'
    # compute: after the last load, ends right before tt.store
    start = _line_no(res.text, r'start "compute"')
    end = _line_no(res.text, r'end "compute"')
    assert lines[start - 2].strip() == f'proton.record end "load_{loads[-1]}"'
    assert lines[end].strip().startswith("tt.store")
    assert "arith.addf" in "\n".join(lines[start:end])


def test_default_matmul_loads_in_loop(mm_ttgir):
    res = rewrite_text(mm_ttgir)
    found = _check_common(mm_ttgir, res.text)
    names = [n for n, _, _ in found]
    assert "kernel" in names and "compute" not in names  # the loop body holds no store
    load_scopes = [n for n in names if n.startswith("load_")]
    assert len(load_scopes) == 2
    for kind, name, _, indent in _records(res.text):
        assert indent == ("      " if name.startswith("load_") else "    ")


# -- --wrap-op -----------------------------------------------------------------


def test_wrap_op_load(mm_ttgir):
    res = rewrite_text(mm_ttgir, wrap_ops=["tt.load"])
    found = _check_common(mm_ttgir, res.text)
    assert [n for n, _, _ in found] == ["tt_load_0", "tt_load_1"]
    for name, s, e in found:
        assert e == s + 2 and "= tt.load " in res.text.splitlines()[s]


def test_wrap_op_several_with_names(mm_ttgir):
    res = rewrite_text(mm_ttgir, wrap_ops=["tt.load", "ttng.warp_group_dot"], names=["ld"])
    found = _check_common(mm_ttgir, res.text)
    assert sorted(n for n, _, _ in found) == ["ld_0", "ld_1", "ttng_warp_group_dot_0"]
    # the whole name must match: warp_group_dot_wait is not wrapped
    lines = res.text.splitlines()
    wait = _line_no(res.text, r"ttng\.warp_group_dot_wait")
    assert lines[wait - 2].strip() == 'proton.record end "ttng_warp_group_dot_0"'


def test_wrap_op_with_region(mm_ttgir):
    res = rewrite_text(mm_ttgir, wrap_ops=["scf.for"], names=["loop"])
    found = _check_common(mm_ttgir, res.text)
    ((name, s, e),) = found
    lines = res.text.splitlines()
    assert name == "loop_0" and "scf.for" in lines[s] and lines[e - 2].lstrip().startswith("}")


# -- --scope -------------------------------------------------------------------


def test_scope_line_numbers(add_ttgir):
    s = _line_no(add_ttgir, r"arith\.addf")
    res = rewrite_text(add_ttgir, scopes=[f"add:{s}:{s + 1}"])
    found = _check_common(add_ttgir, res.text)
    ((name, start, end),) = found
    lines = res.text.splitlines()
    assert name == "add" and "arith.addf" in lines[start] and "tt.store" in lines[end - 2]


def test_scope_regexes_and_nesting(mm_ttgir):
    res = rewrite_text(
        mm_ttgir, scopes=[r"loop:re:scf\.for:re:^    \} loc", r"dot:re:fence_async_shared:re:warp_group_dot_wait"]
    )
    found = _check_common(mm_ttgir, res.text)
    spans = {n: (s, e) for n, s, e in found}
    lines = res.text.splitlines()
    assert "scf.for" in lines[spans["loop"][0]] and lines[spans["loop"][1] - 2].strip().startswith("}")
    assert spans["loop"][0] < spans["dot"][0] < spans["dot"][1] < spans["loop"][1]


def test_scope_not_same_block(mm_ttgir):
    s = _line_no(mm_ttgir, r"scf\.for")
    e = _line_no(mm_ttgir, r"warp_group_dot_wait")
    with pytest.raises(
        RewriteError, match=rf"k\.ttgir:{s}: .*START line {s} and END line {e} are not in the same block"
    ):
        rewrite_text(mm_ttgir, path="k.ttgir", scopes=[f"x:{s}:{e}"])


def test_scope_crossing(add_ttgir):
    a = _line_no(add_ttgir, r"tt\.get_program_id")
    with pytest.raises(RewriteError, match=r"k\.ttgir:\d+: scopes cross: 'a'.*'b'"):
        rewrite_text(add_ttgir, path="k.ttgir", scopes=[f"a:{a}:{a + 3}", f"b:{a + 2}:{a + 5}"])


def test_scope_after_terminator(add_ttgir):
    r = _line_no(add_ttgir, r"tt\.return")
    with pytest.raises(RewriteError, match=rf"k\.ttgir:{r}: .*after the terminator tt.return"):
        rewrite_text(add_ttgir, path="k.ttgir", scopes=[f"a:{r - 1}:{r}"])


def test_scope_bad_specs(add_ttgir):
    for spec, msg in [
        ("a:1", "NAME:START:END"),
        ("a:0:3", "not a line number"),
        ("a:re:nomatch_xyz:3", "no line"),
        ("a:2:1", "before START"),
    ]:
        with pytest.raises(RewriteError, match=msg):
            rewrite_text(add_ttgir, path="k.ttgir", scopes=[spec])


# -- --for-body ----------------------------------------------------------------


def test_for_body(mm_ttgir):
    res = rewrite_text(mm_ttgir, for_body="iteration")
    found = _check_common(mm_ttgir, res.text)
    ((name, s, e),) = found
    lines = res.text.splitlines()
    assert name == "iteration"
    assert "scf.for" in lines[s - 2] and lines[e].strip().startswith("scf.yield")


def test_for_body_combined_with_wrap_op(mm_ttgir):
    res = rewrite_text(mm_ttgir, for_body="iteration", wrap_ops=["tt.load"])
    found = _check_common(mm_ttgir, res.text)
    assert sorted(n for n, _, _ in found) == ["iteration", "tt_load_0", "tt_load_1"]


# -- verification of existing records -----------------------------------------


def test_refuse_existing_records_without_force(add_ttgir):
    once = rewrite_text(add_ttgir).text
    with pytest.raises(RewriteError, match=r"k\.ttgir:\d+: already holds proton\.record"):
        rewrite_text(once, path="k.ttgir")
    twice = rewrite_text(once, force=True, wrap_ops=["arith.addf"]).text
    assert [n for n, _, _ in verify_records(twice)].count("arith_addf_0") == 1


def test_verify_unbalanced_and_crossing():
    base = textwrap.dedent("""\
        module {
          tt.func public @k() {
            proton.record start "a"
            proton.record start "b"
            proton.record end "a"
            proton.record end "b"
            tt.return
          }
        }
        """)
    with pytest.raises(RewriteError, match=r"x\.ttgir:5: scope 'a' ends while 'b' \(started on line 4\)"):
        verify_records(base, "x.ttgir")
    unclosed = base.replace('    proton.record end "a"\n', "").replace('    proton.record end "b"\n', "")
    with pytest.raises(RewriteError, match=r"x\.ttgir:4: proton\.record start 'b' is never ended"):
        verify_records(unclosed, "x.ttgir")
    other_block = textwrap.dedent("""\
        module {
          tt.func public @k() {
            proton.record start "a"
            scf.for %i = %c0 to %c1 step %c1 {
              proton.record end "a"
            }
            tt.return
          }
        }
        """)
    with pytest.raises(RewriteError, match=r"x\.ttgir:5: proton\.record end 'a' without a start in the same block"):
        verify_records(other_block, "x.ttgir")


# -- CLI -----------------------------------------------------------------------


def _write_dump(tmp_path, add_ttgir, mm_ttgir):
    d = tmp_path / "ttgir_dump"
    (d / "HASHA").mkdir(parents=True)
    (d / "HASHB").mkdir()
    (d / "HASHA" / "plain_add.ttgir").write_text(add_ttgir)
    (d / "HASHB" / "plain_matmul.ttgir").write_text(mm_ttgir)
    (d / "HASHA" / "plain_add.llir").write_text("not ttgir")
    return d


def test_cli_writes_backup_and_summary(tmp_path, add_ttgir, mm_ttgir, capsys, monkeypatch):
    d = _write_dump(tmp_path, add_ttgir, mm_ttgir)
    monkeypatch.chdir(tmp_path)
    assert rewriter_command.main([]) == 0  # default input ./ttgir_dump
    out = capsys.readouterr().out
    assert "plain_add.ttgir: inserted 4 scope(s)" in out and "plain_matmul.ttgir: inserted 3 scope(s)" in out
    assert re.search(r"kernel\s+start line \d+, end line \d+", out)
    assert (d / "HASHA" / "plain_add.ttgir.bak").read_text() == add_ttgir
    assert (d / "HASHB" / "plain_matmul.ttgir.bak").read_text() == mm_ttgir
    assert (d / "HASHA" / "plain_add.llir").read_text() == "not ttgir"
    new = (d / "HASHA" / "plain_add.ttgir").read_text()
    verify_records(new)
    # a second run refuses, names the file and writes nothing
    assert rewriter_command.main([str(d)]) == 2
    err = capsys.readouterr().err
    assert "plain_add.ttgir:" in err and "--force" in err and "nothing written" in err
    assert (d / "HASHA" / "plain_add.ttgir").read_text() == new


def test_cli_dry_run(tmp_path, add_ttgir, mm_ttgir, capsys):
    d = _write_dump(tmp_path, add_ttgir, mm_ttgir)
    f = d / "HASHB" / "plain_matmul.ttgir"
    assert rewriter_command.main(["--dry-run", "--for-body", "it", str(f)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"--- {f}\n+++ {f} (rewritten)\n@@")
    assert '+      proton.record start "it"' in out and "would insert 1 scope(s)" in out
    assert f.read_text() == mm_ttgir and not list(d.rglob("*.bak"))


def _applied(diff: str, old: str) -> str:
    """`old` with the unified diff applied; each context and removed line must match."""
    a, lines = old.splitlines(keepends=True), diff.splitlines(keepends=True)
    assert lines[0].startswith("--- ") and lines[1].startswith("+++ ")
    out, pos, k = [], 0, 2
    while k < len(lines):
        m = re.fullmatch(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@\n", lines[k])
        assert m, lines[k]
        old_count, new_count = int(m[2] or 1), int(m[4] or 1)
        first = int(m[1]) - (old_count > 0)  # an empty span names the line before it
        assert first >= pos
        out += a[pos:first]
        assert len(out) == int(m[3]) - (new_count > 0)
        pos, k = first, k + 1
        while old_count or new_count:
            tag, line = lines[k][0], lines[k][1:]
            if tag in " -":
                assert a[pos] == line, (pos, line)
                pos, old_count = pos + 1, old_count - 1
            if tag in " +":
                out.append(line)
                new_count -= 1
            k += 1
    return "".join(out + a[pos:])


def _dry_run_diff(argv, capsys):
    assert rewriter_command.main(["--dry-run", *argv]) == 0
    out = capsys.readouterr().out
    return out[: out.index(f"{argv[-1]}: would insert")]


def test_cli_dry_run_diff_is_difflibs(tmp_path, add_ttgir, mm_ttgir, capsys):
    """The diff is built from the rewrite in one pass, byte for
    byte the one difflib.unified_diff wrote, also with --force replacing
    records and on a last line without a newline."""
    import difflib

    f = tmp_path / "k.ttgir"
    cases = [
        (mm_ttgir, [], []),
        (mm_ttgir, ["--for-body", "it"], []),
        (add_ttgir.rstrip("\n"), [], []),
        (add_ttgir, ["--force", "--wrap-op", "arith.addf"], ["--wrap-op", "tt.load"]),
        (add_ttgir, ["--force", "--wrap-op", "tt.load"], ["--wrap-op", "tt.load"]),  # no change at all
    ]
    for text, argv, first in cases:
        for p in tmp_path.iterdir():
            p.unlink()
        f.write_text(text)
        if first:
            assert rewriter_command.main([*first, str(f)]) == 0
            capsys.readouterr()
        before = f.read_text()
        diff = _dry_run_diff([*argv, str(f)], capsys)
        assert f.read_text() == before
        rewritten = rewrite_text(
            _strip_records(before) if "--force" in argv else before,
            wrap_ops=argv[argv.index("--wrap-op") + 1 :][:1] if "--wrap-op" in argv else (),
            for_body=argv[1] if argv[:1] == ["--for-body"] else None,
            force="--force" in argv,
        ).text
        expected = "".join(
            difflib.unified_diff(
                before.splitlines(keepends=True),
                rewritten.splitlines(keepends=True),
                fromfile=str(f),
                tofile=f"{f} (rewritten)",
            )
        )
        assert diff == expected, argv
        if diff and before.endswith("\n"):
            assert _applied(diff, before) == rewritten


def test_dry_run_diff_matches_difflib_on_random_edits():
    """Hunk boundaries (runs 6 and 7 equal lines apart), changes at either
    end, records removed and inserted, a last line without a newline that
    gains one: the same text as difflib.unified_diff wherever difflib's diff
    is a shortest one. (Among repeated lines difflib's longest-match search
    can remove a line and insert it again; ours never does, and applies.)"""
    import difflib
    import random

    rng = random.Random(29)
    same = 0
    for case in range(400):
        a, b = [], []
        removes = case % 2
        for i in range(rng.randint(0, 40)):
            if removes and rng.random() < 0.3:
                a.append(f'  proton.record end "old{i}"\n')  # removed by --force
            if rng.random() < 0.3:
                b.append(f'  proton.record start "new{i}"\n')
            line = "  }\n" if rng.random() < 0.3 else f"  %{i} = arith.addi\n"
            a.append(line)
            b.append(line)
        if a and case % 7 == 0:  # records after a last line without a newline
            a[-1] = a[-1].rstrip("\n")
            b.append('  proton.record end "last"\n')
        elif a and case % 5 == 0:
            a[-1] = b[-1] = a[-1].rstrip("\n")
        removed = sum("old" in line for line in a) + (case % 7 == 0 and bool(a))
        got = "".join(rewriter_command.unified_diff(a, b, "x", "x (rewritten)"))
        expected = "".join(difflib.unified_diff(a, b, fromfile="x", tofile="x (rewritten)"))
        if expected.count("\n-") == removed:
            assert got == expected, (a, b)
            same += 1
        assert got.count("\n-") == removed
        if got and a[-1].endswith("\n"):
            assert _applied(got, "".join(a)) == "".join(b)
    assert same >= 380, same  # 391 of 400


def test_cli_dry_run_is_linear_and_its_diff_applies(tmp_path):
    """A file of 20,000 scopes: difflib took minutes (16,000: 153 s); the
    diff from the rewrite takes a second or so here, and applies."""
    body = "".join(f"    %v{i} = tt.load %x : !tt.ptr<f32>\n" for i in range(20_000))
    text = "module {\n  tt.func public @k(%x: !tt.ptr<f32>) {\n" + body + "    tt.return\n  }\n}\n"
    f = tmp_path / "big.ttgir"
    f.write_text(text)
    r = subprocess.run(_cli() + ["--dry-run", str(f)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    diff = r.stdout[: r.stdout.index(f"{f}: would insert 20001 scope(s)")]
    assert diff.startswith(f"--- {f}\n+++ {f} (rewritten)\n@@ -1,")
    assert _applied(diff, text) == rewrite_text(text).text
    assert f.read_text() == text and not (tmp_path / "big.ttgir.bak").exists()


def test_cli_error_names_file_and_line(tmp_path, add_ttgir, mm_ttgir, capsys):
    d = _write_dump(tmp_path, add_ttgir, mm_ttgir)
    f = d / "HASHB" / "plain_matmul.ttgir"
    s = _line_no(mm_ttgir, r"scf\.for")
    e = _line_no(mm_ttgir, r"warp_group_dot_wait")
    assert rewriter_command.main(["--scope", f"bad:{s}:{e}", str(f)]) == 2
    err = capsys.readouterr().err
    assert f"{f}:{s}:" in err and f"START line {s} and END line {e}" in err
    assert f.read_text() == mm_ttgir


def _cli():
    return [sys.executable, "-m", "proton.commands.insert_proton_records"]


def test_cli_subprocess_help_and_run(tmp_path, add_ttgir):
    help_ = subprocess.run(_cli() + ["--help"], capture_output=True, text=True, check=True).stdout
    for rule in [
        "--wrap-op",
        "--name",
        "--scope",
        "--for-body",
        "--force",
        "--dry-run",
        "load_a_5",
        '"compute"',
        '"kernel"',
        "re:",
        ".bak",
        "example:",
        "TRITON_KERNEL_OVERRIDE",
    ]:
        assert rule in help_, rule
    f = tmp_path / "k.ttgir"
    f.write_text(add_ttgir)
    r = subprocess.run(_cli() + ["--wrap-op", "tt.load", "--name", "ld", str(f)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "inserted 2 scope(s)" in r.stdout and 'proton.record start "ld_1"' in f.read_text()


def test_tools_entry_points(tmp_path, add_ttgir, monkeypatch, capsys):
    from proton.commands import entry_points as tools

    f = tmp_path / "k.ttgir"
    f.write_text(add_ttgir)
    monkeypatch.setattr(sys, "argv", ["insert_proton_records", "--dry-run", str(f)])
    with pytest.raises(SystemExit) as e:
        tools.insert_proton_records()
    assert e.value.code == 0 and "would insert 4 scope(s)" in capsys.readouterr().out


# -- proton-dump-ttgir -----------------------------------------------------------

COMPILE_SCRIPT = textwrap.dedent("""\
    import sys
    import triton, triton.language as tl
    from triton.backends.compiler import GPUTarget

    @triton.jit
    def dumped_kernel(x, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x + offs, tl.load(x + offs) * 2)

    src = triton.compiler.ASTSource(fn=dumped_kernel, signature={"x": "*fp32"}, constexprs={"BLOCK": 128})
    triton.compile(src, target=GPUTarget("cuda", 90, 32))
    sys.exit(int(sys.argv[1]))
    """)


def test_dump_ttgir_layout(tmp_path, capsys):
    script = tmp_path / "compile_one.py"
    script.write_text(COMPILE_SCRIPT)
    out = tmp_path / "dump"
    rc = dump_ttgir.main(["--out", str(out), sys.executable, str(script), "3"])
    assert rc == 3  # the command's exit status
    files = [p for p in out.rglob("*") if p.is_file() and not is_variant_file(p)]
    assert len(files) == 1 and files[0].name == "dumped_kernel.ttgir"
    # beside it, the file of its one compiled variant (docs/trust.md: override files per variant)
    (variant,) = [p for p in out.rglob("*") if is_variant_file(p)]
    assert variant.parent == files[0].parent and variant.name.startswith("dumped_kernel.variant-")
    # <out>/<base32 source hash>/<kernel>.ttgir: the path TRITON_KERNEL_OVERRIDE looks up
    rel = files[0].relative_to(out)
    assert len(rel.parts) == 2 and re.fullmatch(r"[A-Z2-7]+", rel.parts[0])
    text = files[0].read_text()
    assert "tt.func public @dumped_kernel" in text and "ttg." in text
    stdout = capsys.readouterr().out
    assert "kept 1 .ttgir file(s)" in stdout and "(and 1 of their compiled variants" in stdout
    assert str(files[0]) in stdout and str(variant) not in stdout
    # the rewriter takes the dump directory as it is
    res = rewrite_text(text)
    assert {n for n, _, _ in verify_records(res.text)} >= {"kernel"}


def test_dump_ttgir_matches_override_lookup(tmp_path):
    """The kept path is where Triton's override manager looks for the kernel."""
    script = tmp_path / "compile_one.py"
    script.write_text(COMPILE_SCRIPT)
    out = tmp_path / "dump"
    rc, kept = dump_ttgir.dump([sys.executable, str(script), "0"], out)
    kept = [p for p in kept if not is_variant_file(p)]
    assert rc == 0 and len(kept) == 1
    probe = textwrap.dedent(f"""\
        import sys
        from triton.runtime.cache import get_override_manager
        src_text = open({str(script)!r}).read().replace("triton.compile(", "0 and triton.compile(")
        ns = {{"__name__": "m"}}
        sys.argv = ["x", "0"]
        try:
            exec(compile(src_text, {str(script)!r}, "exec"), ns)
        except SystemExit:
            pass
        print(get_override_manager(ns["src"].hash()).get_file("dumped_kernel.ttgir"))
        """)
    env = dict(os.environ, TRITON_OVERRIDE_DIR=str(out))
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert Path(r.stdout.strip()) == kept[0]


# -- data safety --------------------------------------------------------------


def test_force_reinserts_from_the_first_backup(tmp_path, add_ttgir, capsys):
    """--force on an instrumented file: scopes are not doubled and the .bak with
    the original text survives, however often it is run."""
    f = tmp_path / "k.ttgir"
    f.write_text(add_ttgir)
    bak = tmp_path / "k.ttgir.bak"
    assert rewriter_command.main(["--wrap-op", "tt.load", str(f)]) == 0
    once = f.read_text()
    assert bak.read_text() == add_ttgir
    for _ in range(2):
        assert rewriter_command.main(["--force", "--wrap-op", "tt.load", str(f)]) == 0
        assert bak.read_text() == add_ttgir  # never overwritten
        assert f.read_text() == once  # re-inserted from the original, not on top
    out = capsys.readouterr().out
    assert "replacing 4 earlier record line(s)" in out
    # another strategy replaces the first one
    assert rewriter_command.main(["--force", "--wrap-op", "arith.addf", str(f)]) == 0
    names = [n for n, _, _ in verify_records(f.read_text())]
    assert names == ["arith_addf_0"] and bak.read_text() == add_ttgir
    assert _strip_records(f.read_text()) == add_ttgir


def test_force_without_backup_strips_old_records_and_keeps_them_in_bak(tmp_path, add_ttgir):
    once = rewrite_text(add_ttgir, wrap_ops=["tt.load"]).text  # records written by hand, no .bak
    f = tmp_path / "k.ttgir"
    f.write_text(once)
    assert rewriter_command.main(["--force", "--wrap-op", "tt.load", str(f)]) == 0
    assert f.read_text() == once and (tmp_path / "k.ttgir.bak").read_text() == once


def test_backup_that_does_not_match_is_refused_and_kept(tmp_path, add_ttgir, capsys):
    f = tmp_path / "k.ttgir"
    f.write_text(add_ttgir)
    assert rewriter_command.main(["--wrap-op", "tt.load", str(f)]) == 0
    edited = f.read_text().replace("tt.return", "tt.return  // edited", 1)
    f.write_text(edited)
    for argv in (["--force", "--wrap-op", "tt.load"], []):
        assert rewriter_command.main(argv + [str(f)]) == 2
        err = capsys.readouterr().err
        assert f"{f}: differs from its backup {f}.bak" in err and "nothing written" in err
        assert f.read_text() == edited and (tmp_path / "k.ttgir.bak").read_text() == add_ttgir


def _one_line_error(err, prog="insert_proton_records"):
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{prog}: error: "), err
    assert "Traceback" not in err
    return lines[0]


def _bad_inputs(tmp_path):
    """{path: problem} for one bad .ttgir entry per new directory."""
    bad = {}

    def entry(name, problem):
        d = tmp_path / ("d_" + name.replace(".", "_"))
        d.mkdir()
        bad[d / name] = problem
        return d / name

    entry("bin.ttgir", "binary file (NUL byte at offset 8)").write_bytes(b"module {\x00\x01}\n")
    entry("latin.ttgir", "not UTF-8 text (byte 0xe9 at offset 15)").write_bytes(
        "module { // caf\xe9\n}\n".encode("latin-1")
    )
    os.symlink(tmp_path / "gone.ttgir", entry("dangling.ttgir", "broken symbolic link"))
    entry("dir.ttgir", "is a directory, not a TTGIR file").mkdir()
    return bad


@pytest.mark.parametrize("in_dir", [False, True])
def test_io_errors_are_one_line_exit_2(tmp_path, add_ttgir, capsys, in_dir):
    good = tmp_path / "good.ttgir"
    good.write_text(add_ttgir)
    for path, problem in _bad_inputs(tmp_path).items():
        target = path.parent if in_dir else path
        assert rewriter_command.main([str(good), str(target)]) == 2
        line = _one_line_error(capsys.readouterr().err)
        assert f"{path}: {problem}" in line and "nothing written" in line
        assert good.read_text() == add_ttgir and not (tmp_path / "good.ttgir.bak").exists()


def test_unreadable_file_and_missing_dir(tmp_path, add_ttgir, capsys, monkeypatch):
    f = tmp_path / "k.ttgir"
    f.write_text(add_ttgir)
    f.chmod(0)
    if os.geteuid() == 0:  # root reads anything: make the read fail as it would for a user
        from proton.compiling import ttgir_rewriter

        real = ttgir_rewriter.read_input
        monkeypatch.setattr(
            ttgir_rewriter,
            "read_input",
            lambda p: (_ for _ in ()).throw(PermissionError(13, "Permission denied", p)) if p == str(f) else real(p),
        )
    assert rewriter_command.main([str(f)]) == 2
    assert f"{f}: cannot read: Permission denied" in _one_line_error(capsys.readouterr().err)
    monkeypatch.chdir(tmp_path)
    assert rewriter_command.main([]) == 2  # no ./ttgir_dump
    assert "ttgir_dump: no such file or directory (dump the TTGIR first" in _one_line_error(capsys.readouterr().err)
    assert rewriter_command.main([str(tmp_path / "nope")]) == 2
    assert f"{tmp_path / 'nope'}: no such file or directory" in _one_line_error(capsys.readouterr().err)


def test_write_error_is_one_line(tmp_path, add_ttgir, capsys, monkeypatch):
    f = tmp_path / "k.ttgir"
    f.write_text(add_ttgir)
    real = Path.write_bytes
    monkeypatch.setattr(
        Path,
        "write_bytes",
        lambda p, data: (_ for _ in ()).throw(OSError(28, "No space left on device", str(p)))
        if p.name.startswith(".k.ttgir.")  # the rewritten text, written beside k.ttgir first
        else real(p, data),
    )
    assert rewriter_command.main([str(f)]) == 2
    assert f"cannot write {f}: No space left on device" in _one_line_error(capsys.readouterr().err)
    assert f.read_text() == add_ttgir and (tmp_path / "k.ttgir.bak").read_text() == add_ttgir
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.ttgir", "k.ttgir.bak"]  # nothing partial


def test_dump_refuses_to_overwrite_existing_ttgir(tmp_path, capsys):
    script = tmp_path / "compile_one.py"
    script.write_text(COMPILE_SCRIPT)
    out = tmp_path / "dump"
    assert dump_ttgir.main(["--out", str(out), sys.executable, str(script), "0"]) == 0
    (kept,) = [p for p in out.rglob("*.ttgir") if not is_variant_file(p)]
    edited = kept.read_text() + "// hand edit\n"
    kept.write_text(edited)
    (kept.parent / (kept.name + ".bak")).write_text("original")
    marker = tmp_path / "ran"
    capsys.readouterr()
    touch = [sys.executable, "-c", f"open({str(marker)!r}, 'w')"]
    assert dump_ttgir.main(["--out", str(out)] + touch) == 2
    line = _one_line_error(capsys.readouterr().err, "proton-dump-ttgir")
    assert f"--out {out} already holds 3 TTGIR file(s)" in line and kept.name in line and "--force" in line
    assert not marker.exists() and kept.read_text() == edited  # nothing run, nothing touched
    # --force moves them to a new backup directory, never overwritten
    for n, backup in enumerate([tmp_path / "dump.bak", tmp_path / "dump.bak.1"]):
        assert dump_ttgir.main(["--force", "--out", str(out), sys.executable, str(script), "0"]) == 0
        assert f"moved the TTGIR files that were in {out} to {backup}" in capsys.readouterr().err
        rel = kept.relative_to(out)
        assert (backup / rel).read_text() == (edited if n == 0 else kept.read_text())
        if n == 0:
            assert (backup / rel.parent / (rel.name + ".bak")).read_text() == "original"
            assert not (kept.parent / (kept.name + ".bak")).exists()
        assert "// hand edit" not in kept.read_text()
    assert (tmp_path / "dump.bak" / rel).read_text() == edited


@pytest.mark.parametrize("case", ["file", "missing_parent", "dangling"])
def test_dump_bad_out_is_one_line_exit_2(tmp_path, capsys, case):
    marker = tmp_path / "ran"
    if case == "file":
        out = tmp_path / "out.txt"
        out.write_text("keep me")
        problem = "is a file, not a directory"
    elif case == "missing_parent":
        out = tmp_path / "no" / "such" / "dir"
        problem = f"the directory {tmp_path / 'no' / 'such'} does not exist"
    else:
        out = tmp_path / "link"
        os.symlink(tmp_path / "gone", out)
        problem = "broken symbolic link"
    assert dump_ttgir.main(["--out", str(out), sys.executable, "-c", f"open({str(marker)!r}, 'w')"]) == 2
    assert f"--out {out}: {problem}" in _one_line_error(capsys.readouterr().err, "proton-dump-ttgir")
    assert not marker.exists()
    if case == "file":
        assert out.read_text() == "keep me"
