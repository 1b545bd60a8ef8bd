"""Everyday Triton kernels with Proton scopes, written for the corpus.

Every kernel opens and closes its scopes in the same block (never inside an
`if` and out of it), so each scope's end post-dominates its start. Scopes
inside a loop record once per iteration. Sizes are chosen by the cases
(`corpus/__init__.py`); kernels here take them as arguments or constexprs.
"""

import triton
import triton.language as tl
from triton.language.extra import libdevice

import proton.language as pl

LOG2E = 1.4426950408889634

# ---------------------------------------------------------------------------
# Elementwise, row-wise and normalization kernels
# ---------------------------------------------------------------------------


@triton.jit
def vector_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    with pl.scope("vadd"):
        with pl.scope("load"):
            x = tl.load(x_ptr + offs, mask=mask)
            y = tl.load(y_ptr + offs, mask=mask)
        with pl.scope("store"):
            tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def softmax(x_ptr, out_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    with pl.scope("load"):
        x = tl.load(x_ptr + row * stride + cols, mask=mask, other=-float("inf"))
    with pl.scope("softmax"):
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        y = num / tl.sum(num, axis=0)
    with pl.scope("store"):
        tl.store(out_ptr + row * stride + cols, y, mask=mask)


@triton.jit
def dropout(x_ptr, out_ptr, n, p, seed, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    with pl.scope("rng"):
        r = tl.rand(seed, offs)
    with pl.scope("mask"):
        keep = r > p
        y = tl.where(keep, x / (1 - p), 0.0)
    tl.store(out_ptr + offs, y, mask=mask)


@triton.jit
def layer_norm_fwd(x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, stride, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    with pl.scope("layer_norm"):
        with pl.scope("stats"):
            x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
            mean = tl.sum(x, axis=0) / n_cols
            diff = tl.where(mask, x - mean, 0.0)
            var = tl.sum(diff * diff, axis=0) / n_cols
            rstd = 1 / tl.sqrt(var + eps)
        with pl.scope("normalize"):
            w = tl.load(w_ptr + cols, mask=mask)
            b = tl.load(b_ptr + cols, mask=mask)
            y = diff * rstd * w + b
            tl.store(y_ptr + row * stride + cols, y, mask=mask)
        tl.store(mean_ptr + row, mean)
        tl.store(rstd_ptr + row, rstd)


@triton.jit
def layer_norm_bwd(
    dy_ptr,
    x_ptr,
    w_ptr,
    mean_ptr,
    rstd_ptr,
    dx_ptr,
    dw_part_ptr,
    db_part_ptr,
    stride,
    n_cols,
    ROWS_PER_PROG: tl.constexpr,
    BLOCK: tl.constexpr,
):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    dw = tl.zeros((BLOCK,), dtype=tl.float32)
    db = tl.zeros((BLOCK,), dtype=tl.float32)
    with pl.scope("rows"):
        for i in range(ROWS_PER_PROG):
            with pl.scope("row"):
                row = pid * ROWS_PER_PROG + i
                x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
                dy = tl.load(dy_ptr + row * stride + cols, mask=mask, other=0.0)
                mean = tl.load(mean_ptr + row)
                rstd = tl.load(rstd_ptr + row)
                xhat = tl.where(mask, (x - mean) * rstd, 0.0)
                wdy = w * dy
                c1 = tl.sum(xhat * wdy, axis=0) / n_cols
                c2 = tl.sum(wdy, axis=0) / n_cols
                dx = (wdy - (xhat * c1 + c2)) * rstd
                tl.store(dx_ptr + row * stride + cols, dx, mask=mask)
                dw += dy * xhat
                db += dy
    with pl.scope("partials"):
        tl.store(dw_part_ptr + pid * n_cols + cols, dw, mask=mask)
        tl.store(db_part_ptr + pid * n_cols + cols, db, mask=mask)


# ---------------------------------------------------------------------------
# Matmuls and attention
# ---------------------------------------------------------------------------


@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    with pl.scope("k_loop"):
        for k in range(0, K, BK):
            with pl.scope("k_step"):
                a = tl.load(
                    a_ptr + rm[:, None] * K + (k + rk)[None, :],
                    mask=(rm[:, None] < M) & (k + rk < K)[None, :],
                    other=0.0,
                )
                b = tl.load(
                    b_ptr + (k + rk)[:, None] * N + rn[None, :],
                    mask=(k + rk < K)[:, None] & (rn[None, :] < N),
                    other=0.0,
                )
                acc = tl.dot(a, b, acc)
    with pl.scope("epilogue"):
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def matmul_pipelined(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # Scopes only around the loop: the software pipeliner may run (num_stages > 1).
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    pl.enter_scope("mainloop")
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    pl.exit_scope("mainloop")
    with pl.scope("store"):
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


@triton.jit
def persistent_matmul(
    a_ptr, b_ptr, c_ptr, M, N, K, NUM_PROGS: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr
):
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BN)
    num_tiles = tl.cdiv(M, BM) * tiles_n
    with pl.scope("persistent"):
        for tile in tl.range(pid, num_tiles, NUM_PROGS):
            with pl.scope("tile"):
                rm = (tile // tiles_n) * BM + tl.arange(0, BM)
                rn = (tile % tiles_n) * BN + tl.arange(0, BN)
                rk = tl.arange(0, BK)
                acc = tl.zeros((BM, BN), dtype=tl.float32)
                for k in range(0, K, BK):
                    a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
                    b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
                    acc = tl.dot(a, b, acc)
                tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


@triton.jit
def grouped_gemm(
    a_ptrs,
    b_ptrs,
    c_ptrs,
    sizes,
    num_groups,
    NUM_PROGS: tl.constexpr,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
):
    """Group g multiplies A_g (M x K) by B_g (K x N) into C_g, all row-major
    fp16; `sizes` holds (M, N, K) per group, the pointers are int64 tensors."""
    pid = tl.program_id(0)
    for g in range(num_groups):
        with pl.scope("group"):
            M = tl.load(sizes + g * 3)
            N = tl.load(sizes + g * 3 + 1)
            K = tl.load(sizes + g * 3 + 2)
            a_ptr = tl.load(a_ptrs + g).to(tl.pointer_type(tl.float16))
            b_ptr = tl.load(b_ptrs + g).to(tl.pointer_type(tl.float16))
            c_ptr = tl.load(c_ptrs + g).to(tl.pointer_type(tl.float16))
            tiles_n = tl.cdiv(N, BN)
            for tile in range(pid, tl.cdiv(M, BM) * tiles_n, NUM_PROGS):
                with pl.scope("tile"):
                    rm = (tile // tiles_n) * BM + tl.arange(0, BM)
                    rn = (tile % tiles_n) * BN + tl.arange(0, BN)
                    rk = tl.arange(0, BK)
                    acc = tl.zeros((BM, BN), dtype=tl.float32)
                    for k in range(0, K, BK):
                        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
                        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
                        acc = tl.dot(a, b, acc)
                    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


@triton.jit
def attention_fwd(
    q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, seq_len, sm_scale, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr
):
    """One (batch*head) per program_id(1); Q, K, V, O are [heads, seq_len, D]
    fp16, contiguous; seq_len a multiple of BN. Online softmax in base 2."""
    head = tl.program_id(1)
    base = head * seq_len * D
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rd = tl.arange(0, D)
    with pl.scope("load_q"):
        q = tl.load(q_ptr + base + rm[:, None] * D + rd[None, :])
    qk_scale = sm_scale * 1.4426950408889634
    m_i = tl.full((BM,), -float("inf"), dtype=tl.float32)
    l_i = tl.zeros((BM,), dtype=tl.float32)
    acc = tl.zeros((BM, D), dtype=tl.float32)
    with pl.scope("kv_loop"):
        for start in range(0, seq_len, BN):
            with pl.scope("kv_block"):
                kt = tl.load(k_ptr + base + (start + rn)[None, :] * D + rd[:, None])
                qk = tl.dot(q, kt) * qk_scale
                m_new = tl.maximum(m_i, tl.max(qk, axis=1))
                p = tl.math.exp2(qk - m_new[:, None])
                alpha = tl.math.exp2(m_i - m_new)
                l_i = l_i * alpha + tl.sum(p, axis=1)
                v = tl.load(v_ptr + base + (start + rn)[:, None] * D + rd[None, :])
                acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
                m_i = m_new
    with pl.scope("epilogue"):
        acc = acc / l_i[:, None]
        tl.store(o_ptr + base + rm[:, None] * D + rd[None, :], acc.to(tl.float16))
        tl.store(lse_ptr + head * seq_len + rm, m_i + tl.math.log2(l_i))


@triton.jit
def attention_bwd_dkdv(
    q_ptr,
    k_ptr,
    v_ptr,
    do_ptr,
    lse_ptr,
    delta_ptr,
    dk_ptr,
    dv_ptr,
    seq_len,
    sm_scale,
    BM: tl.constexpr,
    BN: tl.constexpr,
    D: tl.constexpr,
):
    """dK and dV for one block of BN keys, looping over query blocks.
    lse is the base-2 log-sum-exp of the forward pass (per query), delta the
    row sums of dO * O."""
    head = tl.program_id(1)
    base = head * seq_len * D
    rn = tl.program_id(0) * BN + tl.arange(0, BN)
    rm = tl.arange(0, BM)
    rd = tl.arange(0, D)
    k = tl.load(k_ptr + base + rn[:, None] * D + rd[None, :])
    v = tl.load(v_ptr + base + rn[:, None] * D + rd[None, :])
    dk = tl.zeros((BN, D), dtype=tl.float32)
    dv = tl.zeros((BN, D), dtype=tl.float32)
    qk_scale = sm_scale * 1.4426950408889634
    for start in range(0, seq_len, BM):
        with pl.scope("q_block"):
            q = tl.load(q_ptr + base + (start + rm)[:, None] * D + rd[None, :])
            do = tl.load(do_ptr + base + (start + rm)[:, None] * D + rd[None, :])
            lse = tl.load(lse_ptr + head * seq_len + start + rm)
            delta = tl.load(delta_ptr + head * seq_len + start + rm)
            # kq[j, i] = k_j . q_i (keys along rows)
            kq = tl.dot(k, tl.trans(q)) * qk_scale
            pt = tl.math.exp2(kq - lse[None, :])
            dv += tl.dot(pt.to(tl.float16), do)
            dpt = tl.dot(v, tl.trans(do))
            dst = pt * (dpt - delta[None, :])
            dk += tl.dot(dst.to(tl.float16), q)
    with pl.scope("store"):
        tl.store(dk_ptr + base + rn[:, None] * D + rd[None, :], (dk * sm_scale).to(tl.float16))
        tl.store(dv_ptr + base + rn[:, None] * D + rd[None, :], dv.to(tl.float16))


@triton.jit
def tma_device_desc_copy(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """Scales a row-major fp16 matrix by 2 through device-side tensor
    descriptors (TMA on sm_90; the launch needs triton.set_allocator)."""
    x_desc = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    o_desc = tl.make_tensor_descriptor(out_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    off_m = tl.program_id(0) * BM
    off_n = tl.program_id(1) * BN
    with pl.scope("tma_load"):
        x = x_desc.load([off_m, off_n])
    with pl.scope("tma_store"):
        o_desc.store([off_m, off_n], x * 2)


@triton.jit
def tma_host_desc_matmul(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """A matmul over host-side TensorDescriptor arguments."""
    off_m = tl.program_id(0) * BM
    off_n = tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        with pl.scope("k_step"):
            a = a_desc.load([off_m, k])
            b = b_desc.load([k, off_n])
            acc = tl.dot(a, b, acc)
    with pl.scope("store"):
        c_desc.store([off_m, off_n], acc.to(tl.float16))


# ---------------------------------------------------------------------------
# Math families (tl.math and libdevice), one kernel each
# ---------------------------------------------------------------------------


@triton.jit
def math_exp(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    with pl.scope("exp"):
        y = tl.exp(x) + libdevice.exp(x * 0.5)
    tl.store(out_ptr + offs, y, mask=offs < n)


@triton.jit
def math_exp2(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    with pl.scope("exp2"):
        y = tl.math.exp2(x) - libdevice.exp2(x * 0.25)
    tl.store(out_ptr + offs, y, mask=offs < n)


@triton.jit
def math_log(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.abs(tl.load(x_ptr + offs, mask=offs < n, other=1.0)) + 1e-3
    with pl.scope("log"):
        y = tl.log(x) + libdevice.log1p(x)
    tl.store(out_ptr + offs, y, mask=offs < n)


@triton.jit
def math_log2(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.abs(tl.load(x_ptr + offs, mask=offs < n, other=1.0)) + 1e-3
    with pl.scope("log2"):
        y = tl.log2(x) * libdevice.log10(x)
    tl.store(out_ptr + offs, y, mask=offs < n)


@triton.jit
def math_erf(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    with pl.scope("erf"):
        y = tl.erf(x) + libdevice.erfc(x)
    tl.store(out_ptr + offs, y, mask=offs < n)


@triton.jit
def math_tanh(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    with pl.scope("tanh"):
        y = libdevice.tanh(x) + libdevice.sinh(x * 0.1)
    tl.store(out_ptr + offs, y, mask=offs < n)


@triton.jit
def math_pow(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.abs(tl.load(x_ptr + offs, mask=offs < n))
    with pl.scope("pow"):
        y = libdevice.pow(x, 1.5) + libdevice.pow(x, 3)
    tl.store(out_ptr + offs, y, mask=offs < n)


@triton.jit
def math_sqrt(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.abs(tl.load(x_ptr + offs, mask=offs < n))
    with pl.scope("sqrt"):
        y = tl.sqrt(x) + libdevice.sqrt(x * 2.0)
    tl.store(out_ptr + offs, y, mask=offs < n)


@triton.jit
def math_sqrt_rn(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.abs(tl.load(x_ptr + offs, mask=offs < n))
    with pl.scope("sqrt_rn"):
        y = tl.sqrt_rn(x)
    tl.store(out_ptr + offs, y, mask=offs < n)


@triton.jit
def math_rsqrt(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.abs(tl.load(x_ptr + offs, mask=offs < n)) + 1e-2
    with pl.scope("rsqrt"):
        y = tl.rsqrt(x)
    tl.store(out_ptr + offs, y, mask=offs < n)


@triton.jit
def math_div_rn(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    y = tl.abs(tl.load(y_ptr + offs, mask=offs < n, other=1.0)) + 0.5
    with pl.scope("div_rn"):
        z = tl.div_rn(x, y) + tl.fdiv(x, y)
    tl.store(out_ptr + offs, z, mask=offs < n)


@triton.jit
def math_sin(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    with pl.scope("sin"):
        y = tl.sin(x) + libdevice.asin(tl.minimum(tl.maximum(x, -1.0), 1.0))
    tl.store(out_ptr + offs, y, mask=offs < n)


@triton.jit
def math_cos(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    with pl.scope("cos"):
        y = tl.cos(x) * libdevice.atan2(x, 2.0)
    tl.store(out_ptr + offs, y, mask=offs < n)


@triton.jit
def math_fma(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    y = tl.load(y_ptr + offs, mask=offs < n)
    with pl.scope("fma"):
        z = tl.fma(x, y, 1.0) + libdevice.fma(y, y, x)
    tl.store(out_ptr + offs, z, mask=offs < n)


@triton.jit
def gelu_erf(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    with pl.scope("gelu"):
        x = tl.load(x_ptr + offs, mask=offs < n)
        y = 0.5 * x * (1 + tl.erf(x * 0.7071067811865476))
        tl.store(out_ptr + offs, y, mask=offs < n)


@triton.jit
def gelu_tanh(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    with pl.scope("gelu"):
        x = tl.load(x_ptr + offs, mask=offs < n)
        inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
        y = 0.5 * x * (1 + libdevice.tanh(inner))
        tl.store(out_ptr + offs, y, mask=offs < n)


# ---------------------------------------------------------------------------
# Conversions, fp8 GEMM
# ---------------------------------------------------------------------------


@triton.jit
def fp8_convert(x_ptr, out16_ptr, outbf_ptr, out32_ptr, n, F8A: tl.constexpr, F8B: tl.constexpr, BLOCK: tl.constexpr):
    """fp32 -> fp8 (two formats) -> fp16 / bf16 / fp32, and fp16/bf16 -> fp8."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    with pl.scope("to_fp8"):
        a = x.to(F8A)
        b = x.to(tl.float16).to(F8B)
        c = x.to(tl.bfloat16).to(F8A)
    with pl.scope("from_fp8"):
        h = a.to(tl.float16) + b.to(tl.float16)
        bf = b.to(tl.bfloat16) + c.to(tl.bfloat16)
        f = a.to(tl.float32) - c.to(tl.float32)
    tl.store(out16_ptr + offs, h, mask=offs < n)
    tl.store(outbf_ptr + offs, bf, mask=offs < n)
    tl.store(out32_ptr + offs, f, mask=offs < n)


@triton.jit
def bf16_convert(x_ptr, outbf_ptr, out32_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    with pl.scope("convert"):
        b = x.to(tl.bfloat16)
        rz = x.to(tl.bfloat16, fp_downcast_rounding="rtz")
        h = b.to(tl.float16)
        back = b.to(tl.float32) + rz.to(tl.float32) + h.to(tl.float32)
    tl.store(outbf_ptr + offs, b * 2, mask=offs < n)
    tl.store(out32_ptr + offs, back, mask=offs < n)


@triton.jit
def fp8_matmul(a_ptr, b_ptr, c_ptr, M, N, K, F8: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """A (M x K) and B (K x N) stored as raw fp8 bytes (uint8), bitcast to F8."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        with pl.scope("k_step"):
            a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :]).to(F8, bitcast=True)
            b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :]).to(F8, bitcast=True)
            acc = tl.dot(a, b, acc)
    with pl.scope("store"):
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


# ---------------------------------------------------------------------------
# Integer ops, atomics, debugging, reductions and scans
# ---------------------------------------------------------------------------


@triton.jit
def integer_ops(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    y = tl.load(y_ptr + offs, mask=offs < n, other=0)
    with pl.scope("int_math"):
        hi = tl.umulhi(x, y)
        mixed = ((x << 3) ^ (y >> 2)) | (x & 0xFF)
        z = hi + mixed + (~x) + (x % 7) * (y // 3 + 1)
    tl.store(out_ptr + offs, z, mask=offs < n)


@triton.jit
def atomics(x_ptr, sum_ptr, max_ptr, slots_ptr, n, BLOCK: tl.constexpr):
    """Integer atomics only, so the final values do not depend on the order."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    with pl.scope("atomic_add"):
        tl.atomic_add(sum_ptr + (offs % 16), x, mask=offs < n)
    with pl.scope("atomic_max"):
        tl.atomic_max(max_ptr, tl.max(x, axis=0))
    with pl.scope("atomic_cas"):
        tl.atomic_cas(slots_ptr + pid, 0, pid + 1)


@triton.jit
def print_and_assert(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    with pl.scope("assert"):
        tl.device_assert(x >= 0, "x must be non-negative")
    with pl.scope("print"):
        tl.device_print("corpus x", tl.max(x, axis=0))
    tl.store(out_ptr + offs, x + 1)


@triton.jit
def reductions(x_ptr, sum_ptr, max_ptr, argmax_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=-float("inf"))
    with pl.scope("reduce"):
        s = tl.sum(tl.where(cols < n_cols, x, 0.0), axis=0)
        m = tl.max(x, axis=0)
        i = tl.argmax(x, axis=0)
    tl.store(sum_ptr + row, s)
    tl.store(max_ptr + row, m)
    tl.store(argmax_ptr + row, i)


@triton.jit
def cumsum_rows(x_ptr, out_ptr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * BLOCK + cols)
    with pl.scope("cumsum"):
        y = tl.cumsum(x, axis=0)
    tl.store(out_ptr + row * BLOCK + cols, y)


@triton.jit
def sort_rows(x_ptr, out_ptr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * BLOCK + cols)
    with pl.scope("sort"):
        y = tl.sort(x, descending=True)
    tl.store(out_ptr + row * BLOCK + cols, y)


@triton.jit
def histogram(x_ptr, out_ptr, BLOCK: tl.constexpr, BINS: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    with pl.scope("histogram"):
        h = tl.histogram(x, BINS)
    tl.store(out_ptr + tl.program_id(0) * BINS + tl.arange(0, BINS), h)


# ---------------------------------------------------------------------------
# Inline assembly, control flow, calls
# ---------------------------------------------------------------------------


@triton.jit
def inline_asm_ptx(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    y = tl.load(y_ptr + offs, mask=offs < n, other=0)
    with pl.scope("asm"):
        # x * 3 + y with a PTX multiply-add on 32-bit integers.
        z = tl.inline_asm_elementwise(
            "mad.lo.u32 $0, $1, 3, $2;", "=r,r,r", [x, y], dtype=tl.uint32, is_pure=True, pack=1
        )
    tl.store(out_ptr + offs, z, mask=offs < n)


@triton.jit
def inline_asm_amdgcn(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    y = tl.load(y_ptr + offs, mask=offs < n, other=0)
    with pl.scope("asm"):
        # x + y with a VALU add on 32-bit integers.
        z = tl.inline_asm_elementwise("v_add_u32 $0, $1, $2", "=v,v,v", [x, y], dtype=tl.uint32, is_pure=True, pack=1)
    tl.store(out_ptr + offs, z, mask=offs < n)


@triton.jit
def while_loop(x_ptr, out_ptr, n_iter, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    i = 0
    with pl.scope("loop"):
        while i < n_iter:
            with pl.scope("step"):
                x = x * 0.5 + 1.0
            i += 1
    tl.store(out_ptr + offs, x)


@triton.jit
def static_unrolled(x_ptr, out_ptr, BLOCK: tl.constexpr, STEPS: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    for _ in tl.static_range(STEPS):
        with pl.scope("unrolled"):
            x = x * x + 0.25
    tl.store(out_ptr + offs, x)


@triton.jit(noinline=True)
def _poly_helper(x_ptr, out_ptr, n, start, BLOCK: tl.constexpr):
    # A noinline function takes scalars only (pointers, integers).
    offs = start + tl.arange(0, BLOCK)
    # No scope in here: Proton instruments kernels, and takes a scope in a
    # noinline callee's LLVM function for a kernel without profile_scratch.
    x = tl.load(x_ptr + offs, mask=offs < n)
    y = x * x * 0.5 + x * 0.25 + 1.0
    tl.store(out_ptr + offs, y, mask=offs < n)


@triton.jit
def noinline_call(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    with pl.scope("call"):
        _poly_helper(x_ptr, out_ptr, n, tl.program_id(0) * BLOCK, BLOCK)


@triton.jit
def transpose(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    with pl.scope("load"):
        x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    with pl.scope("store_t"):
        tl.store(out_ptr + rn[:, None] * M + rm[None, :], tl.trans(x))
