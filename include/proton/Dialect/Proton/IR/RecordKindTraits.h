#ifndef PROTON_DIALECT_PROTON_IR_RECORDKINDTRAITS_H
#define PROTON_DIALECT_PROTON_IR_RECORDKINDTRAITS_H

// What each record kind does, as ProtonEnums.td defines it (the fields of
// its Proton_RecordKindCase defs, generated into RecordKindTraits.h.inc).
// Code that must know what a kind does asks these traits, never the kind's
// name, so that a new kind is one def in ProtonEnums.td. Included by
// Dialect.h after the ODS enums: include Dialect.h.

#include "mlir/IR/Types.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::proton {

/// How a kind's records are grouped into ids (ProtonEnums.td's
/// Proton_KindRole): a scope is a start and the end that closes it on every
/// path (scopes nest); an event every record of one name, paired when
/// decoded; a point one record site.
enum class KindPairing : uint8_t { scope, event, point };

inline llvm::StringRef stringifyKindPairing(KindPairing pairing) {
  switch (pairing) {
  case KindPairing::scope:
    return "scope";
  case KindPairing::event:
    return "event";
  case KindPairing::point:
    return "point";
  }
  return "";
}

struct RecordKindTraits {
  RecordKind kind;
  /// The IdKind of the ids its records carry.
  IdKind idKind;
  KindPairing pairing;
  /// Whether it ends its pair (a scope's or an event's end).
  bool closes;
  /// Its value operand's types ("i32", "f32"); empty: it takes none.
  llvm::ArrayRef<llvm::StringLiteral> valueTypes;
  /// The kind of the record after the time that holds the value's bits.
  std::optional<RecordKind> valueRecord;
  /// Buffer records one site writes.
  unsigned records;
  /// Whether its record carries the tag's end bit.
  bool endBit;
  /// Whether proton.record may name it (otherwise only the lowering writes
  /// it, as a circular store's kind).
  bool recordable;

  bool takesValue() const { return !valueTypes.empty(); }
  constexpr bool opensScope() const {
    return pairing == KindPairing::scope && !closes;
  }
  constexpr bool closesScope() const {
    return pairing == KindPairing::scope && closes;
  }
};

/// What the ids of one IdKind are: the pairing and the value types of the
/// record kinds whose ids they are.
struct IdKindTraits {
  IdKind kind;
  KindPairing pairing;
  /// A value's dtypes (the scope table's `dtype`); empty: it has none.
  llvm::ArrayRef<llvm::StringLiteral> valueTypes;

  bool hasValue() const { return !valueTypes.empty(); }
};

namespace detail {
#include "proton/Dialect/Proton/IR/RecordKindTraits.h.inc"
} // namespace detail

constexpr const RecordKindTraits &recordKindTraits(RecordKind kind) {
  return detail::kRecordKindTraits[static_cast<uint32_t>(kind)];
}

constexpr const IdKindTraits &idKindTraits(IdKind kind) {
  return detail::kIdKindTraits[static_cast<uint32_t>(kind)];
}

/// Every record kind's traits, in the enum's order.
constexpr llvm::ArrayRef<RecordKindTraits> allRecordKindTraits() {
  return detail::kRecordKindTraits;
}

/// Every IdKind's traits, in the enum's order.
constexpr llvm::ArrayRef<IdKindTraits> allIdKindTraits() {
  return detail::kIdKindTraits;
}

/// A value operand's type as valueTypes names it ("i32", "f32"): as MLIR
/// prints it.
inline std::string valueTypeName(Type type) {
  std::string name;
  llvm::raw_string_ostream(name) << type;
  return name;
}

} // namespace mlir::proton

#endif
