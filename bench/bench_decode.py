"""Decoder and writer throughput on one CPU core, on synthetic buffers in
the documented format (no GPU needed): events per second for decoding, and
for writing the Chrome trace, the Perfetto trace and the tree.

    python bench/bench_decode.py [--out bench/results]
"""

import argparse
import json
import os
import platform
import sys
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from proton.instrument import decode  # noqa: E402
from proton.writers import chrome_trace, hatchet_tree, perfetto_trace  # noqa: E402

# The synthetic buffer builder is a test helper (test/python/synthetic_buffers.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "python"))
import synthetic_buffers  # noqa: E402

SCOPES = [("kernel", -1), ("load", 0), ("compute", 0), ("store", 0)]


def buffer(ctas, warps, reps, clock_bits):
    """Each warp: kernel > (load, compute, store) x reps, 100 cycles apart."""
    ids = np.array([1, 1, 2, 2, 3, 3] * reps)
    ends = np.array([0, 1, 0, 1, 0, 1] * reps)
    ids = np.concatenate(([0], ids, [0]))
    ends = np.concatenate(([0], ends, [1]))
    n = ids.size
    lay = synthetic_buffers.layout(num_warps=warps, segment_bytes=1 << int(np.ceil(np.log2(n * 8))),
                                   clock_bits=clock_bits)
    tags = np.broadcast_to(synthetic_buffers.tag(ids, ends), (ctas, warps, n))
    start = np.uint64(10**12) + np.arange(ctas, dtype=np.uint64)[:, None] * np.uint64(997) + np.zeros(
        (1, warps), np.uint64)
    clocks = start[:, :, None] + np.uint64(100) * np.arange(1, n + 1, dtype=np.uint64)
    end = start + np.uint64(100 * (n + 1))
    gt0 = np.uint64(1_763_000_000 * 10**9)
    data = synthetic_buffers.build(lay, tags, clocks, clk_start=start, clk_end=end,
                                   gt_start=gt0 + (start - start.min()) // 2, gt_end=gt0 + (end - start.min()) // 2)
    return data, synthetic_buffers.metadata(SCOPES, lay)


def best_of(fn, repeat=3):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return min(times), result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="bench/results")
    args = parser.parse_args()
    rows = []
    cases = [("uniform warps, 64-bit clocks", 8192, 8, 40, 64), ("uniform warps, clock32", 8192, 8, 40, 32),
             ("small launch (vector add 1M shape)", 1024, 4, 1, 64)]
    for label, ctas, warps, reps, bits in cases:
        data, meta = buffer(ctas, warps, reps, bits)
        t_decode, ev = best_of(lambda: decode.decode(data, meta, ctas))
        with tempfile.TemporaryDirectory() as d:
            t_chrome, _ = best_of(lambda: chrome_trace.write(os.path.join(d, "t.json"), [ev], ev.origin_ns), 1)
            t_pf, _ = best_of(lambda: perfetto_trace.write(os.path.join(d, "t.pftrace"), [ev]), 1)
            t_tree, _ = best_of(lambda: hatchet_tree.build([ev]), 1)
            sizes = {k: os.path.getsize(os.path.join(d, f)) for k, f in (("chrome", "t.json"), ("pftrace", "t.pftrace"))}
        n = ev.num_events
        rows.append({"case": label, "ctas": ctas, "warps": warps, "events": n, "buffer_bytes": int(data.nbytes),
                     "decode_s": t_decode, "decode_events_per_s": n / t_decode,
                     "chrome_s": t_chrome, "pftrace_s": t_pf, "tree_s": t_tree,
                     "chrome_bytes": sizes["chrome"], "pftrace_bytes": sizes["pftrace"]})
        print(f"{label:38} {n:>10,} events  decode {t_decode:.3f} s = {n / t_decode / 1e6:6.1f} M events/s  "
              f"chrome {t_chrome:.3f} s  pftrace {t_pf:.3f} s  tree {t_tree:.3f} s")
    os.makedirs(args.out, exist_ok=True)
    meta = {"cpu": platform.processor() or platform.machine(), "python": platform.python_version(),
            "numpy": np.__version__, "date": time.strftime("%Y-%m-%d")}
    with open(os.path.join(args.out, "decode_cpu.json"), "w") as f:
        json.dump({"machine": meta, "rows": rows}, f, indent=1)
    with open(os.path.join(args.out, "decode_cpu.md"), "w") as f:
        f.write(f"# Decoder throughput, one CPU core ({meta['cpu']}, numpy {meta['numpy']}, {meta['date']})\n\n"
                "Target: decoding >= 20 million events/s.\n\n"
                "| case | events | decode s | M events/s | chrome s | pftrace s | tree s | chrome MB | pftrace MB |\n"
                "| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
        for r in rows:
            f.write(f"| {r['case']} | {r['events']:,} | {r['decode_s']:.3f} | {r['decode_events_per_s'] / 1e6:.1f} | "
                    f"{r['chrome_s']:.3f} | {r['pftrace_s']:.3f} | {r['tree_s']:.3f} | "
                    f"{r['chrome_bytes'] / 1e6:.1f} | {r['pftrace_bytes'] / 1e6:.1f} |\n")


if __name__ == "__main__":
    main()
