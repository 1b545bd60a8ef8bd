"""Host profiler overhead: wall time of 20,000 tiny Triton kernel launches,
side by side in one run with Triton's own host profiler (triton.profiler,
CUPTI) and torch.profiler.

Each variant runs in its own process (a process has one CUPTI subscriber),
variants interleaved over several rounds. "vs plain" divides a variant's
median by the plain runs' median; "paired" is the median over rounds of the
variant's loop over the same round's plain loop.

    plain            no profiler
    proton           proton.start(backend="cupti")
    proton_hook      proton.start(backend="cupti", hook="triton")
    proton_python    proton.start(backend="cupti", context="python")
    triton           triton.profiler.start()
    triton_hook      triton.profiler.start(hook="triton")
    torch            torch.profiler.profile(activities=[CPU, CUDA])
    plain_hook_get   the floor of hook="triton": no profiler, a Python
                     launch_enter_hook that evaluates launch_metadata
    proton_pcsampling  proton.start(mode="pcsampling")  (only with --pcsampling)
    ablations (--ablations): proton_pyhook (proton plus a Python hook
                     evaluating launch_metadata), plain_hook_noop (a hook
                     that does nothing: Triton still builds each launch's
                     metadata dict)

--inprocess-cycles N also runs plain, proton, proton_hook and
plain_hook_get in one process, alternating, and divides each loop by the same cycle's plain loop: the spread between
processes drops out of those ratios.

The timed region is the launch loop plus one synchronize; 200 scopes of 100
launches each (scope names s0..s9) give the profilers call paths to keep.
Profile size per unique call path compares the tree files.

    python bench/bench_host.py --rounds 6 --repeats 5 --inprocess-cycles 11 \
        --out /tmp/host/host_overhead
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

VARIANTS = ("plain", "proton", "proton_hook", "proton_python", "triton", "triton_hook", "torch", "plain_hook_get")


def _tiny_kernel():
    """The benchmark's kernel (one 1024-element block, with a launch_metadata
    function for hook="triton"), compiled and warmed up, and its tensor."""
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
    return tiny, x


def _timed_loop(tiny, x, launches: int, scope) -> float:
    import torch

    loop_start = time.perf_counter()
    for outer in range(launches // 100):
        with scope(f"s{outer % 10}"):
            for _ in range(100):
                tiny[(1,)](x, 1024, BLOCK=1024)
    torch.cuda.synchronize()
    return time.perf_counter() - loop_start


def child(variant: str, launches: int, out_dir: str, repeats: int) -> dict:
    import torch
    import triton

    tiny, x = _tiny_kernel()

    path = os.path.join(out_dir, variant)
    import contextlib

    scope = lambda name: contextlib.nullcontext()  # noqa: E731
    session_start = time.perf_counter()
    torch_prof = None
    if variant.startswith("proton"):
        if variant == "proton_pyhook":
            triton.knobs.runtime.launch_enter_hook.add(lambda md: md.get())
        import proton

        kwargs = {
            "proton": {},
            "proton_hook": {"hook": "triton"},
            "proton_python": {"context": "python"},
            "proton_pcsampling": {"mode": "pcsampling"},
        }.get(variant, {})
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
        torch_prof = torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        )
        torch_prof.__enter__()
        scope = torch.profiler.record_function

    loops = [_timed_loop(tiny, x, launches, scope) for _ in range(repeats)]
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
    # Only proton's tree is read for these: Triton's marks its frames otherwise.
    scoped, flops = _scoped_kernels_and_flops(path + ".hatchet") if variant.startswith("proton") else (None, None)
    return {
        "variant": variant,
        "loop_s": loop_s,
        "loops_s": loops,
        "session_s": session_s,
        "tree_bytes": size,
        "kernels_seen": kernels,
        "call_paths": _call_paths(path + ".hatchet") if size else None,
        "scoped_kernels": scoped,
        "flops32": flops,
    }


INPROCESS_VARIANTS = ("plain", "proton", "proton_hook", "plain_hook_get")


def inprocess_child(launches: int, cycles: int, out_dir: str) -> list:
    """Every variant in one process, one loop each per cycle, the order
    rotating: no process-to-process spread (memory layout, cores) between a
    variant and the plain loop it is divided by. Cycle 0 is a warm-up. The
    first plain loop runs before CUPTI is ever loaded, so any cost a finished
    session leaves behind shows as later plain loops being slower than it."""
    import contextlib
    import triton
    import proton

    tiny, x = _tiny_kernel()
    no_scope = lambda name: contextlib.nullcontext()  # noqa: E731
    get_hook = lambda metadata: metadata.get()  # noqa: E731
    runs = [{"variant": "plain_before_cupti", "cycle": -1, "loop_s": _timed_loop(tiny, x, launches, no_scope)}]
    count = len(INPROCESS_VARIANTS)
    for cycle in range(cycles):
        shift = cycle % count
        for variant in INPROCESS_VARIANTS[shift:] + INPROCESS_VARIANTS[:shift]:
            kernels = launches
            if variant == "plain":
                loop = _timed_loop(tiny, x, launches, no_scope)
            elif variant == "plain_hook_get":
                triton.knobs.runtime.launch_enter_hook.add(get_hook)
                try:
                    loop = _timed_loop(tiny, x, launches, no_scope)
                finally:
                    triton.knobs.runtime.launch_enter_hook.remove(get_hook)
            else:
                proton.start(
                    os.path.join(out_dir, f"inprocess_{variant}_{cycle}"),
                    backend="cupti",
                    quiet=True,
                    hook="triton" if variant == "proton_hook" else None,
                )
                loop = _timed_loop(tiny, x, launches, proton.scope)
                kernels = proton.finalize().kernels
            runs.append({"variant": variant, "cycle": cycle, "loop_s": loop, "kernels_seen": kernels})
    return runs


def summarize_inprocess(runs) -> list:
    rows = []
    by_process = {}
    for r in runs:
        by_process.setdefault(r["process"], []).append(r)
    ratios = {v: [] for v in INPROCESS_VARIANTS + ("plain_before_cupti",)}
    loops = {v: [] for v in ratios}
    for process_runs in by_process.values():
        plain = {r["cycle"]: r["loop_s"] for r in process_runs if r["variant"] == "plain"}
        later_plain = [v for c, v in plain.items() if c > 0]
        for r in process_runs:
            loops[r["variant"]].append(r["loop_s"])
            if r["variant"] == "plain_before_cupti" and later_plain:
                ratios[r["variant"]].append(r["loop_s"] / statistics.median(later_plain))
            elif r["cycle"] > 0 and r["cycle"] in plain:
                ratios[r["variant"]].append(r["loop_s"] / plain[r["cycle"]])
    for variant, values in ratios.items():
        if values:
            rows.append(
                {
                    "variant": variant,
                    "loop_ms": statistics.median(loops[variant]) * 1e3,
                    "ratio": statistics.median(values),
                    "low": min(values),
                    "high": max(values),
                    "samples": len(values),
                }
            )
    return rows


def markdown_inprocess(rows, launches) -> str:
    lines = [
        f"In-process: {launches} launches per loop; every variant runs in the same process, one loop per "
        "cycle in rotating order; each ratio divides a loop by the same cycle's plain loop (cycle 0 is a "
        "warm-up). plain_before_cupti: the loop run before CUPTI was first loaded, over the later plain "
        "loops (below 1.000x if a finished session leaves a cost behind).",
        "",
        "| variant | loop ms | vs plain, median | range | samples |",
        "| --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        lines.append(
            f"| {r['variant']} | {r['loop_ms']:.1f} | {r['ratio']:.3f}x | {r['low']:.3f}-{r['high']:.3f} "
            f"| {r['samples']} |"
        )
    return "\n".join(lines) + "\n"


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


def _scoped_kernels_and_flops(path):
    """Kernel launches attributed below a scope node, and the root's flops32:
    checks that the calling contexts and the hook's metrics reached the tree."""
    root = _load_tree(path)

    def walk(node, in_scope):
        here = in_scope or node["frame"].get("type") == "scope"
        own = node["metrics"].get("count", 0) if here and node["frame"].get("type") == "kernel" else 0
        return own + sum(walk(c, here) for c in node.get("children", []))

    return int(walk(root, False)), root["metrics"].get("flops32", 0.0)


