// RUN: proton-opt %s -split-input-file --convert-protongpu-to-llvm | FileCheck %s
// RUN: proton-opt %s -split-input-file --convert-protongpu-to-llvm="target=nvptx arch=sm_90" | FileCheck %s
// Blackwell reads the same special registers (%clock64, %clock,
// %globaltimer, %smid) with the same instructions: one lowering for all.
// RUN: proton-opt %s -split-input-file --convert-protongpu-to-llvm="target=nvptx arch=sm_100a" | FileCheck %s
// RUN: proton-opt %s -split-input-file --convert-protongpu-to-llvm="target=nvptx arch=sm_120" | FileCheck %s
// RUN: proton-opt %s -split-input-file --convert-protongpu-to-llvm="kernel-id=305419896" | FileCheck %s --check-prefix=ID

// Shared buffer, 64-bit clocks, every one of 4 warps recording into 128-byte
// segments: each warp's block is a 48-byte header and its records, padded
// to 192 bytes (whole 32-byte sectors).
// CHECK:       llvm.mlir.global external @global_smem() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// The scratch pointer is written now: Triton's readnone/nocapture go.
// CHECK-LABEL: llvm.func ptx_kernelcc @shared64
// CHECK-SAME:    (%arg0: !llvm.ptr<1>, %[[SCRATCH:arg1]]: !llvm.ptr<1>)
// CHECK-SAME:    proton.layout = #proton_gpu.layout<shared, warp, clock 64, num_warps 4, warps[0, 1, 2, 3], segment_bytes 128, shared_offset 0>
// The record index lives in registers: no stack slot is left.
// CHECK-NOT:     llvm.alloca
// CHECK:         %[[TID:.+]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK:         %[[WARP:.+]] = llvm.lshr %[[TID]], %{{.+}} : i32
// CHECK:         %[[LANE:.+]] = llvm.and %[[TID]], %{{.+}} : i32
// CHECK:         %[[ALL:.+]] = llvm.mlir.constant(true) : i1
// CHECK:         %[[LANE0:.+]] = llvm.icmp "eq" %[[LANE]], %{{.+}} : i32
// CHECK:         %[[WRITER:.+]] = llvm.and %[[ALL]], %[[LANE0]] : i1
// The CTA's index is x + nx * (y + ny * z).
// CHECK:         %[[X:.+]] = nvvm.read.ptx.sreg.ctaid.x : i32
// CHECK:         %[[Y:.+]] = nvvm.read.ptx.sreg.ctaid.y : i32
// CHECK:         %[[Z:.+]] = nvvm.read.ptx.sreg.ctaid.z : i32
// CHECK:         %[[NX:.+]] = nvvm.read.ptx.sreg.nctaid.x : i32
// CHECK:         %[[NY:.+]] = nvvm.read.ptx.sreg.nctaid.y : i32
// CHECK:         %[[NYZ:.+]] = llvm.mul %[[NY]], %[[Z]] : i32
// CHECK:         %[[YZ:.+]] = llvm.add %[[Y]], %[[NYZ]] : i32
// CHECK:         %[[NXYZ:.+]] = llvm.mul %[[NX]], %[[YZ]] : i32
// CHECK:         %[[CTA:.+]] = llvm.add %[[X]], %[[NXYZ]] : i32
// CHECK:         %[[CTA64:.+]] = llvm.zext %[[CTA]] : i32 to i64
// 4 blocks of 192 bytes per CTA.
// CHECK:         %[[PERCTA:.+]] = llvm.mlir.constant(768 : i64) : i64
// CHECK:         %[[CTAOFF:.+]] = llvm.mul %[[CTA64]], %[[PERCTA]] : i64
// CHECK:         %[[CTABASE:.+]] = llvm.getelementptr %[[SCRATCH]][%[[CTAOFF]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i8
// CHECK:         %[[BLOCKB:.+]] = llvm.mlir.constant(192 : i32) : i32
// CHECK-NEXT:    %[[BLOCKOFF:.+]] = llvm.mul %[[WARP]], %[[BLOCKB]] : i32
// CHECK-NEXT:    %[[BLOCK:.+]] = llvm.getelementptr %[[CTABASE]][%[[BLOCKOFF]]] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i8
// CHECK-NEXT:    %[[SMEM:.+]] = llvm.mlir.addressof @global_smem : !llvm.ptr<3>
// CHECK-NEXT:    %[[SOFF:.+]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:    %[[SBLOCKOFF:.+]] = llvm.add %[[SOFF]], %[[BLOCKOFF]] : i32
// CHECK-NEXT:    %[[STAGE:.+]] = llvm.getelementptr %[[SMEM]][%[[SBLOCKOFF]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK-NEXT:    %[[HDRB:.+]] = llvm.mlir.constant(48 : i32) : i32
// CHECK-NEXT:    %[[SREC:.+]] = llvm.getelementptr %[[STAGE]][%[[HDRB]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK-NEXT:    %[[IDX0:.+]] = llvm.mlir.constant(0 : i32) : i32
// Entry stamps: global timer and 64-bit clock at header offset 16.
// CHECK-NEXT:    %[[GT:.+]] = llvm.inline_asm has_side_effects asm_dialect = att "mov.u64 $0, %globaltimer;", "=l"  : () -> i64
// CHECK:         %[[CLK:.+]] = llvm.inline_asm has_side_effects asm_dialect = att "mov.u64 $0, %clock64;", "=l"  : () -> i64
// CHECK:         %[[C16E:.+]] = llvm.mlir.constant(16 : i32) : i32
// CHECK-NEXT:    %[[ENTRY:.+]] = llvm.getelementptr %[[STAGE]][%[[C16E]]]
// CHECK-NEXT:    llvm.inline_asm has_side_effects asm_dialect = att "@$5 st.shared.v4.b32 [$0], {$1, $2, $3, $4};", "r,r,r,r,r,b" %[[ENTRY]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[WRITER]]
// A record is stored a record late, so that nothing uses its clock read
// right after it. Until the first record, the pending one is {0, 0 + tag 0}
// aimed at the header's exit part (records - 16), which the return
// overwrites.
// CHECK-NEXT:    %[[P0:.+]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:    %[[P1:.+]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:    %[[P2:.+]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:    %[[P3:.+]] = llvm.mlir.constant(-16 : i32) : i32
// First record: slot 0 of 16, 8 bytes: clock bits 0-31, then clock bits
// 32-63 plus the tag (scope id 5) << 16. It stores the pending record and
// becomes the pending one.
// CHECK-NEXT:    %[[R0:.+]] = llvm.inline_asm has_side_effects asm_dialect = att "mov.u64 $0, %clock64;", "=l"  : () -> i64
// CHECK-NEXT:    %[[MASK:.+]] = llvm.mlir.constant(15 : i32) : i32
// CHECK-NEXT:    %[[SLOT0:.+]] = llvm.and %[[IDX0]], %[[MASK]] : i32
// CHECK-NEXT:    %[[RB:.+]] = llvm.mlir.constant(8 : i32) : i32
// CHECK-NEXT:    %[[OFF0:.+]] = llvm.mul %[[SLOT0]], %[[RB]] : i32
// CHECK-NEXT:    %[[TAG0:.+]] = llvm.mlir.constant(327680 : i32) : i32
// CHECK-NEXT:    %[[LO0:.+]] = llvm.trunc %[[R0]] : i64 to i32
// CHECK-NEXT:    llvm.mlir.constant(32 : i64)
// CHECK-NEXT:    %[[SH0:.+]] = llvm.lshr %[[R0]]
// CHECK-NEXT:    %[[HI0:.+]] = llvm.trunc %[[SH0]] : i64 to i32
// CHECK-NEXT:    %[[PW1:.+]] = llvm.add %[[P1]], %[[P2]] : i32
// CHECK-NEXT:    %[[PADDR:.+]] = llvm.getelementptr %[[SREC]][%[[P3]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK-NEXT:    llvm.inline_asm has_side_effects asm_dialect = att "@$3 st.shared.v2.b32 [$0], {$1, $2};", "r,r,r,b" %[[PADDR]], %[[P0]], %[[PW1]], %[[WRITER]] : (!llvm.ptr<3>, i32, i32, i1) -> ()
// CHECK-NEXT:    %[[ONE:.+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:    %[[IDX1:.+]] = llvm.add %[[IDX0]], %[[ONE]] : i32
// The kernel's own code stays between the two records.
// CHECK-NEXT:    llvm.load %arg0
// Second record: an end, so the tag has its top bit set: (5 | 1 << 15)
// << 16. It stores the first record: its clock, bits 32-63 plus its tag,
// at its slot.
// CHECK:         %[[R1:.+]] = llvm.inline_asm has_side_effects asm_dialect = att "mov.u64 $0, %clock64;", "=l"  : () -> i64
// CHECK:         llvm.and %[[IDX1]], %{{.+}} : i32
// CHECK:         %[[TAG1:.+]] = llvm.mlir.constant(-2147155968 : i32) : i32
// CHECK:         %[[WORD1:.+]] = llvm.add %[[HI0]], %[[TAG0]] : i32
// CHECK-NEXT:    %[[ADDR0:.+]] = llvm.getelementptr %[[SREC]][%[[OFF0]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK-NEXT:    llvm.inline_asm has_side_effects asm_dialect = att "@$3 st.shared.v2.b32 [$0], {$1, $2};", "r,r,r,b" %[[ADDR0]], %[[LO0]], %[[WORD1]], %[[WRITER]] : (!llvm.ptr<3>, i32, i32, i1) -> ()
// CHECK:         %[[COUNT:.+]] = llvm.add %[[IDX1]], %{{.+}} : i32
// Finalize: exit stamps, then {magic << 16 | flags, kernel id, count,
// smid | warp << 20} at offset 0 and the stamps at offset 32, in shared
// memory. Flags: version 4 | 64-bit clock (bit 4) | shared << 5 | warp << 7
// | 1 GHz timer: 0x52500014.
// CHECK:         llvm.inline_asm has_side_effects asm_dialect = att "mov.u64 $0, %globaltimer;", "=l"
// CHECK:         llvm.inline_asm has_side_effects asm_dialect = att "mov.u64 $0, %clock64;", "=l"
// CHECK:         %[[C20:.+]] = llvm.mlir.constant(20 : i32) : i32
// CHECK-NEXT:    %[[WARPHI:.+]] = llvm.shl %[[WARP]], %[[C20]] : i32
// CHECK-NEXT:    %[[SM:.+]] = llvm.inline_asm has_side_effects asm_dialect = att "mov.u32 $0, %smid;", "=r"  : () -> i32
// CHECK-NEXT:    %[[WHERE:.+]] = llvm.or %[[SM]], %[[WARPHI]] : i32
// CHECK-NEXT:    %[[MAGIC:.+]] = llvm.mlir.constant(1380974612 : i32) : i32
// CHECK-NEXT:    %[[KERNEL_ID:.+]] = llvm.mlir.constant(0 : i32) : i32
// The return stores the second record, then the header.
// CHECK-NEXT:    %[[WORD1B:.+]] = llvm.add %{{.+}}, %[[TAG1]] : i32
// CHECK-NEXT:    llvm.getelementptr
// CHECK-NEXT:    llvm.inline_asm has_side_effects asm_dialect = att "@$3 st.shared.v2.b32 [$0], {$1, $2};", "r,r,r,b" %{{.+}}, %{{.+}}, %[[WORD1B]], %[[WRITER]]
// CHECK-NEXT:    %[[C0:.+]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:    %[[IDENT:.+]] = llvm.getelementptr %[[STAGE]][%[[C0]]]
// CHECK-NEXT:    llvm.inline_asm has_side_effects asm_dialect = att "@$5 st.shared.v4.b32 [$0], {$1, $2, $3, $4};", "r,r,r,r,r,b" %[[IDENT]], %[[MAGIC]], %[[KERNEL_ID]], %[[COUNT]], %[[WHERE]], %[[WRITER]]
// CHECK-NEXT:    %[[C32:.+]] = llvm.mlir.constant(32 : i32) : i32
// CHECK-NEXT:    %[[EXIT:.+]] = llvm.getelementptr %[[STAGE]][%[[C32]]]
// CHECK-NEXT:    llvm.inline_asm has_side_effects asm_dialect = att "@$5 st.shared.v4.b32 [$0], {$1, $2, $3, $4};", "r,r,r,r,r,b" %[[EXIT]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[WRITER]]
// Copy-out: the warp syncs; the block (192 bytes) fits one 512-byte step,
// so each lane stores one 16-byte chunk of the 48-byte header and
// min(count, 16) * 8 record bytes, rounded up to 32, without a branch.
// CHECK-NEXT:    llvm.inline_asm has_side_effects asm_dialect = att "bar.warp.sync 0xffffffff;", "~{memory}"  : () -> ()
// CHECK-NEXT:    %[[RB2:.+]] = llvm.mlir.constant(8 : i32) : i32
// CHECK-NEXT:    %[[CAP:.+]] = llvm.mlir.constant(16 : i32) : i32
// CHECK-NEXT:    %[[LT:.+]] = llvm.icmp "ult" %[[COUNT]], %[[CAP]] : i32
// CHECK-NEXT:    %[[MIN:.+]] = llvm.select %[[LT]], %[[COUNT]], %[[CAP]] : i1, i32
// CHECK-NEXT:    %[[RECORDED:.+]] = llvm.mul %[[MIN]], %[[RB2]] : i32
// CHECK-NEXT:    %[[C79:.+]] = llvm.mlir.constant(79 : i32) : i32
// CHECK-NEXT:    %[[UP:.+]] = llvm.add %[[RECORDED]], %[[C79]] : i32
// CHECK-NEXT:    %[[NOT31:.+]] = llvm.mlir.constant(-32 : i32) : i32
// CHECK-NEXT:    %[[USED:.+]] = llvm.and %[[UP]], %[[NOT31]] : i32
// CHECK-NEXT:    %[[CHUNK:.+]] = llvm.mlir.constant(16 : i32) : i32
// CHECK-NEXT:    %[[FIRSTOFF:.+]] = llvm.mul %[[LANE]], %[[CHUNK]] : i32
// CHECK-NEXT:    %[[STEP0:.+]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:    %[[OFF:.+]] = llvm.add %[[FIRSTOFF]], %[[STEP0]] : i32
// CHECK-NEXT:    %[[MORE:.+]] = llvm.icmp "ult" %[[OFF]], %[[USED]] : i32
// CHECK-NEXT:    %[[GO:.+]] = llvm.and %[[ALL]], %[[MORE]] : i1
// Loads stay inside the 192-byte block (the last chunk starts at 176).
// CHECK-NEXT:    %[[LAST:.+]] = llvm.mlir.constant(176 : i32) : i32
// CHECK-NEXT:    %[[INB:.+]] = llvm.icmp "ult" %[[OFF]], %[[LAST]] : i32
// CHECK-NEXT:    %[[INSIDE:.+]] = llvm.select %[[INB]], %[[OFF]], %[[LAST]] : i1, i32
// CHECK-NEXT:    %[[SRC:.+]] = llvm.getelementptr %[[STAGE]][%[[INSIDE]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK-NEXT:    %[[DATA:.+]] = llvm.load %[[SRC]] {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xi32>
// CHECK-COUNT-4: llvm.extractelement %[[DATA]]
// CHECK:         %[[DST:.+]] = llvm.getelementptr %[[BLOCK]][%[[OFF]]] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i8
// CHECK-NEXT:    llvm.inline_asm has_side_effects asm_dialect = att "@$5 st.global.v4.b32 [$0], {$1, $2, $3, $4};", "l,r,r,r,r,b" %[[DST]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[GO]]
// CHECK-NEXT:    llvm.return
// CHECK-NEXT:  }
// ID-LABEL:      llvm.func ptx_kernelcc @shared64
// ID:            %[[MAGIC:.+]] = llvm.mlir.constant(1380974612 : i32) : i32
// ID-NEXT:       %[[KERNEL_ID:.+]] = llvm.mlir.constant(305419896 : i32) : i32
// ID:            llvm.inline_asm has_side_effects asm_dialect = att "@$5 st.shared.v4.b32 [$0], {$1, $2, $3, $4};", "r,r,r,r,r,b" %{{.+}}, %[[MAGIC]], %[[KERNEL_ID]], %{{.+}}, %{{.+}}, %{{.+}}
llvm.func ptx_kernelcc @shared64(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1> {llvm.nocapture, llvm.readnone}) {
  %s = proton_gpu.init_segment %arg1 <shared, warp, clock 64, num_warps 4, warps[0, 1, 2, 3], segment_bytes 128, shared_offset 0>
  %c = proton_gpu.read_counter : i64
  proton_gpu.circular_store start %s, %c scope 5 : i64
  %v = llvm.load %arg0 : !llvm.ptr<1> -> i32
  %d = proton_gpu.read_counter : i64
  proton_gpu.circular_store end %s, %d scope 5 : i64
  llvm.store %v, %arg0 : i32, !llvm.ptr<1>
  proton_gpu.finalize %s, %arg1
  llvm.return
}

