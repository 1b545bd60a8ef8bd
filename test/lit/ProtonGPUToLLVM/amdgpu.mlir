// RUN: proton-opt %s -split-input-file --convert-protongpu-to-llvm="target=amdgpu" | FileCheck %s
// RUN: proton-opt %s -split-input-file --convert-protongpu-to-llvm="target=amdgpu arch=gfx942" | FileCheck %s
// RUN: proton-opt %s -split-input-file --convert-protongpu-to-llvm="target=amdgpu arch=gfx950" | FileCheck %s

// Shared (LDS) buffer, 32-bit records, four 64-lane wavefronts.
// CHECK:       llvm.mlir.global external @global_smem() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// The dispatch packet is read now, so amdgpu-no-dispatch-ptr goes, in both
// spellings; other passthrough entries stay. So do readnone/nocapture.
// CHECK-LABEL: llvm.func amdgpu_kernelcc @lds
// CHECK-SAME:    (%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>)
// CHECK-SAME:    passthrough = {{\[}}["amdgpu-flat-work-group-size", "1,256"], "amdgpu-ieee"]
// CHECK-SAME:    proton.layout = #proton_gpu.layout<shared, warp, clock 32, num_warps 4, warps[0, 1, 2, 3], segment_bytes 256, shared_offset 0>
// CHECK-NOT:     llvm.alloca
// CHECK:         %[[TID:.+]] = rocdl.workitem.id.x : i32
// CHECK-NEXT:    %[[SIX:.+]] = llvm.mlir.constant(6 : i32) : i32
// CHECK-NEXT:    %[[WARP:.+]] = llvm.lshr %[[TID]], %[[SIX]] : i32
// CHECK-NEXT:    %[[M63:.+]] = llvm.mlir.constant(63 : i32) : i32
// CHECK-NEXT:    %[[LANE:.+]] = llvm.and %[[TID]], %[[M63]] : i32
// CHECK:         %[[WRITER:.+]] = llvm.and %{{.+}}, %{{.+}} : i1
// The grid size in workgroups comes from the HSA dispatch packet.
// CHECK:         %[[X:.+]] = rocdl.workgroup.id.x : i32
// CHECK-NEXT:    %[[Y:.+]] = rocdl.workgroup.id.y : i32
// CHECK-NEXT:    %[[Z:.+]] = rocdl.workgroup.id.z : i32
// CHECK-NEXT:    %[[PKT:.+]] = llvm.call_intrinsic "llvm.amdgcn.dispatch.ptr"() : () -> !llvm.ptr<4>
// CHECK-NEXT:    %[[C4:.+]] = llvm.mlir.constant(4 : i32) : i32
// CHECK-NEXT:    %[[WGXP:.+]] = llvm.getelementptr %[[PKT]][%[[C4]]] : (!llvm.ptr<4>, i32) -> !llvm.ptr<4>, i8
// CHECK-NEXT:    %[[WGX16:.+]] = llvm.load %[[WGXP]] {alignment = 2 : i64} : !llvm.ptr<4> -> i16
// CHECK-NEXT:    %[[WGX:.+]] = llvm.zext %[[WGX16]] : i16 to i32
// CHECK-NEXT:    %[[C12:.+]] = llvm.mlir.constant(12 : i32) : i32
// CHECK-NEXT:    %[[GXP:.+]] = llvm.getelementptr %[[PKT]][%[[C12]]] : (!llvm.ptr<4>, i32) -> !llvm.ptr<4>, i8
// CHECK-NEXT:    %[[GX:.+]] = llvm.load %[[GXP]] {alignment = 4 : i64} : !llvm.ptr<4> -> i32
// CHECK-NEXT:    %[[MINUS1:.+]] = llvm.mlir.constant(-1 : i32) : i32
// CHECK-NEXT:    %[[WGXM1:.+]] = llvm.add %[[WGX]], %[[MINUS1]] : i32
// CHECK-NEXT:    %[[ROUND:.+]] = llvm.add %[[GX]], %[[WGXM1]] : i32
// CHECK-NEXT:    %[[NX:.+]] = llvm.udiv %[[ROUND]], %[[WGX]] : i32
// CHECK-NEXT:    %[[C6:.+]] = llvm.mlir.constant(6 : i32) : i32
// CHECK-NEXT:    llvm.getelementptr %[[PKT]][%[[C6]]]
// CHECK-NEXT:    llvm.load %{{.+}} {alignment = 2 : i64} : !llvm.ptr<4> -> i16
// CHECK-NEXT:    llvm.zext
// CHECK-NEXT:    %[[C16:.+]] = llvm.mlir.constant(16 : i32) : i32
// CHECK-NEXT:    llvm.getelementptr %[[PKT]][%[[C16]]]
// CHECK:         %[[NY:.+]] = llvm.udiv
// CHECK-NEXT:    %[[NYZ:.+]] = llvm.mul %[[NY]], %[[Z]] : i32
// CHECK-NEXT:    %[[YZ:.+]] = llvm.add %[[Y]], %[[NYZ]] : i32
// CHECK-NEXT:    %[[NXYZ:.+]] = llvm.mul %[[NX]], %[[YZ]] : i32
// CHECK-NEXT:    llvm.add %[[X]], %[[NXYZ]] : i32
// Blocks of 48 + 256 bytes, padded to 320; the segment is staged in LDS.
// CHECK:         %[[BLOCKB:.+]] = llvm.mlir.constant(320 : i32) : i32
// CHECK-NEXT:    %[[BLOCKOFF:.+]] = llvm.mul %[[WARP]], %[[BLOCKB]] : i32
// CHECK-NEXT:    %[[BLOCK:.+]] = llvm.getelementptr %{{.+}}[%[[BLOCKOFF]]] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i8
// CHECK-NEXT:    llvm.mlir.addressof @global_smem : !llvm.ptr<3>
// CHECK:         %[[STAGE:.+]] = llvm.getelementptr %{{.+}}[%{{.+}}] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// Entry stamps: s_memrealtime and s_memtime, stored under lane 0.
// CHECK:         llvm.call_intrinsic "llvm.amdgcn.s.memrealtime"() : () -> i64
// CHECK:         llvm.call_intrinsic "llvm.amdgcn.s.memtime"() : () -> i64
// CHECK:         llvm.cond_br %[[WRITER]], ^bb1, ^bb2
// CHECK-NEXT:  ^bb1:
// CHECK-NEXT:    llvm.mlir.poison : vector<4xi32>
// CHECK:         llvm.store %{{.+}}, %{{.+}} {alignment = 8 : i64} : vector<4xi32>, !llvm.ptr<3>
// CHECK-NEXT:    llvm.br ^bb2
// CHECK-NEXT:  ^bb2:
// A 32-bit record: the low half of s_memtime, then the tag (scope 1 << 16),
// stored as <2 x i32> in LDS.
// CHECK-NEXT:    %[[T:.+]] = llvm.call_intrinsic "llvm.amdgcn.s.memtime"() : () -> i64
// CHECK-NEXT:    %[[T32:.+]] = llvm.trunc %[[T]] : i64 to i32
// CHECK-NEXT:    %[[MASK:.+]] = llvm.mlir.constant(31 : i32) : i32
// CHECK:         %[[ADDR:.+]] = llvm.getelementptr %{{.+}}[%{{.+}}] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK-NEXT:    %[[TAG:.+]] = llvm.mlir.constant(65536 : i32) : i32
// CHECK-NEXT:    llvm.cond_br %[[WRITER]], ^bb3, ^bb4
// CHECK-NEXT:  ^bb3:
// CHECK-NEXT:    %[[P:.+]] = llvm.mlir.poison : vector<2xi32>
// CHECK-NEXT:    %[[I0:.+]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:    %[[V0:.+]] = llvm.insertelement %[[T32]], %[[P]][%[[I0]] : i32] : vector<2xi32>
// CHECK-NEXT:    %[[I1:.+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:    %[[V1:.+]] = llvm.insertelement %[[TAG]], %[[V0]][%[[I1]] : i32] : vector<2xi32>
// CHECK-NEXT:    llvm.store %[[V1]], %[[ADDR]] {alignment = 8 : i64} : vector<2xi32>, !llvm.ptr<3>
// CHECK-NEXT:    llvm.br ^bb4
// CHECK-NEXT:  ^bb4:
// Finalize: the location word is HW_ID[15:0] | XCC_ID[3:0] << 16 | wave <<
// 20; word 0 is magic "PR" << 16 | flags 0x204 (version 4, 32-bit clock,
// s_memrealtime's 100 MHz timer, bit 9).
// CHECK:         llvm.call_intrinsic "llvm.amdgcn.s.memrealtime"() : () -> i64
// CHECK:         llvm.call_intrinsic "llvm.amdgcn.s.memtime"() : () -> i64
// CHECK:         %[[C20:.+]] = llvm.mlir.constant(20 : i32) : i32
// CHECK-NEXT:    %[[WAVEHI:.+]] = llvm.shl %[[WARP]], %[[C20]] : i32
// CHECK-NEXT:    %[[HW:.+]] = llvm.inline_asm has_side_effects asm_dialect = att "s_getreg_b32 $0, hwreg(HW_REG_HW_ID)", "=s"  : () -> i32
// CHECK-NEXT:    %[[XCC:.+]] = llvm.inline_asm has_side_effects asm_dialect = att "s_getreg_b32 $0, hwreg(HW_REG_XCC_ID)", "=s"  : () -> i32
// CHECK-NEXT:    %[[SH16:.+]] = llvm.mlir.constant(16 : i32) : i32
// CHECK-NEXT:    %[[M15:.+]] = llvm.mlir.constant(15 : i32) : i32
// CHECK-NEXT:    %[[XCC4:.+]] = llvm.and %[[XCC]], %[[M15]] : i32
// CHECK-NEXT:    %[[XCCHI:.+]] = llvm.shl %[[XCC4]], %[[SH16]] : i32
// CHECK-NEXT:    %[[M16:.+]] = llvm.mlir.constant(65535 : i32) : i32
// CHECK-NEXT:    %[[HW16:.+]] = llvm.and %[[HW]], %[[M16]] : i32
// CHECK-NEXT:    %[[CU:.+]] = llvm.or %[[HW16]], %[[XCCHI]] : i32
// CHECK-NEXT:    %[[WHERE:.+]] = llvm.or %[[CU]], %[[WAVEHI]] : i32
// CHECK-NEXT:    %[[MAGIC:.+]] = llvm.mlir.constant(1380975108 : i32) : i32
// CHECK-NEXT:    %[[KID:.+]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:    %[[C0:.+]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:    %[[IDENT:.+]] = llvm.getelementptr %[[STAGE]][%[[C0]]]
// CHECK-NEXT:    llvm.cond_br %[[WRITER]], ^bb5, ^bb6
// CHECK-NEXT:  ^bb5:
// CHECK-NEXT:    llvm.mlir.poison : vector<4xi32>
// CHECK-NEXT:    llvm.mlir.constant(0 : i32)
// CHECK-NEXT:    %[[H0:.+]] = llvm.insertelement %[[MAGIC]], %{{.+}} : vector<4xi32>
// CHECK-NEXT:    llvm.mlir.constant(1 : i32)
// CHECK-NEXT:    %[[H1:.+]] = llvm.insertelement %[[KID]], %[[H0]][%{{.+}}] : vector<4xi32>
// CHECK-NEXT:    llvm.mlir.constant(2 : i32)
// CHECK-NEXT:    %[[H2:.+]] = llvm.insertelement %{{.+}}, %[[H1]][%{{.+}}] : vector<4xi32>
// CHECK-NEXT:    llvm.mlir.constant(3 : i32)
// CHECK-NEXT:    %[[H3:.+]] = llvm.insertelement %[[WHERE]], %[[H2]][%{{.+}}] : vector<4xi32>
// CHECK-NEXT:    llvm.store %[[H3]], %[[IDENT]] {alignment = 8 : i64} : vector<4xi32>, !llvm.ptr<3>
// Copy-out: a wave barrier; the 320-byte block fits one step of 64 lanes *
// 16 bytes, so each lane stores at most one chunk, under its predicate.
// CHECK:         llvm.call_intrinsic "llvm.amdgcn.wave.barrier"() : () -> ()
// CHECK:         %[[FIRST:.+]] = llvm.mul %[[LANE]], %{{.+}} : i32
// CHECK:         llvm.load %{{.+}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xi32>
// CHECK:         %[[DST:.+]] = llvm.getelementptr %[[BLOCK]][%{{.+}}] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i8
// CHECK-NEXT:    llvm.cond_br %{{.+}}, ^bb{{[0-9]+}}, ^bb{{[0-9]+}}
// CHECK:         llvm.store %{{.+}}, %[[DST]] {alignment = 8 : i64} : vector<4xi32>, !llvm.ptr<1>
// CHECK-NOT:     nvvm.
// CHECK:         llvm.return
llvm.func amdgpu_kernelcc @lds(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1> {llvm.nocapture, llvm.readnone}) attributes {passthrough = ["amdgpu-no-dispatch-ptr", ["amdgpu-flat-work-group-size", "1,256"], ["amdgpu-no-dispatch-ptr", "true"], "amdgpu-ieee"]} {
  %s = proton_gpu.init_segment %arg1 <shared, warp, clock 32, num_warps 4, warps[0, 1, 2, 3], segment_bytes 256, shared_offset 0>
  %c = proton_gpu.read_counter : i32
  proton_gpu.circular_store start %s, %c scope 1 : i32
  proton_gpu.finalize %s, %arg1
  llvm.return
}

