"""Profile a Triton kernel without touching its source: dump its TTGIR, insert
`proton.record` lines with `insert_proton_records`, and rerun it through
Triton's own TRITON_KERNEL_OVERRIDE with a Proton session active.

The whole flow, end to end (writes ./ttgir_dump and override.*):

    python3 examples/example_override.py --all [--increase-accuracy]

or step by step:

    proton-dump-ttgir python3 examples/example_override.py
    insert_proton_records ./ttgir_dump
    TRITON_ALWAYS_COMPILE=1 TRITON_KERNEL_OVERRIDE=1 TRITON_OVERRIDE_DIR=ttgir_dump \\
        python3 examples/example_override.py

Run plainly (no TRITON_KERNEL_OVERRIDE), the script only runs the kernel and
checks its result; with TRITON_KERNEL_OVERRIDE=1 it does so inside a Proton
session, which writes override.chrome_trace, override.pftrace and
override.hatchet. `--increase-accuracy` records 32-bit clocks and subtracts
the measured cost of earlier records (time_shift).
"""

import argparse
import os
import shutil
import subprocess
import sys

import triton
import triton.language as tl

import proton


@triton.jit
def axpy(x_ptr, y_ptr, out_ptr, a, n, BLOCK: tl.constexpr):
    # No proton.language markers here: the records come from the TTGIR.
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, a * x + y, mask=mask)


N = 1 << 20
BLOCK = 1024


def run_kernel() -> None:
    import torch

    gen = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(N, device="cuda", generator=gen)
    y = torch.randn(N, device="cuda", generator=gen)
    out = torch.empty_like(x)
    axpy[(triton.cdiv(N, BLOCK),)](x, y, out, 2.0, N, BLOCK=BLOCK)
    torch.cuda.synchronize()
    if not torch.allclose(out, 2.0 * x + y):
        raise SystemExit("axpy: wrong result")


def tool(name: str, module: str) -> list[str]:
    """An installed console script, or its module run by this Python."""
    found = shutil.which(name)
    return [found] if found else [sys.executable, "-m", module]


def run_all(args) -> int:
    """Dump, insert, rerun with the override: each step as its own process,
    as a user would type them."""
    this = os.path.abspath(__file__)
    steps = [
        (
            "dump the TTGIR",
            tool("proton-dump-ttgir", "proton.commands.dump_ttgir") + ["--out", args.dump_dir, sys.executable, this],
            {},
        ),
        (
            "insert records",
            tool("insert_proton_records", "proton.commands.insert_proton_records") + [args.dump_dir],
            {},
        ),
        (
            "rerun with the override",
            [sys.executable, this]
            + (["--increase-accuracy"] if args.increase_accuracy else [])
            + ["--name", args.name],
            {"TRITON_ALWAYS_COMPILE": "1", "TRITON_KERNEL_OVERRIDE": "1", "TRITON_OVERRIDE_DIR": args.dump_dir},
        ),
    ]
    for what, command, env in steps:
        print(f"== {what}: {' '.join(f'{k}={v}' for k, v in env.items())} {' '.join(command)}", flush=True)
        rc = subprocess.call(command, env=dict(os.environ, **env))
        if rc:
            print(f"example_override: '{what}' failed with exit status {rc}", file=sys.stderr)
            return rc
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--all", action="store_true", help="run the whole flow: dump, insert, rerun with the override")
    p.add_argument("--increase-accuracy", action="store_true", help="clock32 records and time_shift")
    p.add_argument("--dump-dir", default="ttgir_dump", help="where the TTGIR goes (default ./ttgir_dump)")
    p.add_argument("--name", default="override", help="session name: the output files' base name")
    args = p.parse_args()
    if args.all:
        return run_all(args)
    reason = proton.gpu.why_no_gpu()
    if reason:
        print(f"example_override.py: nothing runs: {reason}")
        return 0
    if os.environ.get("TRITON_KERNEL_OVERRIDE") != "1":
        run_kernel()
        print("axpy: ran without a profiler (set TRITON_KERNEL_OVERRIDE=1 to profile the override)")
        return 0
    mode = "default:optimizations=clock32,time_shift" if args.increase_accuracy else None
    with proton.profile(args.name, backend="instrumentation", mode=mode) as session:
        run_kernel()
    for kind, path in session.report.files.items():
        print(f"{kind}: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
