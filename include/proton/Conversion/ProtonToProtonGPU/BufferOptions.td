#ifndef PROTON_BUFFER_OPTIONS_TD
#define PROTON_BUFFER_OPTIONS_TD

include "mlir/Pass/PassBase.td"

// The profile-buffer options of --convert-proton-to-protongpu, which
// --proton-pipeline takes too (PipelineOptions.td): one list, so that both
// spell, default and document them the same way.
defvar ProtonBufferOptions = [
  Option<"bufferType", "buffer-type", "::mlir::proton::gpu::BufferType",
         "::mlir::proton::gpu::BufferType::automatic",
         "where records are kept while the kernel runs",
         [{::llvm::cl::values(
           clEnumValN(::mlir::proton::gpu::BufferType::automatic, "auto",
                      "registers when every record is outside loops and the "
                      "block fits one 16-byte chunk per lane and buffer-size "
                      "is 0; shared otherwise"),
           clEnumValN(::mlir::proton::gpu::BufferType::shared, "shared",
                      "per-warp circular segments in shared memory, copied out at return"),
           clEnumValN(::mlir::proton::gpu::BufferType::global, "global",
                      "per-warp circular segments written straight to profile_scratch"),
           clEnumValN(::mlir::proton::gpu::BufferType::registers, "registers",
                      "each lane keeps one 16-byte chunk of its warp's block in "
                      "registers, written out at return (records outside loops only)"))}]>,
  Option<"bufferSize", "buffer-size", "unsigned", "0",
         "record bytes per CTA over all segments (0: infer; shared: from free "
         "shared memory, at most 1 KiB per segment; global: 4 KiB per segment)">,
  Option<"granularity", "granularity", "::mlir::proton::gpu::Granularity",
         "::mlir::proton::gpu::Granularity::warp",
         "which warps record",
         [{::llvm::cl::values(
           clEnumValN(::mlir::proton::gpu::Granularity::warp, "warp", "every warp"),
           clEnumValN(::mlir::proton::gpu::Granularity::warp_group, "warp_group",
                      "the first warp of each group of four"),
           clEnumValN(::mlir::proton::gpu::Granularity::cta, "cta", "warp 0 only"))}]>,
  Option<"samplingStrategy", "sampling-strategy", "std::string", "\"none\"",
         "none: every warp of the granularity records; selective: only "
         "those listed in sampling-options">,
  ListOption<"samplingOptions", "sampling-options", "int",
             "with selective sampling, the warp ids (warp granularity) or "
             "warp-group ids (warp_group granularity) that record">,
  Option<"clockBits", "clock-bits", "unsigned", "64",
         "width of the cycle counter read: 64 (a record keeps its low 48 "
         "bits) or 32; records are 8 bytes either way">,
  Option<"numWarps", "num-warps", "unsigned", "0",
         "warps per CTA (0: from the kernel's nvvm.reqntid or "
         "amdgpu-flat-work-group-size attribute)">,
  Option<"threadsPerWarp", "threads-per-warp", "unsigned", "32",
         "threads per warp (32 on NVIDIA, 64 on CDNA)">,
  Option<"sharedOffset", "shared-offset", "unsigned", "0",
         "bytes of dynamic shared memory the kernel itself uses; the buffer "
         "goes after them">,
  Option<"sharedLimit", "shared-limit", "unsigned", "232448",
         "dynamic shared memory a CTA may use on the target, in bytes">
];

#endif
