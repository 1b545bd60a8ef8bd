// RUN: proton-opt %s --allow-unregistered-dialect | FileCheck %s
// RUN: proton-opt %s --allow-unregistered-dialect | proton-opt --allow-unregistered-dialect | FileCheck %s
// RUN: proton-opt %s --allow-unregistered-dialect -mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// A full segment life cycle with 32-bit clocks; the layout attribute is also
// used as a plain discardable attribute, where it prints with its prefix.

// CHECK-LABEL: llvm.func @lifecycle
// CHECK-SAME:    my.layout = #proton_gpu.layout<global, warp_group, clock 32, num_warps 8, warps[0, 4], segment_bytes 256, shared_offset 32>
// CHECK:         %[[SEG:.+]] = proton_gpu.init_segment %arg0 <shared, cta, clock 32, num_warps 4, warps[0], segment_bytes 64, shared_offset 16>
// CHECK-NEXT:    %[[C0:.+]] = proton_gpu.read_counter : i32
// CHECK-NEXT:    proton_gpu.circular_store start %[[SEG]], %[[C0]] scope 0 : i32
// CHECK-NEXT:    %[[C1:.+]] = proton_gpu.read_counter : i32
// CHECK-NEXT:    proton_gpu.circular_store end %[[SEG]], %[[C1]] scope 0 : i32
// CHECK-NEXT:    proton_gpu.finalize %[[SEG]], %arg0
// CHECK-NEXT:    llvm.return
// GENERIC-LABEL: sym_name = "lifecycle"
// GENERIC:       "proton_gpu.init_segment"(%{{.*}}) <{layout = #proton_gpu.layout<shared, cta, clock 32, num_warps 4, warps[0], segment_bytes 64, shared_offset 16>}> : (!llvm.ptr<1>) -> !proton_gpu.segment
// GENERIC:       "proton_gpu.read_counter"() : () -> i32
// GENERIC:       "proton_gpu.circular_store"(%{{.*}}, %{{.*}}) <{kind = 0 : i32, scope_id = 0 : i32}> : (!proton_gpu.segment, i32) -> ()
// GENERIC:       "proton_gpu.circular_store"(%{{.*}}, %{{.*}}) <{kind = 1 : i32, scope_id = 0 : i32}> : (!proton_gpu.segment, i32) -> ()
// GENERIC:       "proton_gpu.finalize"(%{{.*}}, %{{.*}}) : (!proton_gpu.segment, !llvm.ptr<1>) -> ()
llvm.func @lifecycle(%arg0: !llvm.ptr<1>) attributes {my.layout = #proton_gpu.layout<global, warp_group, clock 32, num_warps 8, warps[0, 4], segment_bytes 256, shared_offset 32>} {
  %s = proton_gpu.init_segment %arg0 <shared, cta, clock 32, num_warps 4, warps[0], segment_bytes 64, shared_offset 16>
  %c = proton_gpu.read_counter : i32
  proton_gpu.circular_store start %s, %c scope 0 : i32
  %d = proton_gpu.read_counter : i32
  proton_gpu.circular_store end %s, %d scope 0 : i32
  proton_gpu.finalize %s, %arg0
  llvm.return
}

// 64-bit clocks, the largest scope id (15 bits), and every warp recording.
// CHECK-LABEL: llvm.func @clock64
// CHECK:         proton_gpu.init_segment %arg0 <global, warp, clock 64, num_warps 2, warps[0, 1], segment_bytes 4096, shared_offset 0>
// CHECK:         proton_gpu.read_counter : i64
// CHECK:         proton_gpu.circular_store start %{{.*}}, %{{.*}} scope 32767 : i64
llvm.func @clock64(%arg0: !llvm.ptr<1>) {
  %s = proton_gpu.init_segment %arg0 <global, warp, clock 64, num_warps 2, warps[0, 1], segment_bytes 4096, shared_offset 0>
  %c = proton_gpu.read_counter : i64
  proton_gpu.circular_store start %s, %c scope 32767 : i64
  proton_gpu.finalize %s, %arg0
  llvm.return
}

// The segment type as a block argument: the finalize verifier accepts it,
// and a store into a segment of unknown layout is not width-checked.
// CHECK-LABEL: "test.region"() ({
// CHECK-NEXT:  ^bb0(%[[ARG:.+]]: !proton_gpu.segment, %[[PTR:.+]]: !llvm.ptr<1>):
// CHECK-NEXT:    %[[C:.+]] = proton_gpu.read_counter : i64
// CHECK-NEXT:    proton_gpu.circular_store end %[[ARG]], %[[C]] scope 7 : i64
// CHECK-NEXT:    proton_gpu.finalize %[[ARG]], %[[PTR]]
"test.region"() ({
^bb0(%seg: !proton_gpu.segment, %p: !llvm.ptr<1>):
  %c = proton_gpu.read_counter : i64
  proton_gpu.circular_store end %seg, %c scope 7 : i64
  proton_gpu.finalize %seg, %p
  "test.done"() : () -> ()
}) : () -> ()

// The scope table the conversion leaves on a kernel: one entry per id, a
// value's with its dtype (the other kinds print none).
// CHECK-LABEL: llvm.func @scope_table
// CHECK-SAME:    proton.scopes = [#proton_gpu.scope_entry<id = 0, kind = scope, name = "loop", parent = -1, loc = "k.py:1:1">, #proton_gpu.scope_entry<id = 1, kind = event, name = "copy", parent = -1, loc = "">, #proton_gpu.scope_entry<id = 2, kind = value, name = "loss", parent = 0, loc = "k.py:3:1", dtype = "f32">]
llvm.func @scope_table() attributes {proton.scopes = [#proton_gpu.scope_entry<id = 0, kind = scope, name = "loop", parent = -1, loc = "k.py:1:1">, #proton_gpu.scope_entry<loc = "", id = 1, kind = event, name = "copy", parent = -1>, #proton_gpu.scope_entry<id = 2, kind = value, name = "loss", parent = 0, loc = "k.py:3:1", dtype = "f32">]} {
  llvm.return
}