// -----

// 32-bit clocks: 8-byte records stored with st.shared.v2; two of eight
// warps record, so the segment index is chosen by comparing warp ids; the
// segments sit after 48 bytes of the kernel's own shared memory.
// CHECK-LABEL: llvm.func ptx_kernelcc @shared32_selected
// CHECK-SAME:    (%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>)
// CHECK:         %[[WARP:.+]] = llvm.lshr
// CHECK:         %[[NONE:.+]] = llvm.mlir.constant(false) : i1
// CHECK:         %[[W1:.+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:    %[[IS1:.+]] = llvm.icmp "eq" %[[WARP]], %[[W1]] : i32
// CHECK-NEXT:    %[[I0:.+]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:    %[[SEG1:.+]] = llvm.select %[[IS1]], %[[I0]], %{{.+}} : i1, i32
// CHECK-NEXT:    %[[REC1:.+]] = llvm.select %[[IS1]], %[[IS1]], %[[NONE]] : i1, i1
// CHECK-NEXT:    %[[W6:.+]] = llvm.mlir.constant(6 : i32) : i32
// CHECK-NEXT:    %[[IS6:.+]] = llvm.icmp "eq" %[[WARP]], %[[W6]] : i32
// CHECK-NEXT:    %[[I1:.+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:    %[[SEG:.+]] = llvm.select %[[IS6]], %[[I1]], %[[SEG1]] : i1, i32
// CHECK-NEXT:    %[[REC:.+]] = llvm.select %[[IS6]], %[[IS6]], %[[REC1]] : i1, i1
// CHECK:         %[[WRITER:.+]] = llvm.and %[[REC]], %{{.+}} : i1
// 2 blocks of 48 + 64 bytes, padded to 128, per CTA.
// CHECK:         llvm.mlir.constant(256 : i64) : i64
// CHECK:         %[[BLOCKB:.+]] = llvm.mlir.constant(128 : i32) : i32
// CHECK-NEXT:    %[[BLOCKOFF:.+]] = llvm.mul %[[SEG]], %[[BLOCKB]] : i32
// CHECK-NEXT:    llvm.getelementptr
// CHECK-NEXT:    %[[SMEM:.+]] = llvm.mlir.addressof @global_smem : !llvm.ptr<3>
// CHECK-NEXT:    %[[BASE:.+]] = llvm.mlir.constant(48 : i32) : i32
// CHECK-NEXT:    %[[OFF:.+]] = llvm.add %[[BASE]], %[[BLOCKOFF]] : i32
// CHECK-NEXT:    llvm.getelementptr %[[SMEM]][%[[OFF]]]
// A record is {clock, 0 + scope id 3 << 16}, stored by the return (a
// record late).
// CHECK:         %[[CLK:.+]] = llvm.inline_asm has_side_effects asm_dialect = att "mov.u32 $0, %clock;", "=r"  : () -> i32
// CHECK-NEXT:    llvm.mlir.constant(7 : i32) : i32
// CHECK:         llvm.mlir.constant(8 : i32) : i32
// CHECK:         %[[TAG:.+]] = llvm.mlir.constant(196608 : i32) : i32
// CHECK-NEXT:    %[[ZERO:.+]] = llvm.mlir.constant(0 : i32) : i32
// Magic and flags at return: version 4 with 32-bit clocks, 0x52500004.
// CHECK:         llvm.mlir.constant(1380974596 : i32) : i32
// CHECK:         %[[W1:.+]] = llvm.add %[[ZERO]], %[[TAG]] : i32
// CHECK:         llvm.inline_asm has_side_effects asm_dialect = att "@$3 st.shared.v2.b32 [$0], {$1, $2};", "r,r,r,b" %{{.+}}, %[[CLK]], %[[W1]], %[[WRITER]] : (!llvm.ptr<3>, i32, i32, i1) -> ()
// Only recording warps copy.
// CHECK:         bar.warp.sync
// CHECK:         llvm.and %[[REC]], %{{.+}} : i1
llvm.func ptx_kernelcc @shared32_selected(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1> {llvm.nocapture, llvm.readnone}) {
  %s = proton_gpu.init_segment %arg1 <shared, warp, clock 32, num_warps 8, warps[1, 6], segment_bytes 64, shared_offset 48>
  %c = proton_gpu.read_counter : i32
  proton_gpu.circular_store start %s, %c scope 3 : i32
  proton_gpu.finalize %s, %arg1
  llvm.return
}

