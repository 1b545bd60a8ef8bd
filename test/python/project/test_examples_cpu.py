"""The examples' CPU paths (no GPU here): each compiles its kernel for
sm_90 in a session and prints what it instruments."""

import os
import subprocess
import sys

import pytest
import suite_paths

ROOT = str(suite_paths.REPO)


def run_example(name, tmp_path):
    done = subprocess.run(
        [sys.executable, os.path.join(ROOT, "examples", name)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.fixture(autouse=True)
def no_gpu():
    from proton import gpu

    if gpu.why_no_gpu() is None:
        pytest.skip("a GPU is present: the examples run there (bench/run_gpu_checks.sh)")


def test_events_marks_values_example_compiles_every_kind(tmp_path):
    out = run_example("events_marks_values.py", tmp_path)
    kinds = [line.split()[3] + " " + line.split()[4] for line in out.splitlines() if line.startswith("record id")]
    assert kinds == ["scope 'sum'", "event 'copy'", "mark 'tile'", "value 'iter'", "value 'acc0'"], out


def test_mma_mode_example_adds_the_mma_scopes(tmp_path):
    out = run_example("mma_mode.py", tmp_path)
    assert "'mma.issue'" in out and "'mma.wait'" in out, out
    assert "wgmma.mma_async" in out and "%clock64" in out, out


def test_torch_profiler_example_says_why_it_does_nothing_without_a_gpu(tmp_path):
    out = run_example("example_torch_profiler.py", tmp_path)
    assert out.startswith("no GPU (") and "docs/torch_profiler.md" in out, out
    assert not list(tmp_path.iterdir())  # nothing written
