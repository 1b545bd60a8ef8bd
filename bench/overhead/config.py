"""What the overhead benchmark measures: its sections, variants, device
cases and their targets."""

#: The measurements, in the order they run (`--only` picks some).
SECTIONS = ("device", "dobench", "compile")
#: plain: no profiling; proton: this project; reference: Triton's instrumentation.
ALL_VARIANTS = ("plain", "proton", "reference")


#: The targets (proton vs plain).
TARGETS = {
    "device:vector_add_1m": ("<=", 1.10),
    "device:vector_add_64m": ("<=", 1.05),
    "device:matmul_outer": ("<=", 1.02),
    "device:matmul_kloop": ("<=", 1.06),
    "device:softmax": ("<=", 1.10),  # informative
    "device:attention_fwd": ("<=", 1.05),
    "device:attention_causal": ("<=", 1.05),
    "device:attention_bwd": ("<=", 1.05),
    "dobench:session": ("<=", 3.0),
    "dobench:trace_size": (">=", 5.0),
    "compile": ("<=", 1.3),
}


#: Device-time cases: key -> (kernel key, description).
DEVICE_CASES = {
    "vector_add_1m": ("vector_add", "vector add, 1M fp32, 3 scopes"),
    "vector_add_64m": ("vector_add", "vector add, 64M fp32, 3 scopes"),
    "matmul_outer": ("matmul_outer", "matmul 4096^3 fp16, one outer scope"),
    "matmul_kloop": ("matmul_kloop", "matmul 4096^3 fp16, scope around tl.dot in the K loop"),
    "softmax": ("softmax", "fused row softmax 4096x4096 fp32, one scope (max, exp, sum, divide)"),
    "attention_fwd": (
        "attention_fwd",
        "flash attention fwd 4x32x4096x64 fp16, scopes per KV block: kv_block > softmax",
    ),
    "attention_causal": (
        "attention_causal",
        "causal flash attention fwd 4x32x4096x64 fp16, scopes per KV block: kv_block > softmax",
    ),
    "attention_causal_outer": (
        "attention_causal_outer",
        "causal flash attention fwd 4x32x4096x64 fp16, one scope per KV block: kv_block (no inner softmax scope)",
    ),
    "attention_bwd": (
        "attention_bwd",
        "flash attention bwd 4x32x4096x64 fp16 (dK dV, then dQ), a scope per block: dkdv_block, dq_block",
    ),
}
#: The kernels of the cold-compile section.
COMPILE_KERNELS = ("vector_add", "matmul_outer", "matmul_kloop", "softmax", "attention_fwd")
