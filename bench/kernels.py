"""The benchmark's kernels, each body written once.

Every body calls its scope markers through the module-level name `mark`
(`mark.enter_scope("load")` ...). `build(kernel, variant)` clones the plain
Python function with a copy of this module's globals in which `mark` is the
variant's marker module, gives the clone a variant-specific name and wraps it
in `triton.jit`:

    plain      a module of no-op builtins: the markers emit nothing at all
    proton     `proton.language` (this project)
    reference  `triton.profiler.language` (Triton's built-in instrumentation),
               with its Triton-DSL semantic enabled

So the three variants compile the same source text, differ only in what the
markers lower to, and get distinct kernel names (`vector_add_plain`,
`vector_add_proton`, ...), which keeps them apart in CUPTI traces and in
Triton's caches. Each call to `build` returns a fresh JITFunction (empty
in-memory cache), so a kernel compiled (and loaded) in one profiling session
is never silently reused by another.

The functions below are deliberately not decorated: they are templates.
Do not add `from __future__ import annotations` here: Triton reads the
`tl.constexpr` annotations as objects.
"""

import types

import triton
import triton.language as tl

#: Replaced per variant by `build`; None here so the templates import cleanly.
mark = None


def vector_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # Three scopes: "kernel" > "load", "store".
    mark.enter_scope("kernel")
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    mark.enter_scope("load")
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    mark.exit_scope("load")
    mark.enter_scope("store")
    tl.store(out_ptr + offsets, x + y, mask=mask)
    mark.exit_scope("store")
    mark.exit_scope("kernel")


def matmul(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
    OUTER_SCOPE: tl.constexpr,
    LOOP_SCOPE: tl.constexpr,
):
    # OUTER_SCOPE: one scope "kernel" around the whole body.
    # LOOP_SCOPE: one scope "dot" around the tl.dot inside the K loop.
    # (constexpr branches: the untaken marker is not even traced.)
    if OUTER_SCOPE:
        mark.enter_scope("kernel")
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BLOCK_K)):
        # K is a multiple of BLOCK_K (checked on the host): no masks.
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        if LOOP_SCOPE:
            mark.enter_scope("dot")
        acc = tl.dot(a, b, acc)
        if LOOP_SCOPE:
            mark.exit_scope("dot")
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, acc.to(tl.float16), mask=c_mask)
    if OUTER_SCOPE:
        mark.exit_scope("kernel")


def softmax(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK: tl.constexpr):
    # One program per row; BLOCK >= n_cols (the whole row in registers).
    # One scope "softmax" from after the row's load to before its store: the
    # max, exp, sum and division. The load is only issued before the scope:
    # its first use (the max) waits for the data inside the scope.
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(in_ptr + row * in_row_stride + offs, mask=mask, other=-float("inf"))
    mark.enter_scope("softmax")
    z = x - tl.max(x, axis=0)
    num = tl.exp(z)
    y = num / tl.sum(num, axis=0)
    mark.exit_scope("softmax")
    tl.store(out_ptr + row * out_row_stride + offs, y, mask=mask)


