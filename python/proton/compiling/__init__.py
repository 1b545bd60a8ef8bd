"""Compile time: what runs while Triton compiles a kernel. The markers of
proton.language (markers) put carriers in the kernel; the stage hook
(stage_hook) hands Triton's LLVM IR to Proton's MLIR pipeline (compiler, in
the _C extension) through the LLVM IR bridge (bridge), and leaves the
kernel's KernelMetadata in Triton's metadata; TRITON_KERNEL_OVERRIDE files
with proton.record ops are translated to markers (override); TTGIR tools
(ttgir_text, ttgir_rewriter, pipelining, warp_specialize) read and edit
the TTGIR text; torch.compile's kernels go through the hook too (inductor)."""
