#ifndef PROTON_CONVERSION_PROTONGPUTOLLVM_PASSES_H
#define PROTON_CONVERSION_PROTONGPUTOLLVM_PASSES_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Pass/Pass.h"
#include "proton/Dialect/ProtonGPU/IR/Dialect.h"

namespace mlir::proton {
#define GEN_PASS_DECL
#include "proton/Conversion/ProtonGPUToLLVM/Passes.h.inc"
#define GEN_PASS_REGISTRATION
#include "proton/Conversion/ProtonGPUToLLVM/Passes.h.inc"
} // namespace mlir::proton

#endif
