#include "proton/Transforms/Passes.h"

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "proton/Dialect/ProtonGPU/IR/Dialect.h"

namespace mlir::proton {
#define GEN_PASS_DEF_PROTONSTRIPMETADATA
#include "proton/Transforms/Passes.h.inc"
} // namespace mlir::proton

using namespace mlir;

namespace {
struct StripMetadataPass
    : public ::mlir::proton::impl::ProtonStripMetadataBase<StripMetadataPass> {
  void runOnOperation() override {
    // The names under which the conversions attach them (and
    // lib/Compiler/Instrument.cpp reads them).
    getOperation()->walk([](FunctionOpInterface function) {
      function->removeAttr(mlir::proton::gpu::kLayoutAttrName);
      function->removeAttr(mlir::proton::gpu::kScopeTableAttrName);
    });
  }
};
} // namespace
