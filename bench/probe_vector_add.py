"""Device time of the benchmark's vector add under several proton modes, with
plain and Triton's reference instrumentation in the same process.

A quick tool for deciding what the instrumentation costs on short,
memory-bound kernels (bench_overhead.py is the full benchmark). Each mode
runs in its own child process with a fresh Triton cache, so builds never mix;
medians are CUPTI kernel durations (torch.profiler).

    python3 bench/probe_vector_add.py --modes "default;default:optimizations=clock32" \
        --sizes 20,26 --out results.json

A mode entry may end in `@VAR=VALUE` to set an environment variable in its
child (e.g. a compiler switch under test).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def measure(variant, mode, log2n, launches):
    """Median CUPTI duration (us) of `launches` vector adds of 2**log2n floats."""
    import torch
    import triton

    sys.path.insert(0, HERE)
    import kernels
    from overhead.timing import cupti_launch_durations_us

    n = 1 << log2n
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    fn = kernels.build("vector_add", variant, f"p{log2n}")
    grid = (triton.cdiv(n, kernels.VECTOR_ADD_BLOCK),)

    def launch():
        return fn[grid](x, y, out, n, BLOCK=kernels.VECTOR_ADD_BLOCK, **kernels.VECTOR_ADD_OPTIONS)

    if variant == "proton":
        import proton

        proton.start(os.path.join(tempfile.mkdtemp(), "probe"), backend="instrumentation", mode=mode)
    elif variant == "reference":
        import triton.profiler as tp

        tp.start(os.path.join(tempfile.mkdtemp(), "probe"), backend="instrumentation", data="tree")
    try:
        compiled, durations = cupti_launch_durations_us(launch, launches, warmup=20)
    finally:
        if variant == "proton":
            import proton

            report = proton.finalize()
            dropped = report.dropped_events
        elif variant == "reference":
            import triton.profiler as tp

            tp.finalize()
    assert torch.equal(out, x + y), "wrong result"
    row = {
        "variant": variant,
        "mode": mode,
        "log2n": log2n,
        "median_us": statistics.median(durations),
        "min_us": min(durations),
        "ptx_clock_reads": compiled.asm["ptx"].count("%clock"),
    }
    if variant == "proton":
        row["dropped_events"] = dropped
    return row


def child(args):
    rows = [measure(v, args.mode, s, args.launches) for s in args.sizes for v in args.variants]
    print("ROWS " + json.dumps(rows), flush=True)


def parent(args):
    rows = []
    runs = [("plain", "-"), ("reference", "-")] + [("proton", m) for m in args.modes]
    for variant, entry in runs:
        env = dict(os.environ, TRITON_CACHE_DIR=tempfile.mkdtemp(prefix="probe-cache-"))
        mode, _, assignment = entry.partition("@")
        if assignment:
            var, _, value = assignment.partition("=")
            env[var] = value
        cmd = [
            sys.executable,
            __file__,
            "--child",
            "--variants",
            variant,
            "--mode",
            mode,
            "--sizes",
            ",".join(map(str, args.sizes)),
            "--launches",
            str(args.launches),
        ]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        got = [line for line in proc.stdout.splitlines() if line.startswith("ROWS ")]
        if proc.returncode or not got:
            rows.append({"variant": variant, "mode": entry, "error": proc.stderr[-2000:]})
            print(f"{variant} {entry}: FAILED\n{proc.stderr[-2000:]}", flush=True)
            continue
        for row in json.loads(got[0][5:]):
            row["mode"] = entry
            rows.append(row)
    plain = {r["log2n"]: r["median_us"] for r in rows if r["variant"] == "plain" and "median_us" in r}
    lines = ["| variant | mode | n | median us | ratio | clock reads |", "| --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        if "median_us" not in r:
            lines.append(f"| {r['variant']} | {r['mode']} | - | error | - | - |")
            continue
        r["ratio"] = r["median_us"] / plain[r["log2n"]] if r["log2n"] in plain else None
        lines.append(
            f"| {r['variant']} | `{r['mode']}` | 2^{r['log2n']} | {r['median_us']:.2f} | "
            f"{r['ratio']:.3f}x | {r['ptx_clock_reads']} |"
        )
    print("\n".join(lines), flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--modes",
        default="default",
        help="';'-separated proton modes ('default' = no mode), each optionally MODE@VAR=VALUE",
    )
    p.add_argument("--sizes", default="20,26", help="log2 of the element counts (default 20,26)")
    p.add_argument("--launches", type=int, default=100)
    p.add_argument("--out", default=None, help="JSON file for the rows")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--variants", default="", help=argparse.SUPPRESS)
    p.add_argument("--mode", default="default", help=argparse.SUPPRESS)
    args = p.parse_args()
    args.sizes = [int(s) for s in args.sizes.split(",")]
    if args.child:
        args.variants = args.variants.split(",")
        child(args)
        return
    args.modes = args.modes.split(";")
    parent(args)


if __name__ == "__main__":
    main()
