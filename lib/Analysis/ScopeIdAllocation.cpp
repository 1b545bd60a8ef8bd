#include "proton/Analysis/ScopeIdAllocation.h"

#include "mlir/IR/Block.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Region.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace mlir::proton;

/// Records outside the body's top-level blocks (in nested regions) cannot be
/// paired across the CFG; the passes run on LLVM-dialect kernels.
static LogicalResult checkTopLevel(Operation *function) {
  bool failed = false;
  function->walk([&](RecordOp record) {
    if (record->getParentRegion()->getParentOp() != function) {
      record.emitError("proton.record must be in the function body's blocks, "
                       "not in a nested region");
      failed = true;
    }
  });
  return failure(failed);
}

FailureOr<ScopeIdAllocation> ScopeIdAllocation::run(Operation *function) {
  if (failed(checkTopLevel(function)))
    return failure();
  ScopeIdAllocation result;
  if (function->getNumRegions() == 0 || function->getRegion(0).empty())
    return result;
  Region &body = function->getRegion(0);
  result.numberStarts(body);
  result.numberEventsAndMarks(body);
  if (failed(result.pairAlongPaths(body)))
    return failure();
  return result;
}

void ScopeIdAllocation::numberStarts(Region &body) {
  // Ids follow the starts' textual order, whatever order blocks are visited.
  for (Block &block : body)
    for (auto record : block.getOps<RecordOp>())
      if (record.traits().opensScope()) {
        int id = (int)scopes.size();
        scopes.push_back({id, record.getName().str(), -1, record.getLoc()});
        idOf[record] = id;
      }
}

void ScopeIdAllocation::numberEventsAndMarks(Region &body) {
  llvm::StringMap<int> events;
  for (Block &block : body)
    for (auto record : block.getOps<RecordOp>()) {
      const RecordKindTraits &traits = record.traits();
      if (traits.pairing == KindPairing::scope)
        continue;
      if (traits.pairing == KindPairing::point) {
        // The parent is set while pairing, from the scopes open there.
        int id = (int)scopes.size();
        scopes.push_back(
            {id, record.getName().str(), -1, record.getLoc(), traits.idKind});
        if (Value value = record.getValue())
          scopes.back().dtype = valueTypeName(value.getType());
        idOf[record] = id;
        continue;
      }
      // An event: one id per name, whatever kinds of its records.
      auto [it, inserted] =
          events.try_emplace(record.getName(), (int)scopes.size());
      if (inserted)
        scopes.push_back({it->second, record.getName().str(), -1,
                          record.getLoc(), traits.idKind});
      idOf[record] = it->second;
    }
}

LogicalResult ScopeIdAllocation::pairAlongPaths(Region &body) {
  bool ok = true;
  llvm::DenseMap<Block *, OpenScopes> entryScopes;
  llvm::SetVector<Block *> worklist;
  entryScopes[&body.front()] = {};
  worklist.insert(&body.front());
  while (!worklist.empty()) {
    Block *block = worklist.pop_back_val();
    OpenScopes open = entryScopes[block];
    ok &= succeeded(pairInBlock(*block, open));
    Operation *terminator = block->empty() ? nullptr : &block->back();
    if (!terminator || terminator->getNumSuccessors() == 0) {
      ok &= succeeded(checkClosedAtExit(terminator, open));
      continue;
    }
    for (Block *successor : terminator->getSuccessors()) {
      auto [it, inserted] = entryScopes.try_emplace(successor, open);
      if (inserted) {
        worklist.insert(successor);
      } else if (it->second != open) {
        reportMismatch(open, it->second, terminator, successor);
        it->second = open; // report each conflict once
        ok = false;
      }
    }
  }
  return success(ok);
}

LogicalResult ScopeIdAllocation::pairInBlock(Block &block, OpenScopes &open) {
  bool ok = true;
  for (auto record : block.getOps<RecordOp>()) {
    // Events are paired when decoded, whatever the paths; a point (a mark,
    // a value) belongs to the innermost scope open where it is.
    const RecordKindTraits &traits = record.traits();
    if (traits.pairing == KindPairing::point) {
      scopes[idOf.lookup(record)].parent = open.empty() ? -1 : open.back();
      continue;
    }
    if (traits.pairing != KindPairing::scope)
      continue;
    if (traits.opensScope()) {
      int id = idOf.lookup(record);
      scopes[id].parent = open.empty() ? -1 : open.back();
      open.push_back(id);
      continue;
    }
    // An end closes the innermost open scope, which must have its name.
    StringRef name = record.getName();
    if (!open.empty() && nameOf(open.back()) == name) {
      idOf[record] = open.back();
      open.pop_back();
      continue;
    }
    ok = false;
    auto inner = llvm::find_if(llvm::reverse(open),
                               [&](int id) { return nameOf(id) == name; });
    if (inner == open.rend()) {
      record.emitError("end of scope '")
          << name << "' has no matching start on this path";
      continue;
    }
    int crossing = open.back();
    InFlightDiagnostic diag = record.emitError("scope '")
                              << name << "' ends while scope '"
                              << nameOf(crossing)
                              << "' opened inside it is still open; "
                                 "scopes must nest";
    diag.attachNote(scopes[crossing].loc)
        << "scope '" << nameOf(crossing) << "' starts here";
    // Close the named scope only, so that the inner scope's own end still
    // matches and one mistake is reported once.
    open.erase(std::prev(inner.base()));
  }
  return success(ok);
}

LogicalResult ScopeIdAllocation::checkClosedAtExit(Operation *terminator,
                                                   const OpenScopes &open) {
  // A path that ends in `unreachable` (a trap) records nothing anyway.
  if (terminator && terminator->getName().getStringRef() == "llvm.unreachable")
    return success();
  for (int id : open)
    emitError(scopes[id].loc, "scope '")
        << nameOf(id) << "' is never closed: the function returns with it open";
  return success(open.empty());
}

void ScopeIdAllocation::reportMismatch(const OpenScopes &open,
                                       const OpenScopes &other,
                                       Operation *terminator,
                                       Block *successor) {
  // Some scope's end does not post-dominate its start (or its start does
  // not dominate its end): name the first scope the two paths disagree on.
  const OpenScopes &longer = open.size() >= other.size() ? open : other;
  const OpenScopes &shorter = open.size() >= other.size() ? other : open;
  size_t i = 0;
  while (i < shorter.size() && shorter[i] == longer[i])
    ++i;
  int id = i < longer.size() ? longer[i] : shorter[i];
  InFlightDiagnostic diag =
      emitError(scopes[id].loc, "scope '")
      << nameOf(id)
      << "' is open on one path into a block and closed on another: its end "
         "does not post-dominate its start (a scope that crosses a loop "
         "iteration or a branch, e.g. after software pipelining, cannot be "
         "measured)";
  diag.attachNote(successor->empty() ? terminator->getLoc()
                                     : successor->front().getLoc())
      << "paths meet here";
}
