"""Bounded, seeded fuzzing of the commands in CI (fuzz_commands.py, each
kind in a child process): corrupted .pftrace inputs to proton-merge-traces,
random scope specifications and names to insert_proton_records, hostile
.hatchet trees to proton-view, destinations of every kind to the commands
that write one file, and special files as every command's input. Every run ends with status 0 or 2 and no
traceback, leaves its inputs unchanged and no partial output."""

import json
import subprocess
import sys

import pytest
import suite_paths


@pytest.mark.parametrize(
    "kind, runs", [("merge", 300), ("insert", 300), ("view", 300), ("outputs", 200), ("inputs", 200)]
)
def test_commands_survive_hostile_inputs(tmp_path, kind, runs):
    done = subprocess.run(
        [sys.executable, str(suite_paths.HELPERS / "fuzz_commands.py"), kind, "2026", str(runs), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["runs"] == runs and result["problems"] == [], result["problems"]
    assert set(result["statuses"]) <= {"0", "2"}
    print(f"{kind}: {runs} inputs, exit statuses {result['statuses']}")
