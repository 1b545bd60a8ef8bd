#ifndef PROTON_ANALYSIS_SOURCELOCATION_H
#define PROTON_ANALYSIS_SOURCELOCATION_H

#include "mlir/IR/Location.h"

#include <string>

namespace mlir::proton {
/// "file:line:col" of the first file location inside `loc` (debug-info
/// locations imported from LLVM IR nest them), or "" if there is none.
std::string describeLocation(Location loc);
} // namespace mlir::proton

#endif
