"""The overhead benchmark behind bench/bench_overhead.py, one module per part:

    config        sections, variants, device cases, targets
    cli           the command line, and whether there is a GPU
    kernels       (bench/kernels.py, beside this package) the kernel templates
    cases         each case's inputs, launch arguments and result checks
    profilers     starting/finalizing proton's session or Triton's (the reference)
    triton_state  snapshot and restore of Triton's process-wide state
    ptx           what a build's PTX says (instrumented or not)
    timing        CUPTI durations, do_bench's schedule replayed
    preflight     each instrumented kernel once in a child process first
    device, dobench, compile_time    the three measurements
    harness       the run: bookkeeping, error isolation, saving results
    report        summary rows, printed table, Markdown
    util          small shared helpers

Nothing here imports torch or Triton at module level, so `--help` and the
no-GPU message work without them.
"""

import os
import sys

#: bench/: the folder of bench_overhead.py and kernels.py.
BENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: The script the preflight runs as its child.
MAIN_SCRIPT = os.path.join(BENCH_DIR, "bench_overhead.py")

# The cases import bench/kernels.py as the top-level module `kernels`.
if BENCH_DIR not in sys.path:
    sys.path.insert(0, BENCH_DIR)
