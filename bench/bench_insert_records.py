"""insert_proton_records' time against the size of its input (CPU): a kernel
of N loads gets N + 1 scopes from the default strategy. Also times a file of
about --bytes made of such loads (every line a scope: the worst case), and one
of about --kernels-bytes made of many kernels shaped like Triton's TTGIR (long
lines, layouts, an scf.for with two loads: 3 scopes in 24 lines). Each
input is timed twice: rewrite_text alone, and the whole command with
--dry-run (read, rewrite, the diff and the list of scopes written to
/dev/null). Writes bench/results/latest/insert_records_cpu.json.

    python bench/bench_insert_records.py [--sizes 2000,16000,64000] [--bytes 66000000] [--kernels-bytes 66000000]
"""

import argparse
import contextlib
import json
import os
import platform
import tempfile
import time

from proton.commands.insert_proton_records import main as insert_proton_records
from proton.compiling.ttgir_rewriter import rewrite_text

HEADER = "module {\n  tt.func public @k(%x: !tt.ptr<f32>) {\n"
FOOTER = "    tt.return\n  }\n}\n"


def ttgir(loads: int) -> str:
    body = "".join(f"    %v{i} = tt.load %x : !tt.ptr<f32>\n" for i in range(loads))
    return HEADER + body + FOOTER


