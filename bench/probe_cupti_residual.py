"""Does a finished CUPTI session leave a cost on later launches in the same
process? Times plain loops of 20,000 tiny Triton launches before any CUPTI
session and after one (proton.start / finalize), in alternating processes
that call cuptiFinalize after the session or not. (Since proton.finalize
detaches CUPTI itself, the explicit call is a second one.)

    python bench/probe_cupti_residual.py --processes 4 --out DIR
"""

import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def child(loops: int, cupti_finalize: bool, out_dir: str) -> dict:
    import contextlib
    import proton
    from bench_host import _timed_loop, _tiny_kernel

    tiny, x = _tiny_kernel()
    no_scope = lambda name: contextlib.nullcontext()  # noqa: E731
    before = [_timed_loop(tiny, x, 20_000, no_scope) for _ in range(loops)]
    proton.start(os.path.join(out_dir, "residual"), backend="cupti", quiet=True)
    during = [_timed_loop(tiny, x, 20_000, proton.scope) for _ in range(2)]
    proton.finalize()
    result = None
    if cupti_finalize:  # a second detach, where proton.finalize already detached CUPTI
        from proton import _host

        result = ctypes.CDLL(_host.cupti_path()).cuptiFinalize()  # the libcupti proton loaded
    after = [_timed_loop(tiny, x, 20_000, no_scope) for _ in range(loops)]
    return {"before": before, "during": during, "after": after, "cupti_finalize_result": result}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--loops", type=int, default=8)
    parser.add_argument("--out", default="bench/results/cupti_residual")
    parser.add_argument("--child", choices=("plain", "cupti_finalize"))
    parser.add_argument("--child-dir")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.loops, args.child == "cupti_finalize", args.child_dir)))
        return
    work = tempfile.mkdtemp(prefix="residual_")
    runs = []
    for index in range(args.processes):
        for variant in ("plain", "cupti_finalize"):
            proc = subprocess.run(
                [sys.executable, __file__, "--child", variant, "--child-dir", work, "--loops", str(args.loops)],
                capture_output=True,
                text=True,
            )
            if proc.returncode != 0:
                print(f"{variant}: FAILED\n{proc.stderr[-2000:]}", file=sys.stderr)
                continue
            result = json.loads(proc.stdout.strip().splitlines()[-1])
            result.update(
                variant=variant,
                process=index,
                after_over_before=statistics.median(result["after"]) / statistics.median(result["before"]),
            )
            runs.append(result)
            print(f"{variant} {index}: after/before {result['after_over_before']:.3f}", file=sys.stderr)
    lines = [
        "Plain loops after one finished proton session over plain loops before it (medians of "
        f"{args.loops} loops of 20,000 launches each, per process).",
        "",
        "| after the session | after/before per process | median |",
        "| --- | --- | --- |",
    ]
    for variant, label in (("plain", "nothing"), ("cupti_finalize", "cuptiFinalize()")):
        ratios = [r["after_over_before"] for r in runs if r["variant"] == variant]
        if ratios:
            lines.append(f"| {label} | {', '.join(f'{v:.3f}' for v in ratios)} | {statistics.median(ratios):.3f} |")
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out + ".json", "w") as f:
        json.dump(runs, f, indent=1)
    with open(args.out + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