def attention_fwd(
    q_ptr,
    k_ptr,
    v_ptr,
    o_ptr,
    qk_scale,
    stride_bh,
    stride_m,
    N_CTX,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    HEAD_DIM: tl.constexpr,
    CAUSAL: tl.constexpr = False,
    SOFTMAX_SCOPE: tl.constexpr = True,
):
    # Flash-attention forward; with CAUSAL, row i attends to keys 0..i only
    # (KV blocks past the diagonal are skipped, the rest masked). Q, K, V, O: contiguous
    # (batch, heads, N_CTX, HEAD_DIM), the last stride 1; stride_bh between
    # heads, stride_m between rows. Program (m, bh): rows [m*BLOCK_M, +BLOCK_M)
    # of head bh against every KV block of BLOCK_N rows, with an online
    # softmax in base 2 (qk_scale = sm_scale * log2(e), from the host).
    # N_CTX is a multiple of BLOCK_M and BLOCK_N (checked on the host): no masks.
    # Scopes, per KV block: "kv_block" around the whole iteration (loads of K
    # and V, both dots, the softmax update) > "softmax" around the online
    # softmax update (row max, exp2, rescale of l and acc); SOFTMAX_SCOPE=False
    # leaves "kv_block" alone (what the inner scope costs). With num_stages > 1
    # the pipeliner issues the K and V loads iterations ahead, outside
    # "kv_block" (proton says so in a PipeliningWarning at compile time): the
    # scope then measures the waits for those loads, not the loads.
    start_m = tl.program_id(0)
    base = tl.program_id(1) * stride_bh
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + base + offs_m[:, None] * stride_m + offs_d[None, :])
    kt_ptrs = k_ptr + base + offs_n[None, :] * stride_m + offs_d[:, None]  # K^T block: (HEAD_DIM, BLOCK_N)
    v_ptrs = v_ptr + base + offs_n[:, None] * stride_m + offs_d[None, :]
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    if CAUSAL:
        hi = (start_m + 1) * BLOCK_M
    else:
        hi = N_CTX
    for start_n in range(0, hi, BLOCK_N):
        mark.enter_scope("kv_block")
        kt = tl.load(kt_ptrs)
        qk = tl.dot(q, kt)
        if CAUSAL:
            qk = tl.where(offs_m[:, None] >= (start_n + offs_n)[None, :], qk, float("-inf"))
        if SOFTMAX_SCOPE:
            mark.enter_scope("softmax")
        m_new = tl.maximum(m_i, tl.max(qk, axis=1) * qk_scale)
        p = tl.math.exp2(qk * qk_scale - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None]
        m_i = m_new
        if SOFTMAX_SCOPE:
            mark.exit_scope("softmax")
        v = tl.load(v_ptrs)
        acc = tl.dot(p.to(tl.float16), v, acc)
        kt_ptrs += BLOCK_N * stride_m
        v_ptrs += BLOCK_N * stride_m
        mark.exit_scope("kv_block")
    acc = acc / l_i[:, None]
    tl.store(o_ptr + base + offs_m[:, None] * stride_m + offs_d[None, :], acc.to(tl.float16))


