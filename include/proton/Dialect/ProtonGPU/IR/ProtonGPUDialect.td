#ifndef PROTONGPU_DIALECT_TD
#define PROTONGPU_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "proton/Dialect/ProtonGPU/IR/ProtonGPUEnums.td"

def ProtonGPU_Dialect : Dialect {
  let name = "proton_gpu";
  let cppNamespace = "::mlir::proton::gpu";
  let summary = "Lowered intra-kernel profiling: counters, per-warp circular buffers";
  let description = [{
    `proton_gpu` is the level between the `proton` markers and the target's
    LLVM dialect: a per-warp segment of a circular buffer is set up at kernel
    entry, each record reads a counter and stores it into the segment, and
    every return finalizes the segment into the `profile_scratch` buffer.
    The byte layout is documented in docs/buffer-format.md.
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def ProtonGPU_LayoutAttr : AttrDef<ProtonGPU_Dialect, "Layout"> {
  let mnemonic = "layout";
  let summary = "Per-CTA profile buffer layout";
  let description = [{
    `warps` lists the warps that record, in segment order: warp `warps[i]`
    writes segment `i`. A segment's block is a 48-byte header followed by
    `segmentBytes` of 8-byte records (a power of two), padded to whole
    32-byte sectors. With a `shared` buffer the blocks live in shared memory
    at `sharedOffset` and are copied to global memory at every return; with
    a `registers` buffer each lane keeps one 16-byte chunk of its warp's
    block in registers and writes it at return.
  }];
  let parameters = (ins
    EnumParameter<ProtonGPU_BufferType>:$bufferType,
    EnumParameter<ProtonGPU_Granularity>:$granularity,
    "unsigned":$clockBits,
    "unsigned":$numWarps,
    ArrayRefParameter<"int32_t">:$warps,
    "unsigned":$segmentBytes,
    "unsigned":$sharedOffset
  );
  let assemblyFormat = [{
    `<` $bufferType `,` $granularity `,` `clock` $clockBits `,`
    `num_warps` $numWarps `,` `warps` `[` $warps `]` `,`
    `segment_bytes` $segmentBytes `,` `shared_offset` $sharedOffset `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    static constexpr unsigned kSegmentHeaderBytes = 48;
    /// Header word 0: this magic in bits 16-31, the flags in bits 0-15.
    static constexpr uint32_t kMagic = 0x5250; // bytes "PR"
    static constexpr uint32_t kVersion = 3;
    /// Every record: clock bits 0-31, then clock bits 32-47 (0 with 32-bit
    /// clocks), the scope id (15 bits) and the end bit.
    static constexpr unsigned kRecordBytes = 8;
    static constexpr unsigned kMaxScopes = 1u << 15;
    /// What one lane writes at return (shared and registers buffers).
    static constexpr unsigned kChunkBytes = 16;
    /// Blocks start and end on memory sectors, so that a warp's write at
    /// return fills whole sectors.
    static constexpr unsigned kSectorBytes = 32;
    unsigned getNumSegments() const { return getWarps().size(); }
    unsigned getRecordBytes() const { return kRecordBytes; }
    unsigned getCapacity() const { return getSegmentBytes() / kRecordBytes; }
    /// A segment's header and records, contiguous in profile_scratch (and
    /// in shared memory with a shared buffer).
    static unsigned blockBytesFor(unsigned segmentBytes) {
      unsigned bytes = kSegmentHeaderBytes + segmentBytes;
      return (bytes + kSectorBytes - 1) / kSectorBytes * kSectorBytes;
    }
    unsigned getBlockBytes() const { return blockBytesFor(getSegmentBytes()); }
    unsigned getBytesPerCta() const {
      return getNumSegments() * getBlockBytes();
    }
    unsigned getSharedBytes() const {
      return getBufferType() == BufferType::shared ? getBytesPerCta() : 0;
    }
  }];
}

def ProtonGPU_SegmentType : TypeDef<ProtonGPU_Dialect, "Segment"> {
  let mnemonic = "segment";
  let summary = "The calling warp's segment of the profile buffer";
}

#endif
