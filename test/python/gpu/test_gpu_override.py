"""GPU: examples/example_override.py end to end (dump, insert_proton_records,
rerun through TRITON_KERNEL_OVERRIDE in a session); the trace holds exactly
the inserted scopes, once per warp and CTA."""

import collections
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import suite_paths

pytest.importorskip("torch")

pytestmark = pytest.mark.gpu

EXAMPLE = suite_paths.EXAMPLES / "example_override.py"


@pytest.mark.parametrize("flags", [[], ["--increase-accuracy"]])
def test_example_override_traces_the_inserted_scopes(tmp_path, flags):
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--all", *flags],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=dict(__import__("os").environ, TRITON_CACHE_DIR=str(tmp_path / "cache")),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    ttgir = list((tmp_path / "ttgir_dump").rglob("axpy.ttgir"))
    assert len(ttgir) == 1
    inserted = re.findall(r'proton\.record start "([^"]+)"', ttgir[0].read_text())
    assert "kernel" in inserted and len(inserted) >= 3  # kernel, a scope per load, compute
    trace = json.loads((tmp_path / "override.chrome_trace").read_text())
    spans = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    counts = collections.Counter(e["name"] for e in spans)
    ctas, warps = (1 << 20) // 1024, 4
    assert counts == {name: ctas * warps for name in inserted}
    assert all(e["dur"] >= 0 for e in spans)
    print(f"example_override {' '.join(flags)}: {dict(counts)}")


LIBRARY_RUN = """
import json, os, sys
sys.path[:0] = {import_path!r}
import torch
import proton
from library_kernels import run_program
profiled = os.environ.get("TRITON_KERNEL_OVERRIDE") == "1"
if profiled:
    proton.start("library", backend="instrumentation", quiet=True)
out = run_program(torch)
torch.cuda.synchronize()
torch.save({{k: v.cpu() for k, v in out.items()}}, "profiled.pt" if profiled else "plain.pt")
if profiled:
    report = proton.finalize()
    json.dump({{"per_kernel": report.per_kernel, "errors": report.errors, "unrecorded": report.unrecorded}},
              open("report.json", "w"))
"""


def test_library_kernels_through_the_override_record_every_kernel(tmp_path):
    """Dump, insert and rerun kernels written the way libraries write them:
    outputs identical, every kernel recording, early-returning warps included."""
    import os

    import torch

    from library_kernels import KERNEL_NAMES

    script = tmp_path / "library_run.py"
    script.write_text(LIBRARY_RUN.format(import_path=suite_paths.IMPORT_PATH))
    env = dict(os.environ, TRITON_CACHE_DIR=str(tmp_path / "cache"))
    bin_dir = Path(sys.executable).parent

    def tool(name, module):
        return [str(bin_dir / name)] if (bin_dir / name).exists() else [sys.executable, "-m", module]

    steps = [
        (
            tool("proton-dump-ttgir", "proton.commands.dump_ttgir")
            + ["--out", "ttgir_dump", sys.executable, str(script)],
            {},
        ),
        (tool("insert_proton_records", "proton.commands.insert_proton_records") + ["ttgir_dump"], {}),
        (
            [sys.executable, str(script)],
            {"TRITON_ALWAYS_COMPILE": "1", "TRITON_KERNEL_OVERRIDE": "1", "TRITON_OVERRIDE_DIR": "ttgir_dump"},
        ),
    ]
    for command, extra in steps:
        done = subprocess.run(command, cwd=tmp_path, env=dict(env, **extra), capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "skipped" not in done.stderr, done.stderr
    plain, profiled = torch.load(tmp_path / "plain.pt"), torch.load(tmp_path / "profiled.pt")
    assert plain.keys() == profiled.keys() == set(KERNEL_NAMES)
    assert all(torch.equal(plain[k], profiled[k]) for k in plain)
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["errors"] == [] and report["unrecorded"] == {}
    events = collections.Counter()
    for kernel, info in report["per_kernel"].items():
        events[kernel.split("[")[0]] += info["events"]
    assert all(events[name] > 0 for name in KERNEL_NAMES), events
    trace = json.loads((tmp_path / "library.chrome_trace").read_text())["traceEvents"]
    kernel_scopes = collections.Counter(
        e["cat"].split("[")[0] for e in trace if e["ph"] == "X" and e["name"] == "kernel"
    )
    # One "kernel" scope per warp of every CTA, the 8 programs past the last row and the
    # rows of ignored labels (early returns) included.
    assert kernel_scopes["rms_norm_fwd"] == kernel_scopes["cross_entropy_fwd"] == 72 * 4
    assert kernel_scopes["block_sums"] == 64 * 4
    print(f"library override: {dict(events)}")
