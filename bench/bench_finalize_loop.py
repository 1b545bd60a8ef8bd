"""Finalize of a long loop on the CPU: an instrumentation session with
data="trace" keeps N launches of a small kernel (132 CTAs x 4 warps x 2
scopes, 1,056 events a launch), simulated as the CPU tests simulate them
(the fake GPU runtime's memory, Triton's launch hook), each launch 50 us
after the one before; then proton.finalize() decodes them and writes the
Chrome and Perfetto traces. Each case runs in its own process and reports
launches, events, finalize seconds, seconds per million events, bytes
written, the process's memory before finalize (the kept buffers: the
arena) and its peak during finalize.

    python bench/bench_finalize_loop.py [--launches 2000 20000] [--label after] [--out bench/results/latest]

Writes <out>/finalize_loop_cpu.json (results by label, merged with what
is there) and finalize_loop_cpu.md.
"""

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.join(HERE, "..", "test", "python")
sys.path.insert(0, TESTS)
for folder in ("helpers", "fakes", "recording"):
    sys.path.insert(0, os.path.join(TESTS, folder))

CTAS, WARPS = 132, 4
SCOPES = [("kernel", -1), ("body", 0)]
IDS, ENDS = [0, 1, 1, 0], [0, 0, 1, 1]  # kernel > body
STEP = 100  # cycles between records
CLOCK_GHZ = 1.5
LAUNCH_GAP_NS = 50_000


def fake_gpu_memory(workdir: str):
    """The CPU tests' fake GPU runtime, built and made the profiler's memory."""
    from proton.device import memory as device_memory

    source = os.path.join(TESTS, "fakes", "fake_gpu_memory", "fake_gpu_memory.c")
    library = os.path.join(workdir, "libfake_gpu_memory.so")
    subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", library, source], check=True)
    device_memory.use(device_memory.DeviceMemory(device_memory.CudaDriver(library)))


def launch_buffer(index: int):
    """The buffer of launch `index`: the same scopes, later by LAUNCH_GAP_NS each."""
    import numpy as np
    import synthetic_buffers as synthetic

    lay = synthetic.layout(num_warps=WARPS, segment_bytes=64)
    n = len(IDS)
    tags = np.broadcast_to(synthetic.tag(np.array(IDS), np.array(ENDS)), (CTAS, WARPS, n))
    offset = np.uint64(int(index * LAUNCH_GAP_NS * CLOCK_GHZ))
    start = np.uint64(10**12) + offset + np.arange(CTAS, dtype=np.uint64)[:, None] * np.uint64(300)
    start = start + np.arange(WARPS, dtype=np.uint64)[None, :]
    data = synthetic.build(
        lay,
        tags,
        **synthetic.steady_times(start, n, STEP, CLOCK_GHZ, 10**12, 1_763_000_000 * 10**9),
        sm=np.arange(CTAS)[:, None] % 66 + 0 * np.arange(WARPS)[None, :],
        kernel_id=41,
    )
    return data, synthetic.metadata(SCOPES, lay, kernel="loop_kernel", kernel_id=41)


