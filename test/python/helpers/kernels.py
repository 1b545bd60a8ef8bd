"""Triton kernels with Proton markers, shared by the tests."""

import triton
import triton.language as tl

import proton.language as pl


@triton.jit
def vector_add(x, y, out, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    with pl.scope("kernel"):
        pl.enter_scope("load")
        a = tl.load(x + offsets, mask=mask)
        b = tl.load(y + offsets, mask=mask)
        pl.exit_scope("load")
        with pl.scope("store"):
            tl.store(out + offsets, a + b, mask=mask)


@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    pl.enter_scope("mainloop")
    for k in range(0, K, BK):
        with pl.scope("iteration"):
            a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
            b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
            acc += tl.dot(a, b)
    pl.exit_scope("mainloop")
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


@triton.jit
def matmul_outer(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """`matmul` with its scopes outside the K loop, which Triton pipelines."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    pl.enter_scope("mainloop")
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    pl.exit_scope("mainloop")
    with pl.scope("epilogue"):
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


@triton.jit
def matmul_load_scope(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        pl.enter_scope("load")
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        pl.exit_scope("load")
        with pl.scope("dot"):
            acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


@triton.jit
def never_closed(x, BLOCK: tl.constexpr):
    pl.enter_scope("open")
    tl.store(x + tl.arange(0, BLOCK), tl.zeros((BLOCK,), dtype=tl.float32))


@triton.jit
def crossing(x, BLOCK: tl.constexpr):
    pl.enter_scope("a")
    pl.enter_scope("b")
    tl.store(x + tl.arange(0, BLOCK), tl.zeros((BLOCK,), dtype=tl.float32))
    pl.exit_scope("a")
    pl.exit_scope("b")


VECTOR_ADD_SIGNATURE = {"x": "*fp32", "y": "*fp32", "out": "*fp32", "n": "i32"}
MATMUL_SIGNATURE = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32"}


def compile_kernel(fn, signature, target, options=None, aligned=False, **constexprs):
    """Compiles as a @triton.jit launch would: JITFunction.run passes the
    instrumentation_mode knob as a compile option, which keys Triton's cache.
    `aligned` marks every argument 16-divisible, as a launch with aligned
    tensors would (software pipelining needs it to turn loads into async
    copies)."""
    attrs = {(i,): [["tt.divisibility", 16]] for i in range(len(signature))} if aligned else None
    source = triton.compiler.ASTSource(fn=fn, signature=signature, constexprs=constexprs, attrs=attrs)
    options = {**(options or {}), "instrumentation_mode": triton.knobs.compilation.instrumentation_mode}
    return triton.compile(source, target=target, options=options)


@triton.jit
def decayed_state(q_ptr, k_ptr, v_ptr, g_ptr, o_ptr, h_ptr, T, K: tl.constexpr, V: tl.constexpr):
    """A gated linear recurrence, h = h * exp(g) + k v^T, o = q h, with a
    scope around each load and one around the arithmetic: the markers
    between the loads change the ranks LLVM's reassociation gives the
    operands of the update's `fadd`, and with them which product the
    backend fuses into the FMA."""
    rk = tl.arange(0, K)
    rv = tl.arange(0, V)
    h = tl.zeros([K, V], dtype=tl.float32)
    for t in range(T):
        pl.enter_scope("load_q")
        q = tl.load(q_ptr + t * K + rk).to(tl.float32)
        pl.exit_scope("load_q")
        q = q * 0.125
        pl.enter_scope("load_k")
        k = tl.load(k_ptr + t * K + rk).to(tl.float32)
        pl.exit_scope("load_k")
        pl.enter_scope("load_v")
        v = tl.load(v_ptr + t * V + rv).to(tl.float32)
        pl.exit_scope("load_v")
        pl.enter_scope("load_g")
        g = tl.load(g_ptr + t)
        pl.exit_scope("load_g")
        pl.enter_scope("compute")
        h = h * tl.exp(g) + k[:, None] * v[None, :]
        o = tl.sum(h * q[:, None], 0)
        pl.exit_scope("compute")
        tl.store(o_ptr + t * V + rv, o)
    tl.store(h_ptr + rk[:, None] * V + rv[None, :], h)


DECAYED_STATE_SIGNATURE = {
    "q_ptr": "*bf16",
    "k_ptr": "*bf16",
    "v_ptr": "*bf16",
    "g_ptr": "*fp32",
    "o_ptr": "*fp32",
    "h_ptr": "*fp32",
    "T": "i32",
}
