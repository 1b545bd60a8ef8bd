// RUN: proton-opt %s -split-input-file --convert-proton-to-protongpu | FileCheck %s

// Defaults: buffer-type=auto picks registers (every record is outside
// loops), every warp records, 64-bit clocks, segments sized to the four
// 8-byte records (32 bytes), warps from nvvm.reqntid (128 threads = 4 warps).
// CHECK-LABEL: llvm.func ptx_kernelcc @basic
// CHECK-SAME:    (%[[A0:.+]]: !llvm.ptr<1>, %[[SCRATCH:.+]]: !llvm.ptr<1> {llvm.nocapture, llvm.readnone})
// CHECK-SAME:    proton.scopes = {{\[}}#proton_gpu.scope_entry<id = 0, kind = scope, name = "load", parent = -1, loc = "kernel.py:10:4">, #proton_gpu.scope_entry<id = 1, kind = scope, name = "inner", parent = 0, loc = "kernel.py:11:8">]
// CHECK-NEXT:    %[[SEG:.+]] = proton_gpu.init_segment %[[SCRATCH]] <registers, warp, clock 64, num_warps 4, warps[0, 1, 2, 3], segment_bytes 32, shared_offset 0>
// CHECK-NEXT:    %[[R0:.+]] = proton_gpu.read_counter : i64
// CHECK-NEXT:    proton_gpu.circular_store start %[[SEG]], %[[R0]] scope 0 : i64
// CHECK-NEXT:    %[[R1:.+]] = proton_gpu.read_counter : i64
// CHECK-NEXT:    proton_gpu.circular_store start %[[SEG]], %[[R1]] scope 1 : i64
// CHECK-NEXT:    llvm.load
// CHECK-NEXT:    %[[R2:.+]] = proton_gpu.read_counter : i64
// CHECK-NEXT:    proton_gpu.circular_store end %[[SEG]], %[[R2]] scope 1 : i64
// CHECK-NEXT:    %[[R3:.+]] = proton_gpu.read_counter : i64
// CHECK-NEXT:    proton_gpu.circular_store end %[[SEG]], %[[R3]] scope 0 : i64
// CHECK-NEXT:    llvm.store
// CHECK-NEXT:    proton_gpu.finalize %[[SEG]], %[[SCRATCH]]
// CHECK-NEXT:    llvm.return
// CHECK-NOT:   proton.record
llvm.func ptx_kernelcc @basic(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1> {llvm.nocapture, llvm.readnone}) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  proton.record start "load" loc("kernel.py":10:4)
  proton.record start "inner" loc("kernel.py":11:8)
  %v = llvm.load %arg0 : !llvm.ptr<1> -> i32
  proton.record end "inner"
  proton.record end "load"
  llvm.store %v, %arg0 : i32, !llvm.ptr<1>
  llvm.return
}

// -----

// Every return is finalized; a function without records is left alone; the
// scope table names the first file location inside fused and named ones.
// CHECK-LABEL: llvm.func ptx_kernelcc @two_returns
// CHECK-SAME:    proton.scopes = {{\[}}#proton_gpu.scope_entry<id = 0, kind = scope, name = "a", parent = -1, loc = "k.py:3:1">, #proton_gpu.scope_entry<id = 1, kind = scope, name = "b", parent = -1, loc = "k.py:7:2">]
// CHECK:         %[[SEG:.+]] = proton_gpu.init_segment
// CHECK:       ^bb1:
// CHECK:         proton_gpu.circular_store end %[[SEG]], %{{.+}} scope 0 : i64
// CHECK-NEXT:    proton_gpu.finalize %[[SEG]], %arg1
// CHECK-NEXT:    llvm.return
// CHECK:       ^bb2:
// CHECK:         proton_gpu.circular_store end %[[SEG]], %{{.+}} scope 1 : i64
// CHECK-NEXT:    proton_gpu.finalize %[[SEG]], %arg1
// CHECK-NEXT:    llvm.return
// CHECK-LABEL: llvm.func ptx_kernelcc @untouched
// CHECK-NOT:     proton
// CHECK:         llvm.return
llvm.func ptx_kernelcc @two_returns(%c: i1, %arg1: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  llvm.cond_br %c, ^bb1, ^bb2
^bb1:
  proton.record start "a" loc(fused["k.py":3:1, "other.py":1:1])
  proton.record end "a"
  llvm.return
^bb2:
  proton.record start "b" loc("b"("k.py":7:2))
  proton.record end "b"
  llvm.return
}
llvm.func ptx_kernelcc @untouched(%arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  llvm.return
}

// -----

// Warps per CTA from the nvvm.reqntid attribute (64 x 2 x 1 threads).
// CHECK-LABEL: llvm.func ptx_kernelcc @reqntid_attr
// CHECK:         proton_gpu.init_segment %arg0 <registers, warp, clock 64, num_warps 4, warps[0, 1, 2, 3], segment_bytes 32, shared_offset 0>
llvm.func ptx_kernelcc @reqntid_attr(%arg0: !llvm.ptr<1>) attributes {nvvm.reqntid = array<i32: 64, 2, 1>} {
  proton.record start "a"
  proton.record end "a"
  llvm.return
}

// -----

// ... or from nvvm.maxntid in passthrough (32 x 3 threads).
// CHECK-LABEL: llvm.func ptx_kernelcc @maxntid
// CHECK:         proton_gpu.init_segment %arg0 <registers, warp, clock 64, num_warps 3, warps[0, 1, 2], segment_bytes 32, shared_offset 0>
llvm.func ptx_kernelcc @maxntid(%arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.maxntid", "32,3"]]} {
  proton.record start "a"
  proton.record end "a"
  llvm.return
}

// -----

// ... or from the upper bound of amdgpu-flat-work-group-size (here with the
// default 32 threads per warp).
// CHECK-LABEL: llvm.func amdgpu_kernelcc @flat_size
// CHECK:         proton_gpu.init_segment %arg0 <registers, warp, clock 64, num_warps 8, warps[0, 1, 2, 3, 4, 5, 6, 7], segment_bytes 32, shared_offset 0>
llvm.func amdgpu_kernelcc @flat_size(%arg0: !llvm.ptr<1>) attributes {passthrough = [["amdgpu-flat-work-group-size", "1,256"]]} {
  proton.record start "a"
  proton.record end "a"
  llvm.return
}
