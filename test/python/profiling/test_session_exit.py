"""Nothing lost when the program dies (CPU, real processes with simulated
launches through the fake GPU runtime): an open session is finalized at a
normal exit, on an uncaught exception, on Ctrl-C (KeyboardInterrupt) and on
SIGTERM (the process then still ends by SIGTERM, as it would have); a
SIGTERM handler of the program's own is left to decide; with
periodic_flushing by size or time, a SIGKILL loses at most the phase in
progress, and the parts written are complete profiles."""

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import proton
from proton.contract.errors import ProfilerError
from proton.recording.flush_policy import FlushPolicy

from test_decode import make
import suite_paths

SCRIPT = """
import os, signal, sys, time
sys.path[:0] = {import_path!r}
from proton.device import memory as device_memory
device_memory.use(device_memory.DeviceMemory(device_memory.CudaDriver({lib!r})))
import proton, triton
from triton.runtime import _allocation
from proton.contract import kernel_metadata
from test_decode import make
from test_session import FakeTorch, Launch
from fake_gpu_memory_support import write

data, meta = make(ctas=2, kernel_id=401)
kernel_metadata.register(meta)
session = proton.start({name!r}, backend="instrumentation", outputs={outputs!r}, periodic_flushing={flush!r})
session._torch = FakeTorch()
for _ in range({launches}):
    piece = _allocation._profile_allocator(data.size, 16, 0)
    write(piece, data)
    triton.knobs.runtime.launch_enter_hook(Launch("vector_add"))
{end}
"""

EVENTS_PER_LAUNCH = 24  # make(ctas=2): 2 CTAs x 4 warps x 3 scopes


