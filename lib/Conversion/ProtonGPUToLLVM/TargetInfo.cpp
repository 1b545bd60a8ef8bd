#include "TargetInfos.h"

using namespace mlir;
using namespace mlir::proton;

std::unique_ptr<TargetInfo> TargetInfo::create(StringRef target, StringRef arch,
                                               std::string &error) {
  if (target == "nvptx") {
    if (!arch.empty() && !arch.starts_with("sm_")) {
      error = "arch '" + arch.str() + "' is not an NVIDIA arch (sm_XX)";
      return nullptr;
    }
    return createNVPTXTargetInfo();
  }
  if (target == "amdgpu") {
    if (!arch.empty() && arch != "gfx942" && arch != "gfx950") {
      error = "arch '" + arch.str() +
              "' is not supported for amdgpu; supported: gfx942, gfx950";
      return nullptr;
    }
    return createAMDGPUTargetInfo();
  }
  error = "unknown target '" + target.str() + "'; valid: nvptx, amdgpu";
  return nullptr;
}
