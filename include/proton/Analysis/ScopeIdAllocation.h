#ifndef PROTON_ANALYSIS_SCOPEIDALLOCATION_H
#define PROTON_ANALYSIS_SCOPEIDALLOCATION_H

#include "mlir/IR/Operation.h"
#include "proton/Dialect/Proton/IR/Dialect.h"
#include "llvm/ADT/DenseMap.h"

#include <string>
#include <vector>

namespace mlir::proton {

/// One entry of the scope table (the conversion attaches it to the kernel as
/// a ScopeEntryAttr). A scope: a start record and the end record that closes
/// it (a name used again after its scope closed makes a new scope with a new
/// id). An event: every event_start and event_end record of one name. A point
/// (a mark, a value): one record site. How a record's kind pairs and which
/// IdKind its id gets are the kind's traits (RecordKindTraits.h).
struct ScopeInfo {
  int id;
  std::string name;
  int parent; // -1 at the top level (always for events)
  Location loc;
  IdKind kind = IdKind::scope;
  std::string dtype; // a value's type, "i32" or "f32"; empty otherwise
};

/// Pairs the start and end records of one function's body (a CFG region) and
/// gives every pair an id, in order of the starts; then gives each event name
/// and each point an id after them (events and points do not nest, so
/// kernels without them keep the same scope ids). The scopes open at a
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
  /// The ids of the scopes open at a program point, innermost last.
  using OpenScopes = std::vector<int>;

  /// Gives every start an id, in textual order.
  void numberStarts(Region &body);
  /// Gives every event name and every point an id, in textual order.
  void numberEventsAndMarks(Region &body);
  /// Follows every path through `body`, pairing each end with the start it
  /// closes; reports every mismatch.
  LogicalResult pairAlongPaths(Region &body);
  /// Pairs the records of one block, from the scopes open at its entry
  /// (`open`, left as they are at its end).
  LogicalResult pairInBlock(Block &block, OpenScopes &open);
  /// A path leaves the function through `terminator` (null if the block is
  /// empty) with `open` still open.
  LogicalResult checkClosedAtExit(Operation *terminator,
                                  const OpenScopes &open);
  /// Reports that two paths reach `successor` with different scopes open.
  void reportMismatch(const OpenScopes &open, const OpenScopes &other,
                      Operation *terminator, Block *successor);
  StringRef nameOf(int id) const { return scopes[id].name; }

  std::vector<ScopeInfo> scopes;
  llvm::DenseMap<Operation *, int> idOf;
};

} // namespace mlir::proton

#endif