def attention_bwd(
    q_ptr,
    k_ptr,
    v_ptr,
    do_ptr,
    lse_ptr,
    delta_ptr,
    dq_ptr,
    dk_ptr,
    dv_ptr,
    qk_scale,
    sm_scale,
    stride_bh,
    stride_m,
    N_CTX,
    BLOCK: tl.constexpr,
    HEAD_DIM: tl.constexpr,
):
    # Flash-attention backward, not causal, in one kernel of two phases.
    # Program (j, bh) first computes dK and dV of keys [j*BLOCK, +BLOCK) of
    # head bh, looping over every query block, then dQ of queries
    # [j*BLOCK, +BLOCK), looping over every key block. Inputs from the
    # forward (computed on the host): lse, the base-2 log-sum-exp of each
    # row of qk * qk_scale, and delta = rowsum(O * dO), both (batch*heads,
    # N_CTX) fp32. P = exp2(qk * qk_scale - lse); dV = P^T dO; dS = P * (dO
    # V^T - delta); dK = sm_scale dS^T Q; dQ = sm_scale dS K. Layouts as in
    # attention_fwd; N_CTX a multiple of BLOCK (no masks).
    # Scopes, one per loop iteration: "dkdv_block" (phase 1) and "dq_block"
    # (phase 2).
    start = tl.program_id(0) * BLOCK
    bh = tl.program_id(1)
    base = bh * stride_bh
    rows = bh * N_CTX
    offs_b = start + tl.arange(0, BLOCK)
    offs_i = tl.arange(0, BLOCK)
    offs_d = tl.arange(0, HEAD_DIM)
    tile = offs_b[:, None] * stride_m + offs_d[None, :]

    k = tl.load(k_ptr + base + tile)
    v = tl.load(v_ptr + base + tile)
    dk = tl.zeros((BLOCK, HEAD_DIM), dtype=tl.float32)
    dv = tl.zeros((BLOCK, HEAD_DIM), dtype=tl.float32)
    for start_m in range(0, N_CTX, BLOCK):
        mark.enter_scope("dkdv_block")
        offs_m = start_m + offs_i
        q = tl.load(q_ptr + base + offs_m[:, None] * stride_m + offs_d[None, :])
        do = tl.load(do_ptr + base + offs_m[:, None] * stride_m + offs_d[None, :])
        lse = tl.load(lse_ptr + rows + offs_m)
        delta = tl.load(delta_ptr + rows + offs_m)
        pt = tl.math.exp2(tl.dot(k, tl.trans(q)) * qk_scale - lse[None, :])  # P^T: (keys, queries)
        dv = tl.dot(pt.to(tl.float16), do, dv)
        dst = pt * (tl.dot(v, tl.trans(do)) - delta[None, :])
        dk = tl.dot(dst.to(tl.float16), q, dk)
        mark.exit_scope("dkdv_block")
    tl.store(dk_ptr + base + tile, (dk * sm_scale).to(tl.float16))
    tl.store(dv_ptr + base + tile, dv.to(tl.float16))

    q = tl.load(q_ptr + base + tile)
    do = tl.load(do_ptr + base + tile)
    lse = tl.load(lse_ptr + rows + offs_b)
    delta = tl.load(delta_ptr + rows + offs_b)
    dq = tl.zeros((BLOCK, HEAD_DIM), dtype=tl.float32)
    for start_n in range(0, N_CTX, BLOCK):
        mark.enter_scope("dq_block")
        offs_n = start_n + offs_i
        kb = tl.load(k_ptr + base + offs_n[:, None] * stride_m + offs_d[None, :])
        vb = tl.load(v_ptr + base + offs_n[:, None] * stride_m + offs_d[None, :])
        p = tl.math.exp2(tl.dot(q, tl.trans(kb)) * qk_scale - lse[:, None])
        ds = p * (tl.dot(do, tl.trans(vb)) - delta[:, None])
        dq = tl.dot(ds.to(tl.float16), kb, dq)
        mark.exit_scope("dq_block")
    tl.store(dq_ptr + base + tile, (dq * sm_scale).to(tl.float16))


TEMPLATES = {
    "vector_add": vector_add,
    "matmul": matmul,
    "softmax": softmax,
    "attention_fwd": attention_fwd,
    "attention_bwd": attention_bwd,
}

#: Launch configurations (the brief's): compile options and constexprs.
VECTOR_ADD_BLOCK = 1024
VECTOR_ADD_OPTIONS = {"num_warps": 4}
MATMUL_BLOCKS = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}
MATMUL_OPTIONS = {"num_warps": 8, "num_stages": 3}
MATMUL_SCOPES = {
    "outer": {"OUTER_SCOPE": True, "LOOP_SCOPE": False},
    "kloop": {"OUTER_SCOPE": False, "LOOP_SCOPE": True},
}
#: Softmax: 4096 x 4096 fp32, one row per program, the whole row in one block.
SOFTMAX_SHAPE = (4096, 4096)
SOFTMAX_OPTIONS = {"num_warps": 8}
#: Attention forward: (batch, heads, seqlen, head_dim) fp16 (the causal case
#: runs the same kernel with CAUSAL=True).
ATTENTION_SHAPE = (4, 32, 4096, 64)
ATTENTION_BLOCKS = {"BLOCK_M": 128, "BLOCK_N": 64}
ATTENTION_OPTIONS = {"num_warps": 4, "num_stages": 3}
#: Attention backward: the same shape; key and query blocks of 64 rows.
ATTENTION_BWD_BLOCK = 64
ATTENTION_BWD_OPTIONS = {"num_warps": 4, "num_stages": 2}

VARIANTS = ("plain", "proton", "reference")


