"""Two GPUs (one process each, as torch.distributed ranks would be): each
exports a task trace; proton-merge-traces makes one file with one process
per rank (task exports note no host clock offset, so ranks are aligned on
the global timers, which the tool says on stderr)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import suite_paths

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.gpu

EXAMPLES = suite_paths.EXAMPLES
RANK_SCRIPT = """
import sys
sys.path.insert(0, {examples!r})
import task_profiler
task_profiler.run_scaled_add(trace="rank{rank}.pftrace")
"""


@pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_two_ranks_merge_into_one_trace(tmp_path):
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace

    procs = []
    for rank in range(2):
        script = tmp_path / f"rank{rank}.py"
        script.write_text(RANK_SCRIPT.format(examples=str(EXAMPLES), rank=rank))
        env = dict(os.environ, CUDA_VISIBLE_DEVICES=str(rank), TRITON_CACHE_DIR=str(tmp_path / f"cache{rank}"))
        procs.append(subprocess.Popen([sys.executable, str(script)], cwd=tmp_path, env=env))
    assert [p.wait() for p in procs] == [0, 0]
    out = tmp_path / "merged.pftrace"
    bin_dir = Path(sys.executable).parent
    merge = (
        [str(bin_dir / "proton-merge-traces")]
        if (bin_dir / "proton-merge-traces").exists()
        else [sys.executable, "-m", "proton.commands.merge_traces"]
    )
    done = subprocess.run(
        merge + ["-o", str(out), "rank0_0.pftrace", "rank1_0.pftrace"], cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "global timers" in done.stderr
    trace = Trace.FromString(out.read_bytes())
    processes = [
        p.track_descriptor.process
        for p in trace.packet
        if p.HasField("track_descriptor") and p.track_descriptor.HasField("process")
    ]
    # Inputs are written in time order, so either rank's process may come first.
    assert sorted((p.pid, p.process_name.split(":")[0]) for p in processes) == [(1, "rank 0"), (2, "rank 1")]
    slices = sum(1 for p in trace.packet if p.HasField("track_event")) // 2
    assert slices == 2 * 3 * 1024  # two ranks x three tasks x 1024 CTAs
    print(done.stdout)
