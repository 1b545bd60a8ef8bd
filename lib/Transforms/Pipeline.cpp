#include "proton/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "proton/Conversion/LiftMarkers/Passes.h"
#include "proton/Conversion/ProtonGPUToLLVM/Passes.h"
#include "proton/Conversion/ProtonToProtonGPU/Passes.h"

namespace mlir::proton {
#define GEN_PASS_DEF_PROTONPIPELINE
#include "proton/Transforms/Passes.h.inc"
} // namespace mlir::proton

using namespace mlir;
using namespace mlir::proton;

namespace {

/// Dynamic shared memory a CTA may use, by arch, in bytes.
std::optional<unsigned> sharedLimitOf(StringRef arch) {
  return llvm::StringSwitch<std::optional<unsigned>>(arch)
      .Cases({"sm_90", "sm_90a", "sm_100", "sm_100a"}, 232448u)
      .Cases({"sm_80", "sm_87"}, 166912u)
      .Cases({"sm_86", "sm_89", "sm_120"}, 101376u)
      .Case("gfx942", 65536u)
      .Case("gfx950", 163840u)
      .Default(std::nullopt);
}

struct PipelinePass : public ::mlir::proton::impl::ProtonPipelineBase<PipelinePass> {
  using Base::Base;

  void runOnOperation() override {
    bool amd = target == "amdgpu";
    ConvertProtonToProtonGPUOptions buffer;
    buffer.bufferType = bufferType;
    buffer.bufferSize = bufferSize;
    buffer.granularity = granularity;
    buffer.samplingStrategy = samplingStrategy;
    buffer.samplingOptions = llvm::to_vector(samplingOptions);
    buffer.clockBits = clockBits;
    buffer.numWarps = numWarps;
    buffer.sharedOffset = sharedOffset;
    buffer.threadsPerWarp =
        threadsPerWarp.hasValue() ? threadsPerWarp : (amd ? 64u : 32u);
    buffer.sharedLimit = sharedLimit;
    if (!sharedLimit.hasValue())
      if (std::optional<unsigned> limit = sharedLimitOf(arch))
        buffer.sharedLimit = *limit;

    OpPassManager pm(ModuleOp::getOperationName());
    pm.addPass(createProtonLiftMarkers());
    pm.addPass(createConvertProtonToProtonGPU(buffer));
    if (schedStores)
      pm.addPass(createProtonScheduleStores());
    if (amd && schedBarriers)
      pm.addPass(createProtonAddSchedBarriers());
    pm.addPass(createConvertProtonGPUToLLVM(
        ConvertProtonGPUToLLVMOptions{target, arch, kernelId}));
    if (failed(runPipeline(pm, getOperation())))
      signalPassFailure();
  }
};

} // namespace
