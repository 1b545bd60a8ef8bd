"""flash-linear-attention (fla-core's fla.ops): gated linear attention in its
chunked and recurrent forms (chunk_simple_gla, chunk_gla,
fused_recurrent_simple_gla), forward and backward, in bf16 and fp32, and
the same recurrences written step by step in PyTorch for reference."""

from __future__ import annotations

import torch
import torch.nn.functional as F

PARTS = ("gla_bf16", "gla_fp32")

B, T, H, K, V = 2, 128, 4, 64, 64


def _naive(q, k, v, g, per_key):
    """h_t = exp(g_t) h_{t-1} + k_t^T v_t, o_t = scale q_t h_t, in fp32."""
    q, k, v, g = (t.float() for t in (q, k, v, g))
    scale = K**-0.5
    h = q.new_zeros(B, H, K, V)
    out = []
    for t in range(T):
        decay = g[:, t].exp()[..., None] if per_key else g[:, t].exp()[..., None, None]
        h = h * decay + k[:, t, :, :, None] * v[:, t, :, None, :]
        out.append(torch.einsum("bhk,bhkv->bhv", q[:, t] * scale, h))
    return torch.stack(out, dim=1), h


def _inputs(dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(B, T, H, d, generator=g) * 0.5 for d in (K, K, V))
    gates = F.logsigmoid(torch.randn(B, T, H, generator=g))
    key_gates = F.logsigmoid(torch.randn(B, T, H, K, generator=g)) / 8
    return [t.to(dtype) for t in (q, k, v)] + [gates.float(), key_gates.float()]


def _run(dtype, use_library):
    q, k, v, gates, key_gates = (t.cuda().requires_grad_() for t in _inputs(dtype))
    head_decay = -torch.linspace(0.05, 0.5, H, device="cuda")  # log decay per head
    if use_library:
        from fla.ops import chunk_gla, chunk_simple_gla, fused_recurrent_simple_gla

        # Per-head decay (g_gamma) for the chunked form: fla refuses per-token gates there on
        # Triton < 3.7.1 on Hopper (it computes them wrong: fla-org/flash-linear-attention#640).
        forms = {
            "chunk_simple_gla": lambda: chunk_simple_gla(q, k, v, g_gamma=head_decay, output_final_state=True),
            "recurrent_simple_gla": lambda: fused_recurrent_simple_gla(q, k, v, g=gates, output_final_state=True),
            "chunk_gla": lambda: chunk_gla(q, k, v, key_gates.to(dtype), output_final_state=True),
        }
    else:
        forms = {
            "chunk_simple_gla": lambda: _naive(q, k, v, head_decay.expand(B, T, H), per_key=False),
            "recurrent_simple_gla": lambda: _naive(q, k, v, gates, per_key=False),
            "chunk_gla": lambda: _naive(q, k, v, key_gates.to(dtype), per_key=True),
        }
    outputs = {}
    for name, form in forms.items():
        o, state = form()
        (o.float().square().sum() + state.float().sum()).backward()
        outputs[f"{name}.o"] = o.to(dtype)
        outputs[f"{name}.state"] = state.float()
        for tensor_name, tensor in (("q", q), ("k", k), ("v", v), ("g", gates), ("gk", key_gates)):
            if tensor.grad is not None:
                outputs[f"{name}.grad_{tensor_name}"] = tensor.grad.clone()
                tensor.grad = None
    return outputs


def run(use_library: bool, parts=PARTS):
    dtypes = {"bf16": torch.bfloat16, "fp32": torch.float32}
    outputs = {}
    for part in parts:
        for name, value in _run(dtypes[part.split("_")[1]], use_library).items():
            outputs[f"{part}.{name}"] = value
    return outputs
