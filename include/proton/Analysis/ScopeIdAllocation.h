#ifndef PROTON_ANALYSIS_SCOPEIDALLOCATION_H
#define PROTON_ANALYSIS_SCOPEIDALLOCATION_H

#include "mlir/IR/Operation.h"
#include "proton/Dialect/Proton/IR/Dialect.h"
#include "llvm/ADT/DenseMap.h"

#include <string>
#include <vector>

namespace mlir::proton {

/// One scope: a start record and the end record that closes it. A name used
/// again after its scope closed makes a new scope with a new id.
struct ScopeInfo {
  int id;
  std::string name;
  int parent; // -1 at the top level
  Location loc;
};

/// Pairs the start and end records of one function's body (a CFG region) and
/// gives every pair an id, in order of the starts. The scopes open at a
/// block's entry must be the same on every path into it; this is what makes
/// each start dominate its end and each end post-dominate its start.
class ScopeIdAllocation {
public:
  /// Emits an error at the offending record for every violation and returns
  /// failure if there was one.
  static FailureOr<ScopeIdAllocation> run(Operation *function);

  int getScopeId(RecordOp record) const { return idOf.lookup(record); }
  const std::vector<ScopeInfo> &getScopes() const { return scopes; }
  bool empty() const { return scopes.empty(); }

private:
  std::vector<ScopeInfo> scopes;
  llvm::DenseMap<Operation *, int> idOf;
};

} // namespace mlir::proton

#endif
