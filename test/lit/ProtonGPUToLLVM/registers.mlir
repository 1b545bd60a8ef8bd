// RUN: proton-opt %s -split-input-file --convert-protongpu-to-llvm | FileCheck %s
// RUN: proton-opt %s -split-input-file --convert-protongpu-to-llvm="target=amdgpu arch=gfx942" | FileCheck %s --check-prefix=AMD

// A registers buffer: no shared memory, no stack slot left; each lane keeps
// one 16-byte chunk of its warp's block (lane 1: entry stamps; lanes 3 and
// up: two 8-byte records each) and writes it with one predicated store at
// return.
// CHECK-NOT:     global_smem
// CHECK-LABEL: llvm.func ptx_kernelcc @registers64
// CHECK-NOT:     llvm.alloca
// CHECK:         %[[TID:.+]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK:         %[[LANE:.+]] = llvm.and %[[TID]], %{{.+}} : i32
// 48 + 32 bytes, padded to a 96-byte block.
// CHECK:         llvm.mlir.constant(96 : i32) : i32
// CHECK:         %[[ONE:.+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:    %[[ISENTRY:.+]] = llvm.icmp "eq" %[[LANE]], %[[ONE]] : i32
// CHECK:         %[[GT:.+]] = llvm.inline_asm has_side_effects asm_dialect = att "mov.u64 $0, %globaltimer;"
// CHECK-NEXT:    %[[GTLO:.+]] = llvm.trunc %[[GT]] : i64 to i32
// CHECK:         %[[E0:.+]] = llvm.select %[[ISENTRY]], %[[GTLO]], %{{.+}} : i1, i32
// CHECK:         %[[E1:.+]] = llvm.select %[[ISENTRY]], %{{.+}}, %{{.+}} : i1, i32
// The first record (start of scope 5) is the lower half of lane 3 + 0's
// chunk: {clock bits 0-31, clock bits 32-47 | 5 << 16}.
// CHECK:         %[[C0:.+]] = llvm.inline_asm has_side_effects asm_dialect = att "mov.u64 $0, %clock64;"
// CHECK:         %[[TAG0:.+]] = llvm.mlir.constant(327680 : i32) : i32
// CHECK:         %[[LO0:.+]] = llvm.trunc %[[C0]] : i64 to i32
// CHECK:         %[[HI0:.+]] = llvm.add %{{.+}}, %[[TAG0]] : i32
// CHECK:         %[[OWNER0:.+]] = llvm.add %{{.+}}, %{{.+}} : i32
// CHECK-NEXT:    %[[MINE0:.+]] = llvm.icmp "eq" %[[LANE]], %[[OWNER0]] : i32
// CHECK:         %[[LOWER0:.+]] = llvm.and %[[MINE0]], %{{.+}} : i1
// CHECK-NEXT:    %[[W0:.+]] = llvm.select %[[LOWER0]], %[[LO0]], %[[E0]] : i1, i32
// CHECK-NEXT:    %[[W1:.+]] = llvm.select %[[LOWER0]], %[[HI0]], %[[E1]] : i1, i32
// The end record ((5 | 1 << 15) << 16) goes to the upper half of the same chunk.
// CHECK:         %[[TAG1:.+]] = llvm.mlir.constant(-2147155968 : i32) : i32
// At return: lane 2 the exit stamps, lane 0 the identity (magic and flags
// 0x52500054: version 4 | 64-bit clock | registers (2) << 5).
// CHECK:         %[[MAGIC:.+]] = llvm.mlir.constant(1380974676 : i32) : i32
// CHECK:         %[[ISIDENT:.+]] = llvm.icmp "eq" %[[LANE]], %{{.+}} : i32
// CHECK:         %[[ISEXIT:.+]] = llvm.icmp "eq" %[[LANE]], %{{.+}} : i32
// CHECK-NEXT:    %[[X0:.+]] = llvm.select %[[ISEXIT]], %{{.+}}, %{{.+}} : i1, i32
// CHECK-NEXT:    %[[OUT0:.+]] = llvm.select %[[ISIDENT]], %[[MAGIC]], %[[X0]] : i1, i32
// Lane L writes bytes [16 L, 16 L + 16) of the block while they are used.
// CHECK:         %[[OFF:.+]] = llvm.mul %[[LANE]], %{{.+}} : i32
// CHECK:         %[[USED:.+]] = llvm.icmp "ult" %[[OFF]], %{{.+}} : i32
// CHECK:         %[[ADDR:.+]] = llvm.getelementptr %{{.+}}[%[[OFF]]]
// CHECK-NEXT:    llvm.inline_asm has_side_effects asm_dialect = att "@$5 st.global.v4.b32 [$0], {$1, $2, $3, $4};", "l,r,r,r,r,b" %[[ADDR]], %[[OUT0]],
// CHECK-NOT:     st.shared
// CHECK:         llvm.return

