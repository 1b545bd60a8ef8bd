"""The command line of bench/bench_overhead.py, and whether a GPU is there
to measure on (checked before anything imports torch's CUDA side)."""

import argparse
import os

from . import BENCH_DIR
from .config import ALL_VARIANTS, DEVICE_CASES, SECTIONS


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        description="Proton overhead benchmark (plain vs proton vs Triton's instrumentation), GPU only."
    )
    p.add_argument(
        "--only", action="append", choices=SECTIONS, help="run only this measurement (repeatable); default: all"
    )
    p.add_argument("--quick", action="store_true", help="small counts for a smoke run")
    p.add_argument("--out", default=os.path.join(BENCH_DIR, "results"), help="results folder (default: bench/results)")
    p.add_argument(
        "--variants",
        default=",".join(ALL_VARIANTS),
        help="comma-separated subset of plain,proton,reference (ratios need plain)",
    )
    p.add_argument(
        "--cases",
        default=",".join(DEVICE_CASES),
        help="comma-separated subset of the device cases: " + ",".join(DEVICE_CASES),
    )
    p.add_argument(
        "--device-rounds",
        type=int,
        default=1,
        help="device section: time every variant this many times, the order rotating per round, and report "
        "the median of the per-round ratios to plain (default 1: one timing per variant)",
    )
    p.add_argument(
        "--proton-mode",
        default=None,
        help="mode for proton.start (e.g. 'default:optimizations=clock32'); default: proton's default",
    )
    p.add_argument(
        "--reference-mode",
        default=None,
        help="mode for triton.profiler.start (e.g. 'default:optimizations=clock32'); default: Triton's",
    )
    p.add_argument(
        "--max-launches",
        type=int,
        default=None,
        help="proton max_launches_per_kernel (default: proton's default, every launch within max_buffer_bytes, "
        "the last of each kernel inside do_bench; 1: the last launch of each kernel everywhere)",
    )
    p.add_argument(
        "--reference-device-data",
        default="tree",
        choices=("tree", "trace"),
        help="data= of both profilers' device sessions and triton.profiler's compile sessions (default tree: "
        "the device-side code does not depend on it and a trace of 100 64M launches is huge)",
    )
    p.add_argument(
        "--reference-dobench-data",
        default="trace",
        choices=("tree", "trace"),
        help="triton.profiler data= for the do_bench session (default trace: writes a Chrome trace)",
    )
    p.add_argument("--dobench-reps", type=int, default=None, help="timed repetitions (default 300, quick 30)")
    p.add_argument("--dobench-warmup-ms", type=float, default=None, help="do_bench warmup= in ms (default 25)")
    p.add_argument("--compile-reps", type=int, default=None, help="cold compiles per kernel and variant (default 3)")
    p.add_argument("--trace-dir", default=None, help="where sessions write traces (default: a temporary folder)")
    p.add_argument("--keep-traces", action="store_true", help="keep trace files (default: size them, then delete)")
    p.add_argument(
        "--reuse-cache", action="store_true", help="use the normal Triton cache dir (default: a fresh one for this run)"
    )
    p.add_argument(
        "--no-preflight",
        action="store_true",
        help="skip compiling+launching each instrumented kernel once in a child process first "
        "(that guards this process against hard aborts such as 'LLVM ERROR')",
    )
    # Internal: the preflight child.
    p.add_argument("--_preflight", default=None, help=argparse.SUPPRESS)
    p.add_argument("--_preflight-kernels", default="", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.only = tuple(dict.fromkeys(args.only)) if args.only else SECTIONS
    if args.device_rounds < 1:
        p.error(f"--device-rounds must be at least 1, not {args.device_rounds}")
    args.variants = tuple(v for v in ALL_VARIANTS if v in {x.strip() for x in args.variants.split(",") if x.strip()})
    bad = {x.strip() for x in args.cases.split(",") if x.strip()} - set(DEVICE_CASES)
    if bad:
        p.error(f"unknown --cases {sorted(bad)}; choose from {list(DEVICE_CASES)}")
    args.cases = tuple(c for c in DEVICE_CASES if c in {x.strip() for x in args.cases.split(",")})
    q = args.quick
    args.device_counts = {  # case key prefix -> (warm-up launches after the compiling one, measured launches)
        "vector_add": (3, 10) if q else (10, 100),
        "matmul": (2, 5) if q else (5, 20),
        "softmax": (3, 10) if q else (10, 100),
        "attention_fwd": (2, 5) if q else (5, 20),
        "attention_causal": (2, 5) if q else (5, 20),
        "attention_bwd": (2, 5) if q else (5, 20),
    }
    if args.dobench_reps is None:
        args.dobench_reps = 30 if q else 300
    if args.dobench_warmup_ms is None:
        args.dobench_warmup_ms = 2.0 if q else 25.0
    if args.compile_reps is None:
        args.compile_reps = 1 if q else 3
    return args


def gpu_status():
    """(available, reason or device name)."""
    try:
        import torch
    except Exception as exc:  # noqa: BLE001 - any import failure means no usable GPU stack
        return False, f"torch is not importable ({type(exc).__name__}: {exc})"
    try:
        if not torch.cuda.is_available():
            return False, "torch.cuda.is_available() is False"
        return True, torch.cuda.get_device_name(0)
    except Exception as exc:  # noqa: BLE001
        return False, f"CUDA query failed ({type(exc).__name__}: {exc})"
