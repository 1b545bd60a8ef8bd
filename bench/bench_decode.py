"""Decoder and writer throughput on one CPU core, on synthetic buffers in
the documented format (no GPU needed): for each case, decoding, the Chrome
trace, the Perfetto trace (plain, and compressed on the cores the process
may use: one under taskset -c N) and the tree, each in its own process: time,
events per second, output bytes per event and the process's peak memory
over the interpreter's imports (which holds the raw buffer, the decoded
events and the writer's own).

    python bench/bench_decode.py [--out bench/results] [--quick]

--quick leaves out the 64 M- and 100 M-event cases (1.1 and 1.7 GB of
buffer, 6 and 9.5 GB of Chrome trace on disk, several GB of memory per
stage); --case TEXT runs the cases whose label contains TEXT.
"""

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from proton.recording import decode  # noqa: E402
from proton.writers import chrome_trace, hatchet_tree, perfetto_trace  # noqa: E402
from proton.contract.kernel_metadata import KernelMetadata  # noqa: E402

# The synthetic buffer builder is a test helper (test/python/helpers/synthetic_buffers.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "python", "helpers"))
import synthetic_buffers  # noqa: E402

SCOPES = [("kernel", -1), ("load", 0), ("compute", 0), ("store", 0)]
# (label, CTAs, warps per CTA, repetitions, clock bits, quick)
CASES = [
    ("8 M events: 8,192 CTAs x 8 warps, 64-bit clocks", 8192, 8, 40, 64, True),
    ("8 M events, clock32", 8192, 8, 40, 32, True),
    ("64 M events: 16,384 CTAs x 16 warps x 80", 16384, 16, 80, 64, False),
    ("100 M events: 25,600 CTAs x 16 warps x 80", 25600, 16, 80, 64, False),
    ("small launch (vector add 1M shape)", 1024, 4, 1, 64, True),
]
STAGES = ["decode", "chrome", "pftrace", "pftrace_deflate", "tree"]
# A stage that needs more fails with MemoryError instead of waking the
# out-of-memory killer on a shared machine.
STAGE_MEMORY_LIMIT = 12 << 30


def buffer(ctas, warps, reps, clock_bits):
    """Each warp: kernel > (load, compute, store) x reps. Records are 20 to
    3,000 cycles apart, drawn per warp and record (seeded): warps of one
    kernel write the same scopes at different times, as on a GPU, so no
    writer can share one warp's bytes with another's."""
    ids = np.array([1, 1, 2, 2, 3, 3] * reps)
    ends = np.array([0, 1, 0, 1, 0, 1] * reps)
    ids = np.concatenate(([0], ids, [0]))
    ends = np.concatenate(([0], ends, [1]))
    n = ids.size
    lay = synthetic_buffers.layout(
        num_warps=warps, segment_bytes=1 << int(np.ceil(np.log2(n * 8))), clock_bits=clock_bits
    )
    tags = np.broadcast_to(synthetic_buffers.tag(ids, ends), (ctas, warps, n))
    start = (
        np.uint64(10**12) + np.arange(ctas, dtype=np.uint64)[:, None] * np.uint64(997) + np.zeros((1, warps), np.uint64)
    )
    gaps = np.random.default_rng(0).integers(20, 3000, size=(ctas, warps, n), dtype=np.uint64)
    clocks = np.cumsum(gaps, axis=2, out=gaps)
    clocks += start[:, :, None]
    end = clocks[:, :, -1] + np.uint64(100)
    gt0 = np.uint64(1_763_000_000 * 10**9)
    data = synthetic_buffers.build(
        lay,
        tags,
        clocks,
        clk_start=start,
        clk_end=end,
        gt_start=gt0 + (start - start.min()) // 2,
        gt_end=gt0 + (end - start.min()) // 2,
    )
    return data, synthetic_buffers.metadata_dict(SCOPES, lay)


def best_of(fn, repeat):
    times, result = [], None
    for _ in range(repeat):
        result = None  # not two results alive at once: memory is measured too
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return min(times), result


