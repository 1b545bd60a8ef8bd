"""The device cases' problems: inputs, launch arguments, compile-only calls
and result checks for the kernels of bench/kernels.py (vector add, matmul,
softmax, attention forward and backward)."""


class VectorAdd:
    template, tag, kernel_key = "vector_add", "", "vector_add"

    def __init__(self, n):
        import torch

        self.torch = torch
        self.n = n
        gen = torch.Generator(device="cuda").manual_seed(0)
        self.x = torch.randn(n, device="cuda", generator=gen)
        self.y = torch.randn(n, device="cuda", generator=gen)

    def output(self):
        return self.torch.full_like(self.x, float("nan"))

    def call(self, out):
        import triton
        import kernels

        grid = (triton.cdiv(self.n, kernels.VECTOR_ADD_BLOCK),)
        return grid, (self.x, self.y, out, self.n), dict(BLOCK=kernels.VECTOR_ADD_BLOCK, **kernels.VECTOR_ADD_OPTIONS)

    def launch(self, fn, out):
        grid, a, kw = self.call(out)
        return fn[grid](*a, **kw)

    def compile_only(self, fn, out):
        grid, a, kw = self.call(out)
        return fn.warmup(*a, grid=grid, **kw)

    def sanity(self, out):
        return {"equal_to_torch": bool(self.torch.equal(out, self.x + self.y))}

    def compare(self, out, plain_out):
        equal = bool(self.torch.equal(out, plain_out))
        return {"equal_to_plain": equal}, equal


