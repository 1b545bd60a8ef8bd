"""Profile the Triton kernels of a torch.compile'd model, and a kernel of your
own with scopes called inside a compiled function.

    python3 examples/torch_compile_model.py                      # profiles: torch_compile.*
    python3 examples/torch_compile_model.py --mode max-autotune  # Triton matmul templates, CUDA graphs
    python3 examples/torch_compile_model.py --plain              # no session (e.g. to warm the caches)

The model is a small transformer MLP (Linear, GELU, Linear, residual) in
fp16. Inductor generates its kernels; with `--mode max-autotune` (or
`max-autotune-no-cudagraphs`) and `max_autotune_gemm_backends="TRITON"` its
matrix multiplies are Triton templates too. The session uses Proton's MMA
mode, which needs no markers: every matrix multiply (wgmma on Hopper) gets
an issue and a wait scope. The user kernel `scaled_add` has a `pl.scope`;
Inductor compiles it like its own kernels and it records that scope.

While the session is active, Inductor compiles in this process and
launches through Triton's launcher (docs/usage.md, "torch.compile'd models"); kernels with
nothing to record (pointwise ones in MMA mode) and kernels compiled before
the session started are listed in the report as launched without records.
`--save FILE` writes the outputs and the report's counts (used by the GPU
tests).
"""

import argparse
import json
import sys

import triton
import triton.language as tl

import proton
import proton.language as pl


@triton.jit
def scaled_add(x, y, out, n, scale, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    with pl.scope("scaled_add"):
        a = tl.load(x + offsets, mask=mask)
        b = tl.load(y + offsets, mask=mask)
        tl.store(out + offsets, a * scale + b, mask=mask)


def build(torch, mode):
    class MLP(torch.nn.Module):
        def __init__(self, width=512, hidden=2048):
            super().__init__()
            self.up = torch.nn.Linear(width, hidden)
            self.down = torch.nn.Linear(hidden, width)

        def forward(self, x):
            return x + self.down(torch.nn.functional.gelu(self.up(x)))

    def user_step(x, y):
        out = torch.empty_like(x)
        scaled_add[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel(), 0.5, BLOCK=1024)
        return torch.relu(out)

    model = MLP().cuda().half()
    return model, torch.compile(model, mode=mode), torch.compile(user_step)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mode", default="max-autotune-no-cudagraphs", help="torch.compile mode")
    p.add_argument("--plain", action="store_true", help="run without a Proton session")
    p.add_argument("--name", default="torch_compile", help="session name (output files' base name)")
    p.add_argument("--steps", type=int, default=3, help="calls of the compiled model (CUDA graphs record at 2)")
    p.add_argument("--save", help="write outputs (torch.save) and the report's counts (FILE.json)")
    args = p.parse_args()
    reason = proton.gpu.why_no_gpu()
    if reason:
        print(f"torch_compile_model.py: nothing runs: {reason}")
        return 0
    import torch
    import torch._inductor.config

    torch._inductor.config.max_autotune_gemm_backends = "TRITON"
    torch.manual_seed(0)
    model, compiled, user_step = build(torch, args.mode)
    x = torch.randn(256, 512, device="cuda", dtype=torch.half)
    y = torch.randn(1 << 16, device="cuda")
    z = torch.randn(1 << 16, device="cuda")
    session = None if args.plain else proton.start(args.name, backend="instrumentation", mode="mma")
    with torch.no_grad():
        outs = [compiled(x).clone() for _ in range(args.steps)]
    user = user_step(y, z)
    torch.cuda.synchronize()
    report = proton.finalize(session) if session is not None else None
    with torch.no_grad():
        expected = model(x)
    error = max((o.float() - expected.float()).abs().max().item() for o in outs)
    user_ok = torch.allclose(user, torch.relu(y * 0.5 + z))
    print(f"model: max |compiled - eager| = {error:.4f}; user kernel result right: {user_ok}")
    if args.save:
        torch.save({"model": outs[-1].cpu(), "user": user.cpu()}, args.save)
        counts = None
        if report is not None:
            counts = {
                "per_kernel": report.per_kernel,
                "unrecorded": report.unrecorded,
                "graphs": report.graphs,
                "errors": report.errors,
                "events": report.events,
            }
        json.dump({"error": error, "user_ok": user_ok, "report": counts}, open(args.save + ".json", "w"))
    return 0 if error < 0.05 and user_ok else 1


if __name__ == "__main__":
    sys.exit(main())