def _plain_markers() -> types.ModuleType:
    """A module whose markers are builtins that emit nothing."""
    module = types.ModuleType("bench_plain_markers")

    @tl.core.builtin
    def enter_scope(name, _semantic=None):
        return None

    @tl.core.builtin
    def exit_scope(name, _semantic=None):
        return None

    module.enter_scope = enter_scope
    module.exit_scope = exit_scope
    return module


_MARKERS = {}


def markers(variant: str) -> types.ModuleType:
    """The marker module of a variant (imported on first use, so a missing
    or broken profiler only fails its own variant)."""
    if variant not in _MARKERS:
        if variant == "plain":
            _MARKERS[variant] = _plain_markers()
        elif variant == "proton":
            import proton.language as pl

            _MARKERS[variant] = pl
        elif variant == "reference":
            import triton.profiler.language as tpl

            # Triton 3.6 instruments only Gluon unless told otherwise.
            tpl.enable_semantic("triton")
            _MARKERS[variant] = tpl
        else:
            raise ValueError(f"unknown variant {variant!r}")
    return _MARKERS[variant]


def kernel_name(template: str, variant: str, tag: str = "") -> str:
    return "_".join(part for part in (template, tag, variant) if part)


def build(template: str, variant: str, tag: str = "") -> triton.runtime.JITFunction:
    """A fresh JITFunction of `template` whose `mark` is `variant`'s markers,
    named `<template>[_<tag>]_<variant>` (also the name the GPU kernel gets)."""
    raw = TEMPLATES[template]
    scope = dict(raw.__globals__)
    scope["mark"] = markers(variant)
    name = kernel_name(template, variant, tag)
    fn = types.FunctionType(raw.__code__, scope, name, raw.__defaults__, raw.__closure__)
    fn.__qualname__ = name
    fn.__annotations__ = dict(raw.__annotations__)
    fn.__kwdefaults__ = raw.__kwdefaults__
    fn.__doc__ = raw.__doc__
    return triton.jit(fn)


# For compiling without a GPU (triton.compile + ASTSource): the signatures and
# attributes a launch with the benchmark's tensors and sizes specializes to
# (every pointer and integer divisible by 16, unit strides as constexpr 1).
VECTOR_ADD_SIGNATURE = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}
MATMUL_SIGNATURE = {
    "a_ptr": "*fp16",
    "b_ptr": "*fp16",
    "c_ptr": "*fp16",
    "M": "i32",
    "N": "i32",
    "K": "i32",
    "stride_am": "i32",
    "stride_ak": "constexpr",
    "stride_bk": "i32",
    "stride_bn": "constexpr",
    "stride_cm": "i32",
    "stride_cn": "constexpr",
}
SOFTMAX_SIGNATURE = {
    "out_ptr": "*fp32",
    "in_ptr": "*fp32",
    "in_row_stride": "i32",
    "out_row_stride": "i32",
    "n_cols": "i32",
}
ATTENTION_SIGNATURE = {
    "q_ptr": "*fp16",
    "k_ptr": "*fp16",
    "v_ptr": "*fp16",
    "o_ptr": "*fp16",
    "qk_scale": "fp32",
    "stride_bh": "i32",
    "stride_m": "i32",
    "N_CTX": "i32",
}
ATTENTION_BWD_SIGNATURE = {
    **{name: "*fp16" for name in ("q_ptr", "k_ptr", "v_ptr", "do_ptr")},
    "lse_ptr": "*fp32",
    "delta_ptr": "*fp32",
    **{name: "*fp16" for name in ("dq_ptr", "dk_ptr", "dv_ptr")},
    "qk_scale": "fp32",
    "sm_scale": "fp32",
    "stride_bh": "i32",
    "stride_m": "i32",
    "N_CTX": "i32",
}


def divisibility_attrs(signature):
    """`attrs` for ASTSource: tt.divisibility=16 on every pointer and integer
    parameter (not on constexprs, nor on float scalars such as qk_scale)."""
    return {
        (i,): [["tt.divisibility", 16]]
        for i, ty in enumerate(signature.values())
        if ty != "constexpr" and not ty.startswith("fp")
    }
