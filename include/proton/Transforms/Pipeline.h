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

/// The pipeline's options: its own and the buffer options it hands to
/// --convert-proton-to-protongpu, generated from PipelineOptions.td (which
/// takes the latter from the conversion's BufferOptions.td). Left without a
/// value, threads-per-warp is 64 for amdgpu and shared-limit the limit of
/// `arch` where known.
struct ProtonPipelineOptions
    : public PassPipelineOptions<ProtonPipelineOptions> {
#define GEN_PASS_PIPELINE_OPTIONS_ProtonPipelineOptions
#include "proton/Transforms/PipelineOptions.h.inc"
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