def loads_for_bytes(size: int) -> int:
    """The number of loads whose ttgir() is about `size` bytes."""
    total, loads, digits = len(HEADER) + len(FOOTER), 0, 1
    while True:
        line = len("    %v = tt.load %x : !tt.ptr<f32>\n") + digits
        count = min(10**digits - loads, max(0, (size - total) // line))
        total, loads = total + count * line, loads + count
        if loads < 10**digits:
            return loads
        digits += 1


MODULE_HEADER = """\
#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], order = [0, 1]}>
#mma = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 64, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
#loc = loc("kernels.py":10:0)
module attributes {"ttg.num-warps" = 4 : i32, ttg.target = "cuda:90"} {
"""
KERNEL = """\
  tt.func public @mm_{n}(%a: !tt.ptr<f16> loc("a"(#loc)), %b: !tt.ptr<f16> loc("b"(#loc)), %c: !tt.ptr<f16> \
loc("c"(#loc)), %K: i32 loc("K"(#loc))) attributes {{noinline = false}} {{
    %cst = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #mma> loc(#loc1)
    %c0_i32 = arith.constant 0 : i32 loc(#loc1)
    %c32_i32 = arith.constant 32 : i32 loc(#loc1)
    %pid = tt.get_program_id x : i32 loc(#loc2)
    %rm = tt.make_range {{end = 64 : i32, start = 0 : i32}} : tensor<64xi32, #ttg.slice<{{dim = 1, parent = \
#blocked}}>> loc(#loc3)
    %rk = tt.make_range {{end = 32 : i32, start = 0 : i32}} : tensor<32xi32, #ttg.slice<{{dim = 0, parent = \
#blocked}}>> loc(#loc4)
    %pa0 = tt.splat %a : !tt.ptr<f16> -> tensor<64x32x!tt.ptr<f16>, #blocked> loc(#loc5)
    %pb0 = tt.splat %b : !tt.ptr<f16> -> tensor<32x64x!tt.ptr<f16>, #blocked1> loc(#loc6)
    %acc:3 = scf.for %k = %c0_i32 to %K step %c32_i32 iter_args(%acc_0 = %cst, %pa = %pa0, %pb = %pb0) -> \
(tensor<64x64xf32, #mma>, tensor<64x32x!tt.ptr<f16>, #blocked>, tensor<32x64x!tt.ptr<f16>, #blocked1>)  : i32 {{
      %x = tt.load %pa : tensor<64x32x!tt.ptr<f16>, #blocked> loc(#loc7)
      %y = tt.load %pb : tensor<32x64x!tt.ptr<f16>, #blocked1> loc(#loc8)
      %xs = ttg.local_alloc %x : (tensor<64x32xf16, #blocked>) -> !ttg.memdesc<64x32xf16, #shared, #smem> loc(#loc7)
      %ys = ttg.local_alloc %y : (tensor<32x64xf16, #blocked1>) -> !ttg.memdesc<32x64xf16, #shared, #smem> loc(#loc8)
      %d = ttng.warp_group_dot %xs, %ys, %acc_0 {{inputPrecision = 0 : i32}} : !ttg.memdesc<64x32xf16, #shared, \
#smem> * !ttg.memdesc<32x64xf16, #shared, #smem> -> tensor<64x64xf32, #mma> loc(#loc9)
      %pa1 = tt.addptr %pa, %c32_i32 : tensor<64x32x!tt.ptr<f16>, #blocked>, i32 loc(#loc10)
      %pb1 = tt.addptr %pb, %c32_i32 : tensor<32x64x!tt.ptr<f16>, #blocked1>, i32 loc(#loc11)
      scf.yield %d, %pa1, %pb1 : tensor<64x64xf32, #mma>, tensor<64x32x!tt.ptr<f16>, #blocked>, \
tensor<32x64x!tt.ptr<f16>, #blocked1> loc(#loc12)
    }} loc(#loc13)
    %r = arith.truncf %acc#0 : tensor<64x64xf32, #mma> to tensor<64x64xf16, #mma> loc(#loc14)
    %pc = tt.splat %c : !tt.ptr<f16> -> tensor<64x64x!tt.ptr<f16>, #mma> loc(#loc15)
    tt.store %pc, %r : tensor<64x64x!tt.ptr<f16>, #mma> loc(#loc15)
    tt.return loc(#loc16)
  }} loc(#loc)
"""
MODULE_FOOTER = "} loc(#loc)\n" + "".join(f'#loc{i} = loc("kernels.py":{10 + i}:4)\n' for i in range(1, 17))


def kernels_ttgir(size: int) -> tuple[str, int]:
    """A module of about `size` bytes made of kernels like Triton's TTGIR, and their number."""
    count = max(1, (size - len(MODULE_HEADER) - len(MODULE_FOOTER)) // len(KERNEL.format(n=0)))
    body = "".join(KERNEL.format(n=n) for n in range(count))
    return MODULE_HEADER + body + MODULE_FOOTER, count


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
    except OSError:
        names = []
    return f"{names[0]} ({os.cpu_count()} cores)" if names else f"{os.cpu_count()} cores"


def timed(text: str) -> tuple[float, int]:
    """Best of 3 (one run for inputs over 10 MB), and the number of scopes."""
    best = float("inf")
    for _ in range(3 if len(text) < 10_000_000 else 1):
        t0 = time.perf_counter()
        result = rewrite_text(text, path="bench.ttgir")
        best = min(best, time.perf_counter() - t0)
        scopes = len(result.scopes)
        del result
    return best, scopes


def timed_dry_run(text: str) -> float:
    """`insert_proton_records --dry-run` on `text` in a file, its output
    thrown away: best of 3 (one run for inputs over 10 MB)."""
    best = float("inf")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "bench.ttgir")
        with open(path, "wb") as f:
            f.write(text.encode("utf-8"))
        for _ in range(3 if len(text) < 10_000_000 else 1):
            with open(os.devnull, "w") as out, contextlib.redirect_stdout(out):
                t0 = time.perf_counter()
                status = insert_proton_records(["--dry-run", path])
                best = min(best, time.perf_counter() - t0)
            assert status == 0, status
    return best


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="2000,16000,64000")
    p.add_argument("--bytes", type=int, default=66_000_000, help="size of the all-loads file (0: none)")
    p.add_argument("--kernels-bytes", type=int, default=66_000_000, help="size of the many-kernels file (0: none)")
    p.add_argument(
        "--out", default=os.path.join(os.path.dirname(__file__), "results", "latest", "insert_records_cpu.json")
    )
    args = p.parse_args()
    rows = []
    sizes = [int(s) for s in args.sizes.split(",") if s]
    if args.bytes:
        sizes.append(loads_for_bytes(args.bytes))
    for n in sizes:
        text = ttgir(n)
        seconds, scopes = timed(text)
        dry_run = timed_dry_run(text)
        row = {"loads": n, "scopes": scopes, "bytes": len(text), "seconds": round(seconds, 3)}
        rows.append({**row, "dry_run_seconds": round(dry_run, 3)})
        print(f"{n:>7} loads, {len(text) / 1e6:6.2f} MB: {scopes} scopes in {seconds:.3f} s, --dry-run {dry_run:.3f} s")
    if args.kernels_bytes:
        text, kernels = kernels_ttgir(args.kernels_bytes)
        seconds, scopes = timed(text)
        dry_run = timed_dry_run(text)
        row = {"kernels": kernels, "loads": 2 * kernels, "scopes": scopes, "bytes": len(text)}
        rows.append({**row, "seconds": round(seconds, 3), "dry_run_seconds": round(dry_run, 3)})
        print(
            f"{kernels:>7} kernels, {len(text) / 1e6:6.2f} MB: {scopes} scopes in {seconds:.3f} s, "
            f"--dry-run {dry_run:.3f} s"
        )
    machine = {"machine": platform.processor() or platform.machine(), "cpu": cpu_model()}
    with open(args.out, "w") as f:
        json.dump({**machine, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
