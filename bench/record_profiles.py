#!/usr/bin/env python3
"""Records the same small program with Triton's own Proton and with this
Proton, host (CUPTI) and intra-kernel, for the viewer-compatibility
fixtures in test/python/fixtures/recorded/. Each profiler runs in its own
process (two CUPTI subscribers cannot share one).

    python3 bench/record_profiles.py OUT_DIR
"""

import os
import subprocess
import sys

PROGRAM = r'''
import sys
import torch, triton, triton.language as tl
which, kind, out = sys.argv[1], sys.argv[2], sys.argv[3]
if which == "triton":
    import triton.profiler as proton
    import triton.profiler.language as pl
    pl.enable_semantic("triton")
else:
    import proton
    import proton.language as pl


def add_meta(grid, kernel, args):
    n = args["n"]
    return {"name": f"add_{n}", "flops32": n, "bytes": 12 * n}


@triton.jit(launch_metadata=add_meta)
def add(x, y, o, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    with pl.scope("load"):
        a = tl.load(x + offs, mask=offs < n)
        b = tl.load(y + offs, mask=offs < n)
    with pl.scope("store"):
        tl.store(o + offs, a + b, mask=offs < n)


n = 1 << 20
x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
o = torch.empty_like(x)
if kind == "host":
    proton.start(out, hook="triton")
    for step in range(3):
        with proton.scope("step", {"tokens": 128}):
            add[(n // 1024,)](x, y, o, n, BLOCK=1024)
            with proton.scope("inner"):
                add[(n // 1024,)](x, y, o, n, BLOCK=1024)
else:
    proton.start(out, backend="instrumentation", mode=proton.mode.Default())
    add[(n // 1024,)](x, y, o, n, BLOCK=1024)
torch.cuda.synchronize()
proton.finalize()
assert torch.equal(o, x + y)
print(which, kind, "ok")
'''


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    program = os.path.join(out_dir, "program.py")
    with open(program, "w") as f:
        f.write(PROGRAM)
    for which in ("triton", "proton"):
        for kind in ("host", "intra"):
            out = os.path.join(out_dir, f"{which}_{kind}")
            done = subprocess.run([sys.executable, program, which, kind, out], capture_output=True, text=True)
            print(done.stdout.strip(), done.stderr.strip()[-1500:], f"exit {done.returncode}")


if __name__ == "__main__":
    main()