// -----

// A global buffer: header and records go straight to profile_scratch with
// st.global.v2, nothing is copied out and no shared memory is declared. The
// record index and the pending record (each record is stored by the next
// one or the return) are carried around the loop in block arguments.
// CHECK-NOT:   @global_smem
// CHECK-LABEL: llvm.func ptx_kernelcc @global_loop
// CHECK-NOT:     llvm.alloca
// CHECK:         %[[CTABASE:.+]] = llvm.getelementptr %arg1[%{{.+}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i8
// CHECK:         %[[BLOCK:.+]] = llvm.getelementptr %[[CTABASE]][%{{.+}}] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i8
// CHECK-NEXT:    %[[HDRB:.+]] = llvm.mlir.constant(48 : i32) : i32
// CHECK-NEXT:    %[[GREC:.+]] = llvm.getelementptr %[[BLOCK]][%[[HDRB]]] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i8
// CHECK-NOT:     llvm.mlir.addressof
// CHECK:         %[[IDX0:.+]] = llvm.mlir.constant(0 : i32) : i32
// The entry stamps go straight to global memory too.
// CHECK:         "@$5 st.global.v4.b32 [$0], {$1, $2, $3, $4};"
// CHECK:         llvm.br ^bb1(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[IDX0]] : i32, i32, i32, i32, i32, i32)
// CHECK-NEXT:  ^bb1(%{{.+}}: i32, %[[POFF:.+]]: i32, %[[PTAG:.+]]: i32, %[[PHI:.+]]: i32, %[[PCLK:.+]]: i32, %[[IDX:.+]]: i32):
// CHECK-NEXT:    %[[CLK:.+]] = llvm.inline_asm has_side_effects asm_dialect = att "mov.u32 $0, %clock;", "=r"  : () -> i32
// CHECK-NEXT:    %[[MASK:.+]] = llvm.mlir.constant(31 : i32) : i32
// CHECK-NEXT:    %[[SLOT:.+]] = llvm.and %[[IDX]], %[[MASK]] : i32
// CHECK-NEXT:    %[[RB:.+]] = llvm.mlir.constant(8 : i32) : i32
// CHECK-NEXT:    %[[OFF:.+]] = llvm.mul %[[SLOT]], %[[RB]] : i32
// CHECK-NEXT:    %[[TAG:.+]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:    llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:    %[[W1:.+]] = llvm.add %[[PHI]], %[[PTAG]] : i32
// CHECK-NEXT:    %[[ADDR:.+]] = llvm.getelementptr %[[GREC]][%[[POFF]]] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i8
// CHECK-NEXT:    llvm.inline_asm has_side_effects asm_dialect = att "@$3 st.global.v2.b32 [$0], {$1, $2};", "l,r,r,b" %[[ADDR]], %[[PCLK]], %[[W1]], %{{.+}} : (!llvm.ptr<1>, i32, i32, i1) -> ()
// CHECK-NEXT:    %[[ONE:.+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:    %[[IDX1:.+]] = llvm.add %[[IDX]], %[[ONE]] : i32
// CHECK:         llvm.inline_asm has_side_effects asm_dialect = att "@$3 st.global.v2.b32 [$0], {$1, $2};"
// CHECK:         %[[IDX2:.+]] = llvm.add %[[IDX1]], %{{.+}} : i32
// CHECK:         llvm.cond_br %{{.+}}, ^bb2, ^bb1(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[IDX2]] : i32, i32, i32, i32, i32, i32)
// CHECK-NEXT:  ^bb2:
// Magic and flags at return: version 4 | global << 5, 0x52500024.
// CHECK:         llvm.mlir.constant(1380974628 : i32) : i32
// CHECK-NOT:     bar.warp.sync
// CHECK-NOT:     vector<4xi32>
// CHECK:         llvm.return
llvm.func ptx_kernelcc @global_loop(%n: i32, %arg1: !llvm.ptr<1>) {
  %s = proton_gpu.init_segment %arg1 <global, warp, clock 32, num_warps 4, warps[0, 1, 2, 3], segment_bytes 256, shared_offset 0>
  %c0 = llvm.mlir.constant(0 : i32) : i32
  %c1 = llvm.mlir.constant(1 : i32) : i32
  llvm.br ^loop(%c0 : i32)
^loop(%i: i32):
  %a = proton_gpu.read_counter : i32
  proton_gpu.circular_store start %s, %a scope 0 : i32
  %b = proton_gpu.read_counter : i32
  proton_gpu.circular_store end %s, %b scope 0 : i32
  %next = llvm.add %i, %c1 : i32
  %done = llvm.icmp "eq" %next, %n : i32
  llvm.cond_br %done, ^exit, ^loop(%next : i32)
^exit:
  proton_gpu.finalize %s, %arg1
  llvm.return
}

