// RUN: proton-opt %s -split-input-file --convert-protongpu-to-llvm | FileCheck %s

// A loop body that Triton's LLVM IR splits at a lowered select: the four
// records of an iteration form one run across the diamond. The first
// computes its slot (index mod 16) once; the others follow it at +8, +16
// and +24 bytes, into the 3-slot overhang rather than around the ring.
// CHECK-LABEL: llvm.func ptx_kernelcc @run_over_diamond
// Entry: lanes 0-2 of the warp write the entry clock into overhang slots
// 16-18, older than any record.
// CHECK:         st.shared.v4.b32
// CHECK:         %[[CAP:.+]] = llvm.mlir.constant(16 : i32) : i32
// CHECK-NEXT:    %[[OSLOT:.+]] = llvm.add %[[LANE:.+]], %[[CAP]] : i32
// CHECK:         %[[THREE:.+]] = llvm.mlir.constant(3 : i32) : i32
// CHECK-NEXT:    %[[LOW:.+]] = llvm.icmp "ult" %[[LANE]], %[[THREE]] : i32
// CHECK-NEXT:    %[[MINE:.+]] = llvm.and %{{.+}}, %[[LOW]] : i1
// CHECK-NEXT:    llvm.inline_asm has_side_effects asm_dialect = att "@$3 st.shared.v2.b32 [$0], {$1, $2};", "r,r,r,b" %{{.+}}, %{{.+}}, %{{.+}}, %[[MINE]]
// CHECK:       ^bb1({{.*}}%[[INDEX:[0-9]+]]: i32):
// CHECK:         %[[MASK:.+]] = llvm.mlir.constant(15 : i32) : i32
// CHECK-NEXT:    %[[SLOT:.+]] = llvm.and %[[INDEX]], %[[MASK]] : i32
// CHECK-NEXT:    %[[RB:.+]] = llvm.mlir.constant(8 : i32) : i32
// CHECK-NEXT:    %[[FIRST:.+]] = llvm.mul %[[SLOT]], %[[RB]] : i32
// With 64-bit clocks word 1 is clock bits 32-63 plus the tag: one add.
// CHECK:         llvm.add %{{.+}}, %{{.+}} : i32
// CHECK:         %[[C8:.+]] = llvm.mlir.constant(8 : i32) : i32
// CHECK-NEXT:    llvm.add %[[FIRST]], %[[C8]] : i32
// CHECK-NOT:     llvm.mlir.constant(15 : i32)
// CHECK:       ^bb4:
// CHECK-NOT:     llvm.mlir.constant(15 : i32)
// CHECK:         %[[C16:.+]] = llvm.mlir.constant(16 : i32) : i32
// CHECK-NEXT:    llvm.add %[[FIRST]], %[[C16]] : i32
// CHECK-NOT:     llvm.mlir.constant(15 : i32)
// CHECK:         %[[C24:.+]] = llvm.mlir.constant(24 : i32) : i32
// CHECK-NEXT:    llvm.add %[[FIRST]], %[[C24]] : i32
// At return the warp copies min(count, 16 + 3) records.
// CHECK:         %[[SLOTS:.+]] = llvm.mlir.constant(19 : i32) : i32
// CHECK-NEXT:    llvm.icmp "ult" %{{.+}}, %[[SLOTS]] : i32
llvm.func ptx_kernelcc @run_over_diamond(%arg0: !llvm.ptr<1>, %c: i1, %n: i1) {
  %s = proton_gpu.init_segment %arg0 <shared, warp, clock 64, num_warps 1, warps[0], segment_bytes 128, shared_offset 0, overhang 3>
  llvm.br ^header
^header:
  %t0 = proton_gpu.read_counter : i64
  proton_gpu.circular_store start %s, %t0 scope 0 : i64
  %t1 = proton_gpu.read_counter : i64
  proton_gpu.circular_store start %s, %t1 scope 1 : i64
  llvm.cond_br %c, ^a, ^b
^a:
  llvm.br ^join
^b:
  llvm.br ^join
^join:
  %t2 = proton_gpu.read_counter : i64
  proton_gpu.circular_store end %s, %t2 scope 1 : i64
  %t3 = proton_gpu.read_counter : i64
  proton_gpu.circular_store end %s, %t3 scope 0 : i64
  llvm.cond_br %n, ^header, ^exit
^exit:
  proton_gpu.finalize %s, %arg0
  llvm.return
}

// -----

// A block that can run again without the run's first block (its own loop)
// is not part of the run: each of its records computes its own slot.
// CHECK-LABEL: llvm.func ptx_kernelcc @inner_loop
// CHECK:       ^bb1({{.*}}: i32):
// CHECK:         llvm.mlir.constant(15 : i32) : i32
// CHECK:       ^bb2({{.*}}%[[I2:[0-9]+]]: i32):
// CHECK:         %[[M2:.+]] = llvm.mlir.constant(15 : i32) : i32
// CHECK-NEXT:    llvm.and %[[I2]], %[[M2]] : i32
llvm.func ptx_kernelcc @inner_loop(%arg0: !llvm.ptr<1>, %c: i1, %n: i1) {
  %s = proton_gpu.init_segment %arg0 <global, warp, clock 64, num_warps 1, warps[0], segment_bytes 128, shared_offset 0, overhang 3>
  llvm.br ^header
^header:
  %t0 = proton_gpu.read_counter : i64
  proton_gpu.circular_store start %s, %t0 scope 0 : i64
  llvm.br ^inner
^inner:
  %t1 = proton_gpu.read_counter : i64
  proton_gpu.circular_store end %s, %t1 scope 0 : i64
  llvm.cond_br %c, ^inner, ^latch
^latch:
  llvm.cond_br %n, ^header, ^exit
^exit:
  proton_gpu.finalize %s, %arg0
  llvm.return
}
