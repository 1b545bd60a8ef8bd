#ifndef PROTONGPU_DIALECT_TD
#define PROTONGPU_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "proton/Dialect/Proton/IR/ProtonEnums.td"
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

    `overhang` record slots follow the ring (0 unless printed): a run of
    records in one block computes its first slot once and writes the rest
    after it, so a run that starts near the ring's end continues past it
    instead of wrapping; the decoder keeps, per slot, the newer of the ring's
    and the overhang's record.
  }];
  let parameters = (ins
    EnumParameter<ProtonGPU_BufferType>:$bufferType,
    EnumParameter<ProtonGPU_Granularity>:$granularity,
    "unsigned":$clockBits,
    "unsigned":$numWarps,
    ArrayRefParameter<"int32_t">:$warps,
    "unsigned":$segmentBytes,
    "unsigned":$sharedOffset,
    DefaultValuedParameter<"unsigned", "0">:$overhang
  );
  let assemblyFormat = [{
    `<` $bufferType `,` $granularity `,` `clock` $clockBits `,`
    `num_warps` $numWarps `,` `warps` `[` $warps `]` `,`
    `segment_bytes` $segmentBytes `,` `shared_offset` $sharedOffset
    (`,` `overhang` $overhang^)? `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    // The numbers come from proton/Format/BufferFormat.h; these two names
    // stay for the verifier and the extension's exports.
    static constexpr unsigned kSegmentHeaderBytes =
        ::proton::format::kSegmentHeaderBytes;
    static constexpr unsigned kMaxScopes = ::proton::format::kMaxScopes;
    unsigned getNumSegments() const { return getWarps().size(); }
    unsigned getRecordBytes() const { return ::proton::format::kRecordBytes; }
    unsigned getCapacity() const {
      return getSegmentBytes() / ::proton::format::kRecordBytes;
    }
    /// Record slots: the ring and its overhang.
    unsigned getSlots() const { return getCapacity() + getOverhang(); }
    /// A segment's header, records and overhang, contiguous in
    /// profile_scratch (and in shared memory with a shared buffer).
    static unsigned blockBytesFor(unsigned segmentBytes,
                                  unsigned overhang = 0) {
      constexpr unsigned sector = ::proton::format::kSectorBytes;
      unsigned bytes = ::proton::format::kSegmentHeaderBytes + segmentBytes +
                       overhang * ::proton::format::kRecordBytes;
      return (bytes + sector - 1) / sector * sector;
    }
    unsigned getBlockBytes() const {
      return blockBytesFor(getSegmentBytes(), getOverhang());
    }
    unsigned getBytesPerCta() const {
      return getNumSegments() * getBlockBytes();
    }
    unsigned getSharedBytes() const {
      return getBufferType() == BufferType::shared ? getBytesPerCta() : 0;
    }
  }];
}

def ProtonGPU_ScopeEntryAttr : AttrDef<ProtonGPU_Dialect, "ScopeEntry"> {
  let mnemonic = "scope_entry";
  let summary = "One row of an instrumented kernel's scope table";
  let description = [{
    The conversion leaves the kernel's scope table on it as `proton.scopes`,
    an array of these, one per id in id order; the compiler turns it into the
    metadata the decoder reads. `parent` is the id of the scope open around
    the entry (-1 at the top level, and always for events); `loc` is
    `file:line:column`, or empty where the record has no location. `dtype`
    is a value's type, `i32` or `f32`, the decoder's reading of its 32 bits;
    other kinds have none.
  }];
  let parameters = (ins
    "int32_t":$id,
    EnumParameter<Proton_IdKind>:$kind,
    StringRefParameter<"the name the records carry">:$name,
    "int32_t":$parent,
    StringRefParameter<"where the records are in the source">:$loc,
    StringRefParameter<"a value's type", [{""}]>:$dtype
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def ProtonGPU_SegmentType : TypeDef<ProtonGPU_Dialect, "Segment"> {
  let mnemonic = "segment";
  let summary = "The calling warp's segment of the profile buffer";
}

#endif
