//===- MarkerSyntax.h - the text of the markers kernels carry ---*- C++ -*-===//
//
// The one definition of the inline-assembly text a marker carries from a
// Triton or Gluon kernel to the LLVM IR (`// @proton start <name>`), which
// marker lifting parses and `proton.language` emits (through the `_C`
// extension), and of the TTGIR op users write in override files.
//
//===----------------------------------------------------------------------===//
#ifndef PROTON_FORMAT_MARKERSYNTAX_H
#define PROTON_FORMAT_MARKERSYNTAX_H

namespace proton::markers {

/// Every marker's assembly text starts with this, then its kind (`start`,
/// `end`, `event_start`, `event_end`, `mark` or `value`: a RecordKind other
/// than `value_end`), a space and the scope, event, mark or value name.
constexpr const char *kPrefix = "// @proton ";
/// An optional suffix naming the marker's source (`<file>:<line>:<col>`), for
/// markers whose debug location cannot say it. Scope names cannot hold ';'.
constexpr const char *kLocationSuffix = " ;loc=";
/// The TTGIR/MLIR op: `proton.record <kind> "name"` with the markers' kinds,
/// and a value's operand after the name (`proton.record value "x"(%v : i32)`).
constexpr const char *kRecordOp = "proton.record";

} // namespace proton::markers

#endif // PROTON_FORMAT_MARKERSYNTAX_H
