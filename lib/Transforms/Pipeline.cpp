#include "proton/Transforms/Pipeline.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassRegistry.h"
#include "proton/Conversion/LiftMarkers/Passes.h"
#include "proton/Conversion/ProtonGPUToLLVM/Passes.h"
#include "proton/Conversion/ProtonToProtonGPU/Passes.h"
#include "proton/Transforms/Passes.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace mlir::proton;

namespace {

/// Dynamic shared memory a CTA may use, by arch, in bytes: the opt-in
/// maximum per block of the CUDA programming guide's compute-capability
/// table (the SM's capacity less the 1 KiB CUDA reserves per block). NVIDIA's
/// "a" (arch-specific) and "f" (family) suffixes change the instruction set,
/// not the memory, so they are dropped first.
std::optional<unsigned> sharedLimitOf(StringRef arch) {
  if (arch.starts_with("sm_") && (arch.ends_with("a") || arch.ends_with("f")))
    arch = arch.drop_back();
  return llvm::StringSwitch<std::optional<unsigned>>(arch)
      // Hopper; datacenter Blackwell (B200/GB200 sm_100, B300/GB300 sm_103);
      // Thor (sm_110, called sm_101 before CUDA 13): 227 KiB.
      .Cases({"sm_90", "sm_100", "sm_101", "sm_103", "sm_110"}, 232448u)
      .Cases({"sm_80", "sm_87"}, 166912u)
      // Ampere and Ada consumer parts; consumer Blackwell (RTX 50x0 and RTX
      // PRO sm_120, GB10 / DGX Spark sm_121): 99 KiB.
      .Cases({"sm_86", "sm_89", "sm_120", "sm_121"}, 101376u)
      .Case("gfx942", 65536u)
      .Case("gfx950", 163840u)
      .Default(std::nullopt);
}

/// The buffer options for convert-proton-to-protongpu, with the
/// target-dependent defaults filled in where the options leave them open.
ConvertProtonToProtonGPUOptions
bufferOptionsOf(const ProtonPipelineOptions &options) {
  bool amd = options.target == "amdgpu";
  ConvertProtonToProtonGPUOptions buffer;
  buffer.bufferType = options.bufferType;
  buffer.bufferSize = options.bufferSize;
  buffer.granularity = options.granularity;
  buffer.samplingStrategy = options.samplingStrategy;
  buffer.samplingOptions = llvm::to_vector(options.samplingOptions);
  buffer.clockBits = options.clockBits;
  buffer.numWarps = options.numWarps;
  buffer.sharedOffset = options.sharedOffset;
  buffer.threadsPerWarp = options.threadsPerWarp.hasValue()
                              ? options.threadsPerWarp
                              : (amd ? 64u : 32u);
  buffer.sharedLimit = options.sharedLimit;
  if (!options.sharedLimit.hasValue())
    if (std::optional<unsigned> limit = sharedLimitOf(options.arch))
      buffer.sharedLimit = *limit;
  return buffer;
}

} // namespace

void mlir::proton::buildProtonPipeline(OpPassManager &pm,
                                       const ProtonPipelineOptions &options) {
  bool amd = options.target == "amdgpu";
  pm.addPass(createProtonLiftMarkers());
  if (options.mmaScopes)
    pm.addPass(createProtonMmaScopes());
  pm.addPass(createConvertProtonToProtonGPU(bufferOptionsOf(options)));
  if (options.schedStores)
    pm.addPass(createProtonScheduleStores());
  if (amd && options.schedBarriers)
    pm.addPass(createProtonAddSchedBarriers());
  pm.addPass(createConvertProtonGPUToLLVM(ConvertProtonGPUToLLVMOptions{
      options.target, options.arch, options.kernelId}));
  if (options.stripMetadata)
    pm.addPass(createProtonStripMetadata());
}

void mlir::proton::registerProtonPipeline() {
  PassPipelineRegistration<ProtonPipelineOptions>(
      "proton-pipeline",
      "The whole instrumentation chain the Triton plugin runs",
      buildProtonPipeline);
}
