#ifndef PROTON_COMPILER_INSTRUMENT_H
#define PROTON_COMPILER_INSTRUMENT_H

// The compiler's plain C++ interface: no MLIR or LLVM types cross it, so the
// Python extension (built with RTTI) and tools link against the compiler
// library (built without) through this header alone.

#include <cstdint>
#include <string>
#include <vector>

#if defined(_WIN32)
#define PROTON_API
#else
#define PROTON_API __attribute__((visibility("default")))
#endif

namespace proton {

struct InstrumentResult {
  bool ok = false;
  /// The instrumented module; the input unchanged if it holds no markers.
  std::string llvmIR;
  /// JSON: instrumented, kernel, scopes (one row per id: {id, name, parent,
  /// loc, kind}, and dtype for a value), layout, profile_scratch_size/align,
  /// shared_memory_total, and warnings (the warning diagnostics, one string
  /// each). See docs/buffer-format.md.
  std::string metadataJson;
  /// Errors (when !ok) and warnings, one per line, with source locations.
  std::string diagnostics;
};

/// Prefix under which the Python bridge (hide_intrinsics in
/// python/proton/compiling/bridge.py, as _C.HIDDEN_INTRINSIC_PREFIX) hides
/// Triton's intrinsic declarations from our LLVM; instrumentLLVMIR removes it
/// on export.
inline constexpr const char *kHiddenIntrinsicPrefix = "__proton_hidden.";

/// The version of the LLVM this compiler is built with, e.g. "22.1.8".
PROTON_API const char *llvmVersion();

/// Runs --proton-pipeline{<options>} on Triton's LLVM IR text. `options` is
/// the pipeline's option string, e.g. "target=nvptx arch=sm_90 clock-bits=32".
PROTON_API InstrumentResult instrumentLLVMIR(const std::string &llvmIR,
                                             const std::string &options);

/// The proton-opt driver (MlirOptMain with Proton's dialects and passes).
PROTON_API int protonOptMain(int argc, char **argv);

// The formats shared with Python, for bindings to export: defined once, in
// proton/Format/*.h and the dialects' ODS enums, never retyped by a binding.

struct NamedInt {
  std::string name;
  int64_t value;
};

struct NamedText {
  std::string name;
  std::string value;
};

/// An enum of the dialects (ODS) with its cases' strings and values.
struct EnumCases {
  std::string name;
  std::vector<NamedInt> cases;
};

/// The profile buffer's layout (proton/Format/BufferFormat.h) under the names
/// Python uses: MAGIC, VERSION, W_COUNT, RECORD_BYTES, ...
PROTON_API std::vector<NamedInt> bufferFormatConstants();

/// The marker text (proton/Format/MarkerSyntax.h): PREFIX, LOCATION_SUFFIX,
/// RECORD_OP.
PROTON_API std::vector<NamedText> markerSyntax();

/// BufferType, Granularity, SamplingStrategy, RecordKind and IdKind, from
/// the ODS-generated functions.
PROTON_API std::vector<EnumCases> enums();

/// A record kind's traits (mlir::proton::RecordKindTraits, from
/// ProtonEnums.td) as plain data, names for enum values.
struct RecordKindInfo {
  std::string name;
  std::string idKind;
  std::string pairing; // "scope", "event" or "point"
  bool closes;
  std::vector<std::string> valueTypes; // empty: it takes no value
  std::string valueRecord;             // empty: none
  unsigned records;
  bool endBit;
  bool recordable;
};

/// An IdKind's traits (mlir::proton::IdKindTraits) as plain data.
struct IdKindInfo {
  std::string name;
  std::string pairing;
  std::vector<std::string> valueTypes; // a value's dtypes; empty: none
};

/// Every RecordKind's traits, in the enum's order.
PROTON_API std::vector<RecordKindInfo> recordKindTraitTable();

/// Every IdKind's traits, in the enum's order.
PROTON_API std::vector<IdKindInfo> idKindTraitTable();

/// The bytes of one segment's block in profile_scratch: its header,
/// `segmentBytes` of records and `overhang` record slots, padded to whole
/// sectors (LayoutAttr::blockBytesFor), for the decoder to split a buffer.
PROTON_API unsigned blockBytes(unsigned segmentBytes, unsigned overhang);

} // namespace proton

#endif
