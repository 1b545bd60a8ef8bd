"""Mutated real kernels through the compiler never kill the user's process:
each comes back instrumented or as an InstrumentationError."""

import ast
import os
import subprocess
import sys
import suite_paths


def test_mutated_real_kernels_never_abort():
    here = str(suite_paths.HELPERS)
    done = subprocess.run(
        [sys.executable, os.path.join(here, "fuzz_bridge.py"), "300"],
        capture_output=True,
        text=True,
        cwd=here,
        timeout=600,
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-3000:])
    outcomes = ast.literal_eval(done.stdout.strip().splitlines()[-1])
    assert sum(outcomes.values()) == 300 and outcomes["refused"] > 0
