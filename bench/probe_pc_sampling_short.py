"""Probe (GPU): do kernels of a few microseconds get PC samples?

Runs, each in its own session of mode="pcsampling": Triton's upstream
test_pcsampling program (torch.ones/zeros_like, then a Triton kernel of a
1000-iteration loop), 200 launches of torch.ones on 1024 floats, and one
torch.ones on 2^26 floats. Prints, per session, the samples CUPTI reported
(proton._host.counters()) and each kernel node's samples in the tree.
    python bench/probe_pc_sampling_short.py [--interval N] [--profiler ours|upstream]
        [--out FILE.json]
"""

import argparse
import json
import tempfile

import torch
import triton
import triton.language as tl

from proton.writers.hatchet_tree import inclusive

proton = None  # the profiler under test (--profiler)


@triton.jit
def copy_loop(x, y, size: tl.constexpr):
    offs = tl.arange(0, size)
    for _ in range(1000):
        tl.store(y + offs, tl.load(x + offs))


def upstream_program():
    with proton.scope("init"):
        x = torch.ones((1024,), device="cuda", dtype=torch.float32)
        y = torch.zeros_like(x)
    with proton.scope("test"):
        copy_loop[(1,)](x, y, x.size()[0], num_warps=4)


def ones_small():
    for _ in range(200):
        torch.ones((1024,), device="cuda")


def ones_big():
    torch.ones((1 << 26,), device="cuda")


def kernels(node, path=()):
    here = path + (node["frame"]["name"],)
    if any(k in node["frame"]["name"] for k in ("elementwise", "copy_loop")):
        yield "/".join(here[1:]), node["metrics"].get("num_samples", 0), node["metrics"].get("count", 0)
        return
    for child in node["children"]:
        yield from kernels(child, here)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--interval", type=int, default=None)
    parser.add_argument("--out", default=None)
    parser.add_argument("--profiler", choices=["ours", "upstream"], default="ours")
    parser.add_argument("--repeat", type=int, default=1, help="sessions of the upstream program")
    args = parser.parse_args()
    global proton
    if args.profiler == "ours":
        import proton as module
        from proton import _host

        counters = _host.counters
    else:
        import triton.profiler as module

        def counters():
            return {"pc_samples": 0, "pc_samples_dropped": 0}

    proton = module
    torch.zeros(1, device="cuda")
    copy_loop[(1,)](torch.ones(1024, device="cuda"), torch.empty(1024, device="cuda"), 1024)  # compiled before
    torch.cuda.synchronize()
    mode = "pcsampling" if args.interval is None else f"pcsampling:interval={args.interval}"
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        cases = [(f"upstream{i}", upstream_program) for i in range(args.repeat)]
        cases += [("ones_small", ones_small), ("ones_big", ones_big)]
        for name, program in cases:
            before = counters()
            proton.start(f"{tmp}/{name}", hook="triton", backend="cupti", mode=mode)
            program()
            proton.finalize()
            after = counters()
            with open(f"{tmp}/{name}.hatchet") as f:
                root = inclusive(json.load(f)[0])
            rows = list(kernels(root))
            results[name] = {
                "cupti_samples": after["pc_samples"] - before["pc_samples"],
                "cupti_dropped": after["pc_samples_dropped"] - before["pc_samples_dropped"],
                "kernels": rows,
            }
            print(name, json.dumps(results[name]), flush=True)
    fill = [
        sum(n for name, n, _ in r["kernels"] if "elementwise" in name)
        for case, r in results.items()
        if case.startswith("upstream")
    ]
    results["fill_samples_per_upstream_session"] = fill
    print("fill samples per upstream session:", fill, "sessions with none:", fill.count(0), "of", len(fill))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