// -----

// One warp of each group of four records: segment = warp / 4, recording if
// warp % 4 == 0. An existing global_smem is reused, and other parameter
// attributes of the scratch pointer stay.
// CHECK-COUNT-1: llvm.mlir.global external @global_smem
// CHECK-NOT:   llvm.mlir.global
// CHECK-LABEL: llvm.func ptx_kernelcc @warp_groups
// CHECK-SAME:    (%arg0: !llvm.ptr<1> {llvm.noalias})
// CHECK-SAME:    proton.layout = #proton_gpu.layout<shared, warp_group, clock 64, num_warps 8, warps[0, 4], segment_bytes 128, shared_offset 0>
// CHECK:         %[[WARP:.+]] = llvm.lshr %{{.+}}, %{{.+}} : i32
// CHECK:         %[[TWO:.+]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT:    %[[SEG:.+]] = llvm.lshr %[[WARP]], %[[TWO]] : i32
// CHECK-NEXT:    %[[Z:.+]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:    %[[THREE:.+]] = llvm.mlir.constant(3 : i32) : i32
// CHECK-NEXT:    %[[LOW:.+]] = llvm.and %[[WARP]], %[[THREE]] : i32
// CHECK-NEXT:    %[[REC:.+]] = llvm.icmp "eq" %[[LOW]], %[[Z]] : i32
// CHECK:         llvm.and %[[REC]], %{{.+}} : i1
// CHECK:         llvm.mlir.addressof @global_smem : !llvm.ptr<3>
// Flags: version 4 | 64-bit clock (bit 4) | warp_group << 7, 0x52500094.
// CHECK:         llvm.mlir.constant(1380974740 : i32) : i32
llvm.mlir.global external @global_smem() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
llvm.func ptx_kernelcc @warp_groups(%arg1: !llvm.ptr<1> {llvm.readonly, llvm.noalias}) {
  %s = proton_gpu.init_segment %arg1 <shared, warp_group, clock 64, num_warps 8, warps[0, 4], segment_bytes 128, shared_offset 0>
  proton_gpu.finalize %s, %arg1
  llvm.return
}

