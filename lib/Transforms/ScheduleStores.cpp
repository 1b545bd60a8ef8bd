#include "proton/Transforms/Passes.h"

namespace mlir::proton {
#define GEN_PASS_DEF_PROTONSCHEDULESTORES
#include "proton/Transforms/Passes.h.inc"
} // namespace mlir::proton

using namespace mlir;
using namespace mlir::proton;
using namespace mlir::proton::gpu;

namespace {
struct ScheduleStoresPass
    : public ::mlir::proton::impl::ProtonScheduleStoresBase<ScheduleStoresPass> {
  void runOnOperation() override {
    getOperation()->walk([&](LLVM::LLVMFuncOp function) {
      // Scope ids are unique per start/end pair within a kernel.
      llvm::DenseMap<int32_t, CircularStoreOp> starts, ends;
      function.walk([&](CircularStoreOp store) {
        (store.getKind() == RecordKind::start ? starts : ends)
            [store.getScopeId()] = store;
      });
      for (auto [id, start] : starts) {
        CircularStoreOp end = ends.lookup(id);
        // The start's counter read dominates the end (the scope analysis
        // guarantees it), so its value is available there.
        if (end)
          start->moveBefore(end);
      }
    });
  }
};
} // namespace
