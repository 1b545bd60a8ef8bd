#ifndef PROTON_CONVERSION_PROTONTOPROTONGPU_KERNELINFO_H
#define PROTON_CONVERSION_PROTONTOPROTONGPU_KERNELINFO_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::proton {

/// Threads per CTA declared by a kernel (nvvm.reqntid / nvvm.maxntid, or the
/// upper bound of amdgpu-flat-work-group-size), or 0 if it declares none.
unsigned getDeclaredThreadsPerCta(LLVM::LLVMFuncOp kernel);

/// The kernel's profile_scratch parameter: its last one, which must be a
/// global-memory pointer. Emits an error and returns null otherwise.
BlockArgument getProfileScratch(LLVM::LLVMFuncOp kernel);

} // namespace mlir::proton

#endif
