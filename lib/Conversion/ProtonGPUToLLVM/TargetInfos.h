#ifndef PROTON_LIB_CONVERSION_PROTONGPUTOLLVM_TARGETINFOS_H
#define PROTON_LIB_CONVERSION_PROTONGPUTOLLVM_TARGETINFOS_H

#include "proton/Conversion/ProtonGPUToLLVM/TargetInfo.h"

namespace mlir::proton {
std::unique_ptr<TargetInfo> createNVPTXTargetInfo();
std::unique_ptr<TargetInfo> createAMDGPUTargetInfo();
} // namespace mlir::proton

#endif