def peak_rss_bytes():
    """This process's peak resident memory (Linux VmHWM: unlike ru_maxrss,
    not inherited from the parent across exec)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def run_stage(stage, buffer_path, meta_path, ctas, out_dir):
    """One stage in this process: prints a JSON line of its numbers."""
    resource.setrlimit(resource.RLIMIT_AS, (STAGE_MEMORY_LIMIT, STAGE_MEMORY_LIMIT))
    base = peak_rss_bytes()  # the interpreter and its imports
    data = np.fromfile(buffer_path, dtype=np.uint8)
    with open(meta_path) as f:
        meta = KernelMetadata.from_dict(json.load(f))
    result = {"base_rss": base}
    t, ev = best_of(lambda: decode.decode(data, meta, ctas), 3 if stage == "decode" else 1)
    result.update(decode_s=t, events=ev.num_events)
    files = {"chrome": "t.json", "pftrace": "t.pftrace", "pftrace_deflate": "t.pftrace", "tree": "t.hatchet"}
    path = os.path.join(out_dir, files.get(stage, "-"))
    if stage == "chrome":
        # Formatting alone (to /dev/null), then to a file (with the disk's time).
        result["format_s"], _ = best_of(lambda: chrome_trace.write(os.devnull, [ev], ev.origin_ns), 1)
        result["write_s"], _ = best_of(lambda: chrome_trace.write(path, [ev], ev.origin_ns), 1)
    elif stage == "pftrace":
        result["write_s"], _ = best_of(lambda: perfetto_trace.write(path, [ev]), 1)
    elif stage == "pftrace_deflate":  # compressed on as many threads as this process has cores
        result["cores"] = len(os.sched_getaffinity(0))
        result["write_s"], _ = best_of(lambda: perfetto_trace.write(path, [ev], compress=True), 1)
    elif stage == "tree":
        result["write_s"], _ = best_of(lambda: hatchet_tree.write(path, [ev], {}), 1)
    if os.path.exists(path):
        result["bytes"] = os.path.getsize(path)
        os.remove(path)
    result["peak_rss"] = peak_rss_bytes()
    # What the buffer, the events and the writer took, over the imports.
    result["peak_over_base"] = result["peak_rss"] - base
    print(json.dumps(result))


def stage_in_child(stage, buffer_path, meta_path, ctas, out_dir):
    proc = subprocess.run(
        [
            sys.executable,
            os.path.abspath(__file__),
            "--stage",
            stage,
            "--buffer",
            buffer_path,
            "--meta",
            meta_path,
            "--ctas",
            str(ctas),
            "--out",
            out_dir,
        ],
        capture_output=True,
        text=True,
        env=dict(os.environ, OMP_NUM_THREADS="1"),
    )
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="bench/results")
    parser.add_argument("--quick", action="store_true", help="leave out the 64 M- and 100 M-event cases")
    parser.add_argument("--case", help="run only the cases whose label contains this text")
    parser.add_argument("--stage", choices=STAGES, help=argparse.SUPPRESS)
    parser.add_argument("--buffer", help=argparse.SUPPRESS)
    parser.add_argument("--meta", help=argparse.SUPPRESS)
    parser.add_argument("--ctas", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.stage:
        return run_stage(args.stage, args.buffer, args.meta, args.ctas, args.out)
    rows = []
    for label, ctas, warps, reps, bits, quick in CASES:
        if (args.quick and not quick) or (args.case and args.case not in label):
            continue
        with tempfile.TemporaryDirectory() as d:
            data, meta = buffer(ctas, warps, reps, bits)
            buffer_path, meta_path = os.path.join(d, "buffer.bin"), os.path.join(d, "meta.json")
            data.tofile(buffer_path)
            with open(meta_path, "w") as f:
                json.dump(meta, f)
            row = {"case": label, "ctas": ctas, "warps": warps, "buffer_bytes": int(data.nbytes)}
            del data
            for stage in STAGES:
                row[stage] = stage_in_child(stage, buffer_path, meta_path, ctas, d)
        n = row["decode"].get("events", 0)
        row["events"] = n
        rows.append(row)
        print(f"{label}: {n:,} events, buffer {row['buffer_bytes'] / 1e6:.0f} MB", flush=True)
        for stage in STAGES:
            r = row[stage]
            if "error" in r:
                print(f"  {stage:8} failed: {r['error']}", flush=True)
                continue
            t = r["decode_s"] if stage == "decode" else r["write_s"]
            extra = f", format only {r['format_s']:.3f} s" if "format_s" in r else ""
            size = f", {r['bytes'] / 1e6:.1f} MB = {r['bytes'] / max(n, 1):.1f} B/event" if "bytes" in r else ""
            print(
                f"  {stage:8} {t:8.3f} s = {n / t / 1e6:6.1f} M events/s{extra}{size}, peak memory "
                f"{r['peak_over_base'] / 1e9:.2f} GB = {r['peak_over_base'] / row['buffer_bytes']:.1f}x the buffer",
                flush=True,
            )
    os.makedirs(args.out, exist_ok=True)
    machine = {
        "cpu": platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "load_average": os.getloadavg(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "date": time.strftime("%Y-%m-%d"),
    }
    with open(os.path.join(args.out, "decode_cpu.json"), "w") as f:
        json.dump({"machine": machine, "rows": rows}, f, indent=1)
    with open(os.path.join(args.out, "decode_cpu.md"), "w") as f:
        f.write(
            f"# Decoding and writing traces, one CPU core ({machine['cpu']}, numpy {machine['numpy']}, "
            f"{machine['date']})\n\n"
            "| case | stage | s | M events/s | MB | bytes/event | peak memory / buffer |\n"
            "| --- | --- | --- | --- | --- | --- | --- |\n"
        )
        for row in rows:
            n = row["events"]
            for stage in STAGES:
                r = row[stage]
                if "error" in r:
                    f.write(f"| {row['case']} | {stage} | failed: {r['error']} | | | | |\n")
                    continue
                t = r["decode_s"] if stage == "decode" else r["write_s"]
                mb = f"{r['bytes'] / 1e6:.1f}" if "bytes" in r else "-"
                per = f"{r['bytes'] / max(n, 1):.1f}" if "bytes" in r else "-"
                f.write(
                    f"| {row['case']} | {stage} | {t:.3f} | {n / t / 1e6:.1f} | {mb} | {per} | "
                    f"{r['peak_over_base'] / row['buffer_bytes']:.2f}x |\n"
                )


if __name__ == "__main__":
    main()
