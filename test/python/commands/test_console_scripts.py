"""Every console script the package installs runs from the installed
package (not the source tree): --help, and one real use each where the CPU
allows. An entry point that points at a moved module or binary fails here."""

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import suite_paths

ROOT = suite_paths.REPO
BIN = Path(sys.executable).parent
SCRIPTS = sorted(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"])


def script(name):
    path = BIN / name
    if not path.exists():
        pytest.skip(f"{name} is not installed next to {sys.executable} (an install without console scripts)")
    return str(path)


def run(argv, **kwargs):
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, **kwargs)


@pytest.mark.parametrize("name", SCRIPTS)
def test_help(name):
    done = run([script(name), "--help"])
    assert done.returncode == 0, done.stderr
    assert "usage" in (done.stdout + done.stderr).lower() or "OVERVIEW" in done.stdout


def test_each_script_does_its_job(tmp_path):
    ran = set()

    def use(name):
        ran.add(name)
        return script(name)

    # proton-opt: the dialect and the conversion on a lit input
    done = run(
        [use("proton-opt"), str(ROOT / "test/lit/ProtonToProtonGPU/convert.mlir"), "--convert-proton-to-protongpu"]
    )
    assert done.returncode == 0 and "proton_gpu.init_segment" in done.stdout, done.stderr
    # insert_proton_records on a kernel with an early return
    from test_override_library import EARLY_RETURN

    ttgir = tmp_path / "k.ttgir"
    ttgir.write_text(EARLY_RETURN)
    done = run([use("insert_proton_records"), str(ttgir)])
    assert done.returncode == 0 and 'proton.record start "kernel"' in ttgir.read_text(), done.stderr
    # proton-dump-ttgir around a command that compiles nothing
    done = run([use("proton-dump-ttgir"), "--out", str(tmp_path / "dump"), sys.executable, "-c", "pass"])
    assert done.returncode == 0 and "compiled no Triton kernel" in done.stdout, done.stderr
    # proton-merge-traces and proton-view on outputs of a session's writers
    from proton.recording import decode
    from proton.writers import hatchet_tree, perfetto_trace
    from test_decode import make

    traces = []
    for rank in range(2):
        buf, meta = make(ctas=1, segments=2)
        ev = decode.decode(buf, meta, 1, kernel="k")
        traces.append(str(tmp_path / f"r{rank}.pftrace"))
        perfetto_trace.write(traces[-1], [ev], f"GPU {rank}")
    done = run([use("proton-merge-traces"), "-o", str(tmp_path / "m.pftrace"), *traces])
    assert done.returncode == 0 and (tmp_path / "m.pftrace").stat().st_size > 0, done.stderr
    hatchet_tree.write(str(tmp_path / "t.hatchet"), [ev], {}, "CUDA")
    done = run([use("proton-view"), str(tmp_path / "t.hatchet")])
    assert done.returncode == 0 and "k" in done.stdout, done.stderr
    # proton-profile: a script under a disabled profiler (no GPU here) runs as it is
    user_script = tmp_path / "s.py"
    user_script.write_text("import sys; print('ran', sys.argv[1:])\n")
    done = run([use("proton-profile"), str(user_script), "x"], env={**os.environ, "PROTON_DISABLE": "1"})
    assert done.returncode == 0 and "ran ['x']" in done.stdout, done.stderr
    # a script added to pyproject.toml needs its real use here too
    assert ran == set(SCRIPTS), sorted(set(SCRIPTS) - ran)


def test_the_viewer_and_the_merge_tool_need_no_triton(tmp_path):
    # An environment without Triton (a laptop reading a copied trace): import
    # proton and the tools that only read files work; Triton is imported by
    # the parts that compile or launch kernels.
    tree = tmp_path / "t.hatchet"
    tree.write_text('[{"frame": {"name": "ROOT"}, "metrics": {"time (ns)": 5}, "children": []}, {}]')
    code = (
        "import sys; sys.modules['triton'] = None\n"
        "import proton\n"
        "from proton.commands import merge_traces\n"
        "from proton.viewer import main\n"
        f"sys.exit(main([{str(tree)!r}]))\n"
    )
    done = run([sys.executable, "-c", code])
    assert done.returncode == 0 and "ROOT" in done.stdout, done.stderr


def test_an_unexpected_exception_is_reported_as_a_bug(capsys):
    from proton.commands import entry_points

    def broken():
        raise ZeroDivisionError("a bug")

    with pytest.raises(SystemExit) as status:
        entry_points._run("proton-view", broken)
    err = capsys.readouterr().err
    assert status.value.code == 1 and "ZeroDivisionError: a bug" in err
    assert "proton-view: this is a bug in Proton; please report it" in err
    with pytest.raises(SystemExit) as status:
        entry_points._run("proton-view", lambda: 2)  # an expected failure keeps its status
    assert status.value.code == 2
