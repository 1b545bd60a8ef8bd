#include "proton/Transforms/Passes.h"

#include "proton/Analysis/ScopeIdAllocation.h"

namespace mlir::proton {
#define GEN_PASS_DEF_PROTONCHECKSCOPES
#include "proton/Transforms/Passes.h.inc"
} // namespace mlir::proton

using namespace mlir;
using namespace mlir::proton;

namespace {
struct CheckScopesPass
    : public ::mlir::proton::impl::ProtonCheckScopesBase<CheckScopesPass> {
  using Base::Base;
  void runOnOperation() override {
    bool failed = false;
    getOperation()->walk([&](FunctionOpInterface function) {
      FailureOr<ScopeIdAllocation> scopes = ScopeIdAllocation::run(function);
      if (::mlir::failed(scopes)) {
        failed = true;
        return;
      }
      if (!emitRemarks)
        return;
      for (const ScopeInfo &scope : scopes->getScopes())
        emitRemark(scope.loc, "scope ")
            << scope.id << " '" << scope.name << "' parent " << scope.parent;
    });
    if (failed)
      signalPassFailure();
  }
};
} // namespace
