// RUN: proton-opt %s --proton-pipeline="target=amdgpu" | FileCheck %s
// RUN: proton-opt %s --proton-pipeline="target=amdgpu arch=gfx942" | FileCheck %s
// RUN: proton-opt %s --proton-pipeline="target=amdgpu arch=gfx942 shared-offset=65000 sched-barriers=false" | FileCheck %s --check-prefix=GFX942
// RUN: proton-opt %s --proton-pipeline="target=amdgpu arch=gfx950 shared-offset=65000" | FileCheck %s --check-prefix=GFX950
// RUN: proton-opt %s --proton-pipeline="target=amdgpu threads-per-warp=32" | FileCheck %s --check-prefix=WAVE32

// From markers to AMDGPU code: 256 work-items are four 64-lane wavefronts,
// and each counter read is fenced by scheduling barriers. The records sit in
// a loop: inferred sizes take 2-4 KiB per warp (what keeps the CTAs per CU: 2 KiB with gfx942's 64 KiB of LDS) or what LDS leaves.
// CHECK:       llvm.mlir.global external @global_smem() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// CHECK-LABEL: llvm.func amdgpu_kernelcc @k
// CHECK-SAME:    (%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>)
// CHECK-SAME:    passthrough = {{\[}}["amdgpu-flat-work-group-size", "1,256"]]
// CHECK-SAME:    proton.layout = #proton_gpu.layout<shared, warp, clock 64, num_warps 4, warps[0, 1, 2, 3], segment_bytes {{2048|4096}}, shared_offset 0, overhang 1>
// CHECK-SAME:    proton.scopes = {{\[}}#proton_gpu.scope_entry<id = 0, kind = scope, name = "load", parent = -1, loc = "kernel.py:8:3">]
// CHECK-NOT:     // @proton
// CHECK-NOT:     proton.record
// CHECK-NOT:     proton_gpu.
// CHECK:         rocdl.workitem.id.x
// CHECK:         llvm.call_intrinsic "llvm.amdgcn.dispatch.ptr"() : () -> !llvm.ptr<4>
// CHECK:         llvm.call_intrinsic "llvm.amdgcn.s.memrealtime"() : () -> i64
// The entry stamps' reads are not fenced; the records' reads are.
// CHECK-NOT:     rocdl.sched.barrier
// CHECK:         rocdl.sched.barrier 0
// CHECK-NEXT:    %[[START:.+]] = llvm.call_intrinsic "llvm.amdgcn.s.memtime"() : () -> i64
// CHECK-NEXT:    rocdl.sched.barrier 0
// CHECK:         llvm.store %{{.+}}, %{{.+}} {alignment = 8 : i64} : vector<2xi32>, !llvm.ptr<3>
// CHECK:         %[[V:.+]] = llvm.load %arg0 : !llvm.ptr<1> -> i32
// CHECK-NEXT:    rocdl.sched.barrier 0
// CHECK-NEXT:    %[[END:.+]] = llvm.call_intrinsic "llvm.amdgcn.s.memtime"() : () -> i64
// CHECK-NEXT:    rocdl.sched.barrier 0
// CHECK:         llvm.store %{{.+}}, %{{.+}} {alignment = 8 : i64} : vector<2xi32>, !llvm.ptr<3>
// CHECK:         llvm.store %[[V]], %arg0 : i32, !llvm.ptr<1>
// CHECK-NOT:     rocdl.sched.barrier
// CHECK:         "s_getreg_b32 $0, hwreg(HW_REG_HW_ID)"
// CHECK:         "s_getreg_b32 $0, hwreg(HW_REG_XCC_ID)"
// CHECK:         llvm.call_intrinsic "llvm.amdgcn.wave.barrier"() : () -> ()
// CHECK:         llvm.return

// gfx942 has 64 KiB of LDS: 65536 - 65008 = 528 bytes, 132 per wavefront,
// less its 64-byte header: 68, rounded to 64. Without sched-barriers there
// are none.
// GFX942:      proton.layout = #proton_gpu.layout<shared, warp, clock 64, num_warps 4, warps[0, 1, 2, 3], segment_bytes 64, shared_offset 65008, overhang 1>
// GFX942-NOT:  rocdl.sched.barrier
// GFX942:      llvm.call_intrinsic "llvm.amdgcn.s.memtime"
// GFX942-NOT:  rocdl.sched.barrier
// GFX942:      llvm.return
// gfx950 has 160 KiB: plenty left.
// GFX950:      proton.layout = #proton_gpu.layout<shared, warp, clock 64, num_warps 4, warps[0, 1, 2, 3], segment_bytes 4096, shared_offset 65008, overhang 1>
// An explicit threads-per-warp wins over the target's.
// WAVE32:      proton.layout = #proton_gpu.layout<shared, warp, clock 64, num_warps 8, warps[0, 1, 2, 3, 4, 5, 6, 7], segment_bytes 2048, shared_offset 0, overhang 1>
llvm.func amdgpu_kernelcc @k(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1> {llvm.nocapture, llvm.readnone}) attributes {passthrough = [["amdgpu-flat-work-group-size", "1,256"], "amdgpu-no-dispatch-ptr"]} {
  llvm.br ^loop
^loop:
  %0 = llvm.inline_asm has_side_effects "// @proton start load", "=v" : () -> i32 loc("kernel.py":8:3)
  %v = llvm.load %arg0 : !llvm.ptr<1> -> i32
  %1 = llvm.inline_asm has_side_effects "// @proton end load", "=v" : () -> i32
  llvm.store %v, %arg0 : i32, !llvm.ptr<1>
  %zero = llvm.mlir.constant(0 : i32) : i32
  %again = llvm.icmp "ne" %v, %zero : i32
  llvm.cond_br %again, ^loop, ^exit
^exit:
  llvm.return
}
