// The formats Python shares with the compiler, as plain data for the
// bindings (see Instrument.h).
#include "proton/Compiler/Instrument.h"

#include "proton/Dialect/Proton/IR/Dialect.h"
#include "proton/Dialect/ProtonGPU/IR/Dialect.h"
#include "proton/Format/BufferFormat.h"
#include "proton/Format/MarkerSyntax.h"

namespace fmt = proton::format;
namespace pgpu = mlir::proton::gpu;

namespace {

/// Every case of an ODS I32 enum: each value up to the largest that
/// symbolizes, with its string.
template <typename Enum, typename Symbolize, typename Stringify>
proton::EnumCases casesOf(const char *name, uint64_t maxValue,
                          Symbolize symbolize, Stringify stringify) {
  proton::EnumCases result{name, {}};
  for (uint32_t value = 0; value <= maxValue; ++value)
    if (std::optional<Enum> e = symbolize(value))
      result.cases.push_back({stringify(*e).str(), value});
  return result;
}

} // namespace

std::vector<proton::NamedInt> proton::bufferFormatConstants() {
  return {
      {"MAGIC", fmt::kMagic},
      {"VERSION", fmt::kVersion},
      {"PREVIOUS_VERSION", fmt::kPreviousVersion},
      {"HEADER_WORDS", fmt::kHeaderWords},
      {"SEGMENT_HEADER_BYTES", fmt::kSegmentHeaderBytes},
      {"W_MAGIC_FLAGS", fmt::kWordMagicFlags},
      {"W_KERNEL_ID", fmt::kWordKernelId},
      {"W_COUNT", fmt::kWordCount},
      {"W_LOCATION", fmt::kWordLocation},
      {"W_TIMER_START", fmt::kWordTimerStart},
      {"W_CLOCK_START", fmt::kWordClockStart},
      {"W_TIMER_END", fmt::kWordTimerEnd},
      {"W_CLOCK_END", fmt::kWordClockEnd},
      {"CLOCK64_BIT", fmt::kClock64Bit},
      {"BUFFER_TYPE_SHIFT", fmt::kBufferTypeShift},
      {"GRANULARITY_SHIFT", fmt::kGranularityShift},
      {"TIMER_100MHZ_BIT", fmt::kTimer100MHzBit},
      {"WARP_SHIFT", fmt::kWarpShift},
      {"RECORD_WORDS", fmt::kRecordWords},
      {"RECORD_BYTES", fmt::kRecordBytes},
      {"TAG_SHIFT", fmt::kTagShift},
      {"END_TAG_BIT", fmt::kEndTagBit},
      {"MAX_SCOPES", fmt::kMaxScopes},
      {"CHUNK_BYTES", fmt::kChunkBytes},
      {"SECTOR_BYTES", fmt::kSectorBytes},
  };
}

std::vector<proton::NamedText> proton::markerSyntax() {
  return {
      {"PREFIX", markers::kPrefix},
      {"LOCATION_SUFFIX", markers::kLocationSuffix},
      {"RECORD_OP", markers::kRecordOp},
  };
}

std::vector<proton::EnumCases> proton::enums() {
  return {
      casesOf<pgpu::BufferType>(
          "BufferType", pgpu::getMaxEnumValForBufferType(),
          [](uint32_t v) { return pgpu::symbolizeBufferType(v); },
          [](pgpu::BufferType e) { return pgpu::stringifyBufferType(e); }),
      casesOf<pgpu::Granularity>(
          "Granularity", pgpu::getMaxEnumValForGranularity(),
          [](uint32_t v) { return pgpu::symbolizeGranularity(v); },
          [](pgpu::Granularity e) { return pgpu::stringifyGranularity(e); }),
      casesOf<pgpu::SamplingStrategy>(
          "SamplingStrategy", pgpu::getMaxEnumValForSamplingStrategy(),
          [](uint32_t v) { return pgpu::symbolizeSamplingStrategy(v); },
          [](pgpu::SamplingStrategy e) {
            return pgpu::stringifySamplingStrategy(e);
          }),
      casesOf<mlir::proton::RecordKind>(
          "RecordKind", mlir::proton::getMaxEnumValForRecordKind(),
          [](uint32_t v) { return mlir::proton::symbolizeRecordKind(v); },
          [](mlir::proton::RecordKind e) {
            return mlir::proton::stringifyRecordKind(e);
          }),
      casesOf<mlir::proton::IdKind>(
          "IdKind", mlir::proton::getMaxEnumValForIdKind(),
          [](uint32_t v) { return mlir::proton::symbolizeIdKind(v); },
          [](mlir::proton::IdKind e) {
            return mlir::proton::stringifyIdKind(e);
          }),
  };
}

static std::vector<std::string>
typeNames(llvm::ArrayRef<llvm::StringLiteral> types) {
  return std::vector<std::string>(types.begin(), types.end());
}

std::vector<proton::RecordKindInfo> proton::recordKindTraitTable() {
  std::vector<RecordKindInfo> table;
  for (const mlir::proton::RecordKindTraits &t :
       mlir::proton::allRecordKindTraits())
    table.push_back(
        {mlir::proton::stringifyRecordKind(t.kind).str(),
         mlir::proton::stringifyIdKind(t.idKind).str(),
         mlir::proton::stringifyKindPairing(t.pairing).str(), t.closes,
         typeNames(t.valueTypes),
         t.valueRecord ? mlir::proton::stringifyRecordKind(*t.valueRecord).str()
                       : "",
         t.records, t.endBit, t.recordable});
  return table;
}

std::vector<proton::IdKindInfo> proton::idKindTraitTable() {
  std::vector<IdKindInfo> table;
  for (const mlir::proton::IdKindTraits &t : mlir::proton::allIdKindTraits())
    table.push_back({mlir::proton::stringifyIdKind(t.kind).str(),
                     mlir::proton::stringifyKindPairing(t.pairing).str(),
                     typeNames(t.valueTypes)});
  return table;
}

unsigned proton::blockBytes(unsigned segmentBytes, unsigned overhang) {
  return pgpu::LayoutAttr::blockBytesFor(segmentBytes, overhang);
}
