"""Prints the top of the tree a PC-sampling session writes for a program of
two scopes ("init": torch fills, "test": one Triton kernel looping over a
load/store): which children the root has, in which order, what is under
each, and the samples each kernel node keeps itself. For checking the order Triton's Proton tests expect."""

import json
import sys
import tempfile

import torch
import triton
import triton.language as tl

import proton


@triton.jit
def copy_loop(x, y, size: tl.constexpr):
    offs = tl.arange(0, size)
    for _ in range(1000):
        tl.store(y + offs, tl.load(x + offs))


def main():
    out = tempfile.mkdtemp() + "/pcs"
    proton.start(out, hook="triton", backend="cupti", mode="pcsampling")
    with proton.scope("init"):
        x = torch.ones((1024,), device="cuda", dtype=torch.float32)
        y = torch.zeros_like(x)
    with proton.scope("test"):
        copy_loop[(1,)](x, y, x.size()[0], num_warps=4)
    proton.finalize()
    root = json.load(open(out + ".hatchet"))[0]
    for child in root["children"]:
        below = [
            (c["frame"]["name"][:60], c["metrics"].get("num_samples"), [g["frame"]["name"] for g in c["children"]][:2])
            for c in child["children"]
        ]
        print(child["frame"]["name"], child["frame"].get("type"), below)
    return 0


if __name__ == "__main__":
    sys.exit(main())
