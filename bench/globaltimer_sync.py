"""How well the global timers (%globaltimer) of the GPUs of one host agree:
the accuracy of aligning per-GPU traces (proton-merge-traces).

For each GPU, a one-thread kernel stores %globaltimer; the host's clock
(time.time_ns) is read just before the launch and just after the
synchronize. offset = timer - host midpoint, known to within half the
host window. The offsets' differences between GPUs bound how far apart two
GPUs' timestamps of the same instant can be.

    python3 bench/globaltimer_sync.py --out bench/results/<dir>
"""

import argparse
import json
import os
import statistics
import time

import triton
import triton.language as tl


@triton.jit
def read_timer(out):
    now = tl.inline_asm_elementwise(
        "mov.u64 $0, %globaltimer;", "=l,r", [tl.full([], 0, tl.int32)], dtype=tl.int64, is_pure=False, pack=1
    )
    tl.store(out, now)


def main():
    import torch

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default=None)
    p.add_argument("--reps", type=int, default=200)
    args = p.parse_args()
    gpus = torch.cuda.device_count()
    outs = []
    for d in range(gpus):
        with torch.cuda.device(d):
            outs.append(torch.zeros(1, dtype=torch.int64, device=f"cuda:{d}"))
            read_timer[(1,)](outs[d])
            torch.cuda.synchronize(d)
    samples = {d: [] for d in range(gpus)}
    for _ in range(args.reps):
        for d in range(gpus):  # interleaved, so drifts show up alike
            with torch.cuda.device(d):
                before = time.time_ns()
                read_timer[(1,)](outs[d])
                torch.cuda.synchronize(d)
                after = time.time_ns()
            samples[d].append((int(outs[d].item()) - (before + after) / 2, (after - before) / 2))
    rows = []
    for d, s in samples.items():
        # The narrowest host windows pin the offset best.
        best = sorted(s, key=lambda x: x[1])[: max(5, len(s) // 10)]
        rows.append(
            {
                "gpu": d,
                "name": torch.cuda.get_device_name(d),
                "offset_ns_median_best": statistics.median(o for o, _ in best),
                "half_window_ns_median_best": statistics.median(w for _, w in best),
                "offset_ns_spread_all": max(o for o, _ in s) - min(o for o, _ in s),
            }
        )
    pairs = []
    for a in range(gpus):
        for b in range(a + 1, gpus):
            diff = rows[b]["offset_ns_median_best"] - rows[a]["offset_ns_median_best"]
            bound = rows[a]["half_window_ns_median_best"] + rows[b]["half_window_ns_median_best"]
            pairs.append({"gpus": [a, b], "offset_difference_ns": diff, "measurement_bound_ns": bound})
    lines = [
        "| GPU | offset vs host (ns, median of best windows) | host half-window (ns) | spread over all reps (ns) |",
        "| --- | --- | --- | --- |",
    ]
    lines += [
        f"| {r['gpu']} {r['name']} | {r['offset_ns_median_best']:.0f} | {r['half_window_ns_median_best']:.0f} "
        f"| {r['offset_ns_spread_all']:.0f} |"
        for r in rows
    ]
    lines += ["", "| GPUs | timer difference (ns) | +- (ns) |", "| --- | --- | --- |"]
    lines += [
        f"| {p['gpus'][0]}-{p['gpus'][1]} | {p['offset_difference_ns']:.0f} | {p['measurement_bound_ns']:.0f} |"
        for p in pairs
    ]
    print("\n".join(lines))
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "globaltimer_sync.json"), "w") as f:
            json.dump({"gpus": rows, "pairs": pairs, "reps": args.reps}, f, indent=1)
        with open(os.path.join(args.out, "globaltimer_sync.md"), "w") as f:
            f.write("# %globaltimer agreement between the GPUs of one host\n\n" + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
