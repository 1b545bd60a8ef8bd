"""GPU: nothing lost when a profiled program dies. A real program (the
benchmark's vector add with three scopes, 20 launches) ends by an uncaught
exception, Ctrl-C (SIGINT), SIGTERM, or SIGKILL with size-based periodic
flushing; the profile on disk is readable and holds every launch made
before the end (SIGKILL: every part written before it)."""

import json
import signal
import subprocess
import sys

import pytest
import suite_paths

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.gpu

CTAS, WARPS, SCOPES = 64, 4, 3
EVENTS_PER_LAUNCH = CTAS * WARPS * SCOPES

PROGRAM = """
import os, signal, sys, time
sys.path[:0] = {import_path!r}
import torch, triton, proton
from kernels import vector_add

x = torch.randn(64 * 1024, device="cuda")
y = torch.randn_like(x)
out = torch.empty_like(x)
proton.start({name!r}, backend="instrumentation", outputs="tree", periodic_flushing={flush!r}, quiet=True)
for step in range(20):
    vector_add[(64,)](x, y, out, x.numel(), BLOCK=1024, num_warps=4)
torch.cuda.synchronize()
assert torch.equal(out, x + y)
{end}
"""

ENDS = {
    "exception": ("raise RuntimeError('the training step failed')", (1,)),
    "sigint": ("os.kill(os.getpid(), signal.SIGINT); time.sleep(30)", (1, -signal.SIGINT)),  # Ctrl-C
    "sigterm": ("os.kill(os.getpid(), signal.SIGTERM); time.sleep(30)", (-signal.SIGTERM,)),
}


def run(tmp_path, end, flush=False):
    name = str(tmp_path / "run")
    script = tmp_path / "program.py"
    script.write_text(PROGRAM.format(import_path=suite_paths.IMPORT_PATH, name=name, flush=flush, end=end))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    return done, name


def launches_in(tree_path):
    root, _devices = json.load(open(tree_path))
    return {c["frame"]["name"]: c["metrics"]["count"] for c in root["children"]}


@pytest.mark.parametrize("how", sorted(ENDS))
def test_the_profile_is_written_however_the_program_ends(tmp_path, how):
    end, status = ENDS[how]
    done, name = run(tmp_path, end)
    assert done.returncode in status, done.stderr[-3000:]
    counts = launches_in(name + ".hatchet")
    assert counts == {"vector_add": 20}, (counts, done.stderr[-2000:])


def test_sigkill_with_size_flushing_keeps_every_part_written(tmp_path):
    """A part is written each time the kept buffers reach 64 KiB (a few
    launches); a SIGKILL after 20 launches leaves the parts of the phases
    written before it, each a complete profile."""
    done, name = run(tmp_path, "os.kill(os.getpid(), signal.SIGKILL)", flush="64KiB")
    assert done.returncode == -signal.SIGKILL, done.stderr[-3000:]
    parts = sorted(tmp_path.glob("run.part_*.hatchet"))
    assert parts, list(tmp_path.iterdir())
    total = sum(launches_in(p)["vector_add"] for p in parts)
    per_launch = total // len(parts)
    assert 1 <= per_launch and total <= 20 and total >= 20 - per_launch - 1
