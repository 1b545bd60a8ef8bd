"""FlagGems (flag_gems, Triton implementations of aten ops, used through
flag_gems.use_gems()): a small transformer block, forward and backward, in
bf16 and fp32, and single ops that take FlagGems' own launch paths (its
LibEntry fast path from the second call on, host-TMA matmuls, autotuned
addmm). GEMS_VENDOR must be set before flag_gems is imported (driver.py)."""

from __future__ import annotations

import contextlib

import torch
import torch.nn.functional as F

#: Parts of the program; PROTON_DIFF_PARTS (driver.py) can pick some.
PARTS = ("block_bf16", "block_fp32", "ops_bf16", "ops_fp32")

B, T, C, H, V = 2, 128, 256, 4, 512


def _inputs(dtype, seed):
    """Parameters, input and labels, made on the CPU (flag_gems replaces
    torch's random generators while it is on)."""
    g = torch.Generator().manual_seed(seed)

    def randn(*shape, scale=1.0, shift=0.0):
        return (torch.randn(*shape, generator=g) * scale + shift).to(dtype)

    params = {
        "ln1_w": randn(C, scale=0.1, shift=1.0),
        "ln1_b": randn(C, scale=0.1),
        "wqkv": randn(3 * C, C, scale=C**-0.5),
        "bqkv": randn(3 * C, scale=0.02),
        "wo": randn(C, C, scale=C**-0.5),
        "bo": randn(C, scale=0.02),
        "ln2_w": randn(C, scale=0.1, shift=1.0),
        "ln2_b": randn(C, scale=0.1),
        "w1": randn(4 * C, C, scale=C**-0.5),
        "b1": randn(4 * C, scale=0.02),
        "w2": randn(C, 4 * C, scale=(4 * C) ** -0.5),
        "b2": randn(C, scale=0.02),
        "rms_w": randn(C, scale=0.1, shift=1.0),
        "wout": randn(V, C, scale=C**-0.5),
    }
    x = randn(B, T, C)
    labels = torch.randint(0, V, (B * T,), generator=g)
    return params, x, labels


def _block(p, x, labels):
    h = F.layer_norm(x, (C,), p["ln1_w"], p["ln1_b"])
    qkv = F.linear(h, p["wqkv"], p["bqkv"])
    q, k, v = (t.reshape(B, T, H, C // H).transpose(1, 2) for t in qkv.split(C, dim=-1))
    att = (q @ k.transpose(-1, -2)) * (C // H) ** -0.5
    causal = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)
    att = torch.softmax(att.masked_fill(causal, float("-inf")), dim=-1)
    y = (att @ v).transpose(1, 2).reshape(B, T, C)
    x = x + F.linear(y, p["wo"], p["bo"])
    m = F.gelu(F.linear(F.layer_norm(x, (C,), p["ln2_w"], p["ln2_b"]), p["w1"], p["b1"]))
    x = x + F.linear(m, p["w2"], p["b2"])
    logits = F.linear(F.rms_norm(x, (C,), p["rms_w"]), p["wout"])
    loss = F.cross_entropy(logits.reshape(-1, V), labels)
    return x, logits, loss


def _run_block(dtype, library):
    params, x, labels = _inputs(dtype, seed=0)
    params = {k: v.cuda().requires_grad_() for k, v in params.items()}
    x, labels = x.cuda().requires_grad_(), labels.cuda()
    with library():
        out, logits, loss = _block(params, x, labels)
        loss.backward()
    outputs = {"out": out, "logits": logits, "loss": loss, "grad_x": x.grad}
    outputs.update({f"grad_{k}": v.grad for k, v in params.items()})
    return outputs


def _run_ops(dtype, library):
    """Single ops, each called on two shapes and twice per shape: the second
    call of a shape takes LibEntry's fast path (CompiledKernel[grid])."""
    g = torch.Generator().manual_seed(1)
    shapes = [(256, 512, 384), (512, 256, 128)]
    cpu = {}
    for i, (m, n, k) in enumerate(shapes):
        cpu[f"a{i}"] = torch.randn(m, k, generator=g).to(dtype)
        cpu[f"b{i}"] = torch.randn(k, n, generator=g).to(dtype)
        cpu[f"bias{i}"] = torch.randn(n, generator=g).to(dtype)
        cpu[f"s{i}"] = torch.randn(m, n, generator=g).to(dtype)
        cpu[f"labels{i}"] = torch.randint(0, n, (m,), generator=g)
    dev = {k: v.cuda() for k, v in cpu.items()}
    out = {}
    with library():
        for repeat in range(2):
            for i in range(len(shapes)):
                a, b, bias, s = dev[f"a{i}"], dev[f"b{i}"], dev[f"bias{i}"], dev[f"s{i}"]
                tag = f"{i}_{repeat}"
                out[f"mm_{tag}"] = a @ b
                out[f"addmm_{tag}"] = torch.addmm(bias, a, b)
                out[f"bmm_{tag}"] = torch.bmm(a.unsqueeze(0), b.unsqueeze(0))
                out[f"softmax_{tag}"] = torch.softmax(s, dim=-1)
                out[f"sum_{tag}"] = s.sum(dim=0)
                out[f"cross_entropy_{tag}"] = F.cross_entropy(s, dev[f"labels{i}"])
    return out


def run(use_library: bool, parts=PARTS):
    if use_library:
        import flag_gems

        library = flag_gems.use_gems
    else:
        library = contextlib.nullcontext
    dtypes = {"bf16": torch.bfloat16, "fp32": torch.float32}
    outputs = {}
    for part in parts:
        kind, dtype = part.split("_")
        runner = _run_block if kind == "block" else _run_ops
        for name, value in runner(dtypes[dtype], library).items():
            outputs[f"{part}.{name}"] = value
    return outputs