def _call_paths(path) -> int:
    return sum(1 for _ in _walk(_load_tree(path)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--launches", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--repeats",
        type=int,
        default=1,
        help="timed loops per process (the median is kept; all run inside one session)",
    )
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--pcsampling", action="store_true", help="also time mode='pcsampling'")
    parser.add_argument(
        "--ablations", action="store_true", help="also time a Python launch hook with and without proton"
    )
    parser.add_argument("--out", default="bench/results/host_overhead", help="path prefix for .json and .md")
    parser.add_argument(
        "--inprocess-cycles",
        type=int,
        default=0,
        help="also time the proton variants against plain loops inside one process (cycles per process)",
    )
    parser.add_argument("--inprocess-rounds", type=int, default=2, help="processes for --inprocess-cycles")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--child-dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child == "inprocess":
        print(json.dumps(inprocess_child(args.launches, args.inprocess_cycles, args.child_dir)))
        return
    if args.child:
        print(json.dumps(child(args.child, args.launches, args.child_dir, args.repeats)))
        return

    variants = [v for v in args.variants.split(",") if v] + (["proton_pcsampling"] if args.pcsampling else [])
    variants += [v for v in ("proton_pyhook", "plain_hook_noop") if v not in variants] if args.ablations else []
    runs = []
    work = tempfile.mkdtemp(prefix="bench_host_")
    if args.inprocess_cycles:
        run_inprocess(args, work)
    for round_index in range(args.rounds):
        for variant in variants:
            proc = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--child",
                    variant,
                    "--child-dir",
                    work,
                    "--launches",
                    str(args.launches),
                    "--repeats",
                    str(args.repeats),
                ],
                capture_output=True,
                text=True,
            )
            if proc.returncode != 0:
                runs.append({"variant": variant, "round": round_index, "error": proc.stderr[-2000:]})
                print(f"{variant}: FAILED\n{proc.stderr[-2000:]}", file=sys.stderr)
                continue
            result = json.loads(proc.stdout.strip().splitlines()[-1])
            result["round"] = round_index
            runs.append(result)
            print(
                f"round {round_index} {variant}: loop {result['loop_s'] * 1e3:.1f} ms, "
                f"kernels {result['kernels_seen']}",
                file=sys.stderr,
            )
        os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
        with open(args.out + ".partial.json", "w") as f:  # what a cut-off run still leaves
            json.dump({"launches": args.launches, "runs": runs}, f, indent=1)

    if not runs:
        return
    table = summarize(runs, variants, args.launches)
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out + ".json", "w") as f:
        json.dump({"launches": args.launches, "rounds": args.rounds, "runs": runs, "summary": table}, f, indent=1)
    with open(args.out + ".md", "w") as f:
        f.write(markdown(table, args.launches, args.rounds))
    print(markdown(table, args.launches, args.rounds))