class Matmul:
    template, kernel_key = "matmul", None

    def __init__(self, tag, size):
        import torch

        self.torch = torch
        self.tag = tag
        self.kernel_key = f"matmul_{tag}"
        self.size = size
        gen = torch.Generator(device="cuda").manual_seed(0)
        self.a = torch.randn((size, size), device="cuda", dtype=torch.float16, generator=gen)
        self.b = torch.randn((size, size), device="cuda", dtype=torch.float16, generator=gen)

    def output(self):
        return self.torch.full((self.size, self.size), float("nan"), device="cuda", dtype=self.torch.float16)

    def call(self, out):
        import triton
        import kernels

        bm, bn, bk = (kernels.MATMUL_BLOCKS[k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K"))
        s = self.size
        assert s % bk == 0, "the kernel has no K masks"
        grid = (triton.cdiv(s, bm) * triton.cdiv(s, bn),)
        a, b = self.a, self.b
        args = (a, b, out, s, s, s, a.stride(0), a.stride(1), b.stride(0), b.stride(1), out.stride(0), out.stride(1))
        kw = dict(**kernels.MATMUL_BLOCKS, **kernels.MATMUL_SCOPES[self.tag], **kernels.MATMUL_OPTIONS)
        return grid, args, kw

    launch = VectorAdd.launch
    compile_only = VectorAdd.compile_only

    def sanity(self, out):
        ref = self.torch.matmul(self.a.float(), self.b.float())
        err = (out.float() - ref).abs()
        return {"max_abs_err_vs_torch_fp32": float(err.max()), "finite": bool(self.torch.isfinite(out).all())}

    def compare(self, out, plain_out):
        close = bool(self.torch.allclose(out.float(), plain_out.float(), rtol=1e-2, atol=1e-2))
        return {"allclose_to_plain": close, "bitwise_equal_to_plain": bool(self.torch.equal(out, plain_out))}, close


class Softmax:
    template, tag, kernel_key = "softmax", "", "softmax"

    def __init__(self, rows, cols):
        import torch

        self.torch = torch
        self.rows, self.cols = rows, cols
        gen = torch.Generator(device="cuda").manual_seed(0)
        self.x = torch.randn((rows, cols), device="cuda", generator=gen)

    def output(self):
        return self.torch.full_like(self.x, float("nan"))

    def call(self, out):
        import triton
        import kernels

        grid = (self.rows,)
        args = (out, self.x, self.x.stride(0), out.stride(0), self.cols)
        return grid, args, dict(BLOCK=triton.next_power_of_2(self.cols), **kernels.SOFTMAX_OPTIONS)

    launch = VectorAdd.launch
    compile_only = VectorAdd.compile_only

    def sanity(self, out):
        err = float((out - self.torch.softmax(self.x, dim=-1)).abs().max())
        return {"max_abs_err_vs_torch": err, "within_tolerance": err < 1e-5}

    compare = VectorAdd.compare


class Attention:
    template = "attention_fwd"
    LOG2E = 1.4426950408889634

    def __init__(self, shape, causal=False, softmax_scope=True):
        import torch

        self.torch = torch
        self.shape = shape
        self.causal = causal
        self.softmax_scope = softmax_scope
        self.tag = ("causal" if causal else "") + ("" if softmax_scope else "_outer")
        self.kernel_key = ("attention_causal" if causal else "attention_fwd") + ("" if softmax_scope else "_outer")
        gen = torch.Generator(device="cuda").manual_seed(0)
        self.q, self.k, self.v = (
            torch.randn(shape, device="cuda", dtype=torch.float16, generator=gen) for _ in range(3)
        )
        self.sm_scale = shape[-1] ** -0.5

    def output(self):
        return self.torch.full(self.shape, float("nan"), device="cuda", dtype=self.torch.float16)

    def call(self, out):
        import kernels

        batch, heads, seqlen, head_dim = self.shape
        bm, bn = kernels.ATTENTION_BLOCKS["BLOCK_M"], kernels.ATTENTION_BLOCKS["BLOCK_N"]
        assert seqlen % bm == 0 and seqlen % bn == 0, "the kernel has no masks"
        assert all(t.is_contiguous() for t in (self.q, self.k, self.v, out)), "the kernel assumes contiguous tensors"
        assert self.q.numel() < 2**31, "32-bit offsets"
        grid = (seqlen // bm, batch * heads)
        args = (self.q, self.k, self.v, out, self.sm_scale * self.LOG2E, self.q.stride(1), self.q.stride(2), seqlen)
        options = dict(**kernels.ATTENTION_BLOCKS, HEAD_DIM=head_dim, **kernels.ATTENTION_OPTIONS)
        if self.causal:
            options["CAUSAL"] = True
        if not self.softmax_scope:
            options["SOFTMAX_SCOPE"] = False
        return grid, args, options

    launch = VectorAdd.launch
    compile_only = VectorAdd.compile_only

    def sanity(self, out):
        # fp32 reference, one batch element at a time (bounded memory).
        sdpa = self.torch.nn.functional.scaled_dot_product_attention
        err = 0.0
        for i in range(self.shape[0]):
            q, k, v = (t[i : i + 1].float() for t in (self.q, self.k, self.v))
            expected = sdpa(q, k, v, scale=self.sm_scale, is_causal=self.causal)
            err = max(err, float((out[i : i + 1].float() - expected).abs().max()))
        return {
            "max_abs_err_vs_torch_fp32": err,
            "within_tolerance": err < 2e-2,
            "finite": bool(self.torch.isfinite(out).all()),
        }

    compare = Matmul.compare


class AttentionBackward:
    """Flash-attention backward (bench/kernels.py attention_bwd): dQ, dK, dV
    of a random dO, from the forward's log-sum-exp and rowsum(O * dO)
    computed on the host in fp32. The output holds dQ, dK, dV stacked."""

    template, tag, kernel_key = "attention_bwd", "", "attention_bwd"
    LOG2E = Attention.LOG2E

    def __init__(self, shape):
        import torch

        self.torch = torch
        self.shape = shape
        gen = torch.Generator(device="cuda").manual_seed(0)
        self.q, self.k, self.v, self.do = (
            torch.randn(shape, device="cuda", dtype=torch.float16, generator=gen) for _ in range(4)
        )
        self.sm_scale = shape[-1] ** -0.5
        batch, heads, seqlen, _ = shape
        self.lse = torch.empty((batch, heads, seqlen), device="cuda", dtype=torch.float32)
        self.delta = torch.empty_like(self.lse)
        for i in range(batch):  # one batch element at a time: bounded memory
            s = self._scores(i)
            self.lse[i] = torch.logsumexp(s, dim=-1) * self.LOG2E
            o = torch.softmax(s, dim=-1) @ self.v[i].float()
            self.delta[i] = (o * self.do[i].float()).sum(dim=-1)
            del s, o

    def _scores(self, i):
        return (self.q[i].float() @ self.k[i].float().transpose(-1, -2)) * self.sm_scale

    def output(self):
        return self.torch.full((3, *self.shape), float("nan"), device="cuda", dtype=self.torch.float16)

    def call(self, out):
        import kernels

        batch, heads, seqlen, head_dim = self.shape
        block = kernels.ATTENTION_BWD_BLOCK
        assert seqlen % block == 0, "the kernel has no masks"
        assert all(t.is_contiguous() for t in (self.q, self.k, self.v, self.do, out)), "contiguous tensors"
        assert out.numel() < 2**31, "32-bit offsets"
        grid = (seqlen // block, batch * heads)
        args = (
            self.q,
            self.k,
            self.v,
            self.do,
            self.lse,
            self.delta,
            out[0],
            out[1],
            out[2],
            self.sm_scale * self.LOG2E,
            self.sm_scale,
            self.q.stride(1),
            self.q.stride(2),
            seqlen,
        )
        return grid, args, dict(BLOCK=block, HEAD_DIM=head_dim, **kernels.ATTENTION_BWD_OPTIONS)

    launch = VectorAdd.launch
    compile_only = VectorAdd.compile_only

    def sanity(self, out):
        # fp32 autograd of softmax(Q K^T sm_scale) V on the first batch
        # element; errors relative to the largest gradient of each tensor.
        torch = self.torch
        q, k, v = (t[0].float().requires_grad_() for t in (self.q, self.k, self.v))
        o = torch.softmax((q @ k.transpose(-1, -2)) * self.sm_scale, dim=-1) @ v
        o.backward(self.do[0].float())
        checks, worst = {}, 0.0
        for name, got, ref in zip(("dq", "dk", "dv"), out, (q.grad, k.grad, v.grad)):
            rel = float((got[0].float() - ref).abs().max() / ref.abs().max())
            checks[f"max_rel_err_{name}"] = rel
            worst = max(worst, rel)
        checks["within_tolerance"] = worst < 2e-2
        checks["finite"] = bool(torch.isfinite(out).all())
        return checks

    compare = Matmul.compare


def make_case(key, small=False):
    import kernels

    if key.startswith("vector_add"):
        n = 1 << 20 if (small or key == "vector_add_1m" or key == "vector_add") else 1 << 26
        return VectorAdd(n)
    if key == "softmax":
        rows, cols = kernels.SOFTMAX_SHAPE
        return Softmax(256 if small else rows, cols)  # small: same columns, so the same build
    if key in ("attention_fwd", "attention_causal", "attention_causal_outer"):
        shape = kernels.ATTENTION_SHAPE
        small_shape = (1, 2, 512, shape[3])
        return Attention(
            small_shape if small else shape, causal="causal" in key, softmax_scope=not key.endswith("_outer")
        )
    if key == "attention_bwd":
        shape = kernels.ATTENTION_SHAPE
        return AttentionBackward((1, 2, 512, shape[3]) if small else shape)
    tag = key.split("_", 1)[1]
    return Matmul(tag, 1024 if small else 4096)
