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
    : public ::mlir::proton::impl::ProtonScheduleStoresBase<
          ScheduleStoresPass> {
  void runOnOperation() override {
    getOperation()->walk([&](LLVM::LLVMFuncOp function) {
      // Scope ids are unique per start/end pair within a kernel.
      llvm::DenseMap<int32_t, CircularStoreOp> starts;
      llvm::DenseMap<int32_t, SmallVector<CircularStoreOp>> ends;
      function.walk([&](CircularStoreOp store) {
        // Only scopes: an event's start need not dominate its end.
        const RecordKindTraits &traits = recordKindTraits(store.getKind());
        if (traits.opensScope())
          starts[store.getScopeId()] = store;
        else if (traits.closesScope())
          ends[store.getScopeId()].push_back(store);
      });
      for (auto [id, start] : starts) {
        // A scope closed on several paths keeps its start store in place:
        // moving it to one end would leave the other paths without it.
        auto it = ends.find(id);
        if (it == ends.end() || it->second.size() != 1)
          continue;
        // The start's counter read dominates the end (the scope analysis
        // guarantees it), so its value is available there.
        start->moveBefore(it->second.front());
      }
    });
  }
};
} // namespace
