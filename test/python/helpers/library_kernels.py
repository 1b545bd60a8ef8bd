"""Kernels written the way Triton kernel libraries write them (written here):
early returns for out-of-range rows and ignored labels, several returns,
reductions, loops over column blocks with branches inside, an autotuned
kernel with several configs, several kernels in one program. No Proton
markers: the override workflow (insert_proton_records) instruments them.

COMPILES lists (kernel, signature, constexprs) to compile each for a target
on the CPU; run_program launches all of them on a GPU and returns their
outputs, for comparing plain and profiled runs."""

import triton
import triton.language as tl


@triton.jit
def rms_norm_fwd(X, W, Y, RSTD, stride, n_rows, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    if row >= n_rows:
        return
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(X + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(W + cols, mask=mask, other=0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    tl.store(RSTD + row, rstd)
    tl.store(Y + row * stride + cols, x * rstd * w, mask=mask)


@triton.jit
def cross_entropy_fwd(LOGITS, LABELS, LOSS, stride, n_rows, n_cols, ignore_index, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    if row >= n_rows:
        return
    label = tl.load(LABELS + row)
    if label == ignore_index:
        tl.store(LOSS + row, 0.0)
        return
    m = float("-inf")
    s = 0.0
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(LOGITS + row * stride + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    target = tl.load(LOGITS + row * stride + label).to(tl.float32)
    tl.store(LOSS + row, tl.log(s) + m - target)


@triton.jit
def block_sums(X, OUT, n, STEPS: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(STEPS):
        offs = (pid * STEPS + i) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(X + offs, mask=offs < n, other=0.0)
        if i % 2 == 0:
            acc += x
        else:
            acc -= x
    tl.store(OUT + pid * BLOCK + tl.arange(0, BLOCK), acc)


@triton.autotune(
    configs=[triton.Config({"BLOCK": 512}, num_warps=4), triton.Config({"BLOCK": 1024}, num_warps=8)],
    key=["n"],
)
@triton.jit
def swiglu_fwd(A, B, C, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(A + offs, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(B + offs, mask=mask, other=0.0)
    tl.store(C + offs, (a * tl.sigmoid(a) * b).to(C.dtype.element_ty), mask=mask)


COMPILES = [
    (
        rms_norm_fwd,
        {
            "X": "*fp16",
            "W": "*fp16",
            "Y": "*fp16",
            "RSTD": "*fp32",
            "stride": "i32",
            "n_rows": "i32",
            "n_cols": "i32",
            "eps": "fp32",
            "BLOCK": "constexpr",
        },
        {"BLOCK": 1024},
    ),
    (
        cross_entropy_fwd,
        {
            "LOGITS": "*fp32",
            "LABELS": "*i64",
            "LOSS": "*fp32",
            "stride": "i32",
            "n_rows": "i32",
            "n_cols": "i32",
            "ignore_index": "i32",
            "BLOCK": "constexpr",
        },
        {"BLOCK": 1024},
    ),
    (
        block_sums,
        {"X": "*fp32", "OUT": "*fp32", "n": "i32", "STEPS": "constexpr", "BLOCK": "constexpr"},
        {"STEPS": 8, "BLOCK": 256},
    ),
    (swiglu_fwd.fn, {"A": "*fp16", "B": "*fp16", "C": "*fp16", "n": "i32", "BLOCK": "constexpr"}, {"BLOCK": 512}),
    (swiglu_fwd.fn, {"A": "*fp16", "B": "*fp16", "C": "*fp16", "n": "i32", "BLOCK": "constexpr"}, {"BLOCK": 1024}),
]

#: Kernel name -> launches run_program makes (CTAs x warps come from the grid and config).
KERNEL_NAMES = ("rms_norm_fwd", "cross_entropy_fwd", "block_sums", "swiglu_fwd")


def run_program(torch, seed=0):
    """Launches every kernel (rows past the end and ignored labels included)
    and returns {name: output tensor}."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    out = {}
    rows, cols = 64, 1000
    x = torch.randn(rows, cols, device="cuda", generator=g).half()
    w = torch.randn(cols, device="cuda", generator=g).half()
    y, rstd = torch.empty_like(x), torch.empty(rows, device="cuda")
    rms_norm_fwd[(rows + 8,)](x, w, y, rstd, cols, rows, cols, 1e-6, BLOCK=1024)  # 8 programs return early
    out["rms_norm_fwd"] = torch.cat([y.float().flatten(), rstd])
    logits = torch.randn(rows, 5000, device="cuda", generator=g)
    labels = torch.randint(0, 5000, (rows,), device="cuda", generator=g)
    labels[::4] = -100  # ignored rows take the second early return
    loss = torch.empty(rows, device="cuda")
    cross_entropy_fwd[(rows + 8,)](logits, labels, loss, 5000, rows, 5000, -100, BLOCK=1024)
    out["cross_entropy_fwd"] = loss
    v = torch.randn(64 * 8 * 256, device="cuda", generator=g)
    sums = torch.empty(64 * 256, device="cuda")
    block_sums[(64,)](v, sums, v.numel(), STEPS=8, BLOCK=256)
    out["block_sums"] = sums
    a = torch.randn(1 << 16, device="cuda", generator=g).half()
    b = torch.randn(1 << 16, device="cuda", generator=g).half()
    c = torch.empty_like(a)
    swiglu_fwd[lambda meta: (triton.cdiv(a.numel(), meta["BLOCK"]),)](a, b, c, a.numel())
    out["swiglu_fwd"] = c
    return out
