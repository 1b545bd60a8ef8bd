#ifndef PROTON_DIALECT_PROTONGPU_IR_DIALECT_H
#define PROTON_DIALECT_PROTONGPU_IR_DIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "proton/Dialect/Proton/IR/Dialect.h"
#include "proton/Format/BufferFormat.h"

#include "proton/Dialect/ProtonGPU/IR/ProtonGPUEnums.h.inc"
#include "proton/Dialect/ProtonGPU/IR/ProtonGPUOpsDialect.h.inc"
#define GET_ATTRDEF_CLASSES
#include "proton/Dialect/ProtonGPU/IR/ProtonGPUAttrs.h.inc"
#define GET_TYPEDEF_CLASSES
#include "proton/Dialect/ProtonGPU/IR/ProtonGPUOpsTypes.h.inc"
#define GET_OP_CLASSES
#include "proton/Dialect/ProtonGPU/IR/ProtonGPUOps.h.inc"

namespace mlir::proton::gpu {
/// Attributes the passes leave on an instrumented kernel for the host side
/// (read, then removed, by proton::instrumentLLVMIR or strip-metadata): its
/// buffer layout (a LayoutAttr) and its scope table (an array of
/// ScopeEntryAttr, one per id, in id order).
constexpr llvm::StringLiteral kLayoutAttrName = "proton.layout";
constexpr llvm::StringLiteral kScopeTableAttrName = "proton.scopes";
} // namespace mlir::proton::gpu

#endif
