"""The host work an instrumentation session adds to one launch, on the CPU:
Triton's launcher calls the profile allocator, then the launch hook, for
every launch of an instrumented kernel; this times those two calls through
the fake GPU runtime of the CPU tests (test/python/fakes/fake_gpu_memory), at a
call depth like a library's, for each retention policy. Each row gives the
time per launch, and the same without the time the fake runtime spent in
reserving device memory (its allocations are host pages touched for the
first time, far slower than cuMemAlloc; a GPU reserves a chunk for about a
thousand launches). The GPU measurement of the same is
bench/probe_launch_cost.py (a loop of launches beside plain ones).

    python3 bench/bench_launch_host_cost.py [--launches 20000] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "test" / "python"


def _fake_runtime(folder: str) -> str:
    library = os.path.join(folder, "libfake_gpu_memory.so")
    compiler = next(p for p in map(shutil.which, ("cc", "gcc", "clang")) if p)
    source = TESTS / "fakes" / "fake_gpu_memory" / "fake_gpu_memory.c"
    subprocess.run([compiler, "-shared", "-fPIC", "-O2", "-o", library, str(source)], check=True)
    return library


def measure(launches: int, policy: dict, depth: int = 12) -> tuple[float, float]:
    """Microseconds per launch (allocator + launch hook), with and without
    the device memory allocations."""
    import triton
    from triton.runtime import _allocation

    import proton
    from proton.contract import kernel_metadata
    from proton.device import memory as device_memory

    from test_decode import make
    from test_session import FakeTorch, Launch

    data, meta = make(ctas=2, kernel_id=601)
    kernel_metadata.register(meta)
    kernel_metadata.register_loaded(0xB0B0, 601)
    launch = Launch("vector_add")
    launch.data["function"] = 0xB0B0
    with tempfile.TemporaryDirectory() as folder:
        session = proton.start(os.path.join(folder, "run"), backend="instrumentation", quiet=True, **policy)
        session._torch = FakeTorch()
        allocate, hook = _allocation._profile_allocator, triton.knobs.runtime.launch_enter_hook
        memory = device_memory.memory()
        reserving = [0.0]
        reserve = memory.allocate

        def timed_reserve(*args, **kwargs):
            begin = time.perf_counter()
            try:
                return reserve(*args, **kwargs)
            finally:
                reserving[0] += time.perf_counter() - begin

        memory.allocate = timed_reserve

        def loop():
            begin = time.perf_counter()
            for _ in range(launches):
                allocate(data.size, 16, 0)
                hook(launch)
            took = time.perf_counter() - begin
            return took / launches * 1e6, (took - reserving[0]) / launches * 1e6

        def nested(n):  # a library's frames above the launcher
            return loop() if n == 0 else nested(n - 1)

        per_launch = nested(depth)
        del memory.allocate
        proton.finalize()
    return per_launch


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--launches", type=int, default=20000)
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(TESTS))  # the suite's helpers and test modules, by name
    import suite_paths

    sys.path[:0] = suite_paths.IMPORT_PATH
    from proton.device import memory as device_memory

    with tempfile.TemporaryDirectory() as folder:
        device_memory.use(device_memory.DeviceMemory(device_memory.CudaDriver(_fake_runtime(folder))))
        policies = {
            "every launch kept": {"max_buffer_bytes": 1 << 34},
            "last 8 per kernel": {"max_launches_per_kernel": 8},
            "past the budget (sink)": {"max_buffer_bytes": 0},
        }
        results = {name: [round(us, 2) for us in measure(args.launches, policy)] for name, policy in policies.items()}
    load = os.getloadavg()[0]
    for name, (us, without) in results.items():
        print(f"{name}: {us} us per launch, {without} without reserving device memory")
    print(f"(CPU {platform.processor() or platform.machine()}, Python {platform.python_version()}, load {load:.1f})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "us_per_launch": {name: r[0] for name, r in results.items()},
                    "us_per_launch_without_reserving": {name: r[1] for name, r in results.items()},
                    "launches": args.launches,
                    "load_average": load,
                },
                f,
                indent=1,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
