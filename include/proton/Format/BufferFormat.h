//===- BufferFormat.h - the profile buffer's layout, one definition
//--------===//
//
// The one definition of the profile buffer's layout (docs/buffer-format.md).
// The lowering writes it, the `_C` extension exports it to Python, whose
// decoder reads it: nothing here may be retyped elsewhere. Plain C++, no MLIR,
// so that any binding can include it.
//
//===----------------------------------------------------------------------===//
#ifndef PROTON_FORMAT_BUFFERFORMAT_H
#define PROTON_FORMAT_BUFFERFORMAT_H

#include <cstdint>

namespace proton::format {

/// Header word 0: this magic in bits 16-31 (bytes "PR"), the flags in 0-15.
constexpr uint32_t kMagic = 0x5250;
constexpr uint32_t kVersion = 4;
/// The one older version the decoder still reads: records kept clock bits
/// 32-47 masked below the tag, and blocks had no overhang.
constexpr uint32_t kPreviousVersion = 3;

/// A segment's header: 12 words (48 bytes) in three 16-byte parts.
constexpr unsigned kHeaderWords = 12;
constexpr unsigned kSegmentHeaderBytes = kHeaderWords * 4;
/// Header words (index into the 32-bit words of one segment header).
constexpr unsigned kWordMagicFlags = 0; // magic and flags
constexpr unsigned kWordKernelId = 1;   // ties a buffer to its metadata
constexpr unsigned kWordCount = 2;      // records written (may exceed capacity)
constexpr unsigned kWordLocation = 3;   // warp id above a 20-bit location
constexpr unsigned kWordTimerStart = 4; // global timer at entry (2 words)
constexpr unsigned kWordClockStart = 6; // 64-bit clock at entry (2 words)
constexpr unsigned kWordTimerEnd = 8;   // global timer at return (2 words)
constexpr unsigned kWordClockEnd = 10;  // 64-bit clock at return (2 words)

/// Flags in header word 0, bits 0-15 (bits 0-3 hold kVersion).
constexpr unsigned kClock64Bit = 1u << 4;
constexpr unsigned kBufferTypeShift = 5;      // 2 bits: BufferType
constexpr unsigned kGranularityShift = 7;     // 2 bits: Granularity
constexpr unsigned kTimer100MHzBit = 1u << 9; // AMD: the timer ticks at 100 MHz
/// Header word 3: the warp id above the target's 20-bit location.
constexpr unsigned kWarpShift = 20;

/// A record: clock bits 0-31, then the tag (the end bit and a 15-bit scope
/// id) shifted left by kTagShift, added to clock bits 32-63 with 64-bit
/// clocks (one add where a mask and an or were needed; the decoder subtracts
/// the entry clock's bits 32-63, which leaves bits 32-47 relative to entry
/// below the tag while a warp lives less than 2^48 cycles).
constexpr unsigned kRecordWords = 2;
constexpr unsigned kRecordBytes = kRecordWords * 4;
constexpr unsigned kTagShift = 16;
constexpr unsigned kEndTagBit = 1u << 15;
constexpr unsigned kMaxScopes = 1u << 15;

/// What one lane writes at return (shared and registers buffers).
constexpr unsigned kChunkBytes = 16;
/// Blocks start and end on memory sectors, so that a warp's write at return
/// fills whole sectors.
constexpr unsigned kSectorBytes = 32;

} // namespace proton::format

#endif // PROTON_FORMAT_BUFFERFORMAT_H
