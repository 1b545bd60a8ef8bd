"""How well Proton aligns the GPUs of one host on host time (the host clock
offsets sessions record and proton-merge-traces uses).

Both GPUs spin on one flag in pinned host memory; the host raises it, and
each GPU stores its %globaltimer when it sees the flag: one instant, seen a
PCIe read apart. Mapped to host time with each GPU's offset, as a session
measures it (proton.recording.clock_sync.measure), the two stamps should
agree; their difference is the alignment error of merged traces (plus the
difference between the two flag reads' latencies). The raw global-timer
difference is what aligning on the timers alone would leave.

    python3 bench/host_clock_alignment.py --out DIR [--reps 20]
"""

import argparse
import json
import os
import statistics
import time

import torch
import triton
import triton.language as tl

from proton.recording import clock_sync

SPIN_LIMIT = 1 << 26  # polls before giving up (seconds): a missed flag must not hang the GPU


@triton.jit
def stamp_when_flag_rises(flag, out, limit):
    seen = tl.load(flag, volatile=True)
    polls = 0
    while (seen == 0) & (polls < limit):
        seen = tl.load(flag, volatile=True)
        polls += 1
    now = tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l,r", [seen], dtype=tl.int64, is_pure=False, pack=1)
    tl.store(out, tl.where(seen != 0, now, -1))


def one_instant(flag, outs):
    """Both GPUs' %globaltimer at the moment they saw the host raise the flag,
    and the host clock just before it did."""
    flag.zero_()
    for device, out in enumerate(outs):
        with torch.cuda.device(device):
            stamp_when_flag_rises[(1,)](flag, out, SPIN_LIMIT)
    time.sleep(0.02)  # both kernels are spinning
    raised = time.time_ns()
    flag[0] = 1
    for device in range(len(outs)):
        torch.cuda.synchronize(device)
    return [int(out.item()) for out in outs], raised


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="bench/results/run")
    parser.add_argument("--reps", type=int, default=20)
    args = parser.parse_args()
    gpus = torch.cuda.device_count()
    if gpus < 2:
        raise SystemExit(f"needs two GPUs, this machine has {gpus}")
    flag = torch.zeros(1, dtype=torch.int32).pin_memory()
    outs = [torch.zeros(1, dtype=torch.int64, device=f"cuda:{d}") for d in range(2)]
    one_instant(flag, outs)  # compiles and loads the kernel on both GPUs
    rows = []
    for _ in range(args.reps):
        offsets = [clock_sync.measure(torch, d) for d in range(2)]
        stamps, raised = one_instant(flag, outs)
        if min(stamps) < 0:
            raise SystemExit(f"a GPU did not see the flag: {stamps}")
        host = [s + o.realtime_minus_globaltimer_ns for s, o in zip(stamps, offsets)]
        rows.append(
            {
                "raw_timer_difference_ns": stamps[0] - stamps[1],
                "host_time_difference_ns": host[0] - host[1],
                "uncertainty_ns": [o.uncertainty_ns for o in offsets],
                "seen_after_raise_ns": [h - raised for h in host],
            }
        )
    errors = [abs(r["host_time_difference_ns"]) for r in rows]
    summary = {
        "gpus": [torch.cuda.get_device_name(d) for d in range(2)],
        "reps": args.reps,
        "raw_timer_difference_ns_median": statistics.median(r["raw_timer_difference_ns"] for r in rows),
        "host_time_error_ns_median": statistics.median(errors),
        "host_time_error_ns_max": max(errors),
        "uncertainty_ns_median": statistics.median(u for r in rows for u in r["uncertainty_ns"]),
        "seen_after_raise_ns_median": statistics.median(s for r in rows for s in r["seen_after_raise_ns"]),
    }
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "host_clock_alignment.json"), "w") as f:
        json.dump({"summary": summary, "rows": rows}, f, indent=1)
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
