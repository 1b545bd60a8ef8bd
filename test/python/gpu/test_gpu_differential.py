"""GPU: the differential harness (bench/differential, docs/trust.md) on the
third-party libraries installed beside the suite (bench/run_gpu_checks.sh
installs the wheels of wheelhouse/): every output the plain runs agree on is
bit-identical under every session kind, every instrumented kernel records,
and no report holds an error. A library that is not installed is skipped
with its name; FlagGems' full run (minutes, and outputs its own
out-of-bounds kernel makes timing-dependent) is bench/run_gpu_differential.sh's."""

import importlib.util
import json
import subprocess
import sys

import pytest
import suite_paths

pytestmark = pytest.mark.gpu

RUN = suite_paths.REPO / "bench" / "differential" / "run.py"

CASES = {
    "liger": ("liger_kernel", "host,host_hook,instrumentation,mma,override,scopes"),
    "fla": ("fla", "host,instrumentation,mma,scopes"),
}


@pytest.mark.parametrize("library", sorted(CASES))
def test_sessions_change_no_deterministic_output(tmp_path, library):
    module, kinds = CASES[library]
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (carry its wheel in wheelhouse/)")
    done = subprocess.run(
        [sys.executable, str(RUN), "--out", str(tmp_path), "--libraries", library, "--kinds", kinds],
        capture_output=True,
        text=True,
        timeout=900,
    )
    summary = json.loads((tmp_path / "summary.json").read_text())["libraries"][library]
    assert summary["deterministic"] > 0, summary
    problems = {kind: run.get("problems") for kind, run in summary["runs"].items() if run.get("problems")}
    assert done.returncode == 0 and not problems, (problems, done.stdout[-3000:])