def run_inprocess(args, work: str) -> None:
    inprocess = []
    for round_index in range(args.inprocess_rounds):
        proc = subprocess.run(
            [
                sys.executable,
                __file__,
                "--child",
                "inprocess",
                "--child-dir",
                work,
                "--launches",
                str(args.launches),
                "--inprocess-cycles",
                str(args.inprocess_cycles),
            ],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            print(f"inprocess: FAILED\n{proc.stderr[-2000:]}", file=sys.stderr)
            continue
        for r in json.loads(proc.stdout.strip().splitlines()[-1]):
            r["process"] = round_index
            inprocess.append(r)
    if not inprocess:
        return
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    rows = summarize_inprocess(inprocess)
    with open(args.out + "_inprocess.json", "w") as f:
        json.dump({"launches": args.launches, "runs": inprocess, "summary": rows}, f, indent=1)
    with open(args.out + "_inprocess.md", "w") as f:
        f.write(markdown_inprocess(rows, args.launches))
    print(markdown_inprocess(rows, args.launches))


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
        plain_by_round = {r["round"]: r["loop_s"] for r in ok if r["variant"] == "plain"}
        paired = [r["loop_s"] / plain_by_round[r["round"]] for r in mine if r["round"] in plain_by_round]
        rows.append(
            {
                "variant": variant,
                "loop_ms": loop * 1e3,
                "ratio": loop / base,
                "paired_ratio": statistics.median(paired) if paired else float("nan"),
                "paired_spread": (min(paired), max(paired)) if paired else None,
                "scoped_kernels": mine[-1].get("scoped_kernels"),
                "flops32": mine[-1].get("flops32"),
                "us_per_launch": loop / launches * 1e6,
                "session_ms": statistics.median(r["session_s"] for r in mine) * 1e3,
                "kernels_seen": mine[-1]["kernels_seen"],
                "tree_bytes": sizes[-1]["tree_bytes"] if sizes else None,
                "call_paths": sizes[-1]["call_paths"] if sizes else None,
                "bytes_per_call_path": sizes[-1]["tree_bytes"] / sizes[-1]["call_paths"] if sizes else None,
            }
        )
    return rows


def markdown(rows, launches, rounds) -> str:
    lines = [
        f"{launches} tiny Triton launches (200 scopes x 100) per timed loop; median over rounds (one process "
        f"per variant and round, variants interleaved; {rounds} rounds) of each process's median loop.",
        "'vs plain' divides medians; 'paired' is the median over rounds of each round's loop over that "
        "round's plain loop (its range after it).",
        "",
        "| variant | loop ms | vs plain | paired (range) | us/launch | session ms | kernels seen | "
        "in scopes | tree bytes | nodes | bytes/node |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        if r.get("error"):
            lines.append(f"| {r['variant']} | failed | | | | | | | | | |")
            continue
        size = f"{r['tree_bytes']}" if r["tree_bytes"] else "-"
        per = f"{r['bytes_per_call_path']:.0f}" if r["bytes_per_call_path"] else "-"
        nodes = r["call_paths"] or "-"
        spread = r["paired_spread"]
        paired = f"{r['paired_ratio']:.3f}x ({spread[0]:.3f}-{spread[1]:.3f})" if spread else "-"
        scoped = r["scoped_kernels"] if r["scoped_kernels"] is not None else "-"
        lines.append(
            f"| {r['variant']} | {r['loop_ms']:.1f} | {r['ratio']:.3f}x | {paired} | "
            f"{r['us_per_launch']:.2f} | {r['session_ms']:.1f} | {r['kernels_seen']} | {scoped} | {size} | "
            f"{nodes} | {per} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