// -----

// Blocks of more than four 512-byte steps are copied out in a loop.
// CHECK-LABEL: llvm.func ptx_kernelcc @large_segments
// CHECK:         bar.warp.sync
// CHECK:         llvm.br ^bb1(%{{.+}} : i32)
// CHECK-NEXT:  ^bb1(%[[OFF:.+]]: i32):
// CHECK-NEXT:    %[[MORE:.+]] = llvm.icmp "ult" %[[OFF]], %{{.+}} : i32
// CHECK-NEXT:    %[[GO:.+]] = llvm.and %{{.+}}, %[[MORE]] : i1
// CHECK-NEXT:    llvm.cond_br %[[GO]], ^bb2, ^bb3
// CHECK-NEXT:  ^bb2:
// CHECK-NEXT:    %[[SRC:.+]] = llvm.getelementptr %{{.+}}[%[[OFF]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK-NEXT:    %[[DATA:.+]] = llvm.load %[[SRC]] {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xi32>
// CHECK-NEXT:    %[[DST:.+]] = llvm.getelementptr %{{.+}}[%[[OFF]]] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i8
// CHECK-NEXT:    llvm.store %[[DATA]], %[[DST]] {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<1>
// CHECK-NEXT:    %[[STEP:.+]] = llvm.mlir.constant(512 : i32) : i32
// CHECK-NEXT:    %[[NEXT:.+]] = llvm.add %[[OFF]], %[[STEP]] : i32
// CHECK-NEXT:    llvm.br ^bb1(%[[NEXT]] : i32)
// CHECK-NEXT:  ^bb3:
// CHECK-NEXT:    llvm.return
llvm.func ptx_kernelcc @large_segments(%arg1: !llvm.ptr<1>) {
  %s = proton_gpu.init_segment %arg1 <shared, warp, clock 64, num_warps 4, warps[0, 1, 2, 3], segment_bytes 4096, shared_offset 0>
  proton_gpu.finalize %s, %arg1
  llvm.return
}

// -----

// A counter read outside any instrumented kernel is lowered on its own.
// CHECK-LABEL: llvm.func @lone_counter
// CHECK-NEXT:    %[[C:.+]] = llvm.inline_asm has_side_effects asm_dialect = att "mov.u32 $0, %clock;", "=r"  : () -> i32
// CHECK-NEXT:    llvm.return %[[C]] : i32
llvm.func @lone_counter() -> i32 {
  %c = proton_gpu.read_counter : i32
  llvm.return %c : i32
}
