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

pytest.importorskip("torch")

pytestmark = pytest.mark.gpu

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "example_override.py"


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
