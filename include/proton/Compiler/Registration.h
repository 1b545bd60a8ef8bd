#ifndef PROTON_COMPILER_REGISTRATION_H
#define PROTON_COMPILER_REGISTRATION_H

#include "mlir/IR/DialectRegistry.h"

namespace mlir::proton {
/// Dialects and LLVM IR translations the pipeline needs.
void registerProtonDialects(DialectRegistry &registry);
/// Proton's passes, for proton-opt.
void registerProtonPasses();
} // namespace mlir::proton

#endif
