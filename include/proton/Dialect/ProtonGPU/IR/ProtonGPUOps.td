#ifndef PROTONGPU_OPS_TD
#define PROTONGPU_OPS_TD

include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Dialect/LLVMIR/LLVMOpBase.td"
include "proton/Dialect/Proton/IR/ProtonEnums.td"
include "proton/Dialect/ProtonGPU/IR/ProtonGPUDialect.td"

class ProtonGPU_Op<string mnemonic, list<Trait> traits = []>
    : Op<ProtonGPU_Dialect, mnemonic, traits>;

def ProtonGPU_InitSegmentOp : ProtonGPU_Op<"init_segment",
    [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Sets up the calling warp's segment and stamps the start time";
  let description = [{
    Placed once at kernel entry. Finds the calling warp's segment (if it
    records at all), zeroes its record index and writes the global timer
    and 64-bit clock at entry into the segment header (in shared memory with
    a shared buffer; kept in a register with a registers buffer).
  }];
  let arguments = (ins LLVM_PointerInAddressSpace<1>:$scratch,
                       ProtonGPU_LayoutAttr:$layout);
  let results = (outs ProtonGPU_SegmentType:$segment);
  let assemblyFormat = "$scratch $layout attr-dict";
}

def ProtonGPU_ReadCounterOp : ProtonGPU_Op<"read_counter",
    [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Reads the SM cycle counter (32 or 64 bits)";
  let description = [{
    Reads the streaming multiprocessor's cycle counter. It has side effects
    so that it stays in order with the kernel's own side-effecting code.
  }];
  let results = (outs AnyTypeOf<[I32, I64]>:$counter);
  let assemblyFormat = "attr-dict `:` type($counter)";
}

def ProtonGPU_CircularStoreOp : ProtonGPU_Op<"circular_store",
    [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Stores one record into the warp's circular segment";
  let description = [{
    Appends `(kind, scope_id, counter)` to the calling warp's segment, at the
    record index modulo the segment's capacity, and advances the index. Only
    one lane of a recording warp writes. The scope id must fit in 15 bits.

    ```mlir
    proton_gpu.circular_store start %seg, %c scope 0 : i32
    ```
  }];
  let arguments = (ins ProtonGPU_SegmentType:$segment,
                       AnyTypeOf<[I32, I64]>:$counter,
                       Proton_RecordKind:$kind,
                       ConfinedAttr<I32Attr, [IntNonNegative]>:$scope_id);
  let assemblyFormat =
      "$kind $segment `,` $counter `scope` $scope_id attr-dict `:` type($counter)";
  let hasVerifier = 1;
}

def ProtonGPU_FinalizeOp : ProtonGPU_Op<"finalize",
    [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Writes the segment and its header to profile_scratch";
  let description = [{
    Placed before every return. Stamps the end time, the SM id and the record
    count into the segment header and, for a shared-memory buffer, copies the
    header and the recorded part of the segment to global memory.
  }];
  let arguments = (ins ProtonGPU_SegmentType:$segment,
                       LLVM_PointerInAddressSpace<1>:$scratch);
  let assemblyFormat = "$segment `,` $scratch attr-dict";
  let hasVerifier = 1;
}

#endif
