#!/usr/bin/env python3
"""Probe one corpus case on a GPU: launch it plain and profiled several times
(same seeds) and print, per output, how many elements differ from the first
plain run and the first few of them. Separates nondeterminism (plain runs
differ from each other) from a change the instrumentation makes.

    python3 bench/probe_corpus_case.py fp8_convert_ocp [--modes "default;default:buffer_type=shared"]
"""

import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "python", "helpers"))

import torch  # noqa: E402

import proton  # noqa: E402
from corpus import CASES  # noqa: E402


def bits(t):
    return t.detach().contiguous().view(-1).view(torch.uint8)


def describe(label, ref, outs, inputs):
    for k, (a, b) in enumerate(zip(ref, outs)):
        ra, rb = a.detach().reshape(-1), b.detach().reshape(-1)
        ea = ra.view(-1).view(torch.uint8).reshape(ra.numel(), -1)
        eb = rb.view(-1).view(torch.uint8).reshape(rb.numel(), -1)
        diff = (ea != eb).any(dim=1).nonzero().flatten().tolist()
        print(f"{label}: output {k} ({a.dtype}) differs at {len(diff)} of {ra.numel()} elements", flush=True)
        for i in diff[:6]:
            x = inputs.reshape(-1)[i].item() if inputs is not None and i < inputs.numel() else None
            print(f"    [{i}] first plain {ra[i].item()!r}  this {rb[i].item()!r}  input {x!r}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("case")
    p.add_argument("--modes", default="default;default:buffer_type=shared")
    p.add_argument("--repeat", type=int, default=2)
    args = p.parse_args()
    case = next(c for c in CASES if c.name == args.case)
    torch.manual_seed(0)
    inputs = torch.randn(4096, device="cuda") * 4.0  # the corpus's first draw for most cases
    ref = case.launch(case, "cuda")
    torch.cuda.synchronize()
    for r in range(args.repeat):
        describe(f"plain run {r + 2}", ref, case.launch(case, "cuda"), inputs)
    for mode in args.modes.split(";"):
        for r in range(args.repeat):
            proton.start(os.path.join(tempfile.mkdtemp(), "probe"), backend="instrumentation", mode=mode, quiet=True)
            outs = case.launch(case, "cuda")
            torch.cuda.synchronize()
            report = proton.finalize()
            describe(f"{mode} run {r + 1} (events {report.events})", ref, outs, inputs)


if __name__ == "__main__":
    main()
