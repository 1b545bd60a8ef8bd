#include "proton/Analysis/ScopeIdAllocation.h"

#include "mlir/IR/Block.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Region.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::proton;

namespace {
/// The ids of the scopes open at a program point, innermost last.
using OpenScopes = std::vector<int>;
} // namespace

FailureOr<ScopeIdAllocation> ScopeIdAllocation::run(Operation *function) {
  ScopeIdAllocation result;
  bool failed = false;

  // Records outside the body's top-level blocks (in nested regions) cannot be
  // paired across the CFG; the passes run on LLVM-dialect kernels.
  function->walk([&](RecordOp record) {
    if (record->getParentRegion()->getParentOp() != function) {
      record.emitError("proton.record must be in the function body's blocks, "
                       "not in a nested region");
      failed = true;
    }
  });
  if (failed || function->getNumRegions() == 0 ||
      function->getRegion(0).empty())
    return failed ? FailureOr<ScopeIdAllocation>(failure())
                  : FailureOr<ScopeIdAllocation>(result);

  Region &body = function->getRegion(0);
  // Ids follow the starts' textual order, whatever order blocks are visited.
  for (Block &block : body)
    for (auto record : block.getOps<RecordOp>())
      if (record.isStart()) {
        int id = (int)result.scopes.size();
        result.scopes.push_back(
            {id, record.getName().str(), -1, record.getLoc()});
        result.idOf[record] = id;
      }

  llvm::DenseMap<Block *, OpenScopes> entryScopes;
  llvm::SetVector<Block *> worklist;
  entryScopes[&body.front()] = {};
  worklist.insert(&body.front());

  auto nameOf = [&](int id) -> StringRef { return result.scopes[id].name; };

  while (!worklist.empty()) {
    Block *block = worklist.pop_back_val();
    OpenScopes open = entryScopes[block];
    for (Operation &op : *block) {
      auto record = dyn_cast<RecordOp>(&op);
      if (!record)
        continue;
      if (record.isStart()) {
        int id = result.idOf.lookup(record);
        result.scopes[id].parent = open.empty() ? -1 : open.back();
        open.push_back(id);
        continue;
      }
      // An end closes the innermost open scope, which must have its name.
      StringRef name = record.getName();
      if (!open.empty() && nameOf(open.back()) == name) {
        result.idOf[record] = open.back();
        open.pop_back();
        continue;
      }
      failed = true;
      auto inner = llvm::find_if(llvm::reverse(open),
                                 [&](int id) { return nameOf(id) == name; });
      if (inner == open.rend()) {
        record.emitError("end of scope '")
            << name << "' has no matching start on this path";
      } else {
        int crossing = open.back();
        InFlightDiagnostic diag = record.emitError("scope '")
                                  << name << "' ends while scope '"
                                  << nameOf(crossing)
                                  << "' opened inside it is still open; "
                                     "scopes must nest";
        diag.attachNote(result.scopes[crossing].loc)
            << "scope '" << nameOf(crossing) << "' starts here";
        // Close the named scope only, so that the inner scope's own end
        // still matches and one mistake is reported once.
        open.erase(std::prev(inner.base()));
      }
    }

    Operation *terminator = block->empty() ? nullptr : &block->back();
    if (!terminator || terminator->getNumSuccessors() == 0) {
      // Leaving the function: every scope must be closed, except on a path
      // that ends in `unreachable` (a trap), which records nothing anyway.
      bool unreachable =
          terminator && terminator->getName().getStringRef() ==
                            "llvm.unreachable";
      if (!unreachable)
        for (int id : open) {
          failed = true;
          emitError(result.scopes[id].loc, "scope '")
              << nameOf(id)
              << "' is never closed: the function returns with it open";
        }
      continue;
    }
    for (Block *successor : terminator->getSuccessors()) {
      auto [it, inserted] = entryScopes.try_emplace(successor, open);
      if (inserted) {
        worklist.insert(successor);
        continue;
      }
      if (it->second == open)
        continue;
      // Two paths reach this block with different scopes open: some scope's
      // end does not post-dominate its start (or its start does not
      // dominate its end).
      failed = true;
      const OpenScopes &other = it->second;
      const OpenScopes &longer = open.size() >= other.size() ? open : other;
      const OpenScopes &shorter = open.size() >= other.size() ? other : open;
      size_t i = 0;
      while (i < shorter.size() && shorter[i] == longer[i])
        ++i;
      int id = i < longer.size() ? longer[i] : shorter[i];
      InFlightDiagnostic diag =
          emitError(result.scopes[id].loc, "scope '")
          << nameOf(id)
          << "' is open on one path into a block and closed on another: "
             "its end does not post-dominate its start (a scope that "
             "crosses a loop iteration or a branch, e.g. after software "
             "pipelining, cannot be measured)";
      diag.attachNote(successor->empty() ? terminator->getLoc()
                                         : successor->front().getLoc())
          << "paths meet here";
      // Report each conflict once.
      it->second = open;
    }
  }
  if (failed)
    return failure();
  return result;
}
