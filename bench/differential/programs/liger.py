"""Liger-Kernel (liger_kernel): a Llama-style block of its functional ops,
forward and backward, in bf16 and fp32 (RMSNorm, RoPE, SwiGLU, LayerNorm,
softmax, cross-entropy and the fused linear cross-entropy), with the same
block in plain PyTorch for reference."""

from __future__ import annotations

import torch
import torch.nn.functional as F

PARTS = ("block_bf16", "block_fp32")

B, H, T, D, V = 2, 4, 128, 64, 512
C = H * D
EPS = 1e-6


class _Torch:
    """The reference versions of Liger's ops."""

    @staticmethod
    def rms_norm(x, w, eps):
        x32 = x.float()
        return (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype) * w

    @staticmethod
    def rope(q, k, cos, sin):
        def rotate(t):
            half = t.shape[-1] // 2
            return torch.cat((-t[..., half:], t[..., :half]), dim=-1)

        cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
        return q * cos + rotate(q) * sin, k * cos + rotate(k) * sin

    swiglu = staticmethod(lambda a, b: F.silu(a) * b)
    layer_norm = staticmethod(lambda x, w, b, eps: F.layer_norm(x, (x.shape[-1],), w, b, eps))
    softmax = staticmethod(lambda x: torch.softmax(x, dim=-1))
    cross_entropy = staticmethod(F.cross_entropy)
    fused_linear_cross_entropy = staticmethod(lambda x, w, y: F.cross_entropy(x @ w.t(), y))


class _Liger:
    def __init__(self):
        from liger_kernel.transformers import functional as lf

        self.rms_norm = lambda x, w, eps: lf.liger_rms_norm(x, w, eps)
        self.rope = lf.liger_rope
        self.swiglu = lf.liger_swiglu
        self.layer_norm = lf.liger_layer_norm
        self.softmax = lf.liger_softmax
        self.cross_entropy = lf.liger_cross_entropy
        self.fused_linear_cross_entropy = lf.liger_fused_linear_cross_entropy


def _inputs(dtype, seed=0):
    g = torch.Generator().manual_seed(seed)

    def randn(*shape, scale=1.0, shift=0.0):
        return (torch.randn(*shape, generator=g) * scale + shift).to(dtype)

    params = {
        "norm_w": randn(C, scale=0.1, shift=1.0),
        "wq": randn(C, C, scale=C**-0.5),
        "wk": randn(C, C, scale=C**-0.5),
        "wgate": randn(2 * C, C, scale=C**-0.5),
        "wup": randn(2 * C, C, scale=C**-0.5),
        "ln_w": randn(2 * C, scale=0.1, shift=1.0),
        "ln_b": randn(2 * C, scale=0.1),
        "wout": randn(V, 2 * C, scale=(2 * C) ** -0.5),
    }
    x = randn(B * T, C)
    labels = torch.randint(0, V, (B * T,), generator=g)
    angles = torch.arange(T).float()[:, None] * (10000.0 ** (-torch.arange(0, D, 2).float() / D))[None, :]
    angles = torch.cat((angles, angles), dim=-1)[None]  # (1, T, D)
    return params, x, labels, angles.cos().to(dtype), angles.sin().to(dtype)


def _block(ops, p, x, labels, cos, sin):
    h = ops.rms_norm(x, p["norm_w"], EPS)
    q = (h @ p["wq"].t()).reshape(B, T, H, D).transpose(1, 2)
    k = (h @ p["wk"].t()).reshape(B, T, H, D).transpose(1, 2)
    q, k = ops.rope(q.contiguous(), k.contiguous(), cos, sin)
    scores = ops.softmax((q @ k.transpose(-1, -2)).reshape(-1, T) * D**-0.5).reshape(B, H, T, T)
    mixed = (scores @ q).transpose(1, 2).reshape(B * T, C)
    m = ops.swiglu(mixed @ p["wgate"].t(), h @ p["wup"].t())
    m = ops.layer_norm(m, p["ln_w"], p["ln_b"], EPS)
    logits = m @ p["wout"].t()
    loss = ops.cross_entropy(logits.float(), labels)
    fused_loss = ops.fused_linear_cross_entropy(m, p["wout"], labels)
    return m, logits, loss, fused_loss


def _run_block(ops, dtype):
    params, x, labels, cos, sin = _inputs(dtype)
    params = {k: v.cuda().requires_grad_() for k, v in params.items()}
    x, labels, cos, sin = x.cuda().requires_grad_(), labels.cuda(), cos.cuda(), sin.cuda()
    m, logits, loss, fused_loss = _block(ops, params, x, labels, cos, sin)
    (loss + fused_loss).backward()
    outputs = {"m": m, "logits": logits, "loss": loss, "fused_loss": fused_loss, "grad_x": x.grad}
    outputs.update({f"grad_{k}": v.grad for k, v in params.items()})
    return outputs


def run(use_library: bool, parts=PARTS):
    ops = _Liger() if use_library else _Torch()
    dtypes = {"bf16": torch.bfloat16, "fp32": torch.float32}
    outputs = {}
    for part in parts:
        for name, value in _run_block(ops, dtypes[part.split("_")[1]]).items():
            outputs[f"{part}.{name}"] = value
    return outputs
