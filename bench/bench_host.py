"""Host profiler overhead: wall time of 20,000 tiny Triton kernel launches,
side by side in one run with Triton's own host profiler (triton.profiler,
CUPTI) and torch.profiler.

Each variant runs in its own process (a process has one CUPTI subscriber),
variants interleaved over several rounds; ratios are against the median of
the plain runs of the same invocation.

    plain            no profiler
    proton           proton.start(backend="cupti")
    proton_hook      proton.start(backend="cupti", hook="triton")
    proton_python    proton.start(backend="cupti", context="python")
    proton_pcsampling  proton.start(mode="pcsampling")  (only with --pcsampling)
    proton_activity_only, proton_callbacks_only, proton_subscribe_only
                     ablations (--ablations): CUPTI activity without the launch
                     callbacks, the callbacks alone, or only a CUPTI subscription
    proton_per_thread, proton_preallocate   CUPTI attribute trials (--ablations):
                     per-thread activity buffers; 65,536 device buffers and
                     semaphores allocated up front
    proton_pyhook    proton plus a Python hook evaluating launch_metadata (--ablations)
    plain_hook_noop, plain_hook_get   floors (--ablations): no profiler, a Python
                     launch_enter_hook that does nothing (Triton then builds each
                     launch's metadata dict) or that evaluates launch_metadata
    triton           triton.profiler.start()
    triton_hook      triton.profiler.start(hook="triton")
    torch            torch.profiler.profile(activities=[CPU, CUDA])

The timed region is the launch loop plus one synchronize; 200 scopes of 100
launches each (scope names s0..s9) give the profilers call paths to keep.
Profile size per unique call path compares the tree files.

    python bench/bench_host.py --out bench/results/h200_session4/host_overhead
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

VARIANTS = ("plain", "proton", "proton_hook", "proton_python", "triton", "triton_hook", "torch")


def child(variant: str, launches: int, out_dir: str, repeats: int) -> dict:
    import torch
    import triton
    import triton.language as tl

    def metadata(grid, kernel, args):
        n = args["n"]
        return {"name": "tiny", "flops32": 2.0 * n, "bytes": 8.0 * n}

    @triton.jit(launch_metadata=metadata)
    def tiny(x_ptr, n, BLOCK: tl.constexpr):
        offsets = tl.arange(0, BLOCK)
        mask = offsets < n
        tl.store(x_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + 1.0, mask=mask)

    x = torch.zeros(1024, device="cuda")
    for _ in range(1000):  # compile and warm up outside the session
        tiny[(1,)](x, 1024, BLOCK=1024)
    torch.cuda.synchronize()

    path = os.path.join(out_dir, variant)
    import contextlib
    scope = lambda name: contextlib.nullcontext()  # noqa: E731
    session_start = time.perf_counter()
    torch_prof = None
    if variant.startswith("proton"):
        if variant in ("proton_activity_only", "proton_callbacks_only", "proton_subscribe_only"):
            os.environ["PROTON_CUPTI_ABLATION"] = variant[len("proton_"):].replace("_", "-")
        elif variant == "proton_per_thread":
            os.environ["PROTON_CUPTI_PER_THREAD_BUFFERS"] = "1"
        elif variant == "proton_preallocate":
            os.environ["PROTON_CUPTI_PREALLOCATE"] = "65536"
        elif variant == "proton_pyhook":
            triton.knobs.runtime.launch_enter_hook.add(lambda md: md.get())
        import proton
        kwargs = {"proton": {}, "proton_hook": {"hook": "triton"}, "proton_python": {"context": "python"},
                  "proton_pcsampling": {"mode": "pcsampling"}}.get(variant, {})
        proton.start(path, backend="cupti", quiet=True, **kwargs)
        scope = proton.scope
    elif variant.startswith("triton"):
        import triton.profiler as tp
        tp.start(path, hook="triton" if variant == "triton_hook" else None)
        scope = tp.scope
    elif variant in ("plain_hook_noop", "plain_hook_get"):
        hook = (lambda md: None) if variant == "plain_hook_noop" else (lambda md: md.get())
        triton.knobs.runtime.launch_enter_hook.add(hook)
    elif variant == "torch":
        torch_prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                        torch.profiler.ProfilerActivity.CUDA])
        torch_prof.__enter__()
        scope = torch.profiler.record_function

    loops = []
    for _ in range(repeats):
        loop_start = time.perf_counter()
        for outer in range(launches // 100):
            with scope(f"s{outer % 10}"):
                for _ in range(100):
                    tiny[(1,)](x, 1024, BLOCK=1024)
        torch.cuda.synchronize()
        loops.append(time.perf_counter() - loop_start)
    loop_s = statistics.median(loops)

    size = None
    if variant.startswith("proton"):
        report = proton.finalize()
        size = os.path.getsize(report.files["tree"])
        kernels = report.kernels
    elif variant.startswith("triton"):
        tp.finalize()
        size = os.path.getsize(path + ".hatchet")
        kernels = _count_kernels(path + ".hatchet")
    elif variant == "torch":
        torch_prof.__exit__(None, None, None)
        kernels = sum(1 for e in torch_prof.events() if e.name.startswith("tiny"))
    else:
        kernels = launches * repeats
    session_s = time.perf_counter() - session_start
    return {"variant": variant, "loop_s": loop_s, "session_s": session_s, "tree_bytes": size,
            "kernels_seen": kernels, "call_paths": _call_paths(path + ".hatchet") if size else None}


def _load_tree(path):
    with open(path) as f:
        data = json.load(f)
    return data[0] if isinstance(data, list) else data


def _walk(node):
    yield node
    for child in node.get("children", []):
        yield from _walk(child)


def _count_kernels(path) -> int:
    root = _load_tree(path)
    return int(sum(n["metrics"].get("count", 0) for n in _walk(root) if not n.get("children")))


def _call_paths(path) -> int:
    return sum(1 for _ in _walk(_load_tree(path)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--launches", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=1,
                        help="timed loops per process (the median is kept; all run inside one session)")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--pcsampling", action="store_true", help="also time mode='pcsampling'")
    parser.add_argument("--ablations", action="store_true", help="also time CUPTI activity / callbacks alone")
    parser.add_argument("--out", default="bench/results/host_overhead", help="path prefix for .json and .md")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--child-dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.launches, args.child_dir, args.repeats)))
        return

    variants = args.variants.split(",") + (["proton_pcsampling"] if args.pcsampling else [])
    variants += ["proton_activity_only", "proton_callbacks_only", "proton_subscribe_only", "proton_per_thread",
                 "proton_preallocate", "proton_pyhook", "plain_hook_noop", "plain_hook_get"] \
        if args.ablations else []
    runs = []
    work = tempfile.mkdtemp(prefix="bench_host_")
    for round_index in range(args.rounds):
        for variant in variants:
            proc = subprocess.run([sys.executable, __file__, "--child", variant, "--child-dir", work,
                                   "--launches", str(args.launches), "--repeats", str(args.repeats)], capture_output=True, text=True)
            if proc.returncode != 0:
                runs.append({"variant": variant, "round": round_index, "error": proc.stderr[-2000:]})
                print(f"{variant}: FAILED\n{proc.stderr[-2000:]}", file=sys.stderr)
                continue
            result = json.loads(proc.stdout.strip().splitlines()[-1])
            result["round"] = round_index
            runs.append(result)
            print(f"round {round_index} {variant}: loop {result['loop_s'] * 1e3:.1f} ms, "
                  f"kernels {result['kernels_seen']}", file=sys.stderr)

    table = summarize(runs, variants, args.launches)
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out + ".json", "w") as f:
        json.dump({"launches": args.launches, "rounds": args.rounds, "runs": runs, "summary": table}, f, indent=1)
    with open(args.out + ".md", "w") as f:
        f.write(markdown(table, args.launches, args.rounds))
    print(markdown(table, args.launches, args.rounds))


def summarize(runs, variants, launches) -> list:
    ok = [r for r in runs if "error" not in r]
    plain = [r["loop_s"] for r in ok if r["variant"] == "plain"]
    base = statistics.median(plain) if plain else float("nan")
    rows = []
    for variant in variants:
        mine = [r for r in ok if r["variant"] == variant]
        if not mine:
            rows.append({"variant": variant, "error": True})
            continue
        loop = statistics.median(r["loop_s"] for r in mine)
        sizes = [r for r in mine if r.get("tree_bytes")]
        rows.append({
            "variant": variant, "loop_ms": loop * 1e3, "ratio": loop / base,
            "us_per_launch": loop / launches * 1e6,
            "session_ms": statistics.median(r["session_s"] for r in mine) * 1e3,
            "kernels_seen": mine[-1]["kernels_seen"],
            "tree_bytes": sizes[-1]["tree_bytes"] if sizes else None,
            "call_paths": sizes[-1]["call_paths"] if sizes else None,
            "bytes_per_call_path": sizes[-1]["tree_bytes"] / sizes[-1]["call_paths"] if sizes else None,
        })
    return rows


def markdown(rows, launches, rounds) -> str:
    lines = [f"{launches} tiny Triton launches (200 scopes x 100) per timed loop; median over rounds (one process "
             f"per variant and round, variants interleaved; {rounds} rounds) of each process's median loop.",
             "", "| variant | loop ms | vs plain | us/launch | session ms | kernels seen | tree bytes | "
             "nodes | bytes/node |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        if r.get("error"):
            lines.append(f"| {r['variant']} | failed | | | | | | | |")
            continue
        size = f"{r['tree_bytes']}" if r["tree_bytes"] else "-"
        per = f"{r['bytes_per_call_path']:.0f}" if r["bytes_per_call_path"] else "-"
        nodes = r["call_paths"] or "-"
        lines.append(f"| {r['variant']} | {r['loop_ms']:.1f} | {r['ratio']:.3f}x | {r['us_per_launch']:.2f} | "
                     f"{r['session_ms']:.1f} | {r['kernels_seen']} | {size} | {nodes} | {per} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