def rss_mb(field: str) -> float:
    """VmRSS (now) or VmHWM (peak) of this process, MB."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def run_case(launches: int) -> dict:
    """One loop, in this process."""
    import numpy as np
    import triton
    from triton.runtime import _allocation

    import proton
    from proton.contract import kernel_metadata
    from fake_gpu_memory_support import view
    from test_session import FakeTorch, Launch

    workdir = tempfile.mkdtemp(prefix="proton-bench-finalize-")
    try:
        fake_gpu_memory(workdir)
        first, meta = launch_buffer(0)
        kernel_metadata.register(meta)
        second, _ = launch_buffer(1)
        # Launch i differs from launch 0 in its clock and timer stamps only: step them.
        words_of = lambda data: data.view(np.uint64).astype(np.int64)  # noqa: E731
        step = words_of(second) - words_of(first)
        last, _ = launch_buffer(launches - 1)
        assert ((words_of(first) + (launches - 1) * step).astype(np.uint64) == last.view(np.uint64)).all()
        session = proton.start(os.path.join(workdir, "run"), backend="instrumentation", data="trace", quiet=True)
        session._torch = FakeTorch()
        words = words_of(first)
        for i in range(launches):
            scratch = _allocation._profile_allocator(first.size, 16, 0)
            view(scratch)[:] = (words + i * step).astype(np.uint64).view(np.uint8)
            triton.knobs.runtime.launch_enter_hook(Launch("loop_kernel"))
        before = rss_mb("VmRSS")
        t0 = time.perf_counter()
        report = proton.finalize()
        seconds = time.perf_counter() - t0
        written = {f: os.path.getsize(os.path.join(workdir, f)) for f in os.listdir(workdir) if f.startswith("run")}
        return {
            "launches": launches,
            "events": report.events,
            "finalize_s": round(seconds, 3),
            "s_per_million_events": round(seconds / max(report.events, 1) * 1e6, 3),
            "bytes_written": written,
            "rss_before_finalize_mb": round(before, 1),
            "peak_rss_mb": round(rss_mb("VmHWM"), 1),
            "finalize_peak_over_before_mb": round(rss_mb("VmHWM") - before, 1),
        }
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def markdown(results: dict) -> str:
    lines = [
        "# Finalize of a long loop (CPU)",
        "",
        "`bench/bench_finalize_loop.py`: an instrumentation session with data=\"trace\" keeps N launches of a",
        f"kernel of {CTAS} CTAs x {WARPS} warps x 2 scopes (simulated launches, the CPU tests' fake GPU memory),",
        "then finalize writes the Chrome and Perfetto traces. Peak RSS is the process's; the column after it is",
        "finalize's peak over the memory held before it (the kept buffers, the arena, are host memory here).",
        "",
        "| build | launches | events | finalize s | s per M events | chrome_trace MB | pftrace MB | RSS before MB | "
        "peak RSS MB | finalize peak over before MB |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for label, cases in results["builds"].items():
        for case in cases:
            files = case["bytes_written"]
            chrome = sum(v for k, v in files.items() if k.endswith(".chrome_trace")) / 1e6
            pftrace = sum(v for k, v in files.items() if k.endswith(".pftrace")) / 1e6
            lines.append(
                f"| {label} | {case['launches']:,} | {case['events']:,} | {case['finalize_s']} | "
                f"{case['s_per_million_events']} | {chrome:.0f} | {pftrace:.0f} | "
                f"{case['rss_before_finalize_mb']:.0f} | "
                f"{case['peak_rss_mb']:.0f} | {case['finalize_peak_over_before_mb']:.0f} |"
            )
    lines += ["", f"Machine: {results['machine']}", ""]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--launches", type=int, nargs="+", default=[2000, 20000])
    parser.add_argument("--label", default="after")
    parser.add_argument("--out", default=os.path.join(HERE, "results", "latest"))
    parser.add_argument("--machine", default=f"{platform.node()}, {os.cpu_count()} cores")
    parser.add_argument("--case", type=int, help=argparse.SUPPRESS)  # one case, in a child process
    args = parser.parse_args()
    if args.case is not None:
        print(json.dumps(run_case(args.case)))
        return
    path = os.path.join(args.out, "finalize_loop_cpu.json")
    results = json.load(open(path)) if os.path.exists(path) else {"builds": {}}
    results["machine"] = args.machine
    cases = []
    for launches in args.launches:
        child = subprocess.run(
            [sys.executable, __file__, "--case", str(launches)], capture_output=True, text=True, check=False
        )
        if child.returncode != 0:
            print(child.stderr[-3000:], file=sys.stderr)
            cases.append({"launches": launches, "error": child.stderr.strip().splitlines()[-1:]})
            continue
        case = json.loads(child.stdout.strip().splitlines()[-1])
        print(json.dumps(case))
        cases.append(case)
    results["builds"][args.label] = [c for c in cases if "error" not in c]
    os.makedirs(args.out, exist_ok=True)
    with open(path, "w") as f:
        json.dump(results, f, indent=1)
    with open(os.path.join(args.out, "finalize_loop_cpu.md"), "w") as f:
        f.write(markdown(results))


if __name__ == "__main__":
    main()
