#include "proton/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace mlir::proton {
#define GEN_PASS_DEF_PROTONADDSCHEDBARRIERS
#include "proton/Transforms/Passes.h.inc"
} // namespace mlir::proton

using namespace mlir;
using namespace mlir::proton;
using namespace mlir::proton::gpu;

namespace {
struct AddSchedBarriersPass
    : public ::mlir::proton::impl::ProtonAddSchedBarriersBase<
          AddSchedBarriersPass> {
  void runOnOperation() override {
    getOperation()->walk([&](ReadCounterOp read) {
      // Mask 0: no instruction may be scheduled across the barrier.
      OpBuilder b(read);
      ROCDL::SchedBarrier::create(b, read.getLoc(), 0);
      b.setInsertionPointAfter(read);
      ROCDL::SchedBarrier::create(b, read.getLoc(), 0);
    });
  }
};
} // namespace