def run(tmp_path, lib, end, launches=3, flush=False, outputs="tree"):
    name = str(tmp_path / "run")
    script = tmp_path / "program.py"
    script.write_text(
        SCRIPT.format(
            import_path=suite_paths.IMPORT_PATH,
            lib=str(lib),
            name=name,
            flush=flush,
            launches=launches,
            end=end,
            outputs=outputs,
        )
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    return done, name


def launches_in(tree_path: str) -> int:
    root, _devices = json.loads(Path(tree_path).read_text())
    return sum(child["metrics"]["count"] for child in root["children"] if child["frame"]["name"] == "vector_add")


@pytest.mark.parametrize(
    "end, status, message",
    [
        ("pass", 0, "at exit"),
        ("sys.exit(3)", 3, "at exit"),
        ("raise RuntimeError('the program failed')", 1, "at exit"),
        ("raise KeyboardInterrupt", -signal.SIGINT, "at exit"),  # Ctrl-C
        ("os.kill(os.getpid(), signal.SIGTERM); time.sleep(30)", -signal.SIGTERM, "on SIGTERM"),
    ],
)
def test_an_open_session_is_finalized_however_the_program_ends(tmp_path, fake_gpu_memory_path, end, status, message):
    done, name = run(tmp_path, fake_gpu_memory_path, end)
    assert done.returncode == status, done.stderr
    assert f"proton: finalizing open session(s) '{name}' {message}" in done.stderr
    assert launches_in(name + ".hatchet") == 3  # every launch, decoded and written
    if "RuntimeError" in end:
        assert "RuntimeError: the program failed" in done.stderr  # the program's own end is still told


@pytest.mark.parametrize(
    "end, status",
    [
        ("pass", 0),
        ("raise RuntimeError('the program failed')", 1),
        ("raise KeyboardInterrupt", -signal.SIGINT),  # still ends by SIGINT, as without a session
        ("os.kill(os.getpid(), signal.SIGTERM); time.sleep(30)", -signal.SIGTERM),
    ],
)
def test_every_output_is_written_at_the_programs_end(tmp_path, fake_gpu_memory_path, end, status):
    """The default outputs (Chrome and Perfetto traces beside the tree) are
    written side by side on threads during a run; at the interpreter's end
    Python refuses new threads, so they are written one after the other."""
    done, name = run(tmp_path, fake_gpu_memory_path, end, outputs=None)
    assert done.returncode == status, done.stderr
    assert "could not finalize" not in done.stderr, done.stderr
    assert launches_in(name + ".hatchet") == 3
    trace = json.loads(Path(name + ".chrome_trace").read_text())["traceEvents"]
    assert len({e["pid"] for e in trace}) == 3 * 2  # 3 launches x 2 CTAs
    assert len(trace) == 3 * EVENTS_PER_LAUNCH
    assert Path(name + ".pftrace").stat().st_size > 0


def test_a_sigterm_handler_of_the_program_decides(tmp_path, fake_gpu_memory_path):
    """A program that handles SIGTERM itself (a graceful shutdown) keeps
    running; its session is finalized when it ends."""
    end = (
        "signal.signal(signal.SIGTERM, lambda *a: print('draining'))\n"
        "os.kill(os.getpid(), signal.SIGTERM)\n"
        "time.sleep(0.1)\n"
        "print('still running', proton.recording.instrumentation_session._session is not None)"
    )
    done, name = run(tmp_path, fake_gpu_memory_path, end)
    assert done.returncode == 0, done.stderr
    assert "draining" in done.stdout and "still running True" in done.stdout
    assert "at exit" in done.stderr and launches_in(name + ".hatchet") == 3


def test_sigkill_loses_at_most_the_phase_in_progress(tmp_path, fake_gpu_memory_path):
    """periodic_flushing by size: a part is written each time the kept
    buffers reach it; a SIGKILL (nothing runs) leaves every part before."""
    data, _meta = make(ctas=2, kernel_id=401)
    per_part = 2 * data.size  # two launches per part
    flush = f"{per_part // 1000}KB"  # at most two launches, more than one
    assert data.size < per_part // 1000 * 1000 <= per_part
    done, name = run(tmp_path, fake_gpu_memory_path, "os.kill(os.getpid(), signal.SIGKILL)", launches=7, flush=flush)
    assert done.returncode == -signal.SIGKILL
    parts = sorted(Path(tmp_path).glob("run.part_*.hatchet"))
    assert [p.name for p in parts] == ["run.part_0.hatchet", "run.part_1.hatchet", "run.part_2.hatchet"]
    assert [launches_in(str(p)) for p in parts] == [2, 2, 2]  # the 7th launch's phase was in progress


def test_periodic_flushing_by_time(tmp_path, fake_gpu_memory_path):
    end = "time.sleep(0.3)\n" + "\n".join(
        [
            "piece = _allocation._profile_allocator(data.size, 16, 0)",
            "write(piece, data)",
            "triton.knobs.runtime.launch_enter_hook(Launch('vector_add'))",
        ]
    )
    done, name = run(tmp_path, fake_gpu_memory_path, end, launches=2, flush="200ms")
    assert done.returncode == 0, done.stderr
    parts = sorted(Path(tmp_path).glob("run.part_*.hatchet"))
    # The launch after the pause ends phase 0 (its two launches); finalize writes phase 1.
    assert [launches_in(str(p)) for p in parts] == [2, 1]


@pytest.mark.parametrize("value", ["30", "-5s", "0MB", "fast", 1.5, "5 TB"])
def test_bad_flushing_options_are_refused_at_start(tmp_path, value):
    with pytest.raises(ProfilerError, match="periodic_flushing is True, False, a duration"):
        proton.start(str(tmp_path / "run"), backend="instrumentation", periodic_flushing=value)


def test_flush_policies():
    assert FlushPolicy.parse("500ms").seconds == 0.5 and FlushPolicy.parse("2min").seconds == 120
    assert FlushPolicy.parse("256MB").nbytes == 256 * 10**6 and FlushPolicy.parse("1GiB").nbytes == 2**30
    assert FlushPolicy.parse(True) == FlushPolicy(phases=True) and not FlushPolicy.parse(False).phases
    assert FlushPolicy.parse("64KB").due(0.0, 64_000) and not FlushPolicy.parse("64KB").due(0.0, 63_999)
    with pytest.raises(ProfilerError, match="backend='instrumentation'"):
        proton.start("x", periodic_flushing="30s")  # host sessions: phases by advance_phase only
