//===- Pipeline.h - the instrumentation pipeline ----------------*- C++ -*-===//
//
// --proton-pipeline: the passes the Triton plugin runs on a kernel's LLVM IR,
// from marker lifting to NVPTX or AMDGPU LLVM dialect code.
//
//===----------------------------------------------------------------------===//
#ifndef PROTON_TRANSFORMS_PIPELINE_H
#define PROTON_TRANSFORMS_PIPELINE_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "proton/Dialect/ProtonGPU/IR/Dialect.h"

namespace mlir::proton {

/// The pipeline's options. The buffer options repeat those of
/// --convert-proton-to-protongpu (BufferOptions.td) with the same names,
/// defaults and help; test/lit/Transforms/pipeline-options.mlir checks that
/// they stay the same.
struct ProtonPipelineOptions
    : public PassPipelineOptions<ProtonPipelineOptions> {
  Option<std::string> target{*this, "target", llvm::cl::desc("nvptx or amdgpu"),
                             llvm::cl::init("nvptx")};
  Option<std::string> arch{
      *this, "arch",
      llvm::cl::desc("sm_90, ... for nvptx; gfx942 or gfx950 for amdgpu"),
      llvm::cl::init("")};
  Option<unsigned> kernelId{
      *this, "kernel-id",
      llvm::cl::desc(
          "the id convert-protongpu-to-llvm writes into CTA headers"),
      llvm::cl::init(0)};
  Option<bool> schedStores{*this, "sched-stores",
                           llvm::cl::desc("run proton-schedule-stores"),
                           llvm::cl::init(false)};
  Option<bool> schedBarriers{
      *this, "sched-barriers",
      llvm::cl::desc("run proton-add-sched-barriers (AMDGPU only)"),
      llvm::cl::init(true)};
  Option<bool> mmaScopes{
      *this, "mma-scopes",
      llvm::cl::desc("run proton-mma-scopes (the MMA mode): scopes "
                     "mma.issue, mma.wait and mma around the kernel's "
                     "matrix-multiply instructions"),
      llvm::cl::init(false)};
  Option<bool> stripMetadata{
      *this, "strip-metadata",
      llvm::cl::desc("run proton-strip-metadata: drop the layout and scope "
                     "table attributes the compiler reads back, so that "
                     "stock mlir-translate can translate the output"),
      llvm::cl::init(false)};

  // The profile-buffer options (see BufferOptions.td).
  Option<gpu::BufferType> bufferType{
      *this, "buffer-type",
      llvm::cl::desc("where records are kept while the kernel runs"),
      llvm::cl::init(gpu::BufferType::automatic),
      llvm::cl::values(
          clEnumValN(gpu::BufferType::automatic, "auto",
                     "registers when every record is outside loops and the "
                     "block fits one 16-byte chunk per lane and buffer-size "
                     "is 0; shared otherwise"),
          clEnumValN(gpu::BufferType::shared, "shared",
                     "per-warp circular segments in shared memory, copied out "
                     "at return"),
          clEnumValN(gpu::BufferType::global, "global",
                     "per-warp circular segments written straight to "
                     "profile_scratch"),
          clEnumValN(gpu::BufferType::registers, "registers",
                     "each lane keeps one 16-byte chunk of its warp's block "
                     "in registers, written out at return (records outside "
                     "loops only)"))};
  Option<unsigned> bufferSize{
      *this, "buffer-size",
      llvm::cl::desc("record bytes per CTA over all segments (0: infer; "
                     "shared: from free shared memory, at most 1 KiB per "
                     "segment; global: 4 KiB per segment)"),
      llvm::cl::init(0)};
  Option<gpu::Granularity> granularity{
      *this, "granularity", llvm::cl::desc("which warps record"),
      llvm::cl::init(gpu::Granularity::warp),
      llvm::cl::values(
          clEnumValN(gpu::Granularity::warp, "warp", "every warp"),
          clEnumValN(gpu::Granularity::warp_group, "warp_group",
                     "the first warp of each group of four"),
          clEnumValN(gpu::Granularity::cta, "cta", "warp 0 only"))};
  Option<std::string> samplingStrategy{
      *this, "sampling-strategy",
      llvm::cl::desc("none: every warp of the granularity records; "
                     "selective: only those listed in sampling-options"),
      llvm::cl::init("none")};
  ListOption<int> samplingOptions{
      *this, "sampling-options",
      llvm::cl::desc("with selective sampling, the warp ids (warp "
                     "granularity) or warp-group ids (warp_group "
                     "granularity) that record")};
  Option<unsigned> clockBits{
      *this, "clock-bits",
      llvm::cl::desc("width of the cycle counter read: 64 (a record keeps "
                     "its low 48 bits) or 32; records are 8 bytes either "
                     "way"),
      llvm::cl::init(64)};
  Option<unsigned> numWarps{
      *this, "num-warps",
      llvm::cl::desc("warps per CTA (0: from the kernel's nvvm.reqntid or "
                     "amdgpu-flat-work-group-size attribute)"),
      llvm::cl::init(0)};
  // Without a value: 32, or 64 for amdgpu.
  Option<unsigned> threadsPerWarp{
      *this, "threads-per-warp",
      llvm::cl::desc("threads per warp (32 on NVIDIA, 64 on CDNA)"),
      llvm::cl::init(32)};
  Option<unsigned> sharedOffset{
      *this, "shared-offset",
      llvm::cl::desc("bytes of dynamic shared memory the kernel itself "
                     "uses; the buffer goes after them"),
      llvm::cl::init(0)};
  // Without a value: the limit of `arch` where known.
  Option<unsigned> sharedLimit{
      *this, "shared-limit",
      llvm::cl::desc("dynamic shared memory a CTA may use on the target, in "
                     "bytes"),
      llvm::cl::init(232448)};
};

/// Adds the pipeline to `pm` (anchored on builtin.module): proton-lift-markers,
/// optionally proton-mma-scopes, convert-proton-to-protongpu, optionally
/// proton-schedule-stores, proton-add-sched-barriers (AMDGPU, on by default),
/// convert-protongpu-to-llvm and optionally proton-strip-metadata.
void buildProtonPipeline(OpPassManager &pm,
                         const ProtonPipelineOptions &options);

/// Registers the pipeline as --proton-pipeline.
void registerProtonPipeline();

} // namespace mlir::proton

#endif // PROTON_TRANSFORMS_PIPELINE_H