// -----

// A global buffer with 64-bit records: <2 x i32> stores to profile_scratch,
// no copy-out and no LDS. The entry stamps come first (a guarded store),
// then the record: s_memtime's low word, then bits 32-47 | (2 | 1 << 15) << 16.
// CHECK-NOT:   @global_smem
// CHECK-LABEL: llvm.func amdgpu_kernelcc @global64
// CHECK:       ^bb2:
// CHECK-NEXT:    %[[T:.+]] = llvm.call_intrinsic "llvm.amdgcn.s.memtime"() : () -> i64
// 2048 bytes of 8-byte records: 256 slots.
// CHECK-NEXT:    llvm.mlir.constant(255 : i32) : i32
// CHECK:         %[[ADDR:.+]] = llvm.getelementptr %{{.+}}[%{{.+}}] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i8
// CHECK-NEXT:    %[[TAG:.+]] = llvm.mlir.constant(-2147352576 : i32) : i32
// CHECK-NEXT:    %[[LO:.+]] = llvm.trunc %[[T]] : i64 to i32
// CHECK:         %[[HI:.+]] = llvm.trunc %{{.+}} : i64 to i32
// CHECK-NEXT:    %[[W1:.+]] = llvm.add %[[HI]], %[[TAG]] : i32
// CHECK-NEXT:    llvm.cond_br %{{.+}}, ^bb{{[0-9]+}}, ^bb{{[0-9]+}}
// CHECK-NEXT:  ^bb{{[0-9]+}}:
// CHECK-NEXT:    llvm.mlir.poison : vector<2xi32>
// CHECK-NEXT:    llvm.mlir.constant(0 : i32)
// CHECK-NEXT:    %[[V0:.+]] = llvm.insertelement %[[LO]], %{{.+}} : vector<2xi32>
// CHECK-NEXT:    llvm.mlir.constant(1 : i32)
// CHECK-NEXT:    %[[V1:.+]] = llvm.insertelement %[[W1]], %[[V0]][%{{.+}}] : vector<2xi32>
// CHECK-NEXT:    llvm.store %[[V1]], %[[ADDR]] {alignment = 8 : i64} : vector<2xi32>, !llvm.ptr<1>
// Flags at return: version 4 | 64-bit clock | global << 5 | cta << 7 |
// 100 MHz timer: 0x52500334.
// CHECK:         llvm.mlir.constant(1380975412 : i32) : i32
// CHECK-NOT:     llvm.amdgcn.wave.barrier
// CHECK-NOT:     !llvm.ptr<3>
// CHECK:         llvm.return
llvm.func amdgpu_kernelcc @global64(%arg1: !llvm.ptr<1>) {
  %s = proton_gpu.init_segment %arg1 <global, cta, clock 64, num_warps 4, warps[0], segment_bytes 2048, shared_offset 0>
  %c = proton_gpu.read_counter : i64
  proton_gpu.circular_store end %s, %c scope 2 : i64
  proton_gpu.finalize %s, %arg1
  llvm.return
}