// AMD-NOT:       global_smem
// AMD-LABEL:   llvm.func ptx_kernelcc @registers64
// AMD-NOT:       llvm.alloca
// AMD:           llvm.store %{{.+}}, %{{.+}} {alignment = 8 : i64} : vector<4xi32>, !llvm.ptr<1>
// AMD-NOT:       llvm.store
// AMD:           llvm.return
llvm.func ptx_kernelcc @registers64(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1> {llvm.nocapture, llvm.readnone}) {
  %s = proton_gpu.init_segment %arg1 <registers, warp, clock 64, num_warps 4, warps[0, 1, 2, 3], segment_bytes 32, shared_offset 0>
  %c = proton_gpu.read_counter : i64
  proton_gpu.circular_store start %s, %c scope 5 : i64
  %d = proton_gpu.read_counter : i64
  proton_gpu.circular_store end %s, %d scope 5 : i64
  proton_gpu.finalize %s, %arg1
  llvm.return
}

// -----

// 32-bit clocks: record 1 goes to the upper half (words 2 and 3) of lane
// 3's chunk: {clock, (3 | 1 << 15) << 16}.
// CHECK-LABEL: llvm.func ptx_kernelcc @registers32
// CHECK:         %[[LANE:.+]] = llvm.and %{{.+}}, %{{.+}} : i32
// CHECK:         llvm.inline_asm has_side_effects asm_dialect = att "mov.u32 $0, %clock;"
// CHECK:         %[[C1:.+]] = llvm.inline_asm has_side_effects asm_dialect = att "mov.u32 $0, %clock;"
// CHECK:         %[[TAG1:.+]] = llvm.mlir.constant(-2147287040 : i32) : i32
// CHECK:         %[[MINE:.+]] = llvm.icmp "eq" %[[LANE]], %{{.+}} : i32
// CHECK:         %[[POS:.+]] = llvm.and %{{.+}}, %{{.+}} : i32
// CHECK:         %[[LOWER:.+]] = llvm.icmp "eq" %[[POS]], %{{.+}} : i32
// CHECK-NEXT:    %[[LOWERMINE:.+]] = llvm.and %[[MINE]], %[[LOWER]] : i1
// CHECK:         %[[UPPER:.+]] = llvm.icmp "eq" %[[POS]], %{{.+}} : i32
// CHECK-NEXT:    %[[UPPERMINE:.+]] = llvm.and %[[MINE]], %[[UPPER]] : i1
// CHECK-NEXT:    %{{.+}} = llvm.select %[[UPPERMINE]], %[[C1]], %{{.+}} : i1, i32
// CHECK-NEXT:    %{{.+}} = llvm.select %[[UPPERMINE]], %[[TAG1]], %{{.+}} : i1, i32
// CHECK:         st.global.v4.b32
llvm.func ptx_kernelcc @registers32(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>) {
  %s = proton_gpu.init_segment %arg1 <registers, warp, clock 32, num_warps 4, warps[0, 1, 2, 3], segment_bytes 32, shared_offset 0>
  %c = proton_gpu.read_counter : i32
  proton_gpu.circular_store start %s, %c scope 3 : i32
  %d = proton_gpu.read_counter : i32
  proton_gpu.circular_store end %s, %d scope 3 : i32
  proton_gpu.finalize %s, %arg1
  llvm.return
}
